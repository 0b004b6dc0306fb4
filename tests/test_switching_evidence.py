"""Trust item 1: executable switching is found from whatever evidence a log has, and the
finding says which evidence it rests on."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from recompile_doctor import analyze
from recompile_doctor.simulate import run_scenario


def _simulate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, level: str) -> Path:
    out = tmp_path / level
    run_scenario("alternating-graphs", out, env={"POPLAR_LOG_LEVEL": level})
    return out / "run.log"


def _switching(log: Path) -> list[str]:
    r = analyze([str(log)])
    return [f.detail for f in r.findings if f.rule == "executable-switching"]


def test_switching_at_warn_level_is_found_from_the_execute_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN a run logged at POPLAR_LOG_LEVEL=WARN: no 'Loading executable' lines, but the
    # Execute lines alternate between two modules on one device
    log = _simulate(tmp_path, monkeypatch, "WARN")
    text = log.read_text()
    assert "Loading executable" not in text and "Execute " in text
    # WHEN analysed THEN switching is found, and the finding says it rests on Execute lines
    (detail,) = _switching(log)
    assert "Evidence: the Execute lines" in detail


def test_switching_from_recurring_loads_while_two_graphs_were_compiled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN an INFO-level run whose Execute lines are gone (only the load phases recur)
    log = _simulate(tmp_path, monkeypatch, "INFO")
    lines = [ln for ln in log.read_text().splitlines(keepends=True) if "] Execute " not in ln]
    bare = tmp_path / "no-execute.log"
    bare.write_text("".join(lines))
    assert "Loading executable" in bare.read_text()
    # WHEN analysed THEN it is executable switching (not merely slow loads), said so
    r = analyze([str(bare)])
    rules = {f.rule for f in r.findings}
    assert "executable-switching" in rules and "slow-load" not in rules
    (detail,) = [f.detail for f in r.findings if f.rule == "executable-switching"]
    assert "graphs were compiled" in detail


def test_a_single_graph_never_switches(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN a healthy run at WARN level (one graph) THEN no switching is claimed
    run_scenario("healthy", tmp_path / "h", env={"POPLAR_LOG_LEVEL": "WARN"})
    assert _switching(tmp_path / "h" / "run.log") == []
    assert os.path.exists(tmp_path / "h" / "run.log")
