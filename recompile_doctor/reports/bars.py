"""The timeline's bars, joined where they touch: no matplotlib and no numpy here.

A lane group (one lane, one cache outcome, before or after warm-up) of more than
:data:`MERGE_ABOVE` bars is drawn as its bars joined where they touch or are less than a
gap apart, in order of (x, width): the same picture at any sensible zoom, and a much smaller
SVG for logs with thousands of compilations.  A group whose bars come in order, as a log's
mostly do, is joined as it is read (:func:`group_bars`); the bars of a group out of order
are read again and sorted (:class:`SortedBars`) a run of :data:`RUN` at a time, the runs
written to an anonymous temporary file and merged: the 1,047,000 bars of an 8 GB
TensorFlow log's main group (its clock goes back at each repeated record) were 33 MB at once
when they were kept and sorted by numpy.
"""

from __future__ import annotations

import heapq
import math
from array import array
from collections.abc import Iterable, Iterator, Sequence

from recompile_doctor.reports.plot_data import Axis, Drawn, bar_of
from recompile_doctor.timeline.blobs import Blob, Blobs

#: a lane group with more bars than this has bars closer than a pixel drawn as one
MERGE_ABOVE = 200
#: bars of the groups out of order held at once before each group's are sorted and
#: written out as a run (16 bytes a bar; the sort makes a pair of them, about 100 bytes)
RUN = 32_768
#: bars of a run read back at a time while the runs are merged
_READ = 4_096

#: (lane, cache outcome, after warm-up)
GroupKey = tuple[int, str, bool]
Bar = tuple[float, float]


class Joined:
    """Bars joined as they come, in order of (x, width): each at least ``min_w`` wide,
    joined to the one before where they touch or are less than ``gap`` apart."""

    __slots__ = ("bars", "gap", "min_w")

    def __init__(self, gap: float, min_w: float) -> None:
        self.gap = gap
        self.min_w = min_w
        self.bars: list[Bar] = []

    def add(self, x: float, w: float) -> None:
        if w < self.min_w:
            w = self.min_w
        bars = self.bars
        if bars and x <= bars[-1][0] + bars[-1][1] + self.gap:
            x0, w0 = bars[-1]
            bars[-1] = (x0, max(w0, x + w - x0))
        else:
            bars.append((x, w))


def _order(bar: Bar) -> tuple[bool, float, bool, float]:
    """A bar's place in the order of (x, width) where a NaN (which compares with nothing)
    comes after every number, as numpy sorts it."""
    x, w = bar
    return (x != x, 0.0 if x != x else x, w != w, 0.0 if w != w else w)


class SortedBars:
    """Bars (x, width) added in any order (:meth:`add`), given back in order of (x,
    width), stably: as ``sorted`` gives them (:meth:`sorted`).  Past :data:`RUN` of them
    held (:meth:`spill`, also called by their owner for the sake of others), the held ones
    are sorted and written to ``blobs`` as a run; the runs are merged when read."""

    __slots__ = ("_blobs", "_held", "_runs")

    def __init__(self, blobs: Blobs) -> None:
        self._blobs = blobs
        self._held = array("d")  # x, width, x, width, ...
        self._runs: list[list[Blob]] = []

    def __len__(self) -> int:
        return len(self._held) // 2

    def add(self, x: float, w: float) -> None:
        held = self._held
        held.append(x)
        held.append(w)
        if len(held) >= 2 * RUN:
            self.spill()

    def spill(self) -> None:
        """Write the bars held as a sorted run."""
        if not self._held:
            return
        flat = array("d")
        for x, w in self._sorted_held():
            flat.append(x)
            flat.append(w)
        step = 2 * _READ
        self._runs.append(
            [self._blobs.put(flat[i : i + step].tobytes()) for i in range(0, len(flat), step)]
        )
        self._held = array("d")

    def _sorted_held(self) -> list[Bar]:
        held = self._held
        bars = list(zip(held[0::2], held[1::2], strict=True))
        if any(map(math.isnan, held)):
            bars.sort(key=_order)
        else:
            bars.sort()
        return bars

    def sorted(self) -> Iterator[Bar]:
        """Every bar added, in order (a merge of the runs, stable: of two equal bars the
        one added first comes first)."""
        if not self._runs:
            yield from self._sorted_held()
            return
        if self._held:
            self.spill()
        runs = [_read_run(run) for run in self._runs]
        yield from heapq.merge(*runs, key=_order)


def _read_run(run: list[Blob]) -> Iterator[Bar]:
    for blob in run:
        flat = array("d")
        flat.frombytes(Blobs.get(blob))
        yield from zip(flat[0::2], flat[1::2], strict=True)


class _Group:
    """The bars of one (lane, cache outcome, after warm-up) as they are read
    (:func:`group_bars`)."""

    __slots__ = ("few", "joined", "last", "n")

    def __init__(self, gap: float, min_w: float) -> None:
        self.n = 0
        #: the bars as they came while no more than MERGE_ABOVE (then each is drawn alone)
        self.few: list[Bar] | None = []
        #: the bars joined as they came while in order (None once one came out of order)
        self.joined: Joined | None = Joined(gap, min_w)
        self.last: Bar | None = None

    def add(self, x: float, w: float) -> None:
        self.n += 1
        few = self.few
        if few is not None:
            few.append((x, w))
            if self.n > MERGE_ABOVE:
                self.few = None
        joined = self.joined
        if joined is not None:
            bar = (x, w)
            last = self.last
            if last is not None and not last <= bar:  # (out of the order a sort gives)
                self.joined = self.last = None
                return
            self.last = bar
            joined.add(x, w)


def group_bars(
    compilations: Sequence[Drawn], lanes: Sequence[int], axis: Axis, gap: float, min_w: float
) -> dict[GroupKey, list[Bar]]:
    """The bars to draw per (lane, cache outcome, after warm-up) of the compilations in
    these lanes: a group of up to MERGE_ABOVE bars each as it is (at least ``min_w`` wide),
    more joined (:class:`Joined`).  A group whose bars come in order is joined as it is read;
    the bars of the others are read again and sorted, in runs (:class:`SortedBars`)."""
    groups: dict[GroupKey, _Group] = {}
    for c, lane in zip(compilations, lanes, strict=True):
        where = (lane, c.cache, not c.warmup)
        group = groups.get(where)
        if group is None:
            group = groups[where] = _Group(gap, min_w)
        group.add(*bar_of(c, axis))
    out: dict[GroupKey, list[Bar]] = {}
    unordered = [k for k, g in groups.items() if g.few is None and g.joined is None]
    if unordered:
        blobs = Blobs("recompile-doctor-bars-")
        try:
            _join_unordered(compilations, lanes, axis, unordered, blobs, gap, min_w, out)
        finally:
            blobs.close()
    for k, g in groups.items():
        if g.few is not None:
            out[k] = [(x, max(w, min_w)) for x, w in g.few]
        elif g.joined is not None:
            out[k] = g.joined.bars
    return {k: out[k] for k in groups}


def _join_unordered(
    compilations: Iterable[Drawn],
    lanes: Iterable[int],
    axis: Axis,
    unordered: list[GroupKey],
    blobs: Blobs,
    gap: float,
    min_w: float,
    out: dict[GroupKey, list[Bar]],
) -> None:
    """The bars of the groups ``unordered`` read again, sorted and joined into ``out``:
    at most :data:`RUN` of them held at once, of all the groups together."""
    sorting = {k: SortedBars(blobs) for k in unordered}
    held = 0
    for c, lane in zip(compilations, lanes, strict=True):
        bars = sorting.get((lane, c.cache, not c.warmup))
        if bars is None:
            continue
        x, w = bar_of(c, axis)
        bars.add(x, max(w, min_w))
        held += 1
        if held >= RUN:
            for each in sorting.values():
                each.spill()
            held = 0
    for k in unordered:
        joined = Joined(gap, min_w)
        for x, w in sorting.pop(k).sorted():
            joined.add(x, w)
        out[k] = joined.bars
