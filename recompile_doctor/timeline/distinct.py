"""Counting distinct strings in 24 to 48 bytes each, however many the run has.

A set of the strings themselves costs the strings: nothing more while they are the table's
own, but a spilled column reads them back as new objects, and a run of 263,000 compilations
of as many functions held 40 MB of module names for a moment only to count them.
:class:`DistinctCount` keeps a 128-bit BLAKE2 fingerprint of each distinct string in an
open-addressed table (16 bytes a slot, at most two thirds full): two different strings would
have to share a fingerprint to be counted once, a chance of about n²/2¹²⁹ (10⁻²⁷ for a
million strings), far below any fault of the machine running it.
"""

from __future__ import annotations

from hashlib import blake2b

#: bytes of a fingerprint (one slot of the table)
WIDTH = 16
#: an empty slot (a fingerprint of all zeros is stored as FULL_ZERO instead)
_EMPTY = bytes(WIDTH)
_FULL_ZERO = b"\x00" * (WIDTH - 1) + b"\x01"


def fingerprint(s: str) -> bytes:
    """``s``'s 128-bit fingerprint, never the empty slot's bytes (lone surrogates, as a
    log's undecodable bytes are read, are fingerprinted as they are)."""
    d = blake2b(s.encode("utf-8", "surrogatepass"), digest_size=WIDTH).digest()
    return _FULL_ZERO if d == _EMPTY else d


class DistinctCount:
    """How many distinct strings were :meth:`add`-ed (``len``)."""

    __slots__ = ("_count", "_mask", "_slots")

    def __init__(self) -> None:
        self._mask = 1023  # slots - 1 (a power of two)
        self._slots = bytearray(WIDTH * (self._mask + 1))
        self._count = 0

    def __len__(self) -> int:
        return self._count

    def add(self, s: str) -> None:
        """Count ``s`` if it was not added before."""
        if self._put(fingerprint(s)):
            self._count += 1
            if 3 * self._count > 2 * self._mask:
                self._grow()

    def _put(self, d: bytes) -> bool:
        """Store fingerprint ``d`` (False: it was there)."""
        slots, mask = self._slots, self._mask
        i = int.from_bytes(d[:8], "little") & mask
        while True:
            at = i * WIDTH
            got = slots[at : at + WIDTH]
            if got == _EMPTY:
                slots[at : at + WIDTH] = d
                return True
            if got == d:
                return False
            i = (i + 1) & mask

    def _grow(self) -> None:
        old = self._slots
        self._mask = 2 * self._mask + 1
        self._slots = bytearray(WIDTH * (self._mask + 1))
        view = memoryview(old)
        for at in range(0, len(old), WIDTH):
            d = bytes(view[at : at + WIDTH])
            if d != _EMPTY:
                self._put(d)
