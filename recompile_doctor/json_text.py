"""Indented JSON text, exactly as ``json.dumps(obj, indent=2, ensure_ascii=False)`` writes it,
several times faster.

With ``indent`` set, CPython's ``json`` module leaves its C encoder for a pure-Python one;
a report of a big log is mostly many small dictionaries, and that encoder was the largest
single cost of writing it.  Here the containers are walked by the C module where it is built
(``parsers/_native_json.c``: :func:`native_text`), in Python otherwise (:func:`_text_py`,
which the C hands whatever is not of an exact JSON type); every string is escaped as the C
``encode_basestring`` escapes it, and numbers, ``true``/``false``/``null`` and the
separators are those of ``json.dumps``.  Hypothesis tests compare the three on random
values.
"""

from __future__ import annotations

import os
from array import array
from bisect import bisect_right
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from itertools import islice
from json.encoder import encode_basestring  # the C escaper when the accelerator is built
from typing import IO, Any, Final, NamedTuple, Protocol

from recompile_doctor.bounded import Kept
from recompile_doctor.read_at import read_at

_INF: Final = float("inf")


def _float(f: float) -> str:
    """A float's JSON text, as ``json.dumps`` writes it."""
    if f != f:
        return "NaN"
    if f == _INF:
        return "Infinity"
    if f == -_INF:
        return "-Infinity"
    return float.__repr__(f)


def _key(k: object) -> str:
    if isinstance(k, str):
        return encode_basestring(k)
    if k is True:
        return '"true"'
    if k is False:
        return '"false"'
    if k is None:
        return '"null"'
    if isinstance(k, float):
        return '"' + _float(k) + '"'
    if isinstance(k, int):
        return '"' + int.__repr__(k) + '"'
    raise TypeError(f"keys must be str, int, float, bool or None, not {type(k).__name__}")


def dumps_indented(obj: Any, level: int = 0, indent: int = 2) -> str:
    """``json.dumps(obj, indent=indent, ensure_ascii=False)``, its lines after the first
    moved right by ``level * indent`` spaces (a value nested ``level`` deep)."""
    return _text(obj, level, " " * indent)


#: items of a long list written as one piece by :func:`pieces_indented`
PIECE_ITEMS = 512


def pieces_indented(obj: Any, level: int = 0, indent: int = 2) -> Iterator[str]:
    """The text of :func:`dumps_indented` in pieces: a list of more than
    :data:`PIECE_ITEMS` items (a finding's 100,000 modules) a few hundred items at a time,
    so that a big value is never held whole as one string, nor as the list of its parts."""
    return _pieces(obj, level, " " * indent)


def _is_list(o: object) -> bool:
    """Whether ``o`` is written as a JSON array: a list, a tuple or another sequence (not
    a string)."""
    return isinstance(o, (list, tuple)) or (
        isinstance(o, Sequence) and not isinstance(o, (str, bytes, bytearray))
    )


def _pieces(o: Any, level: int, step: str) -> Iterator[str]:
    if isinstance(o, dict) and o:
        deeper = level + 1
        yield "{\n" + step * deeper
        for n, (k, v) in enumerate(o.items()):
            yield ("" if n == 0 else ",\n" + step * deeper) + _key(k) + ": "
            yield from _pieces(v, deeper, step)
        yield "\n" + step * level + "}"
    elif _is_list(o) and len(o) > PIECE_ITEMS:
        inner = "\n" + step * (level + 1)
        yield "[" + inner
        items = iter(o)  # (a sequence kept out of memory is read once, in order)
        first = True
        while batch := list(islice(items, PIECE_ITEMS)):
            body = ("," + inner).join([_text(v, level + 1, step) for v in batch])
            yield body if first else "," + inner + body
            first = False
        yield "\n" + step * level + "]"
    else:
        yield _text(o, level, step)


#: an object's text in the pieces around its values' texts, per (keys, level, indent): made
#: once per shape, up to :data:`~recompile_doctor.bounded.KEPT_MAX` shapes (the events'
#: details of a saved report read back may each have keys of their own)
_PIECES_KEPT: Final[Kept[tuple[tuple[Any, ...], int, int], tuple[str, ...]]] = Kept()
_PIECES: Final = _PIECES_KEPT.table


def object_pieces(keys: tuple[Any, ...], level: int, indent: int = 2) -> tuple[str, ...]:
    """The text of an object of ``keys`` nested ``level`` deep, in the pieces around its
    values' texts: ``pieces[0] + text of value 0 + pieces[1] + … + pieces[-1]`` (one more
    piece than keys); at least one key."""
    last = _LAST_PIECES[0]  # (one tuple, replaced whole: threads may write reports at once)
    if last[0] is keys and last[1] == level and last[2] == indent:
        # (the same tuple of keys as the call before: a report's events and compilations
        # are written one after the other, each with the one tuple of its class's keys)
        got: tuple[str, ...] = last[3]
        return got
    p = _shaped(keys, level, indent)
    _LAST_PIECES[0] = (keys, level, indent, p)
    return p


#: the last call of :func:`object_pieces`: (the tuple of its keys itself, its level, its
#: indent, the pieces)
_LAST_PIECES: Final[list[tuple[Any, int, int, tuple[str, ...]]]] = [(None, -1, -1, ())]


def _shaped(keys: tuple[Any, ...], level: int, indent: int) -> tuple[str, ...]:
    """:func:`object_pieces`, looked up by the keys' values."""
    shape = (keys, level, indent)
    p = _PIECES.get(shape)
    if p is None:
        inner = "\n" + " " * (indent * (level + 1))
        parts = ["{" + inner + _key(keys[0]) + ": "]
        parts.extend([("," + inner + _key(k) + ": ") for k in keys[1:]])
        parts.append("\n" + " " * (indent * level) + "}")
        p = _PIECES_KEPT.put(shape, tuple(parts))
    return p


def _joined(pieces: tuple[str, ...], texts: list[str]) -> str:
    """The pieces of :func:`object_pieces` around ``texts``."""
    out = [pieces[0]]
    for i, t in enumerate(texts):
        out.append(t)
        out.append(pieces[i + 1])
    return "".join(out)


def fields_text(keys: tuple[str, ...], values: tuple[Any, ...], level: int, indent: int = 2) -> str:
    """``dumps_indented(dict(zip(keys, values)), level, indent)`` without building the dict
    or writing the keys again: for the report's long lists of objects of one shape (events,
    compilations), twice as fast as the dict."""
    if len(keys) != len(values):
        raise ValueError(f"{len(keys)} keys for {len(values)} values")
    if not keys:
        return "{}"
    deeper = level + 1
    step = " " * indent
    native = native_text()
    if native is not None:
        return native.fields(object_pieces(keys, level, indent), values, deeper, step, _text_py)
    return _joined(object_pieces(keys, level, indent), [_text_py(v, deeper, step) for v in values])


def fields_text_apart(
    keys: tuple[str, ...], values: tuple[Any, ...], level: int, at: int
) -> tuple[str, str]:
    """:func:`fields_text` (indent 2) in the two texts around the text of ``values[at]``
    (the text is ``before + text of that value + after``): a report's compilations written
    ahead of the causes the analyses give them (``events_json``)."""
    pieces = object_pieces(keys, level)
    return _apart(pieces[: at + 1], pieces[at + 1 :], keys, values, level, at, native_text())


def _apart(
    ahead: tuple[str, ...],
    behind: tuple[str, ...],
    keys: tuple[str, ...],
    values: tuple[Any, ...],
    level: int,
    at: int,
    native: NativeText | None,
) -> tuple[str, str]:
    """:func:`fields_text_apart` with the keys' pieces before and after value ``at`` and the
    C writer (or None) given."""
    if len(keys) != len(values) or not 0 <= at < len(keys):
        raise ValueError(f"{len(keys)} keys for {len(values)} values, value {at} apart")
    if native is not None:
        deeper = level + 1
        return (
            native.fields(ahead, values[:at], deeper, "  ", _text_py),
            native.fields(behind, values[at + 1 :], deeper, "  ", _text_py),
        )
    texts = [_text_py(v, level + 1, "  ") for v in values]
    return _joined(ahead, texts[:at]), _joined(behind, texts[at + 1 :])


def apart_pieces(
    rows: Iterable[tuple[Any, ...]], keys: tuple[str, ...], at: int, piece: int, most_cuts: int
) -> Iterator[tuple[bytes, bytes]]:
    """The text of ``rows`` as a list's items (:data:`ITEM_HEADS`, each :func:`fields_text`
    at level 2) but for each row's value ``at`` (:func:`fields_text_apart`), UTF-8 (lone
    surrogates passed), in pieces of about ``piece`` bytes, each with where the values left
    out go in the whole text (8 bytes each, at most ``most_cuts`` a piece): what the
    events' writer writes of a report's compilations ahead of their causes.  Where the C
    module is in use, the rows are written a batch at a time (its ``json_rows_apart``: a
    call per row, two slices, two strings encoded and a concatenation were 5,000
    instructions a compilation besides the text's writing)."""
    native = native_text()
    if native is None or not 0 <= at < len(keys):
        yield from _apart_pieces_py(rows, keys, at, piece, most_cuts)
        return
    pieces = object_pieces(keys, 2)
    ahead, behind = pieces[: at + 1], pieces[at + 1 :]
    most = max(1, min(ROWS_AT_ONCE, most_cuts))
    pos = 0
    first = True
    batch: list[tuple[Any, ...]] = []
    left = iter(rows)
    ended = False
    while True:
        if not ended:
            for row in left:  # (the batch topped up to `most` rows)
                batch.append(row)
                if len(batch) >= most:
                    break
            else:
                ended = True
        text, cuts, done = native.rows_apart(
            batch, ahead, behind, at, 2, "  ", _text_py, ITEM_HEADS, first, pos, piece
        )
        first = False
        pos += len(text)
        batch = batch[done:]
        yield text, cuts
        if ended and not batch:  # (the last piece may hold nothing, as the loop by rows')
            break


#: the rows :func:`apart_pieces` hands the C module at once (at most)
ROWS_AT_ONCE = 256


def _apart_pieces_py(
    rows: Iterable[tuple[Any, ...]], keys: tuple[str, ...], at: int, piece: int, most_cuts: int
) -> Iterator[tuple[bytes, bytes]]:
    """:func:`apart_pieces` a row at a time (compiled: a loop over a run's compilations)."""
    cuts = array("q")
    out: list[bytes] = []
    n = pos = 0
    head = ITEM_HEADS[0]
    # (the pieces around the value left out and the writer, found once: per row they were
    # a memo's look-up by the keys, 600 instructions)
    native = native_text()
    pieces = object_pieces(keys, 2)
    ahead, behind = pieces[: at + 1], pieces[at + 1 :]
    for row in rows:
        before, after = _apart(ahead, behind, keys, row, 2, at, native)
        a = (head + before).encode("utf-8", "surrogatepass")
        b = after.encode("utf-8", "surrogatepass")
        head = ITEM_HEADS[1]
        pos += len(a)
        cuts.append(pos)
        pos += len(b)
        out.append(a)
        out.append(b)
        n += len(a) + len(b)
        if n >= piece or len(cuts) >= most_cuts:
            yield b"".join(out), cuts.tobytes()
            out, n, cuts = [], 0, array("q")
    yield b"".join(out), cuts.tobytes()


#: the cuts :func:`spliced` reads at once
CUTS_READ = 1 << 16


def spliced(
    f: IO[bytes], cuts_f: IO[bytes], causes: Mapping[int, str], piece: int
) -> Iterator[bytes]:
    """The compilations' text ``events_json`` wrote to ``f`` ahead of their causes, with
    each compilation's cause (by its id: its number among them) put in its place (``cuts_f``:
    where each goes in the text, 8 bytes each), in pieces of about ``piece`` bytes, reading
    :data:`CUTS_READ` cuts at a time.  Where the C module is in use and ``causes`` is the
    table's (``timeline.table.Causes``: a code per compilation), each piece is made in one
    call (:func:`_spliced_c`)."""
    end = os.fstat(f.fileno()).st_size
    count = os.fstat(cuts_f.fileno()).st_size // 8
    native = native_text()
    if native is not None and hasattr(causes, "codes_between"):
        return _spliced_c(f, cuts_f, causes, piece, end, count, native.splice)
    return _spliced_py(f, cuts_f, causes, piece, end, count)


def _cuts(cuts_f: IO[bytes], first: int, count: int, end: int) -> array[int]:
    """The cuts ``first`` to ``first + CUTS_READ - 1``; the text's end after the last one."""
    cuts = array("q")
    cuts.frombytes(read_at(cuts_f, 8 * min(CUTS_READ, count - first), 8 * first))
    if first + CUTS_READ > count:
        cuts.append(end)  # (the text after the last cause)
    return cuts


def _text_at(f: IO[bytes], n: int, pos: int, end: int) -> bytes:
    """``n`` bytes of ``f`` from ``pos`` (an OSError if the file has fewer)."""
    got = read_at(f, n, pos)
    if len(got) < n:
        raise OSError(f"temporary file cut short at {pos + len(got)} of {end} bytes")
    return got


def _cause_text(cause: str | None) -> bytes:
    return _text_py(cause, 3, "  ").encode("utf-8", "surrogatepass")


def _spliced_c(
    f: IO[bytes], cuts_f: IO[bytes], causes: Any, piece: int, end: int, count: int, splice: Any
) -> Iterator[bytes]:
    """:func:`spliced` by the C module's ``json_splice``: the text up to the cuts within a
    piece's bytes read at once, the causes put in by their codes."""
    names = causes.names()
    texts = tuple([_cause_text(name if k else None) for k, name in enumerate(names)])
    pos = 0
    for first in range(0, count + 1, CUTS_READ):
        cuts = _cuts(cuts_f, first, count, end)
        codes = causes.codes_between(first, first + len(cuts))
        j, n = 0, len(cuts)
        while j < n:
            while cuts[j] - pos > piece:  # (a compilation's text longer than a piece)
                yield _text_at(f, piece, pos, end)
                pos += piece
            stop = bisect_right(cuts, pos + piece, j, n)
            last = cuts[stop - 1]
            text = _text_at(f, last - pos, pos, end)
            try:
                made = splice(text, pos, cuts, j, stop, j, count - first, codes, texts)
            except ValueError as e:  # (cuts out of order: the file is not as written)
                raise OSError(f"temporary file of the compilations' text: {e}") from e
            yield made
            pos, j = last, stop


def _spliced_py(
    f: IO[bytes], cuts_f: IO[bytes], causes: Mapping[int, str], piece: int, end: int, count: int
) -> Iterator[bytes]:
    """:func:`spliced` in Python: the text read ``piece`` bytes at a time (compiled: a loop
    over a run's compilations)."""
    texts: dict[str | None, bytes] = {None: b"null"}
    out: list[bytes] = []
    n = 0
    block = b""  # the text read last, from block_at
    block_at = pos = 0
    for first in range(0, count + 1, CUTS_READ):
        cuts = _cuts(cuts_f, first, count, end)
        i = first
        for cut in cuts:
            while pos < cut:
                if not block_at <= pos < block_at + len(block):
                    block = read_at(f, piece, pos)
                    block_at = pos
                    if not block:
                        raise OSError(f"temporary file cut short at {pos} of {end} bytes")
                k = min(cut, block_at + len(block))
                out.append(block[pos - block_at : k - block_at])
                n += k - pos
                pos = k
            if i < count:
                cause = causes.get(i)
                got = texts.get(cause)
                if got is None:
                    got = texts[cause] = _cause_text(cause)
                out.append(got)
                n += len(got)
                i += 1
            if n >= piece:
                yield b"".join(out)
                out = []
                n = 0
    yield b"".join(out)


def _dict_text(d: dict[Any, Any], level: int) -> str:
    """``dumps_indented(d, level)`` of a dict, its keys written once per shape (keys that
    are all strings: a shape of other keys could be found by one equal to it, ``(1,)`` by
    ``(True,)``)."""
    if not d:
        return "{}"
    for k in d:
        if type(k) is not str:
            return _text_py(d, level, "  ")
    deeper = level + 1
    return _joined(_shaped(tuple(d), level, 2), [_text_py(v, deeper, "  ") for v in d.values()])


#: the JSON strings of an event's names (kinds, sources, modules: few, each written for
#: thousands of events), up to :data:`~recompile_doctor.bounded.KEPT_MAX` of them
_NAMES_KEPT: Final[Kept[str, str]] = Kept()
_NAMES: Final = _NAMES_KEPT.table


def _name(s: str) -> str:
    """``encode_basestring(s)``, remembered."""
    t = _NAMES.get(s)
    if t is None:
        t = _NAMES_KEPT.put(s, encode_basestring(s))
    return t


def event_text(keys: tuple[str, ...], event: tuple[Any, ...], level: int) -> str:
    """The JSON text of a report's event (:class:`recompile_doctor.model.Event`: kind,
    source, line, t, text, module, hash, detail), its fields in the order of ``keys`` (kind,
    source, line, t, module, hash, detail, text): ``dumps_indented(event.to_json(),
    level)``, faster (a report writes thousands): in C where the module is built (about
    three times the speed of this function compiled), else the fields of the types the
    parsers give are written without asking their type, its kind, source and module
    remembered."""
    kind, source, line, t, text, module, hash_, detail = event
    native = native_text()
    if native is not None:
        plain = detail if type(detail) is dict else dict(detail)
        values = (kind, source, line, t, module, hash_, plain, text)
        return native.fields(object_pieces(keys, level), values, level + 1, "  ", _text_py)
    if (
        type(kind) is str
        and type(source) is str
        and type(line) is int
        and type(text) is str
        and (t is None or type(t) is float)
        and (module is None or type(module) is str)
        and (hash_ is None or type(hash_) is str)
    ):
        p = object_pieces(keys, level)
        return "".join(
            (
                p[0],
                _name(kind),
                p[1],
                _name(source),
                p[2],
                str(line),
                p[3],
                "null" if t is None else _float(t),
                p[4],
                "null" if module is None else _name(module),
                p[5],
                "null" if hash_ is None else encode_basestring(hash_),
                p[6],
                _dict_text(detail if type(detail) is dict else dict(detail), level + 1),
                p[7],
                encode_basestring(text),
                p[8],
            )
        )
    return fields_text(keys, (kind, source, line, t, module, hash_, dict(detail), text), level)


#: what leads each item of one of a report's lists in its JSON: the first, the others
ITEM_HEADS: Final = ("\n    ", ",\n    ")


def event_items(events: Iterable[tuple[Any, ...]], keys: tuple[str, ...]) -> Iterator[str]:
    """The text of a report's list of events (:class:`recompile_doctor.model.Event`) in its
    JSON, between ``[`` and the list's last line, an event at a time, each led by its
    :data:`ITEM_HEADS` (what ``model.list_items_json`` gives for them: compiled here, the
    loop runs once per event of the report)."""
    return _items(events, keys, event_text)


#: the biggest chunk :func:`chunk_text` writes: its text is made whole, a few times the
#: chunk's size at the most (a chunk of long lines and names, 20 MB, is written a row at a
#: time instead; a JAX log's chunks of ``spool.CHUNK`` events, 512, are about 0.13 MB)
CHUNK_BYTES_MOST = 2 << 20


def chunk_text(data: bytes, keys: tuple[str, ...], first: bool) -> bytes | None:
    """The text :func:`event_items` gives for the events of a chunk of the events' spool
    (``timeline.spool.SpooledChunk``: ``data``, their rows as the spool wrote them), UTF-8
    encoded (surrogates passed), the first led by the list's first head when ``first``:
    written by the C module from those bytes (not read back into objects), in less than half
    the instructions; None where the module is not built, the chunk is bigger than
    :data:`CHUNK_BYTES_MOST`, or it holds a value the module does not write (then the
    caller writes its rows)."""
    native = native_text()
    if native is None or len(data) > CHUNK_BYTES_MOST:
        return None
    heads = ITEM_HEADS if first else (ITEM_HEADS[1], ITEM_HEADS[1])
    return native.chunk(data, object_pieces(keys, 2), 3, "  ", heads)


def fields_items(rows: Iterable[tuple[Any, ...]], keys: tuple[str, ...]) -> Iterator[str]:
    """:func:`event_items` of objects given as their values in the order of ``keys`` (a
    report's compilations: :func:`fields_text` of each)."""
    return _items(rows, keys, fields_text)


def batched(pieces: Iterable[str], size: int) -> Iterator[str]:
    """``pieces`` joined into texts of ``size`` characters or more (the last one may be
    shorter): a writer writes a few large texts (compiled: an interpreted loop over the
    pieces of 600,000 events was a frame step per piece)."""
    batch: list[str] = []
    n = 0
    for piece in pieces:
        batch.append(piece)
        n += len(piece)
        if n >= size:
            yield "".join(batch)
            batch = []
            n = 0
    if batch:
        yield "".join(batch)


def _items(
    items: Iterable[tuple[Any, ...]],
    keys: tuple[str, ...],
    text: Callable[[tuple[str, ...], tuple[Any, ...], int], str],
) -> Iterator[str]:
    """``text(keys, item, 2)`` of each item, led by its :data:`ITEM_HEADS`."""
    head = ITEM_HEADS[0]
    for item in items:
        yield head + text(keys, item, 2)
        head = ITEM_HEADS[1]


class _JsonValue(Protocol):
    """The C module's ``json_value(o, level, step, fallback)``: :func:`_text_py`'s text of
    ``o``, the values of types other than the exact JSON ones written by ``fallback``."""

    def __call__(
        self, o: Any, level: int, step: str, fallback: Callable[[Any, int, str], str], /
    ) -> str: ...


class _JsonFields(Protocol):
    """The C module's ``json_fields(pieces, values, level, step, fallback)``: ``pieces[0]``,
    the text of ``values[0]`` (its ``json_value`` at ``level``), ``pieces[1]``, and so on
    to the last piece (one more than the values)."""

    def __call__(
        self,
        pieces: tuple[str, ...],
        values: tuple[Any, ...],
        level: int,
        step: str,
        fallback: Callable[[Any, int, str], str],
        /,
    ) -> str: ...


class _JsonChunk(Protocol):
    """The C module's ``json_chunk(data, pieces, level, step, heads)``: the UTF-8 text of a
    spooled chunk's events (see :func:`chunk_text`), or None."""

    def __call__(
        self, data: bytes, pieces: tuple[str, ...], level: int, step: str, heads: tuple[str, str], /
    ) -> bytes | None: ...


class NativeText(NamedTuple):
    """The C functions that write the text (``parsers/_native_json.c``): a value's, an
    object's fields', a spooled chunk's, a batch of compilations' ahead of their causes
    (:func:`apart_pieces`), and the causes put into that text (:func:`spliced`)."""

    value: _JsonValue
    fields: _JsonFields
    chunk: _JsonChunk
    rows_apart: Callable[..., tuple[bytes, bytes, int]]
    splice: Callable[..., bytes]


#: the C functions, chosen at the first text written (None in it: the C module is not
#: built, or :data:`~recompile_doctor.compiled_modules.NATIVE_ENV` is "0"); asked then, not
#: at import, so that a command that writes no JSON never loads the module
_NATIVE: Final[list[NativeText | None]] = []


def native_text() -> NativeText | None:
    """The C functions that write the text, or None: the text is written in Python."""
    if not _NATIVE:
        from recompile_doctor.parsers._spans import native_in_use

        mod = native_in_use()
        _NATIVE.append(
            None
            if mod is None
            else NativeText(
                mod.json_value,
                mod.json_fields,
                mod.json_chunk,
                mod.json_rows_apart,
                mod.json_splice,
            )
        )
    return _NATIVE[0]


def _text(o: Any, level: int, step: str) -> str:
    """The text of ``o`` nested ``level`` deep, written in C where the module is built
    (:func:`native_text`: the text of :func:`_text_py`, several times faster)."""
    native = native_text()
    if native is None:
        return _text_py(o, level, step)
    return native.value(o, level, step, _text_py)


def _text_py(o: Any, level: int, step: str) -> str:
    """The text of ``o`` nested ``level`` deep: the exact scalar types asked first, each
    written without a call through a table (a report writes one for each field of
    thousands of objects); subclasses take the ``isinstance`` path."""
    c = type(o)
    if c is str:
        return encode_basestring(o)
    if c is float:
        return _float(o)
    if c is int:
        return str(o)  # (an int exactly: its repr)
    if o is None:
        return "null"
    if o is True:
        return "true"
    if o is False:
        return "false"
    if isinstance(o, dict):
        if not o:
            return "{}"
        deeper = level + 1
        sep = ",\n" + step * deeper
        parts = ["{\n", step * deeper]
        for k, v in o.items():
            parts.append(encode_basestring(k) if type(k) is str else _key(k))
            parts.append(": ")
            parts.append(_text_py(v, deeper, step))
            parts.append(sep)
        parts[-1] = "\n" + step * level + "}"
        return "".join(parts)
    if isinstance(o, (list, tuple)):
        if not o:
            return "[]"
        inner = "\n" + step * (level + 1)
        deeper = level + 1
        body = ("," + inner).join([_text_py(v, deeper, step) for v in o])
        return "[" + inner + body + "\n" + step * level + "]"
    if isinstance(o, str):
        return encode_basestring(o)
    if _is_list(o):  # (another sequence: a finding's long list of modules)
        return _text_py(list(o), level, step)
    if isinstance(o, int):
        return int.__repr__(o)
    if isinstance(o, float):
        return _float(o)
    raise TypeError(f"Object of type {type(o).__name__} is not JSON serializable")
