"""The package's one bounded insert: a table filled a piece at a time, looked up by its
owner with a dictionary look-up (cheaper than a memo's call in compiled code), and emptied
when it holds its bound.

The log decoders keep their pieces in such tables (stamps' minutes and heads, prefixes'
rests, messages), the event codec its keys, the JSON writer its objects' pieces and names,
the timeline builder its compilation keys.  A module of its own, importing nothing of the
package, so that each of them may use it whatever its layer; compiled in a compiled build.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Final, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

#: the entries a table of :func:`kept` holds at most (unless it says otherwise)
KEPT_MAX: Final = 4096


def kept(table: dict[K, V], key: K, value: V, most: int = KEPT_MAX) -> V:
    """``value``, put in ``table`` under ``key``, the table emptied first when it holds
    ``most`` entries."""
    if len(table) >= most:
        table.clear()
    table[key] = value
    return value
