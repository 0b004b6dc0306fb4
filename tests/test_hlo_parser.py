"""The HLO text parser on real samples (three dialects), real JAX dumps and broken input."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from recompile_doctor.errors import RecompileDoctorError
from recompile_doctor.parsers.hlo import Literal, parse_hlo, parse_hlo_file
from tests.conftest import examples

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "fixtures" / "hlo" / "samples"
JAX = ROOT / "fixtures" / "hlo" / "jax"
SAMPLE_FILES = sorted(p for p in SAMPLES.glob("0*") if p.is_file()) if SAMPLES.exists() else []
JAX_FILES = sorted(JAX.rglob("*.txt"))

needs_samples = pytest.mark.skipif(not SAMPLE_FILES, reason="reference samples not present")


def sample(prefix: str) -> Path:
    return next(p for p in SAMPLE_FILES if p.name.startswith(prefix))


@needs_samples
@pytest.mark.parametrize(
    ("prefix", "name", "dialect", "computations", "instructions"),
    [
        ("01", "jit__threefry_split", "long", 5, 137),
        ("02", "jit__normal", "short", 5, 228),
        ("03", "jit_train_step", "long", 125, 1729),
        ("04a", "jit_f", "short", 1, 5),
        ("04b", "jit_f", "short", 2, 7),
        ("05", "Test", "old", 3, 11),
    ],
)
def test_every_reference_sample_parses(
    prefix: str, name: str, dialect: str, computations: int, instructions: int
) -> None:
    # GIVEN a real HLO file  WHEN parsed
    m = parse_hlo_file(sample(prefix))
    # THEN its name, dialect and sizes are right
    assert (m.name, m.dialect) == (name, dialect)
    assert len(m.computations) == computations
    assert m.instruction_count() == instructions


@needs_samples
def test_long_text_with_stack_frame_index_resolves_source_lines() -> None:
    m = parse_hlo_file(sample("01"))
    assert m.stack_frames[1].file.endswith("frag_mwe_short.py")
    add = m.computations["closed_call.1"].by_name()["add.16"]
    assert add.operands == ("Arg_0.1", "constant.9")
    assert add.shape.sig == "s32[]"


@needs_samples
def test_short_dialect_while_loop_and_tuple_with_index_comment() -> None:
    m = parse_hlo_file(sample("02"))
    loop = [i for c in m.computations.values() for i in c.instructions if i.opcode == "while"]
    assert loop and loop[0].calls == ("region_1.67", "region_0.3")
    carry = m.computations["region_0.3"].instructions[0]
    assert carry.shape.is_tuple and len(carry.shape.elements) == 9
    assert carry.shape.elements[5].sig == "u32[]"


@needs_samples
def test_sharded_llama_module_keeps_non_json_backend_config_and_iota_groups() -> None:
    m = parse_hlo_file(sample("03"))
    assert m.entry == "main.75_spmd"
    assert "input_output_alias" in m.attrs
    insts = [i for c in m.computations.values() for i in c.instructions]
    fa = next(i for i in insts if "attn_heads" in (i.attr("backend_config") or ""))
    assert (fa.attr("backend_config") or "").startswith("{attn_heads=32:i64,")
    ar = next(i for i in insts if i.opcode == "all-reduce")
    assert ar.attr("replica_groups") == "[1,8]<=[8]"
    empty = [i for i in insts if i.literal is not None and i.shape.sig == "bf16[0]"]
    assert empty and empty[0].literal == Literal(())


@needs_samples
def test_tpu_tiled_layouts_are_kept_but_not_part_of_the_shape() -> None:
    m = parse_hlo_file(sample("04b"))
    c = m.computations["fused_computation"].by_name()["constant.0"]
    assert c.shape.layout == ":T(128)" and c.shape.sig == "f32[]"
    assert c.literal is not None and c.literal.numbers() == (1,)


@needs_samples
def test_old_dialect_operand_shapes_are_skipped_and_comment_line_ignored() -> None:
    m = parse_hlo_file(sample("05"))
    add = m.computations["fused_computation"].by_name()["add.3846"]
    assert add.operands == ("convert.72239", "convert.72238")
    assert add.metadata is not None and add.metadata.op_type == "add"
    assert m.entry == "main"


@pytest.mark.parametrize("path", JAX_FILES, ids=lambda p: str(p.relative_to(JAX)))
def test_every_captured_jax_dump_parses(path: Path) -> None:
    m = parse_hlo_file(path)
    assert m.name.startswith("jit_") and m.dialect == "long"
    assert m.entry_computation.is_entry
    for c in m.computations.values():
        assert c.root_instruction() is not None


def test_large_constant_dump_keeps_every_value_as_numbers() -> None:
    path = next((JAX / "frozen_weights_large" / "dumps").glob("*0000*before_optimizations.txt"))
    m = parse_hlo_file(path)
    weights = [i for i in m.entry_computation.instructions if i.shape.sig == "f32[8,16]"]
    assert weights and weights[0].literal is not None and weights[0].literal.count == 128


MODULE = """HloModule m, input_output_alias={ {0}: (0, {}, may-alias) }

ENTRY %e (p: f32[2]) -> (f32[2], token[]) {
  %p = f32[2]{0:T(2,128)S(1)} parameter(0), metadata={op_name="a\\"}b" source_file="x.py" source_line=3}
  %n = f32[3]{0} constant({nan, -nan, -inf}), backend_config={a = {x}, "b}"}
  %b = bf16[2,2]{1,0} constant({ { 1.5, 2 }, { 3, 4 } })
  %f8 = f8e4m3fn[2]{0} constant({0.5, 448})
  %pr = pred[3]{0} constant({1, 0, 1})
  %t = pred[] constant(true)
  %d = f32[<=8,?]{1,0} custom-call(%p), custom_call_target="x\\ty", api_version=API_VERSION_TYPED_FFI
  %tok = token[] after-all()
  ROOT %r = (f32[2]{0}, token[]) tuple(%p, /*index=1*/%tok)
}
"""


def test_every_shape_constant_and_attribute_form() -> None:
    m = parse_hlo(MODULE, "m.hlo")
    ins = m.entry_computation.by_name()
    assert ins["p"].metadata is not None and ins["p"].metadata.op_name == 'a"}b'
    assert m.source_of(ins["p"]) == ("x.py", 3)
    assert ins["p"].shape.layout == "0:T(2,128)S(1)"
    assert ins["n"].literal is not None and ins["n"].literal.numbers() == (
        "nan",
        "nan",
        -float("inf"),
    )
    assert ins["n"].attr("backend_config") == '{a={x},"b}"}'
    assert ins["b"].literal == Literal(("1.5", "2", "3", "4"))
    assert ins["f8"].shape.dtype == "f8e4m3fn"
    assert ins["pr"].literal is not None and ins["pr"].literal.numbers() == (1, 0, 1)
    assert ins["t"].literal is not None and ins["t"].literal.numbers() == (1,)
    assert ins["d"].shape.sig == "f32[<=8,?]"
    assert ins["tok"].shape.sig == "token[]"
    assert ins["r"].is_root and ins["r"].operands == ("p", "tok")


def test_floats_compare_as_numbers_not_strings() -> None:
    assert Literal(("1",)).same_value(Literal(("1.0",)))
    assert Literal(("1e-12",)).same_value(Literal(("1.0e-12",)))
    assert Literal(("nan",)).same_value(Literal(("-nan",)))
    assert not Literal(("0.1",)).same_value(Literal(("0.01",)))
    assert Literal((), elided=True).same_value(Literal(("1",))) is None


BROKEN = [
    ("", 1, "expected 'HloModule'"),
    ("HloModule m\nENTRY e {\n  a = f32[2] parameter(0)\n", 4, "expected '}'"),
    ("HloModule m\nENTRY e {\n  a = q32[2] parameter(0)\n}\n", 3, "expected an element type"),
    (
        "HloModule m\nENTRY e {\n  a = f32[2] parameter(0)\n  b = f32[2] add(a a)\n}",
        4,
        "expected ','",
    ),
    ("HloModule m\nENTRY e {\n  b = f32[2] add(zz)\n}", 3, "operand 'zz'"),
    ('HloModule m\nENTRY e {\n  b = f32[2] negate(x), metadata={op_name="x}\n}', 3, "unterminated"),
    ("HloModule m\nENTRY e {\n  b = f32[2] fusion(), calls=nowhere\n}", 3, "unknown computation"),
    ("HloModule m\nENTRY e {\n  c = f32[] constant(abc)\n}", 3, "expected a literal value"),
    ("HloModule m\nENTRY e {\n  b f32[2] negate(x)\n}", 3, "expected '='"),
]


@pytest.mark.parametrize(("text", "line", "what"), BROKEN)
def test_malformed_input_names_file_line_and_what_was_expected(
    text: str, line: int, what: str
) -> None:
    with pytest.raises(RecompileDoctorError) as e:
        parse_hlo(text, "bad.hlo")
    assert e.value.path == "bad.hlo" and e.value.line == line
    assert what in e.value.message


def test_truncated_real_dump_is_an_error_not_a_traceback() -> None:
    text = JAX_FILES[0].read_text()
    with pytest.raises(RecompileDoctorError) as e:
        parse_hlo(text[: len(text) * 2 // 3], "cut.txt")
    assert e.value.line is not None


@settings(max_examples=examples(200), deadline=None)
@given(st.text(alphabet="HloModule ENTRY{}()[]=,%\"'\\/*.:abf32 \n<>-0123456789", max_size=200))
def test_arbitrary_text_never_raises_anything_but_a_located_error(text: str) -> None:
    try:
        parse_hlo(text, "fuzz.hlo")
    except RecompileDoctorError as e:
        assert e.path == "fuzz.hlo" and e.line is not None


def _xla_counts(text: str) -> dict[str, int] | None:
    hlo = pytest.importorskip("jaxlib._hlo")
    try:
        m = hlo.hlo_module_from_text(text)
    except Exception:  # XLA of this vintage rejects the text: nothing to compare
        return None
    return {c.name: len(c.instructions()) for c in m.computations()}


@pytest.mark.parametrize("path", SAMPLE_FILES + JAX_FILES, ids=lambda p: p.name)
def test_instruction_counts_match_xlas_own_parser(path: Path) -> None:
    text = path.read_text()
    expected = _xla_counts(text)
    if expected is None:
        pytest.skip("XLA's parser rejects this file")
    m = parse_hlo(text, str(path))
    ours = {name: len(c.instructions) for name, c in m.computations.items()}
    assert ours == expected


FAST_AND_SLOW = [
    '  %b.2 = f32[4,2]{1,0} broadcast(%a.1), dimensions={1}, metadata={op_name="jit(f)/b" source_line=4}',
    "  ROOT %s = f32[1]{0} slice(%a.1), slice={[0:1], [0:2]}, sharding={maximal device=0}",
    "  %c = f32[] constant(-inf)",
    "  %w = (f32[]) while(%t), condition=%c1, body=%b1",
    '  %f = f32[2]{0} fusion(%a.1, /*index=1*/%a.1), kind=kLoop, calls=%fc, backend_config="x\\"y"',
    "  %w = f32[4,4]{1,0} constant({...})",
    "  %v = f32[4]{0} constant({0.5, -1e-05, 2, +3})",
    "  %n = f32[2]{0} negate(%a.1), metadata={op_type=neg source_line=2}",
    '  %g = f32[2]{0} negate(%a.1), metadata={op_name="n"}, sharding={replicated}',
]


@pytest.mark.parametrize("line", FAST_AND_SLOW)
def test_fast_path_and_token_parser_agree(line: str) -> None:
    # GIVEN one instruction line  WHEN parsed by the one-regex fast path and by the token parser
    from recompile_doctor.parsers.hlo._fastpath import fast_instruction
    from recompile_doctor.parsers.hlo._instruction import InstructionParser
    from recompile_doctor.parsers.hlo._lexer import tokenize

    slow = InstructionParser()._instruction(tokenize(line), "c", 1, line)
    fast = fast_instruction(line, "c", 1)
    # THEN both give the same instruction (or the fast path declines)
    if fast is None:
        return
    a, b = fast[0], slow
    assert (a.name, a.opcode, a.shape, a.operands, a.attrs, a.calls, a.literal, a.metadata) == (
        b.name,
        b.opcode,
        b.shape,
        b.operands,
        b.attrs,
        b.calls,
        b.literal,
        b.metadata,
    )
