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
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import chain, compress, repeat
from operator import attrgetter, contains, ne, not_

from recompile_doctor.differ.fingerprint import CompFingerprints, Fingerprints, skeleton_pair
from recompile_doctor.differ.propagate import Propagation, unmatched
from recompile_doctor.parsers.hlo import Computation, HloModule, Instruction

#: (A's instructions, B's, ``a2b`` or None for "by position", how many of A are unmatched)
_Block = tuple[list[Instruction], list[Instruction], Sequence[int] | None, int]
_MATCHED = (0).__le__  # a2b[i] >= 0


@dataclass(slots=True)
class Alignment:
    """Matched instruction pairs and the unmatched rest, over all aligned computations.

    The pairs are kept per computation pair (``blocks``) and produced on demand by
    :meth:`iter_pairs` with C iterators: a list of 200,000 tuples costs more to build and
    free than what is done with them."""

    blocks: list[_Block] = field(default_factory=list)
    only_a: list[Instruction] = field(default_factory=list)
    only_b: list[Instruction] = field(default_factory=list)
    computations: list[tuple[str, str]] = field(default_factory=list)
    matched: int = 0

    def iter_pairs(self) -> Iterator[tuple[Instruction, Instruction]]:
        """The matched pairs, computation by computation, in A's printed order."""
        return chain.from_iterable(map(_block_pairs, self.blocks))

    @property
    def pairs(self) -> list[tuple[Instruction, Instruction]]:
        return list(self.iter_pairs())


def _block_pairs(block: _Block) -> Iterator[tuple[Instruction, Instruction]]:
    ia, ib, a2b, unmatched = block
    if a2b is None:
        return zip(ia, ib, strict=True)
    if not unmatched:
        return zip(ia, map(ib.__getitem__, a2b), strict=True)
    # A's matched instructions and their partners, in A's order
    matched_a, matched_b = compress(ia, map(_MATCHED, a2b)), filter(_MATCHED, a2b)
    return zip(matched_a, map(ib.__getitem__, matched_b), strict=True)


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


_NAME = attrgetter("name")
_OPCODE = attrgetter("opcode")
_OPERANDS = attrgetter("operands")
_CALLS = attrgetter("calls")
_ATTRS = attrgetter("attrs")
_NUMBER = attrgetter("parameter_number")


def _same_structure(ia: list[Instruction], ib: list[Instruction]) -> bool:
    """The same names, opcodes, operands, calls, attributes and parameter numbers position
    by position (what :attr:`Computation.twin` says, but for the root)."""
    return all(
        list(map(get, ia)) == list(map(get, ib))
        for get in (_NAME, _OPCODE, _OPERANDS, _CALLS, _ATTRS, _NUMBER)
    )


def _positional(
    ca: Computation,
    cb: Computation,
    pa: CompFingerprints,
    pb: CompFingerprints,
    fa: Fingerprints,
    fb: Fingerprints,
) -> bool:
    """Whether the steps would match ``ca`` and ``cb`` position by position, shown without
    running them: the same structure position by position (:func:`_same_structure`: another
    batch size changes only shapes and literals), distinct parameter numbers, the same root
    position, equal skeletons position by position, and each full fingerprint either equal
    to the other side's at its position or found nowhere on the other side.

    Then step 1 pairs parameters and roots by position; step 2 pairs equal full fingerprints
    in order, which (each such key being at the same positions on both sides) is by
    position, then equal skeletons among what is left (equal position by position, and so
    is what is left): every instruction with operands or callees by position.  What is left
    are leaves, which top-down propagation pairs by position through their users (matched by
    position, with the same operand indices and opcodes); a leaf with no user would be left
    to the ``op_name`` hints, so then this says no.

    Skeletons are made of opcodes, parameter numbers, some attributes, the operands' and the
    callees' skeletons: with the same structure they are equal position by position when the
    callees' are (the lazy path; the eager path's are compared)."""
    ia, ib = ca.instructions, cb.instructions
    if len(ia) != len(ib) or pa.root != pb.root or pa.params != pb.params or not ia:
        return False
    if cb.twin is not ca and not _same_structure(ia, ib):
        return False
    numbers = [ia[k].parameter_number for k in pa.params]
    if len(set(numbers)) != len(numbers):
        return False
    full_a, full_b = pa.full, pb.full
    mask = list(map(ne, full_a, full_b))
    if not set(full_b).isdisjoint(compress(full_a, mask)) or not set(full_a).isdisjoint(
        compress(full_b, mask)
    ):
        return False
    if fa.eager or fb.eager:
        if fa.skeleton(ca.name) != fb.skeleton(cb.name):
            return False
    else:  # (a computation's skeleton is a function of its full fingerprint)
        full_of_a, full_of_b = fa.computation_full, fb.computation_full
        cs_a, cs_b = fa.computation_skeleton, fb.computation_skeleton
        callees = set(chain.from_iterable([ia[k].calls for k in pa.callers]))
        if any(full_of_a[c] != full_of_b[c] and cs_a(c) != cs_b(c) for c in callees):
            return False
    # the leaves step 2 leaves unmatched (not parameters, not the root) need a user
    changed = list(compress(ia, mask))
    root = ia[pa.root]
    lonely = [
        x.name
        for x in compress(changed, map(not_, map(_OPERANDS, changed)))
        if not x.calls and x.parameter_number is None and x is not root
    ]
    return not lonely or _all_used(lonely, ia)


def _all_used(names: list[str], instrs: list[Instruction]) -> bool:
    """Whether each of ``names`` is an operand of one of ``instrs``: a scan in C for each of
    a few names (it stops at the first user), else the set of all operands."""
    if len(names) > 4:
        used = set(chain.from_iterable(map(_OPERANDS, instrs)))
        return all(map(used.__contains__, names))
    return all(any(map(contains, map(_OPERANDS, instrs), repeat(name))) for name in names)


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
        settled = self.propagate()
        # (after a propagation that ended with a round matching nothing, another one starting
        # from the same matches would match nothing either)
        if not self.done() and (self._by_hint() or not settled) and not self.done():
            self.propagate()
        return False

    def _by_key(self, ka: Sequence[int], kb: Sequence[int], leaves: bool) -> None:
        """Match equal keys in printed order: per key, the n-th unmatched instruction of A
        with the n-th of B.  Leaves (constants, iotas) only when ``leaves``: their skeleton
        says nothing, they are matched through their users instead."""
        a2b, b2a = self.a2b, self.b2a
        # Only keys on both sides can match: find them with set operations
        common = set(ka)
        common.intersection_update(kb)
        if not common:
            return
        ea = _eligible(ka, a2b, self.ia, common, leaves)
        eb = _eligible(kb, b2a, self.ib, common, leaves)
        keys_a, keys_b = list(map(ka.__getitem__, ea)), list(map(kb.__getitem__, eb))
        if _distinct(keys_a, common) and _distinct(keys_b, common):
            # each key at most once per side (skeletons after a shape change): one dict
            # lookup per key, in C
            where_b = dict(zip(keys_b, eb, strict=True))
            found = zip(ea, map(where_b.get, keys_a), strict=True)
            pairs = [(i, j) for i, j in found if j is not None]
            for i, j in pairs:  # all unmatched, each index once: no need for match()
                a2b[i] = j
                b2a[j] = i
            self.matched += len(pairs)
            return
        # B's candidates per key, last printed first so that pop() gives the first printed
        groups: dict[int, list[int]] = {}
        for j, k in zip(reversed(eb), reversed(keys_b), strict=True):
            g = groups.get(k)
            if g is None:
                groups[k] = [j]
            else:
                g.append(j)
        for i, k in zip(ea, keys_a, strict=True):
            cands = groups.get(k)
            if cands:
                j = cands.pop()
                a2b[i] = j
                b2a[j] = i
                self.matched += 1

    def _by_hint(self) -> bool:
        """Match what is left by opcode and ``op_name``; True if that matched anything."""
        ia, ib, a2b, b2a = self.ia, self.ib, self.a2b, self.b2a
        before = self.matched
        groups: dict[tuple[str, str], deque[int]] = {}
        # (only the unmatched: an op_name is parsed from the metadata on first use)
        for j in unmatched(b2a):
            b = ib[j]
            name = b.op_name
            if name is not None:
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
        return self.matched != before


def _eligible(
    keys: Sequence[int], x2y: list[int], instrs: list[Instruction], common: set[int], leaves: bool
) -> list[int]:
    """Indices, in printed order, of the unmatched instructions whose key is in ``common``
    (and that have operands or callees unless ``leaves``)."""
    if leaves:
        return [k for k in range(len(keys)) if x2y[k] < 0 and keys[k] in common]
    return [
        k
        for k in range(len(keys))
        if x2y[k] < 0 and keys[k] in common and (instrs[k].operands or instrs[k].calls)
    ]


def _distinct(keys: list[int], common: set[int]) -> bool:
    # (all keys are in common: more keys than that means a repeat, no need to build a set)
    return len(keys) <= len(common) and len(set(keys)) == len(keys)


def _by_number(instrs: list[Instruction], params: list[int]) -> list[int]:
    """Parameter indices sorted by number, printed order among equal numbers."""
    return sorted(params, key=lambda k: instrs[k].parameter_number or 0)


_Key = tuple[tuple[int, ...], tuple[int, ...], int, int]
#: a pair's ``a2b``, how many of A are unmatched, and B's unmatched indices
_Match = tuple[list[int] | tuple[int, ...], int, list[int]]


def _match_pair(
    ca: Computation,
    cb: Computation,
    pa: CompFingerprints,
    pb: CompFingerprints,
    fa: Fingerprints,
    fb: Fingerprints,
    memo: dict[_Key, _Match],
) -> _Match:
    """``a2b`` for one computation pair, and what is unmatched.  Steps 1-2 depend on the
    fingerprints only (they determine opcode, shape, parameter number, skeleton and whether
    an instruction has operands), so when they match everything, the result is reused for
    every pair with the same fingerprints: a model repeats the same fusions and loop bodies
    layer after layer."""
    key = (pa.full, pb.full, pa.root, pb.root)
    got = memo.get(key)
    if got is not None:
        return got
    m = _Matcher(ca, cb)
    full = m.run(pa, pb, lambda: skeleton_pair(ca, cb, fa, fb))
    a2b, b2a = m.a2b, m.b2a
    res = (a2b, a2b.count(-1), [j for j, i in enumerate(b2a) if i < 0])
    if full:
        memo[key] = (tuple(a2b), res[1], res[2])  # (the caller never changes the lists)
    return res


def align(a: HloModule, b: HloModule, fa: Fingerprints, fb: Fingerprints) -> Alignment:
    """Align ``a`` and ``b`` from their entry computations down through called computations."""
    out = Alignment()
    queue: deque[tuple[str, str]] = deque([(a.entry, b.entry)])
    seen_a: set[str] = set()
    seen_b: set[str] = set()
    blocks, only_a, only_b = out.blocks, out.only_a, out.only_b
    comps_a, comps_b = a.computations, b.computations
    fps_a, fps_b = fa.computations, fb.computations
    memo: dict[_Key, _Match] = {}
    while queue:
        na, nb = queue.popleft()
        if na in seen_a or nb in seen_b:  # (a pair is seen once both are)
            continue
        seen_a.add(na)
        seen_b.add(nb)
        ca, cb = comps_a[na], comps_b[nb]
        pa, pb = fps_a[na], fps_b[nb]
        out.computations.append((na, nb))
        ia, ib = ca.instructions, cb.instructions
        if (pa.full == pb.full and _identical(ca, pa, pb)) or _positional(ca, cb, pa, pb, fa, fb):
            blocks.append((ia, ib, None, 0))
            out.matched += len(ia)
            a2b: list[int] | tuple[int, ...] | range = range(len(ia))
        else:
            a2b, unmatched, rest_b = _match_pair(ca, cb, pa, pb, fa, fb, memo)
            blocks.append((ia, ib, a2b, unmatched))
            out.matched += len(ia) - unmatched
            if unmatched:
                only_a.extend([x for x, j in zip(ia, a2b, strict=True) if j < 0])
            if rest_b:
                only_b.extend(map(ib.__getitem__, rest_b))
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
