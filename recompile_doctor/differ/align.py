"""Align the instructions of two modules regardless of names and numbering.

The matcher follows OpenXLA's hlo_diff in spirit, in this order per computation pair:

1. parameters by number, the roots with each other;
2. identical full fingerprints (the whole subgraph below is identical), then identical
   skeletons (same structure, other shapes or values), each unique-or-in-order;
3. propagation to a fixpoint: operands of matched pairs by position (top-down), users of
   matched operands by position (bottom-up), same opcode (a parameter may meet a constant:
   that is how frozen weights show);
4. what is left, by opcode and ``op_name`` metadata, in printed order.

Called computations are aligned through their matched callers (fusions, while bodies, ...).
"""

from __future__ import annotations

from collections import defaultdict, deque
from dataclasses import dataclass, field

from recompile_doctor.differ.fingerprint import Fingerprints
from recompile_doctor.parsers.hlo import Computation, HloModule, Instruction

_COMPATIBLE = {("parameter", "constant"), ("constant", "parameter")}


@dataclass(slots=True)
class Alignment:
    """Matched instruction pairs and the unmatched rest, over all aligned computations."""

    pairs: list[tuple[Instruction, Instruction]] = field(default_factory=list)
    only_a: list[Instruction] = field(default_factory=list)
    only_b: list[Instruction] = field(default_factory=list)
    computations: list[tuple[str, str]] = field(default_factory=list)


def _same_kind(a: Instruction, b: Instruction) -> bool:
    return a.opcode == b.opcode or (
        (a.opcode, b.opcode) in _COMPATIBLE and a.shape.sig == b.shape.sig
    )


class _Matcher:
    def __init__(self, ca: Computation, cb: Computation, fa: Fingerprints, fb: Fingerprints):
        self.ca, self.cb, self.fa, self.fb = ca, cb, fa, fb
        self.a2b: dict[int, Instruction] = {}
        self.b2a: dict[int, Instruction] = {}
        self.a_by_name = {i.name: i for i in ca.instructions}
        self.b_by_name = {i.name: i for i in cb.instructions}

    def match(self, a: Instruction, b: Instruction) -> bool:
        if id(a) in self.a2b or id(b) in self.b2a:
            return False
        self.a2b[id(a)] = b
        self.b2a[id(b)] = a
        return True

    def run(self) -> list[tuple[Instruction, Instruction]]:
        pa = {p.parameter_number: p for p in self.ca.parameters()}
        for p in self.cb.parameters():
            q = pa.get(p.parameter_number)
            if q is not None:
                self.match(q, p)
        ra, rb = self.ca.root_instruction(), self.cb.root_instruction()
        if ra is not None and rb is not None and _same_kind(ra, rb):
            self.match(ra, rb)
        self._by_key(self.fa.full, self.fb.full, leaves=True)
        if not self._done():
            self._by_key(self.fa.skeleton, self.fb.skeleton, leaves=False)
            self._propagate()
        if not self._done():
            self._by_hint()
            self._propagate()
        return [(a, self.a2b[id(a)]) for a in self.ca.instructions if id(a) in self.a2b]

    def _done(self) -> bool:
        return len(self.a2b) == len(self.ca.instructions) or len(self.b2a) == len(
            self.cb.instructions
        )

    def _by_key(self, ka: dict[int, int], kb: dict[int, int], leaves: bool) -> None:
        """Match equal keys in printed order; leaves (constants, iotas) only when ``leaves``:
        their skeleton says nothing, they are matched through their users instead."""
        groups: dict[int, deque[Instruction]] = defaultdict(deque)
        for i in self.cb.instructions:
            if id(i) not in self.b2a and (leaves or i.operands or i.calls):
                groups[kb[id(i)]].append(i)
        for a in self.ca.instructions:
            if id(a) in self.a2b or not (leaves or a.operands or a.calls):
                continue
            cands = groups.get(ka[id(a)])
            while cands:
                b = cands.popleft()
                if id(b) not in self.b2a:
                    self.match(a, b)
                    break

    def _propagate(self) -> None:
        users_b: dict[int, list[tuple[int, Instruction]]] = defaultdict(list)
        for b in self.cb.instructions:
            for k, n in enumerate(b.operands):
                op = self.b_by_name.get(n)
                if op is not None:
                    users_b[id(op)].append((k, b))
        changed = True
        rounds = 0
        while changed and rounds < 50:
            changed = False
            rounds += 1
            # top-down: operands of matched pairs, by position
            for a in reversed(self.ca.instructions):
                mb = self.a2b.get(id(a))
                if mb is None or len(a.operands) != len(mb.operands):
                    continue
                for na, nb in zip(a.operands, mb.operands, strict=True):
                    oa, ob = self.a_by_name.get(na), self.b_by_name.get(nb)
                    if oa is None or ob is None or not _same_kind(oa, ob):
                        continue
                    changed |= self.match(oa, ob)
            # bottom-up: an unmatched instruction whose operand is matched
            for a in self.ca.instructions:
                if id(a) in self.a2b:
                    continue
                best: Instruction | None = None
                for k, na in enumerate(a.operands):
                    oa = self.a_by_name.get(na)
                    ob = self.a2b.get(id(oa)) if oa is not None else None
                    if ob is None:
                        continue
                    for kb, ub in users_b.get(id(ob), ()):
                        if kb != k or id(ub) in self.b2a or not _same_kind(a, ub):
                            continue
                        if best is None or (ub.op_name == a.op_name != best.op_name):
                            best = ub
                    if best is not None:
                        break
                if best is not None:
                    changed |= self.match(a, best)

    def _by_hint(self) -> None:
        groups: dict[tuple[str, str | None], deque[Instruction]] = defaultdict(deque)
        for b in self.cb.instructions:
            if id(b) not in self.b2a and b.op_name is not None:
                groups[(b.opcode, b.op_name)].append(b)
        for a in self.ca.instructions:
            if id(a) in self.a2b or a.op_name is None:
                continue
            cands = groups.get((a.opcode, a.op_name))
            if cands:
                self.match(a, cands.popleft())


def align(a: HloModule, b: HloModule, fa: Fingerprints, fb: Fingerprints) -> Alignment:
    """Align ``a`` and ``b`` from their entry computations down through called computations."""
    out = Alignment()
    queue = [(a.entry, b.entry)]
    done: set[tuple[str, str]] = set()
    seen_a: set[str] = set()
    seen_b: set[str] = set()
    while queue:
        na, nb = queue.pop(0)
        if (na, nb) in done or na in seen_a or nb in seen_b:
            continue
        done.add((na, nb))
        seen_a.add(na)
        seen_b.add(nb)
        ca, cb = a.computations[na], b.computations[nb]
        m = _Matcher(ca, cb, fa, fb)
        pairs = m.run()
        out.computations.append((na, nb))
        out.pairs.extend(pairs)
        out.only_a.extend(i for i in ca.instructions if id(i) not in m.a2b)
        out.only_b.extend(i for i in cb.instructions if id(i) not in m.b2a)
        for x, y in pairs:
            if x.calls and len(x.calls) == len(y.calls):
                queue.extend(zip(x.calls, y.calls, strict=True))
    # computations reached only through unmatched callers count as unmatched
    for x in list(out.only_a):
        _add_unreached(a, x, seen_a, out.only_a)
    for y in list(out.only_b):
        _add_unreached(b, y, seen_b, out.only_b)
    return out


def _add_unreached(m: HloModule, ins: Instruction, seen: set[str], sink: list[Instruction]) -> None:
    for c in ins.calls:
        if c in seen or c not in m.computations:
            continue
        seen.add(c)
        for sub in m.computations[c].instructions:
            sink.append(sub)
            _add_unreached(m, sub, seen, sink)
