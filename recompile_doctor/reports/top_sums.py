"""Sums per name, and the largest of them, without keeping every name.

The cost plot sums the compile time after warm-up of each module: a dictionary keyed by
module name held 21 MB of names for the 131,589 modules of a 1 GB TensorFlow log, for the
twelve it draws.  :class:`TopSums` numbers the names by fingerprint
(:class:`~recompile_doctor.timeline.distinct.NameIndex`), sums into an array and keeps
where each name was first added; the few names it draws are read again from the names it
was given, in a second pass (:func:`read_at`).  Names numbered already (the page's module
numbers: :mod:`.module_numbers`) are summed by their numbers, with no fingerprint kept.
"""

from __future__ import annotations

import bisect
import heapq
import math
from array import array
from collections.abc import Callable, Iterable, Sequence

from recompile_doctor.timeline.distinct import NameIndex

#: names kept as they come while there are no more than this (no second pass needed)
FEW = 64


def read_at(strings: Iterable[str], at: Sequence[int]) -> list[str]:
    """The strings at places ``at`` (ascending) of ``strings``, read no further than the
    last of them."""
    out: list[str] = []
    if not at:
        return out
    want = iter(at)
    next_at = next(want)
    for i, s in enumerate(strings):
        if i == next_at:
            out.append(s)
            nxt = next(want, None)
            while nxt == next_at:  # (the same place twice)
                out.append(s)
                nxt = next(want, None)
            if nxt is None:
                break
            next_at = nxt
    if len(out) != len(at):
        raise ValueError(f"{len(at) - len(out)} of the places are beyond the strings")
    return out


#: the most adds whose places fit the 4 bytes :attr:`TopSums._first` starts with
FIRST_FITS = 0xFFFFFFFF

#: a name not added yet (:attr:`TopSums._known`)
_NOT_YET = 0xFFFFFFFF


class TopSums:
    """A sum per name (:meth:`add`), and the largest sums (:meth:`top`).  ``numbered``:
    the names come with numbers below it, one per distinct name (module numbers counted
    already), so that no fingerprint of them is kept."""

    __slots__ = ("_added", "_few", "_first", "_index", "_known", "_sums")

    def __init__(self, numbered: int | None = None) -> None:
        self._index = NameIndex() if numbered is None else None
        #: a given number -> the name's number here (numbered in order of first add)
        self._known = array("I", [_NOT_YET]) * numbered if numbered is not None else None
        self._sums = array("d")
        #: where each name was first added (its place among adds; 4 bytes while it fits)
        self._first = array("I")
        self._added = 0
        self._few: list[str] | None = []  # every name, in order of number, while few

    def __len__(self) -> int:
        return len(self._sums)

    def add(self, name: str, value: float, number: int | None = None) -> None:
        """Add ``value`` to ``name``'s sum (0 until then); ``number``: the name's (when
        numbered)."""
        if self._index is not None:
            k = self._index.number(name)
        else:
            assert self._known is not None and number is not None
            k = self._known[number]
            if k == _NOT_YET:
                k = self._known[number] = len(self._sums)
        if k == len(self._sums):
            self._sums.append(0.0)
            if self._added > FIRST_FITS and self._first.typecode == "I":
                self._first = array("Q", self._first)
            self._first.append(self._added)
            if self._few is not None:
                self._few.append(name)
                if len(self._few) > FEW:
                    self._few = None
        self._sums[k] += value
        self._added += 1

    def top(self, n: int, names: Callable[[], Iterable[str]]) -> list[tuple[str, float]]:
        """The ``n`` largest sums with their names, largest first (then by name); beyond
        ``n`` names, the ``n - 1`` largest and one of all the others summed (exactly:
        ``fsum``), as ``"<k> others"``.  ``names()`` gives the names of the adds again, in
        the same order, to find the few drawn (not called while the names are few)."""
        sums, count = self._sums, len(self._sums)
        chosen = list(range(count)) if count <= n else self._largest(n - 1, names)
        if self._few is not None:
            named = [self._few[k] for k in chosen]
        else:
            by_place = sorted(chosen, key=self._first.__getitem__)
            at = read_at(names(), [self._first[k] for k in by_place])
            found = dict(zip(by_place, at, strict=True))
            named = [found[k] for k in chosen]
        out = [(name, sums[k]) for name, k in zip(named, chosen, strict=True)]
        out.sort(key=lambda kv: (-kv[1], kv[0]))
        if count > n:
            taken = set(chosen)
            rest = math.fsum(v for k, v in enumerate(sums) if k not in taken)
            out.append((f"{count - n + 1} others", rest))
        return out

    def _largest(self, m: int, names: Callable[[], Iterable[str]]) -> list[int]:
        """The numbers of the ``m`` largest sums, ties broken by the smaller name."""
        if m <= 0:
            return []
        sums = self._sums
        cut = heapq.nlargest(m, sums)[-1]
        above = [k for k, v in enumerate(sums) if v > cut]
        wanted = m - len(above)
        if sums.count(cut) <= wanted:
            return [*above, *(k for k, v in enumerate(sums) if v == cut)]
        # more sums equal to the cut than places: the smallest names among them
        if self._few is not None:
            ties = sorted((self._few[k], k) for k, v in enumerate(sums) if v == cut)
            return [*above, *(k for _, k in ties[:wanted])]
        tied = bytearray(self._added)  # (each read at its first add)
        for k, v in enumerate(sums):
            if v == cut:
                tied[self._first[k]] = 1
        kept: list[tuple[str, int]] = []  # (name, place), sorted, at most `wanted`
        for place, s in enumerate(names()):
            if not tied[place]:
                continue
            if len(kept) < wanted:
                bisect.insort(kept, (s, place))
            elif (s, place) < kept[-1]:
                kept.pop()
                bisect.insort(kept, (s, place))
        places = {place for _, place in kept}
        return [*above, *(k for k, first in enumerate(self._first) if first in places)]
