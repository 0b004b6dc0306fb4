"""What the plots read of a run's compilations, and the lanes of the timeline: no
matplotlib here.

The HTML page works out the timeline's lanes (:func:`survey`: a pass over every compilation,
with a number per module) before it imports the plots' libraries (32 MB), so that the two do
not hold memory at once (see :mod:`.module_numbers`).
"""

from __future__ import annotations

import heapq
import math
from array import array
from collections.abc import Collection, Container, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import repeat
from typing import Literal, NamedTuple, TypeAlias, overload

from recompile_doctor.model import Compilation, Event
from recompile_doctor.reports.module_numbers import ModuleNumbers
from recompile_doctor.reports.top_sums import read_at
from recompile_doctor.timeline import column
from recompile_doctor.timeline.distinct import NameIndex
from recompile_doctor.timeline.table import CompilationTable

MAX_LANES = 40


class PlotRow(NamedTuple):
    """A compilation as the plots read it: without its line's text and its keys, a third
    of the memory of the compilation's object (the plots pass over a run's compilations a
    dozen times, so they are made once, and a run can have 100,000 of them)."""

    module: str
    function: str | None
    source: str
    line: int
    end_line: int | None
    t: float | None
    duration_s: float | None
    cache: str
    warmup: bool


#: what the plots read: a compilation, or its row
Drawn: TypeAlias = Compilation | PlotRow


def plot_rows(compilations: Iterable[Compilation]) -> Sequence[PlotRow]:
    """The compilations as the plots read them.  A run's table gives them from its columns
    on each pass, each row dropped after use (:class:`TableRows`); other compilations are
    made into rows once."""
    if isinstance(compilations, CompilationTable):
        return TableRows(compilations)
    return tuple(_row_of(c) for c in compilations)


def _row_of(c: Compilation) -> PlotRow:
    return PlotRow(
        c.module, c.function, c.source, c.line, c.end_line, c.t, c.duration_s, c.cache,
        c.warmup,
    )  # fmt: skip


class TableRows(Sequence[PlotRow]):
    """The plot rows of a compilation table, made from its columns on every pass over them
    and not held: a row per compilation, with its own copy of a module name read back from
    the table's file, was 43 MB for the 131,589 compilations of a 1 GB TensorFlow log (the
    plots pass over them a few times; a pass reads the columns a chunk at a time)."""

    __slots__ = ("_table",)

    def __init__(self, table: CompilationTable) -> None:
        self._table = table

    def __len__(self) -> int:
        return len(self._table)

    def __iter__(self) -> Iterator[PlotRow]:
        for values in self._table.drawn():
            yield PlotRow(*values)

    @overload
    def __getitem__(self, i: int) -> PlotRow: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[PlotRow]: ...
    def __getitem__(self, i: int | slice) -> PlotRow | Sequence[PlotRow]:
        if isinstance(i, slice):
            return plot_rows(self._table[i])
        return _row_of(self._table[i])


#: report event kinds -> the timeline marker they get (the timeline names them; nothing is
#: guessed from parts of a kind)
EVENT_ROLES: dict[str, Literal["load", "attach"]] = {
    "load": "load",  # an executable loaded onto the device (one per load)
    "loads": "load",  # the loads a long run aggregates into one event
    "attach": "attach",  # a device attached
}


def event_role(event: Event) -> Literal["load", "attach", None]:
    """The timeline marker an event gets: an executable load, a device attach, or none."""
    return EVENT_ROLES.get(event.kind)


@dataclass(frozen=True, slots=True)
class Lanes:
    """Which modules get a lane of their own, in order, and how many share the last one."""

    shown: tuple[str, ...]
    #: how many modules share the last lane
    hidden: int
    #: the modules that have a lane (those sharing the last one among them): their names
    #: are not kept (131,000 names were 23 MB held while the plots were drawn)
    others: Container[str] = field(default=(), repr=False, compare=False)
    #: the lane of each compilation the lanes were chosen from, in order
    rows: Sequence[int] = field(default=(), repr=False, compare=False)
    #: a shown module -> its lane
    _lane: dict[str, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        lane: dict[str, int] = {}
        for i, m in enumerate(self.shown):
            lane.setdefault(m, i)  # (a module's first lane, if two)
        object.__setattr__(self, "_lane", lane)

    def lane_of(self, module: str | None) -> int | None:
        if module is None:
            return None
        lane = self._lane.get(module)
        if lane is None and module in self.others:
            return len(self.shown)
        return lane


def choose_lanes(compilations: Sequence[Drawn], max_lanes: int = MAX_LANES) -> Lanes:
    """One lane per module in order of first compilation; beyond ``max_lanes`` keep the modules
    with the most recompilations after warm-up (then compile time) and group the rest."""
    return survey(compilations, max_lanes)[0]


Axis: TypeAlias = Literal["time", "line"]


def x_of(t: float | None, line: int, axis: Axis) -> float:
    """Where a compilation or an event of time ``t`` on log line ``line`` is on ``axis``."""
    return float(t) if axis == "time" and t is not None else float(line)


def bar_of(c: Drawn, axis: Axis) -> tuple[float, float]:
    """Where compilation ``c``'s bar begins on the timeline's ``axis``, and its width."""
    if axis == "time":
        return x_of(c.t, c.line, axis), max(c.duration_s or 0.0, 0.0)
    return float(c.line), float(max((c.end_line or c.line) - c.line, 0))


@dataclass(frozen=True, slots=True)
class Seen:
    """What the legend and the axis need to know of all the compilations."""

    caches: frozenset[str]
    late: bool  # some compilation came after warm-up
    timed: bool  # every compilation has a time
    #: where the first bar begins and the last ends on the axis (time when ``timed``, else
    #: line): the scale the bars are joined at is known before they are read
    first_x: float = math.inf
    end: float = -math.inf

    @property
    def axis(self) -> Axis:
        return "time" if self.timed else "line"


#: the timeline's lanes and what else it needs of the compilations (:func:`survey`)
Survey: TypeAlias = tuple[Lanes, Seen]


def survey(
    compilations: Sequence[Drawn],
    max_lanes: int,
    asked: Collection[str] | None = None,
    numbers: ModuleNumbers | None = None,
) -> Survey:
    """The lanes (:func:`choose_lanes`) and what else the timeline needs of the
    compilations, in one pass over them (a pass reads a long run's columns back from its
    file: the timeline made eight, 4 s for a 1 GB TensorFlow log).  ``asked``: the only
    modules whose lane will be asked for (:meth:`Lanes.lane_of`), if known: the lanes then
    keep which of them share the last lane, not the fingerprints of all (21 MB for the
    524,000 modules of a 4 GB log, held while the bars were drawn).  ``numbers``: the
    compilations' module numbers, if counted already (then ``asked`` is needed)."""
    # per module, by its place in the order of first compilation (its number): its count,
    # seconds and first compilation in arrays, its name a fingerprint; per compilation its
    # module's number, then its lane (three dictionaries of 131,000 modules and a full sort
    # of them were 50 MB at once; a dictionary of their names 21 MB)
    if numbers is not None and asked is None:
        raise ValueError("module numbers without the modules asked for")
    index = NameIndex() if numbers is None else None
    number = index.number if index is not None else None
    given = numbers.of if numbers is not None else ()
    wanted = set(asked) if asked is not None else set()
    present: set[str] = set()  # (those of `wanted` compiled)
    # (counts and rows in 4 bytes each while they fit: 8 MB less for 524,000 modules; with
    # the modules numbered, the arrays made to size at once: grown a module at a time, each
    # reallocation could hold the one before beside it, and no module's first compilation
    # is kept, only looked up for the modules shown)
    # (a long run's in temporary files, a chunk at a time: :func:`column.numbers`)
    wide = "Q" if len(compilations) >> 32 else "I"
    after = array(wide) if numbers is None else column.numbers(wide, numbers.count, at_random=True)
    secs = array("d") if numbers is None else column.numbers("d", numbers.count, at_random=True)
    first = array(wide) if numbers is None else None
    # (each compilation's module number, unless numbered already; then its lane, in a byte
    # while the lanes fit one: 3 MB less for the 1,047,000 compilations of an 8 GB log)
    made = array("I", bytes(4 * len(compilations))) if numbers is None else None
    caches: set[str] = set()
    timed = True
    # (each axis's first and last x: which one the timeline draws is known at the end)
    t_first = line_first = math.inf
    t_end = line_end = -math.inf
    ks = given if numbers is not None else repeat(0)  # (numbered here otherwise)
    for row, (c, k) in enumerate(zip(compilations, ks, strict=numbers is not None)):
        module = c.module
        if number is not None:
            k = number(module)
            if k == len(after):
                assert first is not None
                after.append(0)
                secs.append(0.0)
                first.append(row)
        if wanted and module in wanted:
            present.add(module)
        if made is not None:
            made[row] = k
        if not c.warmup:
            after[k] += 1
        secs[k] += c.duration_s or 0.0
        caches.add(c.cache)
        timed = timed and c.t is not None
        if timed:
            x, w = bar_of(c, "time")
            t_first = min(t_first, x)
            t_end = max(t_end, x + w)
        x, w = bar_of(c, "line")
        line_first = min(line_first, x)
        line_end = max(line_end, x + w)
    n = len(after)
    keep: Collection[int] = range(n)
    if n > max_lanes:
        # (the arrays read in order: a long run's a chunk at a time)
        most = heapq.nsmallest(
            max_lanes - 1, ((-a, -s, k) for k, (a, s) in enumerate(zip(after, secs, strict=True)))
        )
        keep = sorted(k for _, _, k in most)
    # (a module's first compilation is where its number first comes)
    if numbers is not None:
        firsts = numbers.firsts(keep)
    else:
        assert first is not None
        firsts = [first[k] for k in keep]
    shown = read_at((c.module for c in compilations), firsts)
    lane = {k: i for i, k in enumerate(keep)}
    shared = len(shown)  # (the last lane's)
    lanes = column.numbers("B" if shared < 256 else "I", bound=len(compilations))
    for k in made if made is not None else given:
        lanes.append(lane.get(k, shared))
    del made
    seen = Seen(
        frozenset(caches),
        any(after),
        timed,
        t_first if timed else line_first,
        t_end if timed else line_end,
    )
    others: Container[str]
    if asked is not None:
        others = frozenset(present.difference(shown))
    else:
        assert index is not None
        others = index
    return Lanes(tuple(shown), n - len(shown), others, lanes), seen


def marked_modules(events: Iterable[Event]) -> set[str]:
    """The modules of the events the timeline marks (loads, device attach): the only ones
    whose lane it asks for besides the compilations'."""
    return {e.module for e in events if e.module is not None and event_role(e) is not None}
