"""Run every benchmark script in this folder; each prints its own figures.

``make bench`` runs them at small sizes (``--quick``: a few minutes in all); ``make
bench-full`` at the sizes the README's figures were measured at (a 1 GB log, the fleet of
10,000 runs: an hour or more).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

#: the arguments that make a script quick (scripts not named here are quick already)
QUICK = {
    "bench_scale.py": ["--gb", "0.2"],
    "bench_frameworks.py": ["--mb", "10"],
    "bench_memory.py": ["--mb", "10", "40"],
    "bench_fleet.py": ["--small"],
    "bench_instructions.py": ["--mb", "1", "--only", "jax,tensorflow"],
    "bench_matchers.py": ["--mb", "10"],
}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small inputs: minutes, not an hour")
    args = ap.parse_args()
    failed = 0
    for script in sorted(HERE.glob("bench_*.py")):
        extra = QUICK.get(script.name, []) if args.quick else []
        print(f"\n== {script.name} {' '.join(extra)}", flush=True)
        failed += subprocess.run([sys.executable, str(script), *extra]).returncode != 0
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
