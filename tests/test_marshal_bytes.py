"""marshal's bytes written by the C writer (``parsers/_native_marshal.c``, through
``marshal_bytes``): read back by ``marshal.loads``, they give what marshal's own bytes give
(equal values of the same types, the same objects shared), for any plain value; where the
writer does not write a value, ``marshal.dumps`` answers, bytes or error; a spooled chunk
written either way gives the same events and the same JSON."""

from __future__ import annotations

import enum
import marshal
import math
from collections import namedtuple
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from recompile_doctor import marshal_bytes
from recompile_doctor.model import Event
from recompile_doctor.parsers._spans import native_in_use
from recompile_doctor.timeline import spool
from tests.conftest import examples

NATIVE: Any = native_in_use()
needs_native = pytest.mark.skipif(
    NATIVE is None, reason="the C module is not built here, or turned off"
)

_texts = st.text(st.characters(codec=None, exclude_categories=()), max_size=12)
_long_texts = st.text(st.characters(codec=None, exclude_categories=()), min_size=250, max_size=300)
_leaves = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(-(2**70), 2**70),
    st.sampled_from([2**31 - 1, 2**31, -(2**31), -(2**31) - 1, 2**63 - 1, -(2**63), 2**63]),
    st.floats(allow_nan=True, allow_infinity=True),
    _texts,
    _long_texts,
    st.binary(max_size=8),
    st.sampled_from(["function", "duration_s", "jax"]),  # (interned: marshal refers back)
)
_keys = st.one_of(_texts, st.integers(), st.tuples(_texts, st.integers()))
_values = st.recursive(
    _leaves,
    lambda kids: st.one_of(
        st.lists(kids, max_size=4),
        st.lists(kids, max_size=3).map(tuple),
        st.dictionaries(_keys, kids, max_size=4),
    ),
    max_leaves=20,
)


@st.composite
def _shared(draw: st.DrawFn) -> list[Any]:
    """A list of values, some objects in it more than once (a string, a list, a dict)."""
    pool = draw(st.lists(_values, min_size=1, max_size=4))
    return draw(st.lists(st.one_of(_values, st.sampled_from(pool)), max_size=8))


def _shape(o: Any, seen: dict[int, int]) -> Any:
    """``o`` as a comparable tree: each value with its type, each string, bytes or container
    met again as the number of its first meeting (so two trees are equal when they hold
    equal values of the same types and share the same objects)."""
    t = type(o)
    if t in (str, bytes, list, tuple, dict) and not (t is tuple and not o):
        if id(o) in seen:
            return ("again", seen[id(o)])
        seen[id(o)] = len(seen)
    if t is float:
        return (t.__name__, "nan" if math.isnan(o) else o.hex())
    if t in (list, tuple):
        return (t.__name__, [_shape(x, seen) for x in o])
    if t is dict:
        return ("dict", [(_shape(k, seen), _shape(v, seen)) for k, v in o.items()])
    return (t.__name__, o)


def _same_read(a: bytes, b: bytes) -> None:
    assert _shape(marshal.loads(a), {}) == _shape(marshal.loads(b), {})


@needs_native
@settings(max_examples=examples(300), deadline=None)
@given(_shared())
def test_reads_back_as_marshal_s_own(value: list[Any]) -> None:
    _same_read(marshal_bytes.dumps(value), marshal.dumps(value))
    got = NATIVE.marshal_dumps(value, False)
    if got is not None:  # (None: an int beyond 64 bits)
        _same_read(got, marshal.dumps(value))


@needs_native
def test_the_c_writer_writes_what_it_can() -> None:
    for v in [
        None,
        True,
        [0, -1, 2**31, -(2**63), 2**63 - 1],
        (1,) * 300,
        "é\ud800",
        "x" * 300,
        {"a": [1.5, -0.0, math.inf]},
        b"\x00\xff",
    ]:
        got = NATIVE.marshal_dumps(v, False)
        assert got is not None
        _same_read(got, marshal.dumps(v))


@needs_native
def test_a_container_holding_itself() -> None:
    box: list[Any] = [1]
    box.append(box)
    d: dict[str, Any] = {}
    d["me"] = d
    read = marshal.loads(NATIVE.marshal_dumps([box, d, box], False))
    assert read[0][1] is read[0] and read[2] is read[0]
    assert read[1]["me"] is read[1]


class _Kind(enum.IntEnum):
    A = 1


class _Str(str):
    pass


_Pair = namedtuple("_Pair", "a b")


@needs_native
def test_what_it_does_not_write_marshal_answers() -> None:
    # marshal writes these: the same bytes come through dumps
    for v in [{1, 2}, frozenset({"a"}), 1j, 2**64, [-(2**100)], ..., bytearray(b"ab")]:
        assert NATIVE.marshal_dumps(v, False) is None
        assert marshal_bytes.dumps(v) == marshal.dumps(v)
    # marshal refuses these: so does dumps, with marshal's error
    for bad in [_Kind.A, _Str("s"), _Pair(1, 2), [object()], {"k": _Pair(1, 2)}]:
        assert NATIVE.marshal_dumps(bad, False) is None
        with pytest.raises(ValueError):
            marshal_bytes.dumps(bad)


@needs_native
def test_nesting_beyond_marshal_s_limit() -> None:
    ok: list[Any] = []
    for _ in range(1900):
        ok = [ok]
    read = marshal.loads(marshal_bytes.dumps(ok))
    depth = 0
    while read:
        (read,) = read
        depth += 1
    assert depth == 1900 and read == []
    deep: list[Any] = []
    for _ in range(3000):
        deep = [deep]
    assert NATIVE.marshal_dumps(deep, False) is None
    with pytest.raises(ValueError):
        marshal_bytes.dumps(deep)


@needs_native
def test_rows_as_plain_tuples() -> None:
    detail = {"function": "f", "lines": [1, 2]}
    rows = [Event("k", "a.log", 3, None, "text", "m", None, detail), ("p", 1), _Pair(2, "x")]
    got = marshal_bytes.rows_dumps(rows)  # type: ignore[arg-type]
    assert got is not None
    read = marshal.loads(got)
    assert read == [tuple(r) for r in rows]
    assert all(type(r) is tuple for r in read)
    assert read[0][7] == detail
    # not a list of tuples, or a named tuple inside a row: not written here
    assert NATIVE.marshal_dumps((("a",),), True) is None
    assert NATIVE.marshal_dumps([("a",), "b"], True) is None
    assert NATIVE.marshal_dumps([("a", _Pair(1, 2))], True) is None


@pytest.mark.skipif(NATIVE is not None, reason="the C module is in use here")
def test_without_the_c_module_rows_are_plain() -> None:
    assert marshal_bytes.rows_dumps([("a",)]) is None
    assert not marshal_bytes.TAKES_NAMED_ROWS


def _events(n: int) -> list[Event]:
    out = []
    for i in range(n):
        detail: Any = {"function": f"f{i % 3}", "n": i, "lines": [i, i + 1]}
        if i % 7 == 3:
            detail = {"why": _Kind.A}  # (marshal does not write it: the chunk is pickled)
        out.append(Event("compile", "a.log", i, 0.5 * i, f"line {i} é", "m", None, detail))
    return out


@pytest.mark.parametrize("native_rows", [True, False])
def test_spooled_chunks_read_back_the_same(
    native_rows: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not native_rows:  # (the chunks then written by marshal, from plain copies)
        monkeypatch.setattr(spool, "rows_dumps", lambda rows: None)
    evs = [e for e in _events(40) if not isinstance(e.detail.get("why"), _Kind)]
    rows = [e if marshal_bytes.TAKES_NAMED_ROWS else e[:] for e in evs]
    data = spool._chunk_bytes(rows)  # type: ignore[arg-type]
    assert data[:1] == spool._MARSHALLED
    assert spool._chunk_rows(data) == [tuple(e) for e in evs]
    mixed = [e if marshal_bytes.TAKES_NAMED_ROWS else e[:] for e in _events(10)]
    pickled = spool._chunk_bytes(mixed)  # type: ignore[arg-type]
    assert pickled[:1] == spool._PICKLED
    assert spool._chunk_rows(pickled) == [tuple(e) for e in _events(10)]
    assert all(type(r) is tuple for r in spool._chunk_rows(pickled))


@needs_native
def test_a_chunk_s_json_is_the_same_either_way() -> None:
    from recompile_doctor.json_text import ITEM_HEADS, object_pieces
    from recompile_doctor.model import EVENT_KEYS

    rows = [
        Event("k", "a.log", i, None, f"t{i}", None, None, {"function": "f", "i": i})
        for i in range(30)
    ]
    plain = [r[:] for r in rows]
    mine = spool._MARSHALLED + NATIVE.marshal_dumps(rows, True)
    theirs = spool._MARSHALLED + marshal.dumps(plain)
    assert mine != theirs  # (the bytes differ: the same text is wanted all the same)
    pieces = object_pieces(EVENT_KEYS, 2)
    a = NATIVE.json_chunk(mine, pieces, 3, "  ", ITEM_HEADS)
    b = NATIVE.json_chunk(theirs, pieces, 3, "  ", ITEM_HEADS)
    assert a is not None and a == b


@needs_native
def test_a_value_of_many_objects_then_small_ones() -> None:
    # (a value of more shared objects than the writer keeps its table for, then others:
    # each call's references are its own)
    words = [f"w{i}" for i in range(100_000)]
    big = [words, words[::-1], (1.5, words[0])]
    _same_read(NATIVE.marshal_dumps(big, False), marshal.dumps(big))
    for small in (["a", "a"], [words[1], words[1]], {"k": words[2]}):
        _same_read(NATIVE.marshal_dumps(small, False), marshal.dumps(small))
