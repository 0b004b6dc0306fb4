"""The closed loop: every built-in scenario, simulated and analyzed, raises exactly the
warnings and errors its listing promises (info findings may come on top)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from recompile_doctor.cli.main import main
from recompile_doctor.simulate import run_scenario, scenarios

SPEC_NAMES = {
    "healthy",
    "cache-disabled",
    "alternating-graphs",
    "partial-batch",
    "frozen-weights",
    "concat-growth",
    "lr-constant",
    "precompile",
    "precompile-unhashable",
    "kitchen-sink",
}


def _bad_rules(log: Path, dumps: Path | None) -> set[str]:
    from recompile_doctor import api

    report = api.analyze([log], dumps=[dumps] if dumps else [])
    return {f.rule for f in report.findings if f.severity != "info"}


def test_every_spec_scenario_exists_with_known_rules() -> None:
    # GIVEN the rule catalogue WHEN the scenarios are listed
    from recompile_doctor.rules import RULES

    infos = scenarios()
    # THEN all SPEC names exist, and every expected rule is a real rule id
    assert {i.name for i in infos} >= SPEC_NAMES
    for i in infos:
        assert set(i.rules) <= set(RULES), i.name
        assert i.description


@pytest.mark.parametrize("name", [i.name for i in scenarios()])
def test_closed_loop_scenario_raises_exactly_its_rules(name: str, tmp_path: Path) -> None:
    # GIVEN a scenario simulated with its defaults
    result = run_scenario(name, tmp_path / name, env={})
    # WHEN its run.log is analyzed with its dumps
    got = _bad_rules(result.log_path, result.dumps_dir)
    # THEN exactly the listed warnings/errors are raised
    assert got == set(result.rules)


def test_healthy_second_run_loads_everything_and_warns_nothing(tmp_path: Path) -> None:
    # GIVEN two healthy runs sharing one executable cache
    cache = tmp_path / "cache"
    first = run_scenario("healthy", tmp_path / "a", cache=cache, env={})
    second = run_scenario("healthy", tmp_path / "b", cache=cache, env={})
    text = second.log_path.read_text()
    # THEN the second run loads instead of compiling, and neither run has a warning
    assert "Loaded " in text and "Couldn't find" not in text
    assert "Starting phase: graphConstruction" not in text
    assert "Loading executable" in text
    assert _bad_rules(first.log_path, first.dumps_dir) == set()
    assert _bad_rules(second.log_path, second.dumps_dir) == set()


def test_scenarios_command_lists_json_as_spec_says(capsys: pytest.CaptureFixture[str]) -> None:
    # WHEN the scenarios are listed as JSON
    assert main(["scenarios", "--format", "json"]) == 0
    listing = json.loads(capsys.readouterr().out)
    # THEN each entry has exactly the SPEC's keys
    assert {tuple(sorted(e)) for e in listing} == {
        ("consideration", "description", "name", "rules")
    }
    byname = {e["name"]: e for e in listing}
    assert byname["partial-batch"]["rules"] == ["batch-size-changed"]
    assert byname["partial-batch"]["consideration"] == 2
    assert byname["healthy"]["rules"] == []
