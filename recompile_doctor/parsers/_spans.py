"""The fast path's byte work: where each candidate line starts and ends, how many lines lie
between candidates, a line's text, where a line ends, the lines a decoder lets pass by
their first bytes, the newlines of a span, where the line some lines on starts (the lines
around the evidence) -- in Python here, and in C (``_native.c``) where that module is built.

Done with ``bytearray.find``, ``rfind`` and ``count``, each of these is a method call that
parses its arguments as a tuple: about 2,500 instructions, against a few dozen for the
search itself, and three of them per candidate line.  The C module does the same work in
one call per buffer (what :func:`line_spans_py` does) or per line (``line_text``).  It is optional:
without a C compiler, or with ``RECOMPILE_DOCTOR_NATIVE=0``, the Python below runs, and the
tests hold the two to the same results.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from types import ModuleType
from typing import Final, NamedTuple

from recompile_doctor.compiled_modules import NATIVE_ENV
from recompile_doctor.parsers._line_text import line_text

LineSpans = Callable[[bytearray, int, int, list[int]], list[int]]
#: ``(data, a, b, limit)``: see :func:`~recompile_doctor.parsers._line_text.line_text`
LineText = Callable[[bytearray, int, int, int], str]

_NL: Final = b"\n"


def line_spans_py(data: bytearray, start: int, end: int, cands: list[int]) -> list[int]:
    """For each line of ``data[start:end]`` holding a position of ``cands`` (ascending;
    those before ``start`` are passed over), three numbers: the line's start, its end (its
    newline, or ``end``), and how many newlines lie between the previous such line's end + 1
    (``start`` for the first) and this line's start.  A line holding several positions is
    given once.  ``start`` is a line's start."""
    out: list[int] = []
    pos = start
    for p in cands:
        if p < pos:
            continue
        if p >= end:
            break
        nl = data.rfind(_NL, pos, p)
        s = pos if nl < 0 else nl + 1
        gap = data.count(_NL, pos, s)
        nl = data.find(_NL, p, end)
        e = end if nl < 0 else nl
        out.append(s)
        out.append(e)
        out.append(gap)
        pos = e + 1
    return out


def line_end_py(data: bytes | bytearray, pos: int, end: int) -> int:
    """Where the line starting at ``pos`` ends: its newline, or ``end``."""
    nl = data.find(_NL, pos, end)
    return end if nl < 0 else nl


def newlines_py(data: bytes | bytearray, start: int, end: int) -> int:
    """The newlines in ``data[start:end]`` (the lines the scanner passes after a buffer's
    last candidate, those of the part before a worker's own: ``bytearray.count`` reads a
    byte at a time, the C ``memchr`` a line)."""
    return data.count(_NL, start, end)


def after_lines_py(data: bytes | bytearray, pos: int, end: int, k: int) -> int:
    """Where the line ``k`` lines after the one starting at ``pos`` starts (``pos`` for 0):
    just past the ``k``-th newline of ``data[pos:end]``; -1 when there are fewer."""
    for _ in range(k):
        nl = data.find(_NL, pos, end)
        if nl < 0:
            return -1
        pos = nl + 1
    return pos


def skip_prefixed_py(data: bytearray, pos: int, end: int, prefix: bytes) -> tuple[int, int]:
    """Past the lines from ``pos`` on that start with ``prefix``, and how many they are."""
    lines = 0
    while pos < end and data.startswith(prefix, pos, end):
        e = line_end_py(data, pos, end)
        pos = end if e == end else e + 1
        lines += 1
    return pos, lines


def take_prefixed_py(
    data: bytearray, pos: int, end: int, prefix: bytes, stop: bytes, limit: int
) -> tuple[int, list[str]]:
    """Past the lines from ``pos`` on that start with ``prefix`` and go on with anything but
    ``stop``, none longer than ``limit`` bytes; and for each, its text after the prefix
    without the CRs that end it: ``line_text(data, s, e, limit).rstrip("\\r")[len(prefix):]``
    (the prefix is ASCII)."""
    bodies: list[str] = []
    n = len(prefix)
    while pos < end and data.startswith(prefix, pos, end):
        e = line_end_py(data, pos, end)
        if e - pos > limit or data.startswith(stop, pos + n, e):
            break
        b = e
        while b > pos + n and data[b - 1] == 13:
            b -= 1
        bodies.append(data[pos + n : b].decode("utf-8", errors="replace"))
        pos = end if e == end else e + 1
    return pos, bodies


class ByteWork(NamedTuple):
    """The functions the fast path does its byte work with, and whether they are C."""

    line_spans: LineSpans
    line_text: LineText
    line_end: Callable[[bytes | bytearray, int, int], int]
    skip_prefixed: Callable[[bytearray, int, int, bytes], tuple[int, int]]
    take_prefixed: Callable[[bytearray, int, int, bytes, bytes, int], tuple[int, list[str]]]
    newlines: Callable[[bytes | bytearray, int, int], int]
    after_lines: Callable[[bytes | bytearray, int, int, int], int]
    native: bool


#: the Python functions
PYTHON: Final = ByteWork(
    line_spans_py,
    line_text,
    line_end_py,
    skip_prefixed_py,
    take_prefixed_py,
    newlines_py,
    after_lines_py,
    False,
)


def native_module() -> ModuleType | None:
    """The C module, if it is built (None otherwise)."""
    try:
        from recompile_doctor.parsers import _native
    except ImportError:
        return None
    return _native


def native_in_use() -> ModuleType | None:
    """The C module when it is built, unless :data:`NATIVE_ENV` is "0" (the scanner's byte
    work, slotted objects and named tuples then made in Python); None otherwise."""
    return None if os.environ.get(NATIVE_ENV) == "0" else native_module()


def chosen() -> ByteWork:
    """The C functions when the module is built, unless :data:`NATIVE_ENV` is "0"; the
    Python ones otherwise."""
    mod = native_in_use()
    if mod is None:
        return PYTHON
    return ByteWork(
        mod.line_spans,
        mod.line_text,
        mod.line_end,
        mod.skip_prefixed,
        mod.take_prefixed,
        mod.newlines,
        mod.after_lines,
        True,
    )
