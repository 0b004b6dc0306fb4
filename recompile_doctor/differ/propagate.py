"""Matcher state over instruction indices, and step 3 of the alignment: propagation.

``a2b[i]`` is the index in B matched to A's instruction ``i`` (-1: unmatched), ``b2a`` the
reverse.  Operands are resolved to indices once per computation (-1: not defined there).
"""

from __future__ import annotations

from heapq import heapify, heappop, heappush
from itertools import compress

from recompile_doctor.parsers.hlo import Computation, Instruction

_UNMATCHED = (0).__gt__  # x2y[i] < 0

_COMPATIBLE = {("parameter", "constant"), ("constant", "parameter")}


def same_kind(a: Instruction, b: Instruction) -> bool:
    return a.opcode == b.opcode or (
        (a.opcode, b.opcode) in _COMPATIBLE and a.shape.sig == b.shape.sig
    )


def _operand_indices(instrs: list[Instruction]) -> list[tuple[int, ...]]:
    index = {ins.name: k for k, ins in enumerate(instrs)}
    get, find = index.get, index.__getitem__
    out: list[tuple[int, ...]] = []
    append = out.append
    for ins in instrs:
        try:  # every operand defined (the parser checks it): one C map per instruction
            append(tuple(map(find, ins.operands)))
        except KeyError:
            append(tuple([get(n, -1) for n in ins.operands]))
    return out


class Propagation:
    __slots__ = ("_ops", "a2b", "b2a", "ia", "ib", "matched", "twins")

    same_kind = staticmethod(same_kind)

    def __init__(self, ca: Computation, cb: Computation) -> None:
        self.ia = ca.instructions
        self.ib = cb.instructions
        # the same operands position by position (see Computation.twin)
        self.twins = cb.twin is ca
        self.a2b = [-1] * len(self.ia)
        self.b2a = [-1] * len(self.ib)
        self.matched = 0
        self._ops: tuple[list[tuple[int, ...]], list[tuple[int, ...]]] | None = None

    def operand_indices(self) -> tuple[list[tuple[int, ...]], list[tuple[int, ...]]]:
        """Operand indices of A's and B's instructions (computed once: propagation may run
        twice)."""
        if self._ops is None:
            ops_a = _operand_indices(self.ia)
            self._ops = (ops_a, ops_a if self.twins else _operand_indices(self.ib))
        return self._ops

    def match(self, i: int, j: int) -> bool:
        if self.a2b[i] >= 0 or self.b2a[j] >= 0:
            return False
        self.a2b[i] = j
        self.b2a[j] = i
        self.matched += 1
        return True

    def done(self) -> bool:
        return self.matched == len(self.ia) or self.matched == len(self.ib)

    def propagate(self) -> bool:
        """Step 3 to a fixpoint; False when it stopped at its round limit instead."""
        ia, ib, a2b, b2a = self.ia, self.ib, self.a2b, self.b2a
        ops_a, ops_b = self.operand_indices()
        users_a: dict[int, list[int]] = {}
        for i, ops in enumerate(ops_a):
            for o in ops:
                if o >= 0:
                    users_a.setdefault(o, []).append(i)
        match, kind = self.match, same_kind
        changed = True
        rounds = 0
        while changed and rounds < 50:
            changed = False
            rounds += 1
            # top-down: operands of matched pairs, by position, in descending order of A's
            # index.  Only a pair with an unmatched operand can match anything, so only those
            # are visited (the users of A's unmatched instructions, and the operands matched
            # during this pass that come later in the order): the same matches in the same
            # order as visiting every pair, in time proportional to what is unmatched.
            todo = {u for o in unmatched(a2b) for u in users_a.get(o, ()) if a2b[u] >= 0}
            heap = [-i for i in todo]
            heapify(heap)
            while heap:
                i = -heappop(heap)
                j = a2b[i]
                if j < 0 or len(ops_a[i]) != len(ops_b[j]):
                    continue
                for oa, ob in zip(ops_a[i], ops_b[j], strict=True):
                    if oa < 0 or ob < 0 or not kind(ia[oa], ib[ob]):
                        continue
                    if match(oa, ob):
                        changed = True
                        if oa < i and oa not in todo:
                            todo.add(oa)
                            heappush(heap, -oa)
            # bottom-up: an unmatched instruction whose operand is matched (only A's
            # instruction ``i`` and B's ``best`` get matched here: the candidates are B's
            # unmatched users, known upfront, in ascending order as before)
            users_b: dict[int, list[tuple[int, int]]] = {}
            for j in unmatched(b2a):
                for k, o in enumerate(ops_b[j]):
                    if o >= 0:
                        users_b.setdefault(o, []).append((k, j))
            for i in unmatched(a2b):
                a = ia[i]
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
        return not changed


def unmatched(x2y: list[int]) -> list[int]:
    """Indices of the unmatched (-1) entries, ascending."""
    return list(compress(range(len(x2y)), map(_UNMATCHED, x2y)))
