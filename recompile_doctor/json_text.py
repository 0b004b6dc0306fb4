"""Indented JSON text, exactly as ``json.dumps(obj, indent=2, ensure_ascii=False)`` writes it,
about twice as fast.

With ``indent`` set, CPython's ``json`` module leaves its C encoder for a pure-Python one;
a report of a big log is mostly many small dictionaries, and that encoder was the largest
single cost of writing it.  Here the containers are walked in Python and every string is
escaped by the C ``encode_basestring``; numbers, ``true``/``false``/``null`` and the
separators are those of ``json.dumps``.  A hypothesis test compares the two on random values.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from itertools import islice
from json.encoder import encode_basestring  # the C escaper when the accelerator is built
from typing import Any

_INF = float("inf")


def _float(f: float) -> str:
    """A float's JSON text, as ``json.dumps`` writes it."""
    if f != f:
        return "NaN"
    if f == _INF:
        return "Infinity"
    if f == -_INF:
        return "-Infinity"
    return float.__repr__(f)


def _bool(b: bool) -> str:
    return "true" if b else "false"


def _null(_: None) -> str:
    return "null"


#: the writer of each exact scalar type (subclasses take the isinstance path)
_SCALARS: dict[type, Callable[[Any], str]] = {
    str: encode_basestring,
    int: int.__repr__,
    float: _float,
    bool: _bool,
    type(None): _null,
}


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


#: an object's text with ``%s`` for each value, per (keys, level, indent): made once per shape
_TEMPLATES: dict[tuple[tuple[str, ...], int, int], str] = {}


def object_template(keys: tuple[str, ...], level: int, indent: int = 2) -> str:
    """The text of an object of ``keys`` nested ``level`` deep, a ``%s`` in place of each
    value's text (``template % texts``); at least one key."""
    shape = (keys, level, indent)
    t = _TEMPLATES.get(shape)
    if t is None:
        inner = "\n" + " " * (indent * (level + 1))
        t = _TEMPLATES[shape] = (
            "{"
            + ",".join(inner + _key(k).replace("%", "%%") + ": %s" for k in keys)
            + "\n"
            + " " * (indent * level)
            + "}"
        )
    return t


def fields_text(keys: tuple[str, ...], values: tuple[Any, ...], level: int, indent: int = 2) -> str:
    """``dumps_indented(dict(zip(keys, values)), level, indent)`` without building the dict
    or writing the keys again: for the report's long lists of objects of one shape (events,
    compilations), twice as fast as the dict."""
    if len(keys) != len(values):
        raise ValueError(f"{len(keys)} keys for {len(values)} values")
    if not keys:
        return "{}"
    get = _SCALARS.get
    deeper = level + 1
    step = " " * indent
    return object_template(keys, level, indent) % tuple(
        [w(v) if (w := get(v.__class__)) is not None else _text(v, deeper, step) for v in values]
    )


def event_text(keys: tuple[str, ...], event: tuple[Any, ...], level: int) -> str:
    """The JSON text of a report's event (:class:`recompile_doctor.model.Event`: kind,
    source, line, t, text, module, hash, detail), its fields in the order of ``keys`` (kind,
    source, line, t, module, hash, detail, text): ``dumps_indented(event.to_json(),
    level)``, faster (a report writes thousands; compiled in a compiled build): the fields
    of the types the parsers give are written without asking their type."""
    kind, source, line, t, text, module, hash_, detail = event
    if (
        kind.__class__ is str
        and source.__class__ is str
        and line.__class__ is int
        and text.__class__ is str
        and (t is None or t.__class__ is float)
        and (module is None or module.__class__ is str)
        and (hash_ is None or hash_.__class__ is str)
    ):
        return object_template(keys, level) % (
            encode_basestring(kind),
            encode_basestring(source),
            int.__repr__(line),
            "null" if t is None else _float(t),
            "null" if module is None else encode_basestring(module),
            "null" if hash_ is None else encode_basestring(hash_),
            dumps_indented(detail if detail.__class__ is dict else dict(detail), level + 1),
            encode_basestring(text),
        )
    return fields_text(keys, (kind, source, line, t, module, hash_, dict(detail), text), level)


def _text(o: Any, level: int, step: str) -> str:
    scalar = _SCALARS.get(o.__class__)
    if scalar is not None:
        return scalar(o)
    if isinstance(o, dict):
        if not o:
            return "{}"
        get = _SCALARS.get
        deeper = level + 1
        sep = ",\n" + step * deeper
        parts = ["{\n", step * deeper]
        for k, v in o.items():
            parts.append(encode_basestring(k) if k.__class__ is str else _key(k))
            parts.append(": ")
            w = get(v.__class__)
            parts.append(w(v) if w is not None else _text(v, deeper, step))
            parts.append(sep)
        parts[-1] = "\n" + step * level + "}"
        return "".join(parts)
    if isinstance(o, (list, tuple)):
        if not o:
            return "[]"
        inner = "\n" + step * (level + 1)
        get = _SCALARS.get
        deeper = level + 1
        body = ("," + inner).join(
            [w(v) if (w := get(v.__class__)) is not None else _text(v, deeper, step) for v in o]
        )
        return "[" + inner + body + "\n" + step * level + "]"
    if isinstance(o, str):
        return encode_basestring(o)
    if _is_list(o):  # (another sequence: a finding's long list of modules)
        return _text(list(o), level, step)
    if isinstance(o, int):
        return int.__repr__(o)
    if isinstance(o, float):
        return _float(o)
    raise TypeError(f"Object of type {type(o).__name__} is not JSON serializable")
