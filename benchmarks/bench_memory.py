"""Peak memory of ``recompile-doctor analyze`` against the size of the log: flat or not.

Generates, deterministically (the generators of ``bench_scale.py`` and ``bench_frameworks.py``),
a compile-heavy JAX log (one compilation every ~6.5 kB), a JAX log where every compilation
comes with JAX's explanation of the cache miss (one every ~2 kB: the 20 %-relevant log of
``bench_frameworks.py``), a Poplar log (20 % relevant lines) and a JAX log of a new
function per compilation with an 8,000-character name (``jax-long-names``: not in the
default kinds) at a few sizes, then
runs, each in a fresh process, ``recompile-doctor analyze LOG --format FMT -o FILE`` and
prints the peak RSS and wall time per log, size and format.  Figures are printed, never
asserted.

    python benchmarks/bench_memory.py [--mb 25 100 250] [--formats json text]
                                      [--kinds jax jax-explained poplar jax-long-names] [--dir DIR]

``--dir`` keeps the generated logs there (reused by the next run; otherwise they go to a
temporary folder removed at the end).  Flat means: the peak of the biggest size is close to
the peak of the smallest.
"""

from __future__ import annotations

import argparse
import itertools
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_frameworks  # the log generators
import bench_scale

#: the 20 %-relevant JAX case of bench_frameworks.py
_JAX_EXPLAINED = next(c for c in bench_frameworks.CASES if c[0] == "jax")


def _jax_long_names(width: int = 8_000) -> Iterator[str]:
    """The first compilation of the JAX fixture again and again, each of a new function
    whose name is ``width`` characters long (generated code's names): what a worker's
    checkpoints hold grows with every name its decoder learns."""
    lines = bench_scale.JAX_CASE.read_text().splitlines()
    first = lines[: next(i for i, ln in enumerate(lines) if ln.startswith("step "))]
    for k in itertools.count():
        name = f"fn{k:09d}_" * (width // 12)
        for line in first:
            yield line.replace("summarize", name)
        for n in range(k * 4, k * 4 + 4):
            yield bench_scale.JAX_NOISE[n % len(bench_scale.JAX_NOISE)].format(n=n)


KINDS: dict[str, Callable[[], Iterator[str]]] = {
    "jax": lambda: bench_scale._jax_lines(8),
    "jax-explained": lambda: bench_frameworks.case_lines("jax", *_JAX_EXPLAINED[2:]),
    "poplar": lambda: bench_scale._poplar_lines(4),
    "jax-long-names": _jax_long_names,
}


def run(cmd: list[str]) -> tuple[float, float, int]:
    """Wall seconds, peak RSS (MB) and exit code of ``cmd`` in a fresh process."""
    t = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(p.pid, 0)
    return time.perf_counter() - t, usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(status)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=int, nargs="+", default=[25, 100, 250], help="log sizes in MB")
    ap.add_argument("--formats", nargs="+", default=["json"], help="json, text, markdown")
    ap.add_argument("--kinds", nargs="+", default=list(KINDS)[:3], choices=list(KINDS))
    ap.add_argument("--dir", type=Path, default=None, help="keep the generated logs here")
    args = ap.parse_args()
    tmp = tempfile.TemporaryDirectory() if args.dir is None else None
    where = Path(tmp.name) if tmp is not None else args.dir
    where.mkdir(parents=True, exist_ok=True)
    print(bench_scale.machine_line())
    print(f"{'log':<14}{'MB':>6}{'format':>10}{'peak RSS MB':>14}{'seconds':>10}")
    try:
        for kind in args.kinds:
            for mb in sorted(args.mb):
                log = where / f"memory-{kind}-{mb}mb.log"
                if not log.exists():
                    bench_scale.write_log(log, KINDS[kind](), mb * 1_000_000)
                for fmt in args.formats:
                    out = where / f"report.{fmt}"
                    cmd = [sys.executable, "-m", "recompile_doctor", "analyze", str(log)]
                    wall, rss, code = run([*cmd, "--format", fmt, "-o", str(out), "--force"])
                    note = "" if code in (0, 1) else f"  (exit {code})"
                    print(f"{kind:<14}{mb:>6}{fmt:>10}{rss:>14.0f}{wall:>10.1f}{note}", flush=True)
                    out.unlink(missing_ok=True)
    finally:
        if tmp is not None:
            tmp.cleanup()


if __name__ == "__main__":
    main()
