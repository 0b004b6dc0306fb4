"""Distinct strings in 24 to 48 bytes each, however many the run has: counted, or numbered
in order of first sight.

A set (or dictionary) of the strings themselves costs the strings: nothing more while they
are the table's own, but a spilled column reads them back as new objects, and a run of
263,000 compilations of as many functions held 40 MB of module names for a moment only to
count them.  :class:`NameIndex` keeps a 128-bit BLAKE2 fingerprint of each distinct string
in an open-addressed table (16 bytes a slot and 4 for the string's number, at most two thirds
full): two different strings would have to share a fingerprint to be taken for one (see
:mod:`recompile_doctor.name_digest`).
"""

from __future__ import annotations

from array import array

from recompile_doctor.name_digest import WIDTH, name_digest

#: an empty slot (a fingerprint of all zeros is stored as FULL_ZERO instead)
_EMPTY = bytes(WIDTH)
_FULL_ZERO = b"\x00" * (WIDTH - 1) + b"\x01"


def fingerprint(s: str) -> bytes:
    """``s``'s 128-bit fingerprint, never the empty slot's bytes (lone surrogates, as a
    log's undecodable bytes are read, are fingerprinted as they are)."""
    d = name_digest(s)
    return _FULL_ZERO if d == _EMPTY else d


class DistinctCount:
    """How many distinct strings were :meth:`add`-ed (``len``): their fingerprints in an
    open-addressed table (16 bytes a slot)."""

    __slots__ = ("_count", "_mask", "_slots")

    def __init__(self) -> None:
        self._mask = 1023  # slots - 1 (a power of two)
        self._slots = bytearray(WIDTH * (self._mask + 1))
        self._count = 0

    def __len__(self) -> int:
        return self._count

    def __contains__(self, s: object) -> bool:
        if not isinstance(s, str):
            return False
        d = fingerprint(s)
        at = self._slot(d) * WIDTH
        return self._slots[at : at + WIDTH] == d

    def add(self, s: str) -> None:
        """Count ``s`` if it was not added before."""
        self._put(fingerprint(s))

    def _put(self, d: bytes) -> int | None:
        """Store fingerprint ``d``: the slot it went to, None if it was there."""
        i = self._slot(d)
        at = i * WIDTH
        if self._slots[at : at + WIDTH] == d:
            return None
        self._slots[at : at + WIDTH] = d
        self._count += 1
        if 3 * self._count > 2 * self._mask:
            self._grow()
            return self._slot(d)
        return i

    def _slot(self, d: bytes) -> int:
        """The slot of fingerprint ``d``: where it is, or the empty one where it would go."""
        slots, mask = self._slots, self._mask
        i = int.from_bytes(d[:8], "little") & mask
        while True:
            at = i * WIDTH
            got = slots[at : at + WIDTH]
            if got in (d, _EMPTY):
                return i
            i = (i + 1) & mask

    def _grow(self) -> None:
        old = self._slots
        self._mask = 2 * self._mask + 1
        self._slots = bytearray(WIDTH * (self._mask + 1))
        view = memoryview(old)
        for j, at in enumerate(range(0, len(old), WIDTH)):
            d = bytes(view[at : at + WIDTH])
            if d != _EMPTY:
                i = self._slot(d)
                self._slots[i * WIDTH : (i + 1) * WIDTH] = d
                self._moved(j, i)

    def _moved(self, old: int, new: int) -> None:
        """The fingerprint of slot ``old`` went to slot ``new`` of the grown table."""


class NameIndex(DistinctCount):
    """Each distinct string's number, 0, 1, 2… in order of first :meth:`number`; ``len``:
    how many there are (4 bytes a slot more than :class:`DistinctCount`)."""

    __slots__ = ("_numbers", "_old_numbers")

    def __init__(self) -> None:
        super().__init__()
        self._numbers = array("I", bytes(4 * (self._mask + 1)))
        self._old_numbers: array[int] | None = None

    def number(self, s: str) -> int:
        """``s``'s number, given now if ``s`` is new."""
        d = fingerprint(s)
        i = self._slot(d)
        at = i * WIDTH
        if self._slots[at : at + WIDTH] == d:
            return self._numbers[i]
        n = self._count
        got = self._put(d)
        assert got is not None
        self._numbers[got] = n
        return n

    def find(self, s: str) -> int | None:
        """``s``'s number; None: ``s`` was never numbered."""
        d = fingerprint(s)
        i = self._slot(d)
        at = i * WIDTH
        return self._numbers[i] if self._slots[at : at + WIDTH] == d else None

    def _grow(self) -> None:
        self._old_numbers = self._numbers
        self._numbers = array("I", bytes(4 * (2 * self._mask + 2)))
        super()._grow()
        self._old_numbers = None

    def _moved(self, old: int, new: int) -> None:
        assert self._old_numbers is not None
        self._numbers[new] = self._old_numbers[old]
