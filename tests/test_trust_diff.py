"""``diff`` is never wrong and never silent: every compilation is accounted for, comparing
nothing is an error, retraced TensorFlow functions pair, identical text is equivalent, and
every cause comes with what to change."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import jsonschema
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from recompile_doctor.cli.main import main
from recompile_doctor.parsers.dumps import parse_dump_name

ROOT = Path(__file__).resolve().parent.parent
JAX = ROOT / "fixtures" / "hlo" / "jax"
SCHEMA = json.loads((ROOT / "recompile_doctor" / "schemas" / "diff.schema.json").read_text())


@pytest.fixture(autouse=True)
def _no_color(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Simulated runs (``simulate SCENARIO --out DIR``), each with its ``dumps/`` folder."""
    root = tmp_path_factory.mktemp("runs")
    for scenario in ("healthy", "partial-batch", "concat-growth"):
        assert main(["simulate", scenario, "--out", str(root / scenario)]) == 0
    return root


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def run_json(capsys: pytest.CaptureFixture[str], *argv: str | Path) -> tuple[int, dict]:  # type: ignore[type-arg]
    code, out, err = run(capsys, "diff", *(str(a) for a in argv), "--format", "json")
    assert err == "", err
    doc = json.loads(out)
    jsonschema.validate(doc, SCHEMA)
    return code, doc


# --- item 2: every compilation is accounted for -------------------------------------------


def test_extra_compilation_in_b_is_diffed_against_its_predecessor_in_b(
    runs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN a healthy run (one compilation) and a partial-batch run (batch 32, then 8)
    a, b = runs / "healthy" / "dumps", runs / "partial-batch" / "dumps"
    b_files = sorted(p.name for p in b.iterdir())
    # WHEN the two dump folders are diffed
    code, doc = run_json(capsys, a, b)
    # THEN the first compilations are compared, and B's second is compared with B's first
    assert code == 1
    across = [m for m in doc["modules"] if m["within"] is None]
    extra = [m for m in doc["modules"] if m["within"] is not None]
    assert len(across) == 1 and across[0]["equivalent"]
    (x,) = extra
    assert x["within"] == "b"
    assert Path(x["a"]).name == b_files[0] and Path(x["b"]).name == b_files[1]
    assert x["causes"] == ["batch-size-changed"]
    assert any("32 → 8" in e["message"] for e in x["explanations"])


def test_extra_compilation_is_named_in_text_and_the_folders_are_not_equivalent(
    runs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "diff", runs / "partial-batch" / "dumps", runs / "healthy" / "dumps")
    # THEN the extra compilation is in A this time, compared within A, and named as such
    assert code == 1
    assert "batch-size-changed" in out
    assert "extra compilation in A" in out
    assert "equivalent" in out.splitlines()[0]  # the first compilations agree


def test_growth_across_extra_compilations_is_a_growing_shape(
    runs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN a healthy run and a run whose graph grows every epoch (3 compilations)
    code, doc = run_json(capsys, runs / "healthy" / "dumps", runs / "concat-growth" / "dumps")
    extra = [m for m in doc["modules"] if m["within"] == "b"]
    # THEN both of B's extra compilations are diffed within B and the growth is seen
    assert code == 1 and len(extra) == 2
    assert all("growing-shape" in m["causes"] for m in extra)


def test_function_on_one_side_only_still_has_its_recompilations_explained(
    tmp_path: Path, runs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN B holds a JAX function compiled twice (batch 32 -> 16) that A does not have
    a, b = tmp_path / "a", tmp_path / "b"
    shutil.copytree(runs / "healthy" / "dumps", a)
    shutil.copytree(runs / "healthy" / "dumps", b)
    for f in (JAX / "batch_size" / "dumps").glob("*.before_optimizations.txt"):
        shutil.copy(f, b / f.name)
    code, doc = run_json(capsys, a, b)
    # THEN it is unpaired, and its second compilation is diffed against its first, within B
    assert code == 1
    assert doc["unpaired"]["b"] == ["mlp"]
    (x,) = [m for m in doc["modules"] if m["within"] == "b"]
    assert x["name"] == "jit_mlp" and x["causes"] == ["batch-size-changed"]


# --- item 3: comparing nothing is an error, not "equivalent" --------------------------------


def one_line_error(code: int, out: str, err: str) -> str:
    assert code == 2 and out == ""
    assert err.startswith("recompile-doctor: error: ") and err.count("\n") == 1
    return err


def test_empty_folders_are_an_error_saying_what_was_looked_for(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = tmp_path / "emptyA", tmp_path / "emptyB"
    a.mkdir()
    b.mkdir()
    err = one_line_error(*run(capsys, "diff", a, b))
    assert f"{a}: no HLO dump found" in err and "module_*" in err


def test_parents_of_dump_folders_suggest_the_subfolders(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # GIVEN a folder whose dumps are in subfolders run1/ and run2/
    parent = JAX / "stable"
    err = one_line_error(*run(capsys, "diff", parent, parent))
    # THEN the error names the subfolders that hold dumps
    assert "no HLO dump found" in err
    assert "run1/" in err and "run2/" in err and "did you mean" in err


def test_a_stage_that_is_not_there_lists_the_stages_present(
    capsys: pytest.CaptureFixture[str],
) -> None:
    a, b = JAX / "stable" / "run1", JAX / "stable" / "run2"
    err = one_line_error(*run(capsys, "diff", a, b, "--stage", "bogus"))
    assert "bogus" in err
    assert "before_optimizations" in err and "cpu_after_optimizations" in err


def test_a_folder_compared_with_an_empty_one_is_an_error_naming_the_empty_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "notes.txt").write_text("not a dump\n")
    err = one_line_error(*run(capsys, "diff", JAX / "stable" / "run1", empty))
    assert f"{empty}: no HLO dump found" in err


# --- item 4: a retraced TensorFlow function pairs by its function name ---------------------


def renamed(src: Path, dest: Path, counter: int, module_id: int) -> Path:
    """``src`` (a TF dump) copied into ``dest`` as if traced with another per-trace counter."""
    dest.mkdir(exist_ok=True)
    name = src.name.replace("_20382__", f"_{counter}__").replace("module_0005", "module_0004")
    name = name.replace("module_0004", f"module_{module_id:04d}")
    shutil.copy(src, dest / name)
    return dest / name


def test_function_name_strips_the_per_trace_counter_only() -> None:
    from recompile_doctor.parsers.dumps import function_name
    from recompile_doctor.timeline.names import function_key

    tf = "a_inference_mlp_28__XlaMustCompile_true_config_proto___n_007__executor_type____.626"
    assert function_name(tf) == "mlp"
    assert function_name(tf.replace("_28__", "_44__")) == "mlp"
    assert function_name("jit_mlp") == "mlp"
    assert function_name("jit(mlp)") == "mlp"
    assert function_key(tf) == function_name(tf)  # one implementation


def test_retraced_tf_functions_pair_across_folders(
    tmp_path: Path, runs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN the same tf.function traced as ..._28__ in A and, at batch 8, as ..._44__ in B
    first, second = sorted((runs / "partial-batch" / "dumps").iterdir())
    renamed(first, tmp_path / "a", 28, 4)
    renamed(second, tmp_path / "b", 44, 7)
    # WHEN the folders are diffed
    code, doc = run_json(capsys, tmp_path / "a", tmp_path / "b")
    # THEN the two compilations are compared and the batch change is named
    assert code == 1
    assert doc["unpaired"] == {"a": [], "b": []}
    (m,) = doc["modules"]
    assert m["within"] is None and m["causes"] == ["batch-size-changed"]
    assert m["name"] == "train_function"


def test_retrace_within_one_folder_is_a_sequence_of_one_function(
    tmp_path: Path, runs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first, second = sorted((runs / "partial-batch" / "dumps").iterdir())
    renamed(first, tmp_path / "a", 28, 4)
    renamed(first, tmp_path / "b", 28, 4)
    renamed(second, tmp_path / "b", 44, 9)
    code, doc = run_json(capsys, tmp_path / "a", tmp_path / "b")
    assert code == 1 and doc["unpaired"] == {"a": [], "b": []}
    assert [(m["within"], m["causes"]) for m in doc["modules"]] == [
        (None, []),
        ("b", ["batch-size-changed"]),
    ]


@pytest.mark.parametrize("name", ["train_function", "a_inference_train_function", "<full>"])
def test_module_option_accepts_the_short_tf_function_name(
    name: str, tmp_path: Path, runs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first, second = sorted((runs / "partial-batch" / "dumps").iterdir())
    renamed(first, tmp_path / "a", 28, 4)
    full = parse_dump_name(renamed(second, tmp_path / "b", 44, 7).name)[1]  # type: ignore[index]
    if name == "<full>":
        name = full
    code, out, err = run(capsys, "diff", tmp_path / "a", tmp_path / "b", "--module", name)
    assert err == "" and code == 1 and "batch-size-changed" in out


@pytest.mark.parametrize("name", ["mlp", "jit_mlp"])
def test_module_option_accepts_jax_function_names(
    name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = JAX / "stable" / "run1", JAX / "stable" / "run2"
    code, out, err = run(capsys, "diff", a, b, "--module", name)
    assert err == "" and code == 0 and "jit_mlp" in out


def test_module_option_on_two_files_accepts_the_short_name(
    capsys: pytest.CaptureFixture[str],
) -> None:
    d = JAX / "batch_size" / "dumps"
    a = d / "module_0000.jit_mlp.before_optimizations.txt"
    b = d / "module_0002.jit_mlp.before_optimizations.txt"
    code, out, err = run(capsys, "diff", a, b, "--module", "mlp")
    assert err == "" and code == 1 and "batch-size-changed" in out


# --- item 5: identical text is equivalent; elided constants are a note, never a cause ------

FROZEN = JAX / "frozen_weights" / "dumps"


@pytest.mark.parametrize(
    "name",
    [
        "module_0000.jit_predict.before_optimizations.txt",
        "module_0000.jit_predict.cpu_after_optimizations.txt",
    ],
)
def test_a_file_with_elided_constants_diffed_with_itself_is_equivalent(
    name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN a real JAX dump whose weights are printed as constant({...})
    f = FROZEN / name
    assert "{...}" in f.read_text()
    # WHEN it is diffed with itself
    code, doc = run_json(capsys, f, f)
    # THEN it is equivalent, and the elided constants are an info note, not a cause
    assert code == 0
    (m,) = doc["modules"]
    assert m["equivalent"] and m["causes"] == [] and m["changes"] == []
    elided = [n for n in m["notes"] if n["rule"] == "constants-elided"]
    assert len(elided) == 1
    assert "not compared" in elided[0]["message"]
    assert "--xla_dump_large_constants" in elided[0]["message"]


def test_text_of_a_self_diff_does_not_headline_a_recompile(
    capsys: pytest.CaptureFixture[str],
) -> None:
    f = FROZEN / "module_0000.jit_predict.before_optimizations.txt"
    code, out, _ = run(capsys, "diff", f, f)
    assert code == 0 and "equivalent" in out.splitlines()[0]
    assert "note" in out and "constants-elided" in out


def test_dumps_that_differ_only_in_elided_constants_say_the_text_cannot_show_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # GIVEN two compilations whose weights differ but are both printed as {...}
    a = FROZEN / "module_0000.jit_predict.before_optimizations.txt"
    b = FROZEN / "module_0002.jit_predict.before_optimizations.txt"
    code, doc = run_json(capsys, a, b)
    (m,) = doc["modules"]
    # THEN no cause is claimed, and the note says the HLO text cannot show the difference
    assert code == 0 and m["causes"] == []
    (note,) = [n for n in m["notes"] if n["rule"] == "constants-elided"]
    assert "cannot show" in note["message"] and "frozen weights" in note["message"]


def test_identical_modules_say_the_cause_of_a_recompile_is_outside_the_hlo(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, doc = run_json(capsys, JAX / "stable" / "run1", JAX / "stable" / "run2")
    assert code == 0
    for m in doc["modules"]:
        (note,) = [n for n in m["notes"] if n["rule"] is None]
        assert "outside the HLO text" in note["message"]
        assert "weak type" in note["message"] and "static argument" in note["message"]


def test_elided_constants_beside_a_real_cause_are_a_note_too(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # GIVEN weights passed as parameters in A and frozen (elided) in B
    code, doc = run_json(
        capsys, JAX / "params_vs_frozen" / "params", JAX / "params_vs_frozen" / "frozen"
    )
    assert code == 1
    (m,) = doc["modules"]
    assert "constants-elided" not in m["causes"] and "frozen-weights" in m["causes"]
    # THEN the constants that could not be compared are still said, as a note
    assert [n["rule"] for n in m["notes"]] == ["constants-elided"]


# --- item 17 (part): every cause comes with what to change, as in analyze -----------------

BATCH = (
    JAX / "batch_size" / "dumps" / "module_0000.jit_mlp.before_optimizations.txt",
    JAX / "batch_size" / "dumps" / "module_0002.jit_mlp.before_optimizations.txt",
)


def test_json_gives_each_cause_the_advice_of_its_rule(capsys: pytest.CaptureFixture[str]) -> None:
    from recompile_doctor.rules import rule

    _, doc = run_json(capsys, *BATCH)
    (m,) = doc["modules"]
    (e,) = m["explanations"]
    assert e["rule"] == "batch-size-changed"
    assert e["advice"] == rule("batch-size-changed").advice


@pytest.mark.parametrize("fmt", ["text", "markdown"])
def test_text_and_markdown_say_what_to_change(fmt: str, capsys: pytest.CaptureFixture[str]) -> None:
    from recompile_doctor.rules import rule

    code, out, _ = run(capsys, "diff", *BATCH, "--format", fmt)
    assert code == 1 and rule("batch-size-changed").advice in out


@given(
    st.text(alphabet="a_x1٣9.\n", max_size=30),
    st.sampled_from(["a_inference_", "a_inference", "b_inference_", ""]),
)
@example("mlp_28__Xla__.626", "a_inference_")
@example("mlp_28", "a_inference_")
@example("mlp_28\n", "a_inference_")
@example("m\nlp_28__", "a_inference_")
@example("_1__", "a_inference_")
@example("x_1_2__", "a_inference_")
@example("x__1__", "a_inference_")
@example("x_٣__", "a_inference_")
def test_a_tensorflow_module_s_function_is_read_as_its_patterns_read_it(
    rest: str, prefix: str
) -> None:
    """GIVEN any module name, TensorFlow's prefix or not (digits of other scripts, line
    ends, underscores anywhere) THEN the str methods give the function the two patterns
    ``^a_inference_(.+?)_\\d+__`` and ``^a_inference_(.+?)_\\d+$`` capture, or None; and a
    module's function key (read without the memo for TensorFlow's) is its function name."""
    from recompile_doctor.parsers._names import (
        _function_name,
        inference_function,
        inference_function_by_patterns,
    )
    from recompile_doctor.timeline.names import function_key

    module = prefix + rest
    assert inference_function(module) == inference_function_by_patterns(module)
    assert function_key(module) == _function_name(module)
