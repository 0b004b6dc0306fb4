"""The Parquet folder of a fleet: ``<table>/date=YYYY-MM-DD/<run_id>.parquet`` (zstd) per run
and table, and ``_index.json``, the incremental index (each run's files with size and mtime).

Files are written under a temporary name and renamed, so a reader never sees half a file and
an interrupted scan leaves the previous state of each run.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from recompile_doctor.errors import RecompileDoctorError
from recompile_doctor.fleet.discover import RunTask
from recompile_doctor.fleet.tables import FLEET_SCHEMA_VERSION, TABLES

INDEX_NAME = "_index.json"


def part_path(out: str, table: str, date: str, run_id: str) -> str:
    return os.path.join(out, table, f"date={date}", f"{run_id}.parquet")


@dataclass(slots=True)
class Index:
    """Per run folder: its id, date, and the size/mtime of each file when last scanned."""

    path: str
    runs: dict[str, dict[str, Any]] = field(default_factory=dict)

    @classmethod
    def load(cls, out: str) -> Index:
        path = os.path.join(out, INDEX_NAME)
        if not os.path.exists(path):
            return cls(path)
        try:
            with open(path, encoding="utf-8") as f:
                data = json.load(f)
        except (OSError, ValueError) as e:
            raise RecompileDoctorError(f"unreadable fleet index: {e}", path=path) from None
        if not isinstance(data, dict) or data.get("schema") != FLEET_SCHEMA_VERSION:
            raise RecompileDoctorError(
                f"not a fleet index of schema {FLEET_SCHEMA_VERSION}; scan into a new folder",
                path=path,
            )
        return cls(path, dict(data.get("runs") or {}))

    def unchanged(self, task: RunTask) -> bool:
        entry = self.runs.get(task.run_dir)
        return (
            entry is not None
            and entry.get("files") == task.signature()
            and entry.get("dumps") == list(task.dumps)
        )

    def record(self, task: RunTask, failed: int) -> None:
        self.runs[task.run_dir] = {
            "run_id": task.run_id,
            "date": task.date,
            "files": task.signature(),
            "dumps": list(task.dumps),
            "failed": failed,
        }

    def save(self) -> None:
        data = {"schema": FLEET_SCHEMA_VERSION, "runs": dict(sorted(self.runs.items()))}
        tmp = self.path + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(data, f, indent=1, sort_keys=True)
        os.replace(tmp, self.path)


def write_run(out: str, task: RunTask, tables: Mapping[str, pa.Table], index: Index) -> None:
    """Replace the run's Parquet files (all four tables) with ``tables``."""
    old = index.runs.get(task.run_dir)
    for name in TABLES:
        path = part_path(out, name, task.date, task.run_id)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = path + ".tmp"
        pq.write_table(tables[name], tmp, compression="zstd")
        os.replace(tmp, path)
        if old is not None and old.get("date") != task.date:
            with contextlib.suppress(FileNotFoundError):
                os.remove(part_path(out, name, str(old.get("date")), task.run_id))
