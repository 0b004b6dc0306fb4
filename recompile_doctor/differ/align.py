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

For speed the matcher works on instruction *indices* (lists, no ``id()`` dicts), and a
computation whose fingerprints equal the other's position by position is matched by position
without running the steps (which would give exactly that, see :func:`_identical`).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import compress

from recompile_doctor.differ.fingerprint import CompFingerprints, Fingerprints
from recompile_doctor.differ.propagate import Propagation
from recompile_doctor.parsers.hlo import Computation, HloModule, Instruction


@dataclass(slots=True)
class Alignment:
    """Matched instruction pairs and the unmatched rest, over all aligned computations."""

    pairs: list[tuple[Instruction, Instruction]] = field(default_factory=list)
    only_a: list[Instruction] = field(default_factory=list)
    only_b: list[Instruction] = field(default_factory=list)
    computations: list[tuple[str, str]] = field(default_factory=list)


_Skeletons = Callable[[], tuple[list[int], list[int]]]


def _identical(ca: Computation, pa: CompFingerprints, pb: CompFingerprints) -> bool:
    """Fingerprints equal position by position, same root position, distinct parameter
    numbers: then step 1 pairs parameters and roots by position and step 2's in-order pairing
    of equal keys pairs everything else by position too, so the result is the identity."""
    if pa.full != pb.full or pa.root != pb.root:
        return False
    ins = ca.instructions
    numbers = {ins[k].parameter_number for k in pa.params}
    return len(numbers) == len(pa.params)


class _Matcher(Propagation):
    def run(self, pa: CompFingerprints, pb: CompFingerprints, skeletons: _Skeletons) -> bool:
        """Match; True when steps 1-2 (fingerprints only) matched everything."""
        ia, ib = self.ia, self.ib
        by_number = {ia[k].parameter_number: k for k in _by_number(ia, pa.params)}
        for j in _by_number(ib, pb.params):
            i = by_number.get(ib[j].parameter_number)
            if i is not None:
                self.match(i, j)
        ra, rb = pa.root, pb.root
        if ra >= 0 and rb >= 0 and self.same_kind(ia[ra], ib[rb]):
            self.match(ra, rb)
        self._by_key(pa.full, pb.full, leaves=True)
        if self.done():
            return True
        self._by_key(*skeletons(), leaves=False)
        if self.done():  # propagation and hints find nothing once one side is all matched
            return True
        self.propagate()
        if not self.done():
            self._by_hint()
            if not self.done():
                self.propagate()
        return False

    def _by_key(self, ka: list[int], kb: list[int], leaves: bool) -> None:
        """Match equal keys in printed order; leaves (constants, iotas) only when ``leaves``:
        their skeleton says nothing, they are matched through their users instead."""
        ia, ib, a2b, b2a = self.ia, self.ib, self.a2b, self.b2a
        # Only keys on both sides can match: find them with set operations and select their
        # instructions with compress() (both run in C), so the Python loops below only visit
        # candidates (few after a shape change, for the full fingerprints).
        common = set(ka)
        common.intersection_update(kb)
        if not common:
            return
        both = common.__contains__
        # B's candidates per key, last printed first so that pop() gives the first printed
        groups: dict[int, list[int]] = {}
        for j in compress(range(len(kb) - 1, -1, -1), map(both, reversed(kb))):
            if b2a[j] < 0 and (leaves or ib[j].operands or ib[j].calls):
                g = groups.get(kb[j])
                if g is None:
                    groups[kb[j]] = [j]
                else:
                    g.append(j)
        for i in compress(range(len(ka)), map(both, ka)):
            if a2b[i] >= 0:
                continue
            cands = groups.get(ka[i])
            if cands and (leaves or ia[i].operands or ia[i].calls):
                j = cands.pop()  # every candidate is unmatched: only this loop matches them
                a2b[i] = j
                b2a[j] = i
                self.matched += 1

    def _by_hint(self) -> None:
        ia, ib, a2b, b2a = self.ia, self.ib, self.a2b, self.b2a
        groups: dict[tuple[str, str], deque[int]] = {}
        for j, b in enumerate(ib):
            name = b.op_name
            if b2a[j] < 0 and name is not None:
                groups.setdefault((b.opcode, name), deque()).append(j)
        for i, a in enumerate(ia):
            if a2b[i] >= 0:
                continue
            name = a.op_name
            if name is None:
                continue
            cands = groups.get((a.opcode, name))
            if cands:
                self.match(i, cands.popleft())


def _by_number(instrs: list[Instruction], params: list[int]) -> list[int]:
    """Parameter indices sorted by number, printed order among equal numbers."""
    return sorted(params, key=lambda k: instrs[k].parameter_number or 0)


_Key = tuple[tuple[int, ...], tuple[int, ...], int, int]


def _match_pair(
    ca: Computation,
    cb: Computation,
    fa: Fingerprints,
    fb: Fingerprints,
    memo: dict[_Key, tuple[int, ...]],
) -> list[int]:
    """``a2b`` for one computation pair.  Steps 1-2 depend on the fingerprints only (they
    determine opcode, shape, parameter number, skeleton and whether an instruction has
    operands), so when they match everything, the result is reused for every pair with the
    same fingerprints: a model repeats the same fusions and loop bodies layer after layer."""
    pa, pb = fa.computations[ca.name], fb.computations[cb.name]
    key = (tuple(pa.full), tuple(pb.full), pa.root, pb.root)
    got = memo.get(key)
    if got is not None:
        return list(got)
    m = _Matcher(ca, cb)
    if m.run(pa, pb, lambda: (fa.skeleton(ca.name), fb.skeleton(cb.name))):
        memo[key] = tuple(m.a2b)
    return m.a2b


def align(a: HloModule, b: HloModule, fa: Fingerprints, fb: Fingerprints) -> Alignment:
    """Align ``a`` and ``b`` from their entry computations down through called computations."""
    out = Alignment()
    queue: deque[tuple[str, str]] = deque([(a.entry, b.entry)])
    done: set[tuple[str, str]] = set()
    seen_a: set[str] = set()
    seen_b: set[str] = set()
    pairs_out, only_a, only_b = out.pairs, out.only_a, out.only_b
    memo: dict[_Key, tuple[int, ...]] = {}
    while queue:
        na, nb = queue.popleft()
        if (na, nb) in done or na in seen_a or nb in seen_b:
            continue
        done.add((na, nb))
        seen_a.add(na)
        seen_b.add(nb)
        ca, cb = a.computations[na], b.computations[nb]
        pa, pb = fa.computations[na], fb.computations[nb]
        out.computations.append((na, nb))
        ia, ib = ca.instructions, cb.instructions
        if _identical(ca, pa, pb):
            pairs_out.extend(zip(ia, ib, strict=True))
            a2b: list[int] | range = range(len(ia))
        else:
            a2b = _match_pair(ca, cb, fa, fb, memo)
            unmatched = a2b.count(-1)
            if unmatched:
                pairs_out.extend([(x, ib[j]) for x, j in zip(ia, a2b, strict=True) if j >= 0])
                only_a.extend([x for x, j in zip(ia, a2b, strict=True) if j < 0])
            else:  # all matched: build the pairs in C
                pairs_out.extend(zip(ia, map(ib.__getitem__, a2b), strict=True))
            if len(ia) - unmatched < len(ib):
                matched_b = set(a2b)
                only_b.extend([y for j, y in enumerate(ib) if j not in matched_b])
        for i in pa.callers:
            j = a2b[i]
            if j >= 0 and len(ia[i].calls) == len(ib[j].calls):
                queue.extend(zip(ia[i].calls, ib[j].calls, strict=True))
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
