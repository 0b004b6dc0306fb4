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
def test_glibc_gives_freed_memory_back(monkeypatch: pytest.MonkeyPatch) -> None:
    def resident_mb() -> int:
        with open("/proc/self/status") as f:
            return next(int(x.split()[1]) // 1024 for x in f if x.startswith("VmRSS"))

    # GIVEN a process that made 64 MB of blocks the C allocator gives from its heap (100 kB:
    # under its threshold for a mapping of their own) and freed all but every eighth and
    # the last: holes the heap cannot shrink by, whose pages stay resident
    junk = [b"x" * 100_000 for _ in range(640)]
    stays = [*junk[::8], junk[-1]]
    del junk
    before = resident_mb()
    # WHEN the memory is given back, in the command line's process
    monkeypatch.setattr(heap_trim, "_ours", True)
    monkeypatch.setattr(heap_trim, "MIN_PEAK_BYTES", 0)
    assert heap_trim._malloc_trim() is not None
    assert heap_trim.give_back() is True
    # THEN the freed pages are the system's again
    assert resident_mb() <= before - 32, before
    assert len(stays) == 81


def test_elsewhere_nothing_is_done(monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN a system other than Linux, THEN no C library is loaded and nothing is given back
    heap_trim._malloc_trim.cache_clear()
    monkeypatch.setattr(heap_trim, "_ours", True)
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


def test_a_library_call_leaves_its_hosts_memory_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN a process the command line does not run (a notebook importing the package)
    monkeypatch.setattr(heap_trim, "_ours", False)
    trims: list[int] = []
    monkeypatch.setattr(heap_trim, "_malloc_trim", lambda: trims.append)
    # WHEN asked to give memory back (the HTML renderer does between its phases)
    # THEN the allocator is not asked to trim
    assert heap_trim.give_back() is False
    assert trims == []
    # and in the command line's process it is
    heap_trim.process_is_ours()
    monkeypatch.setattr(heap_trim, "_ours", True)  # (undone after the test)
    monkeypatch.setattr(heap_trim, "MIN_PEAK_BYTES", 0)
    monkeypatch.setattr(sys, "platform", "linux")
    heap_trim.give_back()
    assert trims == [0]


def test_a_process_that_stayed_small_loads_no_c_library(monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN the command line's process, on Linux, whose resident memory never reached the
    # threshold (a small log's analysis: about 25 MB)
    monkeypatch.setattr(heap_trim, "_ours", True)
    monkeypatch.setattr(sys, "platform", "linux")
    loads: list[str] = []
    monkeypatch.setattr(heap_trim, "_malloc_trim", lambda: loads.append("ctypes"))
    monkeypatch.setattr(heap_trim, "_peak_bytes", lambda: heap_trim.MIN_PEAK_BYTES - 1)
    # WHEN asked to give memory back, THEN nothing is loaded and nothing is given back
    assert heap_trim.give_back() is False
    assert loads == []
    # AND once it has grown past the threshold, it is trimmed
    monkeypatch.setattr(heap_trim, "_peak_bytes", lambda: heap_trim.MIN_PEAK_BYTES)
    monkeypatch.setattr(heap_trim, "_malloc_trim", lambda: lambda pad: loads.append("trim") or 1)
    assert heap_trim.give_back() is True
    assert loads == ["trim"]


def test_the_peak_is_read_in_bytes() -> None:
    # (Linux gives kilobytes: a process of this suite is past 10 MB and under 10 GB)
    if not sys.platform.startswith("linux"):
        pytest.skip("Linux reports kilobytes")
    assert 10 << 20 < heap_trim._peak_bytes() < 10 << 30
