"""The one view of a :class:`Report` that every renderer draws from.

:func:`report_view` computes, once, what a reader sees whatever the output: the headline
(counts, after warm-up, causes, time wasted, the costliest cause), one row per user function
(name, framework, rank, compilations, distinct graphs, cache outcome, compile time, after
warm-up), the findings (title, why, old -> new changes, what to change, evidence), the
"how to log" hint and the cache stores.  Text, Markdown and HTML only lay it out.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import repeat
from typing import NamedTuple

from recompile_doctor.model import (
    SEVERITY_RANK,
    Compilation,
    Evidence,
    Finding,
    Report,
    ValueChange,
    sort_findings,
)
from recompile_doctor.reports.durations import fmt_seconds, fmt_wasted
from recompile_doctor.reports.messages import log_message
from recompile_doctor.reports.module_numbers import ModuleNumbers
from recompile_doctor.timeline import column
from recompile_doctor.timeline.distinct import DistinctCount
from recompile_doctor.timeline.names import function_key, graph_element
from recompile_doctor.wording import listed, plural

__all__ = [
    "CACHE_ORDER",
    "ChangeLine",
    "EvidenceLine",
    "FindingView",
    "FunctionRow",
    "Headline",
    "ReportView",
    "fmt_seconds",
    "fmt_wasted",
    "report_view",
]

#: cache outcomes in the order tables list them
CACHE_ORDER = ("miss", "disabled", "hit", "unknown")
#: cache outcome -> (one, many) as tables say it
CACHE_WORDS = {
    "miss": ("miss", "misses"),
    "disabled": ("no cache", "no cache"),
    "hit": ("hit", "hits"),
    "unknown": ("unknown", "unknown"),
    "write": ("write", "writes"),
}


# --------------------------------------------------------------------------- findings


# (a dataclass, not a named tuple, like FindingView: a field named ``count`` would hide
# tuple.count; the other view records are named tuples, several times cheaper to define)
@dataclass(frozen=True, slots=True)
class ChangeLine:
    """One old -> new value behind a finding: ``x: f32[32,16] → f32[8,16] at capture.py:144``
    (``count`` identical changes collapsed into one line)."""

    function: str
    what: str
    old: str | None
    new: str | None
    call_site: str | None
    count: int = 1

    def text(self, width: int | None = None) -> str:
        """The change as one line; with ``width``, long values are cut around the part that
        changed, never before it."""
        old = self.old if self.old is not None else "–"
        new = self.new if self.new is not None else "–"
        where = f" at {self.call_site}" if self.call_site else ""
        times = f" (×{self.count})" if self.count > 1 else ""
        head = f"{self.what}: " if self.what else ""
        if width is not None:
            room = width - len(head) - len(where) - len(times) - 3
            old, new = clip_pair(old, new, max(room // 2, 16))
        return f"{head}{old} → {new}{where}{times}"


def clip_pair(old: str, new: str, width: int) -> tuple[str, str]:
    """``old`` and ``new`` cut to about ``width`` characters each, keeping the first place
    where they differ in view (a long tuple shape that changed at its end stays readable)."""
    if len(old) <= width and len(new) <= width:
        return old, new
    start = 0
    while start < min(len(old), len(new)) and old[start] == new[start]:
        start += 1
    lead = max(start - width // 3, 0)

    def cut(s: str) -> str:
        piece = s[lead : lead + width]
        return ("…" if lead else "") + piece + ("…" if lead + width < len(s) else "")

    return cut(old), cut(new)


def change_lines(changes: Sequence[ValueChange]) -> tuple[ChangeLine, ...]:
    """The finding's changes, identical ones collapsed with a count, in first-seen order."""
    counts: Counter[tuple[str, str, str | None, str | None, str | None]] = Counter()
    order: list[tuple[str, str, str | None, str | None, str | None]] = []
    for c in changes:
        key = (c.function, c.what, c.old, c.new, c.call_site)
        if key not in counts:
            order.append(key)
        counts[key] += 1
    return tuple(ChangeLine(*k, count=counts[k]) for k in order)


class EvidenceLine(NamedTuple):
    """One log line behind a finding: where it is, and its message without the logger's
    prefix (time, level, source file)."""

    source: str
    line: int
    message: str
    evidence: Evidence

    @property
    def location(self) -> str:
        return f"{self.source}:{self.line}"


_VARIABLE = re.compile(r"0x[0-9a-fA-F]+|\d+")


def likeness(text: str) -> str:
    """``text`` with its numbers and hashes blanked: lines alike up to them are alike."""
    return _VARIABLE.sub("#", text)


def alike_groups(
    evidence: Sequence[EvidenceLine],
) -> list[tuple[EvidenceLine, list[EvidenceLine]]]:
    """Evidence lines grouped by likeness (same message up to numbers and hashes): the first
    of each group, and the others like it, in first-seen order."""
    groups: dict[tuple[str, str], tuple[EvidenceLine, list[EvidenceLine]]] = {}
    for e in evidence:
        key = (e.source, likeness(e.message))
        if key in groups:
            groups[key][1].append(e)
        else:
            groups[key] = (e, [])
    return list(groups.values())


def evidence_groups(
    evidence: Sequence[EvidenceLine],
) -> list[tuple[EvidenceLine, list[EvidenceLine]]]:
    """The evidence in log order, lines alike up to their numbers listed once with the
    others like them, from three on (two lines are often the before and after of the
    change: both are shown)."""
    collapsed = {id(first): others for first, others in alike_groups(evidence) if len(others) > 1}
    hidden = {id(o) for others in collapsed.values() for o in others}
    return [(e, collapsed.get(id(e), [])) for e in evidence if id(e) not in hidden]


@dataclass(frozen=True, slots=True)
class FindingView:
    """A finding as every renderer shows it: its rule's words, functions, changes and evidence."""

    finding: Finding
    rule: str
    severity: str
    consideration: int | None
    title: str
    why: str
    advice: str
    #: the functions concerned, by the names a user knows (TF trace ids dropped)
    functions: tuple[str, ...]
    count: int
    wasted_seconds: float
    changes: tuple[ChangeLine, ...]
    evidence: tuple[EvidenceLine, ...]

    @property
    def cost(self) -> str:
        """``12 min 5 s wasted``, or empty when the finding measured no time."""
        return f"{fmt_seconds(self.wasted_seconds)} wasted" if self.wasted_seconds else ""


def display_names(modules: Sequence[str]) -> tuple[str, ...]:
    """The user's function names of ``modules``, each once, in order."""
    return tuple(dict.fromkeys(function_key(m) for m in modules))


def finding_view(f: Finding, graphcore: bool = True) -> FindingView:
    return FindingView(
        finding=f,
        rule=f.rule,
        severity=f.severity,
        # the Considerations are those of Graphcore's note: shown for Poplar inputs only
        consideration=f.consideration if graphcore else None,
        title=f.title,
        why=f.detail,
        advice=f.advice,
        functions=display_names(f.modules),
        count=f.count,
        wasted_seconds=f.wasted_seconds,
        changes=change_lines(f.changes),
        evidence=tuple(EvidenceLine(e.source, e.line, log_message(e.text), e) for e in f.evidence),
    )


# --------------------------------------------------------------------------- functions


#: module names a function row's tooltip lists
MODULES_IN_TITLE = 10


class FunctionRow(NamedTuple):
    """The compilations of one user function (on one rank)."""

    function: str
    framework: str
    rank: int | None
    #: the first MODULES_IN_TITLE modules compiled, in order (a function retraced 100,000
    #: times has as many names: not held)
    modules: tuple[str, ...]
    #: how many distinct modules
    module_count: int
    compilations: int
    graphs: int
    cache: tuple[tuple[str, int], ...]
    #: time spent compiling (cache hits excluded: that time is loading)
    compile_seconds: float
    load_seconds: float
    has_durations: bool
    after_warmup: int
    first_source: str
    first_line: int

    @property
    def compiled(self) -> int:
        return sum(n for k, n in self.cache if k != "hit")

    @property
    def modules_title(self) -> str:
        """The modules compiled, for a tooltip: the first :data:`MODULES_IN_TITLE`, then how
        many others (a function retraced 100,000 times has as many module names)."""
        return listed(self.modules, self.module_count, "other module")

    @property
    def cache_text(self) -> str:
        """``2 misses, 1 hit``."""
        return ", ".join(f"{n} {CACHE_WORDS[k][0 if n == 1 else 1]}" for k, n in self.cache)


def function_name(c: Compilation) -> str:
    return c.function or function_key(c.module)


class _Pairs:
    """Which (module number, row) pairs were seen: each module's first row in an array, the
    pairs of the other rows in a set (a module compiled by two functions is rare)."""

    __slots__ = ("first", "more")

    def __init__(self, modules: int) -> None:
        # (for many modules, in a temporary file: :func:`column.numbers`)
        self.first = column.numbers("i", modules, fill=-1, at_random=True)
        self.more: set[tuple[int, int]] = set()

    def add(self, module: int, row: int) -> bool:
        """Whether the pair is new (it is seen from now on)."""
        first = self.first[module]
        if first == -1:
            self.first[module] = row
            return True
        if first == row:
            return False
        pair = (module, row)
        if pair in self.more:
            return False
        self.more.add(pair)
        return True


class _Numbered:
    """The function rows' distinct modules counted by module number (the page's
    :func:`~recompile_doctor.reports.module_numbers.module_numbers`) instead of by name: 8
    bytes a module for all rows instead of a fingerprint table per row (34 MB for the
    1,047,000 modules of one function of an 8 GB TensorFlow log)."""

    __slots__ = ("modules", "unhashed")

    def __init__(self, modules: int) -> None:
        self.modules = _Pairs(modules)  # (a module of a row)
        self.unhashed = _Pairs(modules)  # (a module of a row's compilation without a hash)


class _Unnumbered(Exception):
    """A graph told apart by a name that is not its compilation's module (a hash spelt
    ``module:<name>``): its rows are counted by name."""


class _RowSums:
    """One function row's counts, added up one compilation at a time (a run of 500,000
    compilations is read once, without a list of each function's)."""

    __slots__ = (
        "after_warmup",
        "cache",
        "compilations",
        "compile_seconds",
        "first",
        "has_durations",
        "hashes",
        "load_seconds",
        "module_n",
        "modules",
        "numbered",
        "others",
        "row",
        "unhashed",
        "unhashed_n",
    )

    def __init__(self, first: Compilation, row: int = 0, numbered: _Numbered | None = None) -> None:
        self.first = (first.source, first.line)
        self.modules: dict[str, None] = {}  # (the first MODULES_IN_TITLE)
        #: the others, counted once each (made for a function of more modules than that)
        self.others: DistinctCount | None = None
        self.compilations = 0
        # the distinct graphs, as the summary counts them (graph_element): the distinct
        # hashes, and the distinct modules of the compilations without one.  While no
        # compilation has a hash, those modules are the row's own (no table of their own:
        # a function retraced 500,000 times would hold two of as many names)
        self.hashes: DistinctCount | None = None
        self.unhashed: DistinctCount | None = None
        #: with module numbers: this row's place, and its distinct modules and distinct
        #: modules of compilations without a hash, counted there
        self.row = row
        self.numbered = numbered
        self.module_n = 0
        self.unhashed_n = 0
        self.cache: Counter[str] = Counter()
        self.compile_seconds = 0.0
        self.load_seconds = 0.0
        self.has_durations = False
        self.after_warmup = 0

    def add(self, c: Compilation, number: int | None = None) -> None:
        """Add compilation ``c`` (``number``: its module's, with module numbers)."""
        module = c.module
        numbered = self.numbered
        if numbered is not None:
            assert number is not None
            self._add_numbered(c.hash, module, number, numbered)
        else:
            self._add_graph(c.hash, module)  # (before the module: it may copy those so far)
        if module not in self.modules:
            if len(self.modules) < MODULES_IN_TITLE:
                self.modules[module] = None
            elif numbered is None:
                if self.others is None:
                    self.others = DistinctCount()
                self.others.add(module)
        self.compilations += 1
        self.cache[c.cache] += 1
        if c.compiled:
            self.compile_seconds += c.duration_s or 0.0
        else:
            self.load_seconds += c.duration_s or 0.0
        self.has_durations = self.has_durations or c.duration_s is not None
        self.after_warmup += not c.warmup

    def _add_numbered(
        self, hash_: str | None, module: str, number: int, numbered: _Numbered
    ) -> None:
        # (the distinct graphs are the distinct hashes and the distinct modules of the
        # compilations without one: what _add_graph counts, when every graph without a hash
        # is its compilation's module)
        hashed, name = graph_element(hash_, module)
        if hashed:
            if self.hashes is None:
                self.hashes = DistinctCount()
            self.hashes.add(name)
        elif name != module:
            raise _Unnumbered(name)
        elif numbered.unhashed.add(number, self.row):
            self.unhashed_n += 1
        if numbered.modules.add(number, self.row):
            self.module_n += 1

    def _add_graph(self, hash_: str | None, module: str) -> None:
        hashed, name = graph_element(hash_, module)
        if hashed:
            if self.hashes is None:
                self.hashes = DistinctCount()
                if self.unhashed is None and self.compilations:
                    self.unhashed = self._modules_so_far()  # (all without a hash)
            self.hashes.add(name)
            return
        if self.unhashed is None and (self.hashes is not None or name != module):
            # (the row's modules stop being its unhashed graphs from here on)
            self.unhashed = self._modules_so_far() if self.hashes is None else DistinctCount()
        if self.unhashed is not None:
            self.unhashed.add(name)

    def _modules_so_far(self) -> DistinctCount:
        """A count of the modules added so far, to be counted on alone."""
        count = self.others.copy() if self.others is not None else DistinctCount()
        for m in self.modules:
            count.add(m)
        return count

    def graphs(self) -> int:
        """The distinct graphs: see :func:`~recompile_doctor.timeline.names.graph_element`."""
        hashes = len(self.hashes) if self.hashes is not None else 0
        if self.numbered is not None:
            return hashes + self.unhashed_n
        if self.unhashed is not None:
            return hashes + len(self.unhashed)
        if self.hashes is None:  # no hash at all: each module is a graph
            return self.module_count()
        return hashes

    def module_count(self) -> int:
        """The distinct modules."""
        if self.numbered is not None:
            return self.module_n
        return len(self.modules) + (len(self.others) if self.others is not None else 0)


def function_rows(
    compilations: Iterable[Compilation], numbers: ModuleNumbers | None = None
) -> tuple[FunctionRow, ...]:
    """Per function (and rank): the functions that recompile most after warm-up first.
    ``numbers``: the compilations' module numbers, if counted (the distinct modules are
    then counted by number, not by name)."""
    if numbers is not None:
        try:
            return _function_rows(compilations, numbers)
        except _Unnumbered:
            pass  # (counted by name instead, from the start)
    return _function_rows(compilations, None)


def _function_rows(
    compilations: Iterable[Compilation], numbers: ModuleNumbers | None
) -> tuple[FunctionRow, ...]:
    by: dict[tuple[str, str, int | None], _RowSums] = {}
    numbered = _Numbered(numbers.count) if numbers is not None else None
    given: Iterable[int | None] = numbers.of if numbers is not None else repeat(None)
    for c, k in zip(compilations, given, strict=numbers is not None):
        key = (function_name(c), c.framework, c.rank)
        sums = by.get(key)
        if sums is None:
            sums = by[key] = _RowSums(c, len(by), numbered)
        sums.add(c, k)
    rows = []
    for (fn, fw, rank), r in by.items():
        counts = r.cache
        rows.append(
            FunctionRow(
                function=fn,
                framework=fw,
                rank=rank,
                modules=tuple(r.modules),
                module_count=r.module_count(),
                compilations=r.compilations,
                graphs=r.graphs(),
                cache=tuple((k, counts[k]) for k in CACHE_ORDER if counts[k]),
                compile_seconds=r.compile_seconds,
                load_seconds=r.load_seconds,
                has_durations=r.has_durations,
                after_warmup=r.after_warmup,
                first_source=r.first[0],
                first_line=r.first[1],
            )
        )
    rows.sort(
        key=lambda r: (
            -r.after_warmup,
            -r.compile_seconds,
            -r.compilations,
            r.function,
            r.rank if r.rank is not None else -1,
        )
    )
    return tuple(rows)


# --------------------------------------------------------------------------- headline


class Headline(NamedTuple):
    compilations: int
    cache_hits: int
    functions: int
    after_warmup: int
    causes: int
    wasted_seconds: float
    #: the costliest problem (most time wasted, then the worst severity); None when healthy
    top: FindingView | None
    problems: int

    @property
    def wasted(self) -> str:
        """``81 h 46 min wasted``, or ``no time measured`` when nothing was measured."""
        return fmt_wasted(self.wasted_seconds)

    @property
    def line(self) -> str:
        """One line: how many compilations, how many after warm-up, causes, time wasted,
        top cause."""
        hits = f" ({self.cache_hits:,} loaded from cache)" if self.cache_hits else ""
        out = f"{plural(self.compilations, 'compilation')}{hits}, "
        out += f"{self.after_warmup:,} after warm-up"
        if self.top is None:
            if self.compilations == 0:
                return out + "; no compilation activity recognized"
            return out + "; no recompilation problems found"
        out += f", {plural(self.causes, 'cause')}; {self.wasted}; top cause: {self.top.rule}"
        return out


def costliest(problems: Sequence[FindingView]) -> FindingView | None:
    """The problem that cost the most time (ties: the worst severity, then report order)."""
    if not problems:
        return None
    return min(
        enumerate(problems),
        key=lambda kv: (-kv[1].wasted_seconds, -SEVERITY_RANK[kv[1].severity], kv[0]),
    )[1]


def headline(
    report: Report, findings: Sequence[FindingView], functions: Sequence[FunctionRow] = ()
) -> Headline:
    """``functions``: the report's :func:`function_rows` (made from its compilations when
    not given)."""
    s = report.summary
    rows = functions or function_rows(report.compilations)
    problems = [v for v in findings if v.severity != "info"]
    return Headline(
        compilations=s.compilations,
        cache_hits=s.cache_hits,
        functions=len({r.function for r in rows}),
        after_warmup=s.recompilations_after_warmup,
        causes=len({v.rule for v in problems}),
        wasted_seconds=s.wasted_seconds,
        top=costliest(problems),
        problems=len(problems),
    )


# --------------------------------------------------------------------------- the view


#: the rules that compare two runs' cache keys
CROSSRUN_RULES = frozenset({"flags-changed", "compile-options-changed", "version-changed"})


class CrossRunRow(NamedTuple):
    """One part of the cache key that differs between two runs."""

    component: str
    a: str | None
    b: str | None
    rule: str
    function: str


class CrossRun(NamedTuple):
    """Why run B did not reuse what run A compiled: the two runs, the key parts side by side."""

    run_a: str
    run_b: str
    rows: tuple[CrossRunRow, ...]


def crossrun_views(findings: Sequence[FindingView]) -> tuple[CrossRun, ...]:
    """The cross-run comparisons among ``findings``: per pair of runs, what differs."""
    pairs: dict[tuple[str, str], list[CrossRunRow]] = {}
    for fv in findings:
        f = fv.finding
        if f.rule not in CROSSRUN_RULES:
            continue
        for ch in f.changes:
            b = ch.source or ""
            a = next((e.source for e in f.evidence if e.source != b), "")
            row = CrossRunRow(ch.what, ch.old, ch.new, f.rule, ch.function)
            rows = pairs.setdefault((a, b), [])
            if row not in rows:
                rows.append(row)
    return tuple(CrossRun(a, b, tuple(rows)) for (a, b), rows in pairs.items())


class ReportView(NamedTuple):
    report: Report
    headline: Headline
    functions: tuple[FunctionRow, ...]
    #: every finding, worst first
    findings: tuple[FindingView, ...]
    #: what to set so the frameworks log their compilations, when no compilation was found
    hint: str | None
    #: per cache store, outcome -> count
    cache_stores: tuple[tuple[str, tuple[tuple[str, int], ...]], ...]
    #: runs that did not reuse what an earlier run compiled, and why
    crossruns: tuple[CrossRun, ...] = ()

    @property
    def problems(self) -> tuple[FindingView, ...]:
        return tuple(f for f in self.findings if f.severity != "info")

    @property
    def infos(self) -> tuple[FindingView, ...]:
        return tuple(f for f in self.findings if f.severity == "info")

    @property
    def several_ranks(self) -> bool:
        """True when the run has compilations of more than one rank (show the rank then)."""
        return len({r.rank for r in self.functions}) > 1

    @property
    def several_frameworks(self) -> bool:
        return len({r.framework for r in self.functions}) > 1

    @property
    def parse_health(self) -> str:
        p = self.report.parse
        total_lines = sum(i.lines for i in self.report.inputs)
        names = ", ".join(i.path for i in self.report.inputs)
        return (
            f"{names}: {total_lines:,} lines, {p.recognized:,} recognized, "
            f"{p.unrecognized:,} unrecognized, {p.malformed:,} malformed"
        )

    @property
    def cache_line(self) -> str | None:
        """``caches: executable 2 misses; persistent 1 hit, 1 miss`` (None without stores)."""
        if not self.cache_stores:
            return None
        parts = []
        for store, outcomes in self.cache_stores:
            said = ", ".join(
                f"{n:,} {CACHE_WORDS.get(k, (k, k))[0 if n == 1 else 1]}" for k, n in outcomes if n
            )
            parts.append(f"{store} {said or 'unused'}")
        return "caches: " + "; ".join(parts)

    def row_name(self, row: FunctionRow) -> str:
        """The function's name, with its rank when the run has several."""
        if self.several_ranks and row.rank is not None:
            return f"{row.function} (rank {row.rank})"
        return row.function


def how_to_log_hint(report: Report) -> str | None:
    """What to do when the inputs show no compilation at all, in the words of the frameworks
    the inputs were detected as (every known framework when none was)."""
    from recompile_doctor.parsers import how_to_log

    if report.summary.compilations or not report.inputs:
        return None
    advice = how_to_log(i.format for i in report.inputs)
    if report.parse.recognized == 0:
        return (
            "No line of these inputs is a compile message of a framework recompile-doctor "
            f"reads. {advice}"
        )
    return f"No compilation was found. {advice}"


def report_view(report: Report, numbers: ModuleNumbers | None = None) -> ReportView:
    """The view of ``report`` (computed once; every renderer reads it).  ``numbers``: its
    compilations' module numbers, if counted (see :func:`function_rows`)."""
    from recompile_doctor.parsers import LOG_FORMATS

    others = {f.name for f in LOG_FORMATS if f.framework != "poplar"}
    graphcore = not report.inputs or any(i.format not in others for i in report.inputs)
    findings = tuple(finding_view(f, graphcore) for f in sort_findings(report.findings))
    stores = tuple(
        (store, tuple((k, int(n)) for k, n in sorted(outcomes.items())))
        for store, outcomes in sorted(report.summary.cache_by_store.items())
    )
    rows = function_rows(report.compilations, numbers)
    return ReportView(
        report=report,
        headline=headline(report, findings, rows),
        functions=rows,
        findings=findings,
        hint=how_to_log_hint(report),
        cache_stores=stores,
        crossruns=crossrun_views(findings),
    )
