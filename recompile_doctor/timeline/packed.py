"""A sequence kept packed: what the timeline holds one of per compilation (cache lookups,
framework reasons, notes) takes a few bytes of memory an item instead of a few hundred.

Items are appended one at a time; every :data:`PACK_CHUNK` of them (fewer, when their
strings hold :data:`PACK_CHARS` characters) are encoded together (by ``marshal``, or
pickled) and unpacked again, a chunk at a time, whenever the sequence is read.  The first
:data:`PLAIN_CHUNKS` chunks stay as they are: a sequence of a few thousand short items is
never packed, and the analyses that pass over a long one many times unpack only its
rest.  Packed chunks are kept in an anonymous temporary file (:mod:`.blobs`), not in memory:
what a sequence holds in memory does not grow with its length (a chunk's place, 70 bytes for
1,024 items), and a run of a million compilations does not hold 25 MB of packed reasons and
lookups.

The chunks are not compressed.  zlib at its fastest level shrank them 18 times, but it was
4 % of the instructions of the reading of a compile-heavy JAX log (the parent's, which is
the longer path), and what it saved is small beside what the report's events spool writes
to the same temporary folder uncompressed: 4.5 MB of packed chunks against 9.8 MB of events
for 24 MB of JAX log (:mod:`.spool`).
"""

from __future__ import annotations

import marshal
from array import array
from bisect import bisect_right
from collections.abc import Iterator, Sequence
from typing import Any, Final, TypeVar, overload

from recompile_doctor.compiled_modules import own_abc_checks
from recompile_doctor.marshal_bytes import dumps as marshal_dumps
from recompile_doctor.timeline.blobs import Blob, Blobs
from recompile_doctor.timeline.pickled import dumps, loads

T = TypeVar("T")

#: items encoded together
PACK_CHUNK = 1024
#: chunks at the start of a sequence kept unpacked (2 x 1,024 items, a MB or so: with 16
#: the reasons, lookups and notes of a compile-heavy JAX log held 27 MB more for 2% less
#: time; 4 held 4.5 MB more than 2 for 1.4% less time on the 50 MB JAX log, and 6-8 MB more
#: on the 1 GB TensorFlow one, which is at the 150 MB line)
PLAIN_CHUNKS = 2
#: packed chunks kept unpacked once read by index (the least recently read goes first): with
#: one, a reading that alternates between two places unpacked a chunk for every item
CACHED_CHUNKS = 3
#: the characters of the items of a chunk (as :meth:`Packed.append` is told them) at which
#: it is closed before it holds :data:`PACK_CHUNK` items: a chunk's items are in memory at
#: once (being filled, kept plain, or read back), and 1,024 reasons of a log of
#: 20,000-character function names held 40 MB each time (a parent read 400 MB of such a log
#: at 327 MB); the builder counts a kept item's line, a reason's words and its key's names
#: (lookups told their lines alone held 16 MB a chunk of 8,000-character functions' keys,
#: three chunks at once: 800 MB of such a JAX log peaked at 151 MB, 87 since)
PACK_CHARS: Final = 1 << 20


def sequence_eq(self: Sequence[Any], other: object) -> bool:
    """``==`` of a sequence type that is equal to any sequence (not a string) holding equal
    items in the same order, as a list is to a list."""
    if not isinstance(other, Sequence) or isinstance(other, (str, bytes)):
        return NotImplemented  # type: ignore[no-any-return]
    return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))


class Packed(Sequence[T]):
    """A list that packs its items in encoded chunks once there are many.

    Equal to any sequence holding equal items in the same order.
    """

    def __init__(
        self,
        chunk: int | None = None,
        plain: int | None = None,
        rows: type | None = None,
    ) -> None:
        """``chunk`` items a chunk, the first ``plain`` chunks kept unpacked, ``rows``
        the items' class (see below)."""
        self._size = PACK_CHUNK if chunk is None else chunk
        self._plain = PLAIN_CHUNKS if plain is None else plain
        self._tail_chars = 0  # (of the items in _tail, as append was told)
        #: the index of each chunk's first item, once a chunk was closed short (by its
        #: characters); None while each holds ``chunk`` items
        self._starts: array[int] | None = None
        #: the items' class when they are named tuples (or strings) of the plain values
        #: ``marshal`` writes: their chunks are packed as columns by marshal (three times
        #: faster than pickle; a chunk holding anything else is pickled)
        self._rows = rows
        #: full chunks: the first ``plain`` as lists, the rest packed (in ``_blobs``)
        self._chunks: list[list[T] | Blob] = []
        self._blobs: Blobs | None = None
        self._tail: list[T] = []
        self._n = 0
        self._last: tuple[int, list[T]] | None = None  # the chunk read last
        self._cache: dict[int, list[T]] = {}  # packed chunks read lately, by number

    def append(self, item: T, chars: int = 0) -> None:
        """Append ``item``, which holds ``chars`` characters of its own (its chunk is
        closed early once its items hold :data:`PACK_CHARS`)."""
        self._tail.append(item)
        self._n += 1
        if chars:
            self._tail_chars += chars
            if self._tail_chars >= PACK_CHARS:
                self._close_chunk()
                return
        if len(self._tail) >= self._size:
            self._close_chunk()

    def _close_chunk(self) -> None:
        full = self._tail
        chunks = self._chunks
        starts = self._starts
        if starts is None and len(full) < self._size:
            # (the first chunk closed short: the chunks' starts are counted from now on)
            starts = self._starts = array("q", range(0, len(chunks) * self._size, self._size))
        if starts is not None:
            starts.append(self._n - len(full))
        chunks.append(full if len(chunks) < self._plain else self._pack(full))
        self._tail = []
        self._tail_chars = 0

    def _pack(self, items: list[T]) -> Blob:
        blobs = self._blobs
        if blobs is None:
            blobs = self._blobs = Blobs("recompile-doctor-packed-")
        return blobs.put(_pack(items, self._rows))

    def _unpacked(self, data: list[T] | Blob) -> list[T]:
        return _unpack(data, self._rows)

    def __len__(self) -> int:
        return self._n

    def __iter__(self) -> Iterator[T]:
        for data in self._chunks:
            yield from self._unpacked(data)
        yield from list(self._tail)

    def _chunk(self, k: int) -> list[T]:
        last = self._last
        if last is not None and last[0] == k:
            return last[1]
        data = self._chunks[k]
        if isinstance(data, list):
            items = data
        else:
            # the packed chunks read lately: a reading in one order may take items from two
            # or three places at once (a torch run's reasons in the order of their
            # compilations: those given in time, and those held to the end of the log)
            cache = self._cache
            got = cache.pop(k, None)
            if got is None:
                got = self._unpacked(data)
                if len(cache) >= CACHED_CHUNKS:
                    del cache[next(iter(cache))]  # (the least recently read)
            cache[k] = items = got
        self._last = (k, items)
        return items

    @overload
    def __getitem__(self, i: int) -> T: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[T]: ...
    def __getitem__(self, i: int | slice) -> T | Sequence[T]:
        if isinstance(i, slice):
            return list(self)[i]
        k, j = self._where(i)
        return self._tail[j] if k == len(self._chunks) else self._chunk(k)[j]

    def __setitem__(self, i: int, item: T) -> None:
        k, j = self._where(i)
        if k == len(self._chunks):
            self._tail[j] = item
            return
        data = self._chunks[k]
        items: list[T] = self._unpacked(data)
        items[j] = item
        if not isinstance(data, list):
            self._chunks[k] = self._pack(items)  # (the old blob's bytes stay, unread)
            self._cache.pop(k, None)
        self._last = None

    def _where(self, i: int) -> tuple[int, int]:
        if not -self._n <= i < self._n:
            raise IndexError("index out of range")
        i %= self._n
        starts = self._starts
        if starts is None:
            return divmod(i, self._size)
        tail = self._n - len(self._tail)
        if i >= tail:
            return len(self._chunks), i - tail
        k = bisect_right(starts, i) - 1
        return k, i - starts[k]

    def __eq__(self, other: object) -> bool:
        return sequence_eq(self, other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        packed = sum(1 for c in self._chunks if not isinstance(c, list))
        return f"Packed({len(self)} items, {packed} chunks packed)"

    def close(self) -> None:
        """Remove the packed chunks' temporary file now rather than when the sequence is
        dropped (reading a packed chunk afterwards is an error)."""
        if self._blobs is not None:
            self._blobs.close()
        self._cache.clear()
        self._last = None

    def __reduce__(self) -> tuple[Any, ...]:
        # a copy for another process carries the items (its temporary file stays here)
        # (with where its chunks start, and its tail, when they are not all of one size)
        starts = self._starts
        bounds = None if starts is None else [*starts[1:], self._n - len(self._tail)]
        return (_repacked, (list(self), self._size, self._plain, self._rows, bounds))


def _repacked(
    items: list[T],
    chunk: int,
    plain: int,
    rows: type | None = None,
    bounds: list[int] | None = None,
) -> Packed[T]:
    """A sequence of ``items`` in chunks as :meth:`Packed.__reduce__` gave them: of
    ``chunk`` items each, or ending where ``bounds`` say (each chunk but the first, and
    the tail, starts at one)."""
    p: Packed[T] = Packed(chunk, plain, rows)
    ahead = iter(bounds or ())
    bound = next(ahead, None)
    for i, item in enumerate(items):
        while i == bound:
            if p._tail:  # (unless the chunk before was full)
                p._close_chunk()
            bound = next(ahead, None)
        p.append(item)
    if bound == len(items) and p._tail:
        p._close_chunk()
    return p


#: the first byte of a packed chunk: pickled (:func:`dumps`), columns by ``marshal``,
#: events by the event codec and ``marshal``, or events packed as a worker packs its batch
#: (:func:`_events_data`)
_PICKLED = b"P"
_COLUMNS = b"C"
_EVENTS = b"E"
_EVENTS_PACKED = b"K"


def _pack(items: list[T], rows: type | None = None) -> bytes:
    """A chunk's items, encoded: as columns by ``marshal`` when they are all of the
    class ``rows`` (named tuples, or strings) and hold only values marshal writes (their
    types kept: a bool stays a bool), else pickled."""
    if rows is not None and all(type(x) is rows for x in items):
        try:
            data = marshal_dumps(items if rows is str else list(zip(*items, strict=True)))
        except ValueError:  # (a value marshal does not write)
            pass
        else:
            return _COLUMNS + data
    events = _events_data(items)
    if events is not None:
        return events
    return _PICKLED + dumps(items)


def _events_data(items: list[Any]) -> bytes | None:
    """``items`` -- all typed events, or all pairs of a typed event and a plain value (the
    timeline's lookups, reasons and notes) -- packed as the log readers' workers pack their
    batches (``_event_codec.pack``: C, where the module is built; the parent's packing of a
    24 MB JAX log's lookups, reasons and notes 163 M instructions, 60 M packed), led by
    :data:`_EVENTS_PACKED`; else encoded by the event codec and marshalled, led by
    :data:`_EVENTS` (compiled code: the pickler's reducer ran interpreted for every object;
    packing a PyTorch/XLA lookup 13 us against 8, a JAX lookup 4.7 against 2.7, though JAX's
    read back slower, 2.6 against 1.8: pickle makes a key the items share once per chunk);
    None for other items, or values the codec does not know (then pickled)."""
    from recompile_doctor.parsers import _event_codec as codec

    classes = codec.CLASS_TAG
    if all(type(x) in classes for x in items):
        shape = 0
    elif all(
        type(x) is tuple
        and len(x) == 2
        and type(x[0]) in classes
        and type(x[1]) in codec.PLAIN_TYPES
        for x in items
    ):
        shape = 1
    else:
        return None
    got = codec.pack(items, None)
    if got is not None:
        return _EVENTS_PACKED + got[0]
    encode = codec.encode
    try:
        if shape == 0:
            rows: list[Any] = [encode(ev, None) for ev in items]
        else:
            rows = [[encode(ev, None), x] for ev, x in items]
        return _EVENTS + marshal_dumps((shape, rows))
    except (codec.Unencodable, ValueError):  # (ValueError: a value marshal does not write)
        return None


def _events_items(data: bytes | memoryview) -> list[Any]:
    """The items :func:`_events_data` encoded (not packed)."""
    from recompile_doctor.parsers._event_codec import decode

    shape, rows = marshal.loads(data)
    if shape == 0:
        return [decode(row, None) for row in rows]
    return [(decode(row[0], None), row[1]) for row in rows]


def _unpack(data: list[T] | Blob, rows: type | None = None) -> list[T]:
    """A chunk's items (a plain chunk is its own list); ``rows``: their class, as packed."""
    if isinstance(data, list):
        return data
    got = Blobs.get(data)
    body = memoryview(got)[1:]
    if got[:1] == _PICKLED:
        return loads(body)
    if got[:1] == _EVENTS:
        return _events_items(body)
    if got[:1] == _EVENTS_PACKED:
        from recompile_doctor.parsers._event_codec import unpack

        return unpack(got[1:], None)[0]
    columns = marshal.loads(body)
    if rows is None or rows is str:
        return list(columns)
    make = rows._make  # type: ignore[attr-defined]
    return list(map(make, zip(*columns, strict=True)))


own_abc_checks(Packed)  # (a compiled build's classes: see there)
