"""``fleet scan`` as a library call: discover the runs, skip the unchanged ones, map
:func:`~recompile_doctor.fleet.task.analyze_run` over an executor, write each result."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Executor, Future, wait
from dataclasses import dataclass

from recompile_doctor.errors import RecompileDoctorError
from recompile_doctor.fleet.discover import FileStat, RunTask, discover_runs
from recompile_doctor.fleet.remote import is_url
from recompile_doctor.fleet.store import BatchWriter, Index
from recompile_doctor.fleet.task import RunOutput, analyze_run, lost_run

#: at most this many runs in flight per worker (bounds the driver's memory)
IN_FLIGHT_PER_WORKER = 16


@dataclass(frozen=True, slots=True)
class ScanResult:
    """What a scan did: runs found, analysed, skipped as unchanged; files read and failed."""

    runs: int
    scanned: int
    skipped: int
    files_read: int
    failed_files: int
    failed: tuple[tuple[str, str], ...]  # (path, one-line error)


def scan(
    paths: Sequence[str],
    out: str,
    executor: Executor,
    *,
    host_from: str | None = None,
    workers: int = 2,
    on_start: Callable[[int], None] | None = None,
    on_done: Callable[[RunOutput], None] | None = None,
) -> ScanResult:
    """Scan the runs under ``paths`` into the Parquet folder ``out``."""
    if is_url(out):
        raise RecompileDoctorError("--out must be a local folder", path=out)
    os.makedirs(out, exist_ok=True)
    index = Index.load(out)
    tasks = discover_runs(paths, host_from=host_from, exclude=out)
    todo = [t for t in tasks if not index.unchanged(t)]
    if on_start is not None:
        on_start(len(todo))
    failed: list[tuple[str, str]] = []
    files_read = 0
    limit = max(1, workers) * IN_FLIGHT_PER_WORKER
    pending: dict[Future[RunOutput], RunTask] = {}
    queue = list(reversed(todo))
    writer = BatchWriter(out, index)
    try:
        while queue or pending:
            while queue and len(pending) < limit:
                t = queue.pop()
                pending[executor.submit(analyze_run, t)] = t
            done, _ = wait(list(pending), return_when=FIRST_COMPLETED)
            for fut in sorted(done, key=lambda f: pending[f].run_dir):
                task = pending.pop(fut)
                try:
                    res = fut.result()
                except Exception as e:
                    res = lost_run(task, e)
                writer.add(task, res.tables, res.failed)
                files_read += len(task.files)
                runs = res.tables["runs"].to_pylist()
                failed.extend(
                    (task.path(FileStat(r["file"], 0, 0)), r["error"])
                    for r in runs
                    if r["status"] == "failed"
                )
                if on_done is not None:
                    on_done(res)
    finally:
        writer.close()
        index.save()
    return ScanResult(
        runs=len(tasks),
        scanned=len(todo),
        skipped=len(tasks) - len(todo),
        files_read=files_read,
        failed_files=len(failed),
        failed=tuple(sorted(failed)),
    )
