"""The timeline builder: events in, one at a time; a :class:`Timeline` out."""

from __future__ import annotations

import dataclasses
import sys
from array import array
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from operator import attrgetter
from typing import TYPE_CHECKING, Any, Final, NamedTuple, TypeAlias, TypeVar, overload

from recompile_doctor.bounded import Kept
from recompile_doctor.events import (
    EXECUTABLE_STORES,
    UNREAD_NOTES,
    CacheLookup,
    CompileActivity,
    CompileFinished,
    CompileKey,
    CompileStarted,
    ExecutableLoaded,
    Executed,
    FrameworkNote,
    ProcessConfig,
    ProcessStarted,
    RecompileReason,
    Span,
    TypedEvent,
)
from recompile_doctor.key_name import key_name
from recompile_doctor.microseconds import round6
from recompile_doctor.model import CacheOutcome, Event
from recompile_doctor.name_digest import held
from recompile_doctor.parsers._tuples import tuple_new
from recompile_doctor.slotted import replacer
from recompile_doctor.timeline import column
from recompile_doctor.timeline.blobs import Blobs
from recompile_doctor.timeline.column import Spilled, array_codec
from recompile_doctor.timeline.compile_ids import IdIndex
from recompile_doctor.timeline.names import elided_match
from recompile_doctor.timeline.packed import Packed
from recompile_doctor.timeline.reason_facts import ReasonFacts
from recompile_doctor.timeline.spool import EventSpool, ReportEvents
from recompile_doctor.timeline.table import (
    CACHE_CODES,
    CODE_OF,
    NO_FLOAT,
    CompilationTable,
    key_chars,
)
from recompile_doctor.timeline.types import (
    NO_COMPILATION,
    Attributed,
    Load,
    LoadTally,
    ProcessInfo,
    StoreTally,
    Switch,
    Timeline,
)

_Kept = TypeVar("_Kept", CacheLookup, RecompileReason, FrameworkNote)
#: per class of a kept event: a copy of one with its record and key replaced
_RECORD_AND_KEY: Final[dict[type, Callable[..., Any]]] = {
    cls: replacer(cls, ("record", "key")) for cls in (CacheLookup, RecompileReason, FrameworkNote)
}

#: a copy of a key with its three names replaced (the kept copy, its names interned:
#: ``dataclasses.replace`` ran interpreted for each new key, 4,077 of them in the parent's
#: reading of the 24 MB TensorFlow bench log)
_KEY_NAMES: Final = replacer(CompileKey, ("framework", "function", "module"))

_K = TypeVar("_K")


if TYPE_CHECKING:  # (array is not subscriptable at run time in Python 3.11)
    _Numbers: TypeAlias = array[int] | Spilled[int]


_POSITIONS: Final = array_codec("q")
#: ``tuple.__new__`` or its C twin (:func:`recompile_doctor.parsers._tuples.chosen_tuple_new`):
#: a named tuple made from its values
_new: Final = tuple_new


# the working flags of a compilation being assembled (_Open.flags)
_PROGRESS: Final = 1  # a progress bar (Compiling module ...) is part of it
_SYNTHETIC: Final = 2  # opened without a Begin line
_UNCACHEABLE: Final = 4  # custom ops without is_hashable: never cached
_CACHE_VISIBLE: Final = 8  # the log would show a cache lookup for it
_ELAPSED: Final = 16  # the log gave its duration (else it runs to its last line's time)


#: imported names the builder asks about for every event, as constants (compiled code looks
#: an imported name up in the module's dictionary at each use)
_EXECUTED: Final = Executed
_CACHE_LOOKUP: Final = CacheLookup
_EXECUTABLE_STORES: Final = EXECUTABLE_STORES


class _Open:
    """What the builder knows of the compilations while it reads, beside the table: the
    flags that settle the cache outcome, and the compile phases seen.  Until the table is
    finished, its ``duration_s`` column holds the duration the log gave (flag
    :data:`_ELAPSED`), else the time of the compilation's last line."""

    __slots__ = ("flags", "phases", "table")

    def __init__(self) -> None:
        self.table = CompilationTable()
        self.flags = bytearray()
        #: the compile phases seen, of the few compilations that have any
        self.phases: dict[int, frozenset[str]] = {}


class _Pending:
    """A compilation being assembled: a handle on its row of the table (the builder keeps
    one for each compilation a later line can still change, not one for each of a run)."""

    __slots__ = ("id", "o")

    def __init__(self, o: _Open, cid: int) -> None:
        self.id = cid
        self.o = o

    @property
    def module(self) -> str:
        return self.o.table.module_of(self.id)

    @module.setter
    def module(self, v: str) -> None:
        self.o.table.set_module(self.id, v)

    @property
    def key(self) -> CompileKey | None:
        return self.o.table.key[self.id]

    @key.setter
    def key(self, v: CompileKey) -> None:
        self.o.table.key[self.id] = v

    @property
    def cache(self) -> CacheOutcome | None:
        return CACHE_CODES[self.o.table.cache[self.id]]

    @cache.setter
    def cache(self, v: CacheOutcome) -> None:
        self.o.table.cache[self.id] = CODE_OF[v]

    @property
    def cache_file(self) -> str | None:
        return self.o.table.cache_file[self.id]

    @cache_file.setter
    def cache_file(self, v: str | None) -> None:
        self.o.table.cache_file[self.id] = v

    def starts_at(self, t: float) -> None:
        """The compilation began at ``t`` (before the line that opened it)."""
        self.o.table.t[self.id] = t

    def touch(self, t: float) -> None:
        """A line of this compilation at time ``t``: it lasts at least until then (unless
        the log gave its duration)."""
        o = self.o
        if not o.flags[self.id] & _ELAPSED:
            ends = o.table.duration_s
            last = ends[self.id]
            if last != last or t > last:  # (NaN: no time yet)
                ends[self.id] = t

    def set_elapsed(self, seconds: float) -> None:
        """The log gave how long the compilation took."""
        self.o.table.duration_s[self.id] = seconds
        self.mark(_ELAPSED)

    def ends_at(self, line: int) -> None:
        self.o.table.end_line[self.id] = line

    @property
    def phases(self) -> frozenset[str]:
        return self.o.phases.get(self.id, frozenset())

    @phases.setter
    def phases(self, v: frozenset[str]) -> None:
        self.o.phases[self.id] = v

    def mark(self, flag: int) -> None:
        """Set one of the working flags (``_PROGRESS``, ``_UNCACHEABLE``...)."""
        self.o.flags[self.id] |= flag

    def marked(self, flag: int) -> bool:
        return bool(self.o.flags[self.id] & flag)


class _PendingLoad(NamedTuple):
    """A load whose module is known only when the next ``Execute`` line comes.  (A named
    tuple: a switching run has one per few steps, and a tuple is made fastest.)"""

    ev: ExecutableLoaded
    duration_s: float | None
    switch_back: bool
    before_first_step: bool


@dataclass(slots=True, repr=False, eq=False)  # working state: never compared or shown
class _Process:
    """One process of the run, and what is under way in it.  Lines of several processes can
    interleave in one log (MPI ranks tagged ``[1,0]<stderr>:``): each rank is its own stream
    of processes."""

    index: int
    source: str
    #: module -> its last compilation, for the last OPEN_KEPT modules compiled, whose names
    #: hold OPEN_CHARS characters at most (a later line names one of the recent ones; a run
    #: of 100,000 modules does not keep them all, nor 1,024 names of 20,000 characters)
    open: dict[str, _Pending] = field(default_factory=dict)
    open_chars: int = 0  # (of the names in open)
    current: _Pending | None = None  # the compilation later lines belong to
    last: _Pending | None = None  # the last compilation opened
    unattributed: list[_PendingLoad] = field(default_factory=list)  # loads before Execute
    load_start: float | None = None
    first_execute_line: int | None = None
    first_load_line: int | None = None
    loaded: set[str] = field(default_factory=set)
    last_loaded: str | None = None
    compiled_since_load: bool = True
    loads_seen: int = 0
    flags: str | None = None
    cache_configured: bool = False
    verbose: bool = False  # Begin XLA compilation lines are printed (VLOG 1 on)
    cache_activity: bool = False
    framework: str | None = None
    version: str | None = None
    config_span: Span | None = None
    load_counts: dict[str | None, int] = field(default_factory=dict)
    last_executed: str | None = None
    executed: set[str] = field(default_factory=set)


class TimelineBuilder:
    """Fold typed events, one at a time, into a :class:`Timeline`."""

    def __init__(self, warmup: int | None = None) -> None:
        self.warmup = warmup
        self._open = _Open()  # the compilations, as columns
        self._loads: Packed[Load] = Packed(rows=Load)  # one per executable load: packed
        self._tally = LoadTally()  # what the analyses ask of them all
        self._store_tally = StoreTally()  # the lookups' outcomes per store
        self._load_events = _LoadEvents()  # what the report keeps of them
        self._events = EventSpool()
        self._procs: list[_Process] = []
        self._streams: dict[tuple[str, Any], _Process] = {}  # (source, rank tag) -> process
        #: the stream of the event fed last and its process (events come in runs of one
        #: stream: a look-up of the pair, 500 instructions, for each of them otherwise)
        self._last_stream: tuple[str | None, Any, _Process | None] = (None, None, None)
        self._executed_in_proc: set[tuple[int, str]] = set()
        #: with the compilation id; packed, as there can be one or more per compilation
        #: (their chunks bounded by the characters of their lines, and a reason's words
        #: and values, too: a log's lines can be long)
        self._lookups: Packed[tuple[CacheLookup, int | None]] = Packed()
        self._notes: Packed[FrameworkNote] = Packed()
        self._switches: Packed[Switch] = Packed(rows=Switch)
        self._reasons: Packed[RecompileReason] = Packed()
        #: the characters of the line of the event taken last (what a kept one holds)
        self._line_chars = 0
        #: the compilation of each reason (NO_COMPILATION)
        self._reason_ids: _Numbers = array("q")
        #: what the analysis of recompilations reads of each reason (taken as it comes)
        self._reason_facts = ReasonFacts()
        #: where each kind of note, and each rule of reason, is (Timeline.note_index)
        self._note_index: dict[str, _Numbers] = {}
        self._reason_index: dict[str | None, _Numbers] = {}
        #: the file of those numbers, once there are column.SPILL_AFTER reasons or notes
        self._numbers: Blobs | None = None
        self._waiting_reasons: dict[tuple[int, str], list[int]] = {}  # (proc, fn) -> indexes
        #: (framework, rank) -> compile id -> the compilations given it (their ids; a handle
        #: on a row is made when a line names it again): several when several processes
        #: gave it (each process numbers its own): see _same
        self._by_compile_id: dict[tuple[str, str | None], IdIndex] = {}
        #: each input's format, as the reader told it (tell_format)
        self._formats: dict[str, str] = {}
        #: one copy of each recent distinct compilation key (a function compiled 100,000
        #: times has one key, not 100,000 equal ones), in a bounded table (:class:`Kept`:
        #: then forgotten at once, like OneCopy's strings: keys that hold a compile id are
        #: all different), by their fields (:data:`_key_fields`), looked up in :attr:`_keys`
        self._kept_keys: Kept[tuple[object, ...], CompileKey] = Kept()
        self._keys = self._kept_keys.table
        #: the key :meth:`_key` was last asked for, and what it gave (the events of one
        #: compilation mostly carry the very same key object: a decoder's table of keys and
        #: the handover's give one object for one key; JAX 84 % of the asks, PyTorch/XLA
        #: 55 %): no fields read, no tuple hashed
        self._last_key: CompileKey | None = None
        self._last_kept: CompileKey | None = None
        #: one copy of each recent distinct line and cache entry a compilation keeps: a run
        #: that recompiles the same signature again and again repeats the very same line
        self._one_copy = OneCopy()

    def close(self) -> None:
        """Drop the events spooled so far, the packed chunks and the spilled columns (their
        temporary files) when the run is abandoned; after :meth:`finish` the timeline and
        the report own them."""
        self._events.close()
        for packed in (self._lookups, self._notes, self._switches, self._reasons):
            packed.close()
        self._open.table.close()
        if self._numbers is not None:
            self._numbers.close()
        self._drop_compile_ids()

    def _drop_compile_ids(self) -> None:
        """Let the compile ids go (their file too, when there is one)."""
        for ids in self._by_compile_id.values():
            ids.close()
        self._by_compile_id.clear()

    # -- processes -----------------------------------------------------------------------
    def _new_process(self, sp: Span) -> _Process:
        stream = (sp.source, sp.rank)
        old = self._streams.get(stream)
        if old is not None:
            self._flush_loads(old, None)
        p = _Process(len(self._procs), sp.source)
        self._procs.append(p)
        self._streams[stream] = p
        self._last_stream = (None, None, None)
        return p

    def _process(self, sp: Span) -> _Process:
        p = self._streams.get((sp.source, sp.rank))
        return p if p is not None else self._new_process(sp)

    # -- compilations --------------------------------------------------------------------
    def _open_compilation(
        self, ev: TypedEvent, key: CompileKey, synthetic: bool, proc: _Process | None = None
    ) -> _Pending:
        sp = ev.span
        proc = proc if proc is not None else self._process(sp)
        key = self._key(key)
        name = key_name(key)
        o = self._open
        cid = o.table.append(
            module=name,
            hash=key.graph_hash if not synthetic else None,
            source=proc.source if proc.source == sp.source else sp.source,
            line=sp.line,
            t=sp.t,
            ordinal=ev.ordinal if isinstance(ev, CompileStarted) and not synthetic else None,
            text=self._one_copy(sp.text),
            key=key,
            rank=_rank(sp.rank),
            process=proc.index,
        )
        if sp.t is not None:
            o.table.duration_s[cid] = sp.t  # (its last line's time, so far)
        o.flags.append(_SYNTHETIC if synthetic else 0)
        c = _Pending(o, cid)
        opened = proc.open
        if opened.pop(name, None) is None:  # (the most recent last)
            proc.open_chars += len(name)
        opened[name] = c
        while len(opened) > OPEN_KEPT or (proc.open_chars > OPEN_CHARS and len(opened) > 1):
            first = next(iter(opened))
            del opened[first]
            proc.open_chars -= len(first)
        proc.current = proc.last = c
        proc.compiled_since_load = True
        if key.compile_id is not None:
            ids = self._by_compile_id.get((key.framework, sp.rank))
            if ids is None:
                ids = self._by_compile_id[(key.framework, sp.rank)] = IdIndex(self._id_of)
            ids.add(key.compile_id, cid)
        self._attach_waiting(proc, key, c)
        return c

    def tell_format(self, source: str, fmt: str) -> None:
        """The events of input ``source`` are of log format ``fmt`` (a structured trace and
        a text log of one run name the same compilations by the same ids; two logs of one
        format are two runs)."""
        self._formats[source] = fmt

    def _same(self, compile_id: tuple[str, str | None, str], proc: _Process) -> _Pending | None:
        """The compilation the framework's compile id names, if one was opened: by this
        process, or by a process of another input of another format (the trace beside a
        text log); the last opened, if several.  A process numbers its compilations from
        the start: another run's, in this log or another log of its format, are others."""
        framework, rank, ident = compile_id
        ids = self._by_compile_id.get((framework, rank))
        if ids is None:
            return None
        for cid in ids.rows(ident):
            other = self._procs[self._open.table.process[cid]]
            if other is proc or (
                other.source != proc.source
                and self._formats.get(other.source) != self._formats.get(proc.source)
            ):
                return _Pending(self._open, cid)
        return None

    def _id_of(self, cid: int) -> str | None:
        """Compilation ``cid``'s compile id (its key's)."""
        key = self._open.table.key[cid]
        return key.compile_id if key is not None else None

    def _key(self, key: CompileKey) -> CompileKey:
        """The one kept copy of ``key`` (its names interned)."""
        last = self._last_kept
        if key is self._last_key and last is not None:
            return last
        keys = self._keys
        fields = _key_fields(key)
        got = keys.get(fields)
        if got is None:
            got = _KEY_NAMES(
                key,
                sys.intern(key.framework),
                None if key.function is None else sys.intern(key.function),
                None if key.module is None else sys.intern(key.module),
            )
            self._kept_keys.put(fields, got)
        self._last_key = key
        self._last_kept = got
        return got

    def _kept(self, ev: _Kept) -> _Kept:
        """``ev`` as the timeline keeps it: without its report record (already in the
        report's events), and with the one kept copy of its key.  A lookup keeps the record
        of a cache file's hash (read by the cache listing)."""
        record = ev.record
        if record is not None and not (
            isinstance(ev, _CACHE_LOOKUP) and "file_hash" in record.detail
        ):
            record = None
        key = ev.key
        kept_key = self._key(key) if key is not None else None
        if record is ev.record and kept_key is key:
            return ev
        copy: Callable[[_Kept, Event | None, CompileKey | None], _Kept] = _RECORD_AND_KEY[type(ev)]
        return copy(ev, record, kept_key)

    def _add_position(self, index: dict[_K, _Numbers], key: _K, at: int) -> None:
        """Add ``at`` to the positions of ``key``'s items (made on first use; in a file
        once there are column.SPILL_AFTER reasons or notes)."""
        if at >= column.SPILL_AFTER and self._numbers is None:
            self._spill_numbers()
        got = index.get(key)
        if got is None:
            blobs = self._numbers
            got = index[key] = array("q") if blobs is None else Spilled(_POSITIONS, blobs)
        got.append(at)

    def _spill_numbers(self) -> None:
        """Keep the reasons' compilations and the places of each kind of note and reason
        in a temporary file from now on (a number each: see :mod:`.column`)."""
        blobs = self._numbers = Blobs("recompile-doctor-numbers-")
        self._reason_ids = Spilled.of(self._reason_ids, _POSITIONS, blobs)
        self._reason_facts.spill(blobs)
        for k, at in self._note_index.items():
            self._note_index[k] = Spilled.of(at, _POSITIONS, blobs)
        for rule, at in self._reason_index.items():
            self._reason_index[rule] = Spilled.of(at, _POSITIONS, blobs)

    def _attach_waiting(self, proc: _Process, key: CompileKey, c: _Pending) -> None:
        waiting = self._waiting_reasons.pop((proc.index, key.function or key_name(key)), None)
        for i in waiting or ():
            self._reason_ids[i] = c.id

    def _touch(self, c: _Pending | None, sp: Span) -> None:
        """``sp`` is part of compilation ``c``: it lasts at least until then."""
        if c is not None and sp.t is not None:
            c.touch(sp.t)

    def feed_run(self, events: list[TypedEvent]) -> None:
        """Take the next events, in order (:meth:`feed` of each: the driver gives a run at
        a time)."""
        for ev in events:
            self.feed(ev)

    def feed(self, ev: TypedEvent) -> None:
        """Take the next event (events of one source must come in line order)."""
        sp = ev.span
        # (the span's fields by their places, source 0, text 2, rank 4: compiled code reads a
        # named tuple's field by name through the generic attribute look-up, 165
        # instructions, and by place in a few)
        source, rank, proc = self._last_stream
        if proc is None or sp[0] is not source or sp[4] is not rank:
            proc = self._streams.get((sp[0], sp[4])) or self._new_process(sp)
            self._last_stream = (sp[0], sp[4], proc)
        self._line_chars = len(sp[2])
        # (by its class: the events' classes have no subclasses; a chain of isinstance asked
        # an event of the last class in it ten times)
        _ON_CLASS[type(ev)](self, ev, proc)
        rec = ev.record
        if rec is not None and ev.keep and type(ev) is not _EXECUTED:
            self._events.append(rec)  # (a step's: kept once per process and module)

    def _on_activity(self, ev: CompileActivity, proc: _Process) -> None:
        if ev.uncacheable and proc.current is not None:
            proc.current.mark(_UNCACHEABLE)
        self._touch(proc.current, ev.span)

    def _on_process_started(self, ev: ProcessStarted, proc: _Process) -> None:
        if ev.new and (proc.flags is not None or proc.last is not None):
            proc = self._new_process(ev.span)
        proc.framework = ev.framework
        proc.version = ev.version

    def _on_process_config(self, ev: ProcessConfig, proc: _Process) -> None:
        proc.flags = ev.flags
        proc.cache_configured = ev.cache_configured
        proc.config_span = ev.span

    def _on_note(self, ev: FrameworkNote, proc: _Process) -> None:
        if ev.note not in UNREAD_NOTES:
            self._add_position(self._note_index, ev.note, len(self._notes))
            kept = self._kept(ev)
            self._notes.append(kept, self._line_chars + key_chars(kept.key))

    def _on_compile_started(self, ev: CompileStarted, proc: _Process) -> None:
        c = proc.current
        if ev.phase is not None:
            # a compile phase: part of the compilation under way unless that one already
            # had this phase or was served from a cache
            if c is None or c.cache == "hit" or ev.phase in c.phases:
                c = self._open_compilation(ev, ev.key, synthetic=True, proc=proc)
            c.phases = c.phases | {ev.phase}
            self._touch(c, ev.span)
            return
        if ev.joins_named:
            name = key_name(ev.key)
            if (
                c is not None
                and not c.marked(_PROGRESS)
                and c.cache != "hit"
                and elided_match(name, c.module)
            ):
                c.mark(_PROGRESS)
                return
            self._open_compilation(ev, ev.key, synthetic=True, proc=proc).mark(_PROGRESS)
            return
        if ev.cache_visible:
            proc.verbose = True
        if ev.key.compile_id is not None:
            same = self._same((ev.key.framework, ev.span.rank, ev.key.compile_id), proc)
            if same is not None:
                # the same compilation, seen again in another input of the run
                if same.key is not None and same.key.function is None and ev.key.function:
                    same.key = self._key(ev.key)
                    same.module = key_name(ev.key)
                proc.current = same
                self._attach_waiting(proc, ev.key, same)
                return
        c = self._open_compilation(ev, ev.key, synthetic=ev.synthetic, proc=proc)
        if ev.cache_visible:
            c.mark(_CACHE_VISIBLE)
        if ev.duration_s is not None:
            c.set_elapsed(ev.duration_s)
            if ev.span.t is not None:
                c.starts_at(round6(ev.span.t - ev.duration_s))

    def _on_compile_finished(self, ev: CompileFinished, proc: _Process) -> None:
        if ev.key is not None:
            c = proc.open.get(key_name(ev.key)) or proc.current
            if c is not None:
                c.ends_at(ev.span.line)
        else:
            c = proc.current
        if c is not None:
            if ev.duration_s is not None:
                c.set_elapsed(ev.duration_s)
            self._touch(c, ev.span)

    def _on_cache(self, ev: CacheLookup, proc: _Process) -> None:
        proc.cache_activity = True
        c: _Pending | None = None
        same = (
            self._same((ev.key.framework, ev.span.rank, ev.key.compile_id), proc)
            if ev.key is not None and ev.key.compile_id is not None
            else None
        )
        if same is not None:
            # one compilation can look up several graphs (torch: forward and backward)
            if (
                ev.outcome in ("hit", "miss")
                and ev.store in _EXECUTABLE_STORES
                and (same.cache is None or (same.cache == "hit" and ev.outcome == "miss"))
            ):
                same.cache = ev.outcome
            self._touch(same, ev.span)
            self._add_lookup(ev, same.id)
            return
        if ev.outcome == "hit" and ev.store in _EXECUTABLE_STORES:
            name = key_name(ev.key) if ev.key is not None else "?"
            c = proc.open.get(name)
            if c is None or c.cache is not None:
                c = self._open_compilation(ev, ev.key or CompileKey("?", None), True, proc)
            c.cache = "hit"
            c.cache_file = self._one_copy(ev.entry)
            self._touch(c, ev.span)
        elif ev.outcome == "miss" and ev.store in _EXECUTABLE_STORES:
            c = proc.current
            if c is None or c.cache is not None:
                c = self._open_compilation(ev, ev.key or CompileKey("?", None), True, proc)
            c.cache = "miss"
            c.cache_file = self._one_copy(ev.entry)
            self._touch(c, ev.span)
        elif ev.outcome == "write":
            if ev.entry is not None:
                c = next((p for p in proc.open.values() if p.cache_file == ev.entry), proc.current)
            elif ev.key is not None and ev.key.module is not None:
                c = proc.open.get(ev.key.module)  # announced before its compilation opens
            else:
                c = proc.current
            self._touch(c, ev.span)
        self._add_lookup(ev, c.id if c is not None else None)

    def _add_lookup(self, ev: CacheLookup, cid: int | None) -> None:
        kept = self._kept(ev)
        self._lookups.append((kept, cid), self._line_chars + key_chars(kept.key))
        self._store_tally.add(ev)

    def _on_loaded(self, ev: ExecutableLoaded, proc: _Process) -> None:
        proc.unattributed.append(
            _PendingLoad(
                ev,
                ev.duration_s,
                # a load with no compilation since the previous load is a switch back
                switch_back=not proc.compiled_since_load and proc.loads_seen > 0,
                before_first_step=proc.first_execute_line is None,
            )
        )
        proc.loads_seen += 1
        proc.compiled_since_load = False

    def _on_executed(self, ev: Executed, proc: _Process) -> None:
        module = sys.intern(ev.module)  # one copy for every step, switch and load of it
        if proc.last_executed is not None and proc.last_executed != module:
            sp = ev.span
            self._switches.append(
                Switch(
                    sp.source,
                    sp.line,
                    sp.t,
                    sp.text,
                    proc.index,
                    proc.last_executed,
                    module,
                    module in proc.executed,
                    sp.rank,
                )
            )
        proc.last_executed = module
        proc.executed.add(module)
        if proc.first_execute_line is None:
            proc.first_execute_line = ev.span.line
        self._flush_loads(proc, module)
        proc.current = None
        key = (proc.index, module)
        if key not in self._executed_in_proc:
            self._executed_in_proc.add(key)
            if ev.record is not None and ev.keep:
                self._events.append(ev.record)

    def _on_reason(self, ev: RecompileReason, proc: _Process) -> None:
        """A reason belongs to the compilation of its function that starts next in the
        process, or to the one under way when the framework names its compile id."""
        index = len(self._reasons)
        self._add_position(self._reason_index, ev.rule, index)
        self._reason_facts.append(ev)
        c = proc.current
        if ev.key.compile_id is not None:
            same = self._same((ev.key.framework, ev.span.rank, ev.key.compile_id), proc)
            if same is not None:
                c = same
        if (
            c is not None
            and ev.key.compile_id is not None
            and c.key is not None
            and c.key.compile_id == ev.key.compile_id
        ):
            self._reasons.append(self._kept(ev), _reason_chars(ev))
            self._reason_ids.append(c.id)
            return
        self._reasons.append(self._kept(ev), _reason_chars(ev))
        self._reason_ids.append(NO_COMPILATION)
        fn = ev.key.function or key_name(ev.key)
        self._waiting_reasons.setdefault((proc.index, fn), []).append(index)

    # -- loads ---------------------------------------------------------------------------
    def _flush_loads(self, proc: _Process, module: str | None) -> None:
        """Attribute the loads seen since the last Execute line to ``module`` (the module
        that executed next), or, without one, to the last compilation of the process."""
        for item in proc.unattributed:
            ev = item.ev
            m = module
            attributed = m is not None
            if m is None:
                m = proc.last.module if proc.last is not None else None
            # the stack loads an engine only when another one is on the device
            reload = (
                (m in proc.loaded and proc.last_loaded != m) if attributed else item.switch_back
            )
            if self.warmup is not None:
                # one warm-up policy: the first N loads of a module, as for compilations
                n = proc.load_counts.get(m, 0)
                proc.load_counts[m] = n + 1
                warmup = n < self.warmup
            else:
                warmup = not reload and (
                    item.before_first_step or (m is not None and m not in proc.loaded)
                )
            sp = ev.span
            if proc.first_load_line is None:
                proc.first_load_line = sp.line
            if m is not None:
                proc.loaded.add(m)
            proc.last_loaded = m
            # (``tuple.__new__``: a third of the time of the named tuple's ``__new__``)
            ld: Load = _new(
                Load,
                (
                    sp.source,
                    sp.line,
                    sp.t,
                    item.duration_s,
                    m,
                    proc.index,
                    warmup,
                    reload,
                    sp.text,
                    attributed,
                    sp.rank,
                ),
            )
            self._loads.append(ld)
            self._tally.add(ld)
            self._load_events.add(ld)
        proc.unattributed.clear()

    # -- result --------------------------------------------------------------------------
    def finish(self) -> Timeline:
        for p in self._procs:
            self._flush_loads(p, None)
        procs = tuple(
            ProcessInfo(
                p.index,
                p.source,
                p.flags,
                p.verbose,
                p.cache_activity,
                p.first_execute_line,
                framework=p.framework,
                version=p.version,
                cache_configured=p.cache_configured,
                config_span=p.config_span,
            )
            for p in self._procs
        )
        flags = self._open.flags
        # (a list, not a generator: mypyc cannot compile one over a bytearray)
        uncacheable = frozenset([i for i in range(len(flags)) if flags[i] & _UNCACHEABLE])
        self._drop_compile_ids()
        self._kept_keys.clear()
        self._last_key = self._last_kept = None
        for p in self._procs:
            p.open.clear()
            p.open_chars = 0
        comps = self._finish_compilations()
        loads = self._loads
        load_events = self._load_events.events()
        order: dict[str, int] = {}
        for p in self._procs:
            order.setdefault(p.source, len(order))
        events = ReportEvents(self._events, load_events, order)
        return Timeline(
            compilations=comps,
            loads=loads,
            events=events,
            processes=procs,
            comp_process=comps.process,
            uncacheable=uncacheable,
            lookups=self._lookups,
            notes=self._notes,
            reasons=Attributed(self._reasons, self._reason_ids),
            switches=self._switches,
            note_index=self._note_index,
            reason_index=self._reason_index,
            loads_tallied=self._tally,
            lookups_tallied=self._store_tally,
            reason_facts=self._reason_facts,
        )

    def _finish_compilations(self) -> CompilationTable:
        """The compilations, with their cache outcome, warm-up and duration settled."""
        o = self._open
        table = o.table
        # per process, per function: the compilations seen so far (a long name by its
        # digest: held; a table per process, not a pair made and hashed per compilation)
        seen: list[dict[str | int, int]] = [{} for _ in self._procs]
        flags = o.flags
        cache = table.cache
        unknown_code = CODE_OF["unknown"]
        disabled_code = CODE_OF["disabled"]
        starts = table.t
        durations = table.duration_s
        warmups = table.warmup
        warmup = self.warmup
        for i, (fn, process) in enumerate(zip(table.function_keys(), table.process, strict=True)):
            proc = self._procs[process]
            f = flags[i]
            if cache[i] == 0:
                if f & _UNCACHEABLE:
                    cache[i] = disabled_code  # the cache is on, but this cannot be cached
                elif (
                    f & _CACHE_VISIBLE
                    and not f & _SYNTHETIC
                    and not proc.cache_activity
                    and not proc.cache_configured
                ):
                    cache[i] = disabled_code
                else:
                    cache[i] = unknown_code
            counts = seen[process]
            h = held(fn)
            n = counts.get(h, 0)
            if warmup is not None:
                counts[h] = n + 1
                warm = n < warmup
            else:
                if n == 0:  # (only whether one came before counts here)
                    counts[h] = 1
                # the first executed step: an Execute line, else the first executable load
                first_step = proc.first_execute_line or proc.first_load_line
                warm = n == 0 or (first_step is not None and table.line[i] < first_step)
            if warm:  # (a compilation is not warm-up until said: a column of zeros)
                warmups[i] = 1
            if not f & _ELAPSED:
                t, t_last = starts[i], durations[i]
                durations[i] = round6(t_last - t) if t == t and t_last == t_last else NO_FLOAT
        self._open = _Open()
        return table


#: modules of a process whose last compilation a later line can still name (_Process.open),
#: and the characters their names may hold (the most recent one is kept whatever its length)
OPEN_KEPT: Final = 1024
OPEN_CHARS: Final = 1 << 20
#: a compilation key's fields, in a tuple: the kept keys are looked up by it (compiled,
#: making and hashing it takes half the time of the key's own ``__hash__`` and ``__eq__``,
#: which ``dataclasses`` writes and which run interpreted)
_key_fields: Final = attrgetter(*(f.name for f in dataclasses.fields(CompileKey)))


#: what :meth:`TimelineBuilder.feed` does with an event of each class
_ON_CLASS: Final[dict[type, Callable[[TimelineBuilder, Any, _Process], None]]] = {
    Executed: TimelineBuilder._on_executed,
    ExecutableLoaded: TimelineBuilder._on_loaded,
    CompileStarted: TimelineBuilder._on_compile_started,
    CompileFinished: TimelineBuilder._on_compile_finished,
    CompileActivity: TimelineBuilder._on_activity,
    CacheLookup: TimelineBuilder._on_cache,
    ProcessStarted: TimelineBuilder._on_process_started,
    ProcessConfig: TimelineBuilder._on_process_config,
    RecompileReason: TimelineBuilder._on_reason,
    FrameworkNote: TimelineBuilder._on_note,
}


def _reason_chars(ev: RecompileReason) -> int:
    """The characters a kept reason holds of its own: its line's, its words' (a JAX
    explanation's every line; what changed is read from them, and as long) and its key's
    names."""
    return len(ev.span.text) + len(ev.reason) + key_chars(ev.key)


class OneCopy:
    """One copy of each distinct string among the recent ones: equal strings made from
    different lines are different objects, and 100,000 compilations of a few signatures
    would otherwise hold 100,000 copies of a few lines.  They are remembered in a bounded
    table (:class:`~recompile_doctor.bounded.Kept`: forgotten at once when it is full, none
    longer than its longest key), so a run whose lines are all different pays a bounded
    table, not one entry per compilation (4,096 lines of 8,000 characters were 32 MB, of a
    MiB each, the longest line read, 4 GB)."""

    __slots__ = ("_kept", "_seen")

    def __init__(self) -> None:
        self._kept: Kept[str, str] = Kept()
        self._seen = self._kept.table

    @overload
    def __call__(self, s: str) -> str: ...
    @overload
    def __call__(self, s: None) -> None: ...
    def __call__(self, s: str | None) -> str | None:
        if s is None:
            return None
        got = self._seen.get(s)
        if got is None:
            got = self._kept.put(s, s)
        return got


def _rank(tag: str | None) -> int | None:
    """The rank of a stream tag (``"1,0"`` from MPI, ``"3"`` from torchrun), if numeric."""
    if tag is None:
        return None
    head = tag.split(",")[0].strip()
    return int(head) if head.isdecimal() and len(head) < 7 else None


#: a report keeps this many executable loads one by one (the first and last halves); the
#: loads between are one aggregate event, so memory does not grow with a log's length
MAX_LOAD_EVENTS = 2000


class _LoadEvents:
    """The report's load events, gathered as the loads are added: the first and the last
    :data:`MAX_LOAD_EVENTS` // 2 one by one, the loads between as one aggregate, each load
    joining it when it is no longer among the last ones (the loads are kept packed: a pass
    over them at the end would unpack them all)."""

    def __init__(self) -> None:
        self.half = MAX_LOAD_EVENTS // 2
        self.first: list[Load] = []
        self.recent: deque[Load] = deque()
        self.middle = 0
        self.per_module: dict[str, int] = {}
        self.seconds = 0.0  # summed in log order
        self.after_warmup = 0
        self.reloads = 0
        self.first_middle: Load | None = None
        self.last_middle: Load | None = None

    def add(self, ld: Load) -> None:
        if len(self.first) < self.half:
            self.first.append(ld)
            return
        recent = self.recent
        recent.append(ld)
        if len(recent) <= self.half:
            return
        m = recent.popleft()
        self.middle += 1
        key = m.module or "?"
        self.per_module[key] = self.per_module.get(key, 0) + 1
        self.seconds += m.duration_s or 0.0
        self.after_warmup += not m.warmup
        self.reloads += m.reload
        if self.first_middle is None:
            self.first_middle = m
        self.last_middle = m

    def events(self) -> tuple[Event, ...]:
        first, last = self.first_middle, self.last_middle
        if first is None or last is None:  # no more than MAX_LOAD_EVENTS
            return tuple(_load_event(ld) for ld in (*self.first, *self.recent))
        if len(self.first) + self.middle + len(self.recent) <= MAX_LOAD_EVENTS:
            # (an odd MAX_LOAD_EVENTS: the one load between is kept as it is)
            return tuple(_load_event(ld) for ld in (*self.first, first, *self.recent))
        aggregate = Event(
            kind="loads",
            source=first.source,
            line=first.line,
            t=first.t,
            text=first.text,
            module=None,
            detail={
                "count": self.middle,
                "duration_s": round6(self.seconds),
                "first_line": first.line,
                "last_line": last.line,
                "after_warmup": self.after_warmup,
                "reloads": self.reloads,
                "modules": dict(sorted(self.per_module.items())),
            },
        )
        return (
            *(_load_event(ld) for ld in self.first),
            aggregate,
            *(_load_event(ld) for ld in self.recent),
        )


def _load_event(ld: Load) -> Event:
    return Event(
        kind="load",
        source=ld.source,
        line=ld.line,
        t=ld.t,
        text=ld.text,
        module=ld.module,
        detail={
            "duration_s": ld.duration_s,
            "warmup": ld.warmup,
            "reload": ld.reload,
            "attributed": ld.attributed,
            **({"rank": ld.rank} if ld.rank is not None else {}),
        },
    )


def build_timeline(events: Iterable[TypedEvent], warmup: int | None = None) -> Timeline:
    """Fold ``events`` (in order, source by source) into a :class:`Timeline`."""
    b = TimelineBuilder(warmup)
    for ev in events:
        b.feed(ev)
    return b.finish()
