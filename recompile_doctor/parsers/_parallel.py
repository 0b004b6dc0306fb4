"""Two processes over one big log: the second half is decoded by a forked worker while the
parent decodes the first, and the parent takes the worker's events from the first line where
the two decoders are in the same state.

How the halves join (the *seam*): the worker starts at a line boundary ``split`` with a copy
of the parent's decoder as it was after the head of the input (detection's lines), so it
already knows what the head set up (the log's first time stamp, the folding) but not what
came between the head and the split (the clock, a block under way, the last step).  For its
first :data:`CHECKPOINTS` decoded lines it records the decoder's :func:`checkpoint` (its state
as plain values).  The parent decodes up to the split, then goes on past it with its own
(true) decoder, comparing its checkpoint after each line the worker recorded; at the first
line where the two are equal, everything after that line is what the worker decoded (the same
state, the same lines: the same events), so the parent stops reading and yields the worker's
events from there.  If the states never meet (or the worker failed), the parent simply decodes
the rest itself: the result is always the one-process result, only the time differs.

The worker writes its events to an anonymous temporary file, a compact marshal encoding of
the event objects (:func:`encode` / :func:`decode`: three times faster than pickle), read back
a batch at a time: memory stays flat.  The worker is forked (never spawned: it inherits the
primed decoder) only where that is safe: a POSIX system, a single-threaded process that is not
itself a pool worker, two or more usable CPUs.  ``RECOMPILE_DOCTOR_WORKERS=1`` turns it off.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import marshal
import os
import re
import sys
import threading
from collections.abc import Callable, Iterator, Mapping
from typing import IO, Any, BinaryIO

from recompile_doctor import events as _events
from recompile_doctor.events import CompileKey, Span, TypedEvent
from recompile_doctor.model import Event, ValueChange
from recompile_doctor.parsers._format import Decoded, Decoder
from recompile_doctor.parsers._reader import ReadStats
from recompile_doctor.parsers._scan import FastLines

#: inputs smaller than this are read by one process (a fork and a seam cost ~20 ms)
PARALLEL_MIN_BYTES = 48 << 20
#: the parent's share of the bytes after the head: it also builds the timeline from every
#: event, and decodes the worker's events back into objects
PARENT_SHARE = 0.51
#: the worker records its state after each of its first decoded lines, then after every
#: :data:`CHECKPOINT_EVERY`-th up to :data:`CHECKPOINTS` decoded lines (once the two
#: decoders are in the same state they stay so: a later checkpoint matches as well)
CHECKPOINTS = 5000
CHECKPOINTS_DENSE = 32
CHECKPOINT_EVERY = 64
#: events per marshal record of the worker's file
_BATCH = 4096
#: set to 1 to read every input with one process
WORKERS_ENV = "RECOMPILE_DOCTOR_WORKERS"


def one_process_per_input() -> None:
    """Read every input of this process with one process (a pool's worker: the pool has
    the CPUs)."""
    os.environ[WORKERS_ENV] = "1"


def eligible(f: BinaryIO, st: ReadStats) -> bool:
    """Whether the input ``f`` (opened for the first pass) gets a worker: a big regular
    file, neither compressed nor copied, in a process where forking is safe."""
    if not isinstance(f, io.BufferedReader) or not isinstance(f.raw, io.FileIO):
        return False  # (a gzip stream, a lone-CR view)
    if st.compressed or st.spooled or st.size is None or st.size < PARALLEL_MIN_BYTES:
        return False
    return usable()


def usable() -> bool:
    """Whether a worker may be forked here and now (see the module doc)."""
    if os.environ.get(WORKERS_ENV, "").strip() in ("0", "1"):
        return False
    if not hasattr(os, "fork") or sys.platform == "darwin":
        return False  # macOS: system libraries are not fork-safe
    if threading.active_count() != 1:
        return False
    import multiprocessing  # only here: not at every start

    if multiprocessing.current_process().daemon:
        return False  # a pool's worker (the fleet's): the pool has the CPUs
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    return cpus >= 2


def split_at(f: BinaryIO, bom: int, done: int, size: int) -> int | None:
    """Where the worker's part begins (after ``bom`` bytes of mark; the start of a line,
    :data:`PARENT_SHARE` of the way from ``done``, the bytes read so far); None when the
    input is too small for two parts."""
    rest = size - bom - done
    if rest <= 0:
        return None
    pos = bom + done + int(rest * PARENT_SHARE)
    fd = f.fileno()
    while pos < size:
        chunk = os.pread(fd, 1 << 16, pos)
        if not chunk:
            return None
        k = chunk.find(b"\n")
        if k >= 0:
            split = pos + k + 1 - bom
            return split if split < size - bom else None
        pos += len(chunk)
    return None


# -- the decoder's state as plain values ---------------------------------------------------
class Unsyncable(Exception):
    """A decoder holds state that cannot be compared (a callback under way)."""


_PLAIN = (str, int, float, bool, bytes, type(None))


def state_of(value: object) -> object:
    """``value`` as plain, comparable, marshal-able values (objects by their fields)."""
    if isinstance(value, _PLAIN):
        return value
    if isinstance(value, (tuple, list)):
        return (type(value).__name__, tuple(state_of(v) for v in value))
    if isinstance(value, Mapping):
        return ("{}", tuple((state_of(k), state_of(v)) for k, v in value.items()))
    if isinstance(value, (set, frozenset)):
        return ("set", tuple(sorted(repr(state_of(v)) for v in value)))
    if isinstance(value, re.Pattern):
        return ("re", value.pattern, value.flags)
    if callable(value):
        raise Unsyncable(type(value).__name__)
    slots = [s for c in type(value).__mro__ for s in getattr(c, "__slots__", ())]
    fields = dict(getattr(value, "__dict__", {}))
    for s in slots:
        if hasattr(value, s):
            fields[s] = getattr(value, s)
    if not fields and not slots:
        raise Unsyncable(type(value).__name__)
    return (type(value).__qualname__, tuple((k, state_of(v)) for k, v in sorted(fields.items())))


def checkpoint(decoder: Decoder) -> object:
    """The state of ``decoder`` that decides what it makes of the lines to come: its own
    ``checkpoint()`` where it has one, else all its attributes; None when it cannot be told
    (a put-off walk back is under way)."""
    own: Callable[[], object] | None = getattr(decoder, "checkpoint", None)
    try:
        if own is not None:
            return own()
        if getattr(decoder, "pending_last", None) is not None:
            return None
        return state_of(decoder)
    except Unsyncable:
        return None


# -- events as marshal-able values ----------------------------------------------------------
_CLASSES: tuple[type, ...] = tuple(
    c
    for c in vars(_events).values()
    if isinstance(c, type) and issubclass(c, _events._Base) and c is not _events._Base
)
_CLASS_TAG = {c: i for i, c in enumerate(_CLASSES)}
_FIELDS = {
    c: tuple(f.name for f in dataclasses.fields(c) if f.name not in ("span", "record", "keep"))
    for c in _CLASSES
}
#: value classes that events hold, encoded as [tag, (field, ...)] (tags below 0); a list as
#: [_LIST, item, ...], a tuple or dict holding anything but plain values as [_TUPLE, item,
#: ...] or [_DICT, {key: item}]; the shared empty detail as [_EMPTY_TAG]
_VALUES: tuple[type, ...] = (CompileKey, ValueChange)
_VALUE_TAG = {c: -1 - i for i, c in enumerate(_VALUES)}
_VALUE_FIELDS = {c: tuple(f.name for f in dataclasses.fields(c)) for c in _VALUES}
_LIST, _TUPLE, _DICT, _EMPTY_TAG = 0, 1, 2, 3
_SAME_RECORD = 0  # the record of the event before
_EMPTY = Event("", "", 0, None, "").detail  # the shared empty detail


#: the value objects decoded lately, by their encoded fields: frozen, so one is shared by all
#: the events that hold an equal one (as the timeline shares its keys)
_MADE: dict[tuple[Any, ...], Any] = {}
_MADE_MAX = 4096


class Unencodable(Exception):
    """An event holds a value the encoding does not know."""


def _enc(v: Any) -> Any:
    t = type(v)
    if t in _PLAIN:
        return v
    if t is tuple:
        if all(type(x) in _PLAIN for x in v):
            return v  # (as it is: decoded as it is)
        return [_TUPLE, *[_enc(x) for x in v]]
    if t is list:
        return [_LIST, *[_enc(x) for x in v]]
    tag = _VALUE_TAG.get(t)
    if tag is not None:
        return [tag, tuple([_enc(getattr(v, n)) for n in _VALUE_FIELDS[t]])]
    if v is _EMPTY:
        return [_EMPTY_TAG]
    if t is dict:
        if all(type(x) in _PLAIN for x in v.values()):
            return v
        return [_DICT, {k: _enc(x) for k, x in v.items()}]
    raise Unencodable(t.__name__)


def _dec(v: Any) -> Any:
    if type(v) is not list:
        return v  # a plain value, or a tuple or dict of plain values
    tag = v[0]
    if tag == _LIST:
        return [_dec(x) for x in v[1:]]
    if tag == _TUPLE:
        return tuple([_dec(x) for x in v[1:]])
    if tag == _DICT:
        return {k: _dec(x) for k, x in v[1].items()}
    if tag == _EMPTY_TAG:
        return _EMPTY
    fields = v[1]
    try:
        got = _MADE.get(fields)  # the same key again (a function's every compilation)
    except TypeError:  # a field holding a list or a dict
        return _VALUES[-1 - tag](*[_dec(x) for x in fields])
    if got is None or type(got) is not _VALUES[-1 - tag]:
        got = _VALUES[-1 - tag](*[_dec(x) for x in fields])
        if len(_MADE) >= _MADE_MAX:
            _MADE.clear()
        _MADE[fields] = got
    return got


def _enc_record(r: Event) -> tuple[Any, ...]:
    kind, source, line, t, text, module, hsh, detail = r
    return (kind, source, line, t, text, module, hsh, _enc(detail))


def encode(ev: TypedEvent, before: Event | None) -> list[Any]:
    """``ev`` as marshal-able values; ``before``: the record of the event before (events of
    one line share theirs, and stay sharing it)."""
    cls = type(ev)
    rec = ev.record
    r: Any = None
    if rec is not None:
        r = _SAME_RECORD if rec is before else _enc_record(rec)
    out = [_CLASS_TAG[cls], tuple(ev.span), r, ev.keep]
    for name in _FIELDS[cls]:
        out.append(_enc(getattr(ev, name)))
    return out


def decode(item: list[Any], before: Event | None) -> TypedEvent:
    """The event :func:`encode` gave ``item`` for."""
    cls = _CLASSES[item[0]]
    r = item[2]
    rec: Event | None
    if r is None:
        rec = None
    elif r == _SAME_RECORD and type(r) is int:
        rec = before
    else:
        rec = Event(r[0], r[1], r[2], r[3], r[4], r[5], r[6], _dec(r[7]))
    fields = [v if type(v) is not list else _dec(v) for v in item[4:]]
    ev: TypedEvent = cls(Span(*item[1]), rec, *fields, keep=item[3])
    return ev


# -- the worker ----------------------------------------------------------------------------
@dataclasses.dataclass(slots=True)
class Counts:
    recognized: int = 0
    unrecognized: int = 0
    malformed: int = 0


#: what one decoded line does to the counters (the driver's rule, shared with the worker)
def count(res: Decoded, c: Counts) -> None:
    if res.status == "recognized":
        c.recognized += 1
    elif res.status == "malformed":
        c.malformed += 1
    else:
        c.unrecognized += 1


class Worker:
    """A forked process decoding ``path`` from byte ``split`` (after ``bom`` bytes of mark)
    to the end; see the module doc."""

    def __init__(
        self,
        path: str,
        f: BinaryIO,
        bom: int,
        split: int,
        decoder: Decoder,
        lines: Callable[[BinaryIO, Decoder, Counts, int], FastLines],
    ) -> None:
        import signal  # (here: not at every start)
        import tempfile

        self.split = split
        # both closed by close() (or by WorkerResult.events_after)
        self._events: IO[bytes] = tempfile.TemporaryFile(prefix="recompile-doctor-")  # noqa: SIM115
        self._meta: IO[bytes] = tempfile.TemporaryFile(prefix="recompile-doctor-")  # noqa: SIM115
        self._status: int | None = None
        try:
            ident = os.fstat(f.fileno())
            self.pid = os.fork()
        except OSError:  # (no process to spare: the caller reads on alone)
            self._events.close()
            self._meta.close()
            raise
        if self.pid == 0:  # the worker: never returns
            code = 1
            try:
                signal.signal(signal.SIGINT, signal.SIG_DFL)
                self._work(path, (ident.st_dev, ident.st_ino), bom, decoder, lines)
                code = 0
            except BaseException:
                pass
            finally:
                os._exit(code)

    def _work(
        self,
        path: str,
        ident: tuple[int, int],
        bom: int,
        decoder: Decoder,
        lines: Callable[[BinaryIO, Decoder, Counts, int], FastLines],
    ) -> None:
        if hasattr(decoder, "pending_last"):
            decoder.pending_last = None  # the parent's walk back: not this process's
        with open(path, "rb", buffering=0) as f:
            st = os.fstat(f.fileno())
            if (st.st_dev, st.st_ino) != ident:
                return  # not the file the parent reads
            before = _newlines(f, bom + self.split)
            c = Counts()
            out = self._events
            batch: list[Any] = []
            cps: list[tuple[int, object, int, int, int, int]] = []
            n = 0
            last: Event | None = None
            fl = lines(f, decoder, c, before)
            for decoded, (lineno, raw) in enumerate(fl.lines(), 1):
                res = decoder.decode(lineno, raw)
                count(res, c)
                for ev in res.events:
                    batch.append(encode(ev, last))
                    last = ev.record
                n += len(res.events)
                if len(batch) >= _BATCH:
                    _put(out, batch)
                    batch = []
                if decoded <= CHECKPOINTS_DENSE or (
                    decoded <= CHECKPOINTS and decoded % CHECKPOINT_EVERY == 0
                ):
                    cp = checkpoint(decoder)
                    if cp is not None:
                        cps.append((lineno, cp, c.recognized, c.unrecognized, c.malformed, n))
            for ev in decoder.finish():
                batch.append(encode(ev, last))
                last = ev.record
            if batch:
                _put(out, batch)
            out.flush()
            totals = (c.recognized, c.unrecognized, c.malformed)
            read = (fl.lineno, fl.blocks.consumed - fl.blocks.lost)
            _put(self._meta, (before, cps, totals, read))
            self._meta.flush()

    def result(self) -> WorkerResult | None:
        """Wait for the worker; what it found (None when it failed)."""
        if self._status is None:
            _, status = os.waitpid(self.pid, 0)
            self._status = status
        if self._status != 0:
            self.close()
            return None
        self._meta.seek(0)
        try:
            before, cps, totals, (lines, nbytes) = _get(self._meta)
        except (EOFError, ValueError, TypeError):
            self.close()
            return None
        self._meta.close()
        return WorkerResult(before, cps, Counts(*totals), lines, nbytes, self._events)

    def close(self) -> None:
        """Stop the worker if it still runs; drop its files."""
        import signal

        if self._status is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)
            _, self._status = os.waitpid(self.pid, 0)
        self._events.close()
        self._meta.close()


def _put(f: IO[bytes], value: Any) -> None:
    """Write one record: its length, then its marshal encoding (``marshal.load`` from a
    file reads a few bytes at a time: ten times slower than ``loads`` of the record)."""
    data = marshal.dumps(value)
    f.write(len(data).to_bytes(8, "little"))
    f.write(data)


def _get(f: IO[bytes]) -> Any:
    """The next record :func:`_put` wrote; EOFError at the end."""
    head = f.read(8)
    if len(head) < 8:
        raise EOFError
    n = int.from_bytes(head, "little")
    data = f.read(n)
    if len(data) < n:
        raise EOFError
    return marshal.loads(data)


def _newlines(f: BinaryIO, end: int) -> int:
    """The newlines in the first ``end`` bytes of ``f``; leaves ``f`` at ``end``."""
    buf = bytearray(8 << 20)
    view = memoryview(buf)
    f.seek(0)
    n = done = 0
    while done < end:
        k = f.readinto(view[: min(len(buf), end - done)])  # type: ignore[attr-defined]
        if not k:
            break
        n += buf.count(b"\n", 0, k)
        done += k
    f.seek(end)
    return n


@dataclasses.dataclass(slots=True)
class WorkerResult:
    """What the worker found: lines before its part, its checkpoints ``(line, state,
    recognized, unrecognized, malformed, events so far)``, its totals, its events."""

    before: int
    checkpoints: list[tuple[int, object, int, int, int, int]]
    totals: Counts
    #: the number of the input's last line, and the bytes the worker read
    lines: int
    nbytes: int
    events_file: IO[bytes]

    def at(self) -> dict[int, int]:
        """Checkpoint index by line number."""
        return {cp[0]: i for i, cp in enumerate(self.checkpoints)}

    def events_after(self, skip: int) -> Iterator[TypedEvent]:
        """The worker's events but the first ``skip``; closes the file at the end."""
        f = self.events_file
        try:
            f.seek(0)
            last: Event | None = None
            while True:
                try:
                    batch = _get(f)
                except EOFError:
                    return
                for item in batch:
                    ev = decode(item, last)
                    last = ev.record
                    if skip:
                        skip -= 1
                        continue
                    yield ev
        finally:
            f.close()
