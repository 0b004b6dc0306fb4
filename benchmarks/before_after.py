"""Before and after: ``recompile-doctor analyze`` of this checkout against an older commit,
or of two built packages against each other.

    .venv/bin/python benchmarks/before_after.py --rev 79eb392 --repeat 3 LOG [LOG ...]
    .venv/bin/python benchmarks/before_after.py --builds /tmp/old-compiled build/compiled \
        --repeat 8 LOG [LOG ...]

The older commit's package is extracted (``git archive``) to a temporary folder and run with
the same interpreter and installed dependencies (``PYTHONPATH``); ``--builds`` names two
folders holding a package each (a compiled build installed with ``pip install --target``).
Both run ``analyze LOG --format json -o /dev/null`` in turn, ``--repeat`` times, and the best
and the median wall and CPU seconds of each are printed: a shared machine's speed drifts
between minutes, so only figures taken together compare.  Every package's bytecode is
compiled first: a folder copied with ``cp -r`` (new times on its sources) and run with
``PYTHONDONTWRITEBYTECODE`` set compiles its pure modules again at every start (about
110 ms: a quarter of a 24 MB log's time) and looks that much slower.  Each log is read once
before it is timed: a big log not read for a few minutes may have left the page cache, and
the first run would read it from disk (a 250 MB log: 7.1 s cold, 1.5 s warm), which the
"before" build, timed first, would pay; each package's files are read once too (a compiled
build's 8 MB module, cold, added 0.6 s to a 3 MB log's first run).  Figures are printed, never asserted.
"""

from __future__ import annotations

import argparse
import io
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

from bench_scale import machine_line  # (this folder is on sys.path)

ROOT = Path(__file__).resolve().parent.parent


def extract(rev: str, where: Path) -> None:
    """The ``recompile_doctor`` package of commit ``rev`` into ``where`` (bytecode compiled,
    as an installed package has it)."""
    data = subprocess.run(
        ["git", "-C", str(ROOT), "archive", "--format=tar", rev, "recompile_doctor"],
        capture_output=True,
        check=True,
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        tar.extractall(where, filter="data")
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(where)], check=True)


def warm(log: str) -> None:
    """Read ``log`` once, so that the timed runs find it in the page cache."""
    with open(log, "rb", buffering=0) as f:
        buf = bytearray(1 << 20)
        while f.readinto(buf):
            pass


def run(package_dir: Path, log: str) -> tuple[float, float]:
    """Wall and CPU seconds (user + system) of one ``analyze`` with ``package_dir`` first on
    the path (it runs in the temporary folder: ``log`` is absolute)."""
    env = dict(os.environ, PYTHONPATH=str(package_dir))
    cmd = [sys.executable, "-m", "recompile_doctor", "analyze", log, "--format", "json"]
    t = time.perf_counter()
    p = subprocess.Popen([*cmd, "-o", os.devnull], env=env, cwd=tempfile.gettempdir())
    _, status, usage = os.wait4(p.pid, 0)
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1):  # 1: findings at the failing severity
        raise SystemExit(f"analyze {log} with {package_dir} exited {code}")
    return time.perf_counter() - t, usage.ru_utime + usage.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    which = ap.add_mutually_exclusive_group(required=True)
    which.add_argument("--rev", help="the older commit (any git revision)")
    which.add_argument(
        "--builds", nargs=2, type=Path, metavar=("BEFORE", "NOW"), help="two package folders"
    )
    ap.add_argument("--repeat", type=int, default=3, help="N runs of each, the two in turn")
    ap.add_argument("logs", nargs="+", help="the logs to analyse")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        if args.builds is not None:
            before, now = (p.resolve() for p in args.builds)  # (run from another folder)
            said = f"before: {before}; now: {now}"
        else:
            before, now = Path(tmp), ROOT
            extract(args.rev, before)
            said = f"before: {args.rev}; now: this checkout"
        for where in (before, now):
            subprocess.run([sys.executable, "-m", "compileall", "-q", str(where)], check=True)
            for file in sorted(where.rglob("*")):
                if file.is_file():
                    warm(str(file))
        print(machine_line(str(now)))
        print(
            f"{'log':>24} {'MB':>5} {'before s':>9} {'cpu':>6} {'now s':>7} {'cpu':>6} "
            f"{'wall now/before':>16} {'cpu now/before':>15} {'medians: wall':>14} {'cpu':>6}"
        )
        for log in map(os.path.abspath, args.logs):
            runs: dict[str, list[tuple[float, float]]] = {"before": [], "now": []}
            warm(log)
            for _ in range(max(1, args.repeat)):
                for name, where in (("before", before), ("now", now)):
                    runs[name].append(run(where, log))
            (w0, c0), (w1, c1) = (_best(runs[k]) for k in ("before", "now"))
            (mw0, mc0), (mw1, mc1) = (_median(runs[k]) for k in ("before", "now"))
            mb = os.path.getsize(log) / 1e6
            print(
                f"{os.path.basename(log):>24} {mb:5.0f} {w0:9.2f} {c0:6.2f} {w1:7.2f} {c1:6.2f} "
                f"{w1 / w0:16.3f} {c1 / c0:15.3f} {mw1 / mw0:14.3f} {mc1 / mc0:6.3f}",
                flush=True,
            )
    print(f"{said}; best and median of {args.repeat}, wall and CPU seconds")


def _best(runs: list[tuple[float, float]]) -> tuple[float, float]:
    return min(w for w, _ in runs), min(c for _, c in runs)


def _median(runs: list[tuple[float, float]]) -> tuple[float, float]:
    return statistics.median(w for w, _ in runs), statistics.median(c for _, c in runs)


if __name__ == "__main__":
    main()
