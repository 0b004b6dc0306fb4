"""Bounded memos of pure per-message work (a message's regex fields, a module name's
function), shared by the decoders of one process.

A memo is a dict from the argument to the result, cleared when it holds ``limit`` entries;
results must be immutable (tuples, strings, frozen objects).  :func:`set_enabled` turns every
memo off (and empties them), so a test can check that the events are the same either way.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Final, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

_MEMOS: Final[list[dict[object, object]]] = []
_ENABLED: Final = [True]


def memo(fn: Callable[[K], V], limit: int = 4096, longest: int = -1) -> Callable[[K], V]:
    """``fn`` with a bounded memo (``fn`` must be pure and its results immutable); a key
    that is a string longer than ``longest`` characters (if given) is not kept, so that
    ``limit`` such keys cannot hold much memory."""
    cache: dict[K, V] = {}
    _MEMOS.append(cache)  # type: ignore[arg-type]
    enabled = _ENABLED
    missing = object()

    def get(key: K) -> V:
        v = cache.get(key, missing)
        if v is missing:
            v = fn(key)
            k: object = key
            if enabled[0] and not (longest >= 0 and type(k) is str and len(k) > longest):
                if len(cache) >= limit:
                    cache.clear()
                cache[key] = v
        return v  # type: ignore[return-value]

    return get


def set_enabled(on: bool) -> None:
    """Turn every memo on or off (off: each call computes its result; the memos empty)."""
    _ENABLED[0] = on
    for m in _MEMOS:
        m.clear()
