"""Trust item 20 (simulator side): what `simulate` says is what it wrote."""

from __future__ import annotations

from pathlib import Path

import pytest

from recompile_doctor import analyze
from recompile_doctor.cli.main import main


def test_simulate_reports_each_log_with_its_own_line_count(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN the precompile scenario (two logs) WHEN simulated
    out = tmp_path / "p"
    assert main(["simulate", "precompile", "--out", str(out)]) in (0, None)
    printed = capsys.readouterr().out
    # THEN each log is listed with the number of lines it really has
    for name in ("run.log", "precompile.log"):
        n = (out / name).read_text().count("\n")
        assert f"{out / name}: {n} lines" in printed


def test_healthy_scenario_writes_the_second_cached_run_it_promises(tmp_path: Path) -> None:
    # GIVEN the healthy scenario WHEN simulated
    from recompile_doctor.simulate import run_scenario

    r = run_scenario("healthy", tmp_path / "h")
    # THEN a second run of the same script loads what the first compiled, without warnings
    second = tmp_path / "h" / "second-run.log"
    assert second in r.logs
    rep = analyze([str(r.log_path), str(second)])
    assert rep.summary.cache_hits >= 1 and rep.summary.cache_misses >= 1
    assert [f.rule for f in rep.findings if f.severity != "info"] == []
