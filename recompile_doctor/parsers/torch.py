"""torch.compile ``TORCH_LOGS`` text logs (``recompiles``, ``recompiles_verbose``,
``graph_breaks``, ``guards``) -> typed events.

Every line carries torch's glog prefix (``V1122 19:11:45.043000 17328 torch/_dynamo/guards.py:5396]``),
optionally a compile id ``[0/1]`` (``[1/1_1]`` on a restart attempt) and an artifact tag
``[__recompiles]``; torchrun's ``--tee`` adds ``[default1]:`` and torch's formatter
``[rank1]:`` in front.  Multi-line messages repeat the prefix on every line, so a block is
the run of lines with the same prefix tail (compile id, tag, source file).
"""

from __future__ import annotations

from collections.abc import Iterator, MutableMapping, MutableSet, Sequence
from dataclasses import dataclass, field, replace
from typing import ClassVar, Final

from recompile_doctor.bounded import Kept
from recompile_doctor.compiled_modules import runs_compiled
from recompile_doctor.events import (
    CompileKey,
    CompileStarted,
    FrameworkNote,
    RecompileReason,
    Span,
    TypedEvent,
)
from recompile_doctor.microseconds import round6
from recompile_doctor.model import Event, ValueChange
from recompile_doctor.parsers._format import Decoded, SkipMode, new_run
from recompile_doctor.parsers._lazy_re import lazy_re
from recompile_doctor.parsers._names import file_basename
from recompile_doctor.parsers._pylog import glog_stamp
from recompile_doctor.parsers._torch_guards import (
    GuardFailure,
    comment_frame,
    explain,
    failure_values,
    guard_text,
    in_line_order,
    missing_new,
    split_entry,
    tree_guard_value,
    user_frame,
    value_guards,
    with_new_values,
)
from recompile_doctor.parsers._tuples import new_event, new_span, recognized

# detection's half of the format (the registry entry and sniff are this module's names too)
from recompile_doctor.parsers.torch_detect import (  # noqa: F401
    ANCHORS,
    ARTIFACT,
    COMPILE_ID,
    FRAMEWORK,
    LEAD,
    LINE_RE,
    SOURCE,
    STAMP_HEAD,
    TORCH,
    sniff,
)

_RECOMPILING_RE: Final = lazy_re(
    r"^Recompiling function (?P<fn>\S+) in (?P<file>.+):(?P<line>\d+)$"
)
_FAILURE_RE: Final = lazy_re(r"^\s*- (?P<body>.*)$")
_FILE_RE: Final = lazy_re(
    r'^\s*(?:-\s+)?File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<fn>\S+)'
)
_LIMIT_RE: Final = lazy_re(r"torch\._dynamo hit config\.(?P<name>\w+) \((?P<value>\d+)\)")
_LIMIT_FN_RE: Final = lazy_re(r"^\s*function: '(?P<fn>[^']+)' \((?P<file>.+):(?P<line>\d+)\)")
_LIMIT_REASON_RE: Final = lazy_re(r"^\s*(?:last reason|reasons): *(?P<reason>.*)$")
_BREAK_AT_RE: Final = lazy_re(r"^Graph break in user code at (?P<file>.+):(?P<line>\d+)$")
_BREAK_REASON_RE: Final = lazy_re(r"^Graph Break Reason: (?P<reason>.*)$")

# -- a line's prefix, read by str methods ------------------------------------------------
_LEAD_RE: Final = lazy_re(LEAD)
_STAMP_HEAD_RE: Final = lazy_re(STAMP_HEAD)
_SOURCE_RE: Final = lazy_re(SOURCE)
_TAG_RE: Final = lazy_re(f"{COMPILE_ID}|{ARTIFACT}")

#: LINE_RE's groups (LINE_GROUPS), or None where it does not match
LineGroups = tuple[
    str | None, str | None, str, str, str, str, str,
    str | None, str | None, str | None, str | None, str | None,
]  # fmt: skip
_Tag = tuple[str | None, str | None, str | None, str | None]  # frame, comp, att, art

#: each piece of a line's prefix as its pattern reads it, per distinct piece (a log repeats
#: its stamps' seconds, its sources (process, file and line) and its tags): the stamp's
#: head -> whether it is well-formed; a source -> (process id, file), ``("", "")`` when it
#: is not one; a tag -> its groups, all None when it is not one.  At most
#: :data:`~recompile_doctor.bounded.KEPT_MAX` each
_HEADS_KEPT: Final[Kept[str, bool]] = Kept()
_HEADS: Final = _HEADS_KEPT.table
_SOURCES_KEPT: Final[Kept[str, tuple[str, str]]] = Kept()
_SOURCES: Final = _SOURCES_KEPT.table
_TAGS_KEPT: Final[Kept[str, _Tag]] = Kept()
_TAGS: Final = _TAGS_KEPT.table
_NOT_A_TAG: Final[_Tag] = (None, None, None, None)


def _head(head: str) -> bool:
    return _HEADS_KEPT.put(head, _STAMP_HEAD_RE.fullmatch(head) is not None)


def _source(tail: str) -> tuple[str, str]:
    m = _SOURCE_RE.fullmatch(tail)
    return _SOURCES_KEPT.put(tail, ("", "") if m is None else (m["pid"], m["file"]))


def _tag(tag: str) -> _Tag:
    m = _TAG_RE.fullmatch(tag)
    got = _NOT_A_TAG if m is None else (m["frame"], m["comp"], m["att"], m["art"])
    return _TAGS_KEPT.put(tag, got)


def _tag_at(text: str, q: int, n: int) -> tuple[_Tag, int]:
    """The tag `` [...]`` at ``q`` and where it ends, when the text after it is empty or
    goes on with a space (as LINE_RE takes a tag: the message after it begins with one);
    else :data:`_NOT_A_TAG` and ``q``."""
    if q + 1 >= n or text[q] != " " or text[q + 1] != "[":
        return _NOT_A_TAG, q
    k = text.find("]", q + 2) + 1
    if k == 0 or (k < n and text[k] != " "):
        return _NOT_A_TAG, q
    key = text[q:k]
    tag = _TAGS.get(key)
    if tag is None:
        tag = _tag(key)
    return tag, (q if tag[0] is None and tag[3] is None else k)


#: compiled (mypyc), a line is read by :func:`split_line`, in half the instructions its
#: pattern's match takes; interpreted, by the pattern, the quicker there (by a fifth)
_BY_STR: Final = runs_compiled(__file__)


def _by_pattern(text: str) -> LineGroups | None:
    m = LINE_RE.match(text)
    return None if m is None else m.groups()  # type: ignore[return-value]


def split_line(text: str) -> LineGroups | None:
    """``LINE_RE.match(text).groups()``, or None where it does not match: the same, read by
    ``str`` methods, each of the pattern's pieces checked by its own pattern once per
    distinct piece (a test holds the two to each other).  Matching the whole line's pattern
    was the biggest single cost of a torch.compile log's decoding.

    Every piece sits where the pattern puts it: the stamp has a fixed width, the source
    ends at the first ``]`` after it (nothing in it can be one), and each tag at the first
    ``]`` after its ``[``; a tag is the pattern's when what follows it is empty or begins
    with a space, as the message must."""
    d: str | None = None
    r: str | None = None
    p = 0
    if text[:1] == "[":
        lead = _LEAD_RE.match(text)
        if lead is None:  # (the lead's parts are optional: it always matches)
            return _by_pattern(text)
        d, r = lead.groups()
        p = lead.end()
    n = len(text)
    if n < p + 22 or "\n" in text:  # (where the pattern's ``.`` and ``$`` stop)
        return _by_pattern(text)
    lvl = text[p]
    if lvl not in "VIWEFC" or text[p + 14] != "." or not text[p + 15 : p + 21].isdecimal():
        return None
    head = text[p + 1 : p + 14]
    ok = _HEADS.get(head)
    if not (_head(head) if ok is None else ok):
        return None
    e = text.find("]", p + 21) + 1
    if e == 0:
        return None
    tail = text[p + 21 : e]
    source = _SOURCES.get(tail)
    if source is None:
        source = _source(tail)
    if not source[0]:
        return None
    (frame, comp, att, art), q = _tag_at(text, e, n)
    if frame is not None:  # a compile id; an artifact tag may follow
        tag, k = _tag_at(text, q, n)
        if tag[0] is None:  # (a second compile id is the message's)
            art, q = tag[3], k
    msg: str | None = None
    if q < n:
        if text[q] != " ":
            return None
        msg = text[q + 1 :]
    return (d, r, lvl, text[p + 1 : p + 5], text[p + 6 : p + 21], source[0], source[1],
            frame, comp, att, art, msg)  # fmt: skip


@dataclass(slots=True, init=False, repr=False, eq=False)  # working state: never shown
class _Line:
    """A line of a torch log, read into its prefix fields and message."""

    lineno: int
    raw: str
    rank: str | None
    t: float | None
    cid: str | None
    art: str | None
    file: str
    msg: str

    def __init__(
        self, lineno: int = 0, raw: str = "", rank: str | None = None, t: float | None = None,
        cid: str | None = None, art: str | None = None, file: str = "", msg: str = "",
    ) -> None:  # fmt: skip
        # (written out: compiled, where the one dataclasses writes runs interpreted, a
        # tenth of the decoding of a torch.compile line; the defaults let mypyc copy and
        # pickle one, which it makes without arguments first: a worker's decoder can hold
        # a block of lines when it is handed over)
        self.lineno = lineno
        self.raw = raw
        self.rank = rank
        self.t = t
        self.cid = cid
        self.art = art
        self.file = file
        self.msg = msg


@dataclass(slots=True, repr=False, eq=False)  # working state: never compared or shown
class _Block:
    """A multi-line torch message under way, by kind, from its first line."""

    kind: str  # "recompile" | "limit" | "break" | "item-warning"
    first: _Line
    lines: list[_Line] = field(default_factory=list)

    def tail(self, ln: _Line) -> bool:
        f = self.first
        return ln.cid == f.cid and ln.art == f.art and ln.file == f.file and ln.rank == f.rank


class TorchLogDecoder:
    """Decoder of one ``TORCH_LOGS`` text log."""

    #: only looked up, never iterated: the order their entries came in makes no difference
    #: (a worker that read a later part of the log learns them in another order)
    UNORDERED_STATE: ClassVar[frozenset[str]] = frozenset(
        {"_names", "_known", "_guessed", "_seen", "_pid", "_pids"}
    )
    #: looked up by frame, and iterated only at the end, in the order of their lines: what
    #: the parent holds for frames a worker never meets is the one-process decoder's at the
    #: end as well (see :mod:`._checkpoint`)
    RESIDUAL_STATE: ClassVar[frozenset[str]] = frozenset({"_pending", "_held"})
    #: the parent's share of the log with two processes (see :mod:`._parallel`): its lines
    #: make few events, so the parent has little to do after its part (the instructions of
    #: each process's reading, counted on 24 MB of the bench log at 0.5: parent 1.18 G,
    #: worker 1.07; once a checkpoint took its plain items without a call, 1.204 and 1.082
    #: at 0.45, 1.169 and 1.124 at 0.42, 1.160 and 1.139 at 0.41, 1.145 and 1.151 at 0.4;
    #: but 24 MB is read by one process, and the even split moves with the size: at 48 MB,
    #: parent / worker and the longer plus the work after, 1,952 / 2,190 and 2,392 M at
    #: 0.4, 2,034 / 2,089 and 2,291 at 0.43, 1,945 / 2,005 and 2,207 at 0.44, 2,106 / 1,971
    #: and 2,308 at 0.46; at 64 MB, 3,049 at 0.4 and 2,915 at 0.44).  Since a worker's
    #: batches are packed in C, by CPU time on 250 MB (`getrusage` at the reading's end):
    #: parent / worker 0.74 / 0.92 s at 0.44 (the reading's wall 0.99 s), 0.81 / 0.82 at
    #: 0.5 (0.86-0.87), 0.88 / 0.73 at 0.56 (0.88-0.91)
    PARENT_SHARE: ClassVar[float] = 0.5
    #: a part begins at a recompilation's first line when one comes soon after its split
    #: (see :mod:`._parallel`): a worker begun after that line, in the compilation's guard
    #: dump, sees the compilation first there, without the function name the line gave, and
    #: waits for the name to the end: it would never meet the parent (a quarter of the
    #: splits of the bench log did so, the parent reading the worker's part itself)
    PART_SEAMS: ClassVar[tuple[bytes, ...]] = (b"] Recompiling function ",)
    #: a worker starts without the process ids of the lines before its part: the first
    #: line of each rank in its part is of the run it continues, whatever came between
    #: (see :mod:`._checkpoint`); a run begun again in its part fails it (ReadAlone)
    PART_FRESH_STATE: ClassVar[frozenset[str]] = frozenset({"_pid"})
    #: the method that ends a run: the one place besides finish() that iterates and
    #: empties the tables above (only a reader from the start runs it: a worker fails first)
    RUN_END: ClassVar[str] = "_settle"

    def __init__(self, path: str = "") -> None:
        # (``path`` has a default: a worker's decoder is copied, see _checkpoint.unrecorded)
        self.path = path
        self.continuing = False
        self._t0: float | None = None
        self._block: _Block | None = None
        self._held_warning: _Block | None = None
        self._seen: MutableSet[tuple[str | None, str]] = set()  # (rank, compile id) started
        self._names: MutableMapping[tuple[str | None, str], str] = {}  # (rank, frame) -> function
        self._pending: MutableMapping[tuple[str | None, str], list[tuple[str, Span]]] = {}
        self._known: MutableMapping[tuple[str | None, str], dict[str, dict[str, str]]] = {}
        # per (rank, frame): the last reason whose change still lacks its new value, held
        # until the new compilation's guard dump or a later reason names it
        self._held: MutableMapping[tuple[str | None, str], RecompileReason] = {}
        # per (rank, frame): a name from the guard dump's source comments (function, from
        # the user's file), for a frame that no message names
        self._guessed: MutableMapping[tuple[str | None, str], tuple[str, bool]] = {}
        # per rank, the process id of its last line, and every (rank, process id) seen: a
        # rank's line of a process id never seen before is a new run of it (logs appended
        # with 2>>), whose compile ids start again at [0/0]
        self._pid: MutableMapping[str | None, str] = {}
        self._pids: MutableSet[tuple[str | None, str]] = set()

    # -- the driver's interface ----------------------------------------------------------
    @property
    def wants_skipped(self) -> SkipMode:
        return "all" if self._t0 is None else "none"

    def skipped(self, lineno: int, raw: str) -> None:
        if self._t0 is None and raw[:1] in "VIWEFC[":
            m = LINE_RE.match(raw.rstrip("\r\n"))
            if m is not None:
                self._t0 = glog_stamp(m["md"], m["ts"])

    def finish(self) -> Iterator[TypedEvent]:
        out: list[TypedEvent] = []
        out.extend(self._flush(None))
        out.extend(self._settle(None, every=True))
        return iter(out)

    def _settle(self, rank: str | None, *, every: bool = False) -> list[TypedEvent]:
        """What is still put off, of one rank (``None`` for lines without one: the end of
        a run) or of ``every`` rank (the end of the log): the compilations waiting for
        their function's name, and the reasons held for a new value, in the order of their
        lines whatever the order they were put off in.  The end of a run also forgets what
        its compile ids named."""

        def mine(key: tuple[str | None, str]) -> bool:
            return every or key[0] == rank

        out: list[TypedEvent] = []
        waiting = sorted(
            (span.line, r or "", cid, frame, span)
            for (r, frame), items in self._pending.items()
            if mine((r, frame))
            for cid, span in items
        )
        for _line, r, cid, frame, span in waiting:
            guess = self._guessed.get((r or None, frame))
            out.append(self._started(span, guess[0] if guess else None, cid))
        held = [(k, v) for k, v in self._held.items() if mine(k)]
        out.extend(in_line_order(held))
        if every:
            self._pending.clear()
            self._held.clear()
            return out
        for table in (self._pending, self._held, self._names, self._known, self._guessed):
            for k in [k for k in table if k[0] == rank]:
                del table[k]
        for k in [k for k in self._seen if k[0] == rank]:
            self._seen.discard(k)
        return out

    def _new_run(
        self, rank: str | None, pid: str, lineno: int, text: str, t: float | None
    ) -> list[TypedEvent]:
        """Events for a line of process ``pid``: if that rank's lines came from another
        process until now, and never from this one, a new run of it begins here (its
        compile ids start again): what the last run left put off is given first."""
        last = self._pid.get(rank)
        self._pid[rank] = pid
        if (rank, pid) in self._pids:
            return []
        self._pids.add((rank, pid))
        if last is None:
            return []
        started = new_run(new_span(self.path, lineno, text, t, rank), FRAMEWORK)
        out = self._flush(None)
        out.extend(self._settle(rank))
        out.append(started)
        return out

    def decode(self, lineno: int, raw: str) -> Decoded:
        text = raw.rstrip("\r\n")
        groups = split_line(text) if _BY_STR else _by_pattern(text)
        if groups is None:
            # a line inside an open block that is not torch's (the script's own output)
            events = self._flush(None)
            if any(a in text for a in ANCHORS) and ' {"' not in text:
                return Decoded("malformed", tuple(events), "torch log line without a glog prefix")
            return Decoded("unrecognized", tuple(events))
        d, r, _, md, stamp, pid, file, frame, comp, _, art, msg = groups
        ts = glog_stamp(md, stamp)
        if ts is not None and self._t0 is None:
            self._t0 = ts
        t = round6(ts - self._t0) if ts is not None and self._t0 is not None else None
        cid = f"{frame}/{comp}" if frame is not None else None
        ln = _Line(lineno, text, r or d, t, cid, art, file, msg or "")
        out: list[TypedEvent] = []
        if self._pid.get(ln.rank) != pid:
            out.extend(self._new_run(ln.rank, pid, lineno, text, t))
        problem: str | None = None
        blk = self._block
        if blk is not None and blk.tail(ln) and not self._starts_block(ln):
            blk.lines.append(ln)
        else:
            if (
                blk is not None
                and blk.kind == "recompile"
                and ln.cid == blk.first.cid
                and _LIMIT_RE.search(ln.msg) is not None
            ):
                blk.kind = "recompile-refused"
            out.extend(self._flush(ln))
            problem = self._open(ln, out)
        if cid is not None and not (
            self._block is not None and self._block.kind.startswith("recompile")
        ):
            out.extend(self._see(ln.rank, cid, ln))
        if ln.art == "guards" and cid is not None and " # " in ln.msg:
            out.extend(self._guard_line(ln, cid))
        self.continuing = self._block is not None or self._held_warning is not None
        if problem is not None:
            return Decoded("malformed", tuple(out), problem)
        return recognized(out)

    # -- blocks --------------------------------------------------------------------------
    def _starts_block(self, ln: _Line) -> bool:
        msg = ln.msg
        # (the literal each pattern needs first: a guard dump's lines pass none of them)
        return (
            msg.startswith(("Recompiling function ", "Graph break "))
            and (
                _RECOMPILING_RE.match(msg) is not None
                or _BREAK_AT_RE.match(msg) is not None
                or msg.startswith("Graph break from ")
            )
        ) or ("hit config." in msg and _LIMIT_RE.search(msg) is not None)

    def _open(self, ln: _Line, out: list[TypedEvent]) -> str | None:
        msg = ln.msg
        if (
            not msg.startswith("Graph break")
            and "Recompiling function" not in msg
            and "hit config." not in msg
        ):
            # (none of the blocks: what the branches below ask, without their patterns)
            if ln.art in ("recompiles", "recompiles_verbose") and msg.strip():
                return "guard failure line outside a 'Recompiling function' block"
            return None
        if _RECOMPILING_RE.match(msg):
            self._block = _Block("recompile", ln, [ln])
        elif _LIMIT_RE.search(msg):
            self._block = _Block("limit", ln, [ln])
        elif _BREAK_AT_RE.match(msg):
            self._block = _Block("break", ln, [ln])
        elif msg.startswith("Graph break from ") or (
            msg.startswith("Graph break") and ln.file.endswith("variables/tensor.py")
        ):
            self._block = _Block("item-warning", ln, [ln])
        elif ln.art in ("recompiles", "recompiles_verbose") and msg.strip():
            return "guard failure line outside a 'Recompiling function' block"
        elif "Recompiling function" in msg or "hit config." in msg:
            return "torch recompile message that does not fit its known wording"
        return None

    def _flush(self, nxt: _Line | None) -> list[TypedEvent]:
        if self._block is None and self._held_warning is None:
            self.continuing = False
            return []  # (what the rest gives then: most lines are in no block)
        blk, self._block = self._block, None
        out: list[TypedEvent] = []
        if blk is not None:
            if blk.kind.startswith("recompile"):
                out.extend(self._recompile(blk))
            elif blk.kind == "limit":
                out.extend(self._limit(blk))
            elif blk.kind == "item-warning":
                self._held_warning = blk
            elif blk.kind == "break":
                held, self._held_warning = self._held_warning, None
                out.extend(self._graph_break(blk, held))
        if self._held_warning is not None and blk is not None and blk.kind != "item-warning":
            out.extend(self._graph_break(self._held_warning, None))
            self._held_warning = None
        if (
            self._held_warning is not None
            and nxt is not None
            and _BREAK_AT_RE.match(nxt.msg) is None
            and nxt.art != "graph_breaks"
            and (blk is None or blk.kind != "item-warning")
        ):
            out.extend(self._graph_break(self._held_warning, None))
            self._held_warning = None
        if nxt is None and self._held_warning is not None:
            out.extend(self._graph_break(self._held_warning, None))
            self._held_warning = None
        self.continuing = self._block is not None or self._held_warning is not None
        return out

    def _span(self, ln: _Line, lines: Sequence[_Line] | None = None) -> Span:
        text = "\n".join(x.raw for x in lines) if lines else ln.raw
        return new_span(self.path, ln.lineno, text, ln.t, ln.rank)

    def _record(
        self,
        kind: str,
        ln: _Line,
        lines: Sequence[_Line],
        detail: dict[str, object] | None = None,
    ) -> Event:
        """The record of the message; ``detail``, its fields in the order the report writes
        them, a new dict of the caller's (see ``JaxDecoder._record`` in ``jax``)."""
        text = "\n".join(x.raw for x in lines)
        d = {} if detail is None else detail
        return new_event(kind, self.path, ln.lineno, ln.t, text, detail=d)

    def _key(self, rank: str | None, cid: str | None) -> CompileKey:
        fn = self._names.get((rank, cid.split("/")[0])) if cid else None
        return CompileKey(FRAMEWORK, fn, compile_id=cid)

    def _started(self, span: Span, fn: str | None, cid: str) -> CompileStarted:
        rec = new_event(
            "compile-begin", self.path, span.line, span.t, span.text, detail={"compile_id": cid}
        )
        return CompileStarted(span, rec, CompileKey(FRAMEWORK, fn, compile_id=cid))

    def _name(self, rank: str | None, frame: str, fn: str) -> list[TypedEvent]:
        self._names[(rank, frame)] = fn
        return [self._started(sp, fn, cid) for cid, sp in self._pending.pop((rank, frame), [])]

    def _see(self, rank: str | None, cid: str, at: Span | _Line) -> list[TypedEvent]:
        """The compile id ``cid`` appears (at a line, or the span given): its compilation
        starts unless it was seen before (the span is made only then: most lines of a
        compilation's guard dump carry its id)."""
        if (rank, cid) in self._seen:
            return []
        self._seen.add((rank, cid))
        span = at if isinstance(at, Span) else self._span(at)
        frame = cid.split("/")[0]
        fn = self._names.get((rank, frame))
        if fn is None:
            self._pending.setdefault((rank, frame), []).append((cid, span))
            return []
        return [self._started(span, fn, cid)]

    def _recompile(self, blk: _Block) -> list[TypedEvent]:
        first = blk.first
        m = _RECOMPILING_RE.match(first.msg)
        assert m is not None
        fn = m["fn"]
        rank, cid = first.rank, first.cid
        out: list[TypedEvent] = []
        frame = cid.split("/")[0] if cid else "?"
        out.extend(self._name(rank, frame, fn))
        failures: list[GuardFailure] = []
        call_site: str | None = None
        for ln in blk.lines[1:]:
            fm = _FAILURE_RE.match(ln.msg)
            if fm is None:
                continue
            body = fm["body"]
            fl = _FILE_RE.match(body)
            if fl is not None:
                call_site = call_site or f"{file_basename(fl['file'])}:{fl['line']}"
                continue
            gf = split_entry(body)
            if gf is not None:
                failures.append(gf)
                call_site = call_site or user_frame(gf.text)
        known = self._known.setdefault((rank, frame), {})
        rule, changes, chosen = explain(fn, failures, known)
        for entry, values in value_guards(failures).items():
            known.setdefault(entry, {}).update(values)
        span = self._span(first, blk.lines)
        # the earlier entries that the block names were compiled, before this one
        for f in reversed(failures):
            if (rank, f.entry) not in self._seen:
                out.extend(
                    self._see(
                        rank, f.entry, new_span(self.path, first.lineno, first.raw, first.t, rank)
                    )
                )
        if cid is not None and blk.kind == "recompile":
            out.extend(
                self._see(rank, cid, new_span(self.path, first.lineno, first.raw, first.t, rank))
            )
        elif cid is not None:
            self._seen.add((rank, cid))  # refused by the recompile limit: never compiled
        reason = "\n".join(x.msg for x in blk.lines)
        if chosen is not None and chosen is not failures[0]:
            reason += f"\n(closest earlier entry {chosen.entry}: {guard_text(chosen.text)})"
        rec = self._record(
            "recompile-reason",
            first,
            blk.lines,
            detail={
                "function": fn,
                "compile_id": cid,
                "rule": rule,
                "guard": guard_text(chosen.text) if chosen else None,
                "torch_reason": f"{failures[0].entry}: {failures[0].text}" if failures else None,
            },
        )
        held = self._held.pop((rank, frame), None)
        if held is not None:
            entry = held.key.compile_id or ""
            values = failure_values(failures, entry)
            out.append(replace(held, changes=with_new_values(held.rule, held.changes, values)))
        this = RecompileReason(
            span,
            rec,
            CompileKey(FRAMEWORK, fn, compile_id=cid),
            rule,
            reason,
            tuple(_sited(c, call_site, self.path, first.lineno) for c in changes),
            call_site,
            tuple(x.lineno for x in blk.lines),
        )
        if cid is not None and blk.kind == "recompile" and missing_new(this.changes):
            self._held[(rank, frame)] = this
        else:
            out.append(this)
        return out

    def _guard_line(self, ln: _Line, cid: str) -> list[TypedEvent]:
        """A line of the new compilation's guard dump: a name for its frame, and the value
        a guard pins, which is the new value of what its recompile reason says changed."""
        frame = cid.split("/")[0]
        fk = (ln.rank, frame)
        cf = comment_frame(ln.msg)
        if cf is not None:
            prev = self._guessed.get(fk)
            if prev is None or (cf[1] and not prev[1]):
                self._guessed[fk] = cf
        if "_MATCH: " not in ln.msg:  # (before the lookup: a worker records its misses)
            return []
        held = self._held.get(fk)
        if held is None or held.key.compile_id != cid:
            return []
        gv = tree_guard_value(ln.msg)
        if gv is None:
            return []
        filled = replace(held, changes=with_new_values(held.rule, held.changes, dict([gv])))
        if missing_new(filled.changes):
            self._held[fk] = filled
            return []
        del self._held[fk]
        return [filled]

    def _limit(self, blk: _Block) -> list[TypedEvent]:
        first = blk.first
        m = _LIMIT_RE.search(first.msg)
        assert m is not None
        fn: str | None = None
        call_site: str | None = None
        last_reason: str | None = None
        for ln in blk.lines[1:]:
            fm = _LIMIT_FN_RE.match(ln.msg)
            if fm is not None:
                fn = fm["fn"]
                continue
            rm = _LIMIT_REASON_RE.match(ln.msg)
            if rm is not None and last_reason is None:
                last_reason = rm["reason"].rstrip()
                continue
            fl = _FILE_RE.match(ln.msg)
            if fl is not None and call_site is None:
                call_site = f"{file_basename(fl['file'])}:{fl['line']}"
        out: list[TypedEvent] = []
        rank, cid = first.rank, first.cid
        if fn is not None and cid is not None:
            out.extend(self._name(rank, cid.split("/")[0], fn))
        key = CompileKey(FRAMEWORK, fn or self._key(rank, cid).function, compile_id=cid)
        span = self._span(first, blk.lines)
        limit = int(m["value"]) if len(m["value"]) < 19 else None
        rec = self._record(
            "recompile-limit", first, blk.lines, detail={"limit": limit, "last_reason": last_reason}
        )
        changes: tuple[ValueChange, ...] = ()
        if last_reason is not None and (gf := split_entry(last_reason)) is not None:
            changes = explain(key.function or "?", [gf], {})[1]
            fk = (rank, cid.split("/")[0]) if cid is not None else None
            held = self._held.get(fk) if fk is not None else None
            if fk is not None and held is not None and held.key.compile_id == gf.entry:
                values = failure_values([gf], gf.entry)
                filled = replace(held, changes=with_new_values(held.rule, held.changes, values))
                if not missing_new(filled.changes):
                    del self._held[fk]
                    out.append(filled)
                else:
                    self._held[fk] = filled
        out.append(
            RecompileReason(
                span,
                rec,
                key,
                "recompile-limit",
                "\n".join(x.msg for x in blk.lines),
                changes,
                call_site or (user_frame(last_reason) if last_reason else None),
                tuple(x.lineno for x in blk.lines),
            )
        )
        out.append(
            FrameworkNote(
                span,
                rec,
                "recompile-limit",
                key,
                {"limit": limit, "limit_name": m["name"], "last_reason": last_reason},
                keep=False,
            )
        )
        return out

    def _graph_break(self, blk: _Block, warning: _Block | None) -> list[TypedEvent]:
        lines = (warning.lines if warning else []) + blk.lines
        first = lines[0]
        reason: str | None = None
        frame: str | None = None
        fn: str | None = None
        m = _BREAK_AT_RE.match(blk.first.msg)
        if m is not None:
            frame = f"{file_basename(m['file'])}:{m['line']}"
            after_reason = False
            for ln in blk.lines[1:]:
                rm = _BREAK_REASON_RE.match(ln.msg)
                if rm is not None:
                    reason = rm["reason"]
                    after_reason = True
                    continue
                if after_reason and ln.msg.strip():
                    if not ln.msg.startswith(" "):
                        reason = ln.msg.strip()
                    after_reason = False
        for ln in lines:
            fl = _FILE_RE.match(ln.msg)
            if (
                fl is not None
                and frame is not None
                and frame == f"{file_basename(fl['file'])}:{fl['line']}"
            ):
                fn = fl["fn"]
            elif fl is not None and frame is None:
                frame, fn = f"{file_basename(fl['file'])}:{fl['line']}", fl["fn"]
        if reason is None:
            reason = blk.first.msg.strip()
        out: list[TypedEvent] = []
        cid = first.cid
        if fn is not None and cid is not None and cid.endswith("/0"):
            out.extend(self._name(first.rank, cid.split("/")[0], fn))
        key = self._key(first.rank, cid)
        detail = {"reason": reason, "user_frame": frame, "function": fn}
        rec = self._record("graph-break", first, lines, detail=dict(detail))
        out.append(FrameworkNote(self._span(first, lines), rec, "graph-break", key, detail))
        return out


def _sited(c: ValueChange, call_site: str | None, source: str, line: int) -> ValueChange:
    return replace(c, call_site=c.call_site or call_site, source=source, line=line)
