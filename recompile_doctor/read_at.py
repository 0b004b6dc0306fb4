"""Reading a file at an offset without moving the offset others read it from."""

from __future__ import annotations

import os
from typing import IO


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
