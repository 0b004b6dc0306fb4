"""The report's plots: inline SVG that is deterministic, scalable and says what it shows."""

from __future__ import annotations

import math
import re
from collections import defaultdict

import pytest
import regex
from _html_reports import demo_report, healthy_report, many_modules_report
from hypothesis import given
from hypothesis import strategies as st

from recompile_doctor.model import Compilation, Event, Report
from recompile_doctor.reports import bars, pictures, plot_data, plots


def test_timeline_svg_is_the_same_bytes_every_time_and_carries_no_date() -> None:
    r = demo_report()
    a = plots.timeline_svg(r.compilations, r.events)
    b = plots.timeline_svg(r.compilations, r.events)
    assert a is not None and b is not None
    assert a.svg == b.svg
    assert "<metadata" not in a.svg and "<?xml" not in a.svg and "DOCTYPE" not in a.svg


def test_svg_scales_to_its_container_and_ids_are_namespaced_per_figure() -> None:
    r = demo_report()
    tl = plots.timeline_svg(r.compilations, r.events)
    cost = plots.cost_svg(r.findings, r.compilations)
    assert tl is not None and cost is not None
    head = tl.svg[: tl.svg.index(">")]
    assert "viewBox=" in head and " width=" not in head and " height=" not in head
    tl_ids = set(re.findall(r'\bid="([^"]+)"', tl.svg))
    cost_ids = set(re.findall(r'\bid="([^"]+)"', cost))
    assert all(i.startswith("timeline-") for i in tl_ids)
    assert all(i.startswith("cost-") for i in cost_ids)
    # every internal reference points at an id of the same figure
    for ref in re.findall(r'url\(#([^)]+)\)|href="#([^"]+)"', tl.svg):
        assert (ref[0] or ref[1]) in tl_ids


def test_up_to_max_lanes_every_module_has_its_own_lane_in_order_of_first_compilation() -> None:
    r = demo_report()
    lanes = plot_data.choose_lanes(r.compilations)
    assert lanes.hidden == 0
    assert lanes.shown[2] == "cluster_7"


def test_beyond_max_lanes_the_modules_that_recompile_most_keep_a_lane() -> None:
    # GIVEN 50 modules of which cluster_45 recompiles after warm-up 5 times
    comps = [
        Compilation(i, f"cluster_{i}", "0x1", "x.log", i + 1, float(i), 1.0, "miss", True)
        for i in range(50)
    ]
    comps += [
        Compilation(50 + k, "cluster_45", f"0x{k}", "x.log", 60 + k, 60.0 + k, 1.0, "miss", False)
        for k in range(5)
    ]
    # WHEN lanes are chosen for 10
    lanes = plot_data.choose_lanes(comps, max_lanes=10)
    # THEN 9 modules get a lane (cluster_45 among them) and 41 share the last one
    assert len(lanes.shown) == 9 and lanes.hidden == 41
    assert lanes.shown == ("cluster_0", *(f"cluster_{k}" for k in range(1, 8)), "cluster_45")
    assert lanes.lane_of("cluster_45") == lanes.shown.index("cluster_45") == 8
    # AND the others share the last lane; a module never compiled has none
    assert lanes.lane_of("cluster_8") == lanes.lane_of("cluster_49") == 9
    assert lanes.lane_of("cluster_50") is None and lanes.lane_of(None) is None


def test_300_module_timeline_stays_a_readable_size() -> None:
    r = many_modules_report(300)
    tl = plots.timeline_svg(r.compilations, r.events)
    assert tl is not None
    assert "261 other modules" in tl.svg
    w, h = (float(x) for x in re.search(r'viewBox="0 0 ([\d.]+) ([\d.]+)"', tl.svg).groups())  # type: ignore[union-attr]
    assert h / w < 1.5


def test_executable_loads_and_device_attach_get_markers_by_their_kind() -> None:
    """The timeline names loads (one by one, or aggregated in a long run) and attaches; the
    plot reads those kinds and guesses nothing from parts of other kinds."""

    def ev(kind: str, **detail: object) -> Event:
        return Event(kind, "run.log", 1, 0.0, "", detail=detail)

    assert plot_data.event_role(ev("load")) == "load"
    assert plot_data.event_role(ev("loads", count=3)) == "load"
    assert plot_data.event_role(ev("attach")) == "attach"
    assert plot_data.event_role(ev("popart-cache-load")) is None
    assert plot_data.event_role(ev("phase-end", name="Loading executable")) is None
    assert plot_data.event_role(ev("cache-hit")) is None


def test_no_cost_chart_when_nothing_was_wasted() -> None:
    r = healthy_report()
    assert plots.cost_svg(r.findings, r.compilations) is None
    assert plots.timeline_svg((), ()) is None


def test_lanes_are_named_by_function_and_a_long_name_keeps_its_start() -> None:
    # GIVEN a TensorFlow module name WHEN labelled THEN the label is the function's name
    name = "a_inference_train_step_412__XlaMustCompile_true_config_proto_123_.1357"
    assert plots.short_label(name, 30) == "train_step"
    # AND a name still too long is cut at its end, not in the middle
    long = "my_very_long_function_name_that_goes_on_and_on"
    short = plots.short_label(long, 20)
    assert short == long[:19] + "…"


def test_cjk_and_control_characters_in_names_give_well_formed_svg_and_no_warning() -> None:
    import warnings
    import xml.dom.minidom

    # GIVEN modules named with CJK and control characters
    comps = [
        Compilation(i, name, None, "run.log", i + 1, float(i), 1.0, "miss", i < 2)
        for i, name in enumerate(["训练步骤", "bad\x07name\x1b[31m", "训练步骤"])
    ]
    # WHEN the timeline is drawn, warnings being errors
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        plot = plots.timeline_svg(comps, [])
    # THEN the SVG parses as XML and keeps the CJK name as text
    assert plot is not None
    xml.dom.minidom.parseString(plot.svg)
    assert "训练步骤" in plot.svg


def test_every_bar_and_load_marker_has_a_tooltip_with_its_log_line() -> None:
    r = demo_report()
    plot = plots.timeline_svg(r.compilations, r.events)
    assert plot is not None
    tips = regex.findall(r"<title>([^<]*)</title>", plot.svg)
    c = next(c for c in r.compilations if not c.warmup)
    assert any(f"({c.source}:{c.line})" in t and "after warm-up" in t for t in tips)
    assert any(t.startswith(("loaded ", "executable loaded")) for t in tips)


def test_a_bar_whose_log_line_is_on_the_page_links_to_it() -> None:
    from recompile_doctor.reports.html import render

    # GIVEN the demo page, whose findings show the compile lines as evidence
    page = render(demo_report())
    svg = page[page.index('id="timeline-plot"') :]
    svg = svg[: svg.index("</svg>")]
    # THEN each such bar links to the evidence line's anchor, in the same page
    targets = regex.findall(r'<a xlink:href="#([^"]+)">', svg)
    assert targets and all(f'id="{t}"' in page for t in targets)
    assert 'target="_blank"' not in svg


@given(
    st.lists(st.sampled_from("abcdefg"), max_size=6),
    st.lists(st.sampled_from("defghij"), max_size=6),
    st.sampled_from([None, *"abcdefghijk"]),
)
def test_a_modules_lane_is_its_first_shown_place_else_the_shared_one(
    shown: list[str], hidden: list[str], module: str | None
) -> None:
    lanes = plot_data.Lanes(tuple(shown), len(hidden), frozenset(hidden))
    if module is None:
        expected = None
    elif module in shown:
        expected = shown.index(module)
    else:
        expected = len(shown) if module in hidden else None
    assert lanes.lane_of(module) == expected
    assert lanes == plot_data.Lanes(tuple(shown), len(hidden), frozenset(hidden))


def test_plots_of_the_rows_are_those_of_the_compilations() -> None:
    # GIVEN the demo report and a run of many modules, WHEN their compilations are made into
    # plot rows (without their text and keys), THEN the figures are the same bytes
    for r in (demo_report(), many_modules_report()):
        rows = plot_data.plot_rows(r.compilations)
        assert len(rows) == len(r.compilations)
        a = plots.timeline_svg(r.compilations, r.events)
        b = plots.timeline_svg(rows, r.events)
        assert a is not None and b is not None and a.svg == b.svg and a == b
        assert plots.cost_svg(r.findings, r.compilations) == plots.cost_svg(r.findings, rows)


@given(
    st.lists(
        st.tuples(
            st.text(max_size=3),
            st.sampled_from([0.0, -0.0, 1.0, 2.5]) | st.floats(0, 1e6, allow_nan=False),
        ),
        max_size=40,
    ),
    st.integers(1, 12),
    st.booleans(),
    st.booleans(),
)
def test_the_top_bars_are_those_of_a_full_sort(
    added: list[tuple[str, float]], n: int, few: bool, wide: bool
) -> None:
    # GIVEN values added to names (a name any number of times; many equal sums), the names
    # kept as they came or (few=False) found again in a second pass over them, the places
    # of first adds in 4 bytes or (wide) beyond them after a few adds
    from recompile_doctor.reports import top_sums

    d: dict[str, float] = defaultdict(float)
    sums = top_sums.TopSums()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(top_sums, "FEW", top_sums.FEW if few else 0)
        mp.setattr(top_sums, "FIRST_FITS", 2 if wide else top_sums.FIRST_FITS)
        for name, v in added:
            d[name] += v
            sums.add(name, v)
        got = sums.top(n, lambda: (name for name, _ in added))
    # THEN the top bars are those of a full sort of a dictionary's sums, by (-sum, name)
    items = sorted(d.items(), key=lambda kv: (-kv[1], kv[0]))
    if len(items) <= n:
        expected = items
    else:
        rest = math.fsum(v for _, v in items[n - 1 :])
        expected = [*items[: n - 1], (f"{len(items) - n + 1} others", rest)]
    assert got == expected
    assert len(sums) == len(d) and pictures.top_of(dict(d), n) == expected
    # AND numbered names (their numbers given, in any order of first sight) sum the same
    numbers = {name: k for k, name in enumerate(reversed(dict.fromkeys(n for n, _ in added)))}
    numbered = top_sums.TopSums(len(numbers))
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(top_sums, "FEW", top_sums.FEW if few else 0)
        mp.setattr(top_sums, "FIRST_FITS", 2 if wide else top_sums.FIRST_FITS)
        for name, v in added:
            numbered.add(name, v, numbers[name])
        assert numbered.top(n, lambda: (name for name, _ in added)) == expected
    assert len(numbered) == len(d)


@given(st.lists(st.text(max_size=2), max_size=20), st.data())
def test_names_read_again_are_those_at_their_places(names: list[str], data: st.DataObject) -> None:
    from recompile_doctor.reports.top_sums import read_at

    # GIVEN places in a list of names, ascending, some repeated
    at = sorted(data.draw(st.lists(st.integers(0, max(len(names) - 1, 0)), max_size=8)))
    if not names:
        at = []
    # THEN the names read at them, in one pass that stops at the last place, are the list's
    read = iter(names)
    assert read_at(read, at) == [names[i] for i in at]
    assert list(read) == (names[at[-1] + 1 :] if at else names)
    # AND a place beyond the names is an error, not a silent short list
    with pytest.raises(ValueError, match="beyond"):
        read_at(names, [len(names)])


def test_each_compilation_is_drawn_in_its_modules_lane() -> None:
    # GIVEN a run of 300 modules (more than lanes) and the demo run
    for r in (many_modules_report(300), demo_report()):
        comps = list(r.compilations)
        lanes = plot_data.choose_lanes(comps, max_lanes=12)
        # THEN each compilation's lane is its module's: its own, or the shared last one
        assert list(lanes.rows) == [lanes.lane_of(c.module) for c in comps]
        assert len({c.module for c in comps}) == len(lanes.shown) + lanes.hidden


def test_lanes_asked_for_only_some_modules_place_them_as_the_full_lanes_do() -> None:
    # GIVEN a run of 300 modules (more than lanes), and the modules the timeline's markers
    # will ask about: shown ones, hidden ones and one never compiled
    comps = list(many_modules_report(300).compilations)
    full = plot_data.choose_lanes(comps, max_lanes=12)
    asked = {comps[0].module, comps[-1].module, comps[150].module, "never_compiled"}
    # WHEN the lanes keep only what those need (not every module's fingerprint)
    lanes, _seen = plot_data.survey(comps, 12, asked)
    # THEN they are the same lanes, each asked module goes where the full lanes put it, and
    # only the asked modules sharing the last lane are kept
    assert lanes == full and list(lanes.rows) == list(full.rows)
    assert all(lanes.lane_of(m) == full.lane_of(m) for m in asked)
    assert lanes.others == frozenset(m for m in asked if full.lane_of(m) == len(full.shown))
    assert lanes.lane_of("never_compiled") is None


def test_plots_of_modules_numbered_first_are_the_same() -> None:
    from recompile_doctor.reports.module_numbers import module_numbers

    # GIVEN the demo run and runs of 300 and 40 modules
    for r in (demo_report(), many_modules_report(300), many_modules_report(40, 2)):
        rows = plot_data.plot_rows(r.compilations)
        # WHEN the modules are numbered once, before the plots (as the page does)
        numbers = module_numbers(r.compilations)
        assert numbers.count == len({c.module for c in r.compilations})
        firsts = list(dict.fromkeys(c.module for c in r.compilations))
        assert list(numbers.of) == [firsts.index(c.module) for c in r.compilations]
        # THEN the timeline (its lanes worked out first, as the page does) and the cost plot
        # are the same bytes as numbered by name
        a = plots.timeline_svg(rows, r.events, max_lanes=12)
        asked = plot_data.marked_modules(r.events)
        surveyed = plot_data.survey(rows, 12, asked, numbers)
        b = plots.timeline_svg(rows, r.events, max_lanes=12, surveyed=surveyed)
        assert a == b
        assert plots.cost_svg(r.findings, rows) == plots.cost_svg(r.findings, rows, numbers=numbers)
    # AND a run's table numbers its modules from its module column as a list of them does
    from recompile_doctor.timeline.table import CompilationTable

    table = CompilationTable()
    for k, m in enumerate(["b", "a", "b", "c", "a"]):
        table.append(
            module=m, hash=None, source="a.log", line=k + 1, t=None, ordinal=None, text="",
            key=None, rank=None, process=0,
        )  # fmt: skip
    got = module_numbers(table)
    assert list(got.of) == [0, 1, 0, 2, 1] and got.count == 3
    assert list(module_numbers(list(table)).of) == list(got.of)
    table.close()


@given(
    st.lists(st.sampled_from(["a", "b", "c", "d", "", "\udcff", "e" * 300]), max_size=40),
    st.integers(1, 6),
)
def test_modules_past_the_held_ones_are_numbered_by_sorting_as_by_table(
    modules: list[str], held: int
) -> None:
    from recompile_doctor.reports.module_numbers import module_numbers
    from recompile_doctor.timeline.table import CompilationTable

    # GIVEN a run's compilations, in a table and as a list
    table = CompilationTable()
    for k, m in enumerate(modules):
        table.append(
            module=m, hash=None, source="a.log", line=k + 1, t=None, ordinal=None, text="",
            key=None, rank=None, process=0,
        )  # fmt: skip
    try:
        # WHEN more distinct modules than the table holds are numbered (by sorting), THEN
        # each module's number is its place in the order of first compilation, as by table
        firsts = list(dict.fromkeys(modules))
        want = [firsts.index(m) for m in modules]
        for comps in (table, list(table)):
            got = module_numbers(comps, held=held)
            assert list(got.of) == want and got.count == len(firsts)
        assert list(module_numbers(table).of) == want
    finally:
        table.close()


def _page_parts(report: Report, held: int, max_lanes: int) -> tuple[object, ...]:
    """What the page works out of a run before drawing, as the page does it."""
    from recompile_doctor.reports.html_page import page
    from recompile_doctor.reports.module_numbers import module_numbers

    numbers = module_numbers(report.compilations, held=held)
    comps = plot_data.plot_rows(report.compilations)
    asked = plot_data.marked_modules(report.events)
    surveyed = plot_data.survey(comps, max_lanes, asked, numbers)
    lanes, seen = surveyed
    return (
        list(numbers.of),
        numbers.count,
        page(report, numbers),
        lanes,
        list(lanes.rows),
        lanes.others,
        seen,
        pictures.timeline_picture(comps, report.events, max_lanes=max_lanes, surveyed=surveyed),
        pictures.cost_picture(report.findings, comps, top=4, numbers=numbers),
    )


@given(
    st.lists(
        st.tuples(st.integers(0, 30), st.sampled_from([None, 0.0, 0.5, 1.0, 2.5]), st.booleans()),
        min_size=1,
        max_size=60,
    ),
    st.integers(1, 4),
    st.integers(2, 6),
)
def test_the_page_of_a_long_run_worked_out_in_files_is_the_one_worked_out_in_memory(
    drawn: list[tuple[int, float | None, bool]], held: int, max_lanes: int
) -> None:
    import dataclasses
    from unittest import mock

    from recompile_doctor.timeline import column

    # GIVEN a run's compilations: modules compiled again anywhere, equal durations (ties in
    # the sums), some before warm-up
    base = many_modules_report(1, 1)
    comps = tuple(
        dataclasses.replace(
            base.compilations[0],
            id=i,
            module=f"cluster_{m}",
            hash=None,
            line=3 * i + 1,
            end_line=3 * i + 2,
            t=float(i),
            duration_s=d,
            warmup=w,
        )
        for i, (m, d, w) in enumerate(drawn)
    )
    report = dataclasses.replace(base, compilations=comps)
    # WHEN the page's numbers, view, lanes and pictures are worked out in memory, and with
    # every per-module and per-compilation array in a file of chunks of two numbers, one
    # chunk held at a time, the modules numbered by sorting in runs of 1-4
    in_memory = _page_parts(report, 1 << 20, max_lanes)
    with (
        mock.patch.object(column, "SPILL_AFTER", 1),
        mock.patch.object(column, "CHUNK_ROWS", 2),
        mock.patch.object(column, "CACHED", 1),
        mock.patch.object(column, "RANDOM_CACHE", 0),
    ):
        in_files = _page_parts(report, held, max_lanes)
    # THEN they are the same
    assert in_files == in_memory


def test_a_modules_first_compilation_is_found_by_its_number() -> None:
    from recompile_doctor.reports.module_numbers import ModuleNumbers

    numbers = ModuleNumbers([0, 1, 0, 2, 1, 3], 4)
    assert numbers.firsts([3, 0, 2]) == [5, 0, 3]
    assert numbers.firsts(k for k in (1, 1)) == [1, 1]
    assert numbers.firsts([]) == []
    with pytest.raises(ValueError, match="no module numbered 4"):
        numbers.firsts([1, 4])


def test_lanes_of_numbered_modules_are_the_lanes_of_named_ones() -> None:
    from recompile_doctor.reports.module_numbers import module_numbers

    comps = list(many_modules_report(300).compilations)
    asked = {comps[0].module, comps[-1].module, comps[150].module, "never_compiled"}
    named = plot_data.survey(comps, 12, asked)
    numbered = plot_data.survey(comps, 12, asked, module_numbers(comps))
    assert named == numbered and list(named[0].rows) == list(numbered[0].rows)
    assert named[0].others == numbered[0].others
    with pytest.raises(ValueError, match="without the modules asked"):
        plot_data.survey(comps, 12, None, module_numbers(comps))


def _merged_by_python_sort(
    xs: list[float], ws: list[float], gap: float
) -> list[tuple[float, float]]:
    out: list[tuple[float, float]] = []
    for k in sorted(range(len(xs)), key=lambda k: (xs[k], ws[k])):
        x, w = xs[k], ws[k]
        if out and x <= out[-1][0] + out[-1][1] + gap:
            out[-1] = (out[-1][0], max(out[-1][1], x + w - out[-1][0]))
        else:
            out.append((x, w))
    return out


def _sorted_in_runs(given_bars: list[tuple[float, float]], run: int) -> list[tuple[float, float]]:
    """The bars given back by a :class:`SortedBars` that writes a run every ``run`` bars."""
    blobs = bars.Blobs("test-")
    try:
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(bars, "RUN", run)
            sorting = bars.SortedBars(blobs)
            for x, w in given_bars:
                sorting.add(x, w)
            return list(sorting.sorted())
    finally:
        blobs.close()


@given(
    st.lists(
        st.tuples(
            st.sampled_from([0.0, -0.0, 1.0, 1.5, 3.0]) | st.floats(-1e6, 1e6),
            st.sampled_from([0.0, 0.5, 2.0, -0.0]) | st.floats(0, 1e3),
        ),
        max_size=60,
    ),
    st.sampled_from([0.0, 0.25, 1.0]),
    st.integers(1, 7),
    st.sampled_from([0.0, 0.5, 2.0]),
)
def test_bars_sorted_in_runs_and_joined_are_those_of_a_full_sort(
    given_bars: list[tuple[float, float]], gap: float, run: int, min_w: float
) -> None:
    # GIVEN bars in any order (equal starts, -0.0 and 0.0 among them), WHEN each is
    # widened to min_w, sorted in runs of a few (written to a temporary file and merged)
    # and joined, THEN the result is a Python sort's of the widened bars, bit for bit
    xs, ws = [x for x, _ in given_bars], [w for _, w in given_bars]
    expected = _merged_by_python_sort(xs, [max(w, min_w) for w in ws], gap)
    joined = bars.Joined(gap, min_w)
    for x, w in _sorted_in_runs([(x, max(w, min_w)) for x, w in given_bars], run):
        joined.add(x, w)
    got = joined.bars
    assert [(x.hex(), w.hex()) for x, w in got] == [(x.hex(), w.hex()) for x, w in expected]
    # AND sorted in runs, the bars come back as a stable sort gives them
    pairs = _sorted_in_runs(given_bars, run)
    ordered = sorted(given_bars)
    assert [(x.hex(), w.hex()) for x, w in pairs] == [(x.hex(), w.hex()) for x, w in ordered]


@given(
    st.lists(
        st.tuples(
            st.sampled_from([0.0, 1.0, math.nan, math.inf, -math.inf]),
            st.sampled_from([0.0, 2.0, math.nan]),
        ),
        max_size=30,
    ),
    st.integers(1, 7),
)
def test_bars_with_nan_are_sorted_as_numpy_sorts_them(
    given_bars: list[tuple[float, float]], run: int
) -> None:
    # GIVEN bars of which some begin or last NaN, WHEN sorted in runs, THEN the order is
    # numpy's stable lexical sort (NaN after every number), whatever the runs
    np = pytest.importorskip("numpy")
    got = _sorted_in_runs(given_bars, run)
    xs = np.array([x for x, _ in given_bars], dtype=np.float64)
    ws = np.array([w for _, w in given_bars], dtype=np.float64)
    order = np.lexsort((ws, xs)) if given_bars else []
    want = [given_bars[k] for k in order]
    assert [(x.hex(), w.hex()) for x, w in got] == [(x.hex(), w.hex()) for x, w in want]


def _bars_read_whole(
    rows: list[plot_data.PlotRow], lanes: list[int], axis: str, gap: float, min_w: float
) -> dict[tuple[int, str, bool], list[tuple[float, float]]]:
    """The timeline's bars as they were made before they were joined as read: every bar's
    x and width kept per group, then each group joined whole (or drawn bar by bar)."""
    groups: dict[tuple[int, str, bool], tuple[list[float], list[float]]] = {}
    for c, lane in zip(rows, lanes, strict=True):
        x = float(c.t) if axis == "time" and c.t is not None else float(c.line)
        if axis == "time":
            w = max(c.duration_s or 0.0, 0.0)
        else:
            w = float(max((c.end_line or c.line) - c.line, 0))
        xs, ws = groups.setdefault((lane, c.cache, not c.warmup), ([], []))
        xs.append(x)
        ws.append(w)
    return {
        k: _merged_by_python_sort(xs, [max(w, min_w) for w in ws], gap)
        if len(xs) > bars.MERGE_ABOVE
        else [(x, max(w, min_w)) for x, w in zip(xs, ws, strict=True)]
        for k, (xs, ws) in groups.items()
    }


_BAR_ROWS = st.lists(
    st.tuples(
        st.integers(0, 2),  # lane
        st.sampled_from(["miss", "hit"]),
        st.booleans(),  # warm-up
        st.one_of(st.none(), st.sampled_from([0.0, -0.0, 1.0, 1.5]), st.floats(-10, 50)),
        st.one_of(st.none(), st.sampled_from([0.0, 0.5, -1.0]), st.floats(0, 20)),
        st.integers(1, 60),  # line
        st.one_of(st.none(), st.integers(0, 80)),  # end line
    ),
    max_size=40,
)


@given(
    _BAR_ROWS,
    st.sampled_from([0.0, 0.25, 3.0]),
    st.sampled_from([0.0, 0.5, 2.0]),
    st.integers(1, 6),
    st.booleans(),
    st.integers(1, 8),
)
def test_bars_joined_as_they_are_read_are_those_joined_whole(
    given_rows: list[tuple[int, str, bool, float | None, float | None, int, int | None]],
    gap: float,
    min_w: float,
    merge_above: int,
    ordered: bool,
    run: int,
) -> None:
    # GIVEN compilations in lanes, of both outcomes, before and after warm-up, in log order
    # or any order, some without a time, and groups of bars of either side of the size
    # above which they are joined
    if ordered:
        given_rows = sorted(given_rows, key=lambda r: (r[3] or 0.0, r[5]))
    rows = [
        plot_data.PlotRow("m", None, "a.log", line, end, t, d, cache, warm)
        for _lane, cache, warm, t, d, line, end in given_rows
    ]
    lanes = [r[0] for r in given_rows]
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(bars, "MERGE_ABOVE", merge_above)
        mp.setattr(bars, "RUN", run)
        for axis in ("time", "line"):
            # WHEN their bars are made as they are read (the groups out of order read twice)
            got = bars.group_bars(rows, lanes, axis, gap, min_w)  # type: ignore[arg-type]
            # THEN they are those of every bar kept and each group joined whole, bit for bit
            want = _bars_read_whole(rows, lanes, axis, gap, min_w)
            assert {k: [(x.hex(), w.hex()) for x, w in v] for k, v in got.items()} == {
                k: [(x.hex(), w.hex()) for x, w in v] for k, v in want.items()
            }


@given(_BAR_ROWS)
def test_the_survey_knows_where_the_bars_begin_and_end(
    given_rows: list[tuple[int, str, bool, float | None, float | None, int, int | None]],
) -> None:
    # GIVEN compilations, WHEN surveyed, THEN the first bar's start and the last one's end
    # are those of every bar on the axis the timeline draws (time when all have one)
    rows = [
        plot_data.PlotRow("m", None, "a.log", line, end, t, d, cache, warm)
        for _lane, cache, warm, t, d, line, end in given_rows
    ]
    _lanes, seen = plot_data.survey(rows, plot_data.MAX_LANES)
    assert seen.axis == ("time" if all(r.t is not None for r in rows) else "line")
    bars = [plot_data.bar_of(r, seen.axis) for r in rows]
    assert seen.first_x == min((x for x, _ in bars), default=float("inf"))
    assert seen.end == max((x + w for x, w in bars), default=float("-inf"))
