"""DistinctCount: the number of distinct strings, from fingerprints, as a set counts them."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from recompile_doctor.timeline.distinct import _EMPTY, DistinctCount, fingerprint


@given(st.lists(st.text(max_size=6) | st.sampled_from(["\udcff", "a\ud800b", ""])))
def test_counts_as_a_set_does(strings: list[str]) -> None:
    # GIVEN any strings, repeated or not, with lone surrogates (a log's undecodable bytes)
    # THEN the count is the set's
    d = DistinctCount()
    for s in strings:
        d.add(s)
    assert len(d) == len(set(strings))


def test_counts_past_many_growths() -> None:
    # GIVEN 50,000 distinct strings, each added twice (the table grows from 1,024 slots)
    d = DistinctCount()
    for k in [*range(50_000), *range(0, 50_000, 7)]:
        d.add(f"__inference_train_step_{k}")
    # THEN each is counted once, and the table is at most two thirds full
    assert len(d) == 50_000
    assert 3 * len(d) <= 2 * (d._mask + 1)


def test_no_fingerprint_is_the_empty_slot() -> None:
    assert all(fingerprint(s) != _EMPTY for s in ["", "a", "\udcff"])
    assert len({fingerprint(s) for s in ["a", "b", "ab", "a\x00"]}) == 4
