"""A dictionary keyed by name digests, in 60 % of a ``dict``'s memory.

A decoder that counts what it saw per name keys its table by the name's 128-bit digest
(:func:`~recompile_doctor.name_digest.name_number`): a ``dict`` of them costs 96 bytes an
entry (the digest as a Python number, 48; the entry and its slot in the table, the rest),
and a TensorFlow log of a new cluster per compilation makes one entry per compilation: 36 MB
held by the parent reading an 8 GB log, about 74 at 16 GB.  :class:`DigestTable` keeps the
digests in a :class:`~recompile_doctor.timeline.distinct.NameIndex` (16 bytes a slot and 4
for the entry's number, one to two thirds full, in sixteen tables that grow one at a time)
and the values in an array by number: 57 bytes an entry (measured with 100,000 to 820,000
of them).

It is a mapping like any other to the parallel reading's checkpoints (compared, looked up,
iterated as a ``dict`` is, :mod:`._checkpoint`); a worker watches its lookups through a
recording table of this class (``_checkpoint._MissDigests``), as through a recording
``dict`` for a plain one.  A value that is not a small
non-negative integer (or not of type ``int`` itself) is kept in a side dictionary.

A table that is only looked up from some point on may be :meth:`~DigestTable.pack`-ed:
its digests grouped into buffers by their first bytes, 25 bytes an entry in all, found
faster than in the open tables.  The parent of a parallel reading holds its own part's
table so while it takes over a worker's events (it checks their misses against it): the
742,921 clusters of the 16 GB TensorFlow bench log's parent took 45.5 MB, 18.6 packed (2
seconds to pack).  A write unpacks it first (about as long as it took to fill).
"""

from __future__ import annotations

from array import array
from collections.abc import ItemsView, Iterator, KeysView, MutableMapping, ValuesView

from recompile_doctor.name_digest import WIDTH
from recompile_doctor.timeline.distinct import SHARDS, NameIndex, Numbered, fingerprint_of_digest

#: the fewest entries a table packs (fewer take little memory in any form)
PACK_FROM = 4_096

#: the largest value stored in the array (as value + 1: 0 there is "no value")
_SMALL = (1 << 32) - 2


class DigestTable(MutableMapping[int, int]):
    """A mapping from name digests (``int``, below 2**128) to integers."""

    __slots__ = ("_index", "_len", "_other", "_values")

    def __init__(self) -> None:
        self._index: NameIndex | _Packed = NameIndex()
        #: per number: its value + 1 while a small integer, 0 when there is none (deleted,
        #: or in _other)
        self._values = array("I")
        self._other: dict[int, int] = {}  # number -> any other value (negative, huge)
        self._len = 0

    def _find(self, key: object) -> int | None:
        """The number of ``key``'s digest, if it was ever stored."""
        d = _digest(key)
        return None if d is None else self._index.find_fingerprint(d)

    def _has(self, n: int) -> bool:
        return bool(self._values[n]) or n in self._other

    def __len__(self) -> int:
        return self._len

    def __contains__(self, key: object) -> bool:
        n = self._find(key)
        return n is not None and self._has(n)

    def __getitem__(self, key: int) -> int:
        return self._get(key)

    def _get(self, key: object) -> int:
        """``key``'s value, read without any override of the lookups (the item view's
        ``in`` reads through it, as :meth:`keys`, :meth:`items` and :meth:`values` read
        through :meth:`_items`: a subclass that watches lookups does not see them)."""
        n = self._find(key)
        if n is not None:
            v = self._values[n]
            if v:
                return v - 1
            if n in self._other:
                return self._other[n]
        raise KeyError(key)

    def __setitem__(self, key: int, value: int) -> None:
        d = _digest(key)
        if d is None:
            raise TypeError(f"not a name digest: {key!r}")
        index = self._index
        if isinstance(index, _Packed):
            index = self._index = index.unpacked()
        n = index.number_fingerprint(d)
        values = self._values
        if n == len(values):
            values.append(0)
        elif self._has(n):
            self._len -= 1
        self._other.pop(n, None)
        if type(value) is int and 0 <= value <= _SMALL:
            values[n] = value + 1
        else:
            values[n] = 0
            self._other[n] = value
        self._len += 1

    def __delitem__(self, key: int) -> None:
        n = self._find(key)
        if n is None or not self._has(n):
            raise KeyError(key)
        self._values[n] = 0
        self._other.pop(n, None)
        self._len -= 1

    def __iter__(self) -> Iterator[int]:
        """The keys, in no order of their own (a table this is in is only looked up)."""
        for k, _ in self._items():
            yield k

    def keys(self) -> KeysView[int]:
        return _Keys(self)

    def items(self) -> ItemsView[int, int]:
        return _Items(self)

    def values(self) -> ValuesView[int]:
        return _Values(self)

    def _items(self) -> Iterator[tuple[int, int]]:
        """(key, value) of each entry, in no order of their own."""
        for d, n in self._index.numbered():
            v = self._values[n]
            if v:
                yield _key_of(d), v - 1
            elif n in self._other:
                yield _key_of(d), self._other[n]

    def pack(self) -> None:
        """Hold the digests of :data:`PACK_FROM` or more entries packed, for lookups (a
        write unpacks them first: a few seconds for a million)."""
        index = self._index
        if type(index) is NameIndex and len(index) >= PACK_FROM:
            self._index = _Packed(index)

    def packed(self) -> bool:
        """Whether the digests are held packed (:meth:`pack`)."""
        return type(self._index) is _Packed

    def plain(self) -> DigestTable:
        """A table of the same entries, of this class (not a subclass's): to be pickled."""
        out = DigestTable()
        for k, v in self._items():
            DigestTable.__setitem__(out, k, v)
        return out

    def clear(self) -> None:
        self._index = NameIndex()
        self._values = array("I")
        self._other = {}
        self._len = 0

    def __repr__(self) -> str:
        return f"DigestTable({dict(self.items())!r})"


class _Packed:
    """A :class:`NameIndex`'s fingerprints and numbers packed, in one part per table of the
    index (each made as that table is let go: the two forms are never held whole at
    once), found by the same byte of the fingerprint as there (:data:`SHARDS`)."""

    __slots__ = ("_count", "_parts")

    def __init__(self, index: NameIndex) -> None:
        self._count = len(index)
        self._parts = [_Part(pairs) for pairs in index.release()]

    def __len__(self) -> int:
        return self._count

    def find_fingerprint(self, d: bytes) -> int | None:
        """The number of fingerprint ``d``; None: it is not held."""
        return self._parts[d[-1] & (SHARDS - 1)].find(d)

    def numbered(self) -> Iterator[tuple[bytes, int]]:
        """(fingerprint, number) of each, in no order of their own."""
        for part in self._parts:
            yield from part.numbered()

    def unpacked(self) -> NameIndex:
        """A :class:`NameIndex` of the same fingerprints under the same numbers."""
        where = array("Q", bytes(8 * self._count))  # (part << 32 | place, by number)
        for k, part in enumerate(self._parts):
            for p, number in enumerate(part.numbers):
                where[number] = k << 32 | p
        index = NameIndex()
        parts = self._parts
        for at in where:  # (in the order of their numbers: each gets its own again)
            index.number_fingerprint(parts[at >> 32].fingerprint(at & 0xFFFFFFFF))
        return index


class _Part:
    """Fingerprints and their numbers (16 + 4 bytes each) in one buffer, grouped by
    bucket: the leading bits of a fingerprint's first four bytes (uniform: BLAKE2), about
    :data:`_PER_BUCKET` a bucket; a fingerprint is found by ``bytes.find`` in its bucket's
    few (4 bytes a bucket for where it starts)."""

    __slots__ = ("fps", "numbers", "shift", "starts")

    def __init__(self, pairs: Numbered) -> None:
        n = len(pairs)
        bits = min(24, max(1, (n // _PER_BUCKET).bit_length()))
        self.shift = shift = 32 - bits
        starts = array("I", bytes(4 * ((1 << bits) + 1)))
        for d, _ in pairs:  # (how many in each bucket, counted at the next one)
            starts[(int.from_bytes(d[:4], "big") >> shift) + 1] += 1
        for b in range(1, len(starts)):
            starts[b] += starts[b - 1]
        self.fps = fps = bytearray(WIDTH * n)
        self.numbers = numbers = array("I", bytes(4 * n))
        fill = starts[:-1]
        for d, number in pairs:
            b = int.from_bytes(d[:4], "big") >> shift
            p = fill[b]
            fill[b] = p + 1
            fps[WIDTH * p : WIDTH * (p + 1)] = d
            numbers[p] = number
        self.starts = starts

    def find(self, d: bytes) -> int | None:
        b = int.from_bytes(d[:4], "big") >> self.shift
        lo, hi = WIDTH * self.starts[b], WIDTH * self.starts[b + 1]
        fps = self.fps
        at = fps.find(d, lo, hi)
        while at >= 0 and (at - lo) % WIDTH:  # (found across two fingerprints: on)
            at = fps.find(d, at + 1, hi)
        return None if at < 0 else self.numbers[at // WIDTH]

    def fingerprint(self, p: int) -> bytes:
        return bytes(self.fps[WIDTH * p : WIDTH * (p + 1)])

    def numbered(self) -> Iterator[tuple[bytes, int]]:
        fps = memoryview(self.fps)
        for p, number in enumerate(self.numbers):
            yield bytes(fps[WIDTH * p : WIDTH * (p + 1)]), number


#: entries a packed table's bucket holds on average, at most (a bucket is found by
#: arithmetic, and searched by ``bytes.find``)
_PER_BUCKET = 8


class _Items(ItemsView[int, int]):
    """A table's items, read without its lookups (see :meth:`DigestTable._get`)."""

    _mapping: DigestTable

    def __iter__(self) -> Iterator[tuple[int, int]]:
        return self._mapping._items()

    def __contains__(self, item: object) -> bool:
        if not (isinstance(item, tuple) and len(item) == 2):
            return False
        try:
            return bool(self._mapping._get(item[0]) == item[1])
        except KeyError:
            return False


class _Keys(KeysView[int]):
    """A table's keys, looked up without its lookups."""

    _mapping: DigestTable

    def __contains__(self, key: object) -> bool:
        return DigestTable.__contains__(self._mapping, key)


class _Values(ValuesView[int]):
    """A table's values, read without its lookups."""

    _mapping: DigestTable

    def __iter__(self) -> Iterator[int]:
        return (v for _, v in self._mapping._items())


_EMPTY = bytes(WIDTH)


def _digest(key: object) -> bytes | None:
    """The fingerprint stored for digest ``key`` (None: not a digest).  A key equal to an
    integer is looked up as that integer, as a ``dict`` finds ``1`` by ``1.0`` or ``True``."""
    if type(key) is not int:
        if isinstance(key, int) or (isinstance(key, float) and key.is_integer()):
            key = int(key)
        else:
            return None
    if not 0 <= key < 1 << (8 * WIDTH):
        return None
    return fingerprint_of_digest(key.to_bytes(WIDTH, "little"))


def _key_of(d: bytes) -> int:
    """The digest whose fingerprint is ``d``."""
    return int.from_bytes(d if d != _FULL_ZERO else _EMPTY, "little")


_FULL_ZERO = fingerprint_of_digest(_EMPTY)
