"""The named tuples the log decoders make for every line, made by ``tuple.__new__``.

A named tuple's own ``__new__`` is a Python function: called from compiled code, it is a
Python frame (about 1,200 instructions) for every decoded line (its :class:`Span`), every
recognized message (its :class:`Event`) and every recognized line with events (its
:class:`Decoded` answer): 2.3 % of the compiled reading of a JAX log.  These functions
take the same arguments and give equal tuples; compiled (as the decoders are in a compiled
build), they make the tuple in C.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from recompile_doctor.events import Span, TypedEvent
from recompile_doctor.model import Event
from recompile_doctor.parsers._format import RECOGNIZED, Decoded

#: ``tuple.__new__``, named once: compiled code calls it as a function, where
#: ``tuple.__new__(...)`` looks the method up on ``tuple`` at every call (a third of the
#: making of a span)
_new: Final = tuple.__new__

#: an event's detail when it has none (the named tuple's own default: one shared mapping)
_NO_DETAIL: Mapping[str, Any] = Event._field_defaults["detail"]


def new_span(
    source: str, line: int, text: str, t: float | None = None, rank: str | None = None
) -> Span:
    """``Span(source, line, text, t, rank)``."""
    return _new(Span, (source, line, text, t, rank))


def new_event(
    kind: str,
    source: str,
    line: int,
    t: float | None,
    text: str,
    module: str | None = None,
    hash: str | None = None,
    detail: Mapping[str, Any] = _NO_DETAIL,
) -> Event:
    """``Event(kind, source, line, t, text, module, hash, detail)``."""
    return _new(Event, (kind, source, line, t, text, module, hash, detail))


def recognized(events: list[TypedEvent]) -> Decoded:
    """The answer for a recognized line with these ``events``."""
    if not events:
        return RECOGNIZED
    return _new(Decoded, ("recognized", tuple(events), None))
