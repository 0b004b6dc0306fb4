"""Packed keys kept in a temporary file, and a filter in memory that rules out most keys never
put in, so that the file is read only for keys likely there.

A table that only grows (:class:`~recompile_doctor.timeline.compile_ids.IdIndex`: a compile
id per compilation) holds 8 bytes a key packed (:class:`~.packed_keys.PackedKeys`): 42 MB
for the 4.2 million compilations of a 32 GB TensorFlow log.  Its packed parts can go to a
file (:class:`ColdParts`: each bucket's keys read back with one ``pread`` when asked), with
a :class:`KeyFilter` in memory (1.5 to 3 bytes a key) answering the many lookups of keys
never put in (each new compilation looks its id up first) without reading the file.
"""

from __future__ import annotations

import sys
from array import array

from recompile_doctor.read_at import read_at
from recompile_doctor.timeline.blobs import Blob, Blobs
from recompile_doctor.timeline.packed_keys import PackedKeys, bucket_of, positions

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

    def add_keys(self, keys: bytes | bytearray) -> None:
        """Add each 4-byte key of ``keys`` (a packed part's), read as a little-endian number."""
        numbers = array("I")
        assert numbers.itemsize == 4
        numbers.frombytes(keys)
        if sys.byteorder == "big":
            numbers.byteswap()
        for h in numbers:
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
