"""Golden files of the rendered HTML, compared exactly.

Regenerate after an intended change with ``RD_REGEN_GOLDENS=1 pytest tests/test_html_goldens.py``
(or ``make goldens``) and review the diff of ``tests/goldens/html/``.

The inline SVG plots are replaced by a placeholder that keeps their accessible title and the
text they draw (lane labels, legend, axis): matplotlib's path output changes between its
releases, while everything else on the page is ours.  The plots' own determinism and content
are tested in ``test_html_plots.py``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from _html_reports import demo_report, empty_report, healthy_report, hostile_report

from recompile_doctor.model import DiffEvidence, Report
from recompile_doctor.reports.html import render, render_diff

GOLDENS = Path(__file__).resolve().parent / "goldens" / "html"
REGEN = os.environ.get("RD_REGEN_GOLDENS") == "1"

_SVG = re.compile(r"<svg\b.*?</svg>", re.S)
_TITLE = re.compile(r"<title id=\"([^\"]+)\">(.*?)</title>", re.S)
_TEXT = re.compile(r"<text\b[^>]*>(.*?)</text>", re.S)


def mask_svg(html: str) -> str:
    """Each inline SVG becomes ``<svg id title>`` plus the texts it draws, one per line."""

    def one(m: re.Match[str]) -> str:
        svg = m.group(0)
        t = _TITLE.search(svg)
        texts = "\n".join(f"  {x}" for x in _TEXT.findall(svg))
        head = f"<svg {t.group(1)}: {t.group(2)}>" if t else "<svg>"
        return f"{head}\n{texts}\n</svg>"

    return _SVG.sub(one, html)


def _diff_page() -> str:
    return render_diff(
        [
            DiffEvidence(
                "shape",
                "jit_mlp",
                "%x.1",
                '%x.1 = f32[8,784]{1,0} parameter(0), metadata={op_name="x"}',
                "%x.1",
                '%x.1 = f32[5,784]{1,0} parameter(0), metadata={op_name="x"}',
                detail="leading dimension 8 -> 5",
                a_path="a/module_0000.jit_mlp.before_optimizations.txt",
                b_path="b/module_0002.jit_mlp.before_optimizations.txt",
            )
        ],
        a="a",
        b="b",
        tool_version="0.1.0",
    ).decode("utf-8")


CASES: dict[str, Callable[[], str]] = {
    "demo": lambda: render(demo_report()),
    "healthy": lambda: render(healthy_report()),
    "hostile": lambda: render(hostile_report()),
    "empty": lambda: render(empty_report()),
    "diff": _diff_page,
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_html_matches_golden(name: str) -> None:
    # GIVEN a fixture report WHEN rendered THEN the page is exactly the golden one
    got = mask_svg(CASES[name]())
    path = GOLDENS / f"{name}.html"
    if REGEN:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(got, encoding="utf-8")
    assert path.exists(), f"missing golden {path}; run with RD_REGEN_GOLDENS=1"
    want = path.read_text(encoding="utf-8")
    assert got == want, f"{path} differs; if intended, regenerate with RD_REGEN_GOLDENS=1"


def test_mask_keeps_the_text_drawn_in_the_plots() -> None:
    report: Report = demo_report()
    masked = mask_svg(render(report))
    assert "<svg timeline-title: Timeline of compilations per function>" in masked
    assert "  cluster_7" in masked
    assert "<path" not in masked
