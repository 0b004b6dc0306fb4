"""The executable cache on disk: its entries, and which logs used them.

The Poplar backend stores one compiled executable per file, ``<hex>.poplar_exec`` (``%llx`` of
the 64-bit executable hash: lower-case, 1 to 16 digits, no padding; SDK 1.2 wrote
``<hex>.xla_engine.poplar_exec``).  While it compiles or loads one it holds
``<hex>.compile_lock`` / ``<hex>.read_lock`` beside it.  Only files named like that are cache
entries; everything else in the folder is ignored (and never touched by :mod:`cache_prune`).
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from recompile_doctor.cache_usage import LogUsage, Usage, read_usage
from recompile_doctor.errors import RecompileDoctorError

ENTRY_RE = re.compile(r"(?P<hash>[0-9a-f]{1,16})(?P<old>\.xla_engine)?\.poplar_exec")
LOCK_SUFFIXES = (".compile_lock", ".read_lock")


@dataclass(frozen=True, slots=True)
class CacheEntry:
    """One ``.poplar_exec`` file, and what the given logs say about it."""

    file: str  # the name inside the cache folder
    hash: str
    bytes: int
    mtime: float  # seconds since the epoch
    mtime_ns: int
    locked: bool
    modules: tuple[str, ...] = ()
    uses: int = 0
    logs: tuple[str, ...] = ()
    ino: int = 0  # the file's inode when listed: prune removes only that very file

    @property
    def mtime_iso(self) -> str:
        return iso_utc(self.mtime)

    def to_json(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "hash": self.hash,
            "bytes": self.bytes,
            "mtime": self.mtime_iso,
            "locked": self.locked,
            "modules": list(self.modules),
            "uses": self.uses,
        }


@dataclass(frozen=True, slots=True)
class CacheIndex:
    """A cache folder's entries, newest first."""

    dir: str
    entries: tuple[CacheEntry, ...]
    logs: tuple[str, ...] = ()  # the logs the usage comes from
    logs_without_cache_lines: tuple[str, ...] = ()
    real_dir: str = ""  # the folder resolved once, when listed (symlinks followed)
    dir_id: tuple[int, int] | None = None  # its (device, inode) when listed

    @property
    def total_bytes(self) -> int:
        return sum(e.bytes for e in self.entries)

    @property
    def unreferenced_bytes(self) -> int:
        """Bytes of the entries no given log used (all of them when no log is given)."""
        return sum(e.bytes for e in self.entries if e.uses == 0)

    def to_json(self) -> dict[str, Any]:
        return {
            "dir": self.dir,
            "entries": [e.to_json() for e in self.entries],
            "total_bytes": self.total_bytes,
            "unreferenced_bytes": self.unreferenced_bytes,
        }


def iso_utc(t: float) -> str:
    """``2023-04-26T09:00:27Z``."""
    return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def lock_names(file: str) -> list[str]:
    """The lock files that would guard ``file``: ``<hex>.compile_lock`` / ``<hex>.read_lock``
    (and, for the SDK 1.2 form, ``<hex>.xla_engine.*_lock``)."""
    m = ENTRY_RE.fullmatch(file)
    bases = [file.removesuffix(".poplar_exec")]
    if m is not None and m.group("hash") not in bases:
        bases.append(m.group("hash"))
    return [b + s for b in bases for s in LOCK_SUFFIXES]


def lock_paths(folder: Path, file: str) -> list[Path]:
    """:func:`lock_names` inside ``folder``."""
    return [folder / n for n in lock_names(file)]


def _exists_at(dir_fd: int, name: str) -> bool:
    try:
        os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return False
    except OSError:
        return True  # cannot tell: treat as present (the safe side for a lock)
    return True


def is_locked(folder: Path, file: str) -> bool:
    return any(os.path.lexists(p) for p in lock_paths(folder, file))


def is_locked_at(dir_fd: int, file: str) -> bool:
    """:func:`is_locked`, relative to an open folder (no path is resolved again)."""
    return any(_exists_at(dir_fd, n) for n in lock_names(file))


#: how a cache folder is opened: a folder, and never through a symlink (the path is resolved
#: once, before)
DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0)


def check_cache_dir(path: str) -> Path:
    """The folder, or a one-line error when it is missing, not a folder or unreadable."""
    p = Path(path)
    try:
        st = p.stat()
    except FileNotFoundError:
        raise RecompileDoctorError("no such directory", path=path) from None
    except PermissionError:
        raise RecompileDoctorError("permission denied", path=path) from None
    except OSError as e:
        raise RecompileDoctorError(f"cannot read: {e.strerror or e}", path=path) from None
    if not stat.S_ISDIR(st.st_mode):
        raise RecompileDoctorError(
            "not a directory, expected an executable cache folder", path=path
        )
    return p


def open_cache_dir(path: str) -> tuple[int, str]:
    """Resolve ``path`` once and open that folder (never following a symlink after the
    resolution): the descriptor, and the resolved path."""
    check_cache_dir(path)
    real = os.path.realpath(path)
    try:
        return os.open(real, DIR_FLAGS), real
    except PermissionError:
        raise RecompileDoctorError("permission denied", path=path) from None
    except OSError as e:
        raise RecompileDoctorError(f"cannot read: {e.strerror or e}", path=path) from None


def scan_dir(path: str) -> tuple[list[CacheEntry], str, tuple[int, int]]:
    """The ``.poplar_exec`` regular files directly in ``path`` (symlinks are not entries),
    newest first; the folder resolved; its (device, inode).  Everything is read through one
    descriptor of the folder, so the listing is of one folder even if the path changes."""
    fd, real = open_cache_dir(path)
    try:
        dst = os.fstat(fd)
        try:
            names = [n for n in os.listdir(fd) if ENTRY_RE.fullmatch(n)]
        except PermissionError:
            raise RecompileDoctorError("permission denied", path=path) from None
        except OSError as e:
            raise RecompileDoctorError(f"cannot read: {e.strerror or e}", path=path) from None
        entries: list[CacheEntry] = []
        for name in names:
            try:
                st = os.stat(name, dir_fd=fd, follow_symlinks=False)
            except OSError:
                continue  # removed while we looked
            if not stat.S_ISREG(st.st_mode):
                continue
            m = ENTRY_RE.fullmatch(name)
            assert m is not None
            entries.append(
                CacheEntry(
                    file=name,
                    hash=m.group("hash"),
                    bytes=st.st_size,
                    mtime=st.st_mtime,
                    mtime_ns=st.st_mtime_ns,
                    locked=is_locked_at(fd, name),
                    ino=st.st_ino,
                )
            )
    finally:
        os.close(fd)
    entries.sort(key=lambda e: (-e.mtime_ns, e.file))
    return entries, real, (dst.st_dev, dst.st_ino)


def scan(path: str) -> list[CacheEntry]:
    """The ``.poplar_exec`` regular files directly in ``path`` (symlinks are not entries)."""
    return scan_dir(path)[0]


def _with_usage(e: CacheEntry, u: Usage | None) -> CacheEntry:
    if u is None:
        return e
    return CacheEntry(
        e.file, e.hash, e.bytes, e.mtime, e.mtime_ns, e.locked,
        tuple(u.modules), u.uses, tuple(u.logs), e.ino,
    )  # fmt: skip


def index(path: str, logs: Sequence[str] = ()) -> CacheIndex:
    """List the cache at ``path``; with ``logs``, say which modules used each entry."""
    entries, real, dir_id = scan_dir(path)
    usage = read_usage(logs) if logs else LogUsage()
    return CacheIndex(
        dir=path,
        entries=tuple(_with_usage(e, usage.by_hash.get(e.hash)) for e in entries),
        logs=tuple(usage.logs),
        logs_without_cache_lines=tuple(
            g for g in usage.logs if g not in usage.logs_with_cache_lines
        ),
        real_dir=real,
        dir_id=dir_id,
    )
