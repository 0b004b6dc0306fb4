"""The package's one bounded table: filled a piece at a time, looked up by its owner with a
dictionary look-up (cheaper than a memo's call in compiled code), and emptied when it holds
its bound of entries or of characters.

The log decoders keep their pieces in such tables (stamps' minutes and heads, prefixes'
rests, messages), their memos their results (:mod:`recompile_doctor.parsers._memo`), the
event codec its keys (in Python and in C), the JSON writer its objects' pieces and names,
the timeline builder its compilation keys and one copy of its lines.  Every one keeps the
same rule: at most :data:`KEPT_MAX` entries (unless it says otherwise), no key holding more
than :data:`KEY_LONGEST` characters, and the table emptied before its keys would hold more
than :data:`KEY_CHARS` in all -- so that a log of long distinct names or lines fills no
table with them (4,096 entries of 8,000-character names are 32 MB a table; of a MiB, 4 GB).

A module of its own, importing nothing of the package, so that each of them may use it
whatever its layer; compiled in a compiled build.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Final, Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

#: the entries a table holds at most (unless it says otherwise)
KEPT_MAX: Final = 4096
#: the characters of the strings of a table's keys it holds at most (a table of short
#: pieces holds a few hundred thousand)
KEY_CHARS: Final = 1 << 21
#: the most characters a kept key holds (a longer one is worked out each time: it would take
#: a good part of :data:`KEY_CHARS`, and empty the table again and again)
KEY_LONGEST: Final = 4096


def chars_of(value: object) -> int:
    """The characters of the strings in ``value``: a string's own, those of the strings in
    a tuple or list (and in those it holds), 0 for anything else."""
    if isinstance(value, str):
        return len(value)
    # (walked as a tuple: compiled, a loop over a tuple reads its items in place, where one
    # over an object asked it for an iterator, at twice the instructions)
    items: tuple[object, ...]
    if isinstance(value, tuple):
        items = value
    elif isinstance(value, list):
        items = tuple(value)
    else:
        return 0
    n = 0
    for x in items:
        if isinstance(x, str):
            n += len(x)
        elif isinstance(x, (tuple, list)):
            n += chars_of(x)
    return n


class Kept(Generic[K, V]):
    """A bounded table: :attr:`table` is looked up by its owner, :meth:`put` fills it.

    The owner may keep :attr:`table` itself (it is never replaced, only emptied) and look
    it up directly.  Its bounds are :data:`KEPT_MAX`'s, :data:`KEY_LONGEST`'s and
    :data:`KEY_CHARS`'s when it is made, unless told otherwise.
    """

    __slots__ = ("chars", "key_chars", "longest", "most", "table")

    def __init__(self, most: int = KEPT_MAX) -> None:
        self.table: dict[K, V] = {}
        #: the entries it holds at most
        self.most = most
        #: the most characters a kept key holds, and the most its keys hold in all
        self.longest = KEY_LONGEST
        self.key_chars = KEY_CHARS
        #: the characters of the keys held (their strings': :func:`chars_of`)
        self.chars = 0

    def put(self, key: K, value: V, measure: object = None) -> V:
        """``value``, put under ``key`` unless the key's strings (or ``measure``'s, when
        the value holds strings the key does not show, as a key by identity) hold more
        than :attr:`longest` characters, the table emptied first when it holds its most
        entries or would hold more than :attr:`key_chars` characters."""
        n = chars_of(key if measure is None else measure)
        if n > self.longest:
            return value
        table = self.table
        held = len(table)
        if held >= self.most or self.chars + n > self.key_chars:
            table.clear()
            self.chars = 0
            if n > self.key_chars:  # (never, unless key_chars is below longest)
                return value
            held = 0
        table[key] = value
        if len(table) > held:  # (a key put again is counted once)
            self.chars += n
        return value

    def clear(self) -> None:
        """Empty the table."""
        self.table.clear()
        self.chars = 0

    def __len__(self) -> int:
        return len(self.table)
