"""A decoder's state as plain values: two decoders whose checkpoints are equal make the
same events of the same lines from there on (:mod:`recompile_doctor.parsers._parallel`).

The state is every attribute of the decoder, recursively (objects by their fields, in name
order).  A dictionary the decoder only looks up (never iterates) may be named in its class's
``UNORDERED_STATE``: two decoders that learnt the same entries in another order are then in
the same state.  Anything that cannot be compared (a callback under way, an object without
fields) makes the checkpoint None: it then never equals another, and the worker's part is
read again by the process that has the true state -- never a wrong result, only a slower
one.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from recompile_doctor.parsers._event_codec import PLAIN
from recompile_doctor.parsers._format import Decoder


class Unsyncable(Exception):
    """A decoder holds state that cannot be compared (a callback under way)."""


def state_of(value: object) -> object:
    """``value`` as plain, comparable, marshal-able values (objects by their fields)."""
    if isinstance(value, PLAIN):
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
    unordered: frozenset[str] = getattr(type(value), "UNORDERED_STATE", frozenset())
    return (
        type(value).__qualname__,
        tuple(
            (k, _unordered(v) if k in unordered else state_of(v)) for k, v in sorted(fields.items())
        ),
    )


def _unordered(value: object) -> object:
    """The state of a mapping whose order makes no difference (only looked up, never
    iterated): its items sorted."""
    if not isinstance(value, Mapping):
        return state_of(value)
    return ("{}", tuple(sorted(((state_of(k), state_of(v)) for k, v in value.items()), key=repr)))


def checkpoint(decoder: Decoder) -> object:
    """The state of ``decoder`` that decides what it makes of the lines to come; None when
    it cannot be told (a put-off walk back is under way)."""
    if getattr(decoder, "pending_last", None) is not None:
        return None
    try:
        return state_of(decoder)
    except Unsyncable:
        return None


#: the kinds of state (:func:`state_of`) whose length :func:`sizes` compares
_SIZED = ("{}", "list", "set")


def sizes(decoder: Decoder) -> tuple[int | None, ...]:
    """The length of each dictionary, list and set the decoder holds (None for any other
    attribute), in the order of its checkpoint's fields: read in a few microseconds, where
    the whole state of a decoder that learnt thousands of names takes milliseconds.  Two
    decoders whose sizes differ are in different states (:func:`sizes_of`)."""
    fields = dict(getattr(decoder, "__dict__", {}))
    for c in type(decoder).__mro__:
        for s in getattr(c, "__slots__", ()):
            if hasattr(decoder, s):
                fields[s] = getattr(decoder, s)
    out: list[int | None] = []
    for _name, v in sorted(fields.items()):
        # (as state_of tells them: any mapping or set, a list but not a subclass of one)
        if isinstance(v, (Mapping, set, frozenset)) or type(v) is list:
            out.append(len(v))
        else:
            out.append(None)
    return tuple(out)


def sizes_of(state: object) -> tuple[int | None, ...] | None:
    """:func:`sizes` of the decoder whose checkpoint is ``state`` (None: not a decoder's)."""
    if not (isinstance(state, tuple) and len(state) == 2 and isinstance(state[1], tuple)):
        return None
    out: list[int | None] = []
    for field in state[1]:
        v = field[1]
        sized = isinstance(v, tuple) and len(v) == 2 and v[0] in _SIZED and isinstance(v[1], tuple)
        out.append(len(v[1]) if sized else None)
    return tuple(out)
