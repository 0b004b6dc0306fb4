"""A report's JSON text written in C (``parsers/_native_json.c``) is the text of the Python it
replaces (``json_text._text_py``), for every value: what C does not write itself (subclasses,
other sequences, keys that are not strings, values JSON cannot hold) it hands to that Python,
errors and all; and a value changed while it is written never crashes the process."""

from __future__ import annotations

import math
from collections import OrderedDict
from typing import Any, NamedTuple

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from recompile_doctor import json_text
from recompile_doctor.json_text import _text_py, object_pieces
from recompile_doctor.parsers._spans import native_module
from tests._held_memory import kept_after
from tests.conftest import examples

NATIVE: Any = native_module()
pytestmark = pytest.mark.skipif(NATIVE is None, reason="the C module is not built here")


class _Str(str):
    pass


class _Int(int):
    pass


class _Float(float):
    pass


class _Dict(dict[Any, Any]):
    pass


class _List(list[Any]):
    pass


class _Pair(NamedTuple):
    a: Any
    b: Any


_texts = st.text(
    st.characters(codec=None, exclude_categories=()), max_size=12
)  # (control characters, quotes, backslashes, lone surrogates, astral planes)
_leaves = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(-(10**30), 10**30),
    st.floats(allow_nan=True, allow_infinity=True),
    _texts,
    _texts.map(_Str),
    st.integers().map(_Int),
    st.floats().map(_Float),
)
_keys = st.one_of(_texts, _texts.map(_Str), st.integers(), st.floats(), st.booleans(), st.none())
_values = st.recursive(
    _leaves,
    lambda kids: st.one_of(
        st.lists(kids, max_size=4),
        st.lists(kids, max_size=3).map(tuple),
        st.lists(kids, max_size=3).map(_List),
        st.tuples(kids, kids).map(lambda p: _Pair(*p)),
        st.dictionaries(_texts, kids, max_size=4),
        st.dictionaries(_keys, kids, max_size=4),
        st.dictionaries(_texts, kids, max_size=3).map(_Dict),
        st.dictionaries(_texts, kids, max_size=3).map(OrderedDict),
    ),
    max_leaves=30,
)
_HUGE = 10**5000
_steps = st.sampled_from(["  ", " ", "\t", "    ", "", "é"])


@settings(max_examples=examples(600))
@given(value=_values, level=st.integers(0, 20), step=_steps)
def test_the_text_of_any_value_is_the_pythons(value: Any, level: int, step: str) -> None:
    # (levels past the 16 whose indents C keeps, and steps changed between calls)
    assert NATIVE.json_value(value, level, step, _text_py) == _text_py(value, level, step)


_plain = st.text(st.sampled_from("ab \x7f\x80\xff/"), max_size=40)
#: one character JSON escapes, put among characters it writes as they are
_one_special = st.tuples(
    _plain, st.sampled_from('"\\\x00\x1f\n\t\r\b\f\x01\x0b\x1b'), st.integers(0, 40)
).map(lambda t: t[0][: t[2]] + t[1] + t[0][t[2] :])


@settings(max_examples=examples(600))
@given(
    text=_one_special
    | _plain
    | st.text(st.sampled_from('ab"\\\x00\x1f\x20\x7f\x80\xff\n\t\r\b\f/'), max_size=40)
    | st.text(st.sampled_from("ab\\\x19é\u20ac\U0001f600"), max_size=40)
)
def test_a_string_is_escaped_as_json_escapes_it(text: str) -> None:
    # (strings of one byte a character read eight at a time: each special character at
    # every place among them)
    from json.encoder import encode_basestring

    assert NATIVE.json_value(text, 0, "  ", _text_py) == encode_basestring(text)


def test_a_long_line_full_of_escapes_is_escaped_as_json_escapes_it() -> None:
    # GIVEN a line of a structured trace (a JSON record: quotes every few characters) made
    # long (the text grows many times while it is written), THEN json's text of it
    import json
    from json.encoder import encode_basestring

    record = json.dumps({"guard": 'L["x"].size()[0] == 8', "tab": "\t", "bell": "\x07"})
    line = "V1122 19:11:18.000001 16266 structured.py:1] " + record * 3000
    assert NATIVE.json_value(line, 0, "  ", _text_py) == encode_basestring(line)
    value = {"text": line, "after": ["\u20ac" + line[:100], "caf\xe9"]}
    assert NATIVE.json_value(value, 1, "  ", _text_py) == _text_py(value, 1, "  ")


@pytest.mark.parametrize(
    "value",
    [
        ["a" * 300, "\u20ac", "b"],  # (wide after a long text of one byte a character)
        ["caf\xe9", "x" * 70, "\U0001f600", "\xff"],  # (above 127, then above 255)
        {"\u20ac": "\xe9", "k": ["\x7f", 1.5, None]},  # (wide from the first key)
        ["plain", "ascii", 12, 0.003526004],  # (all ASCII: an ASCII str)
        [_Str("\u0100"), "\xe9"],  # (a wide string from the fallback)
    ],
)
@pytest.mark.parametrize("step", ["  ", "\xe9", "\u20ac"])
def test_a_text_wider_than_a_byte_a_character_is_written_whole(value: Any, step: str) -> None:
    # GIVEN texts whose characters go above 127 or 255 after others that do not
    got = NATIVE.json_value(value, 2, step, _text_py)
    want = _text_py(value, 2, step)
    # THEN the text is Python's, down to the width of its characters
    assert got == want
    assert got.isascii() == want.isascii()
    assert max(map(ord, got)) == max(map(ord, want))


#: decimals of up to ten places, up to 2**35 (times and durations read from logs: JAX's of
#: nine places), and the floats next to them
_decimals = st.builds(
    lambda m, places, step: (
        math.nextafter(m / 10**places, math.inf * step) if step else m / 10**places
    ),
    st.integers(-(2**35) * 10**6, 2**35 * 10**6)
    | st.integers(-(2**24) * 10**9, 2**24 * 10**9)
    | st.integers(-(10**6), 10**6),
    st.integers(0, 10),
    st.sampled_from([0, 0, 1, -1]),
)


@settings(max_examples=examples(1000))
@given(f=_decimals | st.floats(allow_nan=False, allow_infinity=False))
def test_a_float_is_written_as_repr_writes_it(f: float) -> None:
    # (the decimals of six places or fewer below 2**33, and of nine or fewer below 2**23,
    # without repr's digit search)
    assert NATIVE.json_value(f, 0, "  ", _text_py) == float.__repr__(f)


def test_floats_at_the_edges_of_the_short_way_are_written_as_repr_writes_them() -> None:
    for edge in (
        1e-4,
        2.0**33,
        2.0**23,
        1e-4 * 0.9999995,
        1e-4 * 0.9999999995,
        1.0,
        0.9999995,
        0.9999999995,
        0.0,
        10.0**6,
    ):
        for sign in (1, -1):
            f = sign * edge
            for direction in (math.inf, -math.inf):
                g = f
                for _ in range(200):
                    assert NATIVE.json_value(g, 0, "  ", _text_py) == float.__repr__(g)
                    g = math.nextafter(g, direction)


@settings(max_examples=examples(300))
@given(values=st.lists(_values, max_size=6), level=st.integers(0, 4), as_list=st.booleans())
def test_fields_are_the_pieces_around_the_values_texts(
    values: list[Any], level: int, as_list: bool
) -> None:
    keys = tuple(f"k{i}" for i in range(len(values)))
    if not keys:
        return
    pieces = object_pieces(keys, level)
    got = NATIVE.json_fields(
        pieces, values if as_list else tuple(values), level + 1, "  ", _text_py
    )
    texts = [_text_py(v, level + 1, "  ") for v in values]
    assert got == pieces[0] + "".join(t + p for t, p in zip(texts, pieces[1:], strict=True))


@pytest.mark.parametrize(
    ("value", "error"),
    [
        ({"a": {1, 2}}, TypeError),  # (a set: not JSON)
        ([1, b"x"], TypeError),
        ({(1, 2): 3}, TypeError),  # (a key JSON cannot hold)
        ({"a": [{"b": object()}]}, TypeError),
        (_HUGE, ValueError),  # (more digits than int's str allows)
        ([_HUGE], ValueError),
    ],
    ids=["set", "bytes", "tuple key", "object", "huge int", "huge int in a list"],
)
def test_what_python_refuses_c_refuses_alike(value: Any, error: type[Exception]) -> None:
    with pytest.raises(error) as py:
        _text_py(value, 1, "  ")
    with pytest.raises(error) as c:
        NATIVE.json_value(value, 1, "  ", _text_py)
    assert str(c.value) == str(py.value)


def test_a_value_nested_too_deep_is_a_recursion_error_not_a_crash() -> None:
    deep: Any = []
    for _ in range(100_000):
        deep = [deep]
    with pytest.raises(RecursionError):
        NATIVE.json_value(deep, 0, "  ", _text_py)
    nested: Any = {}
    for _ in range(100_000):
        nested = {"a": nested}
    with pytest.raises(RecursionError):
        NATIVE.json_value(nested, 0, "  ", _text_py)


class _Odd:
    """A value only the fallback writes; the fallback then runs ``then``."""

    def __init__(self, then: Any) -> None:
        self.then = then


def _fallback(o: Any, level: int, step: str) -> str:
    if isinstance(o, _Odd):
        o.then()
        return '"odd"'
    return _text_py(o, level, step)


def test_a_dict_changed_while_written_is_refused() -> None:
    # GIVEN a dict that the fallback grows, or whose key it swaps for one of another type
    d: dict[Any, Any] = {}
    d["a"] = _Odd(lambda: d.__setitem__("z", 1))
    d["b"] = 1
    with pytest.raises(RuntimeError, match="changed size"):
        NATIVE.json_value(d, 0, "  ", _fallback)
    e: dict[Any, Any] = {}

    def swap() -> None:
        del e["b"]
        e[5] = 2

    e["a"] = _Odd(swap)
    e["b"] = 1
    with pytest.raises(RuntimeError, match="changed"):
        NATIVE.json_value(e, 0, "  ", _fallback)


def test_a_list_changed_while_written_never_crashes() -> None:
    # GIVEN lists that the fallback empties or grows while they are written
    shrunk: list[Any] = []
    shrunk.extend([_Odd(shrunk.clear), "x", "y"])
    assert NATIVE.json_value(shrunk, 0, "  ", _fallback) == '[\n  "odd"\n]'
    grown: list[Any] = []
    grown.extend([_Odd(lambda: grown.append("late")), "x"])
    assert NATIVE.json_value(grown, 0, "  ", _fallback) == '[\n  "odd",\n  "x",\n  "late"\n]'
    values: list[Any] = []
    values.extend([_Odd(values.clear), "x"])  # (fields: the values read once, before)
    assert NATIVE.json_fields(("{a:", ",b:", "}"), values, 1, "  ", _fallback) == '{a:"odd",b:"x"}'


def test_a_fallback_that_fails_or_gives_no_str_is_an_error() -> None:
    def fails(o: Any, level: int, step: str) -> str:
        raise KeyError("no")

    def number(o: Any, level: int, step: str) -> Any:
        return 5

    with pytest.raises(KeyError):
        NATIVE.json_value([1, {2}], 0, "  ", fails)
    with pytest.raises(TypeError, match="not str"):
        NATIVE.json_value({"a": {2}}, 0, "  ", number)


def test_wrong_arguments_are_refused() -> None:
    with pytest.raises(TypeError):
        NATIVE.json_value(1, 0, "  ")
    with pytest.raises(ValueError, match="negative"):
        NATIVE.json_value(1, -1, "  ", _text_py)
    with pytest.raises(TypeError, match="step"):
        NATIVE.json_value(1, 0, b"  ", _text_py)
    with pytest.raises(ValueError, match="3 pieces for 1 values"):
        NATIVE.json_fields(("a", "b", "c"), (1,), 0, "  ", _text_py)
    with pytest.raises(TypeError, match="pieces"):
        NATIVE.json_fields(("a", 5), (1,), 0, "  ", _text_py)
    with pytest.raises(TypeError):
        NATIVE.json_fields(["a", "b"], (1,), 0, "  ", _text_py)
    with pytest.raises(TypeError):
        NATIVE.json_fields(("a", "b"), iter([1]), 0, "  ", _text_py)


def test_writing_keeps_no_memory() -> None:
    # GIVEN values of every kind written many times, THEN the memory held does not grow
    value = {
        "s": "plain",
        "e": 'quo"te\n',
        "i": 12,
        "f": 1.5,
        "n": None,
        "l": [1, (2, 3), {"k": [float("nan")]}],
        "o": _Pair(1, _Str("x")),
        "k": {1: "a"},
    }
    pieces = object_pieces(("a", "b"), 1)

    def write() -> None:
        for _ in range(2_000):
            NATIVE.json_value(value, 3, "  ", _text_py)
            NATIVE.json_fields(pieces, (value, "x"), 2, "  ", _text_py)
            with pytest.raises(TypeError):
                NATIVE.json_value([1, {2}], 0, "  ", _text_py)

    assert kept_after(write) < 20_000


def test_native_0_writes_in_python(monkeypatch: pytest.MonkeyPatch) -> None:
    from recompile_doctor.compiled_modules import NATIVE_ENV

    chosen = json_text._NATIVE[:]  # (the list itself is kept: a compiled build holds it)
    try:
        monkeypatch.setenv(NATIVE_ENV, "0")
        json_text._NATIVE.clear()
        assert json_text.native_text() is None
        monkeypatch.delenv(NATIVE_ENV)
        json_text._NATIVE.clear()
        native = json_text.native_text()
        assert native is not None and native.value is NATIVE.json_value
    finally:
        json_text._NATIVE[:] = chosen
