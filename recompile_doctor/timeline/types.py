"""What the timeline builder produces: frozen values the analyses work on."""

from __future__ import annotations

import heapq
from array import array
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Generic, NamedTuple, TypeVar, overload

from recompile_doctor.compiled_modules import own_abc_checks
from recompile_doctor.events import CacheLookup, FrameworkNote, RecompileReason, Span
from recompile_doctor.model import Compilation, Event
from recompile_doctor.slotted import remade_from_fields
from recompile_doctor.timeline.column import numbers
from recompile_doctor.timeline.packed import sequence_eq
from recompile_doctor.timeline.reason_facts import ReasonFacts
from recompile_doctor.timeline.table import CompilationTable


class Load(NamedTuple):
    """An executable loaded onto the device (the ``Loading executable`` phase).  (A named
    tuple: a switching run has one per few steps, kept packed and read back on every pass
    of an analysis, and a tuple is rebuilt fastest.)"""

    source: str
    line: int
    t: float | None
    duration_s: float | None
    module: str | None
    process: int
    warmup: bool
    reload: bool  # the device had another executable loaded in between
    text: str
    attributed: bool = True  # module known from the next Execute line (else a best guess)
    rank: str | None = None  # the MPI rank tag of the line, if any


@dataclass(slots=True)
class LoadTally:
    """What the analyses ask of the loads as a whole, counted as each load is added: a
    switching run has hundreds of thousands of loads, kept packed, and each pass over them
    unpacks them all."""

    seconds: float = 0.0  # every load's duration, summed in log order
    processes: set[int] = field(default_factory=set)  # the processes that loaded
    modules: set[str] = field(default_factory=set)  # the modules of the attributed loads
    reloads: int = 0  # re-loads after warm-up
    #: re-loads after warm-up that no Execute line attributes, per process
    unattributed: dict[int, int] = field(default_factory=dict)
    #: the re-loads after warm-up: their durations summed in log order (a load without one
    #: counts 0), and the modules they name
    reload_seconds: float = 0.0
    reload_modules: set[str] = field(default_factory=set)
    #: the loads came in the order of their (input, line): a finding's evidence, their
    #: first lines, is then found among the first loads (see analyses._common.cap)
    in_order: bool = True
    _last: tuple[str, int] | None = field(default=None, compare=False, repr=False)

    def add(self, ld: Load) -> None:
        if self.in_order:
            here = (ld.source, ld.line)
            last = self._last
            if last is not None and here < last:
                self.in_order = False
            self._last = here
        self.seconds += ld.duration_s or 0.0
        self.processes.add(ld.process)
        if ld.attributed and ld.module is not None:
            self.modules.add(ld.module)
        if ld.reload and not ld.warmup:
            self.reloads += 1
            d = ld.duration_s
            self.reload_seconds += d if d is not None else 0.0
            if ld.module:
                self.reload_modules.add(ld.module)
            if not ld.attributed:
                self.unattributed[ld.process] = self.unattributed.get(ld.process, 0) + 1

    @classmethod
    def of(cls, loads: Iterable[Load]) -> LoadTally:
        tally = cls()
        for ld in loads:
            tally.add(ld)
        return tally


#: a lookup's outcome -> its count's name in a store's counts (other outcomes are not counted)
_STORE_COUNTS: Final = {"hit": "hits", "miss": "misses", "write": "writes"}


class StoreTally:
    """Per cache store, how many lookups hit, missed and wrote, counted as each lookup is
    added: the timeline's lookups are kept packed, and a pass over them after the reading
    unpacks every one (13,600 of a 24 MB JAX log)."""

    __slots__ = ("_by_store",)

    def __init__(self) -> None:
        self._by_store: dict[str, dict[str, int]] = {}

    def add(self, lookup: CacheLookup) -> None:
        name = _STORE_COUNTS.get(lookup.outcome)
        if name is not None:
            counts = self._by_store.get(lookup.store)
            if counts is None:
                counts = self._by_store[lookup.store] = dict.fromkeys(_STORE_COUNTS.values(), 0)
            counts[name] += 1

    def by_store(self) -> dict[str, dict[str, int]]:
        """Store -> {"hits", "misses", "writes"} -> count (a copy), for the stores whose
        lookups hit, missed or wrote."""
        return {store: dict(counts) for store, counts in self._by_store.items()}

    def __eq__(self, other: object) -> bool:
        # (by its counts, as a timeline is compared: a copy equals it)
        if not isinstance(other, StoreTally):
            return NotImplemented
        return self._by_store == other._by_store

    __hash__ = None  # type: ignore[assignment]


T = TypeVar("T")

#: where an item of :class:`Attributed` belongs to no compilation
NO_COMPILATION: Final = -1


class Attributed(Sequence[tuple[T, "int | None"]], Generic[T]):
    """Items, each with the id of the compilation it belongs to (``None``: none), stored
    apart: ``items`` may be packed, and the ids change as compilations are found (a reason
    comes before the compilation it explains) without touching the packed items."""

    def __init__(self, items: Sequence[T], ids: Sequence[int]) -> None:
        self._items = items
        self._ids = ids

    def __reduce__(self) -> tuple[Any, ...]:
        # (a compiled class is copied by making one without arguments: this one needs them)
        return (Attributed, (self._items, self._ids))

    def __len__(self) -> int:
        return len(self._items)

    @property
    def items(self) -> Sequence[T]:
        """The items without their ids."""
        return self._items

    @property
    def ids(self) -> Sequence[int]:
        """The compilation id of each item (:data:`NO_COMPILATION`: none)."""
        return self._ids

    def __iter__(self) -> Iterator[tuple[T, int | None]]:
        for item, cid in zip(self._items, self._ids, strict=True):
            yield item, (None if cid == NO_COMPILATION else cid)

    @overload
    def __getitem__(self, i: int) -> tuple[T, int | None]: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[tuple[T, int | None]]: ...
    def __getitem__(self, i: int | slice) -> tuple[T, int | None] | Sequence[tuple[T, int | None]]:
        if isinstance(i, slice):
            return list(self)[i]
        cid = self._ids[i]
        return self._items[i], (None if cid == NO_COMPILATION else cid)

    def __eq__(self, other: object) -> bool:
        return sequence_eq(self, other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Attributed({len(self)} items)"


class At(Sequence[T]):
    """The items of a sequence at some of its places, each read when asked for: a view of
    some of the timeline's notes or reasons holds their places, not the items (a run of
    100,000 reasons or notes of one kind never holds them all, with their verbatim lines,
    at once).  Read in order, each packed chunk is unpacked once."""

    __slots__ = ("_at", "_items")

    def __init__(self, items: Sequence[T], at: Sequence[int]) -> None:
        self._items = items
        self._at = at

    def __reduce__(self) -> tuple[Any, ...]:
        # (a compiled class is copied by making one without arguments: this one needs them)
        return (At, (self._items, self._at))

    def __len__(self) -> int:
        return len(self._at)

    @overload
    def __getitem__(self, i: int) -> T: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[T]: ...
    def __getitem__(self, i: int | slice) -> T | Sequence[T]:
        if isinstance(i, slice):
            return tuple(self._items[j] for j in self._at[i])
        return self._items[self._at[i]]

    def __iter__(self) -> Iterator[T]:
        items = self._items
        for j in self._at:
            yield items[j]

    def __eq__(self, other: object) -> bool:
        return sequence_eq(self, other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({list(self._at)})"


class ReasonsAt(At[RecompileReason]):
    """The timeline's reasons (kept with the ids of their compilations) at some of their
    places: what a verdict, or the reasons of one rule, hold instead of the reasons."""

    __slots__ = ()

    def __init__(
        self, reasons: Sequence[tuple[RecompileReason, int | None]], at: Sequence[int]
    ) -> None:
        # (the builder's timeline keeps them apart from their ids: a sequence of pairs made
        # otherwise is read whole, once)
        items = reasons.items if isinstance(reasons, Attributed) else [r for r, _ in reasons]
        super().__init__(items, at)

    def __reduce__(self) -> tuple[Any, ...]:
        # (its reasons as the timeline keeps them: the ids are not read)
        return (ReasonsAt, (Attributed(self._items, ()), self._at))


class ReasonPlaces:
    """The places of each compilation's reasons, as two arrays of 4-byte numbers (the first
    place of each compilation, the next place after each reason) rather than a list per
    compilation: a run of 100,000 recompilations asks for them all at once."""

    __slots__ = ("_first", "_next")

    def __init__(self, ids: Sequence[int]) -> None:
        n = max(ids, default=-1) + 1
        first = numbers("i", n, fill=-1)
        after = numbers("i", len(ids), fill=-1)
        for i in range(len(ids) - 1, -1, -1):  # backwards: each list ends up in log order
            cid = ids[i]
            if cid != NO_COMPILATION:
                after[i] = first[cid]
                first[cid] = i
        self._first = first
        self._next = after

    def of(self, compilation_id: int) -> Iterator[int]:
        """The places of that compilation's reasons, in log order."""
        first = self._first
        i = first[compilation_id] if 0 <= compilation_id < len(first) else -1
        after = self._next
        while i != -1:
            yield i
            i = after[i]


class Switch(NamedTuple):
    """The device ran another executable than the step before (``Execute B`` after
    ``Execute A``): the stack must load B again unless both fit.  ``back``: B had run on
    this device before (a switch back, not a first run).  (A named tuple, as :class:`Load`.)"""

    source: str
    line: int
    t: float | None
    text: str
    process: int
    from_module: str
    to_module: str
    back: bool
    rank: str | None = None


@dataclass(frozen=True, slots=True)
class Timeline:
    """What the analyses work on."""

    #: as columns (:class:`CompilationTable`): reading one makes its object
    compilations: CompilationTable
    loads: Sequence[Load]
    events: Sequence[Event]  # in log order; long lists are read back from a spool
    processes: tuple[ProcessInfo, ...]
    comp_process: Sequence[int]  # process index of each compilation
    uncacheable: frozenset[int]  # ids of compilations that cannot be cached (custom ops)
    #: every cache lookup, with the id of the compilation it belongs to (None: none)
    lookups: Sequence[tuple[CacheLookup, int | None]] = ()
    notes: Sequence[FrameworkNote] = ()
    #: every reason a framework gave, with the id of the compilation it explains
    reasons: Sequence[tuple[RecompileReason, int | None]] = ()
    #: every change of the executing module on a device (from the ``Execute`` lines)
    switches: Sequence[Switch] = ()
    #: where the notes of each kind, and the reasons of each rule, are in ``notes`` and
    #: ``reasons`` (None: not indexed, :meth:`notes_of` and :meth:`reasons_of` look through
    #: them all): an analysis asking for a kind the run never logged reads nothing
    note_index: Mapping[str, Sequence[int]] | None = None
    reason_index: Mapping[str | None, Sequence[int]] | None = None
    #: the loads counted as they were added (None: :meth:`load_tally` passes over them)
    loads_tallied: LoadTally | None = None
    #: the lookups counted per store as they were added (None: :meth:`store_tally` passes
    #: over them)
    lookups_tallied: StoreTally | None = None
    #: what the analysis of recompilations reads of each reason, taken as they were added
    #: (None: :meth:`facts_of_reasons` reads the reasons)
    reason_facts: ReasonFacts | None = None

    def load_tally(self) -> LoadTally:
        """What the analyses ask of the loads as a whole (:class:`LoadTally`)."""
        if self.loads_tallied is not None:
            return self.loads_tallied
        return LoadTally.of(self.loads)

    def store_tally(self) -> StoreTally:
        """The lookups' outcomes per cache store (:class:`StoreTally`)."""
        if self.lookups_tallied is not None:
            return self.lookups_tallied
        tally = StoreTally()
        for lookup, _ in self.lookups:
            tally.add(lookup)
        return tally

    def notes_of(self, *kinds: str) -> Sequence[FrameworkNote]:
        """The notes of these kinds, in log order (read when asked for: see :class:`At`)."""
        if self.note_index is None:
            return [n for n in self.notes if n.note in kinds]
        index = self.note_index
        if len(kinds) == 1:
            return At(self.notes, index.get(kinds[0], ()))
        at = array("q", heapq.merge(*(index.get(k, ()) for k in kinds)))
        return At(self.notes, at)

    def reasons_of(self, rule: str) -> Sequence[RecompileReason]:
        """The reasons mapped to ``rule``, in log order (read when asked for: see
        :class:`At`)."""
        if self.reason_index is None:
            return [r for r, _ in self.reasons if r.rule == rule]
        return ReasonsAt(self.reasons, self.reason_index.get(rule, ()))

    def facts_of_reasons(self) -> ReasonFacts:
        """Each reason's rule, input, line, whether it names changes and the arguments it
        says grew (:class:`~recompile_doctor.timeline.reason_facts.ReasonFacts`), without
        reading the reasons where the builder kept them."""
        if self.reason_facts is not None:
            return self.reason_facts
        return ReasonFacts.of(r for r, _ in self.reasons)

    def reasons_by_compilation(self) -> ReasonPlaces:
        """Where the reasons attached to each compilation are in :attr:`reasons`, in log
        order: one pass over their ids, none over the reasons themselves (which may be
        packed: an analysis reads each one when it needs it, instead of holding them all)."""
        ids = self.reasons.ids if isinstance(self.reasons, Attributed) else None
        if ids is None:
            ids = array("q", (NO_COMPILATION if c is None else c for _, c in self.reasons))
        return ReasonPlaces(ids)

    def by_function(self) -> dict[str, list[Compilation]]:
        """The compilations of each function, in order, as objects (all of them made)."""
        comps = self.compilations
        return {key: [comps[i] for i in ids] for key, ids in self.ids_by_function().items()}

    def ids_by_function(self) -> dict[str, list[int]]:
        """The ids of each function's compilations, in order."""
        out: dict[str, list[int]] = {}
        for i, key in enumerate(self.compilations.function_keys()):
            out.setdefault(key, []).append(i)
        return out

    def __reduce__(self) -> tuple[Any, ...]:
        return remade_from_fields(self)  # (a copy in the compiled build: see there)


@dataclass(frozen=True, slots=True)
class ProcessInfo:
    """One process of the run (a new ``Poplar version`` line or a new log starts one)."""

    index: int
    source: str
    flags: str | None
    verbose: bool
    cache_activity: bool
    first_execute_line: int | None
    framework: str | None = None
    version: str | None = None
    cache_configured: bool = False
    config_span: Span | None = None  # the line that set the flags

    def __reduce__(self) -> tuple[Any, ...]:
        return remade_from_fields(self)  # (a copy in the compiled build: see there)


own_abc_checks(Attributed, At, ReasonsAt)  # (a compiled build's classes: see there)
