"""``recompile-doctor demo``: simulate, analyze with dumps, write the report, say where."""

from __future__ import annotations

from pathlib import Path

import pytest

from recompile_doctor import analyze
from tests.conftest import run_cli


def test_demo_writes_the_run_and_the_report_and_prints_the_findings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    # GIVEN a fresh folder WHEN the demo runs
    code, out, err = run_cli("demo", "--out", "d", capsys=capsys)
    # THEN the run, its dumps and a self-contained report are there
    assert code == 0, err
    d = tmp_path / "d"
    assert (d / "run.log").is_file() and any((d / "dumps").iterdir())
    page = (d / "report.html").read_text()
    assert page.startswith("<!DOCTYPE html>") and "https://" not in page
    # AND the findings it prints are the ones the analysis of that run raises
    report = analyze([str(d / "run.log")], dumps=[str(d / "dumps")])
    rules = {f.rule for f in report.findings if f.severity != "info"}
    assert rules == {"batch-size-changed", "constant-changed", "executable-switching"}
    assert any((d / "cache").glob("*.poplar_exec"))  # the executable cache of the run
    for rule in rules:
        assert rule in out and rule in page
    assert "report.html" in out


def test_demo_refuses_a_non_empty_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "x").write_text("keep me")
    code, _, err = run_cli("demo", "--out", str(tmp_path), capsys=capsys)
    assert code == 2 and "not empty" in err
    assert (tmp_path / "x").read_text() == "keep me"
