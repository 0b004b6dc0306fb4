"""Issue 13: a cross-run comparison is its own section in text, Markdown and HTML: the two
runs, the part of the cache key that differs, side by side."""

from __future__ import annotations

from pathlib import Path

from recompile_doctor import analyze, render

PAIR = Path(__file__).resolve().parent.parent / "fixtures" / "jax" / "crossrun" / "flag_changed"


def test_crossrun_section_in_every_renderer() -> None:
    # GIVEN two runs sharing a persistent cache, the second with one more XLA flag
    r = analyze([str(PAIR / "a" / "run.log"), str(PAIR / "b" / "run.log")])
    # WHEN rendered THEN each format has the section with the runs and the flag old -> new
    text = render(r, "text")
    assert "Across runs" in text and "--xla_backend_optimization_level" in text
    assert str(PAIR / "a" / "run.log") in text and "(unset)" in text
    md = render(r, "markdown")
    assert "## Across runs" in md and "`--xla_backend_optimization_level`" in md
    html = render(r, "html")
    assert 'id="crossrun"' in html and "<ins><code>1</code></ins>" in html


def test_no_crossrun_section_for_one_run() -> None:
    r = analyze([str(PAIR / "a" / "run.log")])
    assert "Across runs" not in render(r, "text")
    assert 'id="crossrun"' not in render(r, "html")
