"""DistinctCount and NameIndex: distinct strings counted and numbered from fingerprints, as a
set counts them and a dictionary numbers them."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from recompile_doctor.parsers._spans import NATIVE_ENV, native_module
from recompile_doctor.timeline.distinct import (
    _EMPTY,
    DistinctCount,
    NameIndex,
    _fingerprints,
    _held,
    _numbered,
    fingerprint,
)
from tests.conftest import examples


@given(st.lists(st.text(max_size=6) | st.sampled_from(["\udcff", "a\ud800b", ""])))
def test_counts_as_a_set_does(strings: list[str]) -> None:
    # GIVEN any strings, repeated or not, with lone surrogates (a log's undecodable bytes)
    # THEN the count is the set's
    d = DistinctCount()
    for s in strings:
        d.add(s)
    assert len(d) == len(set(strings))


def test_counts_past_many_growths() -> None:
    # GIVEN 50,000 distinct strings, each added twice (each table grows from 64 slots)
    d = DistinctCount()
    for k in [*range(50_000), *range(0, 50_000, 7)]:
        d.add(f"__inference_train_step_{k}")
    # THEN each is counted once, and no table is more than two thirds full
    assert len(d) == 50_000
    assert d._fullest() <= 2 / 3


def test_no_fingerprint_is_the_empty_slot() -> None:
    assert all(fingerprint(s) != _EMPTY for s in ["", "a", "\udcff"])
    assert len({fingerprint(s) for s in ["a", "b", "ab", "a\x00"]}) == 4


@given(
    st.lists(st.text(max_size=4) | st.sampled_from(["\udcff", "a\ud800b", ""])),
    st.lists(st.text(max_size=4)),
)
def test_numbers_in_order_of_first_sight_as_a_dictionary_does(
    strings: list[str], probes: list[str]
) -> None:
    # GIVEN any strings numbered in turn, and other strings looked up
    index = NameIndex()
    got = [index.number(s) for s in strings]
    # THEN each has the number a dictionary gives it in order of first sight, every time
    first: dict[str, int] = {}
    assert got == [first.setdefault(s, len(first)) for s in strings]
    assert len(index) == len(first)
    # AND a lookup finds the numbered ones only, without numbering the others
    for s in probes:
        assert index.find(s) == first.get(s)
        assert (s in index) == (s in first)
    assert len(index) == len(first) and 1 not in index


def test_numbers_survive_many_growths() -> None:
    # GIVEN 30,000 strings numbered (each table grows from 64 slots several times)
    index = NameIndex()
    names = [f"cluster_{k}" for k in range(30_000)]
    assert [index.number(s) for s in names] == list(range(30_000))
    # THEN each keeps its number, whether looked up or numbered again
    assert all(index.find(s) == k for k, s in enumerate(names))
    assert all(index.number(names[k]) == k for k in range(0, 30_000, 97))
    assert len(index) == 30_000 and index.find("cluster_30000") is None


@given(
    st.lists(st.text(max_size=3) | st.sampled_from(["\udcff", "a\ud800b", ""]), max_size=60),
    st.integers(1, 5),
    st.integers(1, 3),
)
def test_a_bounded_count_counts_as_a_set_does(strings: list[str], held: int, read: int) -> None:
    from recompile_doctor.timeline import distinct

    # GIVEN strings (repeated across the runs written to disk), WHEN at most `held`
    # fingerprints are held in memory and the runs are merged `read` at a time
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(distinct, "HELD", held)
        mp.setattr(distinct, "MERGE_READ", read)
        bounded = distinct.BoundedDistinctCount()
        for s in strings:
            bounded.add(s)
        # THEN the count is the set's, runs were written once past the limit, and the
        # temporary file goes on close
        assert bounded.count() == len(set(strings))
        assert bool(bounded._runs) == (len(set(strings)) >= held)
        bounded.close()
        assert not bounded._blobs.used
        assert distinct.count_distinct(iter(strings)) == len(set(strings))


def test_a_bounded_count_holds_a_bounded_table(monkeypatch: pytest.MonkeyPatch) -> None:
    from recompile_doctor.timeline import distinct

    # GIVEN 3.5 times as many distinct strings as a bounded count holds, each twice
    monkeypatch.setattr(distinct, "HELD", 4096)
    strings = [f"module_{k}" for k in range(distinct.HELD * 7 // 2)]
    bounded = distinct.BoundedDistinctCount()
    for s in strings + strings[::-1]:
        bounded.add(s)
        # THEN its table never holds more than HELD fingerprints
        assert len(bounded._held) < distinct.HELD
    assert len(bounded._runs) == 6 and bounded.count() == len(strings)
    bounded.close()


@pytest.mark.parametrize("n", [1, 5, 300, 5_000])
@pytest.mark.parametrize("base", [0, 7])
def test_numbered_gives_each_fingerprint_with_its_number_the_first_too(n: int, base: int) -> None:
    # GIVEN n strings numbered in turn (0 to n - 1: the slot of the one numbered 0 is not
    # marked by its number, the others' are)
    index = NameIndex()
    names = [f"cluster_{k}" for k in range(n)]
    for s in names:
        index.number(s)
    # THEN numbered() gives each fingerprint once, with its number plus the base
    got = list(index.numbered(base))
    assert sorted(got) == sorted((fingerprint(s), k + base) for k, s in enumerate(names))
    # AND a count (no numbers) holds the same fingerprints
    d = DistinctCount()
    for s in names:
        d.add(s)
    assert sorted(_fingerprints(d)) == sorted(fingerprint(s) for s in names)


@settings(max_examples=examples(60))
@given(
    st.lists(st.integers(0, 3_000), unique=True, max_size=400),
    st.integers(0, 1_000),
    st.integers(0, 2_000),
)
def test_numbered_is_each_held_slot_in_slot_order(keys: list[int], first: int, base: int) -> None:
    # GIVEN an index numbering strings from ``first`` on (the one numbered 0 among them
    # when ``first`` is 0: its slot is not marked by its number), its tables sparse or full
    index = NameIndex()
    for _ in range(first):
        index.number(f"before_{_}")
    for k in keys:
        index.number(f"s{k}")
    # THEN each table gives exactly its held slots, in slot order, as read slot by slot
    for shard in index._shards:
        assert shard.numbers is not None
        want = [(d, shard.numbers[j] + base) for j, d in _held(shard.slots)]
        assert list(_numbered(shard, base)) == want


# -- the tables' probing and growth in C against the Python they replace -----------------

_NATIVE: Any = native_module()
_needs_native = pytest.mark.skipif(_NATIVE is None, reason="the C module is not built here")


@_needs_native
@settings(max_examples=examples(300), deadline=None)
@given(
    # fingerprints whose first bytes collide often (a small table: long probe runs)
    keys=st.lists(
        st.tuples(st.integers(0, 7), st.binary(min_size=15, max_size=15)).map(
            lambda t: bytes([t[0] + 1]) + t[1]
        ),
        max_size=40,
    ),
    numbered=st.booleans(),
)
def test_the_c_tables_are_the_python_tables(keys: list[bytes], numbered: bool) -> None:
    """GIVEN fingerprints put into a table (growing it as the count does) and looked up
    WHEN the C module's fp_slot and fp_rehash do it, and the Python twins do THEN every
    answer, the slots' bytes and the numbers are the same."""
    from recompile_doctor.timeline.distinct import _Shard, fp_rehash_py, fp_slot_py

    c = _Shard(numbered, 8, (_NATIVE.fp_slot, _NATIVE.fp_rehash))
    py = _Shard(numbered, 8, (fp_slot_py, fp_rehash_py))
    for n, d in enumerate(keys):
        assert c.find(d) == py.find(d)
        assert c.put(d, n) == py.put(d, n)
        assert (c.mask, c.count, c.slots) == (py.mask, py.count, py.slots)
        assert c.numbers == py.numbers
    for d in keys:
        assert c.find(d) == py.find(d) >= 0


@_needs_native
def test_the_c_table_refuses_what_is_not_a_table() -> None:
    """The C functions check their arguments (a wrong table would be written past its end)."""
    with pytest.raises(ValueError):
        _NATIVE.fp_slot(bytearray(16 * 8), 15, b"x" * 16, True)  # (16 slots asked, 8 there)
    with pytest.raises(ValueError):
        _NATIVE.fp_slot(bytearray(16 * 8), 7, bytes(16), True)  # (the empty slot's bytes)
    with pytest.raises(TypeError):
        _NATIVE.fp_slot(bytearray(16 * 8), 7, b"x" * 15, True)
    with pytest.raises(BufferError):
        _NATIVE.fp_slot(bytes(16 * 8), 7, b"x" * 16, True)  # (read-only: nothing stored)
    with pytest.raises(ValueError):
        _NATIVE.fp_rehash(bytearray(16 * 16), bytearray(16 * 8), 7, None, None)


def test_the_python_table_refuses_what_the_c_one_refuses() -> None:
    from recompile_doctor.timeline.distinct import fp_slot_py

    with pytest.raises(ValueError):
        fp_slot_py(bytearray(16 * 8), 7, bytes(16), True)  # (the empty slot's bytes)
    with pytest.raises(TypeError):
        fp_slot_py(bytearray(16 * 8), 7, b"x" * 15, True)


def test_native_0_gives_the_python_tables(monkeypatch: pytest.MonkeyPatch) -> None:
    from recompile_doctor.timeline.distinct import fp_rehash_py, fp_slot_py, table_work

    monkeypatch.setenv(NATIVE_ENV, "0")
    assert table_work() == (fp_slot_py, fp_rehash_py)
    index = NameIndex()
    assert [index.number(s) for s in ("a", "b", "a")] == [0, 1, 0]


@pytest.mark.parametrize("cls", [DistinctCount, NameIndex])
def test_a_count_pickled_and_copied_holds_the_same(cls: type[DistinctCount]) -> None:
    """GIVEN a count or an index of enough strings for its tables to grow WHEN it is
    pickled and copied (compiled, a class is made again by its __init__) THEN the copies
    hold the same strings (numbers), and go on counting on their own."""
    import copy
    import pickle

    d = cls()
    strings = [f"s{k}" for k in range(3_000)]
    for s in strings:
        d.add(s)
    for again in (pickle.loads(pickle.dumps(d)), copy.deepcopy(d), d.copy()):
        assert type(again) is type(d)
        assert len(again) == len(d) and all(s in again for s in strings)
        again.add("new")
        assert len(again) == len(d) + 1 and "new" not in d
        if isinstance(d, NameIndex):
            assert isinstance(again, NameIndex)
            assert [again.find(s) for s in strings[:50]] == [d.find(s) for s in strings[:50]]
            assert again.number("newer") == len(d) + 1
