"""Finding the runs under the paths of ``fleet scan``.

A run is a folder: every log file directly in it, and every file of a ``trace/`` subfolder
(torch's ``TORCH_TRACE`` output), belong to that run and are analysed together.  A run's
``dumps/`` subfolder, when present, is passed as its XLA dumps.

Conventions (documented in the README):

* run id: the first 16 hex digits of the SHA-256 of the run folder's absolute path (stable);
* host: the ``(?P<host>...)`` group of ``--host-from REGEX`` searched in the run folder's
  path, else a ``host=NAME`` folder in the path, else none;
* date: a ``date=YYYY-MM-DD`` (or bare ``YYYY-MM-DD``) folder in the path, else the UTC date
  of the newest file of the run;
* rank of a file: ``rank<N>``, ``rank_<N>``, ``rank-<N>`` or ``rank=<N>`` in its name
  (the parsers' own rank, where they know it, takes precedence for compilations);
* streams saved beside their merge: ``NAME.stdout.log`` and ``NAME.stderr.log`` next to a
  ``NAME.log`` exactly as long as they are together (``2>&1 | tee NAME.log`` beside each
  stream, as the simulator writes them) are copies of its lines, not analysed again.
"""

from __future__ import annotations

import datetime as dt
import glob
import hashlib
import os
import posixpath
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from recompile_doctor.errors import RecompileDoctorError
from recompile_doctor.fleet.remote import is_url, list_log_files

#: file name endings (before an optional ``.gz``) that are read as logs
LOG_SUFFIXES = (".log", ".txt", ".out", ".err")
#: subfolders whose files belong to the run above them
TRACE_DIRS = frozenset({"trace", "traces", "torch_trace"})
#: subfolders never searched for logs
SKIP_DIRS = frozenset({"dumps", "cache", "__pycache__"})

_HOST_SEGMENT = re.compile(r"^host=(?P<host>.+)$")
_DATE_SEGMENT = re.compile(r"^(?:date=)?(?P<date>\d{4}-\d\d-\d\d)$")
_RANK = re.compile(r"rank[_=-]?(\d+)", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class FileStat:
    """One file of a run: its path relative to the run folder, size and mtime."""

    rel: str
    size: int
    mtime_ns: int

    @property
    def rank(self) -> int | None:
        m = _RANK.search(os.path.basename(self.rel))
        return int(m.group(1)) if m else None


@dataclass(frozen=True, slots=True)
class RunTask:
    """Everything a worker needs to analyse one run (picklable; paths are absolute)."""

    run_dir: str
    run_id: str
    host: str | None
    date: str
    files: tuple[FileStat, ...]
    dumps: tuple[str, ...] = ()

    def path(self, f: FileStat) -> str:
        if is_url(self.run_dir):
            return posixpath.join(self.run_dir, f.rel)
        return os.path.join(self.run_dir, f.rel)

    def signature(self) -> dict[str, list[int]]:
        """What the incremental index compares: every file's size and mtime."""
        return {f.rel: [f.size, f.mtime_ns] for f in self.files}


#: the endings of a single stream's copy beside its merged log (``NAME.log``)
STREAM_SUFFIXES = (".stdout.log", ".stderr.log")


def without_stream_copies(files: Sequence[FileStat]) -> tuple[FileStat, ...]:
    """``files`` without the single-stream logs whose merged log is among them: for each
    ``NAME.log``, its ``NAME.stdout.log`` / ``NAME.stderr.log`` when their sizes add up to
    its size exactly (then its lines are theirs; anything else is kept)."""
    by_rel = {f.rel: f for f in files}
    copies: set[str] = set()
    for f in files:
        if not f.rel.endswith(".log") or f.rel.endswith(STREAM_SUFFIXES) or f.size <= 0:
            continue
        stem = f.rel[: -len(".log")]
        streams = [by_rel[r] for r in (stem + sfx for sfx in STREAM_SUFFIXES) if r in by_rel]
        if streams and sum(s.size for s in streams) == f.size and min(s.size for s in streams) >= 0:
            copies.update(s.rel for s in streams)
    return tuple(f for f in files if f.rel not in copies)


def run_id_for(run_dir: str) -> str:
    key = run_dir if is_url(run_dir) else os.path.abspath(run_dir)
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:16]


def is_log_file(name: str) -> bool:
    base = name[:-3] if name.endswith(".gz") else name
    return base.endswith(LOG_SUFFIXES)


def _run_dir_of(path: str) -> str:
    if is_url(path):
        parent = posixpath.dirname(path)
        return posixpath.dirname(parent) if posixpath.basename(parent) in TRACE_DIRS else parent
    parent = os.path.dirname(os.path.abspath(path))
    if os.path.basename(parent) in TRACE_DIRS:
        return os.path.dirname(parent)
    return parent


def _has_magic(p: str) -> bool:
    return glob.has_magic(p)


def _walk(root: str, skip: str | None) -> Iterable[str]:
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(
            d
            for d in dirnames
            if d not in SKIP_DIRS
            and not d.startswith(".")
            and (skip is None or os.path.abspath(os.path.join(dirpath, d)) != skip)
        )
        for name in sorted(filenames):
            if is_log_file(name):
                yield os.path.join(dirpath, name)


def log_files(paths: Sequence[str], exclude: str | None = None) -> list[str]:
    """Every log file under ``paths`` (files, folders or globs), absolute, sorted, once."""
    skip = os.path.abspath(exclude) if exclude else None
    found: set[str] = set()
    for p in paths:
        matches = sorted(glob.glob(p, recursive=True)) if _has_magic(p) else [p]
        if not matches:
            raise RecompileDoctorError("no file matches", path=p)
        for m in matches:
            if os.path.isdir(m):
                found.update(os.path.abspath(f) for f in _walk(m, skip))
            elif os.path.isfile(m) or os.path.islink(m):
                found.add(os.path.abspath(m))
            else:
                raise RecompileDoctorError("no such file or directory", path=m)
    return sorted(found)


def _host(run_dir: str, host_from: re.Pattern[str] | None) -> str | None:
    if host_from is not None:
        m = host_from.search(run_dir)
        if m is not None and m.groupdict().get("host"):
            return m.group("host")
        return None
    for seg in re.split(r"[/\\]", run_dir):
        hm = _HOST_SEGMENT.match(seg)
        if hm:
            return hm.group("host")
    return None


def _date(run_dir: str, files: Sequence[FileStat]) -> str:
    for seg in reversed(re.split(r"[/\\]", run_dir)):
        m = _DATE_SEGMENT.match(seg)
        if m:
            try:
                return dt.date.fromisoformat(m.group("date")).isoformat()
            except ValueError:
                continue
    newest = max((f.mtime_ns for f in files), default=0)
    return dt.datetime.fromtimestamp(newest / 1e9, tz=dt.UTC).date().isoformat()


def compile_host_from(pattern: str | None) -> re.Pattern[str] | None:
    if pattern is None:
        return None
    try:
        rx = re.compile(pattern)
    except re.error as e:
        raise RecompileDoctorError(f"--host-from: not a regular expression: {e}") from None
    if "host" not in rx.groupindex:
        raise RecompileDoctorError("--host-from: the expression needs a (?P<host>...) group")
    return rx


def discover_runs(
    paths: Sequence[str], *, host_from: str | None = None, exclude: str | None = None
) -> list[RunTask]:
    """The runs under ``paths``, sorted by folder.  ``exclude``: a folder never searched
    (the output folder)."""
    rx = compile_host_from(host_from)
    by_run: dict[str, list[FileStat]] = {}
    for url in (p for p in paths if is_url(p)):
        for f, size, mtime in list_log_files(url, is_log_file, SKIP_DIRS):
            run_dir = _run_dir_of(f)
            rel = posixpath.relpath(f.split("://", 1)[1], run_dir.split("://", 1)[1])
            by_run.setdefault(run_dir, []).append(FileStat(rel, size, mtime))
    for f in log_files([p for p in paths if not is_url(p)], exclude):
        run_dir = _run_dir_of(f)
        rel = os.path.relpath(f, run_dir)
        try:
            st = os.stat(f)
            size, mtime = st.st_size, st.st_mtime_ns
        except OSError:  # a dangling link: recorded as a failed file by the analysis
            size, mtime = -1, 0
        by_run.setdefault(run_dir, []).append(FileStat(rel, size, mtime))
    tasks = []
    for run_dir in sorted(by_run):
        files = without_stream_copies(sorted(by_run[run_dir], key=lambda s: s.rel))
        dumps = os.path.join(run_dir, "dumps")
        has_dumps = not is_url(run_dir) and os.path.isdir(dumps)
        tasks.append(
            RunTask(
                run_dir=run_dir,
                run_id=run_id_for(run_dir),
                host=_host(run_dir, rx),
                date=_date(run_dir, files),
                files=files,
                dumps=(dumps,) if has_dumps else (),
            )
        )
    return tasks
