"""The report's events, kept out of memory: a long log has hundreds of thousands of them.

:class:`EventSpool` takes the events in the order they are recognized.  The first
:data:`SPOOL_AFTER` (or the first :data:`SPOOL_CHARS` characters of their lines) stay in
memory; beyond that they go, a chunk at a time, to an anonymous
temporary file in the system's temporary folder (never next to an input): the file has no
name, so it disappears when it is closed, when the report is dropped, or when the process
ends, whatever the way it ends.  :class:`ReportEvents` is what a report holds: the spooled
events in log order merged with the executable-load events, read back each time it is
iterated.
"""

from __future__ import annotations

import heapq
import itertools
import marshal
import pickle
from array import array
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, Final, cast, overload

from recompile_doctor.compiled_modules import own_abc_checks
from recompile_doctor.marshal_bytes import plain_rows, rows_dumps
from recompile_doctor.model import Event
from recompile_doctor.parsers._tuples import tuple_new
from recompile_doctor.timeline.blobs import Blob, Blobs

#: ``tuple.__new__`` or its C twin: an event made from its spooled row
_new: Final = tuple_new

#: events kept in memory before the spool goes to a temporary file
SPOOL_AFTER = 4096
#: events written (and read back) at once: few, for the events waiting in memory to be
#: written stay in the CPU's caches (as a worker's records: parsers/_event_codec.BATCH);
#: the 250 MB JAX bench log in turns, end to end: 2,048 4.6-6.7 s, 512 4.7-5.7 s, 256
#: 4.8-5.0 s
CHUNK = 512
#: characters of the events' lines kept in memory before the spool goes to its file, and
#: per chunk written: a line can be long (a ``TORCH_TRACE`` record, a dump of guards), and
#: 4,096 events of 38 kB lines are 150 MB
SPOOL_CHARS = 4 << 20
#: events kept in memory when the others are written: a decoder may give an event a few
#: events late (a reason once its compilation has begun), and it is put in its place there
RETAIN: Final = 8

_EventTuple = tuple[str, str, int, float | None, str, str | None, str | None, Mapping[str, Any]]
#: the order of the report's events: (the input's rank among the inputs, line)
EventKey = Callable[[Event], tuple[int, int]]


class EventSpool:
    """Events in arrival order, spilled to an anonymous temporary file past a threshold.

    It also notes whether the events came in log order (input by input, line by line), the
    order the report lists them in, so that they can be streamed back without sorting.  An
    event that comes after events of later lines of its input already written (a reason a
    decoder held to the end of its input) goes to a second spool, :attr:`late`, so that the
    others stay in order: the report merges the two streams instead of sorting them all in
    memory (the late ones are sorted in memory only if they are out of order themselves).
    """

    def __init__(self, spool_after: int | None = None, *, late: bool = True) -> None:
        """``late``: put events that come too late in a :attr:`late` spool (else: this is
        one, and keeps the arrival order exactly, putting no event back in its place)."""
        self._spool_after = SPOOL_AFTER if spool_after is None else spool_after
        # (read once: a module's global is looked up in its dict at each use, twice an event)
        self._chunk = CHUNK
        self._most_chars = SPOOL_CHARS
        self._buffer: list[Event] = []
        self._blobs = Blobs("recompile-doctor-events-")
        self._chunks: list[Blob] = []  # each written chunk
        #: each written chunk's last event's input and line
        self._chunk_last: list[tuple[str, int]] = []
        self._n = 0
        #: runs of consecutive events of one input: [source, first line, last line] (the
        #: last run's last line is _run_last until the run ends: :meth:`_end_run`)
        self._runs: list[list[Any]] = []
        self._run_source = ""  # the last run's input
        self._run_last = 0  # and its last line
        self._lines_sorted = True
        self._closed = False
        self._chars = 0  # of the lines of the events in the buffer
        self._text = 0  # of the lines of all the events taken (the late ones: theirs)
        self._late_ok = late
        #: the events that came too late for their place (see above), and for each the
        #: number of the others that came before it (its place in arrival order)
        self.late: EventSpool | None = None
        self._late_after = array("q")

    def __len__(self) -> int:
        return self._n + (len(self.late) if self.late is not None else 0)

    @property
    def spooled(self) -> bool:
        """True once events went to the temporary file."""
        return self._blobs.used

    @property
    def text_chars(self) -> int:
        """The characters of the lines of all the events taken, the late ones too."""
        return self._text + (self.late.text_chars if self.late is not None else 0)

    def append(self, ev: Event) -> None:
        # (the last run's input and last line in fields of their own, not in its list:
        # compiled, those were read, compared and set generically, 300 instructions an event)
        source, line = ev.source, ev.line
        if self._runs and source == self._run_source:
            if line >= self._run_last:
                self._run_last = line
                self._buffer.append(ev)
            elif not (self._late_ok and self._insert(ev)):
                if self._late_ok:
                    if self.late is None:
                        self.late = EventSpool(self._spool_after, late=False)
                    self.late.append(ev)
                    self._late_after.append(self._n)
                    return
                self._lines_sorted = False
                self._run_last = line
                self._buffer.append(ev)
        else:
            self._end_run()
            self._runs.append([source, line, line])
            self._run_source, self._run_last = source, line
            self._buffer.append(ev)
        self._n += 1
        chars = len(ev.text)
        self._chars += chars
        self._text += chars
        if (
            len(self._buffer) >= (self._chunk if self._chunks else self._spool_after)
            or self._chars >= self._most_chars
        ):
            self._spill()

    def _end_run(self) -> None:
        """The last run's last line, put in its list (:attr:`_runs`)."""
        if self._runs:
            self._runs[-1][2] = self._run_last

    def _insert(self, ev: Event) -> bool:
        """Put ``ev``, which comes after an event of a later line of its input (a decoder
        gives a reason once the compilation it explains has begun), where a stable sort
        would put it: after the last event of a line up to its own.  False when that place
        is not among the events still in memory (nor was written before them): then it is
        one of the :attr:`late` ones."""
        buf = self._buffer
        k = len(buf)
        while k > 0:
            before = buf[k - 1]
            if before.source != ev.source:
                return False
            if before.line <= ev.line:
                buf.insert(k, ev)
                # a late event that came before this one, placed after the events it
                # shifted, keeps its place in arrival order
                at, after = self._n - len(buf) + 1 + k, self._late_after
                j = len(after) - 1
                while j >= 0 and after[j] > at:
                    after[j] += 1
                    j -= 1
                return True
            k -= 1
        return False

    def _spill(self) -> None:
        buf = self._buffer
        # the last few stay, so that an event coming a little late can still be put in its
        # place (:meth:`_insert`)
        out, kept = buf[:-RETAIN], buf[-RETAIN:]
        kept_chars = sum(len(e.text) for e in kept)
        # (the events as tuples of any items, their fields read by place: compiled code
        # checks each field of an Event it reads against its type)
        events = cast(list[tuple[Any, ...]], out)
        chunk, most = self._chunk, self._most_chars
        # each chunk the events themselves, their rows as _chunk_bytes writes them (a chunk
        # is read back at once: it is bounded in events and in the text of their lines)
        chunks: list[list[tuple[Any, ...]]] = []
        if len(events) <= chunk and self._chars - kept_chars < most:
            if events:  # (each spill but the first: one chunk, no loop over its events)
                chunks.append(events)
        else:
            rows: list[tuple[Any, ...]] = []
            chars = 0
            for e in events:
                rows.append(e)
                chars += len(e[4])  # (its text)
                if len(rows) >= chunk or chars >= most:
                    chunks.append(rows)
                    rows = []
                    chars = 0
            if rows:
                chunks.append(rows)
        for rows in chunks:
            self._write_chunk(rows)
        self._buffer = kept
        self._chars = kept_chars

    def _write_chunk(self, rows: list[tuple[Any, ...]]) -> None:
        self._chunks.append(self._blobs.put(_chunk_bytes(rows)))
        last = rows[-1]
        self._chunk_last.append((last[1], last[2]))

    def in_order(self, order: Mapping[str, int]) -> bool:
        """True when the events came sorted by (``order`` of their input, line)."""
        if not self._lines_sorted:
            return False
        self._end_run()
        prev: tuple[int, int] | None = None
        for source, first, last in self._runs:
            rank = order.get(source, 0)
            if prev is not None and (rank, first) < prev:
                return False
            prev = (rank, last)
        return True

    def __iter__(self) -> Iterator[Event]:
        """The events in arrival order."""
        if self.late is None:
            yield from self.main()
            return
        late = iter(self.late)
        after = iter(self._late_after)
        nxt = next(after, None)
        for k, ev in enumerate(self.main()):
            while nxt is not None and nxt <= k:
                yield next(late)
                nxt = next(after, None)
            yield ev
        yield from late

    def main(self) -> Iterator[Event]:
        """The events in arrival order, without the :attr:`late` ones."""
        for part in self.main_parts():
            if isinstance(part, Event):
                yield part
            else:  # (a loop here: a generator yielded from costs a call an event)
                for row in part[0].rows():
                    yield _new(Event, row)

    def main_parts(self) -> Iterator[tuple[SpooledChunk, str, int] | Event]:
        """:meth:`main` with each written chunk as it was written, with its last event's
        input and line, then the events still in memory."""
        if self._closed:
            raise ValueError("the events' temporary file was closed")
        for blob, (source, line) in zip(self._chunks, self._chunk_last, strict=True):
            # (the file's offset stays where it is, for a forked process reading the same
            # file -- :mod:`recompile_doctor.events_json`)
            yield (SpooledChunk(Blobs.get(blob)), source, line)
        yield from list(self._buffer)

    def close(self) -> None:
        """Remove the temporary file (reading the events afterwards is an error)."""
        if self._chunks:
            self._blobs.close()
            self._closed = True
        if self.late is not None:
            self.late.close()


#: the first byte of a written chunk: its rows by ``marshal``, or pickled
_MARSHALLED: Final = b"M"
_PICKLED: Final = b"P"


def _chunk_bytes(rows: list[tuple[Any, ...]]) -> bytes:
    """A chunk's rows (events: named tuples, which the C writer takes as they are) as
    written, each a plain tuple with a dictionary of its detail: by ``marshal`` when they hold only the plain values it
    writes (their exact types kept: a bool stays a bool, a tuple a tuple; a JAX log's rows
    are written in 60 % of the pickler's time and read back in 40 %), else pickled (a
    detail holding a value of another type: an enum, an object of a test's)."""
    data = rows_dumps(rows)
    if data is not None:
        return _MARSHALLED + data
    # (each detail a dictionary: another mapping, copied, is written as one)
    plain = [r if type(r[7]) is dict else (*r[:7], dict(r[7])) for r in plain_rows(rows)]
    try:
        return _MARSHALLED + marshal.dumps(plain)
    except ValueError:  # (a value marshal does not write)
        return _PICKLED + pickle.dumps(plain, protocol=pickle.HIGHEST_PROTOCOL)


def _chunk_rows(data: bytes) -> list[_EventTuple]:
    """The rows :func:`_chunk_bytes` wrote."""
    body = memoryview(data)[1:]
    rows: list[_EventTuple] = marshal.loads(body) if data[:1] == _MARSHALLED else pickle.loads(body)
    return rows


class SpooledChunk:
    """A chunk of spooled events as :func:`_chunk_bytes` wrote it (``data``), for a reader
    of those bytes themselves (the events' JSON writer: ``json_text.chunk_text``); its
    :meth:`rows` are the events' values (:class:`~recompile_doctor.model.Event`'s order)."""

    __slots__ = ("data",)

    def __init__(self, data: bytes) -> None:
        self.data = data

    def rows(self) -> list[_EventTuple]:
        return _chunk_rows(self.data)

    def events(self) -> Iterator[Event]:
        # (``tuple.__new__`` or its C twin: a row is the event's eight values, as _spill
        # made it; the named tuple's own ``__new__`` takes twice as long)
        return (_new(Event, row) for row in self.rows())


class ReportEvents(Sequence[Event]):
    """The report's events in log order: the spooled events merged with ``extra`` (the
    executable-load events), read back from the spool on each iteration.

    Equal to any sequence holding the same events in the same order.
    """

    def __init__(self, spool: EventSpool, extra: Sequence[Event], order: Mapping[str, int]) -> None:
        self._order = dict(order)
        self._extra = tuple(sorted(extra, key=self._key))
        self._spool = spool
        self._sorted: tuple[Event, ...] | None = None
        #: the late events (see EventSpool), sorted in memory when out of order themselves
        self._late: Iterable[Event] = ()
        if not spool.in_order(self._order):
            # out of log order (never seen from the parsers): sort in memory, as before
            self._sorted = tuple(sorted(spool, key=self._key))
            spool.close()
        elif spool.late is not None:
            late = spool.late
            self._late = late if late.in_order(self._order) else tuple(sorted(late, key=self._key))

    def _key(self, e: Event) -> tuple[int, int]:
        return (self._order.get(e.source, 0), e.line)

    def __len__(self) -> int:
        return len(self._spool) + len(self._extra)

    def __iter__(self) -> Iterator[Event]:
        if self._sorted is not None:
            first: Iterator[Event] = iter(self._sorted)
        elif self._late:
            # a late event's line is before the line of every event that came after it in
            # the main stream: of two on the same line, the one that came first comes first
            first = heapq.merge(self._spool.main(), self._late, key=self._key)
        else:
            first = self._spool.main()
        if not self._extra:
            return first
        # stable: of two events on the same line, the spooled one first (as a sort would)
        return heapq.merge(first, self._extra, key=self._key)

    def parts(self) -> Iterator[SpooledChunk | Event]:
        """The events in the order of iterating, each spooled chunk that no other event
        comes in the middle of as it was written (:class:`SpooledChunk`), the other events
        one by one."""
        if self._sorted is not None:
            yield from self._sorted
            return
        key = self._key
        # (merged as __iter__ merges, the late events and the loads first: of events of one
        # line, a spooled one comes first, then a late one, then a load)
        others = iter(heapq.merge(self._late, self._extra, key=key) if self._late else self._extra)
        nxt = next(others, None)
        for part in self._spool.main_parts():
            if isinstance(part, Event):
                evs: Iterable[Event] = (part,)
            else:
                chunk, source, line = part
                if nxt is None or key(nxt) >= (self._order.get(source, 0), line):
                    yield chunk  # (its events, in log order, all come before the next other)
                    continue
                evs = chunk.events()
            for ev in evs:
                at = key(ev)
                while nxt is not None and key(nxt) < at:
                    yield nxt
                    nxt = next(others, None)
                yield ev
        while nxt is not None:
            yield nxt
            nxt = next(others, None)

    @overload
    def __getitem__(self, i: int) -> Event: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[Event]: ...
    def __getitem__(self, i: int | slice) -> Event | Sequence[Event]:
        if isinstance(i, slice):
            return tuple(self)[i]
        n = len(self)
        if not -n <= i < n:
            raise IndexError("event index out of range")
        return next(itertools.islice(iter(self), i % n, None))

    def __bool__(self) -> bool:
        return len(self) > 0

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, str):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]

    def __reduce__(self) -> tuple[type[tuple[Event, ...]], tuple[tuple[Event, ...]]]:
        # a copy for another process carries the events themselves (as a tuple)
        return (tuple, (tuple(self),))

    def __repr__(self) -> str:
        where = "spooled" if self._spool.spooled else "in memory"
        return f"ReportEvents({len(self)} events, {where})"

    @property
    def spooled(self) -> bool:
        """True when the events are read back from a temporary file."""
        return self._spool.spooled

    @property
    def text_chars(self) -> int:
        """The characters of the events' lines (counted as they were taken: not read back)."""
        return self._spool.text_chars + sum(len(e.text) for e in self._extra)

    def close(self) -> None:
        """Remove the temporary file now rather than when the report is dropped."""
        self._spool.close()


own_abc_checks(ReportEvents)  # (a compiled build's classes: see there)
