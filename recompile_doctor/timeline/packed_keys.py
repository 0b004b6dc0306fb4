"""Fixed-width keys with a 4-byte number each, packed: the key's bytes and 4 more each, and
16 kB a table, where an open-addressed table one to two thirds full takes 1.5 to 3 times
as much.

A :class:`PackedKeys` holds its keys in one buffer grouped into :data:`BUCKETS` buckets by
their leading bits (keys whose leading bits are uniform: digests, hashes), and their
numbers in an array beside; a key is found by ``bytes.find`` in its bucket's few.  The
buckets are as many whatever the size, so that new keys are merged in (:meth:`merged`)
bucket by bucket: the old keys between two buckets given new ones copied as one slice, the
new keys put after them in two passes, with no object made for each.  A table that only
grows holds most of its keys so, the newest in an open table merged in when it holds a
share of them
(:class:`~recompile_doctor.parsers._digest_table.DigestTable`,
:class:`~recompile_doctor.timeline.compile_ids.IdIndex`).
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Iterator, Sized
from itertools import accumulate, compress, islice
from operator import add
from typing import Protocol

#: the bits of a key's first four bytes that choose its bucket (4,096 buckets: a million
#: keys put about 244 in each, sixteen in each of sixteen tables')
BUCKET_BITS = 12
BUCKETS = 1 << BUCKET_BITS
_SHIFT = 32 - BUCKET_BITS
#: the share of its packed keys a table's open one holds before it is merged into them
MERGE_SHARE = 1 / 8


def open_size(packed: int, pack_from: int, share: float = MERGE_SHARE) -> int:
    """How many keys a table holds open before they are merged into its ``packed`` ones
    (``pack_from``: the most it holds open while it has few; ``share``: of the packed
    ones, past that)."""
    return max(pack_from, int(packed * share))


def bucket_of(key: bytes) -> int:
    """The bucket of ``key`` (by its leading bits)."""
    return int.from_bytes(key[:4], "big") >> _SHIFT


def positions(keys: bytes | bytearray, key: bytes, lo: int, hi: int, w: int) -> list[int]:
    """Where ``key`` is among the ``w``-byte keys of ``keys[lo:hi]`` (counted in keys from
    ``lo``): found by ``bytes.find``, each on a key's boundary."""
    found = []
    at = keys.find(key, lo, hi)
    while at >= 0:
        if not (at - lo) % w:  # (else found across two keys)
            found.append((at - lo) // w)
        at = keys.find(key, at + 1, hi)
    return found


class Pairs(Sized, Iterable[tuple[bytes, int]], Protocol):
    """(key, number) pairs that can be read more than once, and counted."""


class PackedKeys:
    """Keys of ``width`` bytes (at least 4) with a number each, grouped by bucket."""

    __slots__ = ("keys", "numbers", "starts", "width")

    def __init__(
        self,
        width: int,
        keys: bytes | bytearray = b"",
        numbers: array[int] | None = None,
        starts: array[int] | None = None,
    ) -> None:
        self.width = width
        self.keys = keys
        self.numbers = array("I") if numbers is None else numbers
        #: where each bucket's keys begin (counted in keys), and the end
        self.starts = array("I", bytes(4 * (BUCKETS + 1))) if starts is None else starts

    def __len__(self) -> int:
        return len(self.numbers)

    def find(self, key: bytes) -> int | None:
        """The number of ``key`` (one of them, if it was put in more than once)."""
        b = int.from_bytes(key[:4], "big") >> _SHIFT
        w = self.width
        lo, hi = w * self.starts[b], w * self.starts[b + 1]
        keys = self.keys
        at = keys.find(key, lo, hi)
        while at >= 0 and (at - lo) % w:  # (found across two keys: on)
            at = keys.find(key, at + 1, hi)
        return None if at < 0 else self.numbers[at // w]

    def find_all(self, key: bytes) -> list[int]:
        """The numbers of ``key``, each time it was put in (in no order of their own)."""
        b = bucket_of(key)
        lo = self.starts[b]
        w = self.width
        numbers = self.numbers
        found = positions(self.keys, key, w * lo, w * self.starts[b + 1], w)
        return [numbers[lo + p] for p in found]

    def numbered(self) -> Iterator[tuple[bytes, int]]:
        """(key, number) of each, in no order of their own."""
        keys, w = memoryview(self.keys), self.width
        for p, number in enumerate(self.numbers):
            yield bytes(keys[w * p : w * (p + 1)]), number

    def merged(self, pairs: Pairs, base: int = 0) -> PackedKeys:
        """These keys and ``pairs`` (their numbers plus ``base``), in their buckets: the old
        ones first in each, as they were.  The old keys between two buckets given new ones
        are copied as one slice, and the buckets' starts are summed in C: a merge of a few
        pairs costs a few steps, not one for each of the :data:`BUCKETS`."""
        if not len(pairs):
            return self
        starts, keys, numbers, w = self.starts, memoryview(self.keys), self.numbers, self.width
        fill = [0] * (BUCKETS + 1)
        for k, _ in pairs:  # (how many new in each bucket, counted at the next one)
            fill[(int.from_bytes(k[:4], "big") >> _SHIFT) + 1] += 1
        given = list(compress(range(BUCKETS), islice(fill, 1, None)))  # (buckets given some)
        before = list(accumulate(fill))  # (how many new ones go before each bucket)
        out_starts = array("I", map(add, starts, before))
        total = len(numbers) + len(pairs)
        out_keys = bytearray(w * total)
        out_numbers = array("I", bytes(4 * total))
        first = 0  # (the first bucket of the old keys not copied yet)
        for b in [*given, BUCKETS]:
            lo, hi = starts[first], starts[min(b + 1, BUCKETS)]
            at = lo + before[first]
            if hi > lo:
                out_keys[w * at : w * (at + hi - lo)] = keys[w * lo : w * hi]
                out_numbers[at : at + hi - lo] = numbers[lo:hi]
            fill[b] = at + hi - lo  # (where its next new one goes)
            first = b + 1
        for k, n in pairs:
            b = int.from_bytes(k[:4], "big") >> _SHIFT
            p = fill[b]
            fill[b] = p + 1
            out_keys[w * p : w * (p + 1)] = k
            out_numbers[p] = n + base
        return PackedKeys(w, out_keys, out_numbers, out_starts)
