"""What the page's two plots show, worked out from a run: no matplotlib here.

:func:`timeline_picture` and :func:`cost_picture` read the compilations (a pass or a few
each) and give small values -- labels, joined bars, markers, the top sums -- that
:mod:`.plots` draws with matplotlib, in this process or, for a big run, in a fresh one
(:mod:`.draw_apart`): the drawing's libraries are then not on top of the run's memory.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import repeat

from recompile_doctor.model import Event, Finding
from recompile_doctor.reports.bars import MERGE_ABOVE, Bar, GroupKey, group_bars
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
LABEL_CHARS = 44
#: where a load marker without a module sits (above the first lane)
NO_LANE_Y = -0.62


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


def secs(v: float) -> str:
    return f"{v:.0f} s" if v >= 100 else f"{v:.1f} s" if v >= 1 else f"{v * 1000:.0f} ms"


def dedupe(labels: Iterable[str]) -> list[str]:
    seen: dict[str, int] = {}
    out: list[str] = []
    for s in labels:
        k = seen.get(s, 0)
        seen[s] = k + 1
        out.append(s if k == 0 else f"{s} #{k + 1}")
    return out


@dataclass(frozen=True, slots=True)
class Single:
    """A bar drawn alone (a run of few compilations), with its tooltip and link."""

    lane: int
    x: float
    w: float
    cache: str
    late: bool
    tip: str
    #: the id of the element of the page that shows its log line, if there is one
    target: str | None


@dataclass(frozen=True, slots=True)
class TimelinePicture:
    """What the timeline shows (:func:`timeline_picture`)."""

    axis: Axis
    #: modules with a lane of their own
    shown: int
    #: modules that share the last lane
    hidden: int
    labels: tuple[str, ...]
    singles: tuple[Single, ...]
    #: the bars joined, per (lane, cache outcome, after warm-up), when not drawn alone
    groups: tuple[tuple[GroupKey, tuple[Bar, ...]], ...]
    #: executable loads: (x, y, tooltip), one per switch, in order of x
    loads: tuple[tuple[float, float, str], ...]
    attaches: tuple[float, ...]
    lo: float
    hi: float
    span: float
    caches: frozenset[str]
    late: bool


@dataclass(frozen=True, slots=True)
class TimelinePlot:
    """The timeline drawn (:func:`~recompile_doctor.reports.plots.draw_timeline`)."""

    svg: str
    axis: Axis
    #: modules with a lane of their own
    shown: int
    #: modules that share the last lane (their names are not kept: 131,000 names were
    #: 23 MB held while the cost plot was drawn)
    hidden: int


def timeline_picture(
    compilations: Sequence[Drawn],
    events: Sequence[Event],
    *,
    max_lanes: int = MAX_LANES,
    links: Mapping[tuple[str, int], str] | None = None,
    surveyed: Survey | None = None,
) -> TimelinePicture | None:
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
    labels = [short_label(m) for m in lanes.shown]
    if lanes.hidden:
        labels.append(f"{lanes.hidden} other modules")
    labels = dedupe(labels)

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

    singles: list[Single] = []
    groups: dict[GroupKey, list[Bar]] = {}
    if len(compilations) <= MERGE_ABOVE:
        for c, lane in zip(compilations, lanes.rows, strict=True):
            x, w = bar_of(c, axis)
            late = not c.warmup
            dur = f", {secs(c.duration_s)}" if c.duration_s is not None else ""
            warm = ", after warm-up" if late else ""
            tip = (
                f"{short_label(c.function or c.module, 80)}: "
                f"{CACHE_LABELS.get(c.cache, c.cache)}{dur}{warm} ({c.source}:{c.line})"
            )
            target = (links or {}).get((c.source, c.line))
            singles.append(Single(lane, x, max(w, min_w), c.cache, late, tip, target))
    else:
        groups = group_bars(compilations, lanes.rows, axis, span / 2000.0, min_w)

    step = span / 1500.0  # markers closer than this overlap on screen: draw one
    # one marker per switch: a load seen with and without its module is one load
    by_x: dict[float, tuple[float, float]] = {}
    for kind, x, on in marks:
        if kind != "load":
            continue
        key = round(x / step) * step
        y = NO_LANE_Y if on is None else on - 0.5
        if key not in by_x or (by_x[key][1] == NO_LANE_Y and y != NO_LANE_Y):
            by_x[key] = (x, y)
    loads = tuple(
        (key, y, load_tips.get(by_x[key][0], "executable loaded"))
        for key, y in sorted((k, y) for k, (_x, y) in by_x.items())
    )
    return TimelinePicture(
        axis=axis,
        shown=len(lanes.shown),
        hidden=lanes.hidden,
        labels=tuple(labels),
        singles=tuple(singles),
        groups=tuple((k, tuple(v)) for k, v in sorted(groups.items())),
        loads=loads,
        attaches=tuple(sorted({x for role, x, _ in marks if role == "attach"})),
        lo=lo,
        hi=hi,
        span=span,
        caches=seen.caches,
        late=seen.late,
    )


@dataclass(frozen=True, slots=True)
class CostPicture:
    """What the cost plot shows (:func:`cost_picture`): (name, seconds), largest first."""

    rules: tuple[tuple[str, float], ...]
    modules: tuple[tuple[str, float], ...]


def cost_picture(
    findings: Sequence[Finding],
    compilations: Sequence[Drawn],
    *,
    top: int = 12,
    numbers: ModuleNumbers | None = None,
) -> CostPicture | None:
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
    given: Iterable[int | None] = numbers.of if numbers is not None else repeat(None)
    for c, k in zip(compilations, given, strict=numbers is not None):
        if not c.warmup and c.duration_s:
            per_module.add(c.module, c.duration_s, k)
    if not per_rule and not per_module:
        return None
    rules = top_of(per_rule, top)
    mods = per_module.top(top, lambda: (c.module for c in late()))
    return CostPicture(tuple(rules), tuple(mods))


def top_of(d: dict[str, float], n: int) -> list[tuple[str, float]]:
    """The ``n`` largest items of ``d`` (see :meth:`TopSums.top`)."""
    sums = TopSums()
    for k, v in d.items():
        sums.add(k, v)
    return sums.top(n, d.keys)
