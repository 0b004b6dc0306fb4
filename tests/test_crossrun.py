"""Across runs (#13): why run B did not reuse what run A compiled, from real JAX captures.

Each pair in ``fixtures/jax/crossrun/<case>/{a,b}`` shares one persistent cache; its
``expected.json`` (written by hand from what the capture script does) names the cache-key
component that changed, with its old and new value.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from recompile_doctor.api import analyze
from recompile_doctor.model import Finding
from tests.conftest import FIXTURES, run_cli, schema, validate_report_json

PAIRS = FIXTURES / "jax" / "crossrun"
BROKEN = ("flag_changed", "compile_option_changed", "frozen_weights_pair")
KEY_RULES = {"flags-changed", "compile-options-changed", "version-changed", "frozen-weights"}


def expected(case: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((PAIRS / case / "expected.json").read_text())
    return data


def logs(case: str) -> list[str]:
    return [str(PAIRS / case / side / "run.log") for side in ("a", "b")]


def dumps(case: str) -> list[str]:
    return [str(PAIRS / case / side / "dumps") for side in ("a", "b")]


def crossrun_findings(case: str, with_dumps: bool) -> list[Finding]:
    report = analyze(logs(case), dumps=dumps(case) if with_dumps else ())
    return [f for f in report.findings if f.severity != "info"]


# --- analyze A.log B.log ------------------------------------------------------------------


@pytest.mark.parametrize("with_dumps", [False, True], ids=["logs", "logs+dumps"])
def test_a_changed_flag_is_named_with_its_old_and_new_value(with_dumps: bool) -> None:
    # GIVEN run b added --xla_backend_optimization_level=1, which JAX puts in the cache key
    exp = expected("flag_changed")["causes"][0]
    # WHEN both logs are analyzed
    found = crossrun_findings("flag_changed", with_dumps)
    # THEN the one warning is flags-changed, naming the flag: unset in a, 1 in b
    assert [f.rule for f in found] == [exp["rule"]] == ["flags-changed"]
    flag = [c for c in found[0].changes if c.what == "--xla_backend_optimization_level"]
    assert len(flag) == 1
    assert (flag[0].old, flag[0].new) == ("(unset)", "1")
    assert f"{flag[0].what}={flag[0].new}" == exp["new"]
    assert flag[0].function == exp["function"]
    # AND the evidence holds the XLA-flags hash line of each run (lines of expected.json)
    lines = {(Path(e.source).parent.name, e.line) for e in found[0].evidence}
    assert ("a", 20) in lines and ("b", 22) in lines and ("b", 16) in lines
    assert found[0].wasted_seconds > 0


def test_with_dumps_the_flag_change_also_shows_in_the_compile_options() -> None:
    # GIVEN the dumps of both runs (compile_options.textproto: debug_options 3 -> 1)
    also = expected("flag_changed")["crossrun"]["also_changed"][0]
    found = crossrun_findings("flag_changed", with_dumps=True)
    # THEN the compile options' debug_options field is one of the changes, 3 -> 1
    opt = [
        c
        for c in found[0].changes
        if c.what.endswith("debug_options.xla_backend_optimization_level")
    ]
    assert [(c.old, c.new) for c in opt] == [("3", "1")]
    assert also["old"].endswith(": 3") and also["new"].endswith(": 1")


@pytest.mark.parametrize("with_dumps", [False, True], ids=["logs", "logs+dumps"])
def test_a_changed_device_assignment_is_compile_options_changed(with_dumps: bool) -> None:
    # GIVEN a ran on CPU device 0 and b on device 1 (same program, same flags)
    exp = expected("compile_option_changed")["causes"][0]
    found = crossrun_findings("compile_option_changed", with_dumps)
    # THEN compile-options-changed names the device assignment, old -> new
    assert [f.rule for f in found] == [exp["rule"]]
    da = [c for c in found[0].changes if c.what == "device_assignment"]
    assert [(f"device_assignment={c.old}", f"device_assignment={c.new}") for c in da] == [
        (exp["old"], exp["new"])
    ]
    lines = {(Path(e.source).parent.name, e.line) for e in found[0].evidence}
    assert {("a", 7), ("b", 7), ("a", 24), ("b", 24), ("b", 34)} <= lines


def test_frozen_weights_across_runs_are_found_in_module_mlir() -> None:
    # GIVEN jit(predict) closes over weights from seed 0 (a) / seed 1 (b); the HLO text
    # elides them as {...}; only the computation hash differs
    found = crossrun_findings("frozen_weights_pair", with_dumps=True)
    # THEN frozen-weights, with the constant's old and new value from module.mlir
    assert [f.rule for f in found] == ["frozen-weights"]
    (change,) = found[0].changes
    assert change.old is not None and change.new is not None
    assert 'dense<"0x6CBF003E' in change.old and 'dense<"0x69F0B03E' in change.new
    assert "512 of 512 elements differ" in found[0].detail
    assert found[0].advice.startswith("Pass the weights (params) as arguments")


def test_without_dumps_a_changed_program_says_so_and_asks_for_the_dumps() -> None:
    hashes = expected("frozen_weights_pair")["crossrun"]["hashes"]
    found = crossrun_findings("frozen_weights_pair", with_dumps=False)
    assert [f.rule for f in found] == ["graph-changed"]
    (change,) = found[0].changes
    assert (change.old, change.new) == (hashes["a"]["computation"], hashes["b"]["computation"])
    assert "--dumps" in found[0].detail


@pytest.mark.parametrize("with_dumps", [False, True], ids=["logs", "logs+dumps"])
def test_a_hit_across_runs_raises_nothing(with_dumps: bool) -> None:
    # GIVEN two identical runs: b hits the entry a wrote
    report = analyze(logs("healthy_pair"), dumps=dumps("healthy_pair") if with_dumps else ())
    # THEN no warning, and b's compilation counts as a hit
    assert not [f for f in report.findings if f.severity != "info"]
    assert sorted(c.cache for c in report.compilations) == ["hit", "miss"]


def test_one_run_alone_raises_no_cross_run_finding() -> None:
    report = analyze(logs("flag_changed")[1:])
    assert not {f.rule for f in report.findings} & KEY_RULES


def test_the_runs_in_reverse_order_report_the_change_the_other_way() -> None:
    report = analyze(list(reversed(logs("flag_changed"))))
    (f,) = [f for f in report.findings if f.rule == "flags-changed"]
    flag = [c for c in f.changes if c.what == "--xla_backend_optimization_level"]
    assert [(c.old, c.new) for c in flag] == [("1", "(unset)")]


def test_cli_json_report_carries_the_changes_and_validates(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = run_cli(
        "analyze", *logs("compile_option_changed"), "--format", "json", capsys=capsys
    )
    assert code == 0
    data = json.loads(out)
    validate_report_json(data)
    (f,) = [f for f in data["findings"] if f["rule"] == "compile-options-changed"]
    assert {
        "what": "device_assignment",
        "old": "[[CpuDevice(id=0)]]",
        "new": "[[CpuDevice(id=1)]]",
    }.items() <= f["changes"][0].items()


# --- diff dumpA dumpB ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("case", "rule", "field", "old", "new"),
    [
        ("flag_changed", "flags-changed", "xla_backend_optimization_level", None, "1"),
        (
            "compile_option_changed",
            "compile-options-changed",
            "executable_build_options.device_assignment.computation_devices.replica_device_ids",
            "0",
            "1",
        ),
    ],
)
def test_diff_names_the_settings_beside_identical_hlo(
    case: str,
    rule: str,
    field: str,
    old: str | None,
    new: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # GIVEN two dump folders whose HLO is the same but whose side files differ
    a, b = dumps(case)
    # WHEN diffed as JSON
    code, out, _ = run_cli("diff", a, b, "--format", "json", capsys=capsys)
    # THEN exit 1 (a difference that recompiles), the cause, and the field old -> new
    assert code == 1
    data = json.loads(out)
    jsonschema.validate(data, schema("diff.schema.json"))
    (m,) = data["modules"]
    assert m["causes"] == [rule] and not m["equivalent"]
    assert {"field": field, "old": old, "new": new, "rule": rule}.items() <= next(
        s for s in m["settings"] if s["field"] == field
    ).items()
    # AND the dump-only flags (xla_dump_to, ...) are never reported
    assert not [s for s in m["settings"] if "xla_dump" in s["field"]]


def test_diff_text_shows_the_flag_change(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli("diff", *dumps("flag_changed"), capsys=capsys)
    assert code == 1
    assert "flags-changed" in out
    assert "xla_backend_optimization_level: 3 → 1" in out


def test_diff_resolves_elided_constants_to_frozen_weights(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # GIVEN HLO texts that are identical because the weights print as {...}
    code, out, _ = run_cli("diff", *dumps("frozen_weights_pair"), "--format", "json", capsys=capsys)
    # THEN module.mlir decides: frozen-weights, every one of the 512 elements changed
    assert code == 1
    data = json.loads(out)
    jsonschema.validate(data, schema("diff.schema.json"))
    (m,) = data["modules"]
    assert m["causes"] == ["frozen-weights"]
    assert "512 of 512 elements differ" in m["explanations"][0]["message"]
    assert not [n for n in m["notes"] if n["rule"] == "constants-elided"]
    (ch,) = m["changes"]
    assert ch["rule"] == "frozen-weights" and ch["a"]["text"].startswith(
        'f32[16,32] dense<"0x6CBF003E'
    )


def test_diff_of_two_identical_runs_with_side_files_is_equivalent(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a, _ = dumps("flag_changed")
    code, out, _ = run_cli("diff", a, a, capsys=capsys)
    assert code == 0, out


def test_a_changed_jaxlib_version_hash_is_version_changed(tmp_path: Path) -> None:
    # GIVEN the healthy pair, with run b's jax_lib version hash and cache key edited as a
    # newer jaxlib would log them (and b missing the cache instead of hitting it)
    a, b = logs("healthy_pair")
    text = Path(b).read_text()
    old_hash = "40d13e87ba3f9c11dbaec3506d8462538adb6fc29bd32279eb4bbef0b66abe95"
    assert f"hash of serialized jax_lib version: {old_hash}" in text
    edited = (
        text.replace(
            f"serialized jax_lib version: {old_hash}", "serialized jax_lib version: " + "ab" * 32
        )
        .replace("Cache hit for key", "Cache miss for key")
        .replace("Persistent compilation cache hit for", "PERSISTENT COMPILATION CACHE MISS for")
        .replace("jit_train_step-80750b72", "jit_train_step-00000000")
    )
    (tmp_path / "b.log").write_text(edited)
    report = analyze([a, str(tmp_path / "b.log")])
    # THEN version-changed, naming the component and both hashes
    (f,) = [f for f in report.findings if f.severity != "info"]
    assert f.rule == "version-changed"
    (ch,) = f.changes
    assert (ch.what, ch.old, ch.new) == ("jax_lib version (hash)", old_hash, "ab" * 32)
