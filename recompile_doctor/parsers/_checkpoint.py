"""A decoder's state as plain values: two decoders whose checkpoints are equal make the
same events of the same lines from there on (:mod:`recompile_doctor.parsers._parallel`).

The state is every attribute of the decoder, recursively (objects by their fields, in name
order).  A dictionary the decoder only looks up (never iterates) may be named in its class's
``UNORDERED_STATE``: two decoders that learnt the same entries in another order are then in
the same state.  Anything that cannot be compared (a callback under way, an object without
fields) makes the checkpoint None: it then never equals another, and the worker's part is
read again by the process that has the true state -- never a wrong result, only a slower
one.

The parent, which read the log from its start, knows names a worker never learnt: it may
also take over a worker whose looked-up entries are all among its own (:func:`agrees`),
provided no lookup the worker makes later finds nothing where the parent's tables hold
something (the worker records them: :func:`record_misses`; the parent checks them as it takes
the worker's events: :func:`knew`).  :func:`sizes` tells most unequal states apart in
microseconds, before a whole state is written.

A decoder may also name, in its class's ``RESIDUAL_STATE``, dictionaries it looks up by key
and iterates only in its ``finish`` (in an order of their own: sorted), such as reasons held
for a line that never comes: they are compared as the lookups are, and a worker's access to
a key it lacks (a write too) is recorded as a miss.  The parent's entries that the worker
lacked at the seam (its *residue*: :func:`residue`) are then the one-process decoder's at
the end as well, and the parent ends the input with the last worker's decoder and them
(:func:`with_residue`) instead of taking that worker's ``finish``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, MutableMapping
from operator import itemgetter
from typing import Any, Final

from recompile_doctor.heap_trim import give_back
from recompile_doctor.parsers._digest_table import DigestTable, WatchedDigests, watched_miss
from recompile_doctor.parsers._event_codec import PLAIN, PLAIN_TYPES
from recompile_doctor.parsers._format import Decoder

#: the types of looked-up tables: a plain dictionary, and the compact one of name digests
#: (a worker records its lookups in a recording table of the same kind: _MissDict,
#: ``_digest_table.WatchedDigests``)
_TABLES: tuple[type, ...] = (dict, DigestTable)
#: the exact plain types (a value of one is its own state: :func:`state_of`)
_P = PLAIN_TYPES


class Unsyncable(Exception):
    """A decoder holds state that cannot be compared (a callback under way)."""


def state_of(value: object) -> object:
    """``value`` as plain, comparable, marshal-able values (objects by their fields)."""
    if isinstance(value, PLAIN):
        return value
    # (a plain item is its own state: taken as it is, without a call per item, where a
    # worker's checkpoints of a torch.compile log spent a third of its time)
    if isinstance(value, (tuple, list)):
        return (type(value).__name__, tuple([v if type(v) in _P else state_of(v) for v in value]))
    if isinstance(value, Mapping):
        return ("{}", tuple(_item_states(value)))
    if isinstance(value, (set, frozenset)):
        return ("set", tuple(sorted(repr(state_of(v)) for v in value)))
    if isinstance(value, re.Pattern):
        return ("re", value.pattern, value.flags)
    if callable(value):
        raise Unsyncable(type(value).__name__)
    fields = _fields(value)
    if not fields and not any(getattr(c, "__slots__", ()) for c in type(value).__mro__):
        raise Unsyncable(type(value).__name__)
    # (a residual dictionary too: finish() emits its items in an order of their own)
    unordered: frozenset[str] = getattr(type(value), "UNORDERED_STATE", frozenset()) | getattr(
        type(value), "RESIDUAL_STATE", frozenset()
    )
    return (
        type(value).__qualname__,
        tuple(
            (k, _unordered(v) if k in unordered else state_of(v)) for k, v in sorted(fields.items())
        ),
    )


def _item_states(value: Mapping[Any, Any]) -> list[tuple[object, object]]:
    """(state of the key, state of the value) of each of a mapping's items, in its order."""
    return [
        (k if type(k) in _P else state_of(k), v if type(v) in _P else state_of(v))
        for k, v in value.items()
    ]


def _fields(value: object) -> dict[str, object]:
    """An object's attributes, from its ``__dict__`` and its slots (those set); a class
    compiled with mypyc (:mod:`recompile_doctor.compiled_modules`) has neither, and names
    its attributes in ``__mypyc_attrs__``."""
    fields = dict(getattr(value, "__dict__", {}))
    for c in type(value).__mro__:
        for s in (*getattr(c, "__slots__", ()), *getattr(c, "__mypyc_attrs__", ())):
            if hasattr(value, s):
                fields[s] = getattr(value, s)
    return fields


def _unordered(value: object) -> object:
    """The state of a mapping whose order makes no difference (only looked up, never
    iterated): its items sorted by key (keys of one kind compare as they are; others by
    their ``repr``: a string per item, 80 bytes each for 200,000 of them)."""
    if not isinstance(value, Mapping):
        return state_of(value)
    items = _item_states(value)
    try:
        # (keys are distinct: their values are never compared.  Keys that cannot all be
        # compared always raise, whatever their order: two neighbours in a sorted order
        # were compared, and such a pair has no key between them to order them otherwise)
        items.sort(key=_KEY)
    except TypeError:
        items.sort(key=repr)
    return ("{}", tuple(items))


_KEY = itemgetter(0)


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


def sizes(decoder: Decoder) -> tuple[tuple[str, int | None], ...]:
    """Each attribute of the decoder, in the order of its checkpoint's fields, with the
    length of the dictionary, list or set it holds (None for any other value): read in a
    few microseconds, where the whole state of a decoder that learnt thousands of names
    takes milliseconds.  Decoders whose sizes differ are in different states
    (:func:`sizes_of`, :func:`fits`)."""
    out: list[tuple[str, int | None]] = []
    for name, v in sorted(_fields(decoder).items()):
        # (as state_of tells them: any mapping or set, a list but not a subclass of one)
        if isinstance(v, (Mapping, set, frozenset)) or type(v) is list:
            out.append((name, len(v)))
        else:
            out.append((name, None))
    return tuple(out)


def sizes_of(state: object) -> tuple[tuple[str, int | None], ...] | None:
    """:func:`sizes` of the decoder whose checkpoint is ``state`` (None: not a decoder's)."""
    if not (isinstance(state, tuple) and len(state) == 2 and isinstance(state[1], tuple)):
        return None
    out: list[tuple[str, int | None]] = []
    for name, v in state[1]:
        sized = isinstance(v, tuple) and len(v) == 2 and v[0] in _SIZED and isinstance(v[1], tuple)
        out.append((name, len(v[1]) if sized else None))
    return tuple(out)


def fits(
    reader: tuple[tuple[str, int | None], ...],
    worker: tuple[tuple[str, int | None], ...] | None,
    lookups: frozenset[str],
) -> bool:
    """Whether decoders of these :func:`sizes` may be in equal states -- or, for the
    attributes named in ``lookups``, the worker's entries among the reader's (no more of
    them: :func:`agrees`).  True where the worker's sizes are not known."""
    if worker is None:
        return True
    if len(reader) != len(worker):
        return False
    for (rn, r), (wn, w) in zip(reader, worker, strict=True):
        if rn != wn:
            return False
        if r == w:
            continue
        if rn in lookups and r is not None and w is not None and w <= r:
            continue
        return False
    return True


def agrees(reader: object, worker: object, lookups: frozenset[str]) -> bool:
    """Whether a worker whose decoder was in state ``worker`` makes, of the lines to come,
    the events a reader in state ``reader`` makes, provided no lookup the worker misses
    later would have found something in the reader's state (checked as the worker's events
    are taken: :func:`record_misses`).  The states are :func:`checkpoint`'s, of one decoder
    class: every attribute equal, except those named in ``lookups`` (its
    ``UNORDERED_STATE``, only looked up), where the worker's entries need only be among
    the reader's: a reader that read the log from its start knows more names than a
    worker that began in the middle, and with equality they would never meet."""
    if reader == worker:
        return True
    if not (
        isinstance(reader, tuple)
        and isinstance(worker, tuple)
        and len(reader) == 2
        and len(worker) == 2
        and reader[0] == worker[0]
    ):
        return False
    rf, wf = reader[1], worker[1]
    if len(rf) != len(wf):
        return False
    for (rn, rv), (wn, wv) in zip(rf, wf, strict=True):
        if rn != wn:
            return False
        if rv == wv:
            continue
        if rn not in lookups or not _among(wv, rv):
            return False
    return True


def meets(decoder: Decoder, want: object, among: bool) -> bool:
    """``checkpoint(decoder) == want``, or with ``among`` :func:`agrees` of the two (the
    decoder's :func:`lookups_of` being those a worker may lack entries of): whether
    ``decoder`` is in the state of a worker's checkpoint ``want``, without writing its whole
    state.  The entries of the worker's looked-up dictionaries are looked up in the
    decoder's own (the parent's state at the seam of a 4 GB TensorFlow log held 200,000
    cluster counts: written, sorted and made a dictionary again for each comparison, about
    40 MB at once)."""
    if getattr(decoder, "pending_last", None) is not None:
        return False  # (no checkpoint: see checkpoint())
    if not (isinstance(want, tuple) and len(want) == 2 and isinstance(want[1], tuple)):
        return False
    if want[0] != type(decoder).__qualname__:
        return False
    fields = sorted(_fields(decoder).items())
    if len(fields) != len(want[1]):
        return False
    # (the attributes state_of() writes unordered, and those a worker may lack entries of)
    lookups = lookups_of(decoder)
    try:
        for (name, live), item in zip(fields, want[1], strict=True):
            if not (isinstance(item, tuple) and len(item) == 2 and item[0] == name):
                return False
            wv = item[1]
            may_lack = among and name in lookups
            # (by exact type: a recording dictionary would record the lookups as misses)
            if name in lookups and type(live) in _TABLES and isinstance(live, Mapping):
                got = _dict_meets(live, wv, may_lack)
                if got is not None:
                    if not got:
                        return False
                    continue
            mine = _unordered(live) if name in lookups else state_of(live)
            if mine != wv and not (may_lack and _among(wv, mine)):
                return False
    except Unsyncable:
        return False
    return True


def _dict_meets(live: Mapping[Any, object], state: object, may_lack: bool) -> bool | None:
    """Whether the dictionary ``live`` has the state ``state`` (``may_lack``: or holds its
    entries, with equal values); None when that cannot be told by looking its keys up (a
    key whose state is not the key itself)."""
    if not (isinstance(state, tuple) and len(state) == 2 and state[0] == "{}"):
        return False
    entries = state[1]
    if not isinstance(entries, tuple):
        return False
    if len(entries) > len(live) or (not may_lack and len(entries) != len(live)):
        return False
    missing = object()
    for entry in entries:
        key, value = entry
        if type(key) not in PLAIN:
            return None
        got = live.get(key, missing)
        if got is missing or state_of(got) != value:
            return False
    return True


def _among(worker: object, reader: object) -> bool:
    """The entries of one looked-up state (``("{}", items)`` or ``("set", reprs)``) of the
    worker are all among the reader's, with equal values."""
    if not (isinstance(worker, tuple) and isinstance(reader, tuple) and len(worker) == 2):
        return False
    kind = worker[0]
    if kind != reader[0]:
        return False
    if kind == "{}":
        have = dict(reader[1])
        return all(k in have and have[k] == v for k, v in worker[1])
    if kind == "set":
        return set(worker[1]) <= set(reader[1])
    return False


def lookups_of(decoder: Decoder) -> frozenset[str]:
    """The attributes of ``decoder`` whose entries a worker may lack at a seam with the
    parent (its ``UNORDERED_STATE`` and ``RESIDUAL_STATE``)."""
    cls = type(decoder)
    return getattr(cls, "UNORDERED_STATE", frozenset()) | residual_of(decoder)


def residual_of(decoder: Decoder) -> frozenset[str]:
    """The decoder's ``RESIDUAL_STATE`` (see above)."""
    names: frozenset[str] = getattr(type(decoder), "RESIDUAL_STATE", frozenset())
    return names


def record_misses(decoder: Decoder) -> list[tuple[object, ...]]:
    """In a worker: put recording copies of the decoder's ``UNORDERED_STATE`` and
    ``RESIDUAL_STATE`` dictionaries and sets in place of its own (once: a decoder makes them
    in its ``__init__`` only, which a test checks); the list they fill with each key looked
    up and not found (``(attribute, key)``, in order; in a residual dictionary, each key
    written that was not there too), which a reader that knew more might have found, and
    each entry of the lines before the worker's part looked up for the first time, with
    its value (``(attribute, key, state)``), which such a reader may hold otherwise by then.

    The looked-up dictionaries start with only the worker's own entries (see
    :class:`_MissDict`); the residual ones start empty: what the lines before the worker's
    left in them is the parent's, which still holds it at the seam (its residue) or has
    done with it since (a worker that kept it would hold what the parent no longer does,
    and never meet it); a worker's access to one of those keys is a miss like any other."""
    missed: list[tuple[object, ...]] = []
    residual = residual_of(decoder)
    fresh: frozenset[str] = getattr(type(decoder), "PART_FRESH_STATE", frozenset())
    for name in sorted(lookups_of(decoder)):
        now = getattr(decoder, name, None)
        if type(now) in _TABLES:
            if name in residual:
                setattr(decoder, name, _MissWriteDict({}, name, missed))
                continue
            # (PART_FRESH_STATE: dictionaries a worker starts without the entries the lines
            # before its part left, as if it had not read them: a lookup of one is a miss)
            inherited = None if name in fresh else now
            if type(now) is DigestTable:  # (a compact table stays compact: WatchedDigests)
                setattr(decoder, name, WatchedDigests(name, missed, inherited, _value_state))
            else:
                setattr(decoder, name, _MissDict({}, name, missed, inherited))
        elif type(now) is set:
            setattr(decoder, name, _MissSet(set(), name, missed, now))
    return missed


def pack_lookups(decoder: Decoder) -> None:
    """Hold all the digests of the reader's compact looked-up tables packed
    (:meth:`DigestTable.pack`) while its state stays that of a match: it is only looked up
    then (:func:`knew`; should it read on after all, its new digests go to open tables
    again).  The memory their open form held is given back to the system (see
    :mod:`~recompile_doctor.heap_trim`): the takeover that follows does not allocate as the
    reading did, and the 16 GB TensorFlow bench log's parent held 58 MB of it free but its
    own."""
    packed = False
    for name in sorted(lookups_of(decoder)):
        table = getattr(decoder, name, None)
        if type(table) is DigestTable:
            table.pack()
            packed = packed or table.packed()
    if packed:
        give_back()


def unrecorded(decoder: Decoder) -> Decoder:
    """A shallow copy of a worker's ``decoder`` with plain dictionaries and sets in place
    of the recording ones (:func:`record_misses`): to be pickled.  A decoder with a
    ``RESIDUAL_STATE`` (the one copied so) can be made without arguments: mypyc copies and
    pickles a compiled class only when its ``__init__`` can be called so, as it then is,
    before the state is put back (``tests/test_parallel.py`` pickles each)."""
    import copy

    out = copy.copy(decoder)
    for name in lookups_of(decoder):
        now = getattr(decoder, name, None)
        if isinstance(now, DigestTable):
            setattr(out, name, now.plain())
        elif isinstance(now, dict):
            setattr(out, name, dict(now))
        elif isinstance(now, set):
            setattr(out, name, set(now))
    return out


def residue(reader: Decoder, worker: object) -> dict[str, dict[object, object]]:
    """The entries of the reader's ``RESIDUAL_STATE`` dictionaries whose keys the worker,
    in state ``worker`` (its checkpoint at the seam), lacked: per attribute, those that hold
    any."""
    names = residual_of(reader)
    if not names or not (isinstance(worker, tuple) and len(worker) == 2):
        return {}
    fields = dict(worker[1]) if isinstance(worker[1], tuple) else {}
    out: dict[str, dict[object, object]] = {}
    for name in sorted(names):
        mine = getattr(reader, name, None)
        theirs = fields.get(name)
        if not isinstance(mine, dict) or not mine:
            continue
        keys = (
            {k for k, _v in theirs[1]}
            if isinstance(theirs, tuple) and len(theirs) == 2 and theirs[0] == "{}"
            else set()
        )
        extra = {k: v for k, v in mine.items() if state_of(k) not in keys}
        if extra:
            out[name] = extra
    return out


def with_residue(final: Decoder, reader: Decoder, extra: dict[str, dict[object, object]]) -> bool:
    """Make the last worker's ``final`` decoder (before its ``finish``) the one-process
    decoder's: the reader's residue ``extra`` added to its residual dictionaries, and the
    reader's entries it lacks added to its ``UNORDERED_STATE`` (a worker never removes
    one: a test checks it; what it wrote anew is kept).  False where a residual key is in
    ``final`` already (a worker's access to it is a miss the parent knew: the stream stops
    before; this is the guard)."""
    for name, entries in extra.items():
        table = getattr(final, name, None)
        if not isinstance(table, dict) or any(k in table for k in entries):
            return False
        table.update(entries)
    for name in sorted(getattr(type(reader), "UNORDERED_STATE", frozenset())):
        mine, table = getattr(reader, name, None), getattr(final, name, None)
        if isinstance(mine, Mapping) and isinstance(table, MutableMapping):
            for k, v in mine.items():  # (a dict or a DigestTable, on either side)
                table.setdefault(k, v)
        elif isinstance(mine, set) and isinstance(table, set):
            table |= mine
        elif mine is not None or table is not None:
            return False
    return True


#: a value no dictionary holds (``get``'s default, told from a value held)
_ABSENT: Final = object()
_has: Final = dict.__contains__
_dict_get: Final = dict.get


class _MissDict(dict):  # type: ignore[type-arg]
    """A dictionary that records the keys it was asked for and did not hold.

    It holds the worker's own entries: those it learnt, and those of ``inherited`` (the
    decoder's dictionary as the lines before the worker's part left it) that it asked for,
    each copied in when first asked for and recorded with its value (``(attribute, key,
    state)``): the parent, which read on past those lines, may hold another value by then
    (:func:`knew`).  An entry the worker never asks for is not its own, and is left out of
    its checkpoints: a value the parent changed after those lines does not keep their
    states apart."""

    __slots__ = ("_inherited", "_missed", "_name", "_state")

    def __init__(
        self,
        items: dict[object, object],
        name: str,
        missed: list[tuple[object, ...]],
        inherited: Mapping[Any, object] | None = None,
    ) -> None:
        super().__init__(items)
        self._name = name
        self._missed = missed
        self._inherited = inherited or {}
        self._state = _value_state  # (for watched_miss)

    def _miss(self, key: object) -> bool:
        return watched_miss(self, dict, key)

    # (a key held is answered by the dictionary's own method in one call: most lookups are
    # of the worker's own entries, and these methods run for every lookup of its decoder)
    def __contains__(self, key: object) -> bool:
        return _has(self, key) or not watched_miss(self, dict, key)

    def __getitem__(self, key: object) -> object:
        got = _dict_get(self, key, _ABSENT)
        if got is not _ABSENT:
            return got
        self._miss(key)
        return dict.__getitem__(self, key)

    def get(self, key: object, default: object = None) -> object:
        got = _dict_get(self, key, _ABSENT)
        if got is not _ABSENT:
            return got
        return default if self._miss(key) else dict.__getitem__(self, key)

    def setdefault(self, key: object, default: object = None) -> object:
        self._miss(key)
        return dict.setdefault(self, key, default)

    def pop(self, key: object, *default: object) -> object:
        self._miss(key)
        return dict.pop(self, key, *default)


class _MissWriteDict(_MissDict):
    """A residual dictionary: a key written that it did not hold is recorded as well."""

    __slots__ = ()

    def __setitem__(self, key: object, value: object) -> None:
        self._miss(key)
        dict.__setitem__(self, key, value)

    def __delitem__(self, key: object) -> None:
        self._miss(key)
        dict.__delitem__(self, key)


class _MissSet(set):  # type: ignore[type-arg]
    """A set that records the items it was asked about and did not hold; of ``inherited``,
    its own are those asked about (as :class:`_MissDict`)."""

    __slots__ = ("_gone", "_inherited", "_missed", "_name")

    def __init__(
        self,
        items: set[object],
        name: str,
        missed: list[tuple[object, ...]],
        inherited: set[object] | None = None,
    ) -> None:
        super().__init__(items)
        self._name = name
        self._missed = missed
        self._inherited = inherited or set()
        self._gone: set[object] = set()  # (inherited items taken out: not asked for again)

    def __contains__(self, item: object) -> bool:
        if set.__contains__(self, item):
            return True
        if item in self._inherited and item not in self._gone:
            set.add(self, item)
            self._missed.append((self._name, item, True))
            return True
        self._missed.append((self._name, item))
        return False

    def discard(self, item: object) -> None:
        self._gone.add(item)
        set.discard(self, item)


#: the state of a value that cannot be compared (no state is a tuple of one item)
_UNCOMPARABLE = ("\x00",)


def _value_state(value: object) -> object:
    """The state of an inherited entry's value as a miss record carries it
    (:data:`_UNCOMPARABLE`: it cannot be compared, and is taken as changed)."""
    try:
        return state_of(value)
    except Unsyncable:
        return _UNCOMPARABLE


def knew(decoder: Decoder, missed: list[tuple[object, ...]]) -> bool:
    """Whether ``decoder`` (the reader whose state a worker's was among) holds one of the
    keys the worker ``missed``, or holds another value (or none) for an entry the worker
    took from the lines before its part (:func:`record_misses`): then the worker's events
    from that line on may differ."""
    for item in missed:
        name, key = item[0], item[1]
        got = getattr(decoder, str(name), None)
        try:
            if len(item) == 2:
                if got is not None and key in got:
                    return True
                continue
            if got is None or key not in got or item[2] == _UNCOMPARABLE:
                return True
            if isinstance(got, Mapping) and _value_state(got[key]) != item[2]:
                return True
        except TypeError:  # (a key that cannot be looked up: take it as known)
            return True
    return False
