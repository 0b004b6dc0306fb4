"""The driver's loop over the lines to decode: each line to its decoder, counted, its events
handed on (compiled in a compiled build: it runs once per decoded line, and the loop and its
generator were interpreted Python; :mod:`recompile_doctor.parsers.logs` calls it)."""

from __future__ import annotations

from collections.abc import Iterator
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
