"""The HTML report as a reader gets it: what it says, what it links, what it never does."""

from __future__ import annotations

import base64
import hashlib
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from _html_reports import (
    EVAL,
    TRAIN,
    demo_report,
    empty_report,
    healthy_report,
    hostile_report,
    many_modules_report,
)

from recompile_doctor.model import DiffEvidence, Report
from recompile_doctor.reports import render as render_any
from recompile_doctor.reports.html import render, render_diff
from recompile_doctor.timeline.names import function_key


class Page(HTMLParser):
    """The parts of a page the tests look at: ids, links, resources, scripts, text."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.ids: list[str] = []
        self.hrefs: list[str] = []
        self.srcs: list[str] = []
        self.tags: list[str] = []
        self.scripts: list[str] = []
        self.text: list[str] = []
        self._in_script = False
        self.feed(html)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        a = dict(attrs)
        if a.get("id"):
            self.ids.append(str(a["id"]))
        if tag == "a" and a.get("href"):
            self.hrefs.append(str(a["href"]))
        for k in ("src", "srcset", "data", "action"):
            if a.get(k):
                self.srcs.append(str(a[k]))
        if tag == "link" and a.get("href"):
            self.srcs.append(str(a["href"]))
        if tag == "script":
            self._in_script = True
            self.scripts.append("")

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self._in_script = False

    def handle_data(self, data: str) -> None:
        if self._in_script:
            self.scripts[-1] += data
        else:
            self.text.append(data)

    @property
    def plain(self) -> str:
        return " ".join(" ".join(self.text).split())


def _page(report: Report) -> tuple[str, Page]:
    html = render(report)
    return html, Page(html)


def test_demo_headline_says_how_many_compilations_after_warmup_and_causes() -> None:
    # GIVEN the demo run (6 compilations, 3 after warm-up, 3 warnings)
    _, page = _page(demo_report())
    # THEN the summary line comes first and the headline numbers are there
    assert "6 compilations of 3 functions, 3 after warm-up, 3 causes." in page.plain
    assert "1 / 5" in page.plain  # cache hits / misses
    assert "1 min 23 s" in page.plain  # time wasted
    assert "Top cause A constant's value changed" in page.plain


def test_findings_appear_worst_first_with_why_what_to_change_and_evidence() -> None:
    # GIVEN the demo report
    report = demo_report()
    _html, page = _page(report)
    # THEN every finding is an article, in the report's order (worst first)
    ids = [i for i in page.ids if i.startswith("finding-")]
    assert ids == [
        "finding-1-constant-changed",
        "finding-2-batch-size-changed",
        "finding-3-executable-switching",
        "finding-4-cache-cold",
    ]
    for f in report.findings:
        assert f.title in page.plain
        assert f.advice in page.plain
    assert page.plain.count("Why it recompiles") == 4
    assert page.plain.count("What to change") == 4


def test_every_evidence_line_has_an_anchor_and_every_evidence_link_resolves() -> None:
    # GIVEN the demo report
    report = demo_report()
    _, page = _page(report)
    # THEN each evidence line has an ev-<source>-<line> anchor
    for f in report.findings:
        for ev in f.evidence:
            assert any(re.fullmatch(rf"ev-run-log-{ev.line}(-\d+)?", i) for i in page.ids), ev
    # AND every in-page link points to an element that exists
    targets = {h[1:] for h in page.hrefs if h.startswith("#")}
    assert targets, "no in-page links"
    assert targets <= set(page.ids)
    assert len(page.ids) == len(set(page.ids)), "duplicate ids"


def test_evidence_is_shown_in_context_with_line_numbers_and_the_match_marked() -> None:
    # GIVEN the batch-size finding, whose evidence is line 22 with two lines around it
    html, _ = _page(demo_report())
    row = re.search(r'<tr id="ev-run-log-22" class="match"><td class="ln">22</td>(.*?)</tr>', html)
    # THEN the evidence line is numbered and its matched parts are marked
    assert row is not None
    assert "<mark>Begin XLA compilation</mark>" in row.group(1)
    assert f"<mark>{TRAIN}</mark>" in row.group(1)
    # AND the context lines 20, 21, 23, 24 are shown around it
    for n in (20, 21, 23, 24):
        assert f'<tr class="ctx"><td class="ln">{n}</td>' in html


def test_hlo_changes_are_side_by_side_with_changed_tokens_marked() -> None:
    # GIVEN the batch-size finding's diff (f32[32,784] -> f32[16,784])
    html, page = _page(demo_report())
    # THEN old and new are two columns and the changed dimension is marked on each side
    assert "What changed in the HLO (old → new)" in page.plain
    assert "<del>32</del>" in html and "<ins>16</ins>" in html
    # AND the learning-rate constant shows 0.001 -> 0.0005
    assert "<del>0.001</del>" in html and "<ins>0.0005</ins>" in html
    # AND the 300-value bias constant is abbreviated
    assert "294 more values" in page.plain
    assert "0.741" not in html  # a value from the middle of the list


def test_timeline_and_cost_are_inline_svg_with_a_lane_per_module() -> None:
    html, page = _page(demo_report())
    assert page.tags.count("svg") == 2
    timeline = html[html.index('<figure class="plot" id="timeline-plot">') :]
    timeline = timeline[: timeline.index("</svg>")]
    # one lane per module, named by the function it compiles
    for lane in ("cluster_7", function_key(TRAIN), function_key(EVAL)):
        assert f">{lane}<" in timeline
    assert "seconds since the log" in timeline
    assert "after warm-up" in timeline and "executable load" in timeline


def test_timeline_uses_line_numbers_when_the_log_has_no_timestamps() -> None:
    html, page = _page(hostile_report())
    assert "log line" in html
    assert "The log has no timestamps" in page.plain


def test_300_modules_get_grouped_lanes_with_a_note_and_a_full_table() -> None:
    # GIVEN 300 modules, each compiled three times
    html, page = _page(many_modules_report(300))
    # THEN the timeline groups what does not fit and says so
    assert "261 other modules" in html
    assert "the other 261 share the last lane" in page.plain
    # AND the function table lists all 300
    table = html[html.index('id="functions-table"') :]
    table = table[: table.index("</table>")]
    assert table.count('<td class="mod">') == 300
    # AND the finding lists its first evidence in full and the ones like it one line each
    assert "more like it" in page.plain


def test_healthy_run_says_so_and_draws_no_cost() -> None:
    _html, page = _page(healthy_report())
    assert "Healthy: nothing recompiles after warm-up." in page.plain
    assert "No time was lost to recompilation after warm-up." in page.plain
    assert not any(i.startswith("finding-") for i in page.ids)
    assert page.tags.count("svg") == 1  # the timeline only


def test_empty_input_renders_a_complete_page_that_explains_what_is_missing() -> None:
    html, page = _page(empty_report())
    assert "No compilation was found in the input" in page.plain
    assert "TF_CPP_VMODULE" in page.plain
    assert "svg" not in page.tags
    assert html.rstrip().endswith("</html>")


def test_everything_from_logs_and_dumps_is_escaped() -> None:
    # GIVEN a report whose module names, paths, lines and HLO carry markup and quotes
    html, page = _page(hostile_report())
    # THEN the only script element is the report's own, and no hostile tag survives
    assert page.tags.count("script") == 1
    assert "alert(1)" not in page.scripts[0]
    assert "<b>bold</b>" not in html
    assert "<i>" not in html
    assert "</pre></table>" not in html
    # AND the strings are shown to the reader as they were
    assert "</script><script>alert(1)</script><b>bold</b>" in page.plain
    assert 'logs/"weird" <b>&dir</b>/</script>.log' in page.plain
    # AND the module name in the SVG is escaped as well (and "$x$" is not typeset as math)
    svg = html[html.index("<svg") : html.index("</svg>")]
    assert "<script" not in svg and "<b>" not in svg
    assert "$x$" in svg


def test_page_is_self_contained_and_forbids_network_requests() -> None:
    # GIVEN any report
    html, page = _page(demo_report())
    # THEN no element loads anything from outside the page
    assert all(s.startswith("data:") for s in page.srcs), page.srcs
    assert not re.search(r"@import|url\(\s*['\"]?(https?:|//)", html)
    assert '<link rel="stylesheet"' not in html
    # AND the Content-Security-Policy forbids every request and allows only our script
    csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', html)
    assert csp is not None
    assert "default-src 'none'" in csp.group(1)
    digest = base64.b64encode(hashlib.sha256(page.scripts[0].encode()).digest()).decode()
    assert f"script-src 'sha256-{digest}'" in csp.group(1)


@pytest.mark.parametrize(
    "make", [demo_report, healthy_report, hostile_report, empty_report, many_modules_report]
)
def test_rendering_is_deterministic_and_dateless(make: object) -> None:
    # GIVEN the same report twice
    report = make()  # type: ignore[operator]
    # WHEN rendered twice
    a = render(report)
    b = render(report)
    # THEN the pages are the same and no date or time of rendering is in them
    assert a == b
    assert not re.search(r"\b20\d\d-\d\d-\d\dT\d\d:\d\d", a)
    assert "<dc:date>" not in a


def test_render_is_registered_as_the_html_renderer() -> None:
    assert render_any(healthy_report(), "html") == render(healthy_report())


def test_saved_json_report_renders_the_same_page() -> None:
    # GIVEN a report saved as JSON and read back
    report = demo_report()
    again = Report.from_json(report.to_json())
    # THEN the page is byte for byte the same
    assert render(again) == render(report)


def test_diff_page_from_plain_diff_evidence_groups_changes_by_module() -> None:
    # GIVEN changes of two modules
    evs = [
        DiffEvidence(
            "shape", "jit_f", "%p", "%p = f32[8,4] parameter(0)", "%p", "%p = f32[4,4] parameter(0)"
        ),
        DiffEvidence(
            "constant", "jit_g", "%c", "%c = f32[] constant(1)", "%c", "%c = f32[] constant(2)"
        ),
    ]
    # WHEN the diff page is rendered
    html = render_diff(evs, a="dumpA", b="dumpB").decode()
    page = Page(html)
    # THEN each module has its section and its marked changes
    assert "module-jit-f" in page.ids and "module-jit-g" in page.ids
    assert "<del>8</del>" in html and "<ins>4</ins>" in html
    assert "2 modules compared, 2 with changes that cause a recompilation." in page.plain
    assert render_diff(evs, a="dumpA", b="dumpB") == html.encode()


FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "hlo" / "jax"


def test_diff_page_of_real_jax_dumps_names_the_batch_size_change() -> None:
    # GIVEN two real JAX dumps of jit_mlp, batch 8 then another batch size
    differ = pytest.importorskip("recompile_doctor.differ")
    dumps = FIXTURES / "batch_size" / "dumps"
    a = dumps / "module_0000.jit_mlp.before_optimizations.txt"
    b = dumps / "module_0002.jit_mlp.before_optimizations.txt"
    # WHEN the differ's result is rendered
    result = differ.diff_files(a, b)
    html = render_diff([result]).decode()
    page = Page(html)
    # THEN the page names the cause and marks the changed instructions
    assert "batch-size-changed" in result.causes
    assert "batch-size-changed" in page.plain
    assert "<del>" in html and "<ins>" in html


def test_diff_page_of_a_diff_result_lists_unpaired_modules() -> None:
    # GIVEN a whole diff result: one module pair plus a module found only in the new dump
    differ = pytest.importorskip("recompile_doctor.differ")
    dumps = FIXTURES / "python_constant" / "dumps"
    files = sorted(dumps.glob("*before_optimizations.txt"))
    pair = differ.diff_files(files[0], files[-1])
    result = differ.DiffResult(a="run1", b="run2", modules=[pair], unpaired_b=["jit_<new>"])
    # WHEN rendered
    html = render_diff(result).decode()
    page = Page(html)
    # THEN the pair's cause is explained and the unpaired module is listed, escaped
    assert "Old run1 → new run2" in page.plain
    assert "constant-changed" in pair.causes and "A constant's value changed" in page.plain
    assert "Only in the new dump:" in page.plain and "jit_<new>" in page.plain
    assert "jit_<new>" not in html


def test_the_diff_page_shows_the_settings_that_changed_beside_the_hlo() -> None:
    # GIVEN two JAX runs whose compile options differ only in the device assignment
    from recompile_doctor.differ import diff_paths

    pair = Path(__file__).resolve().parent.parent / "fixtures/jax/crossrun/compile_option_changed"
    res = diff_paths(str(pair / "a" / "dumps"), str(pair / "b" / "dumps"))
    changed = [st for m in res.modules for st in m.settings]
    assert changed  # the text and JSON outputs list them
    # WHEN the diff page is rendered
    page = render_diff(res).decode("utf-8")
    # THEN it has the settings table with each changed field and its old and new values
    assert "Settings beside the HLO" in page
    for st in changed:
        assert f"<code>{st.field}</code>" in page
        assert (st.old or "(unset)") in page and (st.new or "(unset)") in page


@pytest.mark.parametrize("make", [demo_report, many_modules_report])
def test_plots_drawn_in_a_fresh_process_give_the_same_page(
    make: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    from recompile_doctor.reports import draw_apart

    # GIVEN a report, its page with the plots drawn in this process
    report = make()  # type: ignore[operator]
    here = render(report, draw_apart=False)

    # WHEN the plots are drawn in a fresh process, with this one unable to draw them
    def not_here(*_a: object) -> object:
        raise AssertionError("drawn in the parent")

    monkeypatch.setattr(draw_apart, "_here", not_here)
    apart = render(report, draw_apart=True)
    # THEN the page is byte for byte the same
    assert apart == here


def test_plots_are_drawn_here_when_the_fresh_process_fails(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import sys

    # GIVEN an interpreter that cannot start, fails at once or says nothing
    report = demo_report()
    here = render(report, draw_apart=False)
    for python in ("/nonexistent/python", "/bin/false", "/bin/true", ""):
        monkeypatch.setattr(sys, "executable", python)
        # THEN the plots are drawn here: the same page
        assert render(report, draw_apart=True) == here


def test_plots_are_drawn_here_when_the_fresh_process_does_not_answer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import time

    from recompile_doctor.reports import draw_apart

    # GIVEN a fresh process that hangs (it sleeps before it reads its pictures)
    report = demo_report()
    here = render(report, draw_apart=False)
    monkeypatch.setattr(draw_apart, "_CHILD", "import time\ntime.sleep(60)\n")
    monkeypatch.setattr(draw_apart, "WAIT_S", 0.5)
    # WHEN the page is made with its plots drawn apart
    start = time.monotonic()
    apart = render(report, draw_apart=True)
    # THEN the child is given up after its time and the plots are drawn here: the same page
    assert apart == here
    assert time.monotonic() - start < 30


def test_big_runs_draw_their_plots_apart_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    from recompile_doctor.reports import draw_apart

    asked: list[bool] = []
    real = draw_apart.draw

    def spy(*a: object, apart: bool = False) -> object:
        asked.append(apart)
        return real(*a, apart=False)  # type: ignore[arg-type]

    monkeypatch.setattr(draw_apart, "draw", spy)
    report = demo_report()
    render(report)
    monkeypatch.setattr(draw_apart, "APART_ABOVE", len(report.compilations) - 1)
    render(report)
    assert asked == [False, True]


def test_a_page_drawn_apart_leaves_the_plotting_libraries_out_of_this_process() -> None:
    import subprocess
    import sys

    # GIVEN a fresh interpreter rendering a page with its plots drawn apart
    code = (
        "import sys; sys.path.insert(0, 'tests')\n"
        "from _html_reports import demo_report\n"
        "from recompile_doctor.reports.html import render\n"
        "page = render(demo_report(), draw_apart=True)\n"
        "assert '<svg' in page\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('matplotlib', 'numpy')))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    # THEN neither matplotlib nor numpy was imported there
    assert done.stdout.strip() == "[]"
