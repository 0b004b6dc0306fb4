"""A column of the compilation table kept out of memory once the run is long.

A run's compilations are columns (:mod:`.table`): arrays of numbers and lists of shared
objects, about 75 bytes per compilation in memory, which a compile-heavy log of a few
gigabytes turns into hundreds of megabytes.  Past :data:`SPILL_AFTER` compilations every
column becomes a :class:`Spilled` one: its rows in chunks of :data:`CHUNK_ROWS`, the chunk
being filled in memory, the others in an anonymous temporary file (:mod:`.blobs`), read back
:data:`CACHED` chunks at a time (a row set there is written back when its chunk leaves).
What a column holds in memory is then bounded whatever the length of the run.  The lines'
text and the keys go there sooner, past :data:`EARLY_SPILL_AFTER` compilations or
:data:`EARLY_SPILL_CHARS` characters, in chunks of fewer rows when they are long
(:func:`text_rows`): they are most of a row's bytes when every compilation has a key of its
own.

A :class:`Spilled` column answers what the table's readers ask of its arrays, lists and
byte arrays (index, set, slice, append, iterate, ``count``, ``find``), with the same
results; a row costs a Python call to read instead of a C one, so the columns stay plain
below the threshold, where memory is no concern.  The other numbers a run holds one of per
compilation, reason or recompilation (the reasons' compilations and the places of each kind
of reason and note in the builder; the recompilations' ids, the verdicts' rules and the
causes in the analyses) go to a file at the same count (:func:`numbers`).
"""

from __future__ import annotations

import marshal
from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import repeat
from typing import Any, Generic, TypeVar, overload

from recompile_doctor.compiled_modules import own_abc_checks
from recompile_doctor.slotted import maker_of, slot_setters
from recompile_doctor.timeline.blobs import Blob, Blobs
from recompile_doctor.timeline.pickled import dumps, loads

T = TypeVar("T")

#: compilations (reasons, recompilations) held in plain columns before the columns go to a
#: temporary file
SPILL_AFTER = 200_000
#: compilations whose line text and key are held in memory before those two columns go to
#: the file: a line is a few hundred bytes, more than all the other columns of its row
#: together, and is read only when a report shows the compilation's evidence; a key that
#: names one compilation (a TensorFlow cluster's ``<name>#<n>``, a module name per
#: compilation) is as much (at 200,000 compilations of a 2 GB TensorFlow log the keys held
#: 70 MB, and reading it peaked at 178 MB instead of 114), and one that many compilations
#: share is one object a chunk
EARLY_SPILL_AFTER = 16_384
#: characters of line text and key names held in memory before the text and key columns
#: go to the file, however few the compilations (long names: 2,259 compilations of a
#: TensorFlow log of 8,000-character names held 20 MB of line texts and 48 MB of compile
#: ids, modules and function names)
EARLY_SPILL_CHARS = 16 << 20
#: rows per chunk written at once (an 8-byte column: 64 kB)
CHUNK_ROWS = 8192
#: the characters of text and key names a chunk of those two columns holds at most, about
#: (fewer rows than CHUNK_ROWS where they are long: :func:`text_rows`)
TEXT_CHUNK_CHARS = 4 << 20
#: the fewest rows such a chunk holds
TEXT_ROWS_MIN = 64
#: chunks of a column read back and kept at once
CACHED = 4
#: chunks of the text and key columns kept at once (8,192 lines are a few MB: a
#: recompilation's text and its previous compilation's are in one chunk or the two last read)
EARLY_CACHED = 2


class Codec(Generic[T]):
    """How a column's chunk is made, written and read back: an array of one type code, a
    byte array, or a list of objects (pickled)."""

    __slots__ = ("decode", "encode", "fixed", "new")

    def __init__(
        self,
        new: Callable[[], Any],
        encode: Callable[[Any], bytes],
        decode: Callable[[bytes], Any],
        fixed: bool,
    ) -> None:
        self.new = new
        self.encode = encode
        self.decode = decode
        #: a chunk's bytes have the same length whatever its values: rewritten in place
        self.fixed = fixed


def array_codec(typecode: str) -> Codec[Any]:
    return Codec(lambda: array(typecode), array.tobytes, lambda b: array(typecode, b), fixed=True)


BYTES: Codec[int] = Codec(bytearray, bytes, bytearray, fixed=True)


#: objects pickled as packed sequences pickle theirs (a slotted dataclass by its values)
OBJECTS: Codec[Any] = Codec(list, dumps, loads, fixed=False)

#: the first byte of a chunk of :func:`slotted_codec`: its objects' values by ``marshal``,
#: or the chunk pickled
_VALUES = b"V"
_PICKLED = b"P"


def slotted_codec(cls: type) -> Codec[Any]:
    """The codec of a column of objects of the slotted dataclass ``cls`` or None (the
    compilations' keys): each distinct object of a chunk (by identity: many rows share
    one) as its field values, marshalled with each row's place among them, and made again
    by the class's maker (:func:`~recompile_doctor.slotted.maker_of`: no interpreted frame,
    no ``__init__``).  A chunk holding anything else, or a value ``marshal`` does not
    write, is pickled (:data:`OBJECTS`).  Read back by the unpickler, the keys took 924 M
    of the 2,824 M instructions of the grouping by cause of a 250 MB TensorFlow log (33,000
    compilations, each key read four to five times)."""
    setters = slot_setters(cls)
    if setters is None:
        raise TypeError(f"{cls.__name__} is not a slotted dataclass")
    names = tuple(n for n, _ in setters)

    def encode(items: list[Any]) -> bytes:
        seen: dict[int, int] = {}
        values: list[tuple[Any, ...]] = []
        rows = array("i")
        # each distinct string of the chunk once, as a copy of its own (not interned):
        # marshal writes an interned string as one to intern again where it is read, and
        # interning a chunk's names anew took two fifths of each reading of a spilled column
        # of keys (read over and over by the analyses; once written, never again)
        copies: dict[int, str] = {}
        for obj in items:
            if obj is None:
                rows.append(-1)
                continue
            if type(obj) is not cls:
                return _PICKLED + dumps(items)
            k = seen.get(id(obj))
            if k is None:
                k = seen[id(obj)] = len(values)
                fields = [getattr(obj, n) for n in names]
                for j, v in enumerate(fields):
                    if type(v) is str:
                        c = copies.get(id(v))
                        if c is None:
                            c = copies[id(v)] = "".join((v, ""))
                        fields[j] = c
                values.append(tuple(fields))
            rows.append(k)
        try:
            return _VALUES + marshal.dumps((values, rows.tobytes()))
        except ValueError:  # (a value marshal does not write)
            return _PICKLED + dumps(items)

    def decode(data: bytes) -> list[Any]:
        body = memoryview(data)[1:]
        if data[:1] != _VALUES:
            return loads(body)
        values, places = marshal.loads(body)
        make = maker_of(cls)
        made = [make(v) for v in values]
        rows = array("i")
        rows.frombytes(places)
        return [None if k < 0 else made[k] for k in rows]

    return Codec(list, encode, decode, fixed=False)


#: bytes of chunks a spilled column of numbers read at random keeps (:func:`numbers`): a
#: page's per-module sums of 250,000 modules compiled again at random took 4 times as long
#: with four chunks kept
RANDOM_CACHE = 4 << 20


def numbers(
    typecode: str, n: int = 0, bound: int = 0, fill: int = 0, *, at_random: bool = False
) -> array[Any] | Spilled[Any]:
    """An array of ``n`` numbers ``fill`` of ``typecode`` (an analysis's numbers, one per
    compilation or recompilation, indexed and appended to), or a spilled column of them, in
    a file of its own, when it will hold :data:`SPILL_AFTER` rows or more (``bound``: the
    most it will hold when more than ``n``).  ``at_random``: it will be read and written
    at random places (a page's numbers per module): a spilled one keeps up to
    :data:`RANDOM_CACHE` bytes of chunks instead of :data:`CACHED` chunks."""
    if max(n, bound) < SPILL_AFTER:
        return array(typecode, [fill]) * n
    codec = array_codec(typecode)
    keep = None
    if at_random:
        keep = max(CACHED, RANDOM_CACHE // (CHUNK_ROWS * array(typecode).itemsize))
    return Spilled.filled(codec, Blobs("recompile-doctor-numbers-"), n, fill, keep)


def text_rows(chars: int, rows: int) -> int:
    """Rows per chunk for the text and key columns, whose ``rows`` rows so far hold
    ``chars`` characters: :data:`CHUNK_ROWS`, or the power of two that keeps a chunk of
    such rows near :data:`TEXT_CHUNK_CHARS` (:data:`TEXT_ROWS_MIN` at least)."""
    per = max(1, chars // max(1, rows))
    got = CHUNK_ROWS
    while got > TEXT_ROWS_MIN and got * per > TEXT_CHUNK_CHARS:
        got //= 2
    return got


def codec_of(column: Any) -> Codec[Any]:
    """The codec of a plain column (an array, a byte array or a list)."""
    if isinstance(column, array):
        return array_codec(column.typecode)
    if isinstance(column, bytearray):
        return BYTES
    return OBJECTS


class Spilled(Sequence[T]):
    """A column whose full chunks are in a temporary file; equal in what it answers to the
    plain column it was made of."""

    __slots__ = (
        "_blobs",
        "_cached",
        "_codec",
        "_dirty",
        "_keep",
        "_n",
        "_places",
        "_rows",
        "_tail",
    )

    def __init__(
        self, codec: Codec[T], blobs: Blobs, keep: int | None = None, rows: int | None = None
    ) -> None:
        self._codec = codec
        self._blobs = blobs
        self._places: list[Blob] = []  # the full chunks, in order
        self._tail: Any = codec.new()  # the chunk being filled
        self._n = 0
        self._cached: dict[int, Any] = {}  # chunk number -> its rows (read back)
        self._dirty: set[int] = set()  # cached chunks with a row set since read
        self._rows = CHUNK_ROWS if rows is None else rows  # (fixed for the column's life)
        self._keep = CACHED if keep is None else keep

    @classmethod
    def of(
        cls,
        column: Iterable[T],
        codec: Codec[T],
        blobs: Blobs,
        keep: int | None = None,
        rows: int | None = None,
    ) -> Spilled[T]:
        """A spilled column of the rows of a plain one (an array, byte array or list is
        written a chunk at a time, from its slices); ``keep``: the chunks read back and
        kept at once (default :data:`CACHED`); ``rows``: per chunk (default
        :data:`CHUNK_ROWS`)."""
        new = cls(codec, blobs, keep, rows)
        if not isinstance(column, (array, bytearray, list)):
            new.extend(column)
            return new
        size, n = new._rows, len(column)
        full = n // size
        new._places = [
            blobs.put(codec.encode(column[k * size : (k + 1) * size])) for k in range(full)
        ]
        new._tail.extend(column[full * size :])
        new._n = n
        return new

    @classmethod
    def filled(
        cls, codec: Codec[T], blobs: Blobs, n: int, value: T, keep: int | None = None
    ) -> Spilled[T]:
        """A spilled column of ``n`` rows of ``value`` (each full chunk written from one
        encoding); ``keep``: as for :meth:`of`."""
        new = cls(codec, blobs, keep)
        full, rest = divmod(n, new._rows)
        if full:
            chunk = codec.new()
            chunk.extend(repeat(value, new._rows))
            data = codec.encode(chunk)
            new._places = [blobs.put(data) for _ in range(full)]
        new._tail.extend(repeat(value, rest))
        new._n = n
        return new

    def append(self, v: T) -> None:
        tail = self._tail
        tail.append(v)
        self._n += 1
        if len(tail) >= self._rows:
            self._close_tail()

    def _close_tail(self) -> None:
        """Write the full chunk being filled and begin the next."""
        self._places.append(self._blobs.put(self._codec.encode(self._tail)))
        self._tail = self._codec.new()

    def extend(self, values: Iterable[T]) -> None:
        for v in values:
            self.append(v)

    def __len__(self) -> int:
        return self._n

    def _load(self, k: int) -> Any:
        """Full chunk ``k``'s rows, read back (not cached: the callers looked) and cached."""
        cached = self._cached
        if len(cached) >= self._keep:
            self._evict(next(iter(cached)))  # the one read back first
        got = cached[k] = self._codec.decode(Blobs.get(self._places[k]))
        return got

    def _evict(self, k: int) -> None:
        rows = self._cached.pop(k)
        if k in self._dirty:
            self._dirty.discard(k)
            data = self._codec.encode(rows)
            place = self._places[k]
            if self._codec.fixed and self._blobs.rewrite(place, data):
                return
            self._places[k] = self._blobs.put(data)  # (the old bytes stay, unread)

    @overload
    def __getitem__(self, i: int) -> T: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[T]: ...
    def __getitem__(self, i: int | slice) -> T | Sequence[T]:
        if isinstance(i, slice):  # (row by row: the chunks it spans are read once each)
            return [self[k] for k in range(*i.indices(self._n))]
        n = self._n
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError("column index out of range")
        k, j = divmod(i, self._rows)
        if k == len(self._places):
            return self._tail[j]  # type: ignore[no-any-return]
        rows = self._cached.get(k)
        if rows is None:
            rows = self._load(k)
        return rows[j]  # type: ignore[no-any-return]

    def __setitem__(self, i: int, v: T) -> None:
        n = self._n
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError("column assignment index out of range")
        k, j = divmod(i, self._rows)
        if k == len(self._places):
            self._tail[j] = v
            return
        rows = self._cached.get(k)
        if rows is None:
            rows = self._load(k)
        rows[j] = v
        self._dirty.add(k)

    def _chunks(self, first: int = 0) -> Iterator[Any]:
        """The rows of every chunk from chunk ``first`` on, in order (a chunk not cached is
        read without caching it)."""
        places = self._places
        for k in range(first, len(places)):
            got = self._cached.get(k)
            yield got if got is not None else self._codec.decode(Blobs.get(places[k]))
        if first <= len(places):
            yield self._tail

    def __iter__(self) -> Iterator[T]:
        for rows in self._chunks():
            # (a chunk is let go before the next is read back: held while it was, it put a
            # chunk more at the top of every pass over a long run's keys, 3 MB)
            them = iter(rows)
            del rows
            yield from them

    def count(self, v: T) -> int:
        return sum(rows.count(v) for rows in self._chunks())

    def find(self, v: int, start: int = 0) -> int:
        """The first row from ``start`` on holding ``v``, else -1 (a byte array's find)."""
        if start < 0:
            start = max(start + self._n, 0)
        size = self._rows
        k0 = start // size
        for k, rows in enumerate(self._chunks(k0), k0):
            at = rows.find(v, start - k * size if k == k0 else 0)
            if at != -1:
                return k * size + int(at)
        return -1

    def close(self) -> None:
        """Remove the temporary file (shared by the table's columns)."""
        self._blobs.close()

    def __reduce__(self) -> tuple[Any, ...]:
        # a copy for another process is the plain column (its file stays here)
        plain = self._codec.new()
        plain.extend(self)
        return (_same, (plain,))

    def __repr__(self) -> str:
        return f"Spilled({self._n} rows, {len(self._places)} chunks in a file)"


def append_row(columns: Sequence[Spilled[Any]], values: Iterable[Any]) -> None:
    """Append one row to columns of the same length (a table's): each value goes straight
    into its column's chunk being filled (no method call per column), written when full
    (the text and key columns' chunks may hold fewer rows than the others')."""
    for col, v in zip(columns, values, strict=True):
        tail = col._tail
        tail.append(v)
        col._n += 1
        if len(tail) >= col._rows:
            col._close_tail()


own_abc_checks(Spilled)  # (a compiled build's classes: see there)


def _same(column: T) -> T:
    return column


__all__ = [
    "CACHED",
    "CHUNK_ROWS",
    "EARLY_CACHED",
    "EARLY_SPILL_AFTER",
    "EARLY_SPILL_CHARS",
    "OBJECTS",
    "SPILL_AFTER",
    "TEXT_CHUNK_CHARS",
    "TEXT_ROWS_MIN",
    "Spilled",
    "append_row",
    "array_codec",
    "codec_of",
    "numbers",
    "slotted_codec",
    "text_rows",
]
