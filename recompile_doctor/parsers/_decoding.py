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

    def add(self, events: Iterable[TypedEvent]) -> None: ...

    def missed(self, line: int, keys: list[tuple[object, ...]]) -> None: ...


def count(res: Decoded, c: Counted) -> None:
    """What one decoded line does to the counters (the driver's rule, and the workers')."""
    if res.status == "recognized":
        c.recognized += 1
    elif res.status == "malformed":
        c.malformed += 1
    else:
        c.unrecognized += 1


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
    try:
        for lineno, raw in lines:
            res: Decoded = decoder.decode(lineno, raw)
            count(res, c)
            if res.status == "recognized":
                if c.format == UNKNOWN_FORMAT:
                    c.format = name
            elif res.status == "malformed" and strict:
                raise RecompileDoctorError(res.problem or "malformed line", path=path, line=lineno)
            if res.events:
                run.extend(res.events)
                while len(run) >= RUN_MAX:  # (a line of many events: split)
                    yield run[:RUN_MAX] if len(run) > RUN_MAX else run
                    run = run[RUN_MAX:]
    except Exception:
        if run:
            yield run
        raise
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
    for lineno, raw in lines:
        res: Decoded = decoder.decode(lineno, raw)
        count(res, c)
        if missed:
            out.missed(lineno, missed)
            missed.clear()
        out.add(res.events)
        n += 1
        if n >= most:
            break
    return n, lineno
