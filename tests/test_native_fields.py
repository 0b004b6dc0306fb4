"""The C module's readers of JAX's most frequent messages and of the shapes in reasons
(``parsers/_native_fields.c``: ``traced_fields``, ``in_seconds``, ``shape_dims``,
``type_shape``) give what their Python twins give, whatever the text: characters of one,
two and four bytes, blanks of every kind, letters and digits of other scripts, the pieces
repeated or cut; every line of the captured JAX logs; and refuse what is not a str."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from recompile_doctor.parsers import jax
from recompile_doctor.parsers._spans import native_in_use
from tests.conftest import examples
from tests.test_jax_parser import _IN_SECONDS_MESSAGES, _TRACED_MESSAGES

NATIVE: Any = native_in_use()
pytestmark = pytest.mark.skipif(
    NATIVE is None, reason="the C module is not built here, or turned off"
)

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "jax"

#: the pieces of the messages, and characters of every width: blanks (one byte: "\xa0"; two:
#: "\u3000"; "\x1c" a control blank), a digit and a letter of other scripts ("\u0663",
#: "\u0142"), one of four bytes
_PIECES = st.sampled_from(
    [
        "Finished tracing",
        " + transforming ",
        "Finished XLA compilation of ",
        "Finished jaxpr to MLIR module conversion ",
        " for ",
        "jit",
        " in ",
        " sec",
        "0.0035",
        " ",
        "\t",
        "\n",
        "\xa0",
        "\u3000",
        "\x1c",
        "_",
        "\u0663",
        "\u0142",
        "\U0001f600",
        "f",
    ]
)
_TEXT = st.lists(_PIECES | st.text(max_size=3), max_size=16).map("".join)
#: a message of the form read, its pieces in their order (each of them well-formed more
#: often than not), wider characters put in somewhere
_WIDE = st.sampled_from(["", "\u0142", "\U0001f600", "\u3000", "\xa0"])
_TRACED = st.builds(lambda m, w, i: m[:i] + w + m[i:], _TRACED_MESSAGES, _WIDE, st.integers(0, 80))
_IN_SECS = st.builds(
    lambda m, w, i: m[:i] + w + m[i:], _IN_SECONDS_MESSAGES, _WIDE, st.integers(0, 80)
)
_PREFIXES = st.sampled_from(
    [jax._COMPILED_PREFIX, jax._LOWERED_PREFIX, "", " ", "in", "\u0142 ", "\U0001f600"]
)


@settings(max_examples=examples(1000), deadline=None)
@given(_TRACED | _TEXT)
@example("Finished tracing summarize for jit in 0.003526004 sec")
@example("Finished tracing f for \u0663_\u0142 in 1 sec\u3000")
@example("Finished tracing \U0001f600 for jit in 1 sec")
@example("Finished tracing  for  in 1 sec")
@example("Finished tracing  for jit in 1 sec")  # (a function named " for jit")
@example("Finished tracing + transforming  in 0.1 sec")  # (function "+ transforming ")
@example("Finished tracing for jit in 1 sec")
@example(" in  sec")
def test_traced_fields_as_the_python_reads_them(msg: str) -> None:
    assert NATIVE.traced_fields(msg) == jax.traced_fields_py(msg)


@settings(max_examples=examples(1000), deadline=None)
@given(_IN_SECS | _TEXT, _PREFIXES)
@example("Finished XLA compilation of jit(f) in 0.036 sec", jax._COMPILED_PREFIX)
@example("x \U0001f600 in 1 sec", "\U0001f600")
@example("abc", "")
@example("", "")
@example("in in 1 sec", "in")
def test_in_seconds_as_the_python_reads_it(msg: str, prefix: str) -> None:
    assert NATIVE.in_seconds(msg, prefix) == jax.in_seconds_py(msg, prefix)


def test_every_captured_line_reads_the_same() -> None:
    logs = sorted(FIXTURES.rglob("*.log"))
    assert logs
    read = 0
    for log in logs:
        for line in log.read_text(encoding="utf-8", errors="surrogateescape").splitlines():
            assert NATIVE.traced_fields(line) == jax.traced_fields_py(line), line
            for prefix in (jax._COMPILED_PREFIX, jax._LOWERED_PREFIX):
                got = NATIVE.in_seconds(line, prefix)
                assert got == jax.in_seconds_py(line, prefix), line
                read += got is not None
    assert read > 10


@pytest.mark.parametrize(
    ("call", "args"),
    [
        ("traced_fields", (b"Finished tracing f in 1 sec",)),
        ("traced_fields", ()),
        ("traced_fields", ("a", "b")),
        ("in_seconds", ("Finished XLA compilation of f in 1 sec", None)),
        ("in_seconds", (1, "x")),
        ("in_seconds", ("x",)),
    ],
)
def test_what_is_not_a_str_is_refused(call: str, args: tuple[Any, ...]) -> None:
    with pytest.raises(TypeError):
        getattr(NATIVE, call)(*args)


def test_the_decoder_calls_the_c_module() -> None:
    assert jax.traced_fields is NATIVE.traced_fields
    assert jax.in_seconds is NATIVE.in_seconds


#: the pieces of a shape's text: brackets, digits (one of another script), commas, blanks of
#: one and two bytes, letters; a number longer than int takes
_SHAPE_PIECES = st.sampled_from(
    [*"[]0912,  \t\n\x0b\x1c\xa0\u3000\u0663x_-", "f32", "[4]", "[1,2]", "[]", " 3 ", "7" * 5000]
)


@settings(max_examples=examples(1000), deadline=None)
@given(st.lists(_SHAPE_PIECES, max_size=14).map("".join))
@example("f32[32,16]")
@example("x[a[1]")
@example("f32[3 4]")
@example("[1,,2,]")
@example("f32[" + "7" * 5000 + "]")
@example("f32[\x1c3\x1f]")
@example("f32[ \x1c ,3]")
@example("f32[3\x1c]")
@example("f32[\t3\n]")
@example("f32[9999999999999999999,99999999999999999999]")  # (past 64 bits)
@example("f32[123456789012345678,1234567890123456789,00000000000000000000012]")
def test_shape_dims_as_the_python_reads_them(text: str) -> None:
    from recompile_doctor.timeline.reason_facts import shape_dims_py

    assert NATIVE.shape_dims(text, shape_dims_py) == shape_dims_py(text)


def test_shape_dims_leaves_text_that_is_not_ascii_to_the_python() -> None:
    asked: list[str] = []

    def fallback(text: str) -> tuple[int, ...] | None:
        asked.append(text)
        return (7,)

    assert NATIVE.shape_dims("f32[1,2]", fallback) == (1, 2)
    assert NATIVE.shape_dims("f32[\u0663]", fallback) == (7,)
    assert asked == ["f32[\u0663]"]
    with pytest.raises(TypeError):
        NATIVE.shape_dims(b"f32[1]", fallback)
    with pytest.raises(TypeError):
        NATIVE.shape_dims("f32[1]")


def test_the_reasons_read_shapes_with_the_c_module() -> None:
    from recompile_doctor.timeline import reason_facts

    assert reason_facts._SHAPE_DIMS_C is NATIVE.shape_dims


#: the pieces of an argument's type, and what is near them: capitals, digits first, blanks
#: of every kind, a line break before and after the brackets, brackets repeated or missing
_TYPE_PIECES = st.sampled_from(
    [
        *"[]{},_ \t\n\r\x0b\x1c\x1f\xa0\u3000\u0142\u0663aF9",
        "f32",
        "bf16",
        "s8_x",
        "pred",
        "[4]",
        "[1,2]",
        "[ 3 , , 4 ]",
        "[]",
        "{1,0}",
        "{weak_type=True}",
        "Float32",
    ]
)


@settings(max_examples=examples(2000), deadline=None)
@given(st.lists(_TYPE_PIECES, max_size=12).map("".join))
@example("f32[32,16]{1,0}")
@example("  f32[]{weak_type=True} ")
@example("f32[ 3 ,\t4 ]")
@example("f32[,]")
@example("f32[ ]")
@example("[4]")
@example("9f[4]")
@example("fA[4]")
@example("f_[4]\n")
@example("f[4]x\ny")
@example("f[4\n]")
@example("\x1cf32[1]\x1f")
@example("f32")
@example("f32[1")
def test_type_shape_as_the_python_reads_it(text: str) -> None:
    from recompile_doctor.rules import type_shape_py

    assert NATIVE.type_shape(text, type_shape_py) == type_shape_py(text)


def test_type_shape_leaves_text_that_is_not_ascii_to_the_python() -> None:
    asked: list[str] = []

    def fallback(text: str) -> tuple[str, str, str, tuple[str, ...]] | None:
        asked.append(text)
        return None

    assert NATIVE.type_shape("f32[1, 2]", fallback) == ("f32", "1, 2", "", ("1", "2"))
    assert NATIVE.type_shape("f32[\u0663]", fallback) is None
    assert asked == ["f32[\u0663]"]
    with pytest.raises(TypeError):
        NATIVE.type_shape(b"f32[1]", fallback)
    with pytest.raises(TypeError):
        NATIVE.type_shape("f32[1]")


def test_the_rules_read_types_with_the_c_module() -> None:
    from recompile_doctor import rules

    assert rules.type_shape_c() is NATIVE.type_shape


_PREFIX_LINES = st.tuples(
    st.sampled_from(["DEBUG:", "INFO:", "WARNING:", "WARN:", "ERROR:", "CRITICAL:", "FATAL:"]),
    st.lists(
        st.sampled_from(
            ["jax", "_src", ".", "-", "_", ":", " ", "12", "\u0663", "\u00b2", "\u00e9", "x",
             "A", "\t", "msg", "\u2028", "\n", "\U0001f600", "\u0142", "9", "lru_cache"]
        ),
        max_size=10,
    ).map("".join),
).map("".join)  # fmt: skip


@settings(max_examples=examples(2000), deadline=None)
@given(st.lists(_PREFIX_LINES, min_size=1, max_size=20))
@example(["WARNING:jax._src.interpreters.partial_eval:2167: msg"])
@example(["INFO::m", "INFO:a", "INFO:9a:m", "WARN:j\u00e9-x.y_z:m", "WARNING:jax:\u00b2: msg"])
@example([f"DEBUG:logger{k}:m{k}" for k in range(20)] * 2)  # (more heads than are kept)
@example(["DEBUG:" + "x" * 300 + ":long head", "DEBUG:" + "x" * 300 + ":again"])
def test_level_first_as_the_python_reads_it(lines: list[str]) -> None:
    from recompile_doctor.parsers._pylog import _LEVELS, level_first_py

    # (in turn: the heads the C keeps from one line to the next are those lines' own)
    for line in lines:
        assert NATIVE.level_first(line, _LEVELS) == level_first_py(line)


def test_level_first_refuses_what_is_not_a_line_and_levels() -> None:
    from recompile_doctor.parsers._pylog import _LEVELS

    with pytest.raises(TypeError):
        NATIVE.level_first(b"DEBUG:jax:m", _LEVELS)
    with pytest.raises(TypeError):
        NATIVE.level_first("DEBUG:jax:m", list(_LEVELS))
    with pytest.raises(KeyError):
        NATIVE.level_first("NOTICE:jax:m", _LEVELS)  # (the caller's lines begin with a level)


def test_the_prefixes_are_read_with_the_c_module() -> None:
    from recompile_doctor.parsers import _pylog

    assert _pylog._LEVEL_FIRST_C is NATIVE.level_first
