"""The driver's loop over the lines to decode: each line to its decoder, counted, its events
handed on (compiled in a compiled build: it runs once per decoded line, and the loop and its
generator were interpreted Python; :mod:`recompile_doctor.parsers.logs` calls it)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Protocol

from recompile_doctor.errors import RecompileDoctorError
from recompile_doctor.events import TypedEvent
from recompile_doctor.parsers._format import Counted, Decoded, Decoder

#: a log's format before any line is recognized
UNKNOWN_FORMAT = "unknown"


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


def decoded(
    lines: Iterator[tuple[int, str]],
    decoder: Decoder,
    c: Counter,
    name: str,
    path: str,
    strict: bool,
) -> Iterator[TypedEvent]:
    """The events of ``lines``, each line counted (:func:`count`); the first recognized
    line names the format ``name`` where none was; a malformed line is fatal with
    ``strict``."""
    for lineno, raw in lines:
        res: Decoded = decoder.decode(lineno, raw)
        count(res, c)
        if res.status == "recognized":
            if c.format == UNKNOWN_FORMAT:
                c.format = name
        elif res.status == "malformed" and strict:
            raise RecompileDoctorError(res.problem or "malformed line", path=path, line=lineno)
        yield from res.events


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
