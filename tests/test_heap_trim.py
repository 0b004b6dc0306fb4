"""Freed memory given back to the system between the command's phases (glibc only)."""

from __future__ import annotations

import platform
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from recompile_doctor import heap_trim
from recompile_doctor.cli.main import cli

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures"


@pytest.mark.skipif(
    not sys.platform.startswith("linux") or platform.libc_ver()[0] != "glibc",
    reason="malloc_trim is glibc's",
)
def test_glibc_gives_freed_memory_back() -> None:
    # GIVEN a process that made and freed 64 MB of small objects
    junk = [bytes(200) for _ in range(320_000)]
    del junk
    # THEN the C library's trim is found and reports that it gave pages back
    assert heap_trim._malloc_trim() is not None
    assert heap_trim.give_back() is True


def test_elsewhere_nothing_is_done(monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN a system other than Linux, THEN no C library is loaded and nothing is given back
    heap_trim._malloc_trim.cache_clear()
    monkeypatch.setattr(sys, "platform", "darwin")
    try:
        assert heap_trim._malloc_trim() is None
        assert heap_trim.give_back() is False
    finally:
        heap_trim._malloc_trim.cache_clear()


def test_analyze_gives_memory_back_after_the_analysis_before_the_report(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # GIVEN analyze with a report written to a file
    import recompile_doctor.cli.analyze as cli_analyze
    import recompile_doctor.reports as reports

    order: list[str] = []
    monkeypatch.setattr(cli_analyze, "give_back", lambda: order.append("give back") or True)
    render = reports.render
    monkeypatch.setattr(reports, "render", lambda r, f: order.append("render") or render(r, f))
    log = next(FIXTURE.rglob("*.log"))
    out = tmp_path / "r.md"
    result = CliRunner().invoke(cli, ["analyze", str(log), "--format", "markdown", "-o", str(out)])
    # THEN the memory is given back once, after the analysis and before the report is made
    assert result.exit_code in (0, 1), result.output
    assert order == ["give back", "render"]
    assert out.read_text(encoding="utf-8")
