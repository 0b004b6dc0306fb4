"""Byte strings kept out of memory: written one after another to an anonymous temporary file
and read back by where they were written.

The file is made at the first write, in the system's temporary folder (never next to an
input), and has no name: it disappears when it is closed, when its owner is dropped, or when
the process ends, whatever the way it ends.  Reading never moves the file's offset (a forked
process may read the same file meanwhile: :mod:`recompile_doctor.events_json`).  A forked
process that writes gets a file of its own (two processes appending to one file would each
take the other's end for theirs); what was written before the fork is still read from the
first.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import IO

from recompile_doctor.read_at import read_at

#: where a blob is: (the file, offset, length)
Blob = tuple[IO[bytes], int, int]


class Blobs:
    """An append-only store of byte strings in an anonymous temporary file."""

    __slots__ = ("_end", "_file", "_old", "_pid", "_prefix")

    def __init__(self, prefix: str) -> None:
        self._prefix = prefix
        self._file: IO[bytes] | None = None
        self._old: list[IO[bytes]] = []  # the files written before a fork (still read)
        self._pid = 0
        self._end = 0

    @property
    def used(self) -> bool:
        """True once something was written."""
        return self._file is not None

    def put(self, data: bytes) -> Blob:
        """Write ``data``; where it is.  An error of the system (a full disk) names the
        temporary folder, not the input being read."""
        import tempfile  # only once something goes out of memory: not at every start

        try:
            f = self._file
            if f is None or self._pid != os.getpid():
                if f is not None:
                    self._old.append(f)
                # unbuffered (a blob is read back with pread, which no write buffer may
                # hold back); closed by close() or with its owner; nameless: nothing is
                # left behind
                f = self._file = tempfile.TemporaryFile(buffering=0, prefix=self._prefix)  # noqa: SIM115
                self._pid = os.getpid()
                self._end = 0
            at = self._end
            _write(f, at, data)
        except OSError as e:
            where = f"temporary folder {tempfile.gettempdir()}"
            raise OSError(e.errno, e.strerror or str(e), where) from None
        self._end = at + len(data)
        return f, at, len(data)

    def rewrite(self, blob: Blob, data: bytes) -> bool:
        """Write ``data`` in place of ``blob``, of the same length, written by this
        process; False (nothing written) otherwise."""
        f, at, n = blob
        if f is not self._file or self._pid != os.getpid() or len(data) != n:
            return False
        _write(f, at, data)
        return True

    @staticmethod
    def get(blob: Blob) -> bytes:
        """The bytes of ``blob``, read without moving the file's offset (a file closed
        meanwhile raises ValueError: its descriptor may be another file's by now)."""
        f, at, n = blob
        data = read_at(f, n, at)
        if len(data) != n:
            raise OSError(f"temporary file cut short: {len(data)} of {n} bytes at {at}")
        return data

    def close(self) -> None:
        """Remove the files (reading their blobs afterwards is an error)."""
        for f in [*self._old, *([self._file] if self._file is not None else [])]:
            f.close()
        self._old.clear()
        self._file = None

    def __reduce__(self) -> tuple[Callable[[], None], tuple[()]]:
        # a copy for another process has none: the blobs' owners (a packed sequence, a
        # spilled column) carry their items, and a spilled table is a plain one there
        return (_none, ())

    def __del__(self) -> None:
        # dropped unclosed: its files go with it, as its own, not as file objects the
        # collector finds open (Python warns of those)
        if getattr(self, "_file", None) is not None or getattr(self, "_old", None):
            self.close()


def _write(f: IO[bytes], at: int, data: bytes) -> None:
    f.seek(at)
    view = memoryview(data)
    while view:  # (an unbuffered write may write less than it was given)
        view = view[f.write(view) or 0 :]


def _none() -> None:
    return None
