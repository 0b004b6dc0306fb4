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
too; :func:`merged_into_file` is the one merge behind both.  Its values (a number per
digest) go to a file with its packed digests (:class:`ColdNumbers`: each read with one
``pread``; the file written anew with the changes, never changed in place).
"""

from __future__ import annotations

import sys
from array import array
from collections.abc import Callable, Iterable, Iterator
from typing import IO, Any

from recompile_doctor.read_at import read_at
from recompile_doctor.timeline.blobs import Blob, Blobs
from recompile_doctor.timeline.packed_keys import PackedKeys, Pairs, bucket_of, positions

#: the share of the keys in the file a table holds open before it merges them into it
#: (each merge writes the file anew: a key is copied about 1 / COLD_SHARE times in all,
#: where a fixed number held open would copy each once per merge)
COLD_SHARE = 1 / 32
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


#: numbers of the file changed (kept in memory) before the file is written anew with them
CHANGED_MAX = 65_536
#: bytes read back at a time when the file is written anew or copied
_COPY = 1 << 20


class ColdNumbers:
    """Numbers of one type code, indexed and appended to as an array: those :meth:`freeze`
    put in a temporary file are read there (one ``pread``), the later ones held in memory.
    The file is never changed (a forked process may read it): a number of it set anew is
    held in memory, and the file is written anew with those changes, a chunk at a time,
    when they are :data:`CHANGED_MAX` or at the next :meth:`freeze`.  A copy pickled for
    another process is a plain array of them all."""

    __slots__ = ("_blobs", "_changed", "_cold", "_file", "_hot", "_size", "typecode")

    def __init__(self, typecode: str, numbers: Iterable[int] = ()) -> None:
        self.typecode = typecode
        self._hot: array[int] = array(typecode, numbers)  # (the numbers from _cold on)
        self._size = self._hot.itemsize
        self._cold = 0  # (the numbers in the file)
        self._blobs: Blobs | None = None  # (the file, written from its start)
        self._file: IO[bytes] | None = None
        self._changed: dict[int, int] = {}  # (numbers of the file set anew)

    def __len__(self) -> int:
        return self._cold + len(self._hot)

    def append(self, v: int) -> None:
        self._hot.append(v)

    def __getitem__(self, i: int) -> int:
        cold = self._cold
        if i >= cold:
            return self._hot[i - cold]
        if i < 0:
            raise IndexError("number index out of range")
        got = self._changed.get(i)
        if got is not None:
            return got
        assert self._file is not None
        one = array(self.typecode)
        one.frombytes(read_at(self._file, self._size, self._size * i))
        return one[0]

    def __setitem__(self, i: int, v: int) -> None:
        cold = self._cold
        if i >= cold:
            self._hot[i - cold] = v
            return
        if i < 0:
            raise IndexError("number assignment index out of range")
        array(self.typecode, [v])  # (a number the array would refuse is refused)
        self._changed[i] = v
        if len(self._changed) >= CHANGED_MAX:
            self._written_anew(False)

    def freeze(self) -> None:
        """Put the numbers held in memory in the file (after those there)."""
        if self._hot or self._changed:
            self._written_anew(True)

    def _read_back(self) -> Iterator[array[int]]:
        """The file's numbers, as they are there, a chunk of :data:`_COPY` bytes at a time."""
        end = self._size * self._cold
        for at in range(0, end, _COPY):
            assert self._file is not None
            chunk = array(self.typecode)
            chunk.frombytes(read_at(self._file, min(_COPY, end - at), at))
            yield chunk

    def _written_anew(self, hot: bool) -> None:
        """The file written anew with the changed numbers (and, ``hot``, those held in
        memory after them); the old one closed (a forked process's copy of it stays)."""
        changed = sorted(self._changed.items())
        blobs = Blobs("recompile-doctor-values-")
        written: list[Blob] = []  # (each after the last: number i at size * i)
        try:
            first = k = 0
            for chunk in self._read_back():
                end = first + len(chunk)
                while k < len(changed) and changed[k][0] < end:
                    chunk[changed[k][0] - first] = changed[k][1]
                    k += 1
                written.append(blobs.put(chunk.tobytes()))
                first = end
            if hot:
                written.append(blobs.put(self._hot.tobytes()))
        except BaseException:
            blobs.close()
            raise
        self.close()
        self._blobs = blobs
        self._file = written[0][0] if written else None
        self._changed = {}
        if hot:
            self._cold += len(self._hot)
            self._hot = array(self.typecode)

    def close(self) -> None:
        """Remove the file now (the numbers in it are lost)."""
        if self._blobs is not None:
            self._blobs.close()
            self._blobs = self._file = None

    def __reduce__(self) -> tuple[Any, ...]:
        # (a copy for another process holds them all in memory: the file is this one's)
        plain = array(self.typecode)
        for chunk in self._read_back():
            plain.extend(chunk)
        for i, v in self._changed.items():
            plain[i] = v
        plain.extend(self._hot)
        return (array, (self.typecode, plain))
