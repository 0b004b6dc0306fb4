"""Typed events as plain values for ``marshal``, and records of them in a file: how a
worker process hands its events to the parent (:mod:`recompile_doctor.parsers._parallel`).

Three times faster than pickle both ways: an event is ``[class, span, record, keep,
field, ...]``; a record shared by the events of one line stays shared; value objects
(compile keys, value changes) come back once per distinct value, shared as the timeline
shares its keys.  A value the encoding does not know raises :class:`Unencodable` (the
worker then fails, and the parent reads that part itself).

Where the C module is in use a worker's batch of events is packed by it instead, in one
call each way (:func:`pack`, :func:`unpack`: the events' slots written and made straight,
no list of the codec's); a batch it does not pack goes as the codec's items, each record
led by a byte that says which (:func:`batch_bytes`, :func:`batch_items`).
"""

from __future__ import annotations

import dataclasses
import marshal
import operator
import os
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import IO, Any, Final, NamedTuple, overload

from recompile_doctor import events as _events
from recompile_doctor.bounded import Kept
from recompile_doctor.compiled_modules import own_abc_checks
from recompile_doctor.events import CompileKey, Span, TypedEvent
from recompile_doctor.marshal_bytes import dumps as marshal_dumps
from recompile_doctor.model import Event, ValueChange
from recompile_doctor.parsers._decoding import RUN_MAX as RUN_MAX
from recompile_doctor.parsers._tuples import new_event, tuple_new
from recompile_doctor.slotted import MAKERS as _MAKERS
from recompile_doctor.slotted import maker_of

#: the values ``marshal`` writes as they are (a checkpoint's state is made of them too)
PLAIN: Final = (str, int, float, bool, bytes, type(None))
#: (the same, as a set: asked of a value's type in a few instructions of compiled code,
#: where ``in`` a tuple compares its items one by one)
PLAIN_TYPES: Final = frozenset(PLAIN)

_CLASSES: Final[tuple[type, ...]] = tuple(
    c
    for c in vars(_events).values()
    if isinstance(c, type) and issubclass(c, _events._Base) and c is not _events._Base
)
_CLASS_TAG: Final = {c: i for i, c in enumerate(_CLASSES)}
#: the classes of the typed events (the tag each is encoded with)
CLASS_TAG: Final = _CLASS_TAG
_FIELDS = {
    c: tuple(f.name for f in dataclasses.fields(c) if f.name not in ("span", "record", "keep"))
    for c in _CLASSES
}


def _getter(names: tuple[str, ...]) -> Callable[[Any], tuple[Any, ...]]:
    """The values of the attributes ``names`` of an object, as a tuple, in one call."""
    if len(names) > 1:
        return operator.attrgetter(*names)
    if names:
        one = operator.attrgetter(names[0])
        return lambda v: (one(v),)
    return lambda v: ()


#: per class, its fields after ``span``, ``record`` and ``keep``
_GET_FIELDS: Final = {c: _getter(names) for c, names in _FIELDS.items()}
#: value classes that events hold, encoded as [tag, (field, ...)] (tags below 0); a list as
#: [_LIST, item, ...], a tuple or dict holding anything but plain values as [_TUPLE, item,
#: ...] or [_DICT, {key: item}]; the shared empty detail as [_EMPTY_TAG]
_VALUES: Final[tuple[type, ...]] = (CompileKey, ValueChange)
_VALUE_TAG: Final = {c: -1 - i for i, c in enumerate(_VALUES)}
_VALUE_FIELDS = {c: tuple(f.name for f in dataclasses.fields(c)) for c in _VALUES}
_GET_VALUE_FIELDS: Final = {c: _getter(names) for c, names in _VALUE_FIELDS.items()}
_LIST: Final = 0
_TUPLE: Final = 1
_DICT: Final = 2
_EMPTY_TAG: Final = 3
_SAME_RECORD: Final = 0  # the record of the event before
_EMPTY: Final = Event("", "", 0, None, "").detail  # the shared empty detail


#: the value objects decoded lately, by their encoded fields: frozen, so one is shared by all
#: the events that hold an equal one (as the timeline shares its keys); a bounded table
#: (:class:`~recompile_doctor.bounded.Kept`), as the one below, both filled by the C codec
#: too (through their ``put``)
_MADE_KEPT: Final[Kept[tuple[Any, ...], Any]] = Kept()
_MADE: Final = _MADE_KEPT.table
#: the value objects encoded lately, by identity: (the object, its encoding)
_ENCODED_KEPT: Final[Kept[int, tuple[Any, list[Any]]]] = Kept()
_ENCODED: Final = _ENCODED_KEPT.table


class Unencodable(Exception):
    """An event holds a value the encoding does not know."""


def _plain(values: Iterable[Any]) -> bool:
    """Whether all of ``values`` are :data:`PLAIN` (compiled code runs this as a loop in C,
    with no generator: a ``map`` of ``type`` and a set's ``issuperset`` took four times as
    long)."""
    return all(type(x) in PLAIN_TYPES for x in values)


def _enc(v: Any) -> Any:
    t = type(v)
    if t in PLAIN_TYPES:
        return v
    if t is dict:
        if _plain(v.values()):
            return v
        return [_DICT, {k: _enc(x) for k, x in v.items()}]
    if t is tuple:
        if _plain(v):
            return v  # (as it is: decoded as it is)
        return [_TUPLE, *[_enc(x) for x in v]]
    if t is list:
        if _plain(v):
            return [_LIST, *v]
        return [_LIST, *[_enc(x) for x in v]]
    tag = _VALUE_TAG.get(t)
    if tag is not None:
        # (a key is one object shared by a function's every event: encoded once, and
        # written once a record, marshal writing an object met again as a reference)
        got = _ENCODED.get(id(v))
        if got is not None and got[0] is v:
            return got[1]
        fields = _GET_VALUE_FIELDS[t](v)
        out = [tag, fields if _plain(fields) else tuple([_enc(x) for x in fields])]
        # (holding v: its id is not another's meanwhile; its strings count as the key's)
        _ENCODED_KEPT.put(id(v), (v, out), out)
        return out
    if v is _EMPTY:
        return [_EMPTY_TAG]
    raise Unencodable(t.__name__)


def _dec(v: Any) -> Any:
    if type(v) is not list:
        return v  # a plain value, or a tuple or dict of plain values
    tag: int = v[0]  # (an int: compared in C by compiled code, not as objects)
    if tag == _LIST:
        return [_dec(x) for x in v[1:]]
    if tag == _TUPLE:
        return tuple([_dec(x) for x in v[1:]])
    if tag == _DICT:
        return {k: _dec(x) for k, x in v[1].items()}
    if tag == _EMPTY_TAG:
        return _EMPTY
    fields = v[1]
    cls = _VALUES[-1 - tag]
    try:
        got = _MADE.get(fields)  # the same key again (a function's every compilation)
    except TypeError:  # a field holding a list or a dict
        return _made(cls, tuple([_dec(x) for x in fields]))
    if got is None or type(got) is not cls:
        got = _MADE_KEPT.put(fields, _made(cls, tuple([_dec(x) for x in fields])))
    return got


def _made(cls: type, values: tuple[Any, ...]) -> Any:
    """An object of the slotted dataclass ``cls`` of these field values, by its maker
    (:mod:`recompile_doctor.slotted`: C where it is built), called here without the
    interpreted frame of ``rebuilt``."""
    make = _MAKERS.get(cls)
    if make is None:
        make = maker_of(cls)
    return make(values)


def _enc_record(r: Event) -> tuple[Any, ...]:
    kind, source, line, t, text, module, hsh, detail = r
    return (kind, source, line, t, text, module, hsh, _enc(detail))


def encode(ev: TypedEvent, before: Event | None) -> list[Any]:
    """``ev`` as marshal-able values; ``before``: the record of the event before (events of
    one line share theirs, and stay sharing it).  In C where the module is built
    (:func:`native_codec`), else :func:`encode_py`: the same items."""
    c = _NATIVE[0] if _NATIVE else native_codec()
    if c is None:
        return encode_py(ev, before)
    # (the C function taken out first: compiled code calls ``c.encode(...)`` as a method
    # of the named tuple, looked up on its class at each call)
    fn = c.encode
    got: list[Any] = fn(ev, before, c.enc_table)
    return got


def decode(item: list[Any], before: Event | None) -> TypedEvent:
    """The event :func:`encode` gave ``item`` for (in C as :func:`encode` is, else
    :func:`decode_py`)."""
    c = _NATIVE[0] if _NATIVE else native_codec()
    if c is None:
        return decode_py(item, before)
    fn = c.decode  # (as in encode)
    got: TypedEvent = fn(item, before, c.dec_table)
    return got


class NativeCodec(NamedTuple):
    """The C module's codec (``parsers/_native_codec.c``) and the tables it is called with:
    per class its tag (or class) and the plan of its slots (:mod:`recompile_doctor.slotted`),
    and the Python it hands what it does not do itself to; and its packing of a worker's
    batch (``parsers/_native_pack.c``: :func:`pack`, :func:`unpack`) and their tables."""

    encode: Callable[[TypedEvent, Event | None, tuple[Any, ...]], list[Any]]
    decode: Callable[[list[Any], Event | None, tuple[Any, ...]], TypedEvent]
    enc_table: tuple[Any, ...]
    dec_table: tuple[Any, ...]
    pack: Callable[[list[Any], Event | None, tuple[Any, ...]], tuple[bytes, Event | None] | None]
    unpack: Callable[[bytes, Event | None, tuple[Any, ...]], tuple[list[Any], Event | None]]
    pack_table: tuple[Any, ...]
    unpack_table: tuple[Any, ...]


#: the codec of :func:`native_codec`, once chosen ([None]: the Python's); tests set its item
_NATIVE: Final[list[NativeCodec | None]] = []


def native_codec() -> NativeCodec | None:
    """The C codec where the C module is built and not turned off
    (``RECOMPILE_DOCTOR_NATIVE=0``), else None: :func:`encode_py` and :func:`decode_py`."""
    if not _NATIVE:
        _NATIVE.append(_native_codec())
    return _NATIVE[0]


def _native_codec() -> NativeCodec | None:
    from recompile_doctor.parsers._spans import native_in_use
    from recompile_doctor.slotted import native_plan

    native = native_in_use()
    if native is None:
        return None

    def plans_of(
        classes: tuple[type, ...], fields: dict[type, tuple[str, ...]], lead: tuple[str, ...]
    ) -> list[Any]:
        # (the C reads the slots in the order of the fields: ``lead``, then those the Python
        # encodes)
        out = []
        for cls in classes:
            got = native_plan(cls)
            assert got is not None
            out.append(got[1])
            names = tuple(f.name for f in dataclasses.fields(cls))
            assert names == (*lead, *fields[cls]), names
        return out

    plans = plans_of(_CLASSES, _FIELDS, ("span", "record", "keep"))
    value_plans = plans_of(_VALUES, _VALUE_FIELDS, ())
    enc_table = (
        {cls: (_CLASS_TAG[cls], plan) for cls, plan in zip(_CLASSES, plans, strict=True)},
        {cls: (_VALUE_TAG[cls], plan) for cls, plan in zip(_VALUES, value_plans, strict=True)},
        _ENCODED,
        _ENCODED_KEPT.put,
        _enc,
        encode_py,
    )
    dec_table = (
        tuple(zip(_CLASSES, plans, strict=True)),
        Span,
        Event,
        tuple(zip(_VALUES, value_plans, strict=True)),
        _MADE,
        _MADE_KEPT.put,
        _EMPTY,
        _dec,
        decode_py,
    )
    pack_table = (
        enc_table[0],
        {cls: (i, plan) for i, (cls, plan) in enumerate(zip(_VALUES, value_plans, strict=True))},
        Span,
        Event,
        _EMPTY,
    )
    unpack_table = (dec_table[0], dec_table[3], Span, Event, _EMPTY, _MADE, _MADE_KEPT.put)
    return NativeCodec(
        native.codec_encode,
        native.codec_decode,
        enc_table,
        dec_table,
        native.pack_events,
        native.unpack_events,
        pack_table,
        unpack_table,
    )


#: the first byte of a worker's record of events: packed (:func:`pack`), or the items of
#: :func:`encode` by marshal
PACKED: Final = b"P"
ITEMS: Final = b"M"


def pack(items: list[Any], before: Event | None) -> tuple[bytes, Event | None] | None:
    """A worker's batch -- its events, and the items that are not events (lists:
    :data:`MISSED`'s, :data:`ENDING`'s) -- as bytes led by :data:`PACKED` (``before``: the
    record of the event before the first), and the last event's record; None where the C
    module is not in use or something in the batch is not packed there
    (``parsers/_native_pack.c``: a type it does not write).  Half the instructions of
    :func:`encode` and marshal on the worker's side, two thirds of marshal and
    :func:`decode` on the parent's (:func:`unpack`; 24 MB of JAX log: 342 -> 172 M, 394
    -> 256 M)."""
    c = _NATIVE[0] if _NATIVE else native_codec()
    if c is None:
        return None
    fn = c.pack  # (as in encode)
    return fn(items, before, c.pack_table)


def unpack(data: bytes, before: Event | None) -> tuple[list[Any], Event | None]:
    """The batch :func:`pack` gave ``data`` for: its events and other items, in order, and
    the last event's record (ValueError: the bytes are not a whole packed batch)."""
    c = _NATIVE[0] if _NATIVE else native_codec()
    if c is None:  # (a worker packs only where its parent, forked, has the module in use)
        raise ValueError("a packed batch, and no C module in use to unpack it")
    fn = c.unpack  # (as in encode)
    return fn(data, before, c.unpack_table)


def batch_bytes(items: list[Any], before: Event | None) -> tuple[bytes, Event | None]:
    """A worker's batch as it is written to its file: packed (:func:`pack`) where it can be,
    else led by :data:`ITEMS`, the marshalled list of each event's :func:`encode` and each
    other item as it is; and the last event's record."""
    got = pack(items, before)
    if got is not None:
        return got
    out: list[Any] = []
    for x in items:
        if type(x) is list:
            out.append(x)
        else:
            out.append(encode(x, before))
            before = x.record
    return ITEMS + marshal_dumps(out), before


def batch_items(data: bytes, before: Event | None) -> tuple[list[Any], Event | None]:
    """The events and other items of a batch :func:`batch_bytes` wrote, and the last event's
    record."""
    if data[:1] == PACKED:
        return unpack(data, before)
    if data[:1] != ITEMS:
        raise ValueError("a worker's record is neither packed nor items")
    out: list[Any] = []
    for item in marshal.loads(memoryview(data)[1:]):
        if item[0] in (MISSED, ENDING):
            out.append(item)
        else:
            ev = decode(item, before)
            before = ev.record
            out.append(ev)
    return out, before


def encode_py(ev: TypedEvent, before: Event | None) -> list[Any]:
    """:func:`encode` in Python."""
    cls = type(ev)
    rec = ev.record
    r: Any = None
    if rec is not None:
        r = _SAME_RECORD if rec is before else _enc_record(rec)
    out = [_CLASS_TAG[cls], tuple(ev.span), r, ev.keep]
    for v in _GET_FIELDS[cls](ev):
        out.append(v if type(v) in PLAIN_TYPES else _enc(v))
    return out


def decode_py(item: list[Any], before: Event | None) -> TypedEvent:
    """:func:`decode` in Python."""
    cls = _CLASSES[item[0]]
    r = item[2]
    rec: Event | None
    if r is None:
        rec = None
    elif type(r) is int:  # (_SAME_RECORD)
        rec = before
    elif type(r[7]) is list:
        rec = new_event(r[0], r[1], r[2], r[3], r[4], r[5], r[6], _dec(r[7]))
    else:  # (its detail plain: the tuple marshal gave, as the named tuple; as Event(*r))
        rec = _tuple_new(Event, r)
    # (its fields in their order: span, record, keep, then the class's own, as encoded; made
    # without __init__, in half the time of a frozen dataclass's: recompile_doctor.slotted)
    values = [_tuple_new(Span, item[1]), rec, item[3]]
    for k in range(4, len(item)):
        v = item[k]
        values.append(v if type(v) is not list else _dec(v))
    ev: TypedEvent = _made(cls, tuple(values))
    return ev


_tuple_new: Final = tuple_new


#: the tag of a record item that is not an event: the keys a worker's decoder missed on a
#: line (``[MISSED, line, [(attribute, key), ...]]``, before that line's events)
MISSED: Final = -1
#: the tag of the item a worker that read to the end writes before its decoder's ``finish``
#: (``[ENDING]``): a reader with a residue ends the input itself (:mod:`._checkpoint`)
ENDING: Final = -2


def put_record(f: IO[bytes], value: Any) -> None:
    """Write one record: its length, then its marshal encoding (``marshal.load`` from a
    file reads a few bytes at a time: ten times slower than ``loads`` of the record;
    written by the C writer where it is built: :mod:`recompile_doctor.marshal_bytes`)."""
    data = marshal_dumps(value)
    f.write(len(data).to_bytes(8, "little"))
    f.write(data)


class Dumped:
    """A value marshalled into a file already (``size`` bytes at byte ``pos`` of the file
    ``fd``): :func:`put_indexed` copies its bytes, and nobody holds the value meanwhile (a
    worker's checkpoints are whole states of its decoder: a dozen late ones held 50 MB in a
    worker of a 2 GB TensorFlow log)."""

    __slots__ = ("fd", "pos", "size")

    def __init__(self, fd: int, pos: int, size: int) -> None:
        self.fd, self.pos, self.size = fd, pos, size

    @classmethod
    def to(cls, f: IO[bytes], value: Any, most: int | None = None) -> Dumped | None:
        """``value`` marshalled to the end of the file ``f`` (None: it takes more than
        ``most`` bytes, and is not written)."""
        data = marshal.dumps(value)
        if most is not None and len(data) > most:
            return None
        pos = f.seek(0, os.SEEK_END)
        f.write(data)
        f.flush()
        return cls(f.fileno(), pos, len(data))

    def copy_to(self, f: IO[bytes]) -> None:
        """Write the value's bytes to ``f``, a piece at a time (a whole decoder state may
        take tens of megabytes)."""
        pos, end = self.pos, self.pos + self.size
        while pos < end:
            got = os.pread(self.fd, min(end - pos, _COPY_PIECE), pos)
            if not got:
                raise OSError("a dumped value is cut short")
            f.write(got)
            pos += len(got)


#: the bytes of a :class:`Dumped` value copied at once
_COPY_PIECE = 1 << 20


def put_indexed(f: IO[bytes], head: tuple[Any, ...], values: Sequence[Any]) -> None:
    """Write a record of ``head`` led by where each of ``values`` is (bytes after the end
    of that record) and how many bytes they take, then a record for each value: a reader
    takes the head alone, and a value when it needs it (:class:`Indexed`).  A
    :class:`Dumped` value's bytes are read from its file one at a time."""
    datas = [v if isinstance(v, Dumped) else marshal.dumps(v) for v in values]
    at: list[int] = []
    pos = 0
    for d in datas:
        at.append(pos)
        pos += 8 + (d.size if isinstance(d, Dumped) else len(d))
    put_record(f, (at, pos, *head))
    for d in datas:
        if isinstance(d, Dumped):
            f.write(d.size.to_bytes(8, "little"))
            d.copy_to(f)
        else:
            f.write(len(d).to_bytes(8, "little"))
            f.write(d)


class Indexed(Sequence[Any]):
    """The values :func:`put_indexed` wrote after a head, each read from the file when
    asked for (not held: a worker's late checkpoints are whole states of its decoder)."""

    __slots__ = ("_at", "_fd")

    def __init__(self, fd: int, at: Sequence[int]) -> None:
        self._fd = fd
        self._at = at

    @classmethod
    def at(cls, fd: int, pos: int) -> tuple[tuple[Any, ...], Indexed] | None:
        """The head written at byte ``pos`` (without its places) and its values (None:
        not all of it is there, the values included)."""
        got = record_at(fd, pos)
        if got is None:
            return None
        (places, size, *head), end = got
        if os.fstat(fd).st_size < end + size:
            return None
        return tuple(head), cls(fd, [end + a for a in places])

    def __len__(self) -> int:
        return len(self._at)

    @overload
    def __getitem__(self, i: int) -> Any: ...
    @overload
    def __getitem__(self, i: slice) -> list[Any]: ...
    def __getitem__(self, i: int | slice) -> Any:
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self)))]
        got = record_at(self._fd, self._at[i])
        if got is None:
            raise OSError("a record of the worker's file is cut short")
        return got[0]


#: events per record of an event file, and the most characters of their lines in one
#: record (a record is read and decoded at once: 4,096 events of 38 kB lines would be 150 MB).
#: Few: a record's objects are all alive while it is made (the worker) and taken (the
#: parent), and 256 events' stay in the CPU's caches where 4,096 events' (some 7 MB) did
#: not: reading the 250 MB JAX bench log, the parent's CPU time fell by about a quarter
#: (4,096: 5.4-8.1 s, 256: 3.9-5.2 s, in turns; 1,024 and 64-128 between), the worker's
#: by a sixth, for a few more instructions per record
BATCH = 256
BATCH_CHARS = 4 << 20


own_abc_checks(Indexed)  # (a compiled build's classes: see there)


class EventWriter:
    """Events to a file, :data:`BATCH` (or :data:`BATCH_CHARS` characters of their lines)
    to a record (:func:`batch_bytes`); ``count``: how many so far."""

    def __init__(self, f: IO[bytes]) -> None:
        self.f = f
        self.count = 0
        self._batch: list[Any] = []  # (the events, and the items that are not events)
        self._chars = 0
        self._last: Event | None = None  # the record of the last event written
        # (read once: a module's global is looked up in its dict at each use, a line's)
        self._most = BATCH
        self._most_chars = BATCH_CHARS

    def add(self, events: tuple[TypedEvent, ...]) -> None:
        # (a tuple: compiled, read by its items' places, where an iterable was iterated
        # through the generic protocol)
        batch = self._batch
        for ev in events:
            batch.append(ev)
            self._chars += len(ev.span.text)
            self.count += 1
        if len(batch) >= self._most or self._chars >= self._most_chars:
            self._put()
            self.f.flush()  # (the parent reads each record as soon as it is whole)

    def _put(self) -> None:
        data, self._last = batch_bytes(self._batch, self._last)
        self.f.write(len(data).to_bytes(8, "little"))
        self.f.write(data)
        self._batch = []
        self._chars = 0

    def missed(self, line: int, keys: list[tuple[object, ...]]) -> None:
        """The keys the decoder looked up on ``line`` and did not find (not an event: not
        counted), written before that line's events."""
        self._batch.append([MISSED, line, list(keys)])
        if len(self._batch) >= self._most:  # (a line without events adds none after it)
            self._put()
            self.f.flush()

    def ending(self) -> None:
        """What comes next is the decoder's ``finish`` (not an event: not counted)."""
        self._batch.append([ENDING])

    def flush(self) -> None:
        if self._batch:
            self._put()
        self.f.flush()


def record_at(fd: int, pos: int) -> tuple[Any, int] | None:
    """The record :func:`put_record` wrote at byte ``pos`` of the file ``fd`` and where the
    next one begins (None: not all of it is there, yet).  Reads with ``pread``: the file's
    offset, shared with the process that writes it, stays where it is."""
    got = bytes_at(fd, pos)
    if got is None:
        return None
    return marshal.loads(got[0]), got[1]


def bytes_at(fd: int, pos: int) -> tuple[bytes, int] | None:
    """The bytes of the record at byte ``pos`` of the file ``fd`` (:func:`record_at`'s,
    not read as marshal's)."""
    head = os.pread(fd, 8, pos)
    if len(head) < 8:
        return None
    n = int.from_bytes(head, "little")
    data = os.pread(fd, n, pos + 8)
    if len(data) < n:
        return None
    return data, pos + 8 + n


class Missed(NamedTuple):
    """What a worker's decoder looked up on ``line`` and did not find."""

    line: int
    keys: list[tuple[object, ...]]


#: what :func:`follow` gives where a worker's decoder ``finish`` begins
ENDED: Final = Missed(-1, [])


def follow(
    fd: int, exited: Callable[[], bool], skip: int, pauses: tuple[float, float]
) -> Iterator[list[TypedEvent] | Missed]:
    """The events a worker writes to the file ``fd`` (but the first ``skip``), as it writes
    them (a record at a time), until ``exited()`` says it is gone (then the rest): each run
    of events between the items that are not events as lists of at most :data:`RUN_MAX`
    (made when taken), each item that is not an event as a :class:`Missed`, or
    :data:`ENDED`.  ``pauses``: the seconds between looks at a file not yet written, first
    and at most.  (Compiled, where the interpreted loop took an event at a time.)"""
    pos = 0
    last: Event | None = None
    pause = pauses[0]
    while True:
        gone = exited()  # (before the read: a worker gone has written all)
        got = bytes_at(fd, pos)
        if got is None:
            if gone:
                return
            time.sleep(pause)
            pause = min(pause * 2, pauses[1])
            continue
        pause = pauses[0]
        pos = got[1]
        batch, last = batch_items(got[0], last)
        run: list[TypedEvent] = []
        for x in batch:
            if type(x) is list:  # (not an event)
                if run:
                    yield run
                    run = []
                yield Missed(x[1], x[2]) if x[0] == MISSED else ENDED
                continue
            if skip:
                skip -= 1
                continue
            run.append(x)
            if len(run) >= RUN_MAX:
                yield run
                run = []
        if run:
            yield run
