"""Reading a file at an offset without moving the offset others read it from, and a span of
a file copied to another by the system."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import IO, NamedTuple


def read_at(f: IO[bytes], n: int, offset: int) -> bytes:
    """Up to ``n`` bytes of ``f`` from byte ``offset``, its position left where it was:
    ``pread`` where the system has it (the offset, which a forked process shares, never
    moves), else a seek there and back (a system without ``fork`` shares none).  A file
    closed meanwhile raises ValueError (its descriptor's number may be another file's)."""
    pread = getattr(os, "pread", None)
    if pread is not None:
        data: bytes = pread(f.fileno(), n, offset)
        return data
    at = f.tell()
    try:
        f.seek(offset)
        return f.read(n)
    finally:
        f.seek(at)


#: bytes read and written at a time where a span of a file is not copied by the system
COPY_PIECE = 1 << 20


class FileSpan(NamedTuple):
    """Bytes ``offset`` to ``offset + length`` of an open file, handed to a writer that can
    have the system copy them (:func:`copy_span`) instead of reading them (a JSON report's
    events, written by a second process: 250 MB of text for a 250 MB JAX log)."""

    f: IO[bytes]
    offset: int
    length: int


def span_pieces(span: FileSpan, size: int = COPY_PIECE) -> Iterator[bytes]:
    """The bytes of ``span``, ``size`` at a time (:func:`read_at`: a closed file raises
    ValueError; one shorter than the span, OSError)."""
    pos, end = span.offset, span.offset + span.length
    while pos < end:
        data = read_at(span.f, min(size, end - pos), pos)
        if not data:
            raise OSError(f"the file ended {end - pos} bytes before its span's end")
        pos += len(data)
        yield data


def copy_span(span: FileSpan, out: IO[bytes], size: int = COPY_PIECE) -> None:
    """Write the bytes of ``span`` to ``out`` (flushed first): copied by the system
    (``sendfile``: not through this process's memory) where ``out`` is a file descriptor it
    writes to, else read and written ``size`` at a time.  A closed pipe raises
    BrokenPipeError either way."""
    out.flush()
    pos, end = span.offset, span.offset + span.length
    sendfile = getattr(os, "sendfile", None)
    try:
        fd = out.fileno()
    except (AttributeError, OSError, ValueError):  # (io.UnsupportedOperation: a memory one)
        fd = -1
    if sendfile is not None and fd >= 0:
        try:
            while pos < end:
                sent: int = sendfile(fd, span.f.fileno(), pos, min(end - pos, 1 << 30))
                if sent == 0:
                    break  # (the file ended early: span_pieces says so below)
                pos += sent
        except BrokenPipeError:
            raise
        except OSError:
            pass  # not for this kind of file (a socket only, on some systems), or a failure
            # the writes below meet again: the rest written as read
    for data in span_pieces(FileSpan(span.f, pos, end - pos), size):
        out.write(data)
