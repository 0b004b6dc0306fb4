"""Bounded memos of pure per-message work (a message's regex fields, a module name's
function), shared by the decoders of one process.

A memo is a table from the argument to the result that keeps the package's one rule of a
bounded table (:class:`recompile_doctor.bounded.Kept`: at most ``limit`` entries, no key of
more than :data:`~recompile_doctor.bounded.KEY_LONGEST` characters, emptied before its keys
would hold more than :data:`~recompile_doctor.bounded.KEY_CHARS`), so that a log of long
distinct messages does not fill memory with them; results must be immutable (tuples,
strings, frozen objects).  :func:`set_enabled` turns every memo off (and empties them), so
a test can check that the events are the same either way.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Final, TypeVar

from recompile_doctor.bounded import Kept

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

#: each memo's table
_MEMOS: Final[list[Kept[object, object]]] = []
_ENABLED: Final = [True]


def memo(fn: Callable[[K], V], limit: int = 4096) -> Callable[[K], V]:
    """``fn`` with a bounded memo (``fn`` must be pure and its results immutable)."""
    kept: Kept[K, V] = Kept(limit)
    cache = kept.table
    _MEMOS.append(kept)  # type: ignore[arg-type]
    enabled = _ENABLED
    missing = object()

    def get(key: K) -> V:
        v = cache.get(key, missing)
        if v is missing:
            v = fn(key)
            if enabled[0]:
                kept.put(key, v)
        return v  # type: ignore[return-value]

    return get


def set_enabled(on: bool) -> None:
    """Turn every memo on or off (off: each call computes its result; the memos empty)."""
    _ENABLED[0] = on
    for kept in _MEMOS:
        kept.clear()
