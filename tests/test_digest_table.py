"""The compact table of name digests behaves as a dictionary of them."""

from __future__ import annotations

import pickle

import pytest
from hypothesis import given
from hypothesis import strategies as st

from recompile_doctor.name_digest import name_number
from recompile_doctor.parsers._digest_table import DigestTable

_KEYS = st.sampled_from([0, 1, 2**128 - 1, name_number("a"), name_number("b")]) | st.integers(
    0, 2**128 - 1
)
_VALUES = st.sampled_from([0, 1, 7, 2**32 - 2, 2**32 - 1, 2**64, -1, True]) | st.integers()
_OPS = st.lists(
    st.one_of(
        st.tuples(st.just("set"), _KEYS, _VALUES),
        st.tuples(st.just("del"), _KEYS, st.none()),
        st.tuples(st.just("clear"), st.none(), st.none()),
    ),
    max_size=60,
)


@given(_OPS, st.lists(_KEYS, max_size=10))
def test_a_digest_table_answers_as_a_dict_does(
    ops: list[tuple[str, int | None, int | None]], asked: list[int]
) -> None:
    # GIVEN a table and a dictionary that are given the same writes, deletions and clears
    table, plain = DigestTable(), {}
    for op, key, value in ops:
        if op == "set":
            assert key is not None and value is not None
            table[key] = value
            plain[key] = value
        elif op == "del":
            assert key is not None
            if key in plain:
                del plain[key]
                del table[key]
            else:
                with pytest.raises(KeyError):
                    del table[key]
        else:
            table.clear()
            plain.clear()
        # THEN after each they hold the same entries
        assert len(table) == len(plain)
    assert dict(table.items()) == plain
    assert {k: type(v) for k, v in table.items()} == {k: type(v) for k, v in plain.items()}
    # AND answer the same lookups, of keys held or not and of things that are no digests
    for key in [*asked, *plain, -1, 2**128, "a", 1.0, 2.5, True, None]:
        assert (key in table) == (key in plain)
        assert table.get(key, "none") == plain.get(key, "none")  # type: ignore[call-overload]
    # AND a copy made by pickling holds the same
    again = pickle.loads(pickle.dumps(table))
    assert dict(again.items()) == plain


def test_a_digest_table_refuses_a_key_that_is_no_digest() -> None:
    table = DigestTable()
    for key in (-1, 2**128, "a", 1.5):
        with pytest.raises(TypeError):
            table[key] = 1  # type: ignore[index]
    assert len(table) == 0


def test_a_digest_table_takes_less_memory_than_a_dict() -> None:
    import tracemalloc

    keys = [name_number(f"__inference_f_{i}") for i in range(20_000)]
    tracemalloc.start()
    try:
        plain = {k: 1 for k in (k + 0 for k in keys)}  # (keys made anew, as a decoder does)
        dict_bytes = tracemalloc.get_traced_memory()[0]
        del plain
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        table = DigestTable()
        for k in keys:
            table[k] = 1
        table_bytes = tracemalloc.get_traced_memory()[0] - base
    finally:
        tracemalloc.stop()
    assert table_bytes < dict_bytes * 0.7, (table_bytes, dict_bytes)


_WATCHED = st.lists(
    st.tuples(
        st.sampled_from(["get", "in", "getitem", "setdefault", "pop", "set", "items", "keys"]),
        st.integers(0, 5),
        st.integers(0, 3),
    ),
    max_size=40,
)


@given(st.dictionaries(st.integers(0, 5), st.integers(0, 3), max_size=4), _WATCHED)
def test_a_watched_digest_table_records_what_a_watched_dict_records(
    inherited: dict[int, int], ops: list[tuple[str, int, int]]
) -> None:
    from recompile_doctor.parsers._checkpoint import _MissDict, _MissDigests

    # GIVEN a worker's recording dictionary and recording digest table, each inheriting
    # the same entries from the lines before the worker's part
    compact = DigestTable()
    for k, v in inherited.items():
        compact[k] = v
    missed_dict: list[tuple[object, ...]] = []
    missed_table: list[tuple[object, ...]] = []
    plain = _MissDict({}, "t", missed_dict, dict(inherited))
    table = _MissDigests("t", missed_table, compact)
    # WHEN both are looked up, written and read alike
    for op, key, value in ops:
        got = []
        for t in (plain, table):
            if op == "get":
                got.append(t.get(key, -1))
            elif op == "in":
                got.append(key in t)
            elif op == "getitem":
                try:
                    got.append(t[key])
                except KeyError:
                    got.append("KeyError")
            elif op == "setdefault":
                got.append(t.setdefault(key, value))
            elif op == "pop":
                got.append(t.pop(key, -1))
            elif op == "set":
                t[key] = value
            elif op == "items":
                got.append(sorted(t.items()))
            else:
                got.append(sorted(t.keys()))
        # THEN they answer alike and record the same misses, in the same order
        assert got[:1] == got[1:], op
        assert missed_table == missed_dict
    # AND hold the same entries of their own
    assert dict(table.items()) == dict(plain) and len(table) == len(plain)
