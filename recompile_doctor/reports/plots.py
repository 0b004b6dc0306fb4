"""Matplotlib figures for the HTML report, returned as inline SVG strings.

Figures are drawn on the Agg-free SVG canvas of a private :class:`~matplotlib.figure.Figure`
(no pyplot, no global state) inside an ``rc_context`` that fixes ``svg.hashsalt``, keeps
text as text (``svg.fonttype='none'``) and turns math parsing off, so the same report gives
the same bytes and a ``$`` in a module name is drawn as a ``$``.  The SVG's XML prolog,
metadata (which would hold a date) and fixed size are removed so it can be inlined and
scaled; element ids get a per-figure prefix so several figures can share one page.
"""

from __future__ import annotations

import contextlib
import io
import warnings
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import matplotlib
import regex
from matplotlib.backends.backend_svg import FigureCanvasSVG
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from recompile_doctor.model import Event, Finding
from recompile_doctor.reports import bars as bars_module
from recompile_doctor.reports.module_numbers import ModuleNumbers
from recompile_doctor.reports.pictures import (
    CACHE_COLOURS,
    CACHE_LABELS,
    CostPicture,
    TimelinePicture,
    TimelinePlot,
    cost_picture,
    dedupe,
    drawable,
    secs,
    short_label,
    timeline_picture,
)
from recompile_doctor.reports.plot_data import MAX_LANES, Drawn, Survey

AFTER_WARMUP_HATCH = "////"

_RC: dict[Any, Any] = {
    "svg.hashsalt": "recompile-doctor",
    "svg.fonttype": "none",
    "svg.image_inline": True,
    "text.parse_math": False,
    "text.usetex": False,
    "font.family": "sans-serif",
    "font.sans-serif": ["DejaVu Sans", "Helvetica", "Arial", "sans-serif"],
    "font.size": 9,
    "axes.titlesize": 10,
    "axes.labelsize": 9,
    "axes.edgecolor": "#888888",
    "axes.spines.top": False,
    "axes.spines.right": False,
    "hatch.linewidth": 0.6,
    "hatch.color": "#1b1b1b",
    "path.simplify": True,
    "legend.frameon": False,
    "legend.fontsize": 8.5,
}


@contextlib.contextmanager
def _quiet_glyphs() -> Iterator[None]:
    """Matplotlib warns once per missing glyph (CJK in a name) while measuring text; the SVG
    keeps the text as text (``svg.fonttype='none'``) and the browser draws it, so the
    warning says nothing useful."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r"Glyph \d+ .*missing from", category=UserWarning)
        warnings.filterwarnings(
            "ignore", message=r"Matplotlib currently does not support", category=UserWarning
        )
        yield


def timeline_svg(
    compilations: Sequence[Drawn],
    events: Sequence[Event],
    *,
    max_lanes: int = MAX_LANES,
    fig_id: str = "timeline",
    links: Mapping[tuple[str, int], str] | None = None,
    surveyed: Survey | None = None,
) -> TimelinePlot | None:
    """The timeline of :func:`~recompile_doctor.reports.pictures.timeline_picture` (see
    there), drawn (:func:`draw_timeline`).  None without compilations."""
    picture = timeline_picture(
        compilations, events, max_lanes=max_lanes, links=links, surveyed=surveyed
    )
    return draw_timeline(picture, fig_id) if picture is not None else None


def draw_timeline(pic: TimelinePicture, fig_id: str = "timeline") -> TimelinePlot:
    """The timeline drawn: a lane per module, a bar per compilation (colour = cache
    outcome, hatched = after warm-up), markers for executable loads and device attach."""
    n_lanes = len(pic.labels)
    span = pic.span
    height = 1.25 + 0.27 * n_lanes
    tips: list[tuple[str, str]] = []  # (gid, tooltip) of the bars and markers drawn alone
    with matplotlib.rc_context(_RC), _quiet_glyphs():
        fig = Figure(figsize=(11.0, height))
        FigureCanvasSVG(fig)
        ax = fig.add_axes((0.30, 0.55 / height, 0.68, 1 - 1.05 / height))
        # one element per bar, with a tooltip: the function, the outcome, the time, the line
        for k, b in enumerate(pic.singles):
            bar = ax.broken_barh(
                [(b.x, b.w)],
                (b.lane - 0.36, 0.72),
                facecolors=CACHE_COLOURS.get(b.cache, CACHE_COLOURS["unknown"]),
                edgecolors="#1b1b1b" if b.late else "none",
                linewidth=0.4,
                hatch=AFTER_WARMUP_HATCH if b.late else None,
            )
            gid = f"bar-{k}"
            bar.set_gid(gid)
            if b.target is not None:
                bar.set_urls([_LINK + b.target])
            tips.append((gid, b.tip))
        for (lane, cache, late), bars in pic.groups:
            ax.broken_barh(
                bars,
                (lane - 0.36, 0.72),
                facecolors=CACHE_COLOURS.get(cache, CACHE_COLOURS["unknown"]),
                edgecolors="#1b1b1b" if late else "none",
                linewidth=0.4,
                hatch=AFTER_WARMUP_HATCH if late else None,
            )
        loads = pic.loads
        if len(loads) <= bars_module.MERGE_ABOVE:
            for k, (x, y, tip) in enumerate(loads):
                (m,) = ax.plot(
                    [x],
                    [y],
                    marker="v",
                    markersize=7,
                    color="#222222",
                    linestyle="none",
                    zorder=3,
                    clip_on=False,
                )
                gid = f"load-{k}"
                m.set_gid(gid)
                tips.append((gid, tip))
        elif loads:
            ax.scatter(
                [x for x, _, _ in loads],
                [y for _, y, _ in loads],
                marker="v",
                s=30,
                color="#222222",
                linewidths=0,
                zorder=3,
                clip_on=False,
            )
        for x in pic.attaches:
            ax.axvline(x, color="#CC79A7", linestyle=(0, (3, 2)), linewidth=1.0, zorder=0)
        ax.set_ylim(n_lanes - 0.5, -0.75)
        ax.set_yticks(range(n_lanes), pic.labels)
        ax.tick_params(axis="y", length=0)
        ax.set_xlim(pic.lo - span * 0.01, pic.hi + span * 0.02)
        ax.set_xlabel(
            "seconds since the log's first timestamp" if pic.axis == "time" else "log line"
        )
        ax.grid(axis="x", color="#e4e4e4", linewidth=0.6)
        ax.set_axisbelow(True)
        for lane in range(1, n_lanes, 2):
            ax.axhspan(lane - 0.5, lane + 0.5, color="#f6f6f6", zorder=-1, linewidth=0)
        handles: list[Any] = [
            Patch(facecolor=CACHE_COLOURS[k], label=CACHE_LABELS[k])
            for k in ("miss", "disabled", "hit", "unknown")
            if k in pic.caches
        ]
        if pic.late:
            handles.append(
                Patch(
                    facecolor="#ffffff",
                    edgecolor="#1b1b1b",
                    hatch=AFTER_WARMUP_HATCH,
                    linewidth=0.4,
                    label="after warm-up",
                )
            )
        if loads:
            handles.append(
                Line2D(
                    [], [], marker="v", linestyle="none", color="#222222", label="executable load"
                )
            )
        if pic.attaches:
            handles.append(
                Line2D([], [], color="#CC79A7", linestyle=(0, (3, 2)), label="device attached")
            )
        fig.legend(
            handles=handles,
            loc="upper left",
            bbox_to_anchor=(0.30, 1.0),
            ncol=min(len(handles), 6),
            handlelength=1.6,
            columnspacing=1.2,
        )
        svg = _to_svg(fig, fig_id, "Timeline of compilations per function", tips)
    return TimelinePlot(svg, pic.axis, pic.shown, pic.hidden)


def cost_svg(
    findings: Sequence[Finding],
    compilations: Sequence[Drawn],
    *,
    top: int = 12,
    fig_id: str = "cost",
    numbers: ModuleNumbers | None = None,
) -> str | None:
    """The cost plot of :func:`~recompile_doctor.reports.pictures.cost_picture` (see
    there), drawn (:func:`draw_cost`).  None when nothing was wasted."""
    picture = cost_picture(findings, compilations, top=top, numbers=numbers)
    return draw_cost(picture, fig_id) if picture is not None else None


def draw_cost(pic: CostPicture, fig_id: str = "cost") -> str:
    """Wasted seconds per cause and compile time after warm-up per module, drawn."""
    rules, mods = pic.rules, pic.modules
    rows = max(len(rules), len(mods), 1)
    height = 0.9 + 0.26 * rows
    with matplotlib.rc_context(_RC), _quiet_glyphs():
        fig = Figure(figsize=(11.0, height))
        FigureCanvasSVG(fig)
        bottom = 0.45 / height
        axh = 1 - 0.8 / height
        panels = (
            (rules, (0.17, bottom, 0.28, axh), "Time wasted per cause (s)", "#D55E00"),
            (
                mods,
                (0.69, bottom, 0.28, axh),
                "Compile time after warm-up per module (s)",
                "#0072B2",
            ),
        )
        for data, rect, title, colour in panels:
            ax = fig.add_axes(rect)
            ax.set_title(title, loc="left")
            if not data:
                ax.set_axis_off()
                ax.text(0, 0.5, "nothing", color="#666666", transform=ax.transAxes)
                continue
            names = dedupe([short_label(k, 30) for k, _ in data])
            vals = [v for _, v in data]
            ax.barh(range(len(vals)), vals, color=colour, height=0.66)
            ax.set_yticks(range(len(vals)), names)
            ax.set_ylim(rows - 0.5, -0.5)
            ax.tick_params(axis="y", length=0)
            ax.grid(axis="x", color="#e4e4e4", linewidth=0.6)
            ax.set_axisbelow(True)
            vmax = max(vals)
            ax.set_xlim(0, vmax * 1.22)
            for i, v in enumerate(vals):
                ax.text(v + vmax * 0.015, i, secs(v), va="center", fontsize=8, color="#333333")
        svg = _to_svg(fig, fig_id, "Time wasted per cause and per module")
    return svg


_PROLOG = regex.compile(r"\A.*?(?=<svg\b)", regex.S)
_METADATA = regex.compile(r"<metadata>.*?</metadata>\s*", regex.S)
_SIZE = regex.compile(r'(<svg\b[^>]*?)\s+width="[^"]*"\s+height="[^"]*"')
_IDS = regex.compile(r'(\bid="|url\(#|href="#)([^")]+)')


#: marks a link to an element of the page (kept apart from the SVG's own ids, which are
#: renamed per figure)
_LINK = "rd-page-link:"
_PAGE_LINK = regex.compile(r'(\bxlink:)href="rd-page-link:([^"]*)"(?: target="_blank")?')


def _xml_text(text: str) -> str:
    return drawable(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _to_svg(fig: Figure, fig_id: str, title: str, tips: Sequence[tuple[str, str]] = ()) -> str:
    buf = io.StringIO()
    fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None})
    svg = buf.getvalue()
    svg = _PROLOG.sub("", svg, count=1)
    svg = _METADATA.sub("", svg, count=1)
    svg = _SIZE.sub(r"\1", svg, count=1)
    for gid, tip in tips:  # a <title> (tooltip) as the first child of each element's group
        svg = svg.replace(f'<g id="{gid}">', f'<g id="{gid}"><title>{_xml_text(tip)}</title>', 1)
    svg = _IDS.sub(lambda m: f"{m.group(1)}{fig_id}-{m.group(2)}", svg)
    svg = _PAGE_LINK.sub(r'\1href="#\2"', svg)
    head_end = svg.index(">")
    safe_title = title.replace("&", "&amp;").replace("<", "&lt;")
    svg = (
        svg[:head_end]
        + f' role="img" aria-labelledby="{fig_id}-title" class="plot"'
        + svg[head_end:].replace(">", f'><title id="{fig_id}-title">{safe_title}</title>', 1)
    )
    return svg.strip() + "\n"
