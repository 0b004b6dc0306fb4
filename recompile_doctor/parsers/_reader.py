"""Streaming input: plain files, gzip (detected by magic bytes) and stdin.

Yields ``(line_number, text)`` with 1-based physical line numbers.  Memory does not grow with
the size of the input: lines are read one at a time and an absurdly long line is cut at
:data:`MAX_LINE_BYTES`.  Invalid UTF-8 is replaced (never an error), CRLF endings are removed.
"""

from __future__ import annotations

import gzip
import io
import os
import sys
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from recompile_doctor.errors import RecompileDoctorError

GZIP_MAGIC = b"\x1f\x8b"
MAX_LINE_BYTES = 1 << 20  # a line longer than 1 MiB is truncated (the rest is skipped)
STDIN_NAME = "-"


@dataclass(slots=True)
class ReadStats:
    """Counters filled in while a source is read."""

    lines: int = 0
    bytes: int = 0
    size: int | None = None  # size on disk, when known (for progress bars)
    compressed: bool = False


def display_name(path: str | os.PathLike[str]) -> str:
    """How an input is named in reports and errors (``-`` for stdin)."""
    return str(path)


def _open_binary(path: str) -> tuple[BinaryIO, int | None]:
    if path == STDIN_NAME:
        return sys.stdin.buffer, None
    p = Path(path)
    try:
        if p.is_dir():
            raise RecompileDoctorError("is a directory, expected a log file", path=path)
        f = p.open("rb")
    except FileNotFoundError:
        raise RecompileDoctorError("no such file", path=path) from None
    except PermissionError:
        raise RecompileDoctorError("permission denied", path=path) from None
    except OSError as e:
        raise RecompileDoctorError(f"cannot read: {e.strerror or e}", path=path) from None
    try:
        size = os.fstat(f.fileno()).st_size
    except OSError:
        size = None
    return f, size


def open_source(path: str, stats: ReadStats | None = None) -> BinaryIO:
    """Open ``path`` (or stdin for ``-``) for binary reading, transparently gunzipping."""
    raw, size = _open_binary(path)
    buffered: io.BufferedReader = (
        raw if isinstance(raw, io.BufferedReader) else io.BufferedReader(raw)  # type: ignore[arg-type]
    )
    try:
        head = buffered.peek(2)[:2]
    except OSError as e:
        raise RecompileDoctorError(f"cannot read: {e.strerror or e}", path=path) from None
    if stats is not None:
        stats.size = size
    if head == GZIP_MAGIC:
        if stats is not None:
            stats.compressed = True
        return gzip.GzipFile(fileobj=buffered, mode="rb")  # type: ignore[return-value]
    return buffered


def iter_lines(
    path: str,
    stats: ReadStats | None = None,
    on_progress: Callable[[int], None] | None = None,
    allow_empty: bool = False,
) -> Iterator[tuple[int, str]]:
    """Yield ``(line_number, text)`` for every physical line of ``path``.

    ``text`` has its line ending removed and invalid bytes replaced by U+FFFD.  Raises
    :class:`RecompileDoctorError` for a missing, unreadable, empty or corrupt input.
    """
    st = stats if stats is not None else ReadStats()
    f = open_source(path, st)
    lineno = 0
    try:
        while True:
            try:
                raw = f.readline(MAX_LINE_BYTES)
                if raw and len(raw) == MAX_LINE_BYTES and not raw.endswith(b"\n"):
                    # skip the rest of an over-long line
                    while True:
                        rest = f.readline(MAX_LINE_BYTES)
                        st.bytes += len(rest)
                        if not rest or rest.endswith(b"\n"):
                            break
            except (EOFError, gzip.BadGzipFile, zlib.error) as e:
                raise RecompileDoctorError(
                    f"broken gzip stream after line {lineno}: {e}", path=path
                ) from None
            except OSError as e:
                raise RecompileDoctorError(f"cannot read: {e.strerror or e}", path=path) from None
            if not raw:
                break
            lineno += 1
            st.bytes += len(raw)
            st.lines = lineno
            if raw.endswith(b"\n"):
                raw = raw[:-1]
            if raw.endswith(b"\r"):
                raw = raw[:-1]
            if on_progress is not None and lineno % 4096 == 0:
                on_progress(st.bytes)
            yield lineno, raw.decode("utf-8", errors="replace")
    finally:
        if path != STDIN_NAME:
            f.close()
    if lineno == 0 and not allow_empty:
        raise RecompileDoctorError("empty input", path=path)
    if on_progress is not None:
        on_progress(st.bytes)


def read_lines_around(
    path: str, wanted: dict[int, int]
) -> dict[int, tuple[list[str], str, list[str]]]:
    """Second pass for evidence context: for each wanted line number ``n`` with radius ``r``,
    return ``(before, line, after)``.  Streams; keeps only a small window in memory.

    Returns an empty dict for stdin (it cannot be read twice).
    """
    if path == STDIN_NAME or not wanted:
        return {}
    radius = max(wanted.values())
    from collections import deque

    window: deque[tuple[int, str]] = deque(maxlen=radius + 1)
    pending: dict[int, tuple[list[str], str, list[str]]] = {}
    out: dict[int, tuple[list[str], str, list[str]]] = {}
    last_wanted = max(wanted)
    try:
        for n, text in iter_lines(path, allow_empty=True):
            for k, (_before, _line, after) in list(pending.items()):
                if n - k <= wanted[k]:
                    after.append(text)
                if n - k >= wanted[k]:
                    out[k] = pending.pop(k)
            if n in wanted:
                r = wanted[n]
                before = [t for (m, t) in window if n - m <= r]
                pending[n] = (before, text, [])
            window.append((n, text))
            if n > last_wanted + radius and not pending:
                break
    except RecompileDoctorError:
        return out
    out.update(pending)
    return out
