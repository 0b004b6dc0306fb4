"""``fleet scan`` throughput: one process, the local process pool, a loopback Dask cluster.

Makes RUNS run folders, each with one Poplar/TF-on-IPU log of MB megabytes (hard links of one
generated log, so the disk holds it once), scans them into Parquet three ways and prints files
per second, MB per second and the cluster's overhead per task (the round trip of an empty task
through ``client.get_executor()``).  Figures are printed, never asserted.

    python benchmarks/bench_fleet.py            # 1,000 logs of 10 MB
    python benchmarks/bench_fleet.py --small    # 40 logs of 1 MB
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from concurrent.futures import wait
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_log import make_log

from recompile_doctor.fleet import scan
from recompile_doctor.fleet.executors import default_jobs, executor_for


def make_fleet(root: Path, runs: int, mb: float) -> None:
    src = root / "source.log"
    make_log(src, mb)
    for i in range(runs):
        d = root / "logs" / f"host=node{i % 8}" / f"run{i:05d}"
        d.mkdir(parents=True)
        os.link(src, d / "run.log")


def _dask(*args: str) -> list[str]:
    script = Path(sys.executable).parent / "dask"
    return [str(script), *args] if script.exists() else [sys.executable, "-m", "dask", *args]


@contextmanager
def loopback_cluster(workers: int, tmp: Path) -> Iterator[str]:
    """A scheduler and ``workers`` single-threaded workers on 127.0.0.1."""
    sched = tmp / "scheduler.json"
    log = (tmp / "cluster.log").open("wb")
    procs = [
        subprocess.Popen(
            _dask(
                "scheduler",
                "--host",
                "127.0.0.1",
                "--port",
                "0",
                "--no-dashboard",
                "--scheduler-file",
                str(sched),
            ),
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    ]
    try:
        deadline = time.monotonic() + 60
        while not sched.exists() or not sched.read_text().strip():
            if time.monotonic() > deadline:
                raise RuntimeError("the scheduler did not start")
            time.sleep(0.1)
        address = json.loads(sched.read_text())["address"]
        procs.append(
            subprocess.Popen(
                _dask(
                    "worker",
                    address,
                    "--host",
                    "127.0.0.1",
                    "--nworkers",
                    str(workers),
                    "--nthreads",
                    "1",
                    "--memory-limit",
                    "0",
                    "--no-dashboard",
                ),
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        )
        from distributed import Client

        with Client(address, timeout=60) as client:
            client.wait_for_workers(workers, timeout=60)
        yield address
    finally:
        for p in reversed(procs):
            p.terminate()
        for p in procs:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
        log.close()


def _noop(i: int) -> int:
    return i


def task_overhead(address: str, n: int = 1000) -> float:
    """Seconds per empty task submitted through the cluster's executor."""
    from distributed import Client

    with Client(address, timeout=60) as client:
        ex = client.get_executor(pure=False)
        wait([ex.submit(_noop, i) for i in range(20)])  # warm up
        t = time.perf_counter()
        wait([ex.submit(_noop, i) for i in range(n)])
        return (time.perf_counter() - t) / n


def timed_scan(
    paths: list[str], out: Path, scheduler: str | None, jobs: int | None, fresh: bool = True
) -> float:
    if fresh:
        shutil.rmtree(out, ignore_errors=True)
    with executor_for(scheduler, jobs) as (ex, workers):
        t = time.perf_counter()
        res = scan(paths, str(out), ex, workers=workers)
        dt = time.perf_counter() - t
    assert res.failed_files == 0, res.failed
    return dt


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=1000)
    ap.add_argument("--mb", type=float, default=10.0)
    ap.add_argument("--small", action="store_true", help="40 logs of 1 MB")
    args = ap.parse_args()
    runs, mb = (40, 1.0) if args.small else (args.runs, args.mb)
    cores = default_jobs()
    with tempfile.TemporaryDirectory(prefix="bench-fleet-") as tmpdir:
        tmp = Path(tmpdir)
        make_fleet(tmp, runs, mb)
        paths = [str(tmp / "logs")]
        total_mb = runs * mb
        print(f"{runs} logs of {mb:g} MB ({total_mb:g} MB), {cores} cores")
        rows = [("one process", timed_scan(paths, tmp / "o1", None, 1))]
        rows.append((f"local pool ({cores})", timed_scan(paths, tmp / "o2", None, cores)))
        with loopback_cluster(cores, tmp) as address:
            rows.append((f"dask loopback ({cores})", timed_scan(paths, tmp / "o3", address, None)))
            overhead = task_overhead(address)
            # nothing changed: the index answers, no file is read
            rescan = timed_scan(paths, tmp / "o3", address, None, fresh=False)
        for name, secs in rows:
            print(
                f"  {name:22s} {secs:8.2f} s  {runs / secs:8.1f} files/s  {total_mb / secs:8.1f} MB/s"
            )
        print(f"  cluster overhead per task: {overhead * 1000:.2f} ms (empty task round trip)")
        print(f"  re-scan, nothing changed:  {rescan:.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
