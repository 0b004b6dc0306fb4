"""The named tuples the log decoders make for every line, made by ``tuple.__new__``.

A named tuple's own ``__new__`` is a Python function: called from compiled code, it is a
Python frame (about 1,200 instructions) for every decoded line (its :class:`Span`), every
recognized message (its :class:`Event`) and every recognized line with events (its
:class:`Decoded` answer): 2.3 % of the compiled reading of a JAX log.  These functions
take the same arguments and give equal tuples; compiled (as the decoders are in a compiled
build), they make the tuple in C.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final, Protocol, TypeVar, cast

from recompile_doctor.events import Span, TypedEvent
from recompile_doctor.model import Event
from recompile_doctor.parsers._format import RECOGNIZED, Decoded
from recompile_doctor.parsers._spans import native_in_use

_T = TypeVar("_T", bound=tuple[Any, ...])


class TupleNew(Protocol):
    """``tuple.__new__``'s signature: ``(cls, items) -> cls(*items)`` for a named tuple."""

    def __call__(self, cls: type[_T], items: Iterable[Any], /) -> _T: ...


def chosen_tuple_new() -> TupleNew:
    """The C module's ``tuple_new`` (``parsers/_native.c``: the same object as
    ``tuple.__new__``'s, made without copying the items twice) where the module is built,
    unless :data:`NATIVE_ENV` is "0"; ``tuple.__new__`` otherwise."""
    native = native_in_use()
    if native is None:
        return cast(TupleNew, tuple.__new__)
    return cast(TupleNew, native.tuple_new)


#: ``tuple.__new__`` or its C twin, named once: the named tuples of every decoded line and
#: event are made by it (compiled code calls it as a function, where ``tuple.__new__(...)``
#: looks the method up on ``tuple`` at every call)
tuple_new: Final = chosen_tuple_new()


class TupleOf(Protocol):
    """The C module's ``tuple_of``: ``(cls, *items) -> tuple.__new__(cls, items)``."""

    def __call__(self, cls: type[_T], /, *items: Any) -> _T: ...


#: the C module's ``tuple_of`` where it is in use (the items passed as the call's own
#: arguments: no tuple of them made to be copied, some 200 instructions a named tuple),
#: else None: ``tuple_new`` with a tuple of them
tuple_of: Final[TupleOf | None] = cast("TupleOf | None", getattr(native_in_use(), "tuple_of", None))

#: the classes made here, as constants (compiled code looks an imported name up in the
#: module's dictionary at each use: a lookup for every decoded line)
_SPAN: Final = Span
_EVENT: Final = Event
_DECODED: Final = Decoded
_RECOGNIZED: Final = RECOGNIZED

#: an event's detail when it has none (the named tuple's own default: one shared mapping)
_NO_DETAIL: Final[Mapping[str, Any]] = Event._field_defaults["detail"]


def new_span(
    source: str, line: int, text: str, t: float | None = None, rank: str | None = None
) -> Span:
    """``Span(source, line, text, t, rank)``."""
    if tuple_of is not None:
        return tuple_of(_SPAN, source, line, text, t, rank)
    return tuple_new(_SPAN, (source, line, text, t, rank))


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
    if tuple_of is not None:
        return tuple_of(_EVENT, kind, source, line, t, text, module, hash, detail)
    return tuple_new(_EVENT, (kind, source, line, t, text, module, hash, detail))


def recognized(events: list[TypedEvent]) -> Decoded:
    """The answer for a recognized line with these ``events``."""
    if not events:
        return _RECOGNIZED
    if tuple_of is not None:
        return tuple_of(_DECODED, "recognized", tuple(events), None)
    return tuple_new(_DECODED, ("recognized", tuple(events), None))
