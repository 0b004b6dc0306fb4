"""The compact table of name digests behaves as a dictionary of them."""

from __future__ import annotations

import pickle

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from recompile_doctor.name_digest import name_number
from recompile_doctor.parsers import _digest_table
from recompile_doctor.parsers._digest_table import DigestTable
from recompile_doctor.timeline import cold_keys
from recompile_doctor.timeline.cold_keys import ColdNumbers
from tests._held_memory import held_bytes, peak_while, traced_merges

_KEYS = st.sampled_from([0, 1, 2**128 - 1, name_number("a"), name_number("b")]) | st.integers(
    0, 2**128 - 1
)
_VALUES = st.sampled_from([0, 1, 7, 2**32 - 2, 2**32 - 1, 2**64, -1, True]) | st.integers()
_OPS = st.lists(
    st.one_of(
        st.tuples(st.just("set"), _KEYS, _VALUES),
        st.tuples(st.just("del"), _KEYS, st.none()),
        st.tuples(st.just("clear"), st.none(), st.none()),
        st.tuples(st.just("pack"), st.none(), st.none()),
    ),
    max_size=60,
)


@pytest.mark.parametrize(("cold_from", "changed_max"), [(1, 1), (3, 2), (2, 10**9), (10**9, 1)])
@settings(deadline=None)  # (a merge into the file makes a temporary file)
@given(_OPS, st.lists(_KEYS, max_size=10))
def test_a_digest_table_answers_as_a_dict_does(
    cold_from: int,
    changed_max: int,
    ops: list[tuple[str, int | None, int | None]],
    asked: list[int],
) -> None:
    # GIVEN a table and a dictionary that are given the same writes, deletions and clears,
    # the table packed now and then (any size packs here, and merges its new digests into
    # the packed ones whenever they are an eighth of them, or a 32nd in the file), those
    # and their values in a file from `cold_from` entries on, the values' file written
    # anew after `changed_max` of its values are set again
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_digest_table, "PACK_FROM", 1)
        mp.setattr(_digest_table, "COLD_FROM", cold_from)
        mp.setattr(cold_keys, "CHANGED_MAX", changed_max)
        _same_as_a_dict(ops, asked)


def _same_as_a_dict(ops: list[tuple[str, int | None, int | None]], asked: list[int]) -> None:
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
        elif op == "pack":
            table.pack()
            assert not len(table._index)  # (all its digests packed)
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


def test_a_big_digest_table_holds_its_digests_packed_in_half_the_memory(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    keys = [name_number(f"__inference_f_{i}") for i in range(300_000)]
    # (its last merge, of 262,144 entries, the one that holds most, is traced)
    peaks = traced_merges(monkeypatch, DigestTable, ("_index", "_packed"), 200_000)
    # GIVEN a table given 300,000 digests (past PACK_FROM: most of them merged into the
    # packed ones as they come)
    table = DigestTable()
    for i, k in enumerate(keys):
        table[k] = i % 5
    held = held_bytes(table)
    # THEN it holds them in about half the memory of open tables alone (57 bytes an entry),
    # and never held much more while it merged them
    assert held < 32 * len(keys), held / len(keys)
    if peaks is not None:  # (None: compiled, its merges cannot be watched)
        assert len(peaks) == 1
        assert peaks[0][1] < 40 * len(keys), peaks[0][1] / len(keys)
    # AND it finds each and answers as a dict would
    assert all(table[keys[i]] == i % 5 for i in range(0, 300_000, 7))
    assert name_number("__inference_g") not in table and len(table) == len(keys)


def test_a_big_digest_table_in_a_file_holds_a_fraction_of_it_in_memory(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    keys = [name_number(f"__inference_f_{i}") for i in range(300_000)]
    monkeypatch.setattr(_digest_table, "COLD_FROM", 65_536)
    # GIVEN a table given 300,000 digests, those packed in a file from 65,536 on
    table = DigestTable()
    for i, k in enumerate(keys):
        table[k] = i % 5
    held = held_bytes(table)
    # THEN it holds in memory the open index (65,536 entries at most here: a 32nd of those
    # in the file, at least that) and the filter, its values in a file with the digests:
    # about 12 bytes an entry, where it held 16-18 with its values in memory and 31 packed
    # in memory
    assert table._packed._cold is not None and isinstance(table._values, ColdNumbers)
    assert held < 14 * len(keys), held / len(keys)
    # AND it finds each, and answers as a dict would for a name never given
    assert all(table[keys[i]] == i % 5 for i in range(0, 300_000, 7))
    assert name_number("__inference_g") not in table and len(table) == len(keys)
    table.pack()
    assert all(table[keys[i]] == i % 5 for i in range(3, 300_000, 11))


def test_packing_lets_each_open_table_go_as_its_part_is_made(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # GIVEN a table of 100,000 digests in open tables (nothing merged yet)
    monkeypatch.setattr(_digest_table, "PACK_FROM", 10**9)
    table = DigestTable()
    for i in range(100_000):
        table[name_number(f"__inference_f_{i}")] = i % 5
    shards = table._index._shards
    index_bytes = sum(len(s.slots) + 4 * len(s.numbers or ()) for s in shards)
    del shards
    # WHEN it is packed
    monkeypatch.setattr(_digest_table, "PACK_FROM", 1)
    before, peak = peak_while(table, ("_index", "_packed"), table.pack)
    # THEN its digests take less than two thirds of the room they took, with the open
    # tables made for the next ones (the values stay as they are)
    assert table.packed()
    digests_now = held_bytes(table) - (before - index_bytes)
    assert digests_now < index_bytes * 2 / 3, (digests_now, index_bytes)
    # AND it never held both forms whole at once
    assert peak - before < index_bytes / 4, (peak, before, index_bytes)
    assert all(table[name_number(f"__inference_f_{i}")] == i % 5 for i in range(0, 100_000, 7))


def test_writes_after_packing_keep_every_entry(monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN a packed table of 5,000 digests, each with its own value, some deleted before
    # (merged into the packed ones from 1,000 on)
    monkeypatch.setattr(_digest_table, "PACK_FROM", 1_000)
    keys = [name_number(f"cluster_{i}") for i in range(5_000)]
    table = DigestTable()
    for i, k in enumerate(keys):
        table[k] = i
    for k in keys[::10]:
        del table[k]
    table.pack()
    assert table.packed()
    # WHEN one is written, one deleted and one added
    table[keys[1]] = 10**20  # (not a small value: kept aside)
    del table[keys[2]]
    table[name_number("new")] = 7
    # THEN the new one is held open, and it holds what a dict given the same would
    expected = {k: i for i, k in enumerate(keys) if i % 10}
    expected[keys[1]] = 10**20
    del expected[keys[2]]
    expected[name_number("new")] = 7
    assert not table.packed()
    assert dict(table.items()) == expected and len(table) == len(expected)
    assert all(table[k] == v for k, v in expected.items())
    assert keys[0] not in table and keys[2] not in table


def test_a_packed_digest_table_finds_no_digest_across_two_of_its_own(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # GIVEN a packed table of a few digests side by side in its buffer (the same leading
    # bytes: one bucket; last bytes that are multiples of 16: one table of the index, as
    # any digest made of their bytes would be)
    monkeypatch.setattr(_digest_table, "PACK_FROM", 1)
    keys = [int.from_bytes(bytes([16] * 15 + [16 * j]), "little") for j in range(1, 5)]
    table = DigestTable()
    for k in keys:
        table[k] = 1
    table.pack()
    assert table.packed()
    # WHEN it is asked for a digest whose bytes are the end of one and the start of another
    held = [k.to_bytes(16, "little") for k in keys]
    across = {
        int.from_bytes(a[cut:] + b[:cut], "little")
        for a in held
        for b in held
        if a != b
        for cut in range(1, 16)
    } - set(keys)
    # THEN it holds none of them
    assert [k for k in across if k in table] == []
    assert all(k in table for k in keys)


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
    from recompile_doctor.parsers._checkpoint import _MissDict, _value_state
    from recompile_doctor.parsers._digest_table import WatchedDigests

    # GIVEN a worker's recording dictionary and recording digest table, each inheriting
    # the same entries from the lines before the worker's part
    compact = DigestTable()
    for k, v in inherited.items():
        compact[k] = v
    missed_dict: list[tuple[object, ...]] = []
    missed_table: list[tuple[object, ...]] = []
    plain = _MissDict({}, "t", missed_dict, dict(inherited))
    table = WatchedDigests("t", missed_table, compact, _value_state)
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
