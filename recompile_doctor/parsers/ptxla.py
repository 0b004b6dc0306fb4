"""PyTorch/XLA debug output (``PT_XLA_DEBUG_LEVEL``) and metrics reports -> typed events.

``torch_xla/csrc/debug_util.cpp`` prints one block per compilation and (level 2) per
execution, every line prefixed ``Compilation Analysis: `` / ``Execution Analysis: ``::

    Compilation Analysis: ================================================================================
    Compilation Analysis: Compilation Cause
    Compilation Analysis:   user torch_xla.sync
    Compilation Analysis: Graph Info:
    Compilation Analysis:   Graph Hash: 6c1d8f0b2e9a4c7d3b5e8f1a2c4d6e80
    Compilation Analysis:   Number of Graph Inputs: 6
    Compilation Analysis:   Number of Graph Outputs: 5
    Compilation Analysis: Python Frame Triggered Execution:
    Compilation Analysis:   sync (/opt/venv/lib/python3.11/site-packages/torch_xla/torch_xla.py:87)
    Compilation Analysis:   train_loop (/tmp/ptxla/train.py:24)
    Compilation Analysis: --------------------------------------------------------------------------------
    Compilation Analysis: ================================================================================

then ``Computation hash: <hash>`` and a ``Post Compilation Analysis:`` block.  An execution
of a graph that was not compiled just before it was served from the in-memory cache.  The
metrics report (``torch_xla.debug.metrics.metrics_report()``) is ``Metric: <name>`` /
``Counter: <name>`` headers with indented ``TotalSamples:`` / ``Value:`` lines.  The cause
line is free text (it differs between releases), so it is kept verbatim.
"""

from __future__ import annotations

from collections.abc import Iterator, MutableMapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Final

from recompile_doctor.events import (
    CacheLookup,
    CompileActivity,
    CompileFinished,
    CompileKey,
    CompileStarted,
    FrameworkNote,
    RecompileReason,
    Span,
    TypedEvent,
)
from recompile_doctor.model import Event, ValueChange
from recompile_doctor.parsers._format import (
    RECOGNIZED,
    UNRECOGNIZED,
    Decoded,
    LineStatus,
    SkipMode,
)
from recompile_doctor.parsers._lazy_re import lazy_re
from recompile_doctor.parsers._memo import memo
from recompile_doctor.parsers._names import file_basename
from recompile_doctor.parsers._tuples import new_event, new_span, recognized

# detection's half of the format (the registry entry and sniff are this module's names too)
from recompile_doctor.parsers.ptxla_detect import (  # noqa: F401
    _COMPILE,
    _POST,
    _PREFIXES,
    ANCHORS,
    FRAMEWORK,
    PTXLA,
    sniff,
)
from recompile_doctor.slotted import remade_from_fields

#: each prefix ends with, and holds once, these words: a line starts with a prefix exactly
#: when its text up to their first occurrence is one
_PREFIX_END: Final = "Analysis: "
_PREFIX_SET: Final = frozenset(_PREFIXES)
_PREFIX_MAX: Final = max(map(len, _PREFIXES))
#: each prefix's bytes: the lines of a block the fast path hands over a run at a time
_PREFIX_BYTES: Final = {p: p.encode("ascii") for p in _PREFIXES}

_HASH_RE: Final = lazy_re(r"^Graph Hash: (?P<hash>\S+)$")
_COUNT_RE: Final = lazy_re(r"^Number of Graph (?P<what>Input|Output)s?: (?P<n>\d+)$")
_NAME_RE: Final = lazy_re(r"^Graph Name: (?P<name>.*)$")
_FRAME_RE: Final = lazy_re(r"^(?P<fn>\S+) \((?P<file>.+):(?P<line>\d+)\)$")
_HEADER_RE: Final = lazy_re(r"^(?P<kind>Metric|Counter): (?P<name>\S+)\s*$")
_METRIC_LINE_RE: Final = lazy_re(r"^  (?P<field>\w+): (?P<value>.*)$")
_PROFILER_RE: Final = lazy_re(
    r"pt-xla-profiler: (?P<metric>\w+) too frequent: (?P<n>\d+) counts during (?P<steps>\d+) steps"
)
#: parts of a file name that mark a frame as the framework's, not the user's
_LIBRARY_PARTS: Final = (
    "/site-packages/",
    "/dist-packages/",
    "/torch_xla/",
    "/torch/",
    "/lib/python",
)


@dataclass(slots=True, init=False, repr=False, eq=False)  # working state: never shown
class _Block:
    """One analysis block under way."""

    prefix: str
    lineno: int
    lines: list[str]
    linenos: list[int]
    rules: int  # the ``====`` lines seen

    def __init__(self, prefix: str = "", lineno: int = 0) -> None:
        # (written out, as torch's _Line is: compiled, and made without arguments by a copy)
        self.prefix = prefix
        self.lineno = lineno
        self.lines = []
        self.linenos = []
        self.rules = 0


@dataclass(frozen=True, slots=True, init=False)
class _Graph:
    """What one PyTorch/XLA compile report says of its graph."""

    cause: str | None
    graph_hash: str | None
    inputs: int | None
    outputs: int | None
    name: str | None
    frames: tuple[tuple[str, str, int], ...]  # (function, file, line), innermost first

    def __init__(
        self,
        cause: str | None = None,
        graph_hash: str | None = None,
        inputs: int | None = None,
        outputs: int | None = None,
        name: str | None = None,
        frames: tuple[tuple[str, str, int], ...] = (),
    ) -> None:
        # (written out, as the __init__ of _Block is: the one dataclasses writes runs
        # interpreted in the compiled build, 8,850 instructions a graph; defaults, as mypyc
        # makes an object without arguments first when it copies one)
        object.__setattr__(self, "cause", cause)
        object.__setattr__(self, "graph_hash", graph_hash)
        object.__setattr__(self, "inputs", inputs)
        object.__setattr__(self, "outputs", outputs)
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "frames", frames)

    def __reduce__(self) -> tuple[Any, ...]:
        return remade_from_fields(self)  # (a copy in the compiled build: see there)

    @property
    def user_frame(self) -> tuple[str, str, int] | None:
        for fr in self.frames:
            path = fr[1].replace("\\", "/")
            if not any(p in path for p in _LIBRARY_PARTS):
                return fr
        return self.frames[0] if self.frames else None


def _read_graph_info(body: str) -> tuple[str, str | None]:
    """What a line of a block's "Graph Info" section says: ("hash", the hash), ("Input" or
    "Output", the count's digits), ("name", the name or None), or ("", None)."""
    if (m := _HASH_RE.match(body)) is not None:
        return "hash", m["hash"]
    if (m := _COUNT_RE.match(body)) is not None:
        return m["what"], m["n"]
    if (m := _NAME_RE.match(body)) is not None:
        return "name", m["name"].strip() or None
    return "", None


def _read_frame(body: str) -> tuple[str, str, int] | None:
    """(function, file, line) of a line of a block's "Python Frame" section, or None."""
    m = _FRAME_RE.match(body)
    return None if m is None else (m["fn"], m["file"], int(m["line"]))


# (a run's blocks repeat their frames and counts, and a graph's hash as often as it runs:
# each distinct line is matched once, not once per block)
_graph_info: Final = memo(_read_graph_info)
_frame: Final = memo(_read_frame)


def _parse_graph(lines: Sequence[str]) -> _Graph:
    cause: str | None = None
    ghash: str | None = None
    counts: dict[str, int] = {}
    name: str | None = None
    frames: list[tuple[str, str, int]] = []
    section = ""
    for text in lines:
        body = text.strip()
        if not text.startswith("  "):
            section = body.rstrip(":").strip()
            continue
        if section.endswith("Cause"):
            cause = cause or body
        elif section == "Graph Info":
            what, value = _graph_info(body)
            if what == "hash":
                ghash = value
            elif what == "name":
                name = value
            elif what and value is not None:
                counts[what] = int(value)
        elif section.startswith("Python Frame") and (frame := _frame(body)) is not None:
            frames.append(frame)
    return _Graph(cause, ghash, counts.get("Input"), counts.get("Output"), name, tuple(frames))


def _graph_of_block(text: str) -> _Graph:
    """:func:`_parse_graph` of a block's lines, from its text (each line its prefix, ending
    with the first :data:`_PREFIX_END`, then what the block's list of lines holds)."""
    cut = text.find(_PREFIX_END) + len(_PREFIX_END)
    return _parse_graph([ln[cut:] for ln in text.split("\n")])


# (an execution's block is the same, word for word, each time a step runs the same graph)
_graph_of: Final = memo(_graph_of_block, 1024)


class PtxlaDecoder:
    """Decoder of one PyTorch/XLA log (debug analysis blocks and metrics reports)."""

    #: only looked up, never iterated: the order their entries came in makes no difference
    #: (a worker that read a later part of the log learns them in another order)
    UNORDERED_STATE: ClassVar[frozenset[str]] = frozenset({"_last_hash"})
    #: the parent's share of the log with two processes (see :mod:`._parallel`): its cache
    #: lookups and metrics cost the parent's timeline more than their lines cost a worker
    #: (the instructions of each process's reading, counted on 24 MB of the bench log:
    #: parent and worker 1.92 and 1.29 G at 0.39, 1.75 and 1.57 at 0.25, 1.63 and 1.77 at
    #: 0.15; once the parent made the events it takes back in C, 1.60 and 1.66 at 0.2, 1.63
    #: and 1.61 at 0.22; once a worker's events were encoded and made faster, 1.48 and 1.43
    #: at 0.22, 1.47 and 1.45 at 0.21).  Counted since on 48 MB, a size read by two
    #: processes (from 32 MiB on; the even split grows with the size, as JAX's): 2.46 and
    #: 2.95 G at 0.21, 2.59 and 2.76 at 0.26, 2.68 and 2.66 at 0.29; once packed chunks
    #: were no longer compressed, 2.42 and 2.66 at 0.29, 2.51 and 2.55 at 0.32, 2.54 and
    #: 2.52 at 0.33, 2.56 and 2.48 at 0.34; once a block's lines were read through memos,
    #: 2.34 and 2.28 at 0.33, 2.42 and 2.19 at 0.36; once a block's lines came a run at a
    #: time (``collect``), 1.76 and 1.94 at 0.21, 1.80 and 1.89 at 0.23, 1.82 and 1.85 at
    #: 0.25, 1.89 and 1.75 at 0.29, 1.95 and 1.65 at 0.33
    PARENT_SHARE: ClassVar[float] = 0.25
    #: a block's lines up to its rules (``====``) may come a run at a time (see Decoder)
    COLLECT_STOP: ClassVar[bytes] = b"====="

    def __init__(self, path: str) -> None:
        self.path = path
        self.continuing = False
        self._block: _Block | None = None
        #: the prefix of the block under way, as bytes (None: none under way)
        self.collect_prefix: bytes | None = None
        # the graph hash compiled last and not executed since, per user function
        self._fresh: str | None = None
        self._last_hash: MutableMapping[str, tuple[str, _Graph]] = {}  # function -> (hash, graph)
        self._open_key: CompileKey | None = None
        self._metrics: dict[str, dict[str, str]] = {}
        self._metrics_line = 0
        self._metric_name: str | None = None

    # -- the driver's interface ----------------------------------------------------------
    #: the lines without a key string tell this decoder nothing (no clock): never passed
    wants_skipped: SkipMode = "none"

    def skipped(self, lineno: int, raw: str) -> None:
        return None

    def finish(self) -> Iterator[TypedEvent]:
        out: list[TypedEvent] = []
        blk = self._block
        self._open(None)
        if blk is not None:
            out.extend(self._close(blk))
        out.extend(self._flush_metrics())
        self.continuing = False
        return iter(out)

    def decode(self, lineno: int, raw: str) -> Decoded:
        blk = self._block
        if blk is not None and self._metric_name is None and raw.startswith(blk.prefix):
            # the next line of the block under way (most lines read): as below, in short
            # (a line starts with a prefix exactly when its text up to _PREFIX_END is one)
            events = self._block_line(blk, raw.rstrip("\r\n")[len(blk.prefix) :], lineno)
            if events is None:
                return RECOGNIZED
            self.continuing = False
            return recognized(events)
        text = raw.rstrip("\r\n")
        out: list[TypedEvent] = []
        if self._metric_name is not None:
            m = _METRIC_LINE_RE.match(text)
            if m is not None:
                self._metrics[self._metric_name][m["field"]] = m["value"].strip()
                return Decoded("recognized")
            self._metric_name = None
            if _HEADER_RE.match(text) is None:
                out.extend(self._flush_metrics())
        end = text.find(_PREFIX_END, 0, _PREFIX_MAX) + len(_PREFIX_END)
        prefix = text[:end] if end > len(_PREFIX_END) and text[:end] in _PREFIX_SET else None
        blk = self._block
        if blk is not None and prefix != blk.prefix:
            out.extend(self._close(blk))
            blk = self._open(None)
        status: LineStatus = "recognized"
        problem: str | None = None
        if prefix is not None:
            body = text[len(prefix) :]
            if blk is None:
                if not body.startswith("="):
                    status, problem = "malformed", f"{prefix.strip()} line outside a block"
                else:
                    blk = self._open(_Block(prefix, lineno))
            if blk is not None:
                out.extend(self._block_line(blk, body, lineno) or ())
        elif text.startswith("Computation hash: "):
            if self._open_key is not None:
                rec = self._record(
                    "compile-activity", lineno, text, detail={"computation_hash": text[18:]}
                )
                out.append(CompileActivity(self._span(lineno, text), rec))
        elif (m := _HEADER_RE.match(text)) is not None:
            if not self._metrics:
                self._metrics_line = lineno
            self._metric_name = f"{m['kind']}: {m['name']}"
            self._metrics[self._metric_name] = {}
        elif (pm := _PROFILER_RE.search(text)) is not None:
            detail = {"metric": pm["metric"], "count": int(pm["n"]), "steps": int(pm["steps"])}
            rec = self._record("xla-profiler", lineno, text, detail=dict(detail))
            out.append(
                FrameworkNote(self._span(lineno, text), rec, "xla-too-frequent", None, detail)
            )
        else:
            status = "unrecognized"
        self.continuing = self._block is not None or self._metric_name is not None
        if problem is not None:
            return Decoded("malformed", tuple(out), problem)
        if status == "recognized":
            return recognized(out)
        return Decoded(status, tuple(out)) if out else UNRECOGNIZED

    # -- blocks --------------------------------------------------------------------------
    def _open(self, blk: _Block | None) -> _Block | None:
        """``blk`` is the block under way now (None: none is)."""
        self._block = blk
        self.collect_prefix = _PREFIX_BYTES[blk.prefix] if blk is not None else None
        return blk

    def collect(self, lineno: int, bodies: list[str]) -> None:
        """Lines of the block under way from line ``lineno`` on, none of them a rule, each
        its text after the prefix (the fast path's run of them: see Decoder): added as
        :meth:`decode` adds each."""
        blk = self._block
        if blk is None:
            raise ValueError("no block under way")
        blk.lines.extend(bodies)
        blk.linenos.extend(range(lineno, lineno + len(bodies)))

    def _block_line(self, blk: _Block, body: str, lineno: int) -> list[TypedEvent] | None:
        """Add a line (its text after the prefix) to the block under way; the block's
        events when the line is its closing rule (the second), which ends it, else None."""
        blk.lines.append(body)
        blk.linenos.append(lineno)
        if body.startswith("====="):
            blk.rules += 1
            if blk.rules >= 2:
                events = self._close(blk)
                self._open(None)
                return events
        return None

    def _span(self, lineno: int, text: str) -> Span:
        return new_span(self.path, lineno, text)

    def _record(
        self, kind: str, lineno: int, text: str, detail: dict[str, object] | None = None
    ) -> Event:
        """The record of the message; ``detail``, its fields in the order the report writes
        them, a new dict of the caller's (see ``JaxDecoder._record`` in ``jax``)."""
        d = {} if detail is None else detail
        return new_event(kind, self.path, lineno, None, text, detail=d)

    def _close(self, blk: _Block) -> list[TypedEvent]:
        self.continuing = False
        # (one join, without a string made per line)
        text = blk.prefix + ("\n" + blk.prefix).join(blk.lines) if blk.lines else ""
        span = new_span(self.path, blk.lineno, text)
        if blk.prefix == _POST:
            key, self._open_key = self._open_key, None
            if key is None:
                return []
            rec = self._record(
                "compile-end", blk.lineno, text, detail={"graph_hash": key.graph_hash}
            )
            return [CompileFinished(span, rec, key)]
        g = _graph_of(text)
        uf = g.user_frame
        fn = uf[0] if uf is not None else None
        key = CompileKey(FRAMEWORK, fn, g.name, graph_hash=g.graph_hash)
        site = f"{file_basename(uf[1])}:{uf[2]}" if uf is not None else None
        if blk.prefix == _COMPILE:
            return self._compiled(blk, g, key, site, span, text)
        # an execution: of the graph just compiled, or of one from the in-memory cache
        if g.graph_hash is not None and g.graph_hash == self._fresh:
            self._fresh = None
            return []
        self._fresh = None
        rec = self._record(
            "cache-hit",
            blk.lineno,
            text,
            detail={"store": "xla", "graph_hash": g.graph_hash, "function": fn},
        )
        return [CacheLookup(span, rec, "xla", "hit", key, g.graph_hash)]

    def _compiled(
        self, blk: _Block, g: _Graph, key: CompileKey, site: str | None, span: Span, text: str
    ) -> list[TypedEvent]:
        out: list[TypedEvent] = []
        if self._open_key is not None:
            out.append(CompileFinished(span, None, self._open_key))
        detail = {
            "graph_hash": g.graph_hash,
            "cause": g.cause,
            "inputs": g.inputs,
            "outputs": g.outputs,
            "function": key.function,
            "call_site": site,
        }
        rec = self._record("compile-begin", blk.lineno, text, detail=dict(detail))
        fn = key.function or "?"
        prev = self._last_hash.get(fn)
        if g.graph_hash is not None:
            self._last_hash[fn] = (g.graph_hash, g)
        if prev is not None and g.graph_hash is not None and prev[0] != g.graph_hash:
            # the reason comes first: it belongs to the compilation of its function that
            # starts next
            out.append(self._reason(blk, g, prev[1], key, site, span, text))
        out.append(CompileStarted(span, rec, key, arguments=_io(g)))
        # a compilation means the in-memory cache missed (LookupCachedCompile: UncachedCompile)
        out.append(CacheLookup(span, None, "xla", "miss", key, g.graph_hash))
        self._open_key = key
        self._fresh = g.graph_hash
        return out

    def _reason(
        self,
        blk: _Block,
        g: _Graph,
        old: _Graph,
        key: CompileKey,
        site: str | None,
        span: Span,
        text: str,
    ) -> RecompileReason:
        fn = key.function or "?"
        changes = [ValueChange(fn, "graph hash", old.graph_hash, g.graph_hash)]
        if old.inputs != g.inputs and old.inputs is not None and g.inputs is not None:
            changes.append(ValueChange(fn, "graph inputs", str(old.inputs), str(g.inputs)))
        if old.outputs != g.outputs and old.outputs is not None and g.outputs is not None:
            changes.append(ValueChange(fn, "graph outputs", str(old.outputs), str(g.outputs)))
        sited = tuple(
            ValueChange(c.function, c.what, c.old, c.new, site, self.path, blk.lineno)
            for c in changes
        )
        reason = (
            f"new graph hash {g.graph_hash} for {fn} (was {old.graph_hash}); "
            f"compilation cause: {g.cause or '?'}"
        )
        rrec = self._record(
            "recompile-reason",
            blk.lineno,
            text,
            detail={"function": fn, "rule": "graph-changed", "reason": reason},
        )
        return RecompileReason(
            span, rrec, key, "graph-changed", reason, sited, site, tuple(blk.linenos)
        )

    def _flush_metrics(self) -> list[TypedEvent]:
        if not self._metrics:
            return []
        metrics, self._metrics = self._metrics, {}
        counters: dict[str, int] = {}
        samples: dict[str, int] = {}
        for name, fields in metrics.items():
            kind, _, short = name.partition(": ")
            raw = fields.get("Value") if kind == "Counter" else fields.get("TotalSamples")
            if raw is None or not raw.isdigit():
                continue
            (counters if kind == "Counter" else samples)[short] = int(raw)
        detail: dict[str, object] = {
            "counters": counters,
            "metrics": samples,
            "compile_time_samples": samples.get("CompileTime"),
            "uncached_compiles": counters.get("UncachedCompile"),
            "cached_compiles": counters.get("CachedCompile"),
            "persistent_cache_hits": counters.get("PersistentCacheHit"),
            "persistent_cache_misses": counters.get("PersistentCacheMiss"),
        }
        line = self._metrics_line
        text = f"metrics report ({len(metrics)} entries)"
        rec = self._record("xla-metrics", line, text, detail=dict(detail))
        return [FrameworkNote(self._span(line, text), rec, "xla-metrics", None, detail)]


def _io(g: _Graph) -> str | None:
    if g.inputs is None and g.outputs is None:
        return None
    return f"{g.inputs if g.inputs is not None else '?'} inputs, " + (
        f"{g.outputs if g.outputs is not None else '?'} outputs"
    )
