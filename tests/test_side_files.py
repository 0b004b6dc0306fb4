"""The files beside the HLO in a JAX dump: the text-proto reader, the cache-key filter of the
flags and compile options, and the constants of ``module.mlir``."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from recompile_doctor.differ.mlir_constants import (
    compare_constants,
    decode_hex,
    parse_constants,
)
from recompile_doctor.differ.options import compare_settings, in_cache_key
from recompile_doctor.errors import RecompileDoctorError
from recompile_doctor.parsers.textproto import parse_textproto
from tests.conftest import FIXTURES

PAIRS = FIXTURES / "jax" / "crossrun"

# --- text proto -----------------------------------------------------------------------------


def test_scalars_nested_messages_and_repeated_fields() -> None:
    text = """
    # a comment
    executable_build_options {
      num_replicas: 2
      debug_options { xla_backend_optimization_level: 3 xla_dump_to: "dumps" }
      fast: true
      ratio: 1.5e-3
      mode: EFFORT_O2
      flags: [1, 2]
    }
    ids: 0
    ids: 1
    any < [type.googleapis.com/xla.Foo] { x: "a" "b" } >
    """
    msg = parse_textproto(text, "opts.textproto")
    ebo = msg["executable_build_options"]
    assert ebo["num_replicas"] == 2
    assert ebo["debug_options"] == {"xla_backend_optimization_level": 3, "xla_dump_to": "dumps"}
    assert ebo["fast"] is True and ebo["ratio"] == pytest.approx(0.0015)
    assert ebo["mode"] == "EFFORT_O2" and ebo["flags"] == [1, 2]
    assert msg["ids"] == [0, 1]
    assert msg["any"] == {"[type.googleapis.com/xla.Foo]": {"x": "ab"}}


def test_real_compile_options_read_as_a_mapping() -> None:
    from recompile_doctor.parsers.textproto import read_textproto

    path = (
        PAIRS
        / "compile_option_changed/b/dumps/module_0000.jit_train_step/compile_options.textproto"
    )
    msg = read_textproto(path)
    da = msg["executable_build_options"]["device_assignment"]
    assert da["computation_devices"] == {"replica_device_ids": 1}
    assert (
        msg["executable_build_options"]["debug_options"]["xla_force_host_platform_device_count"]
        == 2
    )


@pytest.mark.parametrize(
    ("text", "line", "what"),
    [
        ("a {\n  b: 1\n", 1, "'}' missing"),
        ("a: 1\nb 2\n", 2, "expected ':' or '{'"),
        ("a: 1\n\n: 3\n", 3, "expected a field name"),
        ("a: 1\nb: }\n", 2, "expected a value"),
        ('a: 1\nb: "unterminated\n', 2, "unexpected character"),
        ("a:", 1, "unexpected end"),
    ],
)
def test_malformed_text_is_one_error_naming_file_and_line(text: str, line: int, what: str) -> None:
    with pytest.raises(RecompileDoctorError) as exc:
        parse_textproto(text, "dumps/x.textproto")
    assert exc.value.path == "dumps/x.textproto" and exc.value.line == line
    assert what in exc.value.message
    assert "\n" not in str(exc.value)


@given(st.text(max_size=200))
def test_any_text_parses_or_is_a_clean_error(text: str) -> None:
    try:
        parse_textproto(text, "f")
    except RecompileDoctorError as e:
        assert e.path == "f" and e.line is not None and e.line >= 1


# --- which fields are part of the cache key -------------------------------------------------


@pytest.mark.parametrize(
    ("field", "kept"),
    [
        ("xla_dump_to", False),
        ("--xla_dump_hlo_as_text", False),
        ("--xla_dump_to=dumps", False),
        ("xla_dump_anything_new", False),
        ("xla_force_host_platform_device_count", False),
        ("xla_gpu_per_fusion_autotune_cache_dir", False),
        ("--xla_backend_optimization_level=1", True),
        ("xla_cpu_enable_fast_math", True),
        ("device_assignment", True),
    ],
)
def test_cache_key_filter(field: str, kept: bool) -> None:
    assert in_cache_key(field) is kept


def test_settings_diff_ignores_dump_flags_and_names_paths_old_new() -> None:
    a = {"ebo": {"debug_options": {"xla_dump_to": "a", "opt": 3}, "num_replicas": 1}}
    b = {"ebo": {"debug_options": {"xla_dump_to": "b", "opt": 1, "new": True}, "num_replicas": 2}}
    got = {(c.field, c.old, c.new, c.rule) for c in compare_settings(a, b, "compile_options")}
    assert got == {
        ("ebo.debug_options.opt", "3", "1", "flags-changed"),
        ("ebo.debug_options.new", None, "true", "flags-changed"),
        ("ebo.num_replicas", "1", "2", "compile-options-changed"),
    }


def test_a_changed_platform_version_in_the_topology_is_version_changed() -> None:
    (c,) = compare_settings({"platform_version": "1"}, {"platform_version": "2"}, "topology")
    assert (c.rule, c.old, c.new) == ("version-changed", "1", "2")


# --- module.mlir constants ------------------------------------------------------------------


def _hex(fmt: str, values: list[float]) -> str:
    return "0x" + struct.pack("<" + fmt * len(values), *values).hex().upper()


def test_hex_blobs_decode_with_the_element_type() -> None:
    assert decode_hex(_hex("f", [1.5, -2.0]), "f32", 2) == (1.5, -2.0)
    assert decode_hex(_hex("i", [7, -1, 3]), "i32", 3) == (7.0, -1.0, 3.0)
    assert decode_hex(_hex("e", [0.5]), "f16", 4) == (0.5,)  # a splat: one element's bytes
    assert decode_hex("0x803F", "bf16", 1) == (1.0,)  # bf16 1.0 = 0x3F80, little-endian
    with pytest.raises(ValueError):
        decode_hex("0x0000803F0000", "f32", 2)


def test_literals_and_hex_constants_are_read_and_compared() -> None:
    a = (
        f'    %cst = stablehlo.constant dense<"{_hex("f", [1.0, 2.0, 3.0, 4.0])}"> : tensor<2x2xf32>\n'
        "    %cst_0 = stablehlo.constant dense<[[1, 2], [3, 4]]> : tensor<2x2xi32>\n"
        "    %cst_1 = stablehlo.constant dense<0.000000e+00> : tensor<f32>\n"
    )
    b = a.replace(_hex("f", [1.0, 2.0, 3.0, 4.0]), _hex("f", [1.0, 2.0, 3.0, 9.5])).replace(
        "[3, 4]", "[3, 5]"
    )
    ca, cb = parse_constants(a, "a.mlir"), parse_constants(b, "b.mlir")
    assert [(c.name, c.type_text) for c in ca] == [
        ("%cst", "f32[2,2]"),
        ("%cst_0", "i32[2,2]"),
        ("%cst_1", "f32[]"),
    ]
    changed = {c.a.name: (c.changed, c.max_abs_diff) for c in compare_constants(ca, cb)}
    assert changed == {"%cst": (1, 5.5), "%cst_0": (1, 1.0)}


def test_a_blob_of_the_wrong_size_is_a_clean_error() -> None:
    text = '%cst = stablehlo.constant dense<"0x0000803F00000040"> : tensor<3xf32>\n'
    with pytest.raises(RecompileDoctorError) as exc:
        parse_constants(text, "m.mlir")
    assert (exc.value.path, exc.value.line) == ("m.mlir", 1)


def test_real_frozen_weights_differ_in_every_element() -> None:
    from recompile_doctor.differ.mlir_constants import read_constants

    base = PAIRS / "frozen_weights_pair"
    ca = read_constants(base / "a/dumps/module_0000.jit_predict/module.mlir")
    cb = read_constants(base / "b/dumps/module_0000.jit_predict/module.mlir")
    (ch,) = compare_constants(ca, cb)
    assert (ch.a.type_text, ch.changed, ch.a.size) == ("f32[16,32]", 512, 512)
    assert ch.a.values[0] == pytest.approx(0.12573022)  # numpy default_rng(0).standard_normal
    assert ch.max_abs_diff > 0
