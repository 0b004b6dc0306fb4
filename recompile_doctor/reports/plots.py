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
import math
import warnings
from array import array
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import matplotlib
import regex
from matplotlib.backends.backend_svg import FigureCanvasSVG
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from recompile_doctor.model import Event, Finding
from recompile_doctor.reports.module_numbers import ModuleNumbers
from recompile_doctor.reports.plot_data import (
    MAX_LANES,
    Axis,
    Drawn,
    Survey,
    bar_of,
    event_role,
    marked_modules,
    survey,
    x_of,
)
from recompile_doctor.reports.top_sums import TopSums
from recompile_doctor.timeline.names import function_key

#: colour per cache outcome (Okabe-Ito palette: readable for colour-blind people)
CACHE_COLOURS: dict[str, str] = {
    "miss": "#0072B2",
    "disabled": "#D55E00",
    "hit": "#009E73",
    "unknown": "#8C8C8C",
}
CACHE_LABELS: dict[str, str] = {
    "miss": "compiled (cache miss)",
    "disabled": "compiled (no cache)",
    "hit": "loaded from cache (hit)",
    "unknown": "compiled (cache unknown)",
}
AFTER_WARMUP_HATCH = "////"
#: a lane group with more bars than this has bars closer than a pixel drawn as one
MERGE_ABOVE = 200
LABEL_CHARS = 44

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


def drawable(text: str) -> str:
    """``text`` safe to draw and to put in SVG: control characters (not allowed in XML)
    shown as ``·``."""
    return "".join(ch if ch.isprintable() else "·" for ch in text)


def short_label(name: str, limit: int = LABEL_CHARS) -> str:
    """The function ``name`` compiles (``a_inference_train_step_412__…`` -> ``train_step``),
    drawable, and cut at its end to ``limit`` characters when still too long."""
    label = drawable(function_key(name) or name)
    if len(label) <= limit:
        return label
    return label[: limit - 1] + "…"


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


@dataclass(frozen=True, slots=True)
class TimelinePlot:
    svg: str
    axis: Literal["time", "line"]
    #: modules with a lane of their own
    shown: int
    #: modules that share the last lane (their names are not kept: 131,000 names were
    #: 23 MB held while the cost plot was drawn)
    hidden: int


def timeline_svg(
    compilations: Sequence[Drawn],
    events: Sequence[Event],
    *,
    max_lanes: int = MAX_LANES,
    fig_id: str = "timeline",
    links: Mapping[tuple[str, int], str] | None = None,
    surveyed: Survey | None = None,
) -> TimelinePlot | None:
    """A lane per module, a bar per compilation (colour = cache outcome, hatched = after
    warm-up), markers for executable loads and device attach.  None without compilations.

    ``links`` maps a (source, line) to the id of the element showing that log line on the
    page: a bar whose line is there links to it.  ``surveyed``: the compilations'
    :func:`~recompile_doctor.reports.plot_data.survey` for ``max_lanes`` and the events'
    :func:`~recompile_doctor.reports.plot_data.marked_modules`, if made already."""
    if not compilations:
        return None
    if surveyed is None:
        surveyed = survey(compilations, max_lanes, marked_modules(events))
    lanes, seen = surveyed
    axis = seen.axis
    n_lanes = len(lanes.shown) + (1 if lanes.hidden else 0)
    labels = [short_label(m) for m in lanes.shown]
    if lanes.hidden:
        labels.append(f"{lanes.hidden} other modules")
    labels = _dedupe(labels)

    first_x, end = seen.first_x, seen.end
    marks: list[tuple[str, float, int | None]] = []
    load_tips: dict[float, str] = {}
    for e in events:
        role = event_role(e)
        if role is None or (axis == "time" and e.t is None):
            continue
        marks.append((role, x_of(e.t, e.line, axis), lanes.lane_of(e.module)))
        if role == "load":
            what = f"loaded {short_label(e.module, 80)}" if e.module else "executable loaded"
            load_tips.setdefault(x_of(e.t, e.line, axis), f"{what} ({e.source}:{e.line})")
    lo = min([first_x, *(m[1] for m in marks)])
    hi = max([end, *(m[1] for m in marks)])
    span = max(hi - lo, 1e-9)
    min_w = span / 600.0

    height = 1.25 + 0.27 * n_lanes
    tips: list[tuple[str, str]] = []  # (gid, tooltip) of the bars and markers drawn alone
    with matplotlib.rc_context(_RC), _quiet_glyphs():
        fig = Figure(figsize=(11.0, height))
        FigureCanvasSVG(fig)
        ax = fig.add_axes((0.30, 0.55 / height, 0.68, 1 - 1.05 / height))
        groups: dict[tuple[int, str, bool], list[tuple[float, float]]] = {}
        if len(compilations) <= MERGE_ABOVE:
            # one element per bar, with a tooltip: the function, the outcome, the time, the line
            for k, (c, lane) in enumerate(zip(compilations, lanes.rows, strict=True)):
                x, w = bar_of(c, axis)
                late = not c.warmup
                bar = ax.broken_barh(
                    [(x, max(w, min_w))],
                    (lane - 0.36, 0.72),
                    facecolors=CACHE_COLOURS.get(c.cache, CACHE_COLOURS["unknown"]),
                    edgecolors="#1b1b1b" if late else "none",
                    linewidth=0.4,
                    hatch=AFTER_WARMUP_HATCH if late else None,
                )
                gid = f"bar-{k}"
                bar.set_gid(gid)
                target = (links or {}).get((c.source, c.line))
                if target is not None:
                    bar.set_urls([_LINK + target])
                dur = f", {_secs(c.duration_s)}" if c.duration_s is not None else ""
                warm = ", after warm-up" if late else ""
                tips.append(
                    (
                        gid,
                        f"{short_label(c.function or c.module, 80)}: "
                        f"{CACHE_LABELS.get(c.cache, c.cache)}{dur}{warm} ({c.source}:{c.line})",
                    )
                )
        else:
            groups = _bars(compilations, lanes.rows, axis, span / 2000.0, min_w)
        for (lane, cache, late), bars in sorted(groups.items()):
            ax.broken_barh(
                bars,
                (lane - 0.36, 0.72),
                facecolors=CACHE_COLOURS.get(cache, CACHE_COLOURS["unknown"]),
                edgecolors="#1b1b1b" if late else "none",
                linewidth=0.4,
                hatch=AFTER_WARMUP_HATCH if late else None,
            )
        step = span / 1500.0  # markers closer than this overlap on screen: draw one
        # one marker per switch: a load seen with and without its module is one load
        by_x: dict[float, tuple[float, float]] = {}
        for kind, x, on in marks:
            if kind != "load":
                continue
            key = round(x / step) * step
            y = -0.62 if on is None else on - 0.5
            if key not in by_x or (by_x[key][1] == -0.62 and y != -0.62):
                by_x[key] = (x, y)
        loads = sorted((k, y) for k, (_x, y) in by_x.items())
        if len(loads) <= MERGE_ABOVE:
            for k, (key, y) in enumerate(loads):
                x0 = by_x[key][0]
                (m,) = ax.plot(
                    [key],
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
                tips.append((gid, load_tips.get(x0, "executable loaded")))
        elif loads:
            ax.scatter(
                [x for x, _ in loads],
                [y for _, y in loads],
                marker="v",
                s=30,
                color="#222222",
                linewidths=0,
                zorder=3,
                clip_on=False,
            )
        attaches = sorted({x for role, x, _ in marks if role == "attach"})
        for x in attaches:
            ax.axvline(x, color="#CC79A7", linestyle=(0, (3, 2)), linewidth=1.0, zorder=0)
        ax.set_ylim(n_lanes - 0.5, -0.75)
        ax.set_yticks(range(n_lanes), labels)
        ax.tick_params(axis="y", length=0)
        ax.set_xlim(lo - span * 0.01, hi + span * 0.02)
        ax.set_xlabel("seconds since the log's first timestamp" if axis == "time" else "log line")
        ax.grid(axis="x", color="#e4e4e4", linewidth=0.6)
        ax.set_axisbelow(True)
        for lane in range(1, n_lanes, 2):
            ax.axhspan(lane - 0.5, lane + 0.5, color="#f6f6f6", zorder=-1, linewidth=0)
        handles: list[Any] = [
            Patch(facecolor=CACHE_COLOURS[k], label=CACHE_LABELS[k])
            for k in ("miss", "disabled", "hit", "unknown")
            if k in seen.caches
        ]
        if seen.late:
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
        if attaches:
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
    return TimelinePlot(svg, axis, len(lanes.shown), lanes.hidden)


def cost_svg(
    findings: Sequence[Finding],
    compilations: Sequence[Drawn],
    *,
    top: int = 12,
    fig_id: str = "cost",
    numbers: ModuleNumbers | None = None,
) -> str | None:
    """Wasted seconds per cause (from the findings) and compile time after warm-up per
    module (from the compilations; ``numbers``: their module numbers, if counted).  None
    when nothing was wasted."""
    per_rule: dict[str, float] = defaultdict(float)
    for f in findings:
        if f.wasted_seconds > 0:
            per_rule[f.rule] += f.wasted_seconds

    def late() -> Iterator[Drawn]:
        return (c for c in compilations if not c.warmup and c.duration_s)

    per_module = TopSums(numbers.count if numbers is not None else None)
    for row, c in enumerate(compilations):
        if not c.warmup and c.duration_s:
            per_module.add(c.module, c.duration_s, numbers.of[row] if numbers is not None else None)
    if not per_rule and not per_module:
        return None
    rules = _top(per_rule, top)
    mods = per_module.top(top, lambda: (c.module for c in late()))
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
            names = _dedupe([short_label(k, 30) for k, _ in data])
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
                ax.text(v + vmax * 0.015, i, _secs(v), va="center", fontsize=8, color="#333333")
        svg = _to_svg(fig, fig_id, "Time wasted per cause and per module")
    return svg


class _Joined:
    """Bars joined as they come, in order of (x, width) (:func:`_merge`): each at least
    ``min_w`` wide, joined to the one before where they touch or are less than ``gap``
    apart."""

    __slots__ = ("bars", "gap", "min_w")

    def __init__(self, gap: float, min_w: float) -> None:
        self.gap = gap
        self.min_w = min_w
        self.bars: list[tuple[float, float]] = []

    def add(self, x: float, w: float) -> None:
        if w < self.min_w:
            w = self.min_w
        bars = self.bars
        if bars and x <= bars[-1][0] + bars[-1][1] + self.gap:
            x0, w0 = bars[-1]
            bars[-1] = (x0, max(w0, x + w - x0))
        else:
            bars.append((x, w))


def _merge(
    xs: Sequence[float], ws: Sequence[float], gap: float, min_w: float = 0.0
) -> list[tuple[float, float]]:
    """Bars (x ``xs[k]``, width ``ws[k]``, at least ``min_w``) joined where they touch or
    are less than ``gap`` apart, in order of (x, width): the same picture at any sensible
    zoom, and a much smaller SVG for logs with thousands of them.  Bars in that order
    already (a log's, mostly) are not sorted again; others are sorted by numpy (a Python sort
    made an (x, width) pair per bar: 27 MB at once for the 263,000 compilations of a 2 GB
    TensorFlow log).  The least width is applied as the bars are read, not to a copy of
    the widths (4 MB for 524,000 bars): bars in order stay in order when widened, and
    the others are sorted as by the widened widths, stably (see :func:`_sorted_pairs`)."""
    n = len(xs)
    pairs: Iterable[tuple[float, float]] = zip(xs, ws, strict=True)
    if not all((xs[k], ws[k]) <= (xs[k + 1], ws[k + 1]) for k in range(n - 1)):
        pairs = _sorted_pairs(xs, ws, min_w=min_w)
    joined = _Joined(gap, min_w)
    for x, w in pairs:
        joined.add(x, w)
    return joined.bars


class _Group:
    """The bars of one (lane, cache outcome, after warm-up) as they are read
    (:func:`_bars`)."""

    __slots__ = ("few", "joined", "last", "n")

    def __init__(self, gap: float, min_w: float) -> None:
        self.n = 0
        #: the bars as they came while no more than MERGE_ABOVE (then each is drawn alone)
        self.few: list[tuple[float, float]] | None = []
        #: the bars joined as they came while in order (None once one came out of order)
        self.joined: _Joined | None = _Joined(gap, min_w)
        self.last: tuple[float, float] | None = None

    def add(self, x: float, w: float) -> None:
        self.n += 1
        few = self.few
        if few is not None:
            few.append((x, w))
            if self.n > MERGE_ABOVE:
                self.few = None
        joined = self.joined
        if joined is not None:
            bar = (x, w)
            last = self.last
            if last is not None and not last <= bar:  # (as _merge tells bars out of order)
                self.joined = self.last = None
                return
            self.last = bar
            joined.add(x, w)


def _bars(
    compilations: Sequence[Drawn], lanes: Sequence[int], axis: Axis, gap: float, min_w: float
) -> dict[tuple[int, str, bool], list[tuple[float, float]]]:
    """The bars to draw per (lane, cache outcome, after warm-up) of the compilations in
    these lanes: a group of up to MERGE_ABOVE bars each as it is (at least ``min_w`` wide),
    more joined (:func:`_merge`).  A group whose bars come in order, as a log's mostly do,
    is joined as it is read; only the bars of the others are kept, in a second pass, and
    sorted: two numbers per compilation kept at once were 8 MB for the 524,000 of a 4 GB
    TensorFlow log, at the top of the page's memory."""
    groups: dict[tuple[int, str, bool], _Group] = {}
    for c, lane in zip(compilations, lanes, strict=True):
        where = (lane, c.cache, not c.warmup)
        group = groups.get(where)
        if group is None:
            group = groups[where] = _Group(gap, min_w)
        group.add(*bar_of(c, axis))
    # (the arrays made to size at once: grown a bar at a time, each reallocation could hold
    # the one before beside it)
    kept: dict[tuple[int, str, bool], tuple[array[float], array[float]]] = {
        k: (array("d", bytes(8 * g.n)), array("d", bytes(8 * g.n)))
        for k, g in groups.items()
        if g.few is None and g.joined is None
    }
    if kept:
        filled = dict.fromkeys(kept, 0)
        for c, lane in zip(compilations, lanes, strict=True):
            where = (lane, c.cache, not c.warmup)
            got = kept.get(where)
            if got is not None:
                i = filled[where]
                got[0][i], got[1][i] = bar_of(c, axis)
                filled[where] = i + 1
    out: dict[tuple[int, str, bool], list[tuple[float, float]]] = {}
    for k, g in groups.items():
        if g.few is not None:
            out[k] = [(x, max(w, min_w)) for x, w in g.few]
        elif g.joined is not None:
            out[k] = g.joined.bars
        else:
            xs, ws = kept.pop(k)
            out[k] = _merge(xs, ws, gap, min_w)
    return out


def _sorted_pairs(
    xs: Sequence[float], ws: Sequence[float], chunk: int = 8192, *, min_w: float = 0.0
) -> Iterator[tuple[float, float]]:
    """The pairs (``xs[k]``, ``max(ws[k], min_w)``) in ascending order (x, then width,
    stable: as ``sorted`` gives them), made a chunk at a time."""
    import numpy as np  # (matplotlib's own dependency, imported with it already)

    def column(v: Sequence[float]) -> Any:
        # (an array of C doubles is read in place, not copied)
        if isinstance(v, array) and v.typecode == "d":
            return np.frombuffer(v, dtype=np.float64)
        return np.array(v, dtype=np.float64)

    x, w = column(xs), column(ws)
    if bool((np.isnan(x) | ((x == 0) & np.signbit(x))).any()):
        # (bars made alike by widening are told apart by their order only where equal
        # starts are not the same number: -0.0 beside 0.0, NaNs.  There the widths are
        # widened before the sort, in a copy of them all)
        w = np.where(w < min_w, min_w, w)  # (as max(w, min_w): w unless min_w is more)
        min_w = -math.inf
    # (else sorted by the widths as given, widened a chunk at a time: the same order, as
    # widening keeps it, and the bars it makes equal are then the same two numbers)
    order = np.lexsort((w, x))  # (the last key is the first compared)
    for at in range(0, len(order), chunk):
        part = order[at : at + chunk]
        wide = w[part]
        wide = np.where(wide < min_w, min_w, wide)
        yield from zip(x[part].tolist(), wide.tolist(), strict=True)


def _top(d: dict[str, float], n: int) -> list[tuple[str, float]]:
    """The ``n`` largest items of ``d`` (see :meth:`TopSums.top`)."""
    sums = TopSums()
    for k, v in d.items():
        sums.add(k, v)
    return sums.top(n, d.keys)


def _secs(v: float) -> str:
    return f"{v:.0f} s" if v >= 100 else f"{v:.1f} s" if v >= 1 else f"{v * 1000:.0f} ms"


def _dedupe(labels: Iterable[str]) -> list[str]:
    seen: dict[str, int] = {}
    out: list[str] = []
    for s in labels:
        k = seen.get(s, 0)
        seen[s] = k + 1
        out.append(s if k == 0 else f"{s} #{k + 1}")
    return out


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
