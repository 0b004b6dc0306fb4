"""The HTML report: one self-contained page that shows the whole story of a run.

``render(report)`` gives the page as a string (the CLI writes it as UTF-8): a headline, a timeline and a cost chart
(matplotlib, inlined as SVG), the findings worst first with their log lines in context and
their instruction-level HLO changes side by side, a sortable per-function table, inputs and
parse health, and a glossary.  ``render_diff(result)`` gives the page of ``diff --html``.

Rules the page keeps:

* one file, no network: CSS, the optional JS and the plots are inlined, and a
  Content-Security-Policy forbids every request (the script is allowed by its hash);
* Jinja2 with autoescape: everything that comes from a log or a dump is escaped;
* deterministic: no date, sorted data, fixed ``svg.hashsalt`` -- same report, same bytes.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import TYPE_CHECKING, Any

import jinja2
from markupsafe import Markup

from recompile_doctor.heap_trim import give_back
from recompile_doctor.model import DiffEvidence, Report
from recompile_doctor.reports import draw_apart as drawing
from recompile_doctor.reports import pictures
from recompile_doctor.reports.anchors import Anchors, basename, slug
from recompile_doctor.reports.durations import fmt_bytes, fmt_seconds
from recompile_doctor.reports.glossary import DIFF_GLOSSARY
from recompile_doctor.reports.hlo_changes import ChangeGroup, change_groups
from recompile_doctor.reports.html_page import FULL_EXCERPTS, page
from recompile_doctor.reports.module_numbers import module_numbers
from recompile_doctor.reports.plot_data import MAX_LANES, marked_modules, plot_rows, survey
from recompile_doctor.reports.view import CACHE_WORDS
from recompile_doctor.rules import RULES

if TYPE_CHECKING:
    from recompile_doctor.differ.result import DiffResult, ModuleDiff

__all__ = ["render", "render_diff"]


def render(report: Report, *, draw_apart: bool | None = None) -> str:
    """The HTML report of ``report`` (same report, same text).  ``draw_apart``: draw the
    plots in a fresh process (:mod:`.draw_apart`); by default past
    :data:`~recompile_doctor.reports.draw_apart.APART_ABOVE` compilations."""
    # the modules numbered, the page's view made and the plots' pictures worked out before
    # the plots' libraries are imported (26 MB; for a big run, in another process), and
    # each phase's freed memory given back: peaks that were on top of one another (see
    # module_numbers)
    if draw_apart is None:
        draw_apart = len(report.compilations) > drawing.APART_ABOVE
    numbers = module_numbers(report.compilations)
    give_back()
    pg = page(report, numbers)
    give_back()
    links = {
        (x.source, row.number): row.id
        for f in pg.findings
        for x in (*f.full, *f.short)
        for row in x.rows
        if row.id
    }
    # the plots pass over the compilations a dozen times: made into rows once (a run's
    # are columns, each object made when read; a row holds what the plots read)
    comps = plot_rows(report.compilations)
    surveyed = survey(comps, MAX_LANES, marked_modules(report.events), numbers) if comps else None
    give_back()
    timeline_picture = pictures.timeline_picture(
        comps, report.events, links=links, surveyed=surveyed
    )
    del surveyed
    give_back()
    cost_picture = pictures.cost_picture(report.findings, comps, numbers=numbers)
    del comps, numbers
    give_back()
    timeline, cost = drawing.draw(timeline_picture, cost_picture, apart=draw_apart)
    del timeline_picture, cost_picture
    html = (
        _env()
        .get_template("report.html.j2")
        .render(
            page=pg,
            timeline=timeline,
            cost_svg=cost,
            full_excerpts=FULL_EXCERPTS,
            cache_words=CACHE_WORDS,
            pct=_pct,
            **_assets(),
            tool_version=report.tool_version,
        )
    )
    return html


# --------------------------------------------------------------------------- diff page


@dataclass(frozen=True, slots=True)
class _DiffModule:
    """One module pair as the HTML diff page shows it."""

    id: str
    name: str
    equivalent: bool
    causes: tuple[str, ...]
    #: (rule id, what changed, what to change)
    explanations: tuple[tuple[str, str, str], ...]
    #: (info rule id or None, message): what the HLO text cannot show
    notes: tuple[tuple[str | None, str], ...]
    #: why one folder is on both sides ("extra compilation in B ..."), or empty
    within: str
    count: int
    groups: tuple[ChangeGroup, ...]
    #: settings beside the HLO that changed: (rule id, file, field, old, new)
    settings: tuple[tuple[str, str, str, str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class _DiffPage:
    """Everything the HTML diff page's template reads."""

    a: str | None
    b: str | None
    sentence: str
    verdict: str
    verdict_class: str
    modules: tuple[_DiffModule, ...]
    unpaired_a: tuple[str, ...]
    unpaired_b: tuple[str, ...]


def render_diff(
    diff_result: DiffResult | Sequence[ModuleDiff] | Sequence[DiffEvidence],
    *,
    a: str | None = None,
    b: str | None = None,
    tool_version: str | None = None,
) -> bytes:
    """The page of ``diff --html``: per module pair, its causes and its instruction-level
    changes side by side (old -> new).

    ``diff_result`` is the differ's :class:`~recompile_doctor.differ.result.DiffResult`, a
    sequence of its :class:`~recompile_doctor.differ.result.ModuleDiff`, or a plain sequence
    of :class:`DiffEvidence` (grouped here by module).
    """
    from recompile_doctor._version import __version__
    from recompile_doctor.differ.result import DiffResult, ModuleDiff

    unpaired_a: tuple[str, ...] = ()
    unpaired_b: tuple[str, ...] = ()
    items: Sequence[ModuleDiff | DiffEvidence]
    if isinstance(diff_result, DiffResult):
        items = diff_result.modules
        unpaired_a = tuple(diff_result.unpaired_a)
        unpaired_b = tuple(diff_result.unpaired_b)
        a = a if a is not None else diff_result.a
        b = b if b is not None else diff_result.b
    else:
        items = diff_result
    anchors = Anchors(())
    modules: list[_DiffModule] = []
    loose: dict[str, list[DiffEvidence]] = {}
    for it in items:
        if isinstance(it, ModuleDiff):
            evs = it.to_evidence()
            modules.append(
                _DiffModule(
                    id=anchors.take(f"module-{slug(it.name)}"),
                    name=it.name,
                    equivalent=it.equivalent,
                    causes=tuple(it.causes),
                    explanations=tuple((c.rule, c.message, c.advice) for c in it.explanations),
                    notes=tuple((n.rule, n.message) for n in it.notes),
                    within=_within(it.within),
                    count=len(evs),
                    groups=change_groups(evs),
                    settings=tuple(
                        (st.rule, st.file, st.field, st.old or "(unset)", st.new or "(unset)")
                        for st in it.settings
                    ),
                )
            )
        else:
            loose.setdefault(it.module, []).append(it)
    for name, group in loose.items():
        modules.append(
            _DiffModule(
                id=anchors.take(f"module-{slug(name)}"),
                name=name,
                equivalent=not group,
                causes=(),
                explanations=(),
                notes=(),
                within="",
                count=len(group),
                groups=change_groups(group),
            )
        )
    differ = [m for m in modules if not m.equivalent]
    n = len(modules)
    sentence = (
        f"{n:,} module{'' if n == 1 else 's'} compared, "
        f"{len(differ):,} with changes that cause a recompilation."
    )
    if not modules:
        verdict, cls = "No module pair to compare.", "empty"
    elif differ:
        causes = sorted({c for m in differ for c in m.causes})
        verdict = "Recompiles: " + (", ".join(causes) if causes else "the graphs differ") + "."
        cls = "warn"
    else:
        verdict, cls = "Equivalent: nothing here causes a recompilation.", "ok"
    page = _DiffPage(
        a=a,
        b=b,
        sentence=sentence,
        verdict=verdict,
        verdict_class=cls,
        modules=tuple(modules),
        unpaired_a=unpaired_a,
        unpaired_b=unpaired_b,
    )
    html = (
        _env()
        .get_template("diff.html.j2")
        .render(
            d=page,
            rules={k: r.title for k, r in sorted(RULES.items())},
            glossary=DIFF_GLOSSARY,
            **_assets(),
            tool_version=tool_version or __version__,
        )
    )
    return html.encode("utf-8")


def _within(side: str | None) -> str:
    """Why one folder is on both sides of a comparison (empty for a comparison across)."""
    if side is None:
        return ""
    s = side.upper()
    other = "B" if s == "A" else "A"
    return (
        f"Extra compilation in {s}: {s} compiled this module more often than {other}; "
        f"compared with its previous compilation in {s}."
    )


# --------------------------------------------------------------------------- environment


def _pct(part: int, total: int) -> str:
    return f"{100.0 * part / total:.2f}" if total else "0"


def _num(n: int | float) -> str:
    return f"{n:,}"


@lru_cache(maxsize=1)
def _env() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("recompile_doctor.reports", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters["secs"] = fmt_seconds
    env.filters["size"] = fmt_bytes
    env.filters["num"] = _num
    env.filters["basename"] = basename
    return env


@lru_cache(maxsize=1)
def _assets() -> dict[str, Any]:
    """The inlined stylesheet and script, and the CSP hash that lets only that script run."""
    root = resources.files("recompile_doctor.reports") / "templates"
    css = (root / "report.css").read_text(encoding="utf-8").strip()
    js = (root / "report.js").read_text(encoding="utf-8").strip()
    if "</" in css or "</" in js:  # would end the <style>/<script> element early
        raise ValueError("inlined assets must not contain '</'")
    digest = base64.b64encode(hashlib.sha256(js.encode("utf-8")).digest()).decode("ascii")
    return {
        "css": Markup(css),
        "js": Markup(js),
        "script_hash": f"sha256-{digest}",
    }
