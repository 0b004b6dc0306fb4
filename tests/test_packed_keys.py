"""PackedKeys: keys merged in as they come are found as a dictionary of lists finds them."""

from __future__ import annotations

from itertools import accumulate

from hypothesis import given
from hypothesis import strategies as st

from recompile_doctor.timeline.packed_keys import BUCKETS, PackedKeys, bucket_of

# (few distinct bytes: keys that share buckets, and keys made of the end of one and the
# start of the next)
_KEY = st.binary(min_size=4, max_size=4).map(lambda b: bytes(x & 0x11 for x in b))


@given(st.lists(st.lists(_KEY, max_size=12), max_size=5), st.lists(_KEY, max_size=10))
def test_packed_keys_find_what_was_merged_in(
    batches: list[list[bytes]], asked: list[bytes]
) -> None:
    # GIVEN keys merged in a batch at a time (a key again: numbered again), numbered in turn
    packed = PackedKeys(4)
    reference: dict[bytes, list[int]] = {}
    n = 0
    for batch in batches:
        pairs = list(enumerate(batch))
        packed = packed.merged([(k, i) for i, k in pairs], base=n)
        for i, k in pairs:
            reference.setdefault(k, []).append(n + i)
        n += len(batch)
    # THEN each key gives every number it was given, and the first of them; others none
    assert len(packed) == n
    for key in [*reference, *asked]:
        want = reference.get(key, [])
        assert sorted(packed.find_all(key)) == want
        assert (packed.find(key) is None) == (not want)
        if want:
            assert packed.find(key) in want
    assert sorted(packed.numbered()) == sorted((k, i) for k, ns in reference.items() for i in ns)


# (keys spread over the buckets, or crowded into a few of them, the first and last among them)
_SPREAD_KEY = st.one_of(
    st.binary(min_size=6, max_size=6),
    st.sampled_from([b"\x00" * 6, b"\xff" * 6, b"\x00\x00\x0f\xff\xff\xff", b"\x80" + b"\x00" * 5]),
)


@given(st.lists(st.lists(_SPREAD_KEY, max_size=40), max_size=6))
def test_a_merge_lays_the_keys_out_as_bucket_by_bucket(batches: list[list[bytes]]) -> None:
    # GIVEN keys merged in a batch at a time, WHEN each merge is done, THEN every key, number
    # and bucket start is where a merge bucket by bucket puts it: each bucket's old keys as
    # they were, then its new ones in the order given
    packed = PackedKeys(6)
    held: list[list[tuple[bytes, int]]] = [[] for _ in range(BUCKETS)]
    n = 0
    for batch in batches:
        packed = packed.merged([(k, i) for i, k in enumerate(batch)], base=n)
        for i, k in enumerate(batch):
            held[bucket_of(k)].append((k, n + i))
        n += len(batch)
        rows = [pair for bucket in held for pair in bucket]
        assert bytes(packed.keys) == b"".join(k for k, _ in rows)
        assert list(packed.numbers) == [number for _, number in rows]
        assert list(packed.starts) == [0, *accumulate(len(bucket) for bucket in held)]
