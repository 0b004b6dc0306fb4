"""What the HTML templates show, computed from a :class:`Report` (no markup here).

The templates only lay out and escape; every number, ordering, anchor id, highlight span and
abbreviation is decided here, deterministically, so it can be tested without a browser.
"""

from __future__ import annotations

import difflib
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import regex

from recompile_doctor.model import (
    Compilation,
    DiffEvidence,
    Evidence,
    Finding,
    Report,
    sort_findings,
)
from recompile_doctor.rules import RULES

#: evidence excerpts shown in full (with context) per finding; later ones are one line each
FULL_EXCERPTS = 3
#: evidence lines listed at all per finding
MAX_EVIDENCE = 200
#: instruction changes shown per finding (or per module in a diff report)
MAX_CHANGES = 40
#: a ``{...}`` list with more values than this is abbreviated
MAX_LIST_VALUES = 8


# --------------------------------------------------------------------------- text spans


@dataclass(frozen=True, slots=True)
class Span:
    """A piece of text and whether it is marked (matched, or changed)."""

    text: str
    mark: bool = False
    elided: bool = False


def _spans(text: str, ranges: Iterable[tuple[int, int]]) -> tuple[Span, ...]:
    merged: list[list[int]] = []
    for a, b in sorted(r for r in ranges if r[1] > r[0]):
        if merged and a <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b])
    out: list[Span] = []
    pos = 0
    for a, b in merged:
        if a > pos:
            out.append(Span(text[pos:a]))
        out.append(Span(text[a:b], True))
        pos = b
    if pos < len(text) or not out:
        out.append(Span(text[pos:]))
    return tuple(out)


#: the parts of a log line that make it evidence: the messages the Graphcore note tells you
#: to look for, hashes, durations and cache file names
_KEY = regex.compile(
    r"Begin XLA compilation|End XLA compilation|Starting phase: graphConstruction"
    r"|Ending phase: Loading executable|Loading executable|Couldn't find|\bLoaded\b"
    r"|attached to|Compiled cluster|retracing|Recompil\w*"
    r"|\(?Hash:? 0x[0-9a-fA-F]+\)?|\bduration \d+(?:\.\d+)? ?m?s\b|[\w./-]{0,256}\.poplar_exec",
    regex.I,
)


def highlight(text: str, needles: Sequence[str] = ()) -> tuple[Span, ...]:
    """``text`` with the matched parts marked: key phrases, hashes, durations, and the
    ``needles`` (the finding's module names)."""
    ranges = [m.span() for m in _KEY.finditer(text)]
    for n in needles:
        if not n:
            continue
        start = text.find(n)
        while start >= 0:
            ranges.append((start, start + len(n)))
            start = text.find(n, start + len(n))
    return _spans(text, ranges)


# --------------------------------------------------------------------------- anchors


_SLUG = regex.compile(r"[^A-Za-z0-9]+")


def slug(text: str) -> str:
    """A lower-case anchor fragment of letters, digits and dashes (never empty)."""
    s = _SLUG.sub("-", text).strip("-").lower()
    return s[-60:].lstrip("-") or "x"


def basename(path: str) -> str:
    """The last part of a path (either slash)."""
    return path.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1] or path


class Anchors:
    """Unique, deterministic element ids: ``ev-<source-slug>-<line>`` for evidence lines
    (``-2``, ``-3``... for the same line shown again), one slug per distinct source."""

    def __init__(self, sources: Iterable[str]) -> None:
        self._source: dict[str, str] = {}
        used: set[str] = set()
        for src in sorted(set(sources)):
            base = slug(src.rsplit("/", 1)[-1]) if src else "input"
            s, k = base, 1
            while s in used:
                k += 1
                s = f"{base}{k}"
            used.add(s)
            self._source[src] = s
        self._taken: set[str] = set()
        base_names: dict[str, set[str]] = defaultdict(set)
        for src in self._source:
            base_names[basename(src)].add(src)
        self._label = {
            src: basename(src) if len(base_names[basename(src)]) == 1 else src
            for src in self._source
        }

    def label(self, src: str) -> str:
        """How a source is named next to its lines: its file name when that is unambiguous."""
        return self._label.get(src, src)

    def source(self, src: str) -> str:
        if src not in self._source:
            self._source[src] = slug(src)
        return self._source[src]

    def take(self, base: str) -> str:
        s, k = base, 1
        while s in self._taken:
            k += 1
            s = f"{base}-{k}"
        self._taken.add(s)
        return s

    def evidence(self, src: str, line: int) -> str:
        return self.take(f"ev-{self.source(src)}-{line}")


# --------------------------------------------------------------------------- evidence


@dataclass(frozen=True, slots=True)
class Row:
    """A numbered log line; ``id`` (its anchor) is set on evidence lines."""

    number: int
    spans: tuple[Span, ...]
    match: bool
    id: str | None = None


@dataclass(frozen=True, slots=True)
class Excerpt:
    """Consecutive lines of one source, one or more of them evidence lines."""

    source: str
    rows: tuple[Row, ...]
    label: str = ""

    @property
    def matches(self) -> tuple[Row, ...]:
        return tuple(r for r in self.rows if r.match)

    @property
    def id(self) -> str:
        return self.matches[0].id or ""

    @property
    def line(self) -> int:
        return self.matches[0].number


def excerpt(
    ev: Evidence, anchor: str, needles: Sequence[str], context: bool, label: str | None = None
) -> Excerpt:
    rows: list[Row] = []
    if context:
        first = ev.line - len(ev.before)
        rows += [
            Row(first + i, (Span(t),), False) for i, t in enumerate(ev.before) if first + i >= 1
        ]
    rows.append(Row(ev.line, highlight(ev.text, needles), True, anchor))
    if context:
        rows += [Row(ev.line + 1 + i, (Span(t),), False) for i, t in enumerate(ev.after)]
    return Excerpt(ev.source, tuple(rows), label or ev.source)


def merge_excerpts(xs: Sequence[Excerpt]) -> tuple[Excerpt, ...]:
    """Excerpts of the same source whose lines overlap or touch become one block, so a line
    is shown once; evidence lines keep their anchors and win over context lines."""
    out: list[Excerpt] = []
    for x in xs:
        prev = out[-1] if out else None
        if (
            prev is not None
            and prev.source == x.source
            and x.rows[0].number <= prev.rows[-1].number + 1
            and x.rows[-1].number >= prev.rows[0].number
        ):
            by: dict[int, Row] = {r.number: r for r in prev.rows}
            for r in x.rows:
                if r.number not in by or (r.match and not by[r.number].match):
                    by[r.number] = r
            out[-1] = Excerpt(x.source, tuple(by[k] for k in sorted(by)), x.label)
        else:
            out.append(x)
    return tuple(out)


# --------------------------------------------------------------------------- HLO diffs


_TOKEN = regex.compile(r"%[\w.\-]+|[A-Za-z_][\w.\-]*|[-+]?\d[\w.+\-]*|\s+|\S", regex.V1)


def _tokens(text: str) -> list[str]:
    return _TOKEN.findall(text)


def _changed_flags(a: list[str], b: list[str]) -> tuple[list[bool], list[bool]]:
    fa = [False] * len(a)
    fb = [False] * len(b)
    sm = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for op, i1, i2, j1, j2 in sm.get_opcodes():
        if op == "equal":
            continue
        for i in range(i1, i2):
            fa[i] = not a[i].isspace()
        for j in range(j1, j2):
            fb[j] = not b[j].isspace()
    return fa, fb


def _abbreviate(tokens: list[str], flags: list[bool]) -> tuple[Span, ...]:
    """Spans of the tokens, with ``{...}`` lists of more than :data:`MAX_LIST_VALUES` values
    cut to their first and last values and a marker saying how many were left out (marked
    as changed when a left-out value changed)."""
    out: list[Span] = []

    def emit(text: str, mark: bool, elided: bool = False) -> None:
        if out and not elided and not out[-1].elided and out[-1].mark == mark:
            out[-1] = Span(out[-1].text + text, mark)
        else:
            out.append(Span(text, mark, elided))

    i = 0
    n = len(tokens)
    while i < n:
        if tokens[i] == "{":
            # find the matching brace and the value boundaries at depth 1
            depth = 0
            commas: list[int] = []
            j = i
            while j < n:
                t = tokens[j]
                if t == "{":
                    depth += 1
                elif t == "}":
                    depth -= 1
                    if depth == 0:
                        break
                elif t == "," and depth == 1:
                    commas.append(j)
                j += 1
            if j < n and len(commas) + 1 > MAX_LIST_VALUES:
                keep_head = commas[3]  # first 4 values
                keep_tail = commas[-2]  # last 2 values
                for k in range(i, keep_head + 1):
                    emit(tokens[k], flags[k])
                hidden = range(keep_head + 1, keep_tail)
                n_hidden = len(commas) + 1 - 6
                emit(f"… {n_hidden} more values …", any(flags[k] for k in hidden), elided=True)
                for k in range(keep_tail, j + 1):
                    emit(tokens[k], flags[k])
                i = j + 1
                continue
        emit(tokens[i], flags[i])
        i += 1
    return tuple(out)


#: above this many characters, lists are abbreviated before diffing (diffing is quadratic)
_DIFF_CHARS = 20_000


@dataclass(frozen=True, slots=True)
class Change:
    kind: str
    op_name: str | None
    detail: str
    a_instruction: str | None
    b_instruction: str | None
    a: tuple[Span, ...] | None
    b: tuple[Span, ...] | None


def change(d: DiffEvidence) -> Change:
    """One old -> new instruction pair with the changed tokens marked and long constants
    abbreviated."""
    a_text = d.a_text
    b_text = d.b_text
    if a_text is not None and len(a_text) > _DIFF_CHARS:
        ta = _tokens(a_text)
        a_text = "".join(s.text for s in _abbreviate(ta, [False] * len(ta)))
    if b_text is not None and len(b_text) > _DIFF_CHARS:
        tb = _tokens(b_text)
        b_text = "".join(s.text for s in _abbreviate(tb, [False] * len(tb)))
    ta = _tokens(a_text) if a_text is not None else []
    tb = _tokens(b_text) if b_text is not None else []
    fa, fb = _changed_flags(ta, tb)
    return Change(
        kind=d.kind,
        op_name=d.op_name,
        detail=d.detail,
        a_instruction=d.a_instruction,
        b_instruction=d.b_instruction,
        a=_abbreviate(ta, fa) if a_text is not None else None,
        b=_abbreviate(tb, fb) if b_text is not None else None,
    )


@dataclass(frozen=True, slots=True)
class ChangeGroup:
    """The changes of one module between two dumps."""

    module: str
    a_path: str | None
    b_path: str | None
    changes: tuple[Change, ...]
    more: int


def change_groups(
    diffs: Sequence[DiffEvidence], limit: int = MAX_CHANGES
) -> tuple[ChangeGroup, ...]:
    groups: dict[tuple[str, str | None, str | None], list[DiffEvidence]] = defaultdict(list)
    order: list[tuple[str, str | None, str | None]] = []
    for d in diffs:
        key = (d.module, d.a_path, d.b_path)
        if key not in groups:
            order.append(key)
        groups[key].append(d)
    out = []
    for key in order:
        items = groups[key]
        out.append(
            ChangeGroup(
                key[0],
                key[1],
                key[2],
                tuple(change(d) for d in items[:limit]),
                max(len(items) - limit, 0),
            )
        )
    return tuple(out)


# --------------------------------------------------------------------------- findings


@dataclass(frozen=True, slots=True)
class FindingView:
    id: str
    number: int
    rule: str
    severity: str
    consideration: int | None
    title: str
    detail: str
    advice: str
    modules: tuple[str, ...]
    count: int
    wasted_seconds: float
    links: tuple[tuple[str, str, int], ...]
    full: tuple[Excerpt, ...]
    short: tuple[Excerpt, ...]
    more_evidence: int
    changes: tuple[ChangeGroup, ...]


def finding_views(findings: Sequence[Finding], anchors: Anchors) -> tuple[FindingView, ...]:
    out = []
    for n, f in enumerate(findings, 1):
        fid = anchors.take(f"finding-{n}-{slug(f.rule)}")
        shown = f.evidence[:MAX_EVIDENCE]
        excerpts = [
            excerpt(
                ev,
                anchors.evidence(ev.source, ev.line),
                f.modules,
                k < FULL_EXCERPTS,
                anchors.label(ev.source),
            )
            for k, ev in enumerate(shown)
        ]
        out.append(
            FindingView(
                id=fid,
                number=n,
                rule=f.rule,
                severity=f.severity,
                consideration=f.consideration,
                title=f.title,
                detail=f.detail,
                advice=f.advice,
                modules=f.modules,
                count=f.count,
                wasted_seconds=f.wasted_seconds,
                links=tuple((x.id, x.label, x.line) for x in excerpts),
                full=merge_excerpts(excerpts[:FULL_EXCERPTS]),
                short=tuple(excerpts[FULL_EXCERPTS:]),
                more_evidence=len(f.evidence) - len(shown),
                changes=change_groups(f.diff),
            )
        )
    return tuple(out)


# --------------------------------------------------------------------------- modules


@dataclass(frozen=True, slots=True)
class ModuleRow:
    module: str
    compilations: int
    after_warmup: int
    hashes: int
    cache: tuple[tuple[str, int], ...]
    seconds: float
    has_durations: bool
    first_source: str
    first_line: int

    @property
    def compiled(self) -> int:
        return sum(n for k, n in self.cache if k != "hit")


def module_rows(compilations: Sequence[Compilation]) -> tuple[ModuleRow, ...]:
    """Per module: compilations, how many after warm-up, distinct hashes, cache outcomes and
    time spent (compiling, or loading from the cache on a hit); the modules that recompile most after warm-up first."""
    by: dict[str, list[Compilation]] = defaultdict(list)
    for c in compilations:
        by[c.module].append(c)
    rows = []
    for mod, cs in by.items():
        counts: dict[str, int] = defaultdict(int)
        for c in cs:
            counts[c.cache] += 1
        rows.append(
            ModuleRow(
                module=mod,
                compilations=len(cs),
                after_warmup=sum(not c.warmup for c in cs),
                hashes=len({c.hash for c in cs if c.hash is not None}),
                cache=tuple(
                    (k, counts[k]) for k in ("miss", "disabled", "hit", "unknown") if counts[k]
                ),
                seconds=sum(c.duration_s or 0.0 for c in cs),
                has_durations=any(c.duration_s is not None for c in cs),
                first_source=cs[0].source,
                first_line=cs[0].line,
            )
        )
    rows.sort(key=lambda r: (-r.after_warmup, -r.seconds, -r.compilations, r.module))
    return tuple(rows)


# --------------------------------------------------------------------------- headline


@dataclass(frozen=True, slots=True)
class Headline:
    sentence: str
    verdict: str
    verdict_class: str
    top_cause: FindingView | None
    causes: int
    modules: int


def _plural(n: int, word: str, plural: str | None = None) -> str:
    return f"{n:,} {word if n == 1 else (plural or word + 's')}"


def headline(report: Report, views: Sequence[FindingView]) -> Headline:
    s = report.summary
    problems = [v for v in views if v.severity != "info"]
    causes = len({v.rule for v in problems})
    modules = len({c.module for c in report.compilations})
    parts = [_plural(s.compilations, "compilation")]
    if modules:
        parts[0] += f" of {_plural(modules, 'module')}"
    late = s.recompilations_after_warmup
    parts.append(f"{late:,} after warm-up" if late else "none after warm-up")
    parts.append(_plural(causes, "cause") if causes else "no problem found")
    sentence = ", ".join(parts) + "."
    worst = report.worst_severity()
    if not report.compilations and not report.findings:
        verdict, cls = (
            "No compilation was found in the input. The log shows compilations when "
            "TF_CPP_VMODULE='poplar_compiler=1' or TF_POPLAR_VLOG_LEVEL=1 is set.",
            "empty",
        )
    elif worst in ("warning", "error"):
        verdict = (
            f"{_plural(len(problems), 'problem')} cost about {fmt_seconds(s.wasted_seconds)}: "
            "fix the causes below, worst first."
            if s.wasted_seconds
            else f"{_plural(len(problems), 'problem')} found: see the causes below, worst first."
        )
        cls = "bad" if worst == "error" else "warn"
    else:
        verdict, cls = "Healthy: nothing recompiles after warm-up.", "ok"
    return Headline(
        sentence=sentence,
        verdict=verdict,
        verdict_class=cls,
        top_cause=problems[0] if problems else None,
        causes=causes,
        modules=modules,
    )


def fmt_seconds(v: float | None) -> str:
    """``0.61 s``, ``41.0 s``, ``12 min 5 s``, ``1 h 02 min``."""
    if v is None:
        return "–"
    if v < 1:
        return f"{v * 1000:.0f} ms" if v else "0 s"
    if v < 60:
        return f"{v:.1f} s"
    m, sec = divmod(round(v), 60)
    if m < 60:
        return f"{m} min {sec} s"
    h, m = divmod(m, 60)
    return f"{h} h {m:02d} min"


def fmt_bytes(n: int) -> str:
    if n < 1024:
        return f"{n} B"
    if n < 1024 * 1024:
        return f"{n / 1024:.1f} KiB"
    return f"{n / 1024 / 1024:.1f} MiB"


# --------------------------------------------------------------------------- glossary


GLOSSARY: tuple[tuple[str, str], ...] = (
    (
        "Compilation",
        "Turning a graph (an XLA module, identified by its HLO hash) into an executable for "
        "the device. On the IPU this can take minutes; the log shows it as "
        "'Begin XLA compilation: <module> (Hash: 0x…)'.",
    ),
    (
        "Recompilation",
        "Compiling a module again. After warm-up every recompilation is time lost, and the "
        "report names its cause.",
    ),
    (
        "Warm-up",
        "The first compilations of each module (and everything before the first executed "
        "step). They are expected; hatched bars in the timeline are after warm-up.",
    ),
    (
        "Executable cache",
        "A directory (TF_POPLAR_FLAGS=--executable_cache_path=…) holding compiled executables "
        "as <hash>.poplar_exec files, so a later process can load instead of compiling.",
    ),
    (
        "Cache hit / miss",
        "A hit loads the executable from the cache ('Loaded <module> from …'); a miss compiles "
        "it and saves it ('Couldn't find … in executable cache'). With no cache configured, "
        "every compilation is 'no cache'.",
    ),
    (
        "Executable load / switching",
        "Loading an executable onto the device ('Ending phase: Loading executable (duration "
        "… ms)'). When several graphs take turns on one device, each turn loads again: "
        "executable switching.",
    ),
    (
        "HLO",
        "XLA's intermediate representation of a graph. With XLA_FLAGS=--xla_dump_to=DIR the "
        "HLO of each compilation is written to text files; comparing two of them shows what "
        "changed.",
    ),
    (
        "Hash",
        "A fingerprint of a module's HLO. The same hash means the same graph; a new hash for "
        "the same module means the graph changed.",
    ),
    (
        "Time wasted",
        "Compile and load time after warm-up that a fix would save.",
    ),
)


# --------------------------------------------------------------------------- page


@dataclass(frozen=True, slots=True)
class Page:
    report: Report
    headline: Headline
    findings: tuple[FindingView, ...]
    modules: tuple[ModuleRow, ...]
    glossary: tuple[tuple[str, str], ...] = GLOSSARY
    rules: dict[str, str] = field(default_factory=dict)


def page(report: Report) -> Page:
    anchors = Anchors(
        [ev.source for f in report.findings for ev in f.evidence] + [i.path for i in report.inputs]
    )
    views = finding_views(sort_findings(report.findings), anchors)
    return Page(
        report=report,
        headline=headline(report, views),
        findings=views,
        modules=module_rows(report.compilations),
        rules={k: r.title for k, r in sorted(RULES.items())},
    )
