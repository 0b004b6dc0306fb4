"""Which compilations a framework's compile id names, in about 10 bytes a compilation (12
to 24 while there are fewer than 65,536).

A dictionary from each id string to its row kept the id (a new string per compilation: a
TensorFlow log names each cluster's compilations ``<cluster>#<n>``), an integer object for
the row and the dictionary's slot: about 140 bytes, 37 MB for the 263,000 compilations of a
2 GB log, while the table's columns had gone to their file.  :class:`IdIndex` keeps 32 bits
of each id's hash (its slot is taken from them, the rest tell most ids of one slot apart)
and its row, in two arrays of 4-byte numbers (open addressing, at most two thirds full), and
tells ids of one hash apart by asking for the row's own id (its key, in the table).  Past
:data:`PACK_FROM` ids, most of them are packed (see :class:`IdIndex`).
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterator

from recompile_doctor.timeline.packed_keys import PackedKeys, open_size

#: an empty slot's row (rows are compilation ids: fewer than 2**32 - 1)
_EMPTY = 0xFFFFFFFF
#: an id's hash (a test makes ids collide)
_hash: Callable[[str], int] = hash


def _slots(n: int, fill: int) -> array[int]:
    got = array("I", [fill]) * n
    assert got.itemsize == 4  # (4 bytes wherever CPython runs)
    return got


class IdIndex:
    """Compile id -> the rows (compilation ids) given it, in the order given.  ``id_of``
    reads a row's own compile id (to tell apart ids of one hash).

    The ids are spread over :data:`PARTS` tables by the top bits of their hash, each
    doubled on its own when it fills: one table growing held its old slots and its new
    ones at once, 48 MB for the 2.1 million compilations of a 16 GB TensorFlow log, where
    one of sixteen holds a sixteenth of that.  From :data:`PACK_FROM` ids on, those tables
    are merged into packed ones (:class:`~recompile_doctor.timeline.packed_keys.PackedKeys`:
    8 bytes an id) whenever they hold an eighth as many: the 4.2 million compilations of a
    32 GB log took 64 MB in open tables alone."""

    __slots__ = ("_id_of", "_packed", "_packed_count", "_parts", "_used")

    def __init__(self, id_of: Callable[[int], str | None]) -> None:
        self._id_of = id_of
        self._parts = [_Part() for _ in range(PARTS)]
        self._packed: list[PackedKeys] | None = None
        self._packed_count = 0
        self._used = 0

    def __len__(self) -> int:
        return self._used

    def add(self, ident: str, row: int) -> None:
        """Row ``row`` is given the id ``ident`` (rows come in increasing order)."""
        h = _hash(ident) & 0xFFFFFFFF
        self._parts[h >> _PART_SHIFT].add(h, row)
        self._used += 1
        if self._used - self._packed_count >= open_size(self._packed_count, PACK_FROM):
            self._merge()

    def rows(self, ident: str) -> list[int]:
        """The rows given ``ident``, the last first."""
        h = _hash(ident) & 0xFFFFFFFF
        k = h >> _PART_SHIFT
        part = self._parts[k]
        hashes, rows, mask = part.hashes, part.rows, part.mask
        i = h & mask
        found: list[int] = []
        while (row := rows[i]) != _EMPTY:
            if hashes[i] == h and self._id_of(row) == ident:
                found.append(row)
            i = (i + 1) & mask
        packed = self._packed
        if packed is not None:
            found.extend(row for row in packed[k].find_all(_key(h)) if self._id_of(row) == ident)
        found.sort(reverse=True)
        return found

    def slots(self) -> int:
        """The slots of all its open tables (at most two thirds of each are used)."""
        return sum(part.mask + 1 for part in self._parts)

    def _merge(self) -> None:
        """The open tables' ids into the packed ones, each let go as its part is made."""
        packed = self._packed or [PackedKeys(4) for _ in range(PARTS)]
        self._packed = None  # (each part let go as the new one is made)
        size = open_size(self._used, PACK_FROM)
        slots = 16
        while 3 * size > 2 * PARTS * (slots - 1):  # (made to size for the next ones)
            slots *= 2
        for k, part in enumerate(self._parts):
            self._parts[k] = _Part(slots)
            packed[k] = packed[k].merged(_Ids(part))
            del part
        self._packed = packed
        self._packed_count = self._used


#: tables per index (a power of two), chosen by the top bits of an id's 32-bit hash (its
#: slot by the low ones)
PARTS = 16
_PART_SHIFT = 32 - (PARTS.bit_length() - 1)
#: the ids an index holds in open tables before it packs any
PACK_FROM = 65_536


def _key(h: int) -> bytes:
    """An id's hash as a packed key: its bytes little-end first, so that the leading bits
    (those that choose its bucket) are not those that chose its table."""
    return h.to_bytes(4, "little")


class _Part:
    """One open-addressed table of an :class:`IdIndex`: each id's hash (its low 32 bits)
    and row, in two arrays of 4-byte numbers (linear probing)."""

    __slots__ = ("hashes", "mask", "rows", "used")

    def __init__(self, slots: int = 16) -> None:
        self.mask = slots - 1  # slots - 1 (a power of two, at most 2**32)
        self.hashes = _slots(slots, 0)
        self.rows = _slots(slots, _EMPTY)
        self.used = 0

    def add(self, h: int, row: int) -> None:
        self._put(h, row)
        self.used += 1
        if 3 * self.used > 2 * self.mask and self.mask < 0xFFFFFFFF:
            self._grow()

    def _put(self, h: int, row: int) -> None:
        rows, mask = self.rows, self.mask
        i = h & mask
        while rows[i] != _EMPTY:
            i = (i + 1) & mask
        self.hashes[i] = h
        rows[i] = row

    def _grow(self) -> None:
        old = zip(self.hashes, self.rows, strict=True)
        self.mask = 2 * self.mask + 1
        self.hashes = _slots(self.mask + 1, 0)
        self.rows = _slots(self.mask + 1, _EMPTY)
        for h, row in old:
            if row != _EMPTY:
                self._put(h, row)


class _Ids:
    """The (packed key, row) pairs of an open table, to be read as often as wanted."""

    __slots__ = ("_part",)

    def __init__(self, part: _Part) -> None:
        self._part = part

    def __len__(self) -> int:
        return self._part.used

    def __iter__(self) -> Iterator[tuple[bytes, int]]:
        for h, row in zip(self._part.hashes, self._part.rows, strict=True):
            if row != _EMPTY:
                yield h.to_bytes(4, "little"), row  # (_key, inlined)
