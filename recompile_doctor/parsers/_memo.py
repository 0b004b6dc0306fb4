"""Bounded memos of pure per-message work (a message's regex fields, a module name's
function), shared by the decoders of one process.

A memo is a dict from the argument to the result, cleared when it holds ``limit`` entries
or string keys of :data:`KEY_CHARS` characters in all, and keeping no string key longer
than :data:`KEY_LONGEST` (a log of long distinct messages must not fill memory with them);
results must be immutable (tuples, strings, frozen objects).  :func:`set_enabled` turns every
memo off (and empties them), so a test can check that the events are the same either way.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Final, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

#: each memo's table and the count of the characters of its string keys
_MEMOS: Final[list[tuple[dict[object, object], list[int]]]] = []
_ENABLED: Final = [True]
#: the characters of string keys a memo holds at most (a memo of short messages holds a
#: few hundred thousand; 4,096 near-1-MiB lines would have held gigabytes)
KEY_CHARS = 1 << 21  # (not Final: a test patches it)
#: the longest string key a memo keeps (a longer one is worked out each time: it would take
#: a good part of :data:`KEY_CHARS`, and empty the memo again and again)
KEY_LONGEST = 4096  # (not Final: a test patches it)


def memo(fn: Callable[[K], V], limit: int = 4096) -> Callable[[K], V]:
    """``fn`` with a bounded memo (``fn`` must be pure and its results immutable)."""
    cache: dict[K, V] = {}
    chars = [0]  # (of the string keys held)
    _MEMOS.append((cache, chars))  # type: ignore[arg-type]
    enabled = _ENABLED
    missing = object()

    def get(key: K) -> V:
        v = cache.get(key, missing)
        if v is missing:
            v = fn(key)
            k: object = key
            n = len(k) if type(k) is str else 0
            if enabled[0] and n <= KEY_LONGEST:
                if len(cache) >= limit or chars[0] + n > KEY_CHARS:
                    cache.clear()
                    chars[0] = 0
                cache[key] = v
                chars[0] += n
        return v  # type: ignore[return-value]

    return get


def set_enabled(on: bool) -> None:
    """Turn every memo on or off (off: each call computes its result; the memos empty)."""
    _ENABLED[0] = on
    for table, chars in _MEMOS:
        table.clear()
        chars[0] = 0
