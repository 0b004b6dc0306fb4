"""Sums per name, and the largest of them, without keeping every name.

The cost plot sums the compile time after warm-up of each module: a dictionary keyed by
module name held 21 MB of names for the 131,589 modules of a 1 GB TensorFlow log, for the
twelve it draws.  :class:`TopSums` numbers the names by fingerprint
(:class:`~recompile_doctor.timeline.distinct.NameIndex`), sums into an array and keeps
where each name was first added; the few names it draws are read again from the names it
was given, in a second pass (:func:`read_at`).  Names numbered already (the page's module
numbers: :mod:`.module_numbers`) are summed by their numbers, in arrays made to size at
once, with no fingerprint kept.
"""

from __future__ import annotations

import bisect
import heapq
import math
from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from recompile_doctor.timeline import column
from recompile_doctor.timeline.column import Spilled
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


class TopSums:
    """A sum per name (:meth:`add`), and the largest sums (:meth:`top`).  ``numbered``:
    the names come with numbers below it, one per distinct name (module numbers counted
    already): the sums are kept by those numbers, in arrays made to size at once, and no
    fingerprint of the names is kept."""

    __slots__ = ("_added", "_count", "_few", "_first", "_index", "_seen", "_sums", "_wide")

    def __init__(self, numbered: int | None = None) -> None:
        self._index = NameIndex() if numbered is None else None
        #: numbered: which numbers were added (else the names are numbered here, in order
        #: of first add); for many names, in temporary files (:func:`column.numbers`)
        self._seen = column.numbers("B", numbered, at_random=True) if numbered is not None else None
        self._sums = (
            column.numbers("d", numbered, at_random=True) if numbered is not None else array("d")
        )
        #: where each name was first added (its place among adds; 4 bytes while it fits)
        self._first = (
            column.numbers("I", numbered, at_random=True) if numbered is not None else array("I")
        )
        self._wide = False  # (places in 8 bytes)
        self._count = 0  # distinct names added
        self._added = 0
        self._few: dict[int, str] | None = {}  # every name by its number, while few

    def __len__(self) -> int:
        return self._count

    def add(self, name: str, value: float, number: int | None = None) -> None:
        """Add ``value`` to ``name``'s sum (0 until then); ``number``: the name's (when
        numbered)."""
        seen = self._seen
        if seen is None:
            assert self._index is not None
            k = self._index.number(name)
            new = k == self._count
        else:
            assert number is not None
            k = number
            new = not seen[k]
            seen[k] = 1
        if new:
            self._count += 1
            if self._added > FIRST_FITS and not self._wide:
                self._first = _widened(self._first)
                self._wide = True
            if seen is None:
                self._sums.append(0.0)
                self._first.append(self._added)
            else:
                self._first[k] = self._added
            if self._few is not None:
                self._few[k] = name
                if len(self._few) > FEW:
                    self._few = None
        self._sums[k] += value
        self._added += 1

    def _live(self) -> Iterator[tuple[int, float]]:
        """(number, sum) of each name added."""
        seen = self._seen
        if seen is None:
            return enumerate(self._sums)
        # (both read in order: many names' a chunk at a time)
        return ((k, v) for k, (v, s) in enumerate(zip(self._sums, seen, strict=True)) if s)

    def top(self, n: int, names: Callable[[], Iterable[str]]) -> list[tuple[str, float]]:
        """The ``n`` largest sums with their names, largest first (then by name); beyond
        ``n`` names, the ``n - 1`` largest and one of all the others summed (exactly:
        ``fsum``), as ``"<k> others"``.  ``names()`` gives the names of the adds again, in
        the same order, to find the few drawn (not called while the names are few)."""
        sums, count = self._sums, self._count
        chosen = [k for k, _ in self._live()] if count <= n else self._largest(n - 1, names)
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
            rest = math.fsum(v for k, v in self._live() if k not in taken)
            out.append((f"{count - n + 1} others", rest))
        return out

    def _largest(self, m: int, names: Callable[[], Iterable[str]]) -> list[int]:
        """The numbers of the ``m`` largest sums, ties broken by the smaller name."""
        if m <= 0:
            return []
        cut = heapq.nlargest(m, (v for _, v in self._live()))[-1]
        above = [k for k, v in self._live() if v > cut]
        wanted = m - len(above)
        # (the sums equal to the cut counted, not listed: many modules can take as long)
        if sum(1 for _, v in self._live() if v == cut) <= wanted:
            return [*above, *(k for k, v in self._live() if v == cut)]
        # more sums equal to the cut than places: the smallest names among them
        if self._few is not None:
            ties = sorted((self._few[k], k) for k, v in self._live() if v == cut)
            return [*above, *(k for _, k in ties[:wanted])]
        tied = column.numbers("B", self._added, at_random=True)  # (each read at its first add)
        for k, v in self._live():
            if v == cut:
                tied[self._first[k]] = 1
        kept: list[tuple[str, int]] = []  # (name, place), sorted, at most `wanted`
        place = -1
        for s, t in zip(names(), tied, strict=True):
            place += 1
            if not t:
                continue
            if len(kept) < wanted:
                bisect.insort(kept, (s, place))
            elif (s, place) < kept[-1]:
                kept.pop()
                bisect.insort(kept, (s, place))
        places = {place for _, place in kept}
        return [*above, *(k for k, _ in self._live() if self._first[k] in places)]


def _widened(places: Sequence[int]) -> array[Any] | Spilled[Any]:
    """``places`` in 8 bytes each (past :data:`FIRST_FITS` adds)."""
    wide = column.numbers("Q", bound=len(places), at_random=True)
    for p in places:  # (an array extends only from one of its own type code)
        wide.append(p)
    return wide
