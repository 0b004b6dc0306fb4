"""IdIndex: the rows given each compile id, as a dictionary of lists gives them."""

from __future__ import annotations

from collections.abc import Callable
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from recompile_doctor.timeline import compile_ids
from recompile_doctor.timeline.compile_ids import IdIndex
from tests._held_memory import held_bytes, traced_merges

_HASHES: dict[str, Callable[[str], int]] = {
    "builtin": hash,
    "colliding": lambda s: len(s) % 3,  # (many ids share a hash: told apart by the rows)
    "negative": lambda s: -len(s) - (1 << 62),
}


@pytest.mark.parametrize(
    ("pack_from", "cold_from", "cold_open"),
    [(1, 1 << 40, 1), (3, 1 << 40, 1), (65_536, 1 << 40, 1), (1, 1, 1), (2, 3, 2), (1, 4, 3)],
)
@pytest.mark.parametrize("hashing", sorted(_HASHES))
@settings(deadline=None)  # (a merge into the file makes a temporary file: one per id here)
@given(
    given_ids=st.lists(st.sampled_from(["0/0", "0/1", "1/0", "a#1", "a#2", "", "x" * 9])),
    asked=st.lists(st.text(max_size=4) | st.sampled_from(["0/0", "a#2", "zz"])),
)
def test_rows_are_those_given(
    hashing: str,
    pack_from: int,
    cold_from: int,
    cold_open: int,
    given_ids: list[str],
    asked: list[str],
) -> None:
    # GIVEN rows 0, 1, 2... given ids (some again: another process numbered alike), held
    # open or merged into packed tables now and then, those in memory or in a file
    with (
        mock.patch.object(compile_ids, "_hash", _HASHES[hashing]),
        mock.patch.object(compile_ids, "PACK_FROM", pack_from),
        mock.patch.object(compile_ids, "COLD_FROM", cold_from),
        mock.patch.object(compile_ids, "COLD_OPEN", cold_open),
    ):
        index = IdIndex(lambda row: given_ids[row])
        reference: dict[str, list[int]] = {}
        for row, ident in enumerate(given_ids):
            index.add(ident, row)
            reference.setdefault(ident, []).append(row)
        # THEN each id gives its rows, the last first; an id never given, none
        for ident in [*given_ids, *asked]:
            assert index.rows(ident) == sorted(reference.get(ident, []), reverse=True)
        assert len(index) == len(given_ids)
        index.close()


def test_many_ids_grow_the_index_and_stay_found() -> None:
    ids = [f"__inference_step_{k}#1" for k in range(20_000)]
    index = IdIndex(ids.__getitem__)
    for row, ident in enumerate(ids):
        index.add(ident, row)
    assert all(index.rows(ident) == [row] for row, ident in enumerate(ids))
    assert index.rows("__inference_step_20000#1") == []
    assert 3 * len(index) <= 2 * index.slots()
    # AND each of its tables grew on its own, to about a sixteenth of the whole
    parts = [p.mask + 1 for p in index._parts]
    assert len(parts) == compile_ids.PARTS and max(parts) <= index.slots() // 8, parts


def test_many_ids_are_packed_in_less_memory_and_stay_found(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # GIVEN 300,000 compile ids, one per row (a TensorFlow log of a new cluster each time)
    ids = [f"__inference_step_{k}#1" for k in range(300_000)]
    # (its last merge, of 262,144 ids, the one that holds most, is traced)
    peaks = traced_merges(monkeypatch, IdIndex, ("_parts", "_packed"), 200_000)
    index = IdIndex(ids.__getitem__)
    for row, ident in enumerate(ids):
        index.add(ident, row)
    held = held_bytes(index)
    # THEN most are packed: about 10 bytes an id, where open tables took 12 to 24 (and 36
    # while one doubled)
    assert index._packed_count >= 262_144
    assert held < 12 * len(ids), held / len(ids)
    if peaks is not None:  # (None: compiled, its merges cannot be watched)
        assert len(peaks) == 1
        assert peaks[0][1] < 16 * len(ids), peaks[0][1] / len(ids)
    # AND each is found, packed or open, and an id never given is not
    assert all(index.rows(ids[row]) == [row] for row in range(0, 300_000, 13))
    assert index.rows(ids[-1]) == [len(ids) - 1]
    assert index.rows("__inference_step_300000#1") == []


def test_many_ids_go_to_a_file_and_stay_found() -> None:
    # GIVEN 100,000 compile ids, one per row, the packed ones in a file from 16,384 on
    ids = [f"__inference_step_{k}#1" for k in range(100_000)]
    asked: list[str] = []
    with (
        mock.patch.object(compile_ids, "COLD_FROM", 16_384),
        mock.patch.object(compile_ids, "COLD_OPEN", 8192),
    ):
        index = IdIndex(lambda row: asked.append(ids[row]) or ids[row])
        for row, ident in enumerate(ids):
            index.add(ident, row)
        held = held_bytes(index)
    # THEN the packed ones are in the file: in memory the filter, the open tables and the
    # buckets' starts (256 kB), where packed in memory the ids took 10 bytes each
    assert index._cold is not None and index._packed is None
    assert held < 7 * len(ids), held / len(ids)
    # AND each is found, in the file or open; ids never given rarely read the file (the
    # filter rules out most), and are never found
    assert all(index.rows(ids[row]) == [row] for row in range(0, 100_000, 7))
    asked.clear()
    never = [f"__inference_other_{k}#1" for k in range(20_000)]
    assert all(index.rows(ident) == [] for ident in never)
    assert len(asked) < 0.05 * len(never), len(asked)
    index.close()


def test_the_filter_never_rules_out_a_key_added() -> None:
    from recompile_doctor.timeline.cold_keys import KeyFilter

    f = KeyFilter(10_000)
    added = [(k * 2_654_435_761) & 0xFFFFFFFF for k in range(10_000)]
    for h in added:
        f.add(h)
    assert all(h in f for h in added)
    # (about 2 in 100 of the others pass)
    others = [(k * 2_246_822_519 + 7) & 0xFFFFFFFF for k in range(10_000, 30_000)]
    given = set(added)
    passed = sum(h in f for h in others if h not in given)
    assert passed < 0.04 * len(others), passed
    # AND a filter made from packed keys holds the same numbers
    g = KeyFilter(10_000)
    g.add_keys(b"".join(h.to_bytes(4, "little") for h in added))
    assert g._words == f._words
