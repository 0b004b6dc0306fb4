"""The HTML report in a real browser, as a person sees it.

Drives the system's Chromium (``apt-get install chromium``, ``/usr/bin/chromium``; override
with ``RD_CHROMIUM``) through the ``playwright`` Python package -- never a downloaded
browser.  Skipped when either is missing; CI installs both (``tests/e2e/requirements.txt``).

Screenshots of every page land in ``build/html-report/`` (``RD_ARTIFACTS`` to move them) as
CI artifacts, for a person to look at.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _html_reports import demo_report, healthy_report, many_modules_report

from recompile_doctor.model import Report
from recompile_doctor.reports.html import render

if os.environ.get("CI") == "true":
    # in CI the browser tests must run, never skip: .ci/run installs what they need
    import playwright.sync_api as playwright_sync
else:
    playwright_sync = pytest.importorskip(
        "playwright.sync_api", reason="playwright is not installed"
    )

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = os.environ.get("RD_CHROMIUM", "/usr/bin/chromium")
ARTIFACTS = Path(os.environ.get("RD_ARTIFACTS", ROOT / "build" / "html-report"))
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]

pytestmark = pytest.mark.skipif(
    os.environ.get("CI") != "true"
    and not (os.path.isfile(CHROMIUM) and os.access(CHROMIUM, os.X_OK)),
    reason=f"no Chromium at {CHROMIUM}",
)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with playwright_sync.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        try:
            yield b
        finally:
            b.close()


def _demo_page(tmp: Path) -> Path:
    """The page ``recompile-doctor demo`` writes."""
    from recompile_doctor.cli.main import main

    out = tmp / "demo-run"
    if main(["demo", "--out", str(out)]) != 0:
        pytest.fail("recompile-doctor demo failed")
    page = out / "report.html"
    assert page.is_file(), f"demo wrote no HTML report under {out}"
    return page


def _write(path: Path, report: Report) -> Path:
    path.write_text(render(report), encoding="utf-8")
    return path


class Visit:
    """One page open in the browser, with every request and console error recorded."""

    def __init__(self, browser: Any, path: Path, *, js: bool = True) -> None:
        self.context = browser.new_context(
            viewport={"width": 1280, "height": 900}, java_script_enabled=js
        )
        self.page = self.context.new_page()
        self.url = path.resolve().as_uri()
        self.requests: list[str] = []
        self.errors: list[str] = []
        self.page.on("request", lambda r: self.requests.append(r.url))
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        # nothing may leave the page: abort (and record) anything that is not the file itself
        self.context.route(
            "**/*",
            lambda route: route.continue_() if route.request.url == self.url else route.abort(),
        )
        self.page.goto(self.url, wait_until="load")

    def outside_requests(self) -> list[str]:
        return [u for u in self.requests if u != self.url and not u.startswith("data:")]

    def screenshot(self, name: str) -> Path:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        path = ARTIFACTS / f"{name}.png"
        self.page.screenshot(path=str(path), full_page=True)
        return path

    def close(self) -> None:
        self.context.close()


@pytest.fixture
def demo(browser: Any, tmp_path: Path) -> Iterator[Visit]:
    v = Visit(browser, _demo_page(tmp_path))
    yield v
    v.close()


def test_demo_headline_findings_and_timeline_are_visible(demo: Visit) -> None:
    page = demo.page
    # THEN the summary line and the headline numbers are on screen
    assert page.locator("#summary-sentence").is_visible()
    assert "compilations" in page.locator("#summary-sentence").inner_text()
    for key in ("compilations", "recompilations_after_warmup", "cache", "wasted_seconds"):
        card = page.locator(f'#headline [data-key="{key}"]')
        assert card.is_visible(), key
        assert any(ch.isdigit() for ch in card.inner_text()), key
    # AND every finding shows its title, why and what to change
    findings = page.locator("article.finding")
    assert findings.count() >= 1
    for i in range(findings.count()):
        f = findings.nth(i)
        f.scroll_into_view_if_needed()
        assert f.is_visible()
        assert f.locator("h3").inner_text().strip()
        assert f.locator(".why").is_visible() and f.locator(".fix").is_visible()
    # AND the timeline is a visible SVG of a sensible size
    svg = page.locator("#timeline-plot svg")
    svg.scroll_into_view_if_needed()
    assert svg.is_visible()
    box = svg.bounding_box()
    assert box is not None and box["width"] > 600 and box["height"] > 80
    demo.screenshot("demo")


def test_evidence_links_jump_to_their_lines(demo: Visit) -> None:
    page = demo.page
    links = page.locator("article.finding a.evlink, article.finding .evlinks a")
    assert links.count() >= 1
    hrefs = sorted({links.nth(i).get_attribute("href") or "" for i in range(links.count())})
    for href in hrefs[:10]:
        # WHEN a reader clicks a link to an evidence line
        page.locator(f'article.finding a[href="{href}"]').first.click()
        # THEN the page jumps there: the line is the target and on screen
        assert page.evaluate("location.hash") == href
        target = page.locator(href)
        assert target.evaluate("el => el.matches(':target')")
        box = target.bounding_box()
        assert box is not None and 0 <= box["y"] < 900 - box["height"], (href, box)


def test_top_cause_link_jumps_to_its_finding(demo: Visit) -> None:
    page = demo.page
    link = page.locator('#headline [data-key="top_cause"] a')
    if link.count() == 0:
        pytest.skip("the demo has no warning")
    href = link.get_attribute("href")
    link.click()
    box = page.locator(str(href)).bounding_box()
    assert box is not None and 0 <= box["y"] < 300


def test_page_fits_the_window_without_sideways_scrolling(demo: Visit) -> None:
    # long module names, paths and HLO lines wrap or scroll inside their own box
    width = demo.page.evaluate("document.scrollingElement.scrollWidth")
    assert width <= 1280, f"page is {width}px wide in a 1280px window"


def test_no_request_leaves_the_page_and_the_console_is_clean(demo: Visit) -> None:
    demo.page.mouse.wheel(0, 20000)  # scroll through everything
    demo.page.wait_for_timeout(100)
    assert demo.outside_requests() == []
    assert demo.errors == []


def test_module_table_sorts_with_js_and_is_whole_without(browser: Any, tmp_path: Path) -> None:
    path = _write(tmp_path / "big.html", many_modules_report(300))
    # GIVEN JS on: clicking "Module" sorts the 300 rows by name
    v = Visit(browser, path)
    try:
        table = v.page.locator("#functions-table")
        th = table.locator("th", has_text="Function")
        th.locator("button").click()
        assert th.get_attribute("aria-sort") == "ascending"
        names = table.locator("tbody tr td.mod").all_inner_texts()
        assert names[:3] == ["cluster_0", "cluster_1", "cluster_2"]  # natural order
        # AND clicking "Compile time" puts the most expensive function first
        th_time = table.locator("th", has_text="Compile time")
        th_time.locator("button").click()
        assert th_time.get_attribute("aria-sort") == "descending"
        vals = [
            float(v)
            for v in table.locator("tbody tr td:last-child").evaluate_all(
                "tds => tds.map(td => td.getAttribute('data-v'))"
            )
        ]
        assert vals == sorted(vals, reverse=True)
        assert table.locator("tbody tr").count() == 300
        assert v.page.evaluate("document.scrollingElement.scrollWidth") <= 1280
        assert v.errors == [] and v.outside_requests() == []
        v.page.locator("#timeline-note").scroll_into_view_if_needed()
        assert "share the last lane" in v.page.locator("#timeline-note").inner_text()
        v.screenshot("300-modules")
    finally:
        v.close()
    # AND with JS off the table is complete, in its server-side order
    v = Visit(browser, path, js=False)
    try:
        assert v.page.locator("#functions-table tbody tr").count() == 300
        assert v.page.locator("#functions-table th button").count() == 0
        assert v.page.locator("#timeline-plot svg").is_visible()
    finally:
        v.close()


def test_hand_built_demo_with_hlo_diffs_renders_cleanly(browser: Any, tmp_path: Path) -> None:
    # GIVEN the hand-built demo, which has instruction-level diffs and long constants
    v = Visit(browser, _write(tmp_path / "demo-fixture.html", demo_report()))
    try:
        table = v.page.locator("table.sxs").first
        table.scroll_into_view_if_needed()
        assert table.is_visible()
        assert v.page.locator("table.sxs del").count() >= 1
        assert v.page.locator("table.sxs ins").count() >= 1
        assert v.page.evaluate("document.scrollingElement.scrollWidth") <= 1280
        assert v.errors == [] and v.outside_requests() == []
        v.screenshot("demo-fixture")
    finally:
        v.close()


def test_healthy_run_reads_as_healthy(browser: Any, tmp_path: Path) -> None:
    v = Visit(browser, _write(tmp_path / "healthy.html", healthy_report()))
    try:
        assert "Healthy" in v.page.locator("#verdict").inner_text()
        assert v.page.locator("article.finding").count() == 0
        assert v.errors == [] and v.outside_requests() == []
        v.screenshot("healthy")
    finally:
        v.close()


def test_timeline_text_stays_readable_at_800_px_and_bars_link_to_log_lines(
    browser: Any, tmp_path: Path
) -> None:
    path = _write(tmp_path / "demo.html", demo_report())
    context = browser.new_context(viewport={"width": 800, "height": 900})
    try:
        page = context.new_page()
        page.goto(path.resolve().as_uri(), wait_until="load")
        # GIVEN an 800 px window THEN the lane labels are drawn at 9.5 px or more
        size = page.evaluate(
            """() => {
                 const svg = document.querySelector('#timeline-plot svg');
                 const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
                 return Math.min(...Array.from(svg.querySelectorAll('text'))
                   .map(t => parseFloat(getComputedStyle(t).fontSize) * scale));
               }"""
        )
        assert size >= 9.5
        # AND clicking a bar of a compile line shown as evidence goes to that line
        link = page.locator("#timeline-plot svg a").first
        target = link.get_attribute("xlink:href") or link.get_attribute("href")
        assert target and target.startswith("#ev-")
        link.locator("path").first.click(force=True)
        assert page.evaluate("location.hash") == target
    finally:
        context.close()
