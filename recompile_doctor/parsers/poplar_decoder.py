"""The Poplar / TensorFlow-on-IPU decoder: message table matches -> typed events.

Everything the Poplar stack's words mean lives here: which phase is a load, which a graph
construction, that ``Begin XLA compilation`` is printed at the verbosity of the cache lines,
that ``--executable_cache_path`` turns the cache on, that MPI ranks tag their lines.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any, ClassVar, Final

from recompile_doctor.bounded import Kept
from recompile_doctor.events import (
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
    Span,
    TypedEvent,
)
from recompile_doctor.model import Event
from recompile_doctor.parsers._format import RECOGNIZED, UNRECOGNIZED, Decoded, SkipMode
from recompile_doctor.parsers._names import function_name
from recompile_doctor.parsers._prefixes import (
    NO_PREFIX,
    STAMP_LEN,
    STAMP_OF,
    Clock,
    Prefix,
    clock_of,
    split_prefix,
    stamp_seconds,
    strip_ansi,
)
from recompile_doctor.parsers._tuples import new_span, tuple_new
from recompile_doctor.parsers.poplar import Malformed, Message, match_message

FRAMEWORK: Final = "poplar"
#: the Poplar phase that builds a graph (a compilation) and the one that loads an engine
GRAPH_PHASE: Final = "graphConstruction"
LOAD_PHASE: Final = "Loading executable"

#: message kinds the report keeps as events (per-step lines are folded into counts)
KEEP_KINDS: Final = frozenset(
    {
        "compile-begin",
        "compile-end",
        "cache-hit",
        "cache-miss",
        "cache-new-entry",
        "precompile-saved",
        "precompile-no-cache-path",
        "precompile-zeros",
        "custom-op-unhashable",
        "compilation-only",
        "cluster-compiled",
        "attach",
        "progress-start",
        "progress-end",
        "poplar-version",
        "poplar-flags",
        "popart-cache-found",
        "popart-cache-load",
        "on-demand-override",
        "replication",
        "graph-compiled",
        "execute",
    }
)

#: whether a folding decoder may leave out the start of a load: the timeline ignores it and
#: the report does not keep it (its time is carried to the load's end by the decoder)
_FOLD_LOAD_START: Final = "phase-start" not in KEEP_KINDS and "load-start" in UNREAD_NOTES

#: a folded line: recognized, but nothing in it the timeline would use
_FOLDED: Final = RECOGNIZED

#: what a folding decoder keeps of a line it folds the repeats of: the text after its time
#: stamp, its prefix without the time (:func:`_timeless`) and that text as bytes (the fast
#: path's :attr:`PoplarDecoder.fold_tails`)
_Tail = tuple[str, Prefix, bytes]

#: the text after a well-formed time stamp -> (the prefix, the message, the line's
#: :data:`_Tail`) of a step line (``Execute M``) that ended so: a line's prefix fields and
#: message depend on that text alone, its stamp gives only the seconds, and a run switching
#: executables steps the same few modules again and again.  (Only steps: most other lines
#: carry numbers that change, a load its duration.)  Shared by the decoders of a process: a
#: cache, not state (a checkpoint compares states, and two decoders must not differ by what
#: each has seen).  It holds at most :data:`~recompile_doctor.bounded.KEPT_MAX` lines
#: (:class:`~recompile_doctor.bounded.Kept`).
_SPLIT_KEPT: Final[Kept[str, tuple[Prefix, str, _Tail]]] = Kept()
_SPLIT: Final = _SPLIT_KEPT.table
#: the longest text after a stamp :data:`_SPLIT` takes (a module name is far shorter: a line
#: of garbage is not kept)
_SPLIT_CHARS = 400

_MPI_TAG: Final = "]<std"
#: what a line that starts with a logger time stamp starts with
_STAMP_START: Final = re.compile(
    r"\d{4}-\d\d-\d\d[ T]\d\d:|\d\d:\d\d:\d\d\.\d{3} |\[\d\d:\d\d:\d\d\.\d{3}\]|"
    r"[IWEFV]\d{4} \d\d:|\[\d+,\d+\]<"
)


#: ``tuple.__new__`` (or its C twin, :func:`._tuples.chosen_tuple_new`): a named tuple made
#: from its values (a third of the time of its ``__new__``, which takes keywords and
#: defaults: several are made for each decoded line)
_new: Final = tuple_new


def _timeless(prefix: Prefix) -> Prefix:
    """``prefix`` without its time: what a folding decoder keeps of the line it folds the
    repeats of (their own stamps give their times).  Without the time of the first such
    line, two decoders that have seen it at different times (a worker starting half way
    through the log) are in the same state, and the parent takes over the worker's part."""
    return _new(Prefix, (None, prefix.clock, prefix.logger, prefix.level, prefix.source_file, None))


def _tail(text: str, prefix: Prefix) -> _Tail:
    """The :data:`_Tail` of a line whose text after its stamp is ``text``."""
    return (text, _timeless(prefix), text.encode())


def _restamped(line: str, was: Prefix) -> Prefix | None:
    """The prefix of ``line``, whose text after its stamp is that of a line of prefix
    ``was``: ``was`` with the seconds of ``line``'s stamp, when it starts with a
    well-formed, existing stamp of the same clock (None: read it the long way)."""
    seconds = stamp_seconds(line, was.clock)
    if seconds is None:
        return None
    return _new(Prefix, (seconds, was.clock, was.logger, was.level, was.source_file, None))


def mpi_rank(seg: str) -> tuple[str, str | None]:
    """Split ``[1,0]<stderr>:`` off a line from an MPI rank: (the rest, "1,0")."""
    if seg.startswith("[") and _MPI_TAG in seg[:24]:
        end = seg.find(">:")
        close = seg.find("]")
        if end != -1 and 0 < close < end:
            return seg[end + 2 :], seg[1:close]
    return seg, None


def _key(module: str | None, graph_hash: str | None = None, named: bool = True) -> CompileKey:
    return CompileKey(
        FRAMEWORK,
        function_name(module) if (module and named) else None,
        module=module,
        graph_hash=graph_hash,
    )


def _message_problem(bad: Malformed) -> str:
    return f"malformed {bad.kind} line (expected the format of '{bad.expected.strip()}' messages)"


class PoplarDecoder:
    """Decoder of one Poplar / TF-on-IPU log."""

    #: the parent's share of the log with two processes (see :mod:`._parallel`): a load's
    #: end costs its full decoding in either process (every one prints other numbers) and
    #: few events are handed over, so the worker finished last at 0.39 (measured on the
    #: benchmark's 1 GB DEBUG and 250 MB 20 % logs with varied load ends: 0.45 read them
    #: 6-8 % faster than 0.39, 0.42 and 0.48; gzip input about the same)
    PARENT_SHARE: ClassVar[float] = 0.45

    def __init__(self, path: str) -> None:
        self.path = path
        self.continuing = False
        self._clock = Clock()
        self._last_stamped: str | None = None
        self._first_seen = False
        self._last_rank: str | None = None
        self._load_start: dict[str | None, float | None] = {}  # per rank
        #: the fast path's put-off search for the last stamped line skipped (see Decoder)
        self.pending_last: Callable[[], None] | None = None
        self._fold = False
        #: when folding: the message of the last line that gave events, if that line was
        #: a plain step (``Execute M``) -- the same message again changes nothing
        self._step: str | None = None
        #: the lines :meth:`decode` folds again, time stamp aside: the :data:`_Tail` of that
        #: step and of the last load start folded
        self._step_tail: _Tail | None = None
        self._load_tail: _Tail | None = None
        #: the fast path's shortcut (:meth:`fold_line`): the text after the stamp of those
        #: two lines, as bytes (the driver folds a line ending so without decoding it)
        self.fold_tails: tuple[bytes, ...] = ()

    def fold_repeats(self) -> None:
        """Leave out the events the timeline ignores (``parse_log(fold=True)``): a step
        of the module that made the step just before it, with nothing the timeline uses in
        between (the timeline attributes loads to the next step and notes a switch only
        when the module changes), and the start of a load."""
        self._fold = True

    # -- the driver's interface ----------------------------------------------------------
    @property
    def wants_skipped(self) -> SkipMode:
        return "last" if self._first_seen else "all"

    def skipped(self, lineno: int, raw: str) -> bool:
        # The clock sees the time of the last stamped line before each decoded line (lines
        # without a stamp inherit it), and the first stamped line of the log (t = 0).
        if _STAMP_START.match(raw) is not None:
            if not self._first_seen:
                self._first_seen = (
                    self._clock.absolute(split_prefix(strip_ansi(raw))[0]) is not None
                )
                return False
            self._last_stamped = raw
            return True
        return False

    def finish(self) -> Iterator[TypedEvent]:
        return iter(())

    def decode(self, lineno: int, raw: str) -> Decoded:
        tail = raw[STAMP_LEN:]
        if self._fold:
            # a line that repeats, time stamp aside, the step the folding decoder last kept
            # or the load start it last folded: the same logger, level, file and message
            # give the same decision.  Only a well-formed stamp of the same clock is read
            # (anything else goes the long way, and may be malformed).
            seen = self._step_tail
            if seen is not None and tail == seen[0]:
                if self._fold_stamp(raw[:STAMP_LEN], seen, load=False):
                    return _FOLDED
            else:
                seen = self._load_tail
                if (
                    seen is not None
                    and tail == seen[0]
                    and self._fold_stamp(raw[:STAMP_LEN], seen, load=True)
                ):
                    return _FOLDED
        if "\r" in raw or "\x1b" in raw or raw[:1] == "[":
            return self._decode_segments(lineno, raw)
        # the common line: one segment, no colours, no MPI tag
        known = _SPLIT.get(tail)
        prefix = None if known is None else _restamped(raw, known[0])
        if prefix is not None:
            msg = known[1]  # type: ignore[index]
        else:
            known = None
            prefix, msg, head = split_prefix(raw)
            if head:
                return self._decode_segments(lineno, raw)
        absolute = self._advance(prefix)
        problem = prefix.problem
        if self._fold and problem is None and msg == self._step:
            return _FOLDED
        res = match_message(msg)
        if isinstance(res, Message):
            t = self._clock.relative(absolute)
            step_tail: _Tail | None = None
            if known is not None:
                step_tail = known[2]
            elif (
                res.kind == "execute"
                and problem is None
                and prefix.clock in STAMP_OF
                and len(raw) <= STAMP_LEN + _SPLIT_CHARS
            ):
                step_tail = _tail(tail, prefix)
                _SPLIT_KEPT.put(tail, (prefix, msg, step_tail))
            if self._fold:
                if (
                    _FOLD_LOAD_START
                    and problem is None
                    and res.kind == "phase-start"
                    and res.detail.get("name") == LOAD_PHASE
                ):
                    self._load_start[self._last_rank] = t
                    if prefix.clock in STAMP_OF:
                        self._load_tail = _tail(tail, prefix)
                        self._fold_tails()
                    return _FOLDED
                step = res.kind == "execute" and problem is None
                self._step = msg if step else None
                if not step:
                    step_tail = None
                elif step_tail is None and prefix.clock in STAMP_OF:
                    step_tail = _tail(tail, prefix)
                if step_tail != self._step_tail:
                    self._step_tail = step_tail
                    self._fold_tails()
            events = self._typed(res, _new(Span, (self.path, lineno, raw, t, self._last_rank)))
            if problem is not None:
                return Decoded("malformed", events, problem)
            return _new(Decoded, ("recognized", events, None))
        if res is not None:
            return Decoded("malformed", (), _message_problem(res))
        if problem is not None:
            return Decoded("malformed", (), problem)
        return UNRECOGNIZED

    def _advance(self, prefix: Prefix) -> float | None:
        """Move the clock to the line of ``prefix`` (reading the last stamped line skipped
        before it, when that makes a difference); its absolute time."""
        clock = self._clock
        self._first_seen = True
        walk_back = self.pending_last
        if walk_back is not None:
            if clock.overrides(prefix, None):
                self.pending_last = None  # no earlier stamp can matter: no need to find it
                self._last_stamped = None
            else:
                walk_back()
        before = self._last_stamped
        if before is not None:
            self._last_stamped = None
            if not self._overridden(prefix, before):
                self._read_stamp(before)
        return clock.absolute(prefix)

    def fold_line(self, line: bytes | bytearray) -> bool:
        """The fast path's shortcut for a line ending with one of :attr:`fold_tails`
        (``line``: its bytes, newline excluded): True when it is folded, as :meth:`decode`
        would fold it, without its text; False: decode it."""
        tail = line[STAMP_LEN:]
        step = self._step_tail
        if step is not None and tail == self.fold_tails[0]:
            seen, load = step, False
        elif self._load_tail is not None and tail == self.fold_tails[-1]:
            seen, load = self._load_tail, True
        else:
            return False
        try:
            stamp = line[:STAMP_LEN].decode("ascii")
        except UnicodeDecodeError:
            return False
        return self._fold_stamp(stamp, seen, load)

    def _fold_stamp(self, stamp: str, seen: _Tail, load: bool) -> bool:
        """Fold the line of time stamp ``stamp`` and the text ``seen[0]`` after it."""
        # (:func:`_restamped`, written out: a call more per folded line costs 1.3 % of the
        # instructions of a DEBUG log, and the prefix is only needed for a load start)
        was = seen[1]
        seconds = stamp_seconds(stamp, was.clock)
        if seconds is None:
            return False
        if load:
            prefix = _new(
                Prefix, (seconds, was.clock, was.logger, was.level, was.source_file, None)
            )
            self._load_start[self._last_rank] = self._clock.relative(self._advance(prefix))
        else:
            # a repeated step tells only its time, and only to the lines after it: the clock
            # takes it as the stamp of a skipped line, read when the next decoded line needs
            # it (it stands in for the stamped lines skipped before it)
            self._last_stamped = stamp + seen[0]
            self.pending_last = None
        return True

    def _fold_tails(self) -> None:
        """:attr:`fold_tails` from the step and the load start that fold (step first)."""
        step, load = self._step_tail, self._load_tail
        if load is None:
            self.fold_tails = () if step is None else (step[2],)
        elif step is None:
            self.fold_tails = (load[2],)
        else:
            self.fold_tails = (step[2], load[2])

    def _read_stamp(self, line: str) -> None:
        """Let the clock read the time stamp of ``line`` (a skipped line)."""
        self._clock.absolute(split_prefix(mpi_rank(strip_ansi(line))[0])[0])

    def _overridden(self, prefix: Prefix, before: str) -> bool:
        """Whether the stamp of ``before`` (the last stamped line skipped) makes no
        difference once ``prefix`` is read (:meth:`Clock.overrides`)."""
        clock = self._clock
        if clock.overrides(prefix, None):
            return True
        if "\x1b" in before or before[:1] == "[":
            return False
        return clock.overrides(prefix, clock_of(before))

    def _decode_segments(self, lineno: int, raw: str) -> Decoded:
        """Any line: CR-separated segments (a progress bar redrawn), colours, MPI tags,
        text glued in front of the prefix."""
        clock = self._clock
        self._first_seen = True
        self._step = self._step_tail = None  # (no folding across a rare line)
        self._fold_tails()
        if self.pending_last is not None:
            self.pending_last()
        segments = raw.split("\r") if "\r" in raw else (raw,)
        before = self._last_stamped
        if before is not None:  # (a rare line: no shortcut)
            self._last_stamped = None
            self._read_stamp(before)
        out: list[TypedEvent] = []
        found = False
        bad: Malformed | None = None
        for seg in segments:
            seg, tag = mpi_rank(strip_ansi(seg))
            prefix, msg, head = split_prefix(seg)
            # a line without an MPI tag belongs to the rank of the tagged line before it
            rank = self._last_rank = tag if tag is not None else self._last_rank
            if not seg:
                continue
            if head and not head.isspace():
                # text glued in front of the prefix (a progress bar) is a message of its own,
                # at the time of the line before
                res = match_message(head)
                if isinstance(res, Message):
                    found = True
                    t = clock.relative(clock.absolute(NO_PREFIX))
                    out.extend(self._typed(res, new_span(self.path, lineno, raw, t, rank)))
            absolute = clock.absolute(prefix)
            if prefix.problem is not None:
                bad = Malformed("prefix", prefix.problem)
            res = match_message(msg)
            if isinstance(res, Message):
                found = True
                t = clock.relative(absolute)
                out.extend(self._typed(res, new_span(self.path, lineno, raw, t, rank)))
            elif res is not None:
                bad = res
        if bad is not None and (not found or bad.kind == "prefix"):
            problem = bad.expected if bad.kind == "prefix" else _message_problem(bad)
            return Decoded("malformed", tuple(out), problem)
        if found:
            return Decoded("recognized", tuple(out))
        return UNRECOGNIZED

    # -- messages -> events --------------------------------------------------------------
    def _record(self, msg: Message, sp: Span) -> Event:
        detail: dict[str, Any] = msg.detail if sp.rank is None else {**msg.detail, "rank": sp.rank}
        return _new(
            Event, (msg.kind, sp.source, sp.line, sp.t, sp.text, msg.module, msg.hash, detail)
        )

    def _typed(self, msg: Message, sp: Span) -> tuple[TypedEvent, ...]:
        """The events of one message; per-step kinds are not kept in the report's events."""
        rec = self._record(msg, sp)
        k = msg.kind
        d = msg.detail
        keep = k in KEEP_KINDS
        if k == "execute":  # the commonest first
            return (Executed(sp, rec, msg.module or "?", keep=keep),)
        if k == "compile-begin":
            return (
                CompileStarted(
                    sp,
                    rec,
                    _key(msg.module or "?", msg.hash),
                    ordinal=d.get("ordinal"),
                    cache_visible=True,
                    keep=keep,
                ),
            )
        elif k == "compile-end":
            return (CompileFinished(sp, rec, _key(msg.module or ""), keep=keep),)
        elif k == "cache-hit":
            return (
                CacheLookup(
                    sp, rec, "executable", "hit", _key(msg.module or "?"), d.get("path"), keep=keep
                ),
            )
        elif k == "cache-miss":
            fh = d.get("file_hash") or "?"
            return (
                CacheLookup(
                    sp,
                    rec,
                    "executable",
                    "miss",
                    _key(f"<executable {fh}>", named=False),
                    d.get("path"),
                    keep=keep,
                ),
            )
        elif k == "cache-new-entry":
            # "Module M has not been compiled yet (Hash: 0x...)": announced before its Begin
            return (CacheLookup(sp, rec, "executable", "write", _key(msg.module), None, keep=keep),)
        elif k == "precompile-saved":
            return (CacheLookup(sp, rec, "executable", "write", None, d.get("path"), keep=keep),)
        elif k in ("cache-lock", "cache-deserialize"):
            return (CacheLookup(sp, rec, "executable", "active", None, d.get("path"), keep=keep),)
        elif k == "progress-start":
            return (
                CompileStarted(
                    sp, rec, _key(msg.module or "?"), synthetic=True, joins_named=True, keep=keep
                ),
            )
        elif k == "progress-end":
            return (CompileFinished(sp, rec, None, d.get("elapsed_s"), keep=keep),)
        elif k == "graph-compiled":
            # PopTorch's "Graph compilation: 100%|...| [06:26<00:00]": one whole compilation
            return (
                CompileStarted(
                    sp,
                    rec,
                    _key("<poptorch graph>", named=False),
                    synthetic=True,
                    duration_s=d.get("elapsed_s"),
                    keep=keep,
                ),
            )
        elif k == "phase-start":
            name = d.get("name")
            if name == LOAD_PHASE:
                self._load_start[sp.rank] = sp.t
                return (FrameworkNote(sp, rec, "load-start", keep=keep),)
            elif name == GRAPH_PHASE:
                return (
                    CompileStarted(
                        sp,
                        rec,
                        _key("<poplar graph>", named=False),
                        synthetic=True,
                        phase="graph",
                        keep=keep,
                    ),
                )
            else:
                return (CompileActivity(sp, rec, keep=keep),)
        elif k == "phase-end":
            if d.get("name") == LOAD_PHASE:
                ms = d.get("duration_ms")
                start = self._load_start.pop(sp.rank, None)
                dur = ms / 1000.0 if ms is not None else None
                if dur is None and start is not None and sp.t is not None:
                    dur = sp.t - start
                return (ExecutableLoaded(sp, rec, dur, keep=keep),)
            else:
                return (CompileActivity(sp, rec, keep=keep),)
        elif k == "compile-step":
            return (CompileActivity(sp, rec, keep=keep),)
        elif k == "custom-op-unhashable":
            return (
                CompileActivity(sp, rec, uncacheable=True, keep=keep),
                FrameworkNote(sp, None, k, keep=False),
            )
        elif k == "poplar-version":
            return (ProcessStarted(sp, rec, FRAMEWORK, d.get("version"), keep=keep),)
        elif k == "poplar-flags":
            flags = str(d.get("flags") or "")
            return (ProcessConfig(sp, rec, flags, "executable_cache_path" in flags, keep=keep),)
        else:
            return (FrameworkNote(sp, rec, k, None, dict(d), keep=keep),)
