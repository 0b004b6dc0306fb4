"""Speed of the simulated backend: a 10,000-step run (one Execute line per step), in
steps/second and log lines/second.  Prints figures; asserts nothing."""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from recompile_doctor.simulate import run_scenario


def main(steps: int = 10_000) -> None:
    for name in ("healthy", "kitchen-sink"):
        with tempfile.TemporaryDirectory() as tmp:
            t0 = time.perf_counter()
            r = run_scenario(name, Path(tmp) / "run", steps=steps, env={})
            dt = time.perf_counter() - t0
            size = r.log_path.stat().st_size
            print(
                f"{name:14} {steps} steps in {dt:.2f} s: {steps / dt:,.0f} steps/s, "
                f"{r.lines / dt:,.0f} lines/s, {size / 1e6:.1f} MB of log"
            )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 10_000)
