"""Which compilations a framework's compile id names, in 16 to 32 bytes a compilation.

A dictionary from each id string to its row kept the id (a new string per compilation: a
TensorFlow log names each cluster's compilations ``<cluster>#<n>``), an integer object for
the row and the dictionary's slot: about 140 bytes, 37 MB for the 263,000 compilations of a
2 GB log, while the table's columns had gone to their file.  :class:`IdIndex` keeps only the
ids' hashes and the rows, in two arrays (open addressing, at most half full), and tells a
hash shared by two ids apart by asking for the row's own id (its key, in the table).
"""

from __future__ import annotations

from array import array
from collections.abc import Callable

#: an empty slot's row
_EMPTY = -1
#: an id's hash (a test makes ids collide)
_hash: Callable[[str], int] = hash


class IdIndex:
    """Compile id -> the rows (compilation ids) given it, in the order given.  ``id_of``
    reads a row's own compile id (to tell apart ids of one hash)."""

    __slots__ = ("_hashes", "_id_of", "_mask", "_rows", "_used")

    def __init__(self, id_of: Callable[[int], str | None]) -> None:
        self._id_of = id_of
        self._mask = 255  # slots - 1 (a power of two)
        self._hashes = array("q", bytes(8 * (self._mask + 1)))
        self._rows = array("q", [_EMPTY]) * (self._mask + 1)
        self._used = 0

    def __len__(self) -> int:
        return self._used

    def add(self, ident: str, row: int) -> None:
        """Row ``row`` is given the id ``ident`` (rows come in increasing order)."""
        self._put(_hash(ident), row)
        self._used += 1
        if 2 * self._used > self._mask:
            self._grow()

    def rows(self, ident: str) -> list[int]:
        """The rows given ``ident``, the last first."""
        h = _hash(ident)
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
        self._hashes = array("q", bytes(8 * (self._mask + 1)))
        self._rows = array("q", [_EMPTY]) * (self._mask + 1)
        for h, row in old:
            if row != _EMPTY:
                self._put(h, row)
