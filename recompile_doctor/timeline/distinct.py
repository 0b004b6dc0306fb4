"""Distinct strings in 24 to 48 bytes each, however many the run has: counted, or numbered
in order of first sight.

A set (or dictionary) of the strings themselves costs the strings: nothing more while they
are the table's own, but a spilled column reads them back as new objects, and a run of
263,000 compilations of as many functions held 40 MB of module names for a moment only to
count them.  :class:`NameIndex` keeps a 128-bit BLAKE2 fingerprint of each distinct string
in open-addressed tables (16 bytes a slot and 4 for the string's number, at most two thirds
full): two different strings would have to share a fingerprint to be taken for one (see
:mod:`recompile_doctor.name_digest`).

The fingerprints are spread over :data:`SHARDS` tables by one of their bytes, each doubled
on its own when it fills: while a table grows, its old slots and its new ones are held at
once.  One table growing held half as much again as the whole (10 MB more at once for the
524,000 modules of a 4 GB log); one of sixteen holds a thirty-second.
"""

from __future__ import annotations

import heapq
from array import array
from collections.abc import Callable, Iterable, Iterator
from itertools import chain, compress, islice, repeat
from operator import add, itemgetter, mul, not_
from struct import Struct
from typing import Any, Final, Self

from recompile_doctor.name_digest import WIDTH, name_digest
from recompile_doctor.timeline.blobs import Blob, Blobs

#: an empty slot (a fingerprint of all zeros is stored as FULL_ZERO instead)
_EMPTY: Final = bytes(WIDTH)
_FULL_ZERO: Final = b"\x00" * (WIDTH - 1) + b"\x01"
#: a slot's bytes, as :mod:`struct` reads them
_SLOT: Final = f"{WIDTH}s"
#: tables per count (a power of two), chosen by a fingerprint's last byte (its first eight
#: choose its slot)
SHARDS: Final = 16
#: each table's slots at first (a power of two)
FIRST_SLOTS: Final = 64


def fingerprint(s: str) -> bytes:
    """``s``'s 128-bit fingerprint, never the empty slot's bytes (lone surrogates, as a
    log's undecodable bytes are read, are fingerprinted as they are)."""
    return fingerprint_of_digest(name_digest(s))


def fingerprint_of_digest(d: bytes) -> bytes:
    """The fingerprint stored for a name's digest ``d``: ``d``, but never the empty slot's
    bytes."""
    return _FULL_ZERO if d == _EMPTY else d


def digest_of_fingerprint(d: bytes) -> bytes:
    """The name's digest whose fingerprint is ``d`` (:func:`fingerprint_of_digest`)."""
    return _EMPTY if d == _FULL_ZERO else d


# -- a table's probing and growth: in C where the package's C module is built ------------


def fp_slot_py(slots: bytearray, mask: int, d: bytes, put: bool) -> int:
    """Fingerprint ``d``'s slot in the table ``slots`` (``mask + 1`` slots; linear probing
    from its first eight bytes, little-endian, ``& mask``): ``i`` where it is, ``-1 - i``
    where it is not (the empty slot where it would go: stored there with ``put``).  The C
    module's ``fp_slot`` does the same, and refuses what it refuses."""
    if len(d) != WIDTH:
        raise TypeError("fp_slot(slots, mask, fp: 16 bytes, put)")
    if d == _EMPTY:
        raise ValueError("a fingerprint of all zeros is the empty slot's")
    i = int.from_bytes(d[:8], "little") & mask
    while True:
        at = i * WIDTH
        got = slots[at : at + WIDTH]
        if got == d:
            return i
        if got == _EMPTY:
            if put:
                slots[at : at + WIDTH] = d
            return -1 - i
        i = (i + 1) & mask


def fp_rehash_py(
    old: bytearray,
    new: bytearray,
    mask: int,
    old_numbers: array[int] | None,
    new_numbers: array[int] | None,
) -> None:
    """Store every fingerprint of the table ``old`` in the empty table ``new`` (``mask +
    1`` slots), in slot order, with its number when the tables are numbered.  The C
    module's ``fp_rehash`` does the same."""
    for j, d in _held(old):
        i = fp_slot_py(new, mask, d, True)
        if i >= 0:
            raise ValueError("fp_rehash: a fingerprint twice")
        if new_numbers is not None and old_numbers is not None:
            new_numbers[-1 - i] = old_numbers[j]


SlotFn = Callable[[bytearray, int, bytes, bool], int]
RehashFn = Callable[[bytearray, bytearray, int, "array[int] | None", "array[int] | None"], None]


def table_work() -> tuple[SlotFn, RehashFn]:
    """The tables' probing and growth: the C module's when it is in use (as the scanner's
    byte work: ``RECOMPILE_DOCTOR_NATIVE=0`` chooses the Python), else the Python above.
    In C a new fingerprint's slot is found and stored in a few dozen instructions; the
    Python slices the table at each probe (about 5,000 instructions compiled: a TensorFlow
    log's new cluster per compilation, and the summary's count of distinct graphs)."""
    from recompile_doctor.parsers._spans import native_in_use  # (the parsers' C module)

    mod = native_in_use()
    if mod is None or not hasattr(mod, "fp_slot") or WIDTH != 16:  # (16: the C's width)
        return fp_slot_py, fp_rehash_py
    return mod.fp_slot, mod.fp_rehash


class _Shard:
    """One open-addressed table of fingerprints (linear probing), and their numbers if
    ``numbers`` is kept; ``work``: :func:`table_work`'s."""

    __slots__ = ("count", "mask", "numbers", "slots", "work")

    def __init__(
        self, numbered: bool, slots: int = FIRST_SLOTS, work: tuple[SlotFn, RehashFn] | None = None
    ) -> None:
        self.mask = slots - 1  # slots - 1
        self.slots = bytearray(WIDTH * slots)
        self.numbers: array[int] | None = array("I", bytes(4 * slots)) if numbered else None
        self.count = 0
        self.work = table_work() if work is None else work

    def find(self, d: bytes) -> int:
        """The slot of fingerprint ``d``: ``i`` where it is, ``-1 - i`` where it is not."""
        return self.work[0](self.slots, self.mask, d, False)

    def copy(self) -> _Shard:
        new = _Shard(False, work=self.work)
        new.mask, new.slots, new.count = self.mask, bytearray(self.slots), self.count
        new.numbers = None if self.numbers is None else array("I", self.numbers)
        return new

    def put(self, d: bytes, number: int) -> int:
        """The slot of fingerprint ``d`` if it is there (``i``); else ``-1 - i``, ``d``
        stored in the empty slot ``i`` with ``number``."""
        i = self.work[0](self.slots, self.mask, d, True)
        if i >= 0:
            return i
        if self.numbers is not None:
            self.numbers[-1 - i] = number
        self.count += 1
        if 3 * self.count > 2 * self.mask:
            self._grow()
        return i

    def __reduce__(self) -> tuple[Any, ...]:
        # (a compiled class is made again by its __init__; the copy chooses its own work)
        return (
            _shard_of,
            (self.numbers is not None, self.mask, self.slots, self.numbers, self.count),
        )

    def _grow(self) -> None:
        old, old_numbers = self.slots, self.numbers
        self.mask = 2 * self.mask + 1
        self.slots = bytearray(WIDTH * (self.mask + 1))
        numbers = self.numbers = (
            None if old_numbers is None else array("I", bytes(4 * (self.mask + 1)))
        )
        self.work[1](old, self.slots, self.mask, old_numbers, numbers)


def _shard_of(
    numbered: bool, mask: int, slots: bytearray, numbers: array[int] | None, count: int
) -> _Shard:
    """A table of these slots (pickled: :meth:`_Shard.__reduce__`)."""
    got = _Shard(numbered, 1)
    got.mask, got.slots, got.numbers, got.count = mask, slots, numbers, count
    return got


def _held(slots: bytearray) -> Iterator[tuple[int, bytes]]:
    """(slot, fingerprint) of each fingerprint a table's slots hold, in slot order."""
    view = memoryview(slots)
    for j, at in enumerate(range(0, len(view), WIDTH)):
        d = bytes(view[at : at + WIDTH])
        if d != _EMPTY:
            yield j, d


class DistinctCount:
    """How many distinct strings were :meth:`add`-ed (``len``): their fingerprints in
    open-addressed tables (16 bytes a slot)."""

    __slots__ = ("_count", "_shards")

    #: whether each string's number is kept (:class:`NameIndex`)
    _NUMBERED = False

    def __init__(self, expected: int = 0) -> None:
        """``expected``: how many strings it is made for (its tables are made to hold that
        many at half full, instead of growing to it)."""
        slots = FIRST_SLOTS
        while slots * SHARDS < 2 * expected:
            slots *= 2
        work = table_work()
        self._shards = [_Shard(self._NUMBERED, slots, work) for _ in range(SHARDS)]
        self._count = 0

    def __len__(self) -> int:
        return self._count

    def __contains__(self, s: object) -> bool:
        if not isinstance(s, str):
            return False
        d = fingerprint(s)
        return self._shards[d[-1] & (SHARDS - 1)].find(d) >= 0

    def add(self, s: str) -> None:
        """Count ``s`` if it was not added before."""
        self._number(fingerprint(s))

    def copy(self) -> Self:
        """Another count of the same strings (of its class: a :class:`NameIndex`'s copy
        numbers them as it does), counted on from there on its own."""
        new = type(self)()
        new._shards = [s.copy() for s in self._shards]
        new._count = self._count
        return new

    def _number(self, d: bytes) -> int:
        """The number of fingerprint ``d``, stored now (and counted) if it is new (without
        numbers kept: the count before it for a new one, anything for an old one)."""
        shard = self._shards[d[-1] & (SHARDS - 1)]
        n = self._count
        i = shard.put(d, n)
        if i >= 0:
            return shard.numbers[i] if shard.numbers is not None else -1
        self._count = n + 1
        return n

    def _fullest(self) -> float:
        """How full the fullest table is (at most two thirds)."""
        return max(s.count / (s.mask + 1) for s in self._shards)


class NameIndex(DistinctCount):
    """Each distinct string's number, 0, 1, 2… in order of first :meth:`number`; ``len``:
    how many there are (4 bytes a slot more than :class:`DistinctCount`)."""

    __slots__ = ()

    _NUMBERED = True

    def number(self, s: str) -> int:
        """``s``'s number, given now if ``s`` is new."""
        return self._number(fingerprint(s))

    def find(self, s: str) -> int | None:
        """``s``'s number; None: ``s`` was never numbered."""
        return self.find_fingerprint(fingerprint(s))

    def number_fingerprint(self, d: bytes) -> int:
        """The number of fingerprint ``d`` (:func:`fingerprint_of_digest`), given now if
        it is new."""
        return self._number(d)

    def find_fingerprint(self, d: bytes) -> int | None:
        """The number of fingerprint ``d``; None: it was never numbered."""
        shard = self._shards[d[-1] & (SHARDS - 1)]
        i = shard.find(d)
        if i < 0:
            return None
        assert shard.numbers is not None
        return shard.numbers[i]

    def numbered(self, base: int = 0) -> Iterator[tuple[bytes, int]]:
        """(fingerprint, number + ``base``) of each string numbered, in no order of their
        own."""
        return chain.from_iterable(map(_numbered, self._shards, repeat(base)))

    def release(self) -> Iterator[Numbered]:
        """The (fingerprint, number) pairs of each of its tables in turn, each table let go
        by the index as it is given (to be held in another form without holding both
        whole at once): the index is empty afterwards."""
        shards = self._shards
        for k, shard in enumerate(shards):
            shards[k] = _Shard(True, work=shard.work)
            yield Numbered(shard)
            del shard
        self._count = 0


class Numbered:
    """The (fingerprint, number) pairs of one table of a :class:`NameIndex`, to be read as
    often as wanted (:meth:`NameIndex.release`)."""

    __slots__ = ("_shard",)

    def __init__(self, shard: _Shard) -> None:
        self._shard = shard

    def __len__(self) -> int:
        return self._shard.count

    def __iter__(self) -> Iterator[tuple[bytes, int]]:
        return _numbered(self._shard)


def _numbered(shard: _Shard, base: int = 0) -> Iterator[tuple[bytes, int]]:
    """(fingerprint, number + ``base``) of each fingerprint a numbered table holds, in slot
    order.  A slot's number marks it as held (an empty one's is 0): the held slots are
    found in C (``compress``), a few instructions an empty slot, and only theirs are read
    (a worker's checkpoints read every table of its decoder, a hundred times, while its
    tables are mostly empty: unpacking every slot was a tenth of a TensorFlow worker's
    instructions); the slot of the entry numbered 0, in one table, is looked for among
    those whose number is 0.  All of it iterators of C: taken as they are read (a table is
    let go while another is made of its entries, never both whole at once; compiled, a
    generator expression here was made a list)."""
    numbers = shard.numbers
    assert numbers is not None
    n = len(numbers)
    zero = _slot_of_zero(shard.slots, numbers) if numbers.count(0) != n - shard.count else -1
    fingerprints = map(
        _FIRST,
        map(_read_slot, repeat(shard.slots), map(mul, _held_slots(numbers, zero), repeat(WIDTH))),
    )
    got: Iterator[int] = map(numbers.__getitem__, _held_slots(numbers, zero))
    if base:
        got = map(add, got, repeat(base))
    return zip(fingerprints, got, strict=True)


def _held_slots(numbers: array[int], zero: int) -> Iterator[int]:
    """The slots a table holds, in order, by their numbers (``zero``: the slot of the entry
    numbered 0, or -1)."""
    if zero < 0:
        return compress(range(len(numbers)), numbers)
    return chain(
        compress(range(zero), numbers),
        (zero,),
        compress(range(zero + 1, len(numbers)), islice(numbers, zero + 1, None)),
    )


def _slot_of_zero(slots: bytearray, numbers: array[int]) -> int:
    """The slot of the entry numbered 0: the one whose number is 0 that is not empty."""
    for j in compress(range(len(numbers)), map(not_, numbers)):
        if slots[j * WIDTH : (j + 1) * WIDTH] != _EMPTY:
            return j
    raise AssertionError("a table counts an entry numbered 0 that it does not hold")


#: the fingerprint in a table's slots at a byte offset, as a 1-tuple, and its item
_read_slot: Final = Struct(_SLOT).unpack_from
_FIRST: Final = itemgetter(0)


#: fingerprints a :class:`BoundedDistinctCount` holds in memory (about 4 MB of tables)
HELD = 131_072
#: fingerprints read back from each sorted run at a time while the runs are merged
MERGE_READ = 4_096


class BoundedDistinctCount:
    """How many distinct strings were :meth:`add`-ed (:meth:`count`), in bounded memory.

    Up to :data:`HELD` distinct fingerprints are counted in a :class:`DistinctCount`; then
    they are written, sorted, to an anonymous temporary file as a run (:class:`Blobs`, in
    pieces of :data:`MERGE_READ`), and a new table begins.  :meth:`count` merges the runs, a
    piece of each read at a time, and counts each fingerprint once.  The summary's count of
    the 1,047,000 distinct graphs of an 8 GB log held a 34 MB table; now 4 MB, and 16 bytes
    a graph on disk."""

    __slots__ = ("_blobs", "_held", "_runs")

    def __init__(self) -> None:
        self._held = DistinctCount()
        self._blobs = Blobs("recompile-doctor-distinct-")
        self._runs: list[list[Blob]] = []  # each run's pieces, in order

    def add(self, s: str) -> None:
        held = self._held
        held.add(s)
        if len(held) >= HELD:
            self._write_run()

    def _write_run(self) -> None:
        run = list(_fingerprints(self._held))
        self._held = DistinctCount()
        self._runs.append(put_sorted_run(self._blobs, run))

    def count(self) -> int:
        """How many distinct strings were added (the runs are merged once asked: the
        count ends the adding)."""
        if not self._runs:
            return len(self._held)
        if len(self._held):
            self._write_run()
        n = 0
        last = None
        for d in heapq.merge(*(read_run(run) for run in self._runs)):
            if d != last:
                n += 1
                last = d
        return n

    def close(self) -> None:
        """Remove the temporary file now."""
        self._blobs.close()


def _fingerprints(count: DistinctCount) -> Iterator[bytes]:
    """The fingerprints a count holds, in no order."""
    for shard in count._shards:
        for _, d in _held(shard.slots):
            yield d


def put_sorted_run(blobs: Blobs, records: list[bytes]) -> list[Blob]:
    """Sort ``records`` (of one width) in place and write them to ``blobs`` as a run, in
    pieces of :data:`MERGE_READ` records (:func:`read_run` reads it back)."""
    records.sort()
    return [
        blobs.put(b"".join(records[i : i + MERGE_READ])) for i in range(0, len(records), MERGE_READ)
    ]


def read_run(run: list[Blob], width: int = WIDTH) -> Iterator[bytes]:
    """The ``width``-byte records of a run (:func:`put_sorted_run`), in order, read a
    piece at a time."""
    for blob in run:
        data = Blobs.get(blob)
        for i in range(0, len(data), width):
            yield data[i : i + width]


def count_distinct(strings: Iterable[str]) -> int:
    """How many distinct strings ``strings`` gives, in bounded memory
    (:class:`BoundedDistinctCount`)."""
    bounded = BoundedDistinctCount()
    try:
        for s in strings:
            bounded.add(s)
        return bounded.count()
    finally:
        bounded.close()
