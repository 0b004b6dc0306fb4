"""Log parsing speed and memory, against grep on the same input.

Generates Poplar/TF-on-IPU logs of two sizes (a verbose training run: compile, cache and phase
lines, Execute lines every step, Keras progress noise), then runs ``recompile-doctor analyze``
on each in a fresh process and reports MB/s, lines/s, peak RSS, and the ratio to
``grep -c`` (the least a log tool must do: read every line once).  Peak memory should not grow
with the log size: logs are streamed.

    python benchmarks/bench_log.py [--mb 40]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CASES = ROOT / "fixtures" / "poplar" / "cases"
KINDS = {
    # steady state: Execute lines and Keras progress after one compile
    "healthy": ("healthy_first_run.log", 23),
    # train and eval take turns: a load of 600 ms every few steps, all kept as events
    "switching": ("alternating_graphs.log", 40),
}


def make_log(path: Path, mb: float, kind: str = "healthy") -> int:
    """A log of about ``mb`` megabytes: a case's head, then its steps repeated."""
    name, cut = KINDS[kind]
    lines = (CASES / name).read_text().splitlines()
    head, body = lines[:cut], lines[cut:]
    noise = "2000/2000 [==============================] - 13s 7ms/step - loss: 0.6238"
    target = int(mb * 1024 * 1024)
    n = 0
    with path.open("w") as f:
        for line in head:
            f.write(line + "\n")
        size = sum(len(x) + 1 for x in head)
        while size < target:
            for line in body:
                f.write(line + "\n")
                f.write(noise + "\n")
                size += len(line) + len(noise) + 2
                n += 2
    return n + len(head)


def run_analyze(path: Path) -> tuple[float, int]:
    """Seconds and peak RSS (KiB) of ``recompile-doctor analyze path --format json``."""
    code = (
        "import resource,sys,time;from recompile_doctor import analyze;"
        "t=time.perf_counter();r=analyze([sys.argv[1]]);"
        "print(time.perf_counter()-t, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(path)], capture_output=True, text=True, check=True
    ).stdout.split()
    return float(out[0]), int(out[1])


def run_grep(path: Path) -> float:
    grep = shutil.which("grep")
    if grep is None:
        return float("nan")
    t = time.perf_counter()
    subprocess.run([grep, "-c", "Begin XLA compilation", str(path)], capture_output=True)
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=float, default=40.0, help="size of the larger log in MB")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        print(
            f"{'kind':>10} {'log':>8} {'lines':>10} {'seconds':>8} {'MB/s':>7} {'lines/s':>10} "
            f"{'peak RSS':>10} {'grep s':>7} {'x grep':>7}"
        )
        for kind in KINDS:
            for mb in (args.mb / 8, args.mb):
                p = Path(d) / f"{kind}_{mb:g}.log"
                n = make_log(p, mb, kind)
                size = os.path.getsize(p) / 1e6
                secs, rss = run_analyze(p)
                g = run_grep(p)
                print(
                    f"{kind:>10} {size:>6.1f}MB {n:>10,} {secs:>8.2f} {size / secs:>7.1f} "
                    f"{n / secs:>10,.0f} {rss / 1024:>8.1f}MB {g:>7.3f} {secs / g:>7.1f}"
                )
                p.unlink()
        print(
            "healthy: peak RSS should not grow with the log (streamed); switching: it grows with "
            "the number of executable loads kept for the timeline, not with the bytes."
        )


if __name__ == "__main__":
    main()
