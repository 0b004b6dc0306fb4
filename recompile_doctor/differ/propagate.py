"""Matcher state over instruction indices, and step 3 of the alignment: propagation.

``a2b[i]`` is the index in B matched to A's instruction ``i`` (-1: unmatched), ``b2a`` the
reverse.  Operands are resolved to indices once per computation (-1: not defined there).
"""

from __future__ import annotations

from recompile_doctor.parsers.hlo import Computation, Instruction

_COMPATIBLE = {("parameter", "constant"), ("constant", "parameter")}


def same_kind(a: Instruction, b: Instruction) -> bool:
    return a.opcode == b.opcode or (
        (a.opcode, b.opcode) in _COMPATIBLE and a.shape.sig == b.shape.sig
    )


def _operand_indices(instrs: list[Instruction]) -> list[tuple[int, ...]]:
    index = {ins.name: k for k, ins in enumerate(instrs)}
    get = index.get
    return [tuple([get(n, -1) for n in ins.operands]) for ins in instrs]


class Propagation:
    __slots__ = ("a2b", "b2a", "ia", "ib", "matched")

    same_kind = staticmethod(same_kind)

    def __init__(self, ca: Computation, cb: Computation) -> None:
        self.ia = ca.instructions
        self.ib = cb.instructions
        self.a2b = [-1] * len(self.ia)
        self.b2a = [-1] * len(self.ib)
        self.matched = 0

    def match(self, i: int, j: int) -> bool:
        if self.a2b[i] >= 0 or self.b2a[j] >= 0:
            return False
        self.a2b[i] = j
        self.b2a[j] = i
        self.matched += 1
        return True

    def done(self) -> bool:
        return self.matched == len(self.ia) or self.matched == len(self.ib)

    def propagate(self) -> None:
        ia, ib, a2b, b2a = self.ia, self.ib, self.a2b, self.b2a
        ops_a, ops_b = _operand_indices(ia), _operand_indices(ib)
        users_b: dict[int, list[tuple[int, int]]] = {}
        for j, ops in enumerate(ops_b):
            for k, o in enumerate(ops):
                if o >= 0:
                    users_b.setdefault(o, []).append((k, j))
        match, kind = self.match, same_kind
        changed = True
        rounds = 0
        while changed and rounds < 50:
            changed = False
            rounds += 1
            # top-down: operands of matched pairs, by position
            for i in range(len(ia) - 1, -1, -1):
                j = a2b[i]
                if j < 0 or len(ops_a[i]) != len(ops_b[j]):
                    continue
                for oa, ob in zip(ops_a[i], ops_b[j], strict=True):
                    if oa < 0 or ob < 0 or not kind(ia[oa], ib[ob]):
                        continue
                    changed |= match(oa, ob)
            # bottom-up: an unmatched instruction whose operand is matched
            for i, a in enumerate(ia):
                if a2b[i] >= 0:
                    continue
                best = -1
                for k, oa in enumerate(ops_a[i]):
                    ob = a2b[oa] if oa >= 0 else -1
                    if ob < 0:
                        continue
                    for kb, u in users_b.get(ob, ()):
                        if kb != k or b2a[u] >= 0 or not kind(a, ib[u]):
                            continue
                        if best < 0 or (ib[u].op_name == a.op_name != ib[best].op_name):
                            best = u
                    if best >= 0:
                        break
                if best >= 0:
                    changed |= match(i, best)
