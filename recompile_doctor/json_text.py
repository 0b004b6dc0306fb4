"""Indented JSON text, exactly as ``json.dumps(obj, indent=2, ensure_ascii=False)`` writes it,
about twice as fast.

With ``indent`` set, CPython's ``json`` module leaves its C encoder for a pure-Python one;
a report of a big log is mostly many small dictionaries, and that encoder was the largest
single cost of writing it.  Here the containers are walked in Python and every string is
escaped by the C ``encode_basestring``; numbers, ``true``/``false``/``null`` and the
separators are those of ``json.dumps``.  A hypothesis test compares the two on random values.
"""

from __future__ import annotations

from collections.abc import Callable
from json.encoder import encode_basestring  # the C escaper when the accelerator is built
from typing import Any

_INF = float("inf")


def _float(f: float) -> str:
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


#: the text around each value of an object, per (keys, level): made once per shape
_SHAPES: dict[tuple[tuple[str, ...], int, int], tuple[tuple[str, ...], str]] = {}


def fields_text(keys: tuple[str, ...], values: tuple[Any, ...], level: int, indent: int = 2) -> str:
    """``dumps_indented(dict(zip(keys, values)), level, indent)`` without building the dict
    or writing the keys again: for the report's long lists of objects of one shape (events,
    compilations), twice as fast as the dict."""
    if not keys:
        return "{}"
    shape = _SHAPES.get((keys, level, indent))
    if shape is None:
        step = " " * indent
        inner = "\n" + step * (level + 1)
        shape = _SHAPES[(keys, level, indent)] = (
            ("{" + inner + _key(keys[0]) + ": ", *("," + inner + _key(k) + ": " for k in keys[1:])),
            "\n" + step * level + "}",
        )
    before, end = shape
    get = _SCALARS.get
    deeper = level + 1
    step = " " * indent
    parts = []
    for text, v in zip(before, values, strict=True):
        parts.append(text)
        w = get(v.__class__)
        parts.append(w(v) if w is not None else _text(v, deeper, step))
    parts.append(end)
    return "".join(parts)


def _text(o: Any, level: int, step: str) -> str:
    scalar = _SCALARS.get(o.__class__)
    if scalar is not None:
        return scalar(o)
    if isinstance(o, dict):
        if not o:
            return "{}"
        inner = "\n" + step * (level + 1)
        deeper = level + 1
        get = _SCALARS.get
        body = ("," + inner).join(
            [
                (encode_basestring(k) if k.__class__ is str else _key(k))
                + ": "
                + (w(v) if (w := get(v.__class__)) is not None else _text(v, deeper, step))
                for k, v in o.items()
            ]
        )
        return "{" + inner + body + "\n" + step * level + "}"
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
    if isinstance(o, int):
        return int.__repr__(o)
    if isinstance(o, float):
        return _float(o)
    raise TypeError(f"Object of type {type(o).__name__} is not JSON serializable")
