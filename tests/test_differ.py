"""The differ names the cause of a recompilation from two dumps of one module."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from recompile_doctor.differ import diff_modules, diff_paths, explain_dump_folder
from recompile_doctor.model import DiffEvidence
from recompile_doctor.parsers.hlo import parse_hlo, parse_hlo_file

JAX = Path(__file__).resolve().parent.parent / "fixtures" / "hlo" / "jax"
STAGES = [None, "cpu_after_optimizations"]


def only_diff(folder: str, stage: str | None) -> list:  # type: ignore[type-arg]
    result = explain_dump_folder(JAX / folder / "dumps", stage)
    assert len(result) == 1
    return next(iter(result.values()))


@pytest.mark.parametrize("stage", STAGES)
def test_batch_size_change_is_named_with_sizes_parameter_and_followers(stage: str | None) -> None:
    # GIVEN jit(mlp) compiled at batch 32 then 16  WHEN the dumps are explained
    (d,) = only_diff("batch_size", stage)
    # THEN one cause: the batch size, 32 -> 16, on parameter x.1, with the followers counted
    assert d.causes == ["batch-size-changed"]
    msg = d.explanations[0].message
    assert "32 → 16" in msg and "x.1" in msg and "instructions followed" in msg
    param = next(c for c in d.changes if c.kind == "parameter-shape")
    assert param.a is not None and param.a.instruction == "%x.1"
    assert param.detail == "f32[32,8] → f32[16,8]"


@pytest.mark.parametrize("stage", STAGES)
def test_python_constant_change_shows_old_and_new_value_and_where(stage: str | None) -> None:
    (d,) = only_diff("python_constant", stage)
    assert d.causes == ["constant-changed"]
    (c,) = [c for c in d.changes if c.kind == "constant"]
    assert c.detail == "0.1 → 0.01"
    assert c.op_name == "jit(step)/mul"
    assert "capture_jax.py:" in d.explanations[0].message


@pytest.mark.parametrize("stage", STAGES)
def test_frozen_weights_with_large_constants_dumped(stage: str | None) -> None:
    (d,) = only_diff("frozen_weights_large", stage)
    assert d.causes == ["frozen-weights"]
    (c,) = [c for c in d.changes if c.kind == "constant"]
    assert "128 of 128 elements differ" in c.detail
    assert c.b is not None and len(c.b.text) < 200  # abbreviated, never a wall of numbers


@pytest.mark.parametrize("stage", STAGES)
def test_frozen_weights_without_large_constants_says_values_are_elided(stage: str | None) -> None:
    # GIVEN weights frozen into the graph and printed as {...}  WHEN the dumps are explained
    (d,) = only_diff("frozen_weights", stage)
    # THEN no cause is claimed (the text cannot show one); a constants-elided note says why
    assert d.causes == [] and d.equivalent
    (note,) = [n for n in d.notes if n.rule == "constants-elided"]
    assert "--xla_dump_large_constants" in note.message and "frozen weights" in note.message


@pytest.mark.parametrize("stage", STAGES)
def test_growing_concat_is_a_growing_shape_across_the_sequence(stage: str | None) -> None:
    diffs = only_diff("growing_concat", stage)
    assert len(diffs) == 2
    assert all(d.causes == ["growing-shape"] for d in diffs)
    assert "4 → 8 → 12" in diffs[0].explanations[0].message


def test_dtype_change_names_parameter_and_types() -> None:
    (d,) = only_diff("dtype_change", None)
    assert d.causes == ["dtype-changed"]
    assert "x.1: f32[8,4] → bf16[8,4]" in d.explanations[0].message


@pytest.mark.parametrize("stage", STAGES)
@pytest.mark.parametrize("scenario", ["stable", "weights_as_params"])
def test_two_runs_of_the_same_program_are_equivalent(scenario: str, stage: str | None) -> None:
    res = diff_paths(JAX / scenario / "run1", JAX / scenario / "run2", stage=stage)
    assert [m.equivalent for m in res.modules] == [True]
    assert res.modules[0].causes == [] and res.equivalent


def test_parameter_in_one_module_constant_in_the_other_is_frozen_weights() -> None:
    res = diff_paths(JAX / "params_vs_frozen" / "params", JAX / "params_vs_frozen" / "frozen")
    (d,) = res.modules
    assert d.causes == ["frozen-weights"]
    (c,) = d.changes
    assert c.kind == "parameter-to-constant"
    assert c.a is not None and c.a.instruction == "%w1.1"


def _renumber(text: str, by: int) -> str:
    return re.sub(r"(%[A-Za-z_][\w-]*)\.(\d+)", lambda m: f"{m[1]}.{int(m[2]) + by}", text)


def test_names_ids_metadata_and_layouts_do_not_count() -> None:
    path = next((JAX / "stable" / "run1").glob("*before_optimizations.txt"))
    text = path.read_text()
    noisy = _renumber(text, 100).replace('op_name="jit(mlp)/', 'op_name="jit(other)/')
    noisy = noisy.replace("{1,0}", "{0,1}")
    d = diff_modules(parse_hlo(text, "a"), parse_hlo(noisy, "b"))
    assert d.equivalent and d.causes == []


BATCH = """HloModule jit_f

ENTRY %main.{n} (x.1: f32[{b},4]) -> f32[{b},4] {{
  %x.1 = f32[{b},4]{{1,0}} parameter(0), metadata={{op_name="x"}}
  %constant.{c} = f32[] constant(2)
{extra}  %broadcast.{k} = f32[{b},4]{{1,0}} broadcast(%constant.{c}), dimensions={{}}
  %mul.{m} = f32[{b},4]{{1,0}} multiply(%x.1, %broadcast.{k}), metadata={{op_name="jit(f)/mul"}}
  ROOT %tanh.{t} = f32[{b},4]{{1,0}} tanh(%mul.{m}), metadata={{op_name="jit(f)/tanh"}}
}}
"""


def test_alignment_survives_renumbering_and_an_extra_broadcast() -> None:
    # GIVEN batch 32 -> 1 where the new module has an extra op and every later name shifted
    a = BATCH.format(n=3, b=32, c=1, k=2, m=3, t=4, extra="")
    extra = "  %iota.2 = s32[1]{0} iota(), iota_dimension=0\n"
    b = BATCH.format(n=9, b=1, c=5, k=7, m=8, t=9, extra=extra)
    d = diff_modules(parse_hlo(a, "a.hlo"), parse_hlo(b, "b.hlo"))
    # THEN the cause is the batch size, the followers are matched across names
    assert d.causes[0] == "batch-size-changed"
    assert (
        "32 → 1" in d.explanations[0].message
        and "3 instructions followed" in d.explanations[0].message
    )
    pairs = {(c.a.instruction, c.b.instruction) for c in d.changes if c.a and c.b}
    assert ("%tanh.4", "%tanh.9") in pairs and ("%mul.3", "%mul.8") in pairs


GRAPH = """HloModule jit_f

ENTRY %main (x.1: f32[4], y.1: f32[4]) -> f32[{r}] {{
  %x.1 = f32[4]{{0}} parameter(0)
  %y.1 = f32[4]{{0}} parameter(1)
  %add.1 = f32[4]{{0}} add(%x.1, %y.1), metadata={{op_name="jit(f)/add"}}
{body}}}
"""


def test_added_op_is_a_graph_change_summarised_by_opcode_and_op_name() -> None:
    a = GRAPH.format(
        r=4, body='  ROOT %neg.1 = f32[4]{0} negate(%add.1), metadata={op_name="jit(f)/neg"}\n'
    )
    b = GRAPH.format(
        r=8,
        body='  %neg.1 = f32[4]{0} negate(%add.1), metadata={op_name="jit(f)/neg"}\n'
        "  ROOT %concatenate.2 = f32[8]{0} concatenate(%neg.1, %x.1), dimensions={0}, "
        'metadata={op_name="jit(f)/concat"}\n',
    )
    d = diff_modules(parse_hlo(a, "a"), parse_hlo(b, "b"))
    assert "graph-changed" in d.causes
    graph = next(c for c in d.explanations if c.rule == "graph-changed")
    assert "+1 concatenate at jit(f)/concat" in graph.message


OLD = """HloModule cluster_0__XlaCompiledKernel_true__.12

%_pop_op_implicit_binary (arg_0: f32[4], arg_1: f32[]) -> f32[4] {{
  %arg_0 = f32[4]{{0}} parameter(0)
  %arg_1 = f32[] parameter(1)
  %broadcast = f32[4]{{0}} broadcast(f32[] %arg_1), dimensions={{}}
  ROOT %multiply = f32[4]{{0}} multiply(f32[4]{{0}} %arg_0, f32[4]{{0}} %broadcast)
}}

ENTRY %cluster_0 (arg0.1: f32[4]) -> f32[4] {{
  %arg0.1 = f32[4]{{0}} parameter(0), metadata={{op_type="_Arg" op_name="x"}}
  %constant.2 = f32[] constant({lr})
  ROOT %fusion = f32[4]{{0}} fusion(f32[4]{{0}} %arg0.1, f32[] %constant.2), kind=kCustom, calls=%_pop_op_implicit_binary, metadata={{op_type="Mul" op_name="mul"}}, backend_config="{{\\"fusion_config\\":{{}}}}"
}}
"""


def test_simulated_graphcore_old_dialect_folder(tmp_path: Path) -> None:
    name = "cluster_0__XlaCompiledKernel_true__.12"
    (tmp_path / f"module_0003.{name}.before_optimizations.txt").write_text(OLD.format(lr="0.1"))
    (tmp_path / f"module_0010.{name}.before_optimizations.txt").write_text(OLD.format(lr="0.05"))
    (tmp_path / "module_0020.other.before_optimizations.txt").write_text(
        OLD.format(lr="1").replace(name, "other")
    )
    result = explain_dump_folder(tmp_path)
    assert result["other"] == []
    (d,) = result[name]
    assert parse_hlo_file(d.a_path).dialect == "old"
    assert d.causes == ["constant-changed"]
    assert "0.1 → 0.05" in d.explanations[0].message and "at mul" in d.explanations[0].message


def test_to_evidence_carries_both_sides_and_paths() -> None:
    (d,) = only_diff("python_constant", None)
    ev = d.to_evidence()
    assert ev and all(isinstance(e, DiffEvidence) for e in ev)
    assert ev[0].module == "jit_step" and ev[0].a_path == d.a_path
    assert ev[0].a_text is not None and "0.1" in ev[0].a_text


def test_a_call_switched_to_another_existing_computation_is_a_graph_change() -> None:
    # GIVEN a program whose reduce-sum is made to apply the max region printed beside it
    # (both regions stay in the module: the alignment pairs each with its own twin)
    path = JAX / "batch_size" / "dumps" / "module_0000.jit_mlp.before_optimizations.txt"
    text = path.read_text()
    assert text.count("to_apply=%region_1.2") == 1
    switched = text.replace("to_apply=%region_1.2", "to_apply=%region_0.1")
    # WHEN the two are diffed
    d = diff_modules(parse_hlo(text, "a"), parse_hlo(switched, "b"))
    # THEN the change is named, with both computations, not called equivalent
    assert not d.equivalent
    assert d.causes == ["graph-changed"]
    assert "reduce_sum.7: calls %region_1.2 → %region_0.1" in str(d.explanations)


def test_a_call_to_a_renamed_twin_computation_is_no_change() -> None:
    # GIVEN the same program with the max region copied under a new name, the reduce-max
    # calling the copy
    path = JAX / "batch_size" / "dumps" / "module_0000.jit_mlp.before_optimizations.txt"
    text = path.read_text()
    start = text.index("%region_0.1 (")
    region = text[start : text.index("\n}\n", start) + 3]
    twin = region.replace("%region_0.1 (", "%region_9.9 (")
    copied = text.replace(region, region + "\n" + twin).replace(
        "to_apply=%region_0.1", "to_apply=%region_9.9"
    )
    # WHEN diffed THEN the call is not reported: the copy computes the same
    d = diff_modules(parse_hlo(text, "a"), parse_hlo(copied, "b"))
    assert "region_9.9" in copied
    assert "calls" not in str(d.explanations)
