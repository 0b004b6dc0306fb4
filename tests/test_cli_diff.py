"""``recompile-doctor diff``: exit codes, one-line errors, schema-valid JSON and goldens."""

from __future__ import annotations

import gzip
import io
import json
import os
from pathlib import Path

import jsonschema
import pytest

from recompile_doctor.cli.main import main

ROOT = Path(__file__).resolve().parent.parent
GOLDENS = ROOT / "tests" / "goldens" / "diff"
SCHEMA = json.loads((ROOT / "recompile_doctor" / "schemas" / "diff.schema.json").read_text())
J = "fixtures/hlo/jax"

CASES = {
    "stable": (f"{J}/stable/run1", f"{J}/stable/run2"),
    "weights_as_params": (f"{J}/weights_as_params/run1", f"{J}/weights_as_params/run2"),
    "batch_size": (
        f"{J}/batch_size/dumps/module_0000.jit_mlp.before_optimizations.txt",
        f"{J}/batch_size/dumps/module_0002.jit_mlp.before_optimizations.txt",
    ),
    "python_constant": (
        f"{J}/python_constant/dumps/module_0000.jit_step.before_optimizations.txt",
        f"{J}/python_constant/dumps/module_0002.jit_step.before_optimizations.txt",
    ),
    "frozen_weights": (
        f"{J}/frozen_weights/dumps/module_0000.jit_predict.before_optimizations.txt",
        f"{J}/frozen_weights/dumps/module_0002.jit_predict.before_optimizations.txt",
    ),
    "frozen_weights_large": (
        f"{J}/frozen_weights_large/dumps/module_0000.jit_predict.cpu_after_optimizations.txt",
        f"{J}/frozen_weights_large/dumps/module_0002.jit_predict.cpu_after_optimizations.txt",
    ),
    "params_vs_frozen": (f"{J}/params_vs_frozen/params", f"{J}/params_vs_frozen/frozen"),
    "growing_concat": (
        f"{J}/growing_concat/dumps/module_0002.jit_grow.before_optimizations.txt",
        f"{J}/growing_concat/dumps/module_0004.jit_grow.before_optimizations.txt",
    ),
    "dtype_change": (
        f"{J}/dtype_change/dumps/module_0000.jit_norm.cpu_after_optimizations.txt",
        f"{J}/dtype_change/dumps/module_0002.jit_norm.cpu_after_optimizations.txt",
    ),
}
#: frozen_weights: the weights differ but both dumps print them as {...}: the text is the same
EQUIVALENT = {"stable", "weights_as_params", "frozen_weights"}


@pytest.fixture(autouse=True)
def _repo_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setenv("TZ", "UTC")


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def golden(name: str, actual: str) -> None:
    path = GOLDENS / name
    if os.environ.get("RD_REGEN_GOLDENS") == "1" or not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(actual, encoding="utf-8")
    assert actual == path.read_text(encoding="utf-8")


@pytest.mark.parametrize("case", sorted(CASES))
def test_text_output_names_the_cause_first_and_matches_golden(
    case: str, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = CASES[case]
    code, out, err = run(capsys, "diff", a, b)
    assert err == ""
    assert code == (0 if case in EQUIVALENT else 1)
    golden(f"{case}.txt", out)


@pytest.mark.parametrize("case", sorted(CASES))
def test_json_output_is_schema_valid_and_matches_golden(
    case: str, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = CASES[case]
    _, out, _ = run(capsys, "diff", a, b, "--format", "json")
    doc = json.loads(out)
    jsonschema.validate(doc, SCHEMA)
    assert doc["schema"] == "recompile-doctor/diff/1"
    assert all(m["equivalent"] == (case in EQUIVALENT) for m in doc["modules"])
    golden(f"{case}.json", out)


def test_markdown_output_has_a_table_of_key_instructions(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = run(capsys, "diff", *CASES["python_constant"], "--format", "markdown")
    assert code == 1
    assert "| constant-changed | constant | `%constant.1` | `%constant.1` | 0.1 → 0.01" in out


def test_folders_with_module_and_stage_options(capsys: pytest.CaptureFixture[str]) -> None:
    a, b = CASES["stable"]
    code, out, _ = run(
        capsys, "diff", a, b, "--module", "jit_mlp", "--stage", "cpu_after_optimizations"
    )
    assert code == 0 and "cpu_after_optimizations" in out


def test_unknown_module_is_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "diff", *CASES["stable"], "--module", "jit_nope")
    assert code == 2 and "no module named 'jit_nope'" in err


def test_malformed_file_is_one_line_with_location_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.txt"
    bad.write_text("HloModule m\nENTRY e {\n  x = f32[2] parameter(0\n}\n")
    code, out, err = run(capsys, "diff", str(bad), CASES["batch_size"][0])
    assert code == 2 and out == ""
    assert err.startswith(f"recompile-doctor: error: {bad}:3:")
    assert err.count("\n") == 1 and "Traceback" not in err


def test_missing_input_is_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "diff", "nope.txt", CASES["batch_size"][0])
    assert code == 2 and "nope.txt: no such file" in err


def test_gzip_and_stdin_inputs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = CASES["python_constant"]
    gz = tmp_path / "a.hlo"  # compressed, detected by magic bytes, not by name
    gz.write_bytes(gzip.compress(Path(a).read_bytes()))
    monkeypatch.setattr("sys.stdin", io.StringIO(Path(b).read_text()))
    code, out, _ = run(capsys, "diff", str(gz), "-")
    assert code == 1 and "constant-changed" in out


def test_output_file_and_html_are_written_and_never_overwritten_without_force(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_json, page = tmp_path / "d.json", tmp_path / "d.html"
    code, _, _ = run(capsys, "diff", *CASES["batch_size"], "-o", str(out_json), "--html", str(page))
    assert code == 1
    jsonschema.validate(json.loads(out_json.read_text()), SCHEMA)
    html = page.read_text()
    assert "batch-size-changed" in html and "<script src" not in html  # self-contained
    assert "http://" not in html and "https://" not in html
    code, _, err = run(capsys, "diff", *CASES["batch_size"], "-o", str(out_json))
    assert code == 2 and "file exists" in err


def test_help_describes_the_command(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "diff", "--help")
    assert code == 0 and "--stage" in out and "module_NNNN" in out


def test_a_run_that_compiled_nothing_is_said_to_have_used_a_cache(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # GIVEN two JAX runs where the second took its executable from the persistent cache: its
    # dump folder holds the module's debug_options but no HLO
    pair = ROOT / "fixtures" / "jax" / "crossrun" / "healthy_pair"
    # WHEN their dump folders are diffed
    code, _, err = run(capsys, "diff", str(pair / "a" / "dumps"), str(pair / "b" / "dumps"))
    # THEN the one-line error says why there is nothing to compare, not how to turn dumps on
    assert code == 2
    assert len(err.strip().splitlines()) == 1
    assert "jit_train_step" in err and "compilation cache" in err
    assert "--xla_dump_to" not in err
