"""Packed keys kept in a temporary file, and a filter in memory that rules out most keys never
put in, so that the file is read only for keys likely there.

A table that only grows (:class:`~recompile_doctor.timeline.compile_ids.IdIndex`: a compile
id per compilation) holds 8 bytes a key packed (:class:`~.packed_keys.PackedKeys`): 42 MB
for the 4.2 million compilations of a 32 GB TensorFlow log.  Its packed parts can go to a
file (:class:`ColdParts`: each bucket's keys read back with one ``pread`` when asked), with
a :class:`KeyFilter` in memory (1.5 to 3 bytes a key) answering the many lookups of keys
never put in (each new compilation looks its id up first) without reading the file.  The
TensorFlow decoder's count per cluster
(:class:`~recompile_doctor.parsers._digest_table.DigestTable`) keeps its packed digests so
too; :func:`merged_into_file` is the one merge behind both.
"""

from __future__ import annotations

import sys
from array import array
from collections.abc import Callable, Iterable

from recompile_doctor.read_at import read_at
from recompile_doctor.timeline.blobs import Blob, Blobs
from recompile_doctor.timeline.packed_keys import PackedKeys, Pairs, bucket_of, positions

#: the filter's bits per key it is made for (3 bits set per key in one 64-bit word: about 2
#: in 100 keys never added pass)
BITS_PER_KEY = 12
_M32 = 0xFFFFFFFF
#: an odd multiplier that spreads a 32-bit number's bits over the high ones, which choose
#: its word (its three bits are its own low bits: a number is a hash already)
_MIX = 0x9E3779B1


class KeyFilter:
    """A blocked Bloom filter of 32-bit numbers (keys' hashes): ``h in f`` is False for
    every number never added, and for most others."""

    __slots__ = ("_n", "_words", "capacity")

    def __init__(self, capacity: int) -> None:
        #: the keys it is made for (more fill it up: make a bigger one from the keys)
        self.capacity = capacity
        self._n = max(1, (capacity * BITS_PER_KEY + 63) // 64)
        self._words = array("Q", bytes(8 * self._n))
        assert self._words.itemsize == 8

    def add(self, h: int) -> None:
        i = ((h * _MIX) & _M32) * self._n >> 32
        self._words[i] |= (1 << (h & 63)) | (1 << ((h >> 6) & 63)) | (1 << ((h >> 12) & 63))

    def __contains__(self, h: int) -> bool:
        i = ((h * _MIX) & _M32) * self._n >> 32
        m = (1 << (h & 63)) | (1 << ((h >> 6) & 63)) | (1 << ((h >> 12) & 63))
        return self._words[i] & m == m

    def add_keys(self, keys: bytes | bytearray, width: int = 4, at: int = 0) -> None:
        """Add the number in bytes ``at`` to ``at + 4`` (little-endian) of each ``width``-byte
        key of ``keys`` (a packed part's; ``at`` and ``width``: multiples of 4)."""
        numbers = array("I")
        assert numbers.itemsize == 4
        numbers.frombytes(keys)
        if sys.byteorder == "big":
            numbers.byteswap()
        for h in numbers[at // 4 :: width // 4]:
            self.add(h)


class ColdParts:
    """Packed parts (of one width) in a temporary file of their own: each part's bucket
    starts in memory (16 kB), its keys and numbers in the file."""

    __slots__ = ("_blobs", "_parts", "width")

    def __init__(self, width: int) -> None:
        self.width = width
        self._blobs = Blobs("recompile-doctor-keys-")
        #: per part: its bucket starts, where its keys are, where its numbers are
        self._parts: list[tuple[array[int], Blob | None, Blob | None]] = []

    def __len__(self) -> int:
        return len(self._parts)

    def append(self, part: PackedKeys) -> None:
        """Write ``part`` (the next one) to the file."""
        assert part.width == self.width
        blobs = self._blobs
        if len(part):
            keys: Blob | None = blobs.put(bytes(part.keys))
            numbers: Blob | None = blobs.put(part.numbers.tobytes())
        else:
            keys = numbers = None
        self._parts.append((part.starts, keys, numbers))

    def part(self, k: int) -> PackedKeys:
        """Part ``k`` read back whole (to be merged)."""
        starts, keys, numbers = self._parts[k]
        if keys is None or numbers is None:
            return PackedKeys(self.width, starts=starts)
        got = array("I")
        got.frombytes(Blobs.get(numbers))
        return PackedKeys(self.width, Blobs.get(keys), got, starts)

    def find_all(self, k: int, key: bytes) -> list[int]:
        """The numbers of ``key`` in part ``k`` (as :meth:`PackedKeys.find_all`): its
        bucket's keys read, and the number of each one found."""
        starts, keys, numbers = self._parts[k]
        if keys is None or numbers is None:
            return []
        b = bucket_of(key)
        lo, hi = starts[b], starts[b + 1]
        if hi == lo:
            return []
        w = self.width
        f, at, _ = keys
        found = positions(read_at(f, w * (hi - lo), at + w * lo), key, 0, w * (hi - lo), w)
        nf, nat, _ = numbers
        return [int.from_bytes(read_at(nf, 4, nat + 4 * (lo + p)), sys.byteorder) for p in found]

    def close(self) -> None:
        """Remove the file now."""
        self._blobs.close()


def still_fits(kept: KeyFilter | None, count: int) -> KeyFilter | None:
    """``kept``, if it is made for ``count`` keys or more (else None: the caller lets it go
    before :func:`merged_into_file` makes a bigger one)."""
    return kept if kept is not None and count <= kept.capacity else None


def merged_into_file(
    old: Callable[[int], PackedKeys],
    new: Iterable[tuple[Pairs, Iterable[int]]],
    count: int,
    kept: KeyFilter | None,
    at: int = 0,
    base: int = 0,
) -> tuple[ColdParts, KeyFilter]:
    """Packed parts merged with new keys, into a new file, and their filter: part ``k`` as
    it was is ``old(k)`` (read back from the old file, or let go from memory), ``new``
    gives each part's new (key, number) pairs (numbers plus ``base``) and their numbers
    for the filter (at ``at`` in each key); ``count`` keys in all.  The filter ``kept``
    takes the new ones while the keys fit it; else one twice as big is made of them all.
    The old file is the caller's to close."""
    kept = still_fits(kept, count)
    rebuilt = kept is None
    filter_ = KeyFilter(2 * count) if kept is None else kept
    out: ColdParts | None = None
    try:
        for k, (pairs, numbers) in enumerate(new):
            got = old(k).merged(pairs, base)
            if out is None:
                out = ColdParts(got.width)
            if rebuilt:
                filter_.add_keys(got.keys, got.width, at)
            else:
                for h in numbers:
                    filter_.add(h)
            out.append(got)
            del got
    except BaseException:
        if out is not None:
            out.close()
        raise
    assert out is not None
    return out, filter_
