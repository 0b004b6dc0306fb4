"""The values events hold come back from the event codec (a worker's hand-over, the
timeline's packed chunks) as they went in: the same types at every depth (a tuple stays a
tuple, a bool a bool, a compile key a compile key), equal, and a value the codec does not
know is refused, not changed."""

from __future__ import annotations

import marshal
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from recompile_doctor.events import CompileKey, FrameworkNote, Span
from recompile_doctor.model import Event, ValueChange
from recompile_doctor.parsers import _event_codec as codec

_TEXT = st.text(max_size=6)
_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False),
    _TEXT,
    st.binary(max_size=4),
)
_KEYS = st.builds(CompileKey, st.sampled_from(["jax", "torch"]), _TEXT, graph_hash=_TEXT)
_CHANGES = st.builds(ValueChange, _TEXT, _TEXT, st.none() | _TEXT, st.none() | _TEXT)
_VALUES = st.recursive(
    st.one_of(_SCALARS, _KEYS, _CHANGES),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.lists(inner, max_size=4).map(tuple),
        st.dictionaries(_TEXT, inner, max_size=4),
    ),
    max_leaves=12,
)


def _shape(v: Any) -> Any:
    """``v`` with the type of each value beside it, at every depth."""
    if isinstance(v, dict):
        return ("dict", [(k, _shape(x)) for k, x in v.items()])
    if isinstance(v, (list, tuple)):
        return (type(v).__name__, [_shape(x) for x in v])
    return (type(v).__name__, v)


def _round_trip(v: Any) -> Any:
    return codec._dec(marshal.loads(marshal.dumps(codec._enc(v))))


@given(_VALUES)
def test_a_value_comes_back_equal_and_of_the_same_types(v: Any) -> None:
    assert _shape(_round_trip(v)) == _shape(v)


@given(st.dictionaries(_TEXT, _VALUES, max_size=4), _KEYS)
def test_an_event_comes_back_with_its_detail_and_values(detail: Any, key: CompileKey) -> None:
    rec = Event("note", "run.log", 3, None, "a line", None, None, detail)
    ev = FrameworkNote(Span("run.log", 3, "a line"), rec, "noted", key, detail)
    item = marshal.loads(marshal.dumps(codec.encode(ev, None)))
    back = codec.decode(item, None)
    assert back == ev
    assert _shape(back.detail) == _shape(detail)
    assert _shape(back.record.detail) == _shape(detail)  # type: ignore[union-attr]


def test_the_shared_empty_detail_stays_shared() -> None:
    rec = Event("note", "run.log", 3, None, "a line")
    assert _round_trip(rec.detail) is rec.detail


@pytest.mark.parametrize("value", [{1, 2}, frozenset(), object(), [1, {"a": {2}}], (b"x", 1j)])
def test_a_value_the_codec_does_not_know_is_refused(value: Any) -> None:
    with pytest.raises(codec.Unencodable):
        codec._enc(value)
