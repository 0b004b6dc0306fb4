"""The Parquet folder of a fleet and its incremental index.

Layout: ``<table>/date=YYYY-MM-DD/part-<batch>.parquet`` (zstd) for each of the four tables,
where one batch holds the rows of many runs (few, large files: DuckDB reads thousands of
runs quickly), and ``_index.json``: per run folder, its id, date, the size and mtime of each
file when scanned, and the batch file that holds its rows.  A run scanned again is written
to a new batch and its rows are removed from the old one.

Files are written under a temporary name and renamed, so a reader never sees half a file.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from recompile_doctor.errors import RecompileDoctorError
from recompile_doctor.fleet.discover import RunTask
from recompile_doctor.fleet.tables import FLEET_SCHEMA_VERSION, SCHEMAS, TABLES

INDEX_NAME = "_index.json"
#: a batch is written once it holds this many rows (all tables) or runs
BATCH_ROWS = 500_000
BATCH_RUNS = 2_000


@dataclass(slots=True)
class Index:
    """Per run folder: its id, date, files (size, mtime) and the batch holding its rows."""

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

    def record(self, task: RunTask, failed: int, part: str) -> None:
        self.runs[task.run_dir] = {
            "run_id": task.run_id,
            "date": task.date,
            "files": task.signature(),
            "dumps": list(task.dumps),
            "failed": failed,
            "part": part,
        }

    def save(self) -> None:
        data = {"schema": FLEET_SCHEMA_VERSION, "runs": dict(sorted(self.runs.items()))}
        tmp = self.path + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(data, f, indent=1, sort_keys=True)
        os.replace(tmp, self.path)


def _write(table: pa.Table, path: str) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = path + ".tmp"
    pq.write_table(table, tmp, compression="zstd")
    os.replace(tmp, path)


class BatchWriter:
    """Collects the tables of analysed runs and writes them in batches, one file per table
    and date; keeps the index in step and removes the stale rows of runs scanned again."""

    def __init__(self, out: str, index: Index) -> None:
        self.out = out
        self.index = index
        self.stamp = f"{time.time_ns():x}"
        self.batches = 0
        self.pending: list[tuple[RunTask, Mapping[str, pa.Table], int]] = []
        self.rows = 0
        #: old part (relative) -> run ids whose rows in it are stale
        self.stale: dict[str, set[str]] = {}

    def add(self, task: RunTask, tables: Mapping[str, pa.Table], failed: int) -> None:
        self.pending.append((task, tables, failed))
        self.rows += sum(t.num_rows for t in tables.values())
        if self.rows >= BATCH_ROWS or len(self.pending) >= BATCH_RUNS:
            self.flush()

    def flush(self) -> None:
        if not self.pending:
            return
        name = f"part-{self.stamp}-{self.batches:05d}.parquet"
        self.batches += 1
        by_date: dict[str, list[tuple[RunTask, Mapping[str, pa.Table], int]]] = {}
        for item in self.pending:
            by_date.setdefault(item[0].date, []).append(item)
        for date, items in sorted(by_date.items()):
            part = f"date={date}/{name}"
            for table in TABLES:
                merged = pa.concat_tables([t[table] for _, t, _ in items]).unify_dictionaries()
                _write(merged.combine_chunks(), os.path.join(self.out, table, part))
            for task, _, failed in items:
                old = self.index.runs.get(task.run_dir, {}).get("part")
                if old:
                    self.stale.setdefault(old, set()).add(task.run_id)
                self.index.record(task, failed, part)
        self.pending = []
        self.rows = 0
        self.index.save()

    def close(self) -> None:
        """Write what is left, then drop the stale rows of runs scanned again."""
        self.flush()
        live = {str(e.get("part")) for e in self.index.runs.values()}
        for part, run_ids in sorted(self.stale.items()):
            for table in TABLES:
                path = os.path.join(self.out, table, part)
                if not os.path.exists(path):
                    continue
                if part not in live:
                    os.remove(path)
                    continue
                t = pq.read_table(path, schema=SCHEMAS[table])
                keep = pc.invert(pc.is_in(t["run_id"], pa.array(sorted(run_ids))))
                _write(t.filter(keep), path)
        self.stale = {}
