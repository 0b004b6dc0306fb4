"""``marshal``'s bytes of the plain values the workers and the spool write, by the C module
(``parsers/_native_marshal.c``) where it is built.

A worker's events travel to the parent as marshalled lists, and the spool writes its
events' rows the same way: ``marshal.dumps`` spent about 130 instructions an object there,
the C writer 85, and it takes the spool's rows as the named tuples they are (marshal takes
no subclass: each row was copied into a plain tuple first).  What ``marshal.loads`` reads
back is the same either way (equal values of the same types, an object written twice read
back as one); where the C writer does not write a value, ``marshal.dumps`` does, or raises
its ``ValueError``.
"""

from __future__ import annotations

import marshal
from collections.abc import Callable, Sequence
from typing import Any, Final

_Writer = Callable[[Any, bool], bytes | None]


def _chosen() -> _Writer | None:
    from recompile_doctor.parsers._spans import native_in_use

    mod = native_in_use()
    if mod is None:
        return None
    writer: _Writer = mod.marshal_dumps
    return writer


#: the C writer (None: the C module is not built, or it is turned off)
_NATIVE: Final = _chosen()

#: whether :func:`rows_dumps` takes named tuples as they are (the C writer's); without it
#: the caller hands plain tuples (copying them as it makes the rows costs no more)
TAKES_NAMED_ROWS: Final = _NATIVE is not None


def dumps(value: Any) -> bytes:
    """Bytes that ``marshal.loads`` reads back as it reads ``marshal.dumps(value)`` (that
    function's ``ValueError`` for a value it does not write)."""
    native = _NATIVE
    if native is not None:
        got = native(value, False)
        if got is not None:
            return got
    return marshal.dumps(value)


def rows_dumps(rows: list[tuple[Any, ...]]) -> bytes | None:
    """:func:`dumps` of ``rows`` with each row a plain tuple of its items (a named tuple
    among them written as one); None where the C writer does not write them (or is not
    built): the caller then writes plain copies of them by ``marshal`` or otherwise."""
    native = _NATIVE
    if native is None:
        return None
    return native(rows, True)


def plain_rows(rows: Sequence[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """``rows`` each as a plain tuple (a named tuple's slice is one)."""
    return [r if type(r) is tuple else r[:] for r in rows]
