"""Runs behind fsspec URLs (``s3://bucket/logs``, ``file:///mnt/logs``, ...): listing their
log files, and copying one run to a local folder on the worker that analyses it.

Only used for paths that contain ``://``, and only where the ``fsspec`` package (and the
package of the URL's protocol, such as ``s3fs``) is installed.
"""

from __future__ import annotations

import datetime as dt
import glob
import os
import posixpath
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from recompile_doctor.errors import RecompileDoctorError


def is_url(path: str) -> bool:
    return "://" in path


def _fs(url: str) -> tuple[Any, str]:
    try:
        import fsspec
    except ImportError:
        raise RecompileDoctorError(
            "URLs need the fsspec package (pip install fsspec)", path=url
        ) from None
    try:
        fs, root = fsspec.core.url_to_fs(url)
        return fs, str(root)
    except (ImportError, ValueError) as e:
        raise RecompileDoctorError(f"unsupported URL: {e}", path=url) from None


def _mtime_ns(info: dict[str, Any]) -> int:
    for key in ("mtime", "LastModified", "last_modified", "updated", "created"):
        v = info.get(key)
        if isinstance(v, (int, float)):
            return int(v * 1e9)
        if isinstance(v, dt.datetime):
            return int(v.timestamp() * 1e9)
        if isinstance(v, str):
            try:
                return int(dt.datetime.fromisoformat(v.replace("Z", "+00:00")).timestamp() * 1e9)
            except ValueError:
                continue
    return 0


def list_log_files(url: str, is_log: Any, skip_dirs: frozenset[str]) -> list[tuple[str, int, int]]:
    """``(url, size, mtime_ns)`` of every log file under ``url`` (a file, folder or glob)."""
    fs, root = _fs(url)
    try:
        matches = sorted(fs.glob(root)) if glob.has_magic(root) else [root]
        out: list[tuple[str, int, int]] = []
        for m in matches:
            if fs.isdir(m):
                for f, info in sorted(fs.find(m, detail=True).items()):
                    rel = posixpath.relpath(f, m)
                    parts = rel.split("/")
                    if any(p in skip_dirs or p.startswith(".") for p in parts[:-1]):
                        continue
                    if is_log(parts[-1]):
                        out.append(
                            (fs.unstrip_protocol(f), int(info.get("size") or 0), _mtime_ns(info))
                        )
            elif fs.isfile(m):
                info = fs.info(m)
                out.append((fs.unstrip_protocol(m), int(info.get("size") or 0), _mtime_ns(info)))
        if not out and not matches:
            raise RecompileDoctorError("no file matches", path=url)
        return out
    except OSError as e:
        raise RecompileDoctorError(f"cannot list: {e}", path=url) from None


@contextmanager
def local_copy(run_url: str, rels: list[str], dumps: tuple[str, ...]) -> Iterator[str]:
    """A temporary local folder holding the run's files (and dumps) under the same names."""
    import tempfile

    fs, root = _fs(run_url)
    with tempfile.TemporaryDirectory(prefix="rd-fleet-") as d:
        for rel in rels:
            dest = os.path.join(d, *rel.split("/"))
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            fs.get_file(posixpath.join(root, rel), dest)
        for dump in dumps:
            _dfs, droot = _fs(dump)
            _dfs.get(droot, os.path.join(d, posixpath.basename(droot)), recursive=True)
        yield d
