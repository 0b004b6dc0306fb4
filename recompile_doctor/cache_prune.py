"""Which executable-cache entries to remove, and removing them.

The rule: an entry is selected when **any** given criterion selects it --

* ``unused``: no ``--unused-by`` log used it;
* ``older-than``: it was last written more than the given time ago;
* ``keep-newest``: it is not among the N newest entries;
* ``max-size``: it and the newer entries add up to more than the given size (the newest
  entries that fit are kept; once one does not fit, all older ones go).

Ranking (newest first, by modification time) counts every entry, locked or not.  A selected
entry whose ``.compile_lock``/``.read_lock`` exists is skipped, never removed.  Only
``<hex>.poplar_exec`` regular files are ever removed; locks and other files are left alone.
"""

from __future__ import annotations

import errno
import os
import re
import stat
import time
from dataclasses import dataclass, field
from typing import Any

from recompile_doctor.cache import DIR_FLAGS, ENTRY_RE, CacheEntry, CacheIndex, is_locked_at

_DURATION_RE = re.compile(r"(?P<n>\d+(?:\.\d+)?)\s*(?P<unit>[smhdw])", re.IGNORECASE)
_DURATION_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
#: limits beyond which a --max-size or --older-than is a typo, not a wish (8 EiB; 1000 years)
MAX_SIZE_BYTES = 1 << 63
MAX_DURATION_S = 1000 * 365 * 86400
_SIZE_RE = re.compile(
    r"(?P<n>\d+(?:\.\d+)?)\s*(?:(?P<unit>[kmgt])(?P<i>i)?(?P<b>b)?|b)?", re.IGNORECASE
)


def parse_duration(text: str) -> float:
    """``7d``, ``12h``, ``30m``, ``3600s``, ``2w`` -> seconds.  A unit is required."""
    m = _DURATION_RE.fullmatch(text.strip())
    if m is None:
        raise ValueError(f"expected a number and a unit (s, m, h, d or w), like 7d, not {text!r}")
    seconds = float(m.group("n")) * _DURATION_UNITS[m.group("unit").lower()]
    if not seconds <= MAX_DURATION_S:  # also inf and nan
        raise ValueError(f"{text.strip()!r} is longer than 1000 years")
    return seconds


def parse_size(text: str) -> int:
    """Bytes: ``123``, ``500M``, ``10G``, ``1.5GiB`` (powers of 1024), ``10GB`` (of 1000)."""
    m = _SIZE_RE.fullmatch(text.strip())
    if m is None:
        raise ValueError(f"expected a size like 500M, 10G or a number of bytes, not {text!r}")
    unit = (m.group("unit") or "").lower()
    power = "kmgt".index(unit) + 1 if unit else 0
    base = 1000 if m.group("b") and not m.group("i") else 1024
    size = float(m.group("n")) * base**power
    if not size < MAX_SIZE_BYTES:  # also inf and nan
        raise ValueError(f"{text.strip()!r} is larger than 8 EiB")
    return int(size)


@dataclass(frozen=True, slots=True)
class Criteria:
    """What makes a cache entry removable (any one of them set is enough)."""

    unused_by: tuple[str, ...] = ()
    older_than_s: float | None = None
    keep_newest: int | None = None
    max_size: int | None = None

    def any(self) -> bool:
        return bool(self.unused_by) or any(
            v is not None for v in (self.older_than_s, self.keep_newest, self.max_size)
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "unused_by": list(self.unused_by),
            "older_than_seconds": self.older_than_s,
            "keep_newest": self.keep_newest,
            "max_size_bytes": self.max_size,
        }


@dataclass(frozen=True, slots=True)
class Selected:
    """A cache entry chosen for removal, why, and why it was then left (if it was)."""

    entry: CacheEntry
    reasons: tuple[str, ...]
    why_skipped: str | None = None  # "locked", "changed since it was listed", an OS error

    def to_json(self) -> dict[str, Any]:
        e = self.entry
        out: dict[str, Any] = {"file": e.file, "hash": e.hash, "bytes": e.bytes}
        out.update({"mtime": e.mtime_iso, "reasons": list(self.reasons)})
        if self.why_skipped is not None:
            out["why"] = self.why_skipped
        return out


@dataclass(slots=True)
class PrunePlan:
    """The entries a prune would remove and keep; what it removed once applied."""

    dir: str
    criteria: Criteria
    remove: list[Selected] = field(default_factory=list)
    skipped: list[Selected] = field(default_factory=list)
    kept: int = 0
    removed: list[Selected] = field(default_factory=list)  # filled by :func:`apply`
    applied: bool = False
    real_dir: str = ""  # the folder as resolved when listed
    dir_id: tuple[int, int] | None = None  # its (device, inode) when listed

    @property
    def bytes_to_free(self) -> int:
        return sum(s.entry.bytes for s in self.remove)

    @property
    def freed_bytes(self) -> int:
        return sum(s.entry.bytes for s in self.removed)

    @property
    def failed(self) -> list[Selected]:
        """Entries the removal was attempted on and failed (not a safe skip)."""
        return [s for s in self.skipped if (s.why_skipped or "").startswith("cannot")]

    def to_json(self) -> dict[str, Any]:
        return {
            "dir": self.dir,
            "dry_run": not self.applied,
            "criteria": self.criteria.to_json(),
            "remove": [s.to_json() for s in self.remove],
            "skipped": [s.to_json() for s in self.skipped],
            "kept": self.kept,
            "bytes_to_free": self.bytes_to_free,
            "removed": [s.entry.file for s in self.removed],
            "freed_bytes": self.freed_bytes,
        }


def _reasons(idx: CacheIndex, c: Criteria, now: float) -> list[list[str]]:
    out: list[list[str]] = [[] for _ in idx.entries]
    running = 0
    for i, e in enumerate(idx.entries):  # newest first
        running += e.bytes
        if c.unused_by and e.uses == 0:
            out[i].append("unused")
        if c.older_than_s is not None and now - e.mtime > c.older_than_s:
            out[i].append("older-than")
        if c.keep_newest is not None and i >= c.keep_newest:
            out[i].append("keep-newest")
        if c.max_size is not None and running > c.max_size:
            out[i].append("max-size")
    return out


def plan(idx: CacheIndex, criteria: Criteria, now: float | None = None) -> PrunePlan:
    """What pruning ``idx`` by ``criteria`` would remove (``idx`` carries the usage of the
    ``--unused-by`` logs).  Deletes nothing."""
    t = time.time() if now is None else now
    p = PrunePlan(idx.dir, criteria, real_dir=idx.real_dir, dir_id=idx.dir_id)
    for e, reasons in zip(idx.entries, _reasons(idx, criteria, t), strict=True):
        if not reasons:
            p.kept += 1
        elif e.locked:
            p.skipped.append(Selected(e, tuple(reasons), "locked"))
        else:
            p.remove.append(Selected(e, tuple(reasons)))
    return p


def _check_unchanged(dir_fd: int, e: CacheEntry) -> str | None:
    """Why ``e`` must not be removed now, or ``None``: checked through the folder's
    descriptor, never by path."""
    if ENTRY_RE.fullmatch(e.file) is None:  # never anything but a cache entry
        return "not a cache entry"
    if is_locked_at(dir_fd, e.file):
        return "locked"
    try:
        st = os.stat(e.file, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return "already gone"
    except OSError as err:
        return f"cannot read: {err.strerror or err}"
    if not stat.S_ISREG(st.st_mode):
        return "not a regular file"
    if st.st_size != e.bytes or st.st_mtime_ns != e.mtime_ns or (e.ino and st.st_ino != e.ino):
        return "changed since it was listed"
    return None


_REPLACED = "cannot remove: the cache folder was replaced since it was listed"


def _open_listed_dir(p: PrunePlan) -> tuple[int | None, str | None]:
    """Open the folder that was listed -- the same one, not whatever its path names now."""
    try:
        fd = os.open(p.real_dir or p.dir, DIR_FLAGS)
    except OSError as err:
        if err.errno in (errno.ELOOP, errno.ENOTDIR, errno.ENOENT):  # now a symlink, or gone
            return None, _REPLACED
        return None, f"cannot remove: cannot open the cache folder: {err.strerror or err}"
    st = os.fstat(fd)
    if p.dir_id is not None and (st.st_dev, st.st_ino) != p.dir_id:
        os.close(fd)
        return None, _REPLACED
    return fd, None


def apply(p: PrunePlan) -> PrunePlan:
    """Remove the planned entries, through one descriptor of the folder that was listed.  Each
    is checked again just before: still unlocked, a regular file, the same file (inode), size
    and time as listed.  Anything that fails moves to ``skipped`` with why."""
    fd, why_all = _open_listed_dir(p)
    try:
        for s in p.remove:
            why = why_all if fd is None else _check_unchanged(fd, s.entry)
            if why is None and fd is not None:
                try:
                    os.unlink(s.entry.file, dir_fd=fd)
                except OSError as err:
                    why = f"cannot remove: {err.strerror or err}"
            if why is None:
                p.removed.append(s)
            else:
                p.skipped.append(Selected(s.entry, s.reasons, why))
    finally:
        if fd is not None:
            os.close(fd)
    p.applied = True
    return p
