"""The driver's loop over the lines to decode: each line to its decoder, counted, its events
handed on in runs (compiled in a compiled build: it runs once per decoded line, and the loop
and its generator were interpreted Python; :mod:`recompile_doctor.parsers.logs` calls it,
and its interpreted generators then run once per run of events, not once per event)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Final, Protocol

from recompile_doctor.errors import RecompileDoctorError
from recompile_doctor.events import TypedEvent
from recompile_doctor.parsers._format import Counted, Decoded, Decoder

#: a log's format before any line is recognized
UNKNOWN_FORMAT = "unknown"
#: events handed on at most at once (:func:`decoded_runs`, a worker's events followed by
#: ``_event_codec.follow``): runs, so that the interpreted driver and the loop that feeds
#: the timeline run once per run, not once per event; short, so that memory stays flat
RUN_MAX: Final = 256


class Counter(Counted, Protocol):
    """What the driver counts the lines in (``logs.ParseCounter``), and the format it
    names."""

    format: str


class EventSink(Protocol):
    """Where a worker writes its part's events (``_event_codec.EventWriter``)."""

    def add(self, events: tuple[TypedEvent, ...]) -> None: ...

    def missed(self, line: int, keys: list[tuple[object, ...]]) -> None: ...


class Tally:
    """Decoded lines counted by the loop that decodes them, then added to a counter
    (:meth:`add_to`) before anyone reads it: a compiled loop adds to the fields of its own
    object, where a counter's (:class:`Counted`, an interpreted class) were read and set by
    name, some 600 instructions a line."""

    def __init__(self) -> None:
        self.recognized = 0
        self.unrecognized = 0
        self.malformed = 0

    def count(self, res: Decoded) -> None:
        """What one decoded line does to the counts (the driver's rule, and the workers')."""
        if res.status == "recognized":
            self.recognized += 1
        elif res.status == "malformed":
            self.malformed += 1
        else:
            self.unrecognized += 1

    def add_to(self, c: Counted) -> None:
        """Add the counts to ``c``'s, and start again from none."""
        if self.recognized:
            c.recognized += self.recognized
            self.recognized = 0
        if self.unrecognized:
            c.unrecognized += self.unrecognized
            self.unrecognized = 0
        if self.malformed:
            c.malformed += self.malformed
            self.malformed = 0


def count(res: Decoded, c: Counted) -> None:
    """What one decoded line does to the counters (:meth:`Tally.count`'s rule)."""
    t = Tally()
    t.count(res)
    t.add_to(c)


def decoded_runs(
    lines: Iterator[tuple[int, str]],
    decoder: Decoder,
    c: Counter,
    name: str,
    path: str,
    strict: bool,
) -> Iterator[list[TypedEvent]]:
    """The events of ``lines``, each line counted (:func:`count`), in runs of at most
    :data:`RUN_MAX`, none empty, in order; the first recognized line names the format
    ``name`` where none was; a malformed line is fatal with ``strict``.  The events of the
    lines before an error (that one, or one that reading or decoding raises) are given
    before it is raised."""
    run: list[TypedEvent] = []
    # (the lines counted here, and added to c whenever this generator gives control back:
    # before each run it hands on, on an error or an interruption, at its end)
    tally = Tally()
    named = c.format != UNKNOWN_FORMAT  # (the format is named at the first recognized line)
    try:
        for lineno, raw in lines:
            res: Decoded = decoder.decode(lineno, raw)
            tally.count(res)
            if res.status == "recognized":
                if not named:
                    c.format = name
                    named = True
            elif res.status == "malformed" and strict:
                raise RecompileDoctorError(res.problem or "malformed line", path=path, line=lineno)
            if res.events:
                run.extend(res.events)
                while len(run) >= RUN_MAX:  # (a line of many events: split)
                    tally.add_to(c)
                    yield run[:RUN_MAX] if len(run) > RUN_MAX else run
                    run = run[RUN_MAX:]
    except BaseException as e:  # (no finally: a compiled generator never runs one)
        tally.add_to(c)
        if run and isinstance(e, Exception):
            yield run
        raise
    tally.add_to(c)
    if run:
        yield run


def runs_of(events: Iterable[TypedEvent]) -> Iterator[list[TypedEvent]]:
    """``events`` in runs of at most :data:`RUN_MAX`, none empty, in order."""
    run: list[TypedEvent] = []
    for ev in events:
        run.append(ev)
        if len(run) >= RUN_MAX:
            yield run
            run = []
    if run:
        yield run


def runs_after(runs: Iterable[list[TypedEvent]], skip: int) -> Iterator[list[TypedEvent]]:
    """The events of ``runs`` but the first ``skip`` (given already), in the same runs, none
    empty."""
    for run in runs:
        if skip >= len(run):
            skip -= len(run)
            continue
        if skip > 0:
            run = run[skip:]
            skip = 0
        yield run


def decode_into(
    lines: Iterator[tuple[int, str]],
    decoder: Decoder,
    c: Counted,
    out: EventSink,
    missed: list[tuple[object, ...]],
    most: int,
) -> tuple[int, int]:
    """A worker's loop over its part (``_parallel.Team._work``): up to ``most`` more of
    ``lines`` decoded, each counted (:func:`count`), the keys its decoder looked up and
    missed on it (``missed``, which the decoder's recording tables fill) written to ``out``
    with its number and cleared, then its events.  Returns how many lines it decoded
    (fewer than ``most`` only where ``lines`` ended) and the number of the last one (-1:
    none); ``lines`` is left where it stopped, so the next call goes on from there."""
    n = 0
    lineno = -1
    if most <= 0:
        return 0, lineno
    tally = Tally()  # (added to c when this returns or raises: c is read between calls)
    try:
        for lineno, raw in lines:
            res: Decoded = decoder.decode(lineno, raw)
            tally.count(res)
            if missed:
                out.missed(lineno, missed)
                missed.clear()
            if res.events:  # (most lines have none: no call)
                out.add(res.events)
            n += 1
            if n >= most:
                break
    finally:
        tally.add_to(c)
    return n, lineno
