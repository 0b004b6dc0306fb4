"""meets: a decoder compared with a worker's checkpoint without writing its whole state, as
the checkpoint comparison (``checkpoint(decoder) == want``, or ``agrees``) tells it."""

from __future__ import annotations

import enum
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from recompile_doctor.parsers import LOG_FORMATS
from recompile_doctor.parsers._checkpoint import (
    _unordered,
    agrees,
    checkpoint,
    lookups_of,
    meets,
    state_of,
)
from recompile_doctor.parsers._digest_table import DigestTable

#: decoders with dictionaries a checkpoint compares unordered (each format's, by name)
DECODERS = {
    f.name: f
    for f in LOG_FORMATS
    if getattr(type(f.decoder("x")), "UNORDERED_STATE", frozenset())
    | getattr(type(f.decoder("x")), "RESIDUAL_STATE", frozenset())
}

KEYS = st.sampled_from(["a", "b", "c", "d", 1, 2, 2**100, b"x", None, ("t", 1), ("t", 2)])
VALUES = st.sampled_from([0, 1, 2, "v", "w", ("s", "t"), None, 1.5])
ENTRIES = st.dictionaries(KEYS, VALUES, max_size=6)


def _reference(decoder: Any, want: object, among: bool) -> bool:
    state = checkpoint(decoder)
    lookups = lookups_of(decoder)
    return state == want or (among and state is not None and agrees(state, want, lookups))


@given(
    fmt=st.sampled_from(sorted(DECODERS)),
    reader=st.data(),
    among=st.booleans(),
    other=st.booleans(),
)
def test_meets_as_the_whole_states_compare(
    fmt: str, reader: st.DataObject, among: bool, other: bool
) -> None:
    # GIVEN a reader's decoder and a worker's of one format, their looked-up dictionaries
    # filled with any entries (plain keys and tuples, the worker's a subset of the reader's
    # or not, values equal or not), and maybe another attribute apart
    a, w = DECODERS[fmt].decoder("x"), DECODERS[fmt].decoder("x")
    cls = type(a)
    names = sorted(
        getattr(cls, "UNORDERED_STATE", frozenset()) | getattr(cls, "RESIDUAL_STATE", frozenset())
    )
    for name in names:
        if type(getattr(a, name, None)) is not dict:
            continue
        mine = reader.draw(ENTRIES)
        keys = sorted(mine, key=repr)
        kept = reader.draw(st.lists(st.sampled_from(keys), unique=True)) if keys else []
        theirs = {k: mine[k] for k in kept}
        theirs.update(reader.draw(st.dictionaries(KEYS, VALUES, max_size=2)))
        setattr(a, name, mine)
        setattr(w, name, theirs)
    if other:
        setattr(w, "path", "y")  # noqa: B010
    want = checkpoint(w)
    # THEN meets says what the whole states' comparison says
    assert meets(a, want, among) == _reference(a, want, among)
    # AND a decoder meets its own checkpoint, and another's once it holds the same
    assert meets(a, checkpoint(a), among)


def test_keys_of_one_kind_are_sorted_as_they_are_and_others_by_repr() -> None:
    # GIVEN dictionaries whose keys compare (strings; numbers) and whose keys do not
    # THEN the unordered state is the same whatever the order the entries came in
    for items in (
        [("b", 1), ("a", 2), ("c", 3)],
        [(3, 1), (1, 2), (2**100, 3)],
        [("a", 1), (2, 2), (None, 3), (("t", 1), 4)],
    ):
        states = {_unordered(dict(items[k:] + items[:k])) for k in range(len(items))}
        states |= {_unordered(dict(reversed(items)))}
        assert len(states) == 1


@given(
    st.dictionaries(
        st.sampled_from([0, 1, 2**128 - 1]) | st.integers(0, 2**128 - 1),
        st.sampled_from([0, 1, 2**32 - 1, 2**64, -1, True, "v", ("s", "t"), None, 1.5])
        | st.integers(0, 100),
        max_size=40,
    )
)
def test_a_digest_table_s_unordered_state_is_a_dict_s(items: dict[int, object]) -> None:
    # GIVEN a compact table of name digests and a dict given the same entries (values that
    # the table keeps aside too: not small integers, not of type int)
    table = DigestTable()
    for k, v in items.items():
        table[k] = v  # type: ignore[assignment]
    # THEN their unordered states are the same
    assert _unordered(table) == _unordered(dict(items))


class _Level(enum.IntEnum):  # (plain by instance, not by its exact type)
    LOW = 1


def _state(value: object) -> object:
    """What state_of is, written out for plain values, sequences and mappings."""
    if isinstance(value, (str, int, float, bool, bytes, type(None))):
        return value
    if isinstance(value, (tuple, list)):
        return (type(value).__name__, tuple(_state(v) for v in value))
    assert isinstance(value, dict)
    return ("{}", tuple((_state(k), _state(v)) for k, v in value.items()))


_LEAVES = st.sampled_from([0, 1, True, "a", b"b", None, 1.5, 2**100, _Level.LOW])
_NESTED = st.recursive(
    _LEAVES,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.lists(inner, max_size=4).map(tuple)
        | st.dictionaries(_LEAVES | st.tuples(_LEAVES, _LEAVES), inner, max_size=4)
    ),
    max_leaves=20,
)


@given(_NESTED)
def test_the_state_of_nested_values_is_each_item_s_state(value: object) -> None:
    # GIVEN lists, tuples and dicts of plain values at any depth (an int subclass among
    # them), THEN the state is each item's, in order (plain ones taken as they are)
    assert state_of(value) == _state(value)
    assert _unordered({"k": value}) == ("{}", (("k", _state(value)),))
