"""Before and after: ``recompile-doctor analyze`` of this checkout against an older commit.

    .venv/bin/python benchmarks/before_after.py --rev 79eb392 --repeat 3 LOG [LOG ...]

The older commit's package is extracted (``git archive``) to a temporary folder and run with
the same interpreter and installed dependencies (``PYTHONPATH``).  Both run ``analyze LOG
--format json -o /dev/null`` in turn, ``--repeat`` times, and the best wall and CPU seconds of
each are printed: a shared machine's speed drifts between minutes, so only figures taken
together compare.  Figures are printed, never asserted.
"""

from __future__ import annotations

import argparse
import io
import os
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
    ap.add_argument("--rev", required=True, help="the older commit (any git revision)")
    ap.add_argument("--repeat", type=int, default=3, help="best of N, the two taken in turn")
    ap.add_argument("logs", nargs="+", help="the logs to analyse")
    args = ap.parse_args()
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "recompile_doctor")])
    with tempfile.TemporaryDirectory() as tmp:
        before = Path(tmp)
        extract(args.rev, before)
        print(machine_line(str(ROOT)))
        print(
            f"{'log':>28} {'MB':>7} {'before s':>9} {'cpu':>7} {'now s':>7} {'cpu':>7} "
            f"{'wall now/before':>16} {'cpu now/before':>15}"
        )
        for log in map(os.path.abspath, args.logs):
            best = {"before": (float("inf"),) * 2, "now": (float("inf"),) * 2}
            for _ in range(max(1, args.repeat)):
                for name, where in (("before", before), ("now", ROOT)):
                    w, c = run(where, log)
                    bw, bc = best[name]
                    best[name] = (min(bw, w), min(bc, c))
            (w0, c0), (w1, c1) = best["before"], best["now"]
            mb = os.path.getsize(log) / 1e6
            print(
                f"{os.path.basename(log):>28} {mb:7.0f} {w0:9.2f} {c0:7.2f} {w1:7.2f} {c1:7.2f} "
                f"{w1 / w0:16.2f} {c1 / c0:15.2f}",
                flush=True,
            )
    print(f"before: {args.rev}; now: this checkout; best of {args.repeat}, wall and CPU seconds")


if __name__ == "__main__":
    main()
