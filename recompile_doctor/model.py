"""Frozen value types at the core of every analysis.

Data flows one way: input -> parsers -> :class:`Event` -> timeline -> :class:`Compilation`
-> analyses -> :class:`Finding` -> :class:`Report` -> renderers.  A report's JSON form
(:meth:`Report.to_json`) is also its saved form: :meth:`Report.from_json` reads it back so
a report can be re-rendered without the logs.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, Protocol, cast, runtime_checkable

from recompile_doctor._version import __version__
from recompile_doctor.json_text import (
    ITEM_HEADS,
    dumps_indented,
    event_items,
    event_text,
    fields_items,
    fields_text,
    pieces_indented,
)
from recompile_doctor.read_at import FileSpan
from recompile_doctor.slotted import faster_init

if TYPE_CHECKING:
    from recompile_doctor.events_json import EventsText

SCHEMA_REPORT = "recompile-doctor/report/1"

Severity = Literal["info", "warning", "error"]
CacheOutcome = Literal["hit", "miss", "disabled", "unknown"]
#: the frameworks whose logs the parsers read (a compilation's ``framework``)
Framework = Literal["poplar", "jax", "tensorflow", "torch", "ptxla"]
FRAMEWORKS: tuple[str, ...] = ("poplar", "jax", "tensorflow", "torch", "ptxla")
SEVERITY_RANK: dict[str, int] = {"info": 0, "warning": 1, "error": 2}

JsonDict = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Evidence:
    """One verbatim input line behind a finding, with optional surrounding lines."""

    source: str
    line: int
    text: str
    before: tuple[str, ...] = ()
    after: tuple[str, ...] = ()

    def to_json(self) -> JsonDict:
        out: JsonDict = {"source": self.source, "line": self.line, "text": self.text}
        if self.before or self.after:
            out["context"] = {"before": list(self.before), "after": list(self.after)}
        return out

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Evidence:
        ctx = d.get("context") or {}
        return cls(
            source=str(d["source"]),
            line=int(d["line"]),
            text=str(d["text"]),
            before=tuple(ctx.get("before", ())),
            after=tuple(ctx.get("after", ())),
        )


#: the detail of an event that has none (read-only: shared by all of them)
_NO_DETAIL: Mapping[str, Any] = MappingProxyType({})
#: the keys of an event's and a compilation's JSON, in order
EVENT_KEYS = ("kind", "source", "line", "t", "module", "hash", "detail", "text")
COMPILATION_KEYS = (
    "id",
    "module",
    "hash",
    "source",
    "line",
    "t",
    "duration_s",
    "cache",
    "warmup",
    "cause",
    "end_line",
    "cache_file",
    "ordinal",
    "text",
    "framework",
    "function",
    "compile_id",
    "rank",
    "cache_key",
    "eager",
)


class Event(NamedTuple):
    """One recognized log line turned into a fact.

    ``kind`` is one of :data:`recompile_doctor.parsers.events.EVENT_KINDS`; ``detail`` holds
    the message's fields (paths, durations, ...).  ``text`` is the verbatim line.  (A named
    tuple: a decoder builds one per recognized line, and a tuple is built fastest.)
    """

    kind: str
    source: str
    line: int
    t: float | None
    text: str
    module: str | None = None
    hash: str | None = None
    detail: Mapping[str, Any] = _NO_DETAIL

    def evidence(self) -> Evidence:
        return Evidence(self.source, self.line, self.text)

    def _json_values(self) -> tuple[Any, ...]:
        return (
            self.kind,
            self.source,
            self.line,
            self.t,
            self.module,
            self.hash,
            dict(self.detail),
            self.text,
        )

    def to_json(self) -> JsonDict:
        return dict(zip(EVENT_KEYS, self._json_values(), strict=True))

    def json_text(self, level: int) -> str:
        """``dumps_indented(self.to_json(), level)``, faster (:func:`event_text`)."""
        return event_text(EVENT_KEYS, self, level)

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Event:
        return cls(
            kind=str(d["kind"]),
            source=str(d["source"]),
            line=int(d["line"]),
            t=_opt_float(d.get("t")),
            text=str(d.get("text", "")),
            module=d.get("module"),
            hash=d.get("hash"),
            detail=dict(d.get("detail") or {}),
        )


@dataclass(frozen=True, slots=True)
class Compilation:
    """One request to compile a module: a real compile, or an executable-cache hit."""

    id: int
    module: str
    hash: str | None
    source: str
    line: int
    t: float | None
    duration_s: float | None
    cache: CacheOutcome
    warmup: bool
    cause: str | None = None
    end_line: int | None = None
    cache_file: str | None = None
    ordinal: int | None = None
    text: str = ""
    framework: str = "poplar"
    #: the user's function (``train_step``), without the framework's decoration
    function: str | None = None
    #: the framework's own id of this compilation (torch ``"0/3"``), if it has one
    compile_id: str | None = None
    rank: int | None = None
    #: the key of a persistent or executable cache entry, when the log names it
    cache_key: str | None = None
    #: an operation compiled outside any user function (JAX's ``jit(argmax)`` on host data)
    eager: bool = False

    @property
    def compiled(self) -> bool:
        """True when the backend really compiled (not loaded from the cache)."""
        return self.cache != "hit"

    def _json_values(self) -> tuple[Any, ...]:
        return (
            self.id,
            self.module,
            self.hash,
            self.source,
            self.line,
            self.t,
            self.duration_s,
            self.cache,
            self.warmup,
            self.cause,
            self.end_line,
            self.cache_file,
            self.ordinal,
            self.text,
            self.framework,
            self.function,
            self.compile_id,
            self.rank,
            self.cache_key,
            self.eager,
        )

    def to_json(self) -> JsonDict:
        return dict(zip(COMPILATION_KEYS, self._json_values(), strict=True))

    def json_text(self, level: int) -> str:
        """``dumps_indented(self.to_json(), level)``, faster (a report writes thousands)."""
        return fields_text(COMPILATION_KEYS, self._json_values(), level)

    @property
    def function_name(self) -> str:
        """The function this compiles, for display (the module name when unknown)."""
        return self.function or self.module

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Compilation:
        return cls(
            id=int(d["id"]),
            module=str(d["module"]),
            hash=d.get("hash"),
            source=str(d["source"]),
            line=int(d["line"]),
            t=_opt_float(d.get("t")),
            duration_s=_opt_float(d.get("duration_s")),
            cache=cast(CacheOutcome, d.get("cache", "unknown")),
            warmup=bool(d.get("warmup", False)),
            cause=d.get("cause"),
            end_line=d.get("end_line"),
            cache_file=d.get("cache_file"),
            ordinal=d.get("ordinal"),
            text=str(d.get("text", "")),
            framework=str(d.get("framework", "poplar")),
            function=d.get("function"),
            compile_id=d.get("compile_id"),
            rank=d.get("rank"),
            cache_key=d.get("cache_key"),
            eager=bool(d.get("eager", False)),
        )


@dataclass(frozen=True, slots=True)
class DiffEvidence:
    """An instruction-level change behind a finding (from ``--dumps``): old -> new."""

    kind: str
    module: str
    a_instruction: str | None
    a_text: str | None
    b_instruction: str | None
    b_text: str | None
    op_name: str | None = None
    detail: str = ""
    a_path: str | None = None
    b_path: str | None = None

    def to_json(self) -> JsonDict:
        return {
            "kind": self.kind,
            "module": self.module,
            "a": {"instruction": self.a_instruction, "text": self.a_text, "path": self.a_path},
            "b": {"instruction": self.b_instruction, "text": self.b_text, "path": self.b_path},
            "op_name": self.op_name,
            "detail": self.detail,
        }

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> DiffEvidence:
        a = d.get("a") or {}
        b = d.get("b") or {}
        return cls(
            kind=str(d["kind"]),
            module=str(d.get("module", "")),
            a_instruction=a.get("instruction"),
            a_text=a.get("text"),
            b_instruction=b.get("instruction"),
            b_text=b.get("text"),
            op_name=d.get("op_name"),
            detail=str(d.get("detail", "")),
            a_path=a.get("path"),
            b_path=b.get("path"),
        )


@faster_init  # (one per changed value a decoder reads: see slotted.faster_init)
@dataclass(frozen=True, slots=True)
class ValueChange:
    """What changed between two compilations of a function: ``what`` went from ``old`` to
    ``new`` (an argument's shape or type, a static value, a flag), and where it was called."""

    function: str
    what: str
    old: str | None
    new: str | None
    call_site: str | None = None
    source: str | None = None  # the input that shows it
    line: int | None = None

    def to_json(self) -> JsonDict:
        return {
            "function": self.function,
            "what": self.what,
            "old": self.old,
            "new": self.new,
            "call_site": self.call_site,
            "source": self.source,
            "line": self.line,
        }

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> ValueChange:
        return cls(
            function=str(d.get("function", "")),
            what=str(d.get("what", "")),
            old=None if d.get("old") is None else str(d["old"]),
            new=None if d.get("new") is None else str(d["new"]),
            call_site=d.get("call_site"),
            source=d.get("source"),
            line=d.get("line"),
        )


@dataclass(frozen=True, slots=True)
class Finding:
    """A diagnosed cause of (re)compilation, with the evidence behind it and the fix."""

    rule: str
    severity: Severity
    consideration: int | None
    title: str
    detail: str
    advice: str
    #: sorted, each once (a long list is kept out of memory: timeline.name_set)
    modules: Sequence[str]
    count: int
    wasted_seconds: float
    evidence: tuple[Evidence, ...]
    diff: tuple[DiffEvidence, ...] = ()
    #: old -> new values behind the finding, one per recompilation (capped)
    changes: tuple[ValueChange, ...] = ()

    def to_json(self, *, streamed: bool = False) -> JsonDict:
        out: JsonDict = {
            "rule": self.rule,
            "severity": self.severity,
            "consideration": self.consideration,
            "title": self.title,
            "detail": self.detail,
            "advice": self.advice,
            # (streamed: a long list as it is, read once as its text is written in pieces)
            "modules": self.modules if streamed else list(self.modules),
            "count": self.count,
            "wasted_seconds": round(self.wasted_seconds, 6),
            "evidence": [e.to_json() for e in self.evidence],
        }
        if self.diff:
            out["diff"] = [d.to_json() for d in self.diff]
        if self.changes:
            out["changes"] = [c.to_json() for c in self.changes]
        return out

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Finding:
        return cls(
            rule=str(d["rule"]),
            severity=cast(Severity, d["severity"]),
            consideration=d.get("consideration"),
            title=str(d["title"]),
            detail=str(d["detail"]),
            advice=str(d["advice"]),
            modules=tuple(d.get("modules", ())),
            count=int(d.get("count", 0)),
            wasted_seconds=float(d.get("wasted_seconds", 0.0)),
            evidence=tuple(Evidence.from_json(e) for e in d.get("evidence", ())),
            diff=tuple(DiffEvidence.from_json(x) for x in d.get("diff", ())),
            changes=tuple(ValueChange.from_json(x) for x in d.get("changes", ())),
        )


@dataclass(frozen=True, slots=True)
class InputInfo:
    """One input file as read: its path, detected format, line and byte counts."""

    path: str
    format: str
    lines: int
    bytes: int

    def to_json(self) -> JsonDict:
        return {"path": self.path, "format": self.format, "lines": self.lines, "bytes": self.bytes}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> InputInfo:
        return cls(str(d["path"]), str(d["format"]), int(d["lines"]), int(d["bytes"]))


@dataclass(frozen=True, slots=True)
class ParseStats:
    """How many lines were recognized, unrecognized, or looked known but failed to parse."""

    recognized: int = 0
    unrecognized: int = 0
    malformed: int = 0

    def __add__(self, other: ParseStats) -> ParseStats:
        return ParseStats(
            self.recognized + other.recognized,
            self.unrecognized + other.unrecognized,
            self.malformed + other.malformed,
        )

    def to_json(self) -> JsonDict:
        return {
            "recognized": self.recognized,
            "unrecognized": self.unrecognized,
            "malformed": self.malformed,
        }

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> ParseStats:
        return cls(int(d["recognized"]), int(d["unrecognized"]), int(d["malformed"]))


@dataclass(frozen=True, slots=True)
class Summary:
    """The headline numbers of a run."""

    compilations: int = 0
    cache_hits: int = 0
    cache_misses: int = 0
    loads: int = 0
    distinct_graphs: int = 0
    recompilations_after_warmup: int = 0
    compile_seconds: float = 0.0
    load_seconds: float = 0.0
    wasted_seconds: float = 0.0
    #: per cache store (``executable``, ``persistent``, ``tracing``, ``fx-graph``, ...):
    #: outcome -> count
    cache_by_store: Mapping[str, Mapping[str, int]] = field(default_factory=dict)

    def to_json(self) -> JsonDict:
        return {
            "compilations": self.compilations,
            "cache_hits": self.cache_hits,
            "cache_misses": self.cache_misses,
            "loads": self.loads,
            "distinct_graphs": self.distinct_graphs,
            "recompilations_after_warmup": self.recompilations_after_warmup,
            "compile_seconds": round(self.compile_seconds, 6),
            "load_seconds": round(self.load_seconds, 6),
            "wasted_seconds": round(self.wasted_seconds, 6),
            "cache_by_store": {k: dict(v) for k, v in sorted(self.cache_by_store.items())},
        }

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Summary:
        return cls(
            compilations=int(d["compilations"]),
            cache_hits=int(d["cache_hits"]),
            cache_misses=int(d["cache_misses"]),
            loads=int(d["loads"]),
            distinct_graphs=int(d["distinct_graphs"]),
            recompilations_after_warmup=int(d["recompilations_after_warmup"]),
            compile_seconds=float(d["compile_seconds"]),
            load_seconds=float(d["load_seconds"]),
            wasted_seconds=float(d["wasted_seconds"]),
            cache_by_store={
                str(k): {str(o): int(n) for o, n in v.items()}
                for k, v in (d.get("cache_by_store") or {}).items()
            },
        )


def events_json(events: Iterable[Event]) -> Iterator[str]:
    """:func:`list_items_json` of a report's events (compiled in a compiled build)."""
    return event_items(events, EVENT_KEYS)


@runtime_checkable
class CompilationRows(Protocol):
    """A sequence of compilations that gives each one's field values, in the order of its
    fields, without making it (the timeline's columns: ``timeline.table``)."""

    def value_rows(self) -> Iterator[tuple[Any, ...]]: ...


def compilations_json(compilations: Sequence[Compilation]) -> Iterator[str]:
    """:func:`list_items_json` of a report's compilations: from their values where the
    sequence gives them (:class:`CompilationRows`; compiled in a compiled build), without
    making each compilation to read its values back."""
    if isinstance(compilations, CompilationRows):
        return fields_items(compilations.value_rows(), COMPILATION_KEYS)
    return list_items_json(compilations)


def list_items_json(items: Iterable[InputInfo | Compilation | Event | Finding]) -> Iterator[str]:
    """The text of the items of one of a report's lists in its JSON (between ``[`` and the
    list's last line), one piece per item."""
    for n, item in enumerate(items):
        head = ITEM_HEADS[0] if n == 0 else ITEM_HEADS[1]
        if isinstance(item, (Event, Compilation)):
            yield head + item.json_text(2)
        else:  # (a finding can name 100,000 modules: its text in pieces)
            yield head
            data = item.to_json(streamed=True) if isinstance(item, Finding) else item.to_json()
            yield from pieces_indented(data, 2)


@dataclass(frozen=True, slots=True)
class Report:
    """Everything an analysis found; renderers turn it into text, JSON, Markdown or HTML."""

    inputs: tuple[InputInfo, ...]
    parse: ParseStats
    summary: Summary
    compilations: Sequence[Compilation]  # (a run's: columns, each object made when read)
    #: in log order; a long run's are read back from a temporary file as they are iterated
    events: Sequence[Event]
    findings: tuple[Finding, ...]
    tool_version: str = __version__
    #: the JSON text of ``events``, being written by a second process (``analyze(...,
    #: events_json=True)``): :meth:`iter_json` copies it instead of writing the events
    events_text: EventsText | None = field(default=None, compare=False, repr=False)

    def close(self) -> None:
        """Remove the temporary files a long run's events (and a very long run's
        compilations, and a finding's list of many modules) are read back from, now rather
        than when the report is dropped (they cannot be read after that).  A report is also
        a context manager: ``with analyze(log) as report: ...``."""
        if self.events_text is not None:
            self.events_text.close()
        # (a finding's long list of modules is kept in a temporary file too)
        for kept in (self.events, self.compilations, *(f.modules for f in self.findings)):
            close = getattr(kept, "close", None)
            if close is not None:
                close()

    def __enter__(self) -> Report:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def worst_severity(self) -> Severity | None:
        if not self.findings:
            return None
        return max((f.severity for f in self.findings), key=lambda s: SEVERITY_RANK[s])

    def to_json(self) -> JsonDict:
        return {
            "schema": SCHEMA_REPORT,
            "tool_version": self.tool_version,
            "inputs": [i.to_json() for i in self.inputs],
            "parse": self.parse.to_json(),
            "summary": self.summary.to_json(),
            "compilations": [c.to_json() for c in self.compilations],
            "events": [e.to_json() for e in self.events],
            "findings": [f.to_json() for f in self.findings],
        }

    def dumps(self) -> str:
        """The saved form: deterministic, indented JSON (exactly ``json.dumps(to_json(),
        indent=2)``), built one list item at a time so that a report of many events never
        holds all their dictionaries at once."""
        return "".join(self.iter_json()) + "\n"

    def iter_json(self) -> Iterator[str]:
        """:meth:`dumps` in pieces, for writing a big report without building it whole."""
        for piece in self._json_pieces(raw=False):
            assert not isinstance(piece, FileSpan)  # (given only with spans)
            yield piece if isinstance(piece, str) else piece.decode("utf-8")

    def iter_json_bytes(self) -> Iterator[bytes]:
        """:meth:`iter_json` as UTF-8 bytes, the events' text written by the second process
        copied as it wrote it (not decoded and encoded again: 250 MB of text for the
        640,000 events of a 250 MB JAX log)."""
        for piece in self._json_pieces(raw=True):
            assert not isinstance(piece, FileSpan)  # (given only with spans)
            yield piece if isinstance(piece, bytes) else piece.encode("utf-8")

    def json_parts(self) -> Iterator[bytes | FileSpan]:
        """:meth:`iter_json_bytes`, the events' text written by the second process given as
        the span of its file that holds it (``read_at.FileSpan``), for a writer that has
        the system copy it (``read_at.copy_span``: not read into this process)."""
        for piece in self._json_pieces(raw=True, spans=True):
            yield piece.encode("utf-8") if isinstance(piece, str) else piece

    def _json_pieces(self, raw: bool, spans: bool = False) -> Iterator[str | bytes | FileSpan]:
        """:meth:`iter_json`'s pieces; ``raw``: the events' text of the second process as
        its bytes, or (``spans``) as the span of its file."""
        lists: dict[str, Sequence[InputInfo | Compilation | Event | Finding]] = {
            "inputs": self.inputs,
            "compilations": self.compilations,
            "events": self.events,
            "findings": self.findings,
        }
        head: JsonDict = {
            "schema": SCHEMA_REPORT,
            "tool_version": self.tool_version,
            "inputs": None,
            "parse": self.parse.to_json(),
            "summary": self.summary.to_json(),
            "compilations": None,
            "events": None,
            "findings": None,
        }
        yield "{"
        for k, (key, value) in enumerate(head.items()):
            yield ("\n  " if k == 0 else ",\n  ") + json.dumps(key) + ": "
            items = lists.get(key)
            if items is None:
                yield dumps_indented(value, 1)
            elif not items:
                yield "[]"
            else:
                yield "["
                ahead = self.events_text
                written: Iterable[str | bytes | FileSpan] | None = None
                if ahead is not None and ahead.events is items:
                    # (None: the second process failed)
                    if spans:
                        span = ahead.span()
                        written = None if span is None else (span,)
                    else:
                        written = ahead.raw() if raw else ahead.pieces()
                if written is None and key == "compilations" and ahead is not None:
                    written = ahead.compilation_pieces(self.compilations, raw)
                if written is None and key == "events":
                    written = events_json(self.events)
                if written is None and key == "compilations":
                    written = compilations_json(self.compilations)
                if written is None:
                    written = list_items_json(items)
                yield from written
                yield "\n  ]"
        yield "\n}"

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Report:
        if d.get("schema") != SCHEMA_REPORT:
            raise ValueError(f"not a recompile-doctor report (schema {d.get('schema')!r})")
        return cls(
            inputs=tuple(InputInfo.from_json(i) for i in d.get("inputs", ())),
            parse=ParseStats.from_json(d["parse"]),
            summary=Summary.from_json(d["summary"]),
            compilations=tuple(Compilation.from_json(c) for c in d.get("compilations", ())),
            events=tuple(Event.from_json(e) for e in d.get("events", ())),
            findings=tuple(Finding.from_json(f) for f in d.get("findings", ())),
            tool_version=str(d.get("tool_version", "")),
        )


def _opt_float(v: Any) -> float | None:
    return None if v is None else float(v)


def sort_findings(findings: Sequence[Finding]) -> tuple[Finding, ...]:
    """Worst first: severity, then wasted time, then rule id (deterministic)."""
    return tuple(
        sorted(findings, key=lambda f: (-SEVERITY_RANK[f.severity], -f.wasted_seconds, f.rule))
    )
