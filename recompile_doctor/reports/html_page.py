"""What the HTML report shows, computed from the :class:`~recompile_doctor.reports.view.
ReportView` (no markup here).

The templates only lay out and escape; every number, ordering, anchor id and highlight span is
decided here or in the report view, deterministically, so it can be tested without a browser.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from recompile_doctor.model import Report
from recompile_doctor.reports.anchors import Anchors, slug
from recompile_doctor.reports.durations import fmt_seconds
from recompile_doctor.reports.excerpts import Excerpt, excerpt, merge_excerpts
from recompile_doctor.reports.glossary import GLOSSARY, glossary_for
from recompile_doctor.reports.hlo_changes import ChangeGroup, change_groups
from recompile_doctor.reports.module_numbers import ModuleNumbers
from recompile_doctor.reports.view import (
    ChangeLine,
    FindingView,
    FunctionRow,
    ReportView,
    likeness,
    report_view,
)
from recompile_doctor.rules import RULES
from recompile_doctor.wording import plural

#: distinct evidence excerpts shown in full (with context) per finding; the others one line each
FULL_EXCERPTS = 3
#: evidence lines listed at all per finding
MAX_EVIDENCE = 200
#: instruction changes shown per finding (the diff command shows them all)
FINDING_CHANGES = 5


@dataclass(frozen=True, slots=True)
class HtmlFinding:
    """A finding as the HTML page shows it: its view, links and evidence excerpts."""

    id: str
    number: int
    view: FindingView
    links: tuple[tuple[str, str, int], ...]
    full: tuple[Excerpt, ...]
    short: tuple[Excerpt, ...]
    #: how many of ``short`` are like a line shown in full ("5 more like it")
    alike: int
    more_evidence: int
    changes: tuple[ChangeGroup, ...]

    # the template reads these as before
    @property
    def rule(self) -> str:
        return self.view.rule

    @property
    def severity(self) -> str:
        return self.view.severity

    @property
    def title(self) -> str:
        return self.view.title

    @property
    def wasted_seconds(self) -> float:
        return self.view.wasted_seconds

    @property
    def value_changes(self) -> tuple[ChangeLine, ...]:
        return self.view.changes


def html_finding(n: int, f: FindingView, anchors: Anchors) -> HtmlFinding:
    fid = anchors.take(f"finding-{n}-{slug(f.rule)}")
    shown = f.evidence[:MAX_EVIDENCE]
    seen: set[str] = set()
    full_idx: list[int] = []
    for k, e in enumerate(shown):
        key = likeness(e.message)
        if key not in seen and len(full_idx) < FULL_EXCERPTS:
            full_idx.append(k)
        seen.add(key)
    full_keys = {likeness(shown[k].message) for k in full_idx}
    # (the modules the shown lines name: a finding can list 263,000, each looked for in
    # every line otherwise)
    lines = "\n".join(e.evidence.text for e in shown)
    named = [m for m in f.finding.modules if m and m in lines]
    excerpts = [
        excerpt(
            e.evidence,
            anchors.evidence(e.source, e.line),
            named,
            k in full_idx,
            anchors.label(e.source),
        )
        for k, e in enumerate(shown)
    ]
    short_idx = [k for k in range(len(shown)) if k not in full_idx]
    return HtmlFinding(
        id=fid,
        number=n,
        view=f,
        links=tuple((x.id, x.label, x.line) for x in excerpts),
        full=merge_excerpts([excerpts[k] for k in full_idx]),
        short=tuple(excerpts[k] for k in short_idx),
        alike=sum(1 for k in short_idx if likeness(shown[k].message) in full_keys),
        more_evidence=len(f.evidence) - len(shown),
        changes=change_groups(f.finding.diff, FINDING_CHANGES),
    )


@dataclass(frozen=True, slots=True)
class Headline:
    """The HTML page's opening: its sentence, verdict and top cause."""

    sentence: str
    verdict: str
    verdict_class: str
    top_cause: HtmlFinding | None
    causes: int
    functions: int


def headline(v: ReportView, findings: Sequence[HtmlFinding]) -> Headline:
    h = v.headline
    parts = [plural(h.compilations, "compilation")]
    if h.functions:
        parts[0] += f" of {plural(h.functions, 'function')}"
    parts.append(f"{h.after_warmup:,} after warm-up" if h.after_warmup else "none after warm-up")
    parts.append(plural(h.causes, "cause") if h.causes else "no problem found")
    sentence = ", ".join(parts) + "."
    worst = v.report.worst_severity()
    if not v.report.compilations and not v.report.findings:
        verdict = v.hint or "No compilation was found in the input."
        cls = "empty"
    elif worst in ("warning", "error"):
        verdict = (
            f"{plural(h.problems, 'problem')} cost about {fmt_seconds(h.wasted_seconds)}: "
            "fix the causes below, costliest first."
            if h.wasted_seconds
            else f"{plural(h.problems, 'problem')} found (no time measured): see the causes "
            "below, worst first."
        )
        cls = "bad" if worst == "error" else "warn"
    else:
        verdict, cls = "Healthy: nothing recompiles after warm-up.", "ok"
    top = None
    if h.top is not None:
        top = next((x for x in findings if x.view is h.top), None)
    return Headline(sentence, verdict, cls, top, h.causes, h.functions)


@dataclass(frozen=True, slots=True)
class Page:
    """Everything the HTML report's template reads."""

    report: Report
    view: ReportView
    headline: Headline
    findings: tuple[HtmlFinding, ...]
    functions: tuple[FunctionRow, ...]
    glossary: tuple[tuple[str, str], ...] = GLOSSARY
    rules: dict[str, str] = field(default_factory=dict)


def page(report: Report, numbers: ModuleNumbers | None = None) -> Page:
    """The page's view of ``report`` (``numbers``: its compilations' module numbers, if
    counted: see :func:`~recompile_doctor.reports.view.function_rows`)."""
    v = report_view(report, numbers)
    anchors = Anchors(
        [ev.source for f in report.findings for ev in f.evidence] + [i.path for i in report.inputs]
    )
    findings = tuple(html_finding(n, f, anchors) for n, f in enumerate(v.findings, 1))
    return Page(
        report=report,
        view=v,
        headline=headline(v, findings),
        findings=findings,
        functions=v.functions,
        # (the frameworks of the function rows are the compilations': no pass over those)
        glossary=glossary_for(r.framework for r in v.functions),
        rules={k: r.title for k, r in sorted(RULES.items())},
    )
