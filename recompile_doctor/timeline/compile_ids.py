"""Which compilations a framework's compile id names, in about 10 bytes a compilation (12
to 24 while there are fewer than 65,536).

A dictionary from each id string to its row kept the id (a new string per compilation: a
TensorFlow log names each cluster's compilations ``<cluster>#<n>``), an integer object for
the row and the dictionary's slot: about 140 bytes, 37 MB for the 263,000 compilations of a
2 GB log, while the table's columns had gone to their file.  :class:`IdIndex` keeps 32 bits
of each id's hash (its slot is taken from them, the rest tell most ids of one slot apart)
and its row, in two arrays of 4-byte numbers (open addressing, at most two thirds full), and
tells ids of one hash apart by asking for the row's own id (its key, in the table).  Past
:data:`PACK_FROM` ids, most of them are packed (see :class:`IdIndex`), and past
:data:`COLD_FROM` the packed ones are in a temporary file, with a filter in memory (about
2 to 4 bytes an id in all).
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterator

from recompile_doctor.timeline.cold_keys import (
    COLD_SHARE,
    ColdParts,
    KeyFilter,
    merged_into_file,
    still_fits,
)
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
    32 GB log took 64 MB in open tables alone, 42 MB packed.  From :data:`COLD_FROM` ids on
    the packed tables are in a temporary file (:class:`~.cold_keys.ColdParts`), a filter
    (:class:`~.cold_keys.KeyFilter`, 12 bits an id it is made for, made twice as big as
    the ids when they outgrow it) tells which ids to look for there, and the open tables
    are merged into them every :data:`COLD_OPEN` ids."""

    __slots__ = (
        "_cold",
        "_filter",
        "_id_of",
        "_limit",
        "_packed",
        "_packed_count",
        "_parts",
        "_used",
    )

    def __init__(self, id_of: Callable[[int], str | None]) -> None:
        self._id_of = id_of
        self._parts = [_Part() for _ in range(PARTS)]
        self._packed: list[PackedKeys] | None = None
        self._cold: ColdParts | None = None
        self._filter: KeyFilter | None = None
        self._packed_count = 0
        self._used = 0
        self._limit = self._open_size()  # (ids held open before the next merge)

    def __len__(self) -> int:
        return self._used

    def add(self, ident: str, row: int) -> None:
        """Row ``row`` is given the id ``ident`` (rows come in increasing order)."""
        h = _hash(ident) & 0xFFFFFFFF
        self._parts[h >> _PART_SHIFT].add(h, row)
        self._used += 1
        if self._used - self._packed_count >= self._limit:
            self._merge()
            self._limit = self._open_size()

    def _open_size(self) -> int:
        """The ids held open before they are merged into the packed ones."""
        if self._cold is not None:
            return _cold_open(self._packed_count)
        return open_size(self._packed_count, PACK_FROM)

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
        elif self._cold is not None and self._filter is not None and h in self._filter:
            got = self._cold.find_all(k, _key(h))
            found.extend(row for row in got if self._id_of(row) == ident)
        found.sort(reverse=True)
        return found

    def slots(self) -> int:
        """The slots of all its open tables (at most two thirds of each are used)."""
        return sum(part.mask + 1 for part in self._parts)

    def _merge(self) -> None:
        """The open tables' ids into the packed ones, each let go as its part is made (in
        the file from COLD_FROM ids on)."""
        cold = self._cold
        if cold is None and self._used < COLD_FROM:
            packed = self._packed or [PackedKeys(4) for _ in range(PARTS)]
            self._packed = None  # (each part let go as the new one is made)
            slots = _open_slots(open_size(self._used, PACK_FROM))
            for k, part in enumerate(self._parts):
                self._parts[k] = _Part(slots)
                packed[k] = packed[k].merged(_Ids(part))
                del part
            self._packed = packed
            self._packed_count = self._used
            return
        held = self._packed
        self._packed = None
        slots = _open_slots(_cold_open(self._used))

        def old(k: int) -> PackedKeys:
            if held is not None:
                was = held[k]
                held[k] = PackedKeys(4)  # (let go)
                return was
            return cold.part(k) if cold is not None else PackedKeys(4)

        def opened() -> Iterator[tuple[_Ids, Iterator[int]]]:
            for k, part in enumerate(self._parts):
                self._parts[k] = _Part(slots)
                yield _Ids(part), _hashes(part)

        kept = still_fits(self._filter, self._used)
        self._filter = None  # (one that no longer fits let go before a bigger one is made)
        new, filter_ = merged_into_file(old, opened(), self._used, kept)
        if cold is not None:
            cold.close()
        self._cold = new
        self._filter = filter_
        self._packed_count = self._used

    def close(self) -> None:
        """Remove the packed ids' file now (when there is one)."""
        if self._cold is not None:
            self._cold.close()


def _cold_open(packed: int) -> int:
    """The ids held open while ``packed`` are in the file."""
    return open_size(packed, COLD_OPEN, COLD_SHARE)


def _open_slots(size: int) -> int:
    """The slots of each open table made to size for ``size`` ids held open next."""
    slots = 16
    while 3 * size > 2 * PARTS * (slots - 1):
        slots *= 2
    return slots


#: tables per index (a power of two), chosen by the top bits of an id's 32-bit hash (its
#: slot by the low ones)
PARTS = 16
_PART_SHIFT = 32 - (PARTS.bit_length() - 1)
#: the ids an index holds in open tables before it packs any
PACK_FROM = 65_536
#: the ids from which the packed ones are in a file (8 MB of them in memory)
COLD_FROM = 1 << 20
#: the ids held open, then, before they are merged into the file's: at least COLD_OPEN,
#: and COLD_SHARE of those in the file
COLD_OPEN = 131_072


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


def _hashes(part: _Part) -> Iterator[int]:
    """The hashes of an open table's ids."""
    for h, row in zip(part.hashes, part.rows, strict=True):
        if row != _EMPTY:
            yield h


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
