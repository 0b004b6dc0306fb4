"""Which compilations a framework's compile id names, in 12 to 24 bytes a compilation.

A dictionary from each id string to its row kept the id (a new string per compilation: a
TensorFlow log names each cluster's compilations ``<cluster>#<n>``), an integer object for
the row and the dictionary's slot: about 140 bytes, 37 MB for the 263,000 compilations of a
2 GB log, while the table's columns had gone to their file.  :class:`IdIndex` keeps 32 bits
of each id's hash (its slot is taken from them, the rest tell most ids of one slot apart)
and its row, in two arrays of 4-byte numbers (open addressing, at most two thirds full), and
tells ids of one hash apart by asking for the row's own id (its key, in the table).
"""

from __future__ import annotations

from array import array
from collections.abc import Callable

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
    reads a row's own compile id (to tell apart ids of one hash)."""

    __slots__ = ("_hashes", "_id_of", "_mask", "_rows", "_used")

    def __init__(self, id_of: Callable[[int], str | None]) -> None:
        self._id_of = id_of
        self._mask = 255  # slots - 1 (a power of two, at most 2**32)
        self._hashes = _slots(self._mask + 1, 0)  # each id's hash, its low 32 bits
        self._rows = _slots(self._mask + 1, _EMPTY)
        self._used = 0

    def __len__(self) -> int:
        return self._used

    def add(self, ident: str, row: int) -> None:
        """Row ``row`` is given the id ``ident`` (rows come in increasing order)."""
        self._put(_hash(ident) & 0xFFFFFFFF, row)
        self._used += 1
        if 3 * self._used > 2 * self._mask and self._mask < 0xFFFFFFFF:
            self._grow()

    def rows(self, ident: str) -> list[int]:
        """The rows given ``ident``, the last first."""
        h = _hash(ident) & 0xFFFFFFFF
        hashes, rows, mask = self._hashes, self._rows, self._mask
        i = h & mask
        found: list[int] = []
        while (row := rows[i]) != _EMPTY:
            if hashes[i] == h and self._id_of(row) == ident:
                found.append(row)
            i = (i + 1) & mask
        found.sort(reverse=True)
        return found

    def _put(self, h: int, row: int) -> None:
        rows, mask = self._rows, self._mask
        i = h & mask
        while rows[i] != _EMPTY:
            i = (i + 1) & mask
        self._hashes[i] = h
        rows[i] = row

    def _grow(self) -> None:
        old = zip(self._hashes, self._rows, strict=True)
        self._mask = 2 * self._mask + 1
        self._hashes = _slots(self._mask + 1, 0)
        self._rows = _slots(self._mask + 1, _EMPTY)
        for h, row in old:
            if row != _EMPTY:
                self._put(h, row)
