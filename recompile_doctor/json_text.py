"""Indented JSON text, exactly as ``json.dumps(obj, indent=2, ensure_ascii=False)`` writes it,
about twice as fast.

With ``indent`` set, CPython's ``json`` module leaves its C encoder for a pure-Python one;
a report of a big log is mostly many small dictionaries, and that encoder was the largest
single cost of writing it.  Here the containers are walked in Python and every string is
escaped by the C ``encode_basestring``; numbers, ``true``/``false``/``null`` and the
separators are those of ``json.dumps``.  A hypothesis test compares the two on random values.
"""

from __future__ import annotations

import json.encoder
from collections.abc import Callable
from json.encoder import encode_basestring  # the C escaper when the accelerator is built
from typing import Any

#: CPython's C encoder (None when its accelerator is not built; typeshed does not know it)
c_make_encoder: Callable[..., Callable[[Any, int], Any]] | None = getattr(
    json.encoder, "c_make_encoder", None
)

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


#: the exact types a container may hold to be written whole by the C encoder
_FLAT = frozenset(_SCALARS)

#: ``level -> C encoder`` whose item separator already carries that level's indentation
_C_FLAT: dict[tuple[int, str], Callable[[Any, int], Any]] = {}


def _c_flat(level: int, step: str) -> Callable[[Any, int], Any]:
    """The C encoder writing a container of scalars ``level`` deep: its items, separated
    by a newline and the indentation of ``level + 1``, are exactly what the indenting
    encoder writes; only the brackets need their own lines."""
    enc = _C_FLAT.get((level, step))
    if enc is None:
        assert c_make_encoder is not None
        enc = c_make_encoder(
            None, _unserializable, encode_basestring, None,
            ": ", ",\n" + step * (level + 1), False, False, True,
        )  # fmt: skip
        _C_FLAT[(level, step)] = enc
    return enc


def _unserializable(o: object) -> object:
    raise TypeError(f"Object of type {type(o).__name__} is not JSON serializable")


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


def _text(o: Any, level: int, step: str) -> str:
    scalar = _SCALARS.get(o.__class__)
    if scalar is not None:
        return scalar(o)
    if o and c_make_encoder is not None:
        text = _c_text(o, level, step)
        if text is not None:
            return text
    return _walk(o, level, step)


#: what stands for a nested container while its parent goes through the C encoder, and how
#: the C encoder writes it (no other value writes exactly this: a string holding it escapes
#: its quotes; a collision is caught by counting and falls back to the walk)
_MARK = "\x00\x00"
_MARK_TEXT = '"\\u0000\\u0000"'


def _c_text(o: Any, level: int, step: str) -> str | None:
    """A non-empty exact ``dict``, ``list`` or ``tuple`` written by the C encoder: its scalar
    items in one call, each nested container (in its place) by :func:`_text` one level
    deeper.  ``None`` for anything else, or if a marker could be confused with a value."""
    cls = o.__class__
    if cls is dict:
        nested: list[Any] = [k for k, v in o.items() if v.__class__ not in _FLAT]
        if nested:
            flat: Any = dict(o)
            for k in nested:
                flat[k] = _MARK
        else:
            flat = o
    elif cls is list or cls is tuple:
        nested = [i for i, v in enumerate(o) if v.__class__ not in _FLAT]
        flat = list(o) if nested or cls is tuple else o
        for i in nested:
            flat[i] = _MARK
    else:
        return None
    enc = _C_FLAT.get((level, step)) or _c_flat(level, step)
    text = "".join(enc(flat, 0))
    inner = "\n" + step * (level + 1)
    if nested:
        parts = text.split(_MARK_TEXT)
        if len(parts) != len(nested) + 1:
            return None
        deeper = level + 1
        pieces = [parts[0]]
        for key, part in zip(nested, parts[1:], strict=True):
            pieces.append(_text(o[key], deeper, step))
            pieces.append(part)
        text = "".join(pieces)
    return text[0] + inner + text[1:-1] + "\n" + step * level + text[-1]


def _walk(o: Any, level: int, step: str) -> str:
    if isinstance(o, dict):
        if not o:
            return "{}"
        inner = "\n" + step * (level + 1)
        deeper = level + 1
        body = ("," + inner).join(
            [
                (encode_basestring(k) if k.__class__ is str else _key(k))
                + ": "
                + _text(v, deeper, step)
                for k, v in o.items()
            ]
        )
        return "{" + inner + body + "\n" + step * level + "}"
    if isinstance(o, (list, tuple)):
        if not o:
            return "[]"
        inner = "\n" + step * (level + 1)
        body = ("," + inner).join([_text(v, level + 1, step) for v in o])
        return "[" + inner + body + "\n" + step * level + "]"
    if isinstance(o, str):
        return encode_basestring(o)
    if isinstance(o, int):
        return int.__repr__(o)
    if isinstance(o, float):
        return _float(o)
    raise TypeError(f"Object of type {type(o).__name__} is not JSON serializable")
