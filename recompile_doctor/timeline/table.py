"""The compilations of a run kept as columns: a few arrays and lists of shared strings
instead of one object per compilation.

A run that recompiles one function 500,000 times held, per compilation, a 20-field object
and the integers and floats of its line numbers and times (about 370 bytes); as columns it
takes about 100 (8-byte numbers, one byte per flag, references to strings that compilations
of one function share).  :class:`CompilationTable` is a sequence of
:class:`~recompile_doctor.model.Compilation`: reading an item makes the object (a couple of
microseconds), so the analyses read the columns themselves where they pass over every
compilation and make objects only of those a finding or a report shows.  Past
:data:`~recompile_doctor.timeline.column.SPILL_AFTER` compilations the columns go to a
temporary file (:mod:`.column`), so that what a table holds in memory stops growing.

A compilation's id is its position in the table.
"""

from __future__ import annotations

import math
import sys
from array import array
from collections.abc import Callable, Iterator, Mapping, MutableSequence, Sequence
from functools import partial
from itertools import repeat
from typing import Any, Final, Generic, TypeVar, overload

from recompile_doctor.bounded import KEY_LONGEST, Kept
from recompile_doctor.compiled_modules import own_abc_checks
from recompile_doctor.events import CompileKey
from recompile_doctor.key_name import key_name
from recompile_doctor.model import CacheOutcome, Compilation, Evidence
from recompile_doctor.parsers._names import INFERENCE_PREFIX
from recompile_doctor.slotted import rebuilt
from recompile_doctor.timeline import column
from recompile_doctor.timeline.blobs import Blobs
from recompile_doctor.timeline.column import (
    OBJECTS,
    Spilled,
    append_row,
    codec_of,
    numbers,
    slotted_codec,
)
from recompile_doctor.timeline.names import function_key, graph_element
from recompile_doctor.timeline.packed import sequence_eq

T = TypeVar("T")

#: an integer column's "None"
NO_INT: Final = -(1 << 63)
#: the rank column's "None" (a rank is a number of at most six digits)
NO_RANK: Final = -1
#: a float column's "None"
NO_FLOAT: Final = math.nan
#: the cache outcomes by their code in :attr:`CompilationTable.cache` (0: not known yet,
#: while the builder reads; never in a finished table)
CACHE_CODES: tuple[CacheOutcome | None, ...] = (None, "hit", "miss", "disabled", "unknown")
CODE_OF: dict[CacheOutcome | None, int] = {c: i for i, c in enumerate(CACHE_CODES)}


def opt_int(v: int) -> int | None:
    return None if v == NO_INT else v


#: (``sys.intern`` as a constant: compiled code looked it up on the module at every call)
_intern: Final = sys.intern


def row_module(other: str | None, key: CompileKey | None) -> str:
    """A row's module: its key's name, unless the row's ``other_module`` says otherwise."""
    if other is not None:
        return other
    assert key is not None  # (a row without a key has its module in other_module)
    return key_name(key)


def key_framework(key: CompileKey | None) -> str:
    """The framework of a row of this key (a row without a key is Poplar's)."""
    return key.framework if key is not None else "poplar"


def is_eager(key: CompileKey | None) -> bool:
    """Whether a row of this key is an eager (not compiled) run of its function."""
    return key is not None and key.eager


def opt_float(v: float) -> float | None:
    return None if v != v else v  # NaN: None


def remade(cls: type[T], args: tuple[Any, ...], slots: dict[str, Any]) -> T:
    """An object made by ``cls(*args)``, then these slots set (their values shared, not
    copied): how this module's classes are unpickled (``__reduce__``: a compiled class is
    remade only by its ``__init__``, never from its slots alone) and a table copied."""
    obj = cls(*args)
    for name, value in slots.items():
        setattr(obj, name, value)
    return obj


class Causes(Mapping[int, str]):
    """Compilation id -> the rule id of its cause, for the recompilations: a 2-byte number
    per compilation of the run (0: none) instead of a dictionary entry per recompilation."""

    __slots__ = ("_codes", "_names", "_number")

    def __init__(self, compilations: int) -> None:
        self._codes = numbers("H", compilations)
        self._names: list[str] = [""]  # by code (0: none)
        self._number: dict[str, int] = {}

    def set(self, cid: int, rule: str) -> None:
        code = self._number.get(rule)
        if code is None:
            code = self._number[rule] = len(self._names)
            self._names.append(rule)
        self._codes[cid] = code

    def __getitem__(self, cid: int) -> str:
        code = self._codes[cid] if 0 <= cid < len(self._codes) else 0
        if not code:
            raise KeyError(cid)
        return self._names[code]

    def get(self, cid: int, default: Any = None) -> Any:  # (faster than Mapping's)
        code = self._codes[cid] if 0 <= cid < len(self._codes) else 0
        return self._names[code] if code else default

    def __iter__(self) -> Iterator[int]:
        return (i for i, code in enumerate(self._codes) if code)

    def names(self) -> list[str]:
        """The rule ids by their code ("" for code 0: none)."""
        return list(self._names)

    def codes_between(self, a: int, b: int) -> array[int]:
        """The codes of the compilations ``a`` to ``b - 1`` (those past the run's: none)."""
        codes = self._codes
        part = codes[a:b]
        return part if isinstance(part, array) else array("H", part)

    def __len__(self) -> int:
        return len(self._codes) - self._codes.count(0)

    def __reduce__(self) -> tuple[Any, ...]:
        slots = {"_codes": self._codes, "_names": self._names, "_number": self._number}
        return (remade, (Causes, (0,), slots))


class Lazy(Generic[T]):
    """A column that holds one value (``fill``) in every row until another is set, and
    takes no memory until then: a JAX run has no graph hash, ordinal or rank, a Poplar run
    has them all (the column is made whole at the first other value)."""

    __slots__ = ("_blobs", "_make", "_n", "fill", "items")

    def __init__(self, fill: T, make: Callable[[], MutableSequence[T]]) -> None:
        self.fill = fill
        self._make = make
        self._n = 0
        #: the whole column, once a row holds another value than ``fill``
        self.items: MutableSequence[T] | Spilled[T] | None = None
        self._blobs: Blobs | None = None  # the file of a spilled table (see spill())

    def _whole(self) -> MutableSequence[T] | Spilled[T]:
        items = self.items
        if items is None:
            fill = repeat(self.fill, self._n)
            made = self._make()
            if self._blobs is not None:
                items = self.items = Spilled.of(fill, codec_of(made), self._blobs)
            else:
                made.extend(fill)
                items = self.items = made
        return items

    def spill(self, blobs: Blobs) -> None:
        """Keep the column in ``blobs`` from now on (and when it is made whole)."""
        self._blobs = blobs
        if self.items is not None:
            self.items = Spilled.of(self.items, codec_of(self.items), blobs)

    def append(self, v: T) -> None:
        if self.items is None and v == self.fill:
            self._n += 1
        else:
            self._whole().append(v)

    def __getitem__(self, i: int) -> T:
        items = self.items
        if items is not None:
            return items[i]
        if not -self._n <= i < self._n:
            raise IndexError("row out of range")
        return self.fill

    def __setitem__(self, i: int, v: T) -> None:
        if self.items is None and v == self.fill:
            self[i]  # (the bounds check)
            return
        self._whole()[i] = v

    def __len__(self) -> int:
        return self._n if self.items is None else len(self.items)

    def __iter__(self) -> Iterator[T]:
        return repeat(self.fill, self._n) if self.items is None else iter(self.items)

    def __reduce__(self) -> tuple[Any, ...]:
        slots = {"_n": self._n, "items": self.items, "_blobs": self._blobs}
        return (remade, (Lazy, (self.fill, self._make), slots))


#: the key column's codec once spilled (its keys as their values, many rows sharing one)
_KEYS: Final = slotted_codec(CompileKey)

#: the slots of :class:`CompilationTable` (named here: compiled code cannot read a class's
#: ``__slots__``, and :meth:`CompilationTable.with_causes` copies them)
_TABLE_SLOTS: Final = (
    "_blobs",
    "_causes",
    "_fn_keys",
    "_fn_keys_kept",
    "_spilled",
    "_text_chars",
    "cache",
    "cache_file",
    "duration_s",
    "end_line",
    "hash",
    "key",
    "line",
    "ordinal",
    "other_module",
    "process",
    "rank",
    "source",
    "t",
    "text",
    "warmup",
)


#: the graphs :meth:`CompilationTable.graph_elements` remembers
GRAPHS_REMEMBERED = 1024


def key_chars(key: CompileKey | None) -> int:
    """The characters of a key's names (what it holds besides its fields' objects)."""
    if key is None:
        return 0
    return (
        len(key.function or "")
        + len(key.module or "")
        + len(key.compile_id or "")
        + len(key.cache_key or "")
        + len(key.graph_hash or "")
    )


class CompilationTable(Sequence[Compilation]):
    """The compilations of a run, column by column; equal to any sequence of equal
    compilations in the same order."""

    __slots__ = _TABLE_SLOTS

    def __init__(self) -> None:
        #: a compilation's module is its key's name, unless this says otherwise
        self.other_module: Lazy[str | None] = Lazy(None, list)
        self.hash: Lazy[str | None] = Lazy(None, list)
        # (each plain column becomes a Spilled one past column.SPILL_AFTER compilations)
        self.source: list[str] | Spilled[str] = []
        self.line: array[int] | Spilled[int] = array("q")
        self.t: array[float] | Spilled[float] = array("d")
        self.duration_s: array[float] | Spilled[float] = array("d")
        self.cache: bytearray | Spilled[int] = bytearray()  # codes of CACHE_CODES
        self.warmup: bytearray | Spilled[int] = bytearray()
        self.end_line: array[int] | Spilled[int] = array("q")
        self.cache_file: Lazy[str | None] = Lazy(None, list)
        self.ordinal: Lazy[int] = Lazy(NO_INT, partial(array, "q"))
        self.text: list[str] | Spilled[str] = []
        #: the framework's key (framework, function, compile id, cache key, eager; shared by
        #: the compilations of one function); None: a Poplar compilation
        self.key: list[CompileKey | None] | Spilled[CompileKey | None] = []
        self.rank: Lazy[int] = Lazy(NO_RANK, partial(array, "i"))
        #: the index of the process that compiled it
        self.process: array[int] | Spilled[int] = array("i")
        self._causes: Mapping[int, str] = {}
        #: the function keys of the modules met lately (_function_key), and its table
        self._fn_keys_kept: Kept[str, str] = Kept()
        self._fn_keys = self._fn_keys_kept.table
        #: the temporary file of the columns: the text's and keys' past
        #: column.EARLY_SPILL_AFTER compilations, all of them past column.SPILL_AFTER
        self._blobs: Blobs | None = None
        self._spilled: tuple[Spilled[Any], ...] = ()  # the _PLAIN columns, once spilled
        #: the characters of the texts and key names held in memory (until the text and
        #: key columns go to the file: column.EARLY_SPILL_CHARS)
        self._text_chars = 0

    def append(
        self,
        *,
        module: str,
        hash: str | None,
        source: str,
        line: int,
        t: float | None,
        ordinal: int | None,
        text: str,
        key: CompileKey | None,
        rank: int | None,
        process: int,
    ) -> int:
        """Add a compilation (its cache outcome not known yet, no duration, not warm-up);
        its id."""
        self.other_module.append(None if key is not None and key_name(key) == module else module)
        self.hash.append(hash)
        self.cache_file.append(None)
        self.ordinal.append(NO_INT if ordinal is None else ordinal)
        self.rank.append(NO_RANK if rank is None else rank)
        if self._spilled:
            t_ = NO_FLOAT if t is None else t  # (the row in _PLAIN's order)
            row = (source, line, t_, NO_FLOAT, 0, 0, NO_INT, text, key, process)
            append_row(self._spilled, row)
            return len(self._spilled[0]) - 1
        self.source.append(source)
        self.line.append(line)
        self.t.append(NO_FLOAT if t is None else t)
        self.duration_s.append(NO_FLOAT)
        self.cache.append(0)
        self.warmup.append(0)
        self.end_line.append(NO_INT)
        texts = self.text
        texts.append(text)
        self.key.append(key)
        self.process.append(process)
        n = len(self.source)
        if n >= column.SPILL_AFTER:
            self._spill()
        elif type(texts) is list:
            chars = self._text_chars = self._text_chars + len(text) + key_chars(key)
            if n >= column.EARLY_SPILL_AFTER or chars >= column.EARLY_SPILL_CHARS:
                self._spill_early(column.text_rows(chars, n))
        return n - 1

    def _spill_early(self, rows: int) -> None:
        """Keep the text and key columns in the temporary file from now on, in chunks of
        ``rows`` (fewer than the other columns' where the lines or names are long)."""
        blobs = self._file()
        for name in self._EARLY:
            codec = _KEYS if name == "key" else OBJECTS
            early = Spilled.of(getattr(self, name), codec, blobs, column.EARLY_CACHED, rows)
            setattr(self, name, early)
        self._text_chars = 0

    #: the plain columns (arrays, byte arrays and lists) and the lazy ones
    _PLAIN = (
        "source",
        "line",
        "t",
        "duration_s",
        "cache",
        "warmup",
        "end_line",
        "text",
        "key",
        "process",
    )
    _LAZY = ("other_module", "hash", "cache_file", "ordinal", "rank")
    #: the plain columns that go to the file first (column.EARLY_SPILL_AFTER)
    _EARLY = ("text", "key")

    def _file(self) -> Blobs:
        """The temporary file of the spilled columns (made on first use)."""
        if self._blobs is None:
            self._blobs = Blobs("recompile-doctor-compilations-")
        return self._blobs

    def _spill(self) -> None:
        """Keep every column in a temporary file from now on (see :mod:`.column`)."""
        blobs = self._file()
        spilled: list[Spilled[Any]] = []
        for name in self._PLAIN:
            plain = getattr(self, name)
            if not isinstance(plain, Spilled):  # (the _EARLY ones may be there already)
                plain = Spilled.of(plain, _KEYS if name == "key" else codec_of(plain), blobs)
            spilled.append(plain)
            setattr(self, name, plain)
        self._spilled = tuple(spilled)
        for name in self._LAZY:
            getattr(self, name).spill(blobs)

    def close(self) -> None:
        """Remove the columns' temporary file, if they have one (a long run's compilations
        cannot be read after that)."""
        if self._blobs is not None:
            self._blobs.close()

    def module_of(self, i: int) -> str:
        """The module compilation ``i`` compiles."""
        m = self.other_module[i]
        return m if m is not None else row_module(None, self.key[i])

    def names_of(self, i: int) -> tuple[str, str, str | None]:
        """Compilation ``i``'s module, framework and function (its key read once)."""
        return row_names(self.other_module[i], self.key[i])

    def names_in_order(self) -> NamesInOrder:
        """:meth:`names_of` for compilations asked in increasing order (see there)."""
        return NamesInOrder(self)

    def set_module(self, i: int, module: str) -> None:
        key = self.key[i]
        self.other_module[i] = None if key is not None and key_name(key) == module else module

    def modules(self) -> Iterator[str]:
        """Each compilation's module, in order."""
        for other, key in zip(self.other_module, self.key, strict=True):
            if other is not None:
                yield other
            else:
                assert key is not None
                yield key_name(key)

    def graph_elements(self, remembered: int = GRAPHS_REMEMBERED) -> Iterator[str]:
        """What the compilations' graphs are told apart by (:func:`.names.graph_element`:
        ``H`` and the graph hash, or ``M`` and the module's name), in order, leaving out
        those given lately: each distinct one at least once, for a count of distinct graphs
        (a run compiles a few graphs again and again; each given was fingerprinted).  Up to
        ``remembered`` of them are held, of at most ``bounded.KEY_LONGEST`` characters."""
        seen: set[str] = set()
        for h, m in zip(self.hash, self.modules(), strict=True):
            hashed, name = graph_element(h, m)
            element = ("H" if hashed else "M") + name
            if element in seen:
                continue
            if len(seen) < remembered and len(element) <= KEY_LONGEST:
                seen.add(element)
            yield element

    def with_causes(self, causes: Mapping[int, str]) -> CompilationTable:
        """This table with each recompilation's cause (rule id), by compilation id; the
        columns are shared, not copied."""
        new = remade(CompilationTable, (), self._slot_values())
        new._causes = causes
        return new

    def causes_over(self, base: object) -> Mapping[int, str] | None:
        """The causes this table gives ``base``'s compilations when it is ``base`` with
        causes (:meth:`with_causes`: the same column objects), else None."""
        if not isinstance(base, CompilationTable):
            return None
        for name in _TABLE_SLOTS:
            if not name.startswith("_") and getattr(self, name) is not getattr(base, name):
                return None
        return self._causes

    def _slot_values(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in _TABLE_SLOTS if hasattr(self, name)}

    def __reduce__(self) -> tuple[Any, ...]:
        return (remade, (CompilationTable, (), self._slot_values()))

    # -- columns the analyses read -------------------------------------------------------
    def cache_of(self, i: int) -> CacheOutcome:
        got = CACHE_CODES[self.cache[i]]
        assert got is not None
        return got

    def ids_with_cache(self, outcome: CacheOutcome) -> list[int]:
        """The ids of the compilations with this cache outcome, in order."""
        code = CODE_OF[outcome]
        cache = self.cache
        out: list[int] = []
        i = cache.find(code)
        while i != -1:
            out.append(i)
            i = cache.find(code, i + 1)
        return out

    def count_cache(self, outcome: CacheOutcome) -> int:
        return self.cache.count(CODE_OF[outcome])

    def function_key_of(self, i: int) -> str:
        """:func:`~recompile_doctor.timeline.names.function_key` of compilation ``i``'s
        module (one computation per distinct module)."""
        return self._function_key(self.module_of(i))

    def function_keys(self) -> Iterator[str]:
        """The function key of each compilation, in order."""
        for m in self.modules():
            yield self._function_key(m)

    def function_key_of_row(self, other: str | None, key: CompileKey | None) -> str:
        """:meth:`function_key_of` of the row whose ``other_module`` and ``key`` these are
        (for a pass that reads the key column already: a spilled one is read back a chunk
        at a time, each pass over it a decoding of every chunk)."""
        return self._function_key(row_module(other, key))

    def _function_key(self, module: str) -> str:
        """``function_key(module)``, remembered for the distinct modules met lately, in a
        bounded table (:class:`~recompile_doctor.bounded.Kept`: a run of 100,000 modules
        named after their function, ``__inference_f_<N>``, would keep one entry each), one
        copy of each key (interned)."""
        if module.startswith(INFERENCE_PREFIX):
            # (a new module per compilation, which the table would only fill)
            return _intern(function_key(module))
        got = self._fn_keys.get(module)
        if got is not None:
            return got
        return self._fn_keys_kept.put(module, _intern(function_key(module)))

    def function_of(self, i: int) -> str | None:
        k = self.key[i]
        return k.function if k is not None else None

    def eager_of(self, i: int) -> bool:
        return is_eager(self.key[i])

    def framework_of(self, i: int) -> str:
        return key_framework(self.key[i])

    def compiled_of(self, i: int) -> bool:
        """True when the backend really compiled (not loaded from a cache)."""
        return self.cache[i] != _HIT

    def seconds_of(self, i: int) -> float:
        d = self.duration_s[i]
        return 0.0 if d != d else d

    def evidence_of(self, i: int) -> Evidence:
        """Compilation ``i``'s line as evidence (as ``comp_evidence`` of its object)."""
        return Evidence(self.source[i], self.line[i], self.text[i])

    # -- the sequence of objects ---------------------------------------------------------
    def __len__(self) -> int:
        return len(self.source)

    @overload
    def __getitem__(self, i: int) -> Compilation: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[Compilation]: ...
    def __getitem__(self, i: int | slice) -> Compilation | Sequence[Compilation]:
        if isinstance(i, slice):
            return [self._make(k) for k in range(len(self))[i]]
        n = len(self.source)
        if not -n <= i < n:
            raise IndexError("compilation index out of range")
        return self._make(i % n)

    def __iter__(self) -> Iterator[Compilation]:
        for i, row in enumerate(self._rows()):
            made: Compilation = rebuilt(Compilation, self._values(i, row))
            yield made

    def value_rows(self) -> Iterator[tuple[Any, ...]]:
        """Each compilation's field values, in the order of its fields (:meth:`_values`, what
        :meth:`_make` and iteration make it of), without making it: what the report's JSON
        writes of it
        (:class:`recompile_doctor.model.CompilationRows`)."""
        for i, row in enumerate(self._rows()):
            # (the row as one tuple: its fifteen values spread as arguments went through
            # the interpreter's generic call, 2,600 instructions a compilation)
            yield self._values(i, row)

    def _rows(self) -> Iterator[tuple[Any, ...]]:
        # the columns side by side (each read in order, a chunk at a time when spilled),
        # not row by row: a row's fields are 14 reads
        return zip(
            self.other_module,
            self.hash,
            self.source,
            self.line,
            self.t,
            self.duration_s,
            self.cache,
            self.warmup,
            self.end_line,
            self.cache_file,
            self.ordinal,
            self.text,
            self.key,
            self.rank,
            strict=True,
        )

    def drawn(self) -> Iterator[tuple[Any, ...]]:
        """Each compilation's module, function, source, line, end line, start, duration,
        cache outcome and warm-up flag, as its object holds them (:meth:`_made`), from those
        columns side by side: what the plots draw, without making the compilations (nor
        reading their lines' text)."""
        rows = zip(
            self.other_module,
            self.key,
            self.source,
            self.line,
            self.end_line,
            self.t,
            self.duration_s,
            self.cache,
            self.warmup,
            strict=True,
        )
        for other, key, source, line, end_line, t, duration_s, cache, warmup in rows:
            yield (
                row_module(other, key),
                key.function if key is not None else None,
                source,
                line,
                opt_int(end_line),
                opt_float(t),
                opt_float(duration_s),
                CACHE_CODES[cache],
                bool(warmup),
            )

    def _make(self, i: int) -> Compilation:
        made: Compilation = rebuilt(
            Compilation,
            self._values(
                i,
                (
                    self.other_module[i],
                    self.hash[i],
                    self.source[i],
                    self.line[i],
                    self.t[i],
                    self.duration_s[i],
                    self.cache[i],
                    self.warmup[i],
                    self.end_line[i],
                    self.cache_file[i],
                    self.ordinal[i],
                    self.text[i],
                    self.key[i],
                    self.rank[i],
                ),
            ),
        )
        return made

    def _values(self, i: int, row: tuple[Any, ...]) -> tuple[Any, ...]:
        """The field values of compilation ``i`` (in the order of its fields) of its row's
        values as the columns hold them (:meth:`_rows`' order)."""
        other: str | None
        hash: str | None
        source: str
        line: int
        t: float
        duration_s: float
        cache: int
        warmup: int
        end_line: int
        cache_file: str | None
        ordinal: int
        text: str
        key: CompileKey | None
        rank: int
        (
            other,
            hash,
            source,
            line,
            t,
            duration_s,
            cache,
            warmup,
            end_line,
            cache_file,
            ordinal,
            text,
            key,
            rank,
        ) = row
        return (
            i,
            row_module(other, key),
            hash,
            source,
            line,
            opt_float(t),
            opt_float(duration_s),
            CACHE_CODES[cache],
            bool(warmup),
            self._causes.get(i),
            opt_int(end_line),
            cache_file,
            opt_int(ordinal),
            text,
            key_framework(key),
            key.function if key is not None else None,
            key.compile_id if key is not None else None,
            None if rank == NO_RANK else rank,
            key.cache_key if key is not None else None,
            is_eager(key),
        )

    def __eq__(self, other: object) -> bool:
        return sequence_eq(self, other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"CompilationTable({len(self)} compilations)"


def row_names(other: str | None, key: CompileKey | None) -> tuple[str, str, str | None]:
    """A row's module, framework and function, from its ``other_module`` and key."""
    return row_module(other, key), key_framework(key), key.function if key is not None else None


class NamesInOrder:
    """:meth:`CompilationTable.names_of` of compilations asked in increasing order (the
    recompilations of a finding, in log order), from one pass over the key and module
    columns: read at random, a spilled column's chunks were read back again whenever the
    two kept were others, and each row went through the column's indexing (225 M of the
    1,801 M instructions of the grouping of 33,000 TensorFlow recompilations by cause, 179
    M this way).  One asked before the last one is read at random."""

    __slots__ = ("_at", "_last", "_rows", "_table")

    def __init__(self, table: CompilationTable) -> None:
        self._table = table
        self._rows = enumerate(zip(table.other_module, table.key, strict=True))
        self._at = -1
        self._last: tuple[str, str, str | None] = ("", "", None)

    def __call__(self, i: int) -> tuple[str, str, str | None]:
        if i == self._at:
            return self._last
        if i > self._at:
            for k, (other, key) in self._rows:
                if k == i:
                    self._at = i
                    self._last = row_names(other, key)
                    return self._last
            # (the rows are all read: at random from now on, the pass giving nothing more)
        return self._table.names_of(i)


_HIT = CODE_OF["hit"]


own_abc_checks(Causes, CompilationTable)  # (a compiled build's classes: see there)
