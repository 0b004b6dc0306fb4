"""A physical line's text as every reader gives it (the plain reader and the fast path's
scanner alike): a module of its own so that the compiled build compiles it with the
scanner, which calls it for every line it hands to a decoder."""

from __future__ import annotations

MAX_LINE_BYTES = 1 << 20  # a line longer than 1 MiB is truncated (the rest is skipped)


def line_text(data: bytes | bytearray, a: int, b: int, limit: int = -1) -> str:
    """The text of the physical line ``data[a:b]`` (newline excluded) as the plain reader
    gives it: cut at ``limit`` bytes (:data:`MAX_LINE_BYTES` unless given), one trailing CR
    removed, bad bytes replaced."""
    if limit < 0:
        limit = MAX_LINE_BYTES
    if b - a > limit:
        b = a + limit
    if b > a and data[b - 1] == 13:
        b -= 1
    return data[a:b].decode("utf-8", errors="replace")
