"""PackedKeys: keys merged in as they come are found as a dictionary of lists finds them."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from recompile_doctor.timeline.packed_keys import PackedKeys

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
