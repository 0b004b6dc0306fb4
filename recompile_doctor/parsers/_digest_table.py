"""A dictionary keyed by name digests, in a third of a ``dict``'s memory.

A decoder that counts what it saw per name keys its table by the name's 128-bit digest
(:func:`~recompile_doctor.name_digest.name_number`): a ``dict`` of them costs 96 bytes an
entry (the digest as a Python number, 48; the entry and its slot in the table, the rest),
and a TensorFlow log of a new cluster per compilation makes one entry per compilation: 36 MB
held by the parent reading an 8 GB log, about 74 at 16 GB.  :class:`DigestTable` keeps the
values in an array by number, and the digests:

* at first in a :class:`~recompile_doctor.timeline.distinct.NameIndex` (16 bytes a slot
  and 4 for the entry's number, one to two thirds full, in sixteen tables that grow one at
  a time): 57 bytes an entry;
* from :data:`PACK_FROM` entries on, mostly *packed*: each table's digests in one buffer
  grouped by their leading bits, with their numbers
  (:class:`~recompile_doctor.timeline.packed_keys.PackedKeys`: 20 bytes an entry, found
  by ``bytes.find`` in a bucket of a few), the new ones in an open index that is merged
  into them, bucket by bucket, when it holds an eighth as many
  (:data:`~recompile_doctor.timeline.packed_keys.MERGE_SHARE`):
  about 30 bytes an entry in all, and as fast to look up and write (the digest looked up
  last is remembered: a count is read, then written);
* from :data:`COLD_FROM` entries on, the packed ones in a temporary file, a filter in
  memory telling which digests to look for there (:mod:`~recompile_doctor.timeline.cold_keys`),
  and their values in a file too (:class:`~recompile_doctor.timeline.cold_keys.ColdNumbers`);
  the open index is merged into them when it holds a 32nd as many
  (:data:`~recompile_doctor.timeline.cold_keys.COLD_SHARE`, :data:`PACK_FROM` at least):
  8-9 bytes an entry in memory at 2.5 million (the filter, the open index), where the
  values in memory and an open eighth made 15-18.

The 742,921 clusters the parent of the 16 GB TensorFlow bench log holds at the end of its
part took 45.5 MB in open tables.  :meth:`DigestTable.pack` merges the open ones into the
packed ones at once (the parent does when it takes over a worker's events, which it only
looks up in them from then on).

It is a mapping like any other to the parallel reading's checkpoints (compared, looked up,
iterated as a ``dict`` is, :mod:`._checkpoint`); a worker watches its lookups through a
recording table of this class (:class:`WatchedDigests`), as through a recording
``dict`` for a plain one.  A value that is not a small non-negative integer (or not of type
``int`` itself) is kept in a side dictionary.
"""

from __future__ import annotations

from array import array
from collections.abc import (
    Callable,
    ItemsView,
    Iterator,
    KeysView,
    Mapping,
    MutableMapping,
    ValuesView,
)
from itertools import chain
from typing import Any, TypeVar, overload

from recompile_doctor.compiled_modules import own_abc_checks
from recompile_doctor.name_digest import WIDTH
from recompile_doctor.timeline.cold_keys import (
    COLD_SHARE,
    ColdNumbers,
    ColdParts,
    KeyFilter,
    merged_into_file,
    still_fits,
)
from recompile_doctor.timeline.distinct import (
    SHARDS,
    NameIndex,
    digest_of_fingerprint,
    fingerprint_of_digest,
)
from recompile_doctor.timeline.packed_keys import PackedKeys, open_size

_T = TypeVar("_T")
#: the value of no key (what :meth:`DigestTable._get` asks :meth:`DigestTable._get_or` for)
_NONE = object()

#: the entries a table holds before it packs any (fewer take little memory in any form)
PACK_FROM = 65_536
#: the entries from which the packed ones are in a temporary file, a filter in memory
#: telling which to look for there (10 MB of them packed in memory)
COLD_FROM = 1 << 19
#: where the 4 bytes of a fingerprint the filter takes begin (not those that choose its
#: part, its last, nor its bucket, its first)
_FILTER_AT = 4

#: the largest value stored in the array (as value + 1: 0 there is "no value")
_SMALL = (1 << 32) - 2


class DigestTable(MutableMapping[int, int]):
    """A mapping from name digests (``int``, below 2**128) to integers."""

    __slots__ = ("_index", "_last", "_len", "_limit", "_other", "_packed", "_values")

    def __init__(self) -> None:
        #: the digests stored since the last merge (numbered from ``len(_packed)`` on)
        self._index = NameIndex()
        #: the fingerprint looked up last, and its number (a value read, then written)
        self._last: tuple[bytes, int | None] = (b"", None)
        #: those stored before, packed (their numbers from 0)
        self._packed = _Packed()
        #: per number: its value + 1 while a small integer, 0 when there is none (deleted,
        #: or in _other); those of the packed digests in a file with them
        self._values: array[int] | ColdNumbers = array("I")
        #: the digests held open before they are merged into the packed ones
        self._limit = PACK_FROM
        self._other: dict[int, Any] = {}  # number -> any other value (negative, huge)
        self._len = 0

    def _find(self, key: object) -> int | None:
        """The number of ``key``'s digest, if it was ever stored."""
        d = _digest(key)
        return None if d is None else self._number(d)

    def _number(self, d: bytes) -> int | None:
        """The number of fingerprint ``d``, if it was ever stored."""
        last = self._last
        if last[0] == d:
            return last[1]
        packed = self._packed
        n = self._index.find_fingerprint(d)
        n = packed.find_fingerprint(d) if n is None else n + len(packed)
        self._last = (d, n)
        return n

    def _has(self, n: int) -> bool:
        return bool(self._values[n]) or n in self._other

    def __len__(self) -> int:
        return self._len

    def __contains__(self, key: object) -> bool:
        n = self._find(key)
        return n is not None and self._has(n)

    # (keys and values typed loosely, as a dict takes them: compiled code checks a value's
    # declared type, and a key may be any number equal to an integer, a value anything)
    def __getitem__(self, key: object) -> Any:
        return self._get(key)

    @overload
    def get(self, key: object, /) -> int | None: ...
    @overload
    def get(self, key: object, /, default: int | _T) -> int | _T: ...
    def get(self, key: object, /, default: object = None) -> Any:
        """``key``'s value, or ``default``: the mapping mixin's ``get`` raised a
        ``KeyError`` and caught it for every name not held, and a log of a new cluster per
        compilation asks for one at every compilation (50,000 instructions a miss)."""
        return self._get_or(key, default)

    def _get_or(self, key: object, default: object) -> object:
        """:meth:`get` read without any override of the lookups (as :meth:`_get`)."""
        n = self._find(key)
        if n is not None:
            v = self._values[n]
            if v:
                return v - 1
            if n in self._other:
                return self._other[n]
        return default

    def _get(self, key: object) -> Any:
        """``key``'s value, read without any override of the lookups (the item view's
        ``in`` reads through it, as :meth:`keys`, :meth:`items` and :meth:`values` read
        through :meth:`_items`: a subclass that watches lookups does not see them)."""
        got = self._get_or(key, _NONE)
        if got is _NONE:
            raise KeyError(key)
        return got

    def __setitem__(self, key: object, value: Any) -> None:
        d = _digest(key)
        if d is None:
            raise TypeError(f"not a name digest: {key!r}")
        values = self._values
        n = self._number(d)
        if n is None:
            index = self._index
            n = index.number_fingerprint(d) + len(self._packed)
            self._last = (d, n)
            values.append(0)
            if len(index) >= self._limit:
                self._merge()
                values = self._values  # (in a file from now on, maybe)
        elif self._has(n):
            self._len -= 1
        self._other.pop(n, None)
        if type(value) is int and 0 <= value <= _SMALL:
            values[n] = value + 1
        else:
            values[n] = 0
            self._other[n] = value
        self._len += 1

    def __delitem__(self, key: object) -> None:
        n = self._find(key)
        if n is None or not self._has(n):
            raise KeyError(key)
        self._values[n] = 0
        self._other.pop(n, None)
        self._len -= 1

    def __iter__(self) -> Iterator[int]:
        """The keys, in no order of their own (a table this is in is only looked up)."""
        for k, _ in self._items():
            yield k

    def keys(self) -> KeysView[int]:
        return _Keys(self)

    def items(self) -> ItemsView[int, int]:
        return _Items(self)

    def values(self) -> ValuesView[int]:
        return _Values(self)

    def _items(self) -> Iterator[tuple[int, Any]]:
        """(key, value) of each entry, in no order of their own."""
        values, other = self._values, self._other
        for d, n in self._numbered():
            v = values[n]
            if v:
                yield _key_of(d), v - 1
            elif n in other:
                yield _key_of(d), other[n]

    def _numbered(self) -> Iterator[tuple[bytes, int]]:
        """(fingerprint, number) of each digest ever stored, in no order of their own."""
        return chain(self._packed.numbered(), self._index.numbered(len(self._packed)))

    def _merge(self) -> None:
        """The open table's digests into the packed ones (each table of it let go as its
        part of the packed ones is made again with them)."""
        packed = self._packed = self._packed.merged(self._index, len(self._packed))
        if packed.cold:
            # (the values of the packed digests go with them: none held open is packed)
            values = self._values
            if not isinstance(values, ColdNumbers):
                values = self._values = ColdNumbers(values.typecode, values)
            values.freeze()
            self._limit = open_size(len(packed), PACK_FROM, COLD_SHARE)
        else:
            self._limit = open_size(len(packed), PACK_FROM)
        # (made for the entries it takes before the next merge: it does not grow to them)
        self._index = NameIndex(self._limit)

    def pack(self) -> None:
        """Hold all its digests packed, if it holds :data:`PACK_FROM` or more (only to be
        looked up from now on, say: a table always holds most of them packed)."""
        if len(self._index) and len(self._index) + len(self._packed) >= PACK_FROM:
            self._merge()

    def packed(self) -> bool:
        """Whether all its digests are held packed (:meth:`pack`)."""
        return not len(self._index) and bool(len(self._packed))

    def plain(self) -> DigestTable:
        """A table of the same entries, of this class (not a subclass's): to be pickled."""
        out = DigestTable()
        for k, v in self._items():
            DigestTable.__setitem__(out, k, v)
        return out

    def clear(self) -> None:
        self._index = NameIndex()
        self._last = (b"", None)
        self._packed = _Packed()
        if isinstance(self._values, ColdNumbers):
            self._values.close()
        self._values = array("I")
        self._limit = PACK_FROM
        self._other = {}
        self._len = 0

    def __repr__(self) -> str:
        return f"DigestTable({dict(self.items())!r})"


class WatchedDigests(DigestTable):
    """A worker's recording table of this kind (``_checkpoint.record_misses``): it records
    the keys it was asked for and did not hold, as the recording ``dict`` does
    (``_checkpoint._MissDict``).  It holds the worker's own entries: those it learnt, and
    those of ``inherited`` (the table as the lines before the worker's part left it) that
    it was asked for, each copied in when first asked for and recorded with ``state(value)``.
    Its items and values are read without recording (as a dictionary's are).  A class of
    this module, compiled with it: every lookup of the worker's decoder goes through it."""

    __slots__ = ("_inherited", "_missed", "_name", "_state")

    def __init__(
        self,
        name: str,
        missed: list[tuple[object, ...]],
        inherited: Mapping[Any, object] | None,
        state: Callable[[object], object],
    ) -> None:
        super().__init__()
        self._name = name
        self._missed = missed
        self._inherited: Mapping[Any, object] = inherited if inherited is not None else {}
        self._state = state

    def _miss(self, key: object) -> bool:
        return watched_miss(self, DigestTable, key)

    def __contains__(self, key: object) -> bool:
        return not self._miss(key)

    def __getitem__(self, key: object) -> Any:
        self._miss(key)
        return self._get(key)

    def get(self, key: object, /, default: object = None) -> Any:
        # (as the mapping mixin's get did through __getitem__: the miss recorded, then the
        # value or the default)
        self._miss(key)
        return self._get_or(key, default)


def watched_miss(table: Any, base: Any, key: object) -> bool:
    """Whether ``table`` (a worker's recording table, read and written through its ``base``
    class's own methods; its ``_inherited``, ``_missed``, ``_name`` and ``_state`` as
    :class:`WatchedDigests` has them) lacks ``key``, recorded as a miss; an entry of the
    lines before the worker's part is copied in when first asked for, and recorded with
    its state."""
    if base.__contains__(table, key):
        return False
    inherited = table._inherited
    if key in inherited:
        value = inherited[key]
        base.__setitem__(table, key, value)
        table._missed.append((table._name, key, table._state(value)))
        return False
    table._missed.append((table._name, key))
    return True


class _Packed:
    """Fingerprints and their numbers packed, in one part per table of a :class:`NameIndex`
    (found by the same byte of the fingerprint as there: :data:`SHARDS`); from
    :data:`COLD_FROM` of them on, the parts are in a temporary file
    (:class:`~recompile_doctor.timeline.cold_keys.ColdParts`), and a filter of them
    (:class:`~recompile_doctor.timeline.cold_keys.KeyFilter`) tells which to look for
    there: about 2 bytes an entry in memory instead of 20."""

    __slots__ = ("_cold", "_count", "_filter", "_parts")

    def __init__(
        self,
        parts: list[PackedKeys] | None = None,
        count: int = 0,
        cold: ColdParts | None = None,
        filter_: KeyFilter | None = None,
    ) -> None:
        self._parts = parts
        self._count = count
        self._cold = cold
        self._filter = filter_

    def __len__(self) -> int:
        return self._count

    @property
    def cold(self) -> bool:
        """Whether the parts are in a file."""
        return self._cold is not None

    def find_fingerprint(self, d: bytes) -> int | None:
        """The number of fingerprint ``d``; None: it is not held."""
        parts = self._parts
        if parts is not None:
            return parts[d[-1] & (SHARDS - 1)].find(d)
        cold, filter_ = self._cold, self._filter
        if cold is None or filter_ is None or _filtered(d) not in filter_:
            return None
        got = cold.find_all(d[-1] & (SHARDS - 1), d)
        return got[0] if got else None

    def numbered(self) -> Iterator[tuple[bytes, int]]:
        """(fingerprint, number) of each, in no order of their own."""
        for part in self._parts or ():
            yield from part.numbered()
        cold = self._cold
        for k in range(len(cold) if cold is not None else 0):
            assert cold is not None
            yield from cold.part(k).numbered()

    def merged(self, index: NameIndex, base: int) -> _Packed:
        """These and the fingerprints of ``index`` (numbered from ``base`` on), each part
        made again as the index lets its table go (the index is empty afterwards): the
        parts are never all held twice at once (in the file, each read back, merged and
        written to a new one in turn)."""
        count = self._count + len(index)
        parts = self._parts or [PackedKeys(WIDTH) for _ in range(SHARDS)]
        self._parts = None  # (each part let go as the new one takes its place)
        cold = self._cold
        if cold is None and count < COLD_FROM:
            for k, pairs in enumerate(index.release()):
                parts[k] = parts[k].merged(pairs, base)
            return _Packed(parts, count)

        def old(k: int) -> PackedKeys:
            if cold is not None:
                return cold.part(k)
            was = parts[k]
            parts[k] = PackedKeys(WIDTH)  # (let go)
            return was

        kept = still_fits(self._filter, count)
        self._filter = None  # (one that no longer fits let go before a bigger one is made)
        new, filter_ = merged_into_file(
            old,
            ((pairs, (_filtered(d) for d, _ in pairs)) for pairs in index.release()),
            count,
            kept,
            _FILTER_AT,
            base,
        )
        if cold is not None:
            cold.close()
            self._cold = None
        return _Packed(None, count, new, filter_)

    def __reduce__(self) -> tuple[type[_Packed], tuple[list[PackedKeys] | None, int]]:
        # (a copy for another process holds its parts in memory: the file is this one's)
        cold = self._cold
        if cold is None:
            return (_Packed, (self._parts, self._count))
        return (_Packed, ([cold.part(k) for k in range(len(cold))], self._count))


def _filtered(d: bytes) -> int:
    """The number of fingerprint ``d`` its filter holds (as :meth:`KeyFilter.add_keys`
    reads it from the packed keys)."""
    return int.from_bytes(d[_FILTER_AT : _FILTER_AT + 4], "little")


class _Items(ItemsView[int, int]):
    """A table's items, read without its lookups (see :meth:`DigestTable._get`)."""

    _mapping: DigestTable

    def __iter__(self) -> Iterator[tuple[int, int]]:
        return self._mapping._items()

    def __contains__(self, item: object) -> bool:
        if not (isinstance(item, tuple) and len(item) == 2):
            return False
        try:
            return bool(self._mapping._get(item[0]) == item[1])
        except KeyError:
            return False


class _Keys(KeysView[int]):
    """A table's keys, looked up without its lookups."""

    _mapping: DigestTable

    def __contains__(self, key: object) -> bool:
        return DigestTable.__contains__(self._mapping, key)


class _Values(ValuesView[int]):
    """A table's values, read without its lookups."""

    _mapping: DigestTable

    def __iter__(self) -> Iterator[int]:
        return (v for _, v in self._mapping._items())


def _digest(key: object) -> bytes | None:
    """The fingerprint stored for digest ``key`` (None: not a digest).  A key equal to an
    integer is looked up as that integer, as a ``dict`` finds ``1`` by ``1.0`` or ``True``."""
    if type(key) is not int:
        if isinstance(key, int) or (isinstance(key, float) and key.is_integer()):
            key = int(key)
        else:
            return None
    if not 0 <= key < 1 << (8 * WIDTH):
        return None
    return fingerprint_of_digest(key.to_bytes(WIDTH, "little"))


def _key_of(d: bytes) -> int:
    """The digest whose fingerprint is ``d``."""
    return int.from_bytes(digest_of_fingerprint(d), "little")


own_abc_checks(
    DigestTable, WatchedDigests, _Items, _Keys, _Values
)  # (a compiled build's classes: see there)
