"""Freed memory given back to the system between the phases of a command.

The C allocator keeps the memory a phase freed for the next one to reuse, but the next phase
does not allocate the same way: after the analysis of a 4 GB log, 21 MB of freed memory was
still the process's (135 MB resident, 114 after a trim), and the HTML page's plots, made on
top of it, took fresh memory beside it.  glibc's ``malloc_trim`` returns the free pages (Dask
does the same for its workers); elsewhere (another C library, another system) nothing is
done.  Only in the command line's process (:func:`process_is_ours`): a library call, the
HTML renderer's between its phases too, leaves its host's memory alone.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    """glibc's ``malloc_trim``, or None where there is none."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes  # (only here: 2 ms of imports)

    try:
        fn = ctypes.CDLL(None).malloc_trim  # (the C library the process runs with)
    except (OSError, AttributeError):  # no such function (musl)
        return None
    fn.argtypes = [ctypes.c_size_t]
    fn.restype = ctypes.c_int
    trim: Callable[[int], int] = fn
    return trim


_ours = False

#: a process whose resident memory never reached this has too little to give back to be
#: worth loading the C library for (``ctypes``: 2 ms of a small log's whole command)
MIN_PEAK_BYTES = 48 << 20


def _peak_bytes() -> int:
    """The process's peak resident memory so far (Linux: the only system trimmed)."""
    import resource  # (a built-in module: no start-up cost)

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # (kB on Linux)


def process_is_ours() -> None:
    """The command line runs this process: :func:`give_back` may trim its heap."""
    global _ours
    _ours = True


def give_back() -> bool:
    """Return the process's free heap pages to the system; whether any were (False where
    the C library cannot, the process is a library caller's (:func:`process_is_ours`), or
    it never grew past :data:`MIN_PEAK_BYTES`)."""
    if not _ours or not sys.platform.startswith("linux") or _peak_bytes() < MIN_PEAK_BYTES:
        return False
    trim = _malloc_trim()
    return trim is not None and bool(trim(0))
