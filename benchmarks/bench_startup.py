"""Start-up: best-of-N wall time of short commands, against the 0.15 s target (issue 10).

Each command runs N times as a fresh process (the console script's interpreter, with the
package's bytecode compiled first, as an installed wheel has it, and run once before, which
keeps its dataclasses' code as a first run of an installed package does); the best run is the figure
least disturbed by other work on the machine; the CPU time (user + system) of the child is
steadier still when other work competes for the cores.  Two set-ups: "venv" as ``.venv`` runs it (an
editable install, whose import hook itself loads ``pathlib``), and "installed" without that
hook (``python -S`` with the package and site-packages on the path), as a wheel runs it.
Prints figures, never asserts.

    .venv/bin/python benchmarks/bench_startup.py [-n N]
"""

from __future__ import annotations

import argparse
import compileall
import os
import resource
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET_S = 0.15
LOG = ROOT / "fixtures" / "jax" / "growing_shape" / "run.log"
HLO = ROOT / "fixtures" / "hlo" / "jax" / "batch_size" / "dumps"
HLO_A = HLO / "module_0000.jit_mlp.before_optimizations.txt"
HLO_B = HLO / "module_0002.jit_mlp.before_optimizations.txt"

#: name -> the command's arguments
COMMANDS: dict[str, list[str]] = {
    "--version": ["--version"],
    "--help": ["--help"],
    "analyze SMALL --format json": ["analyze", str(LOG), "--format", "json", "-o", os.devnull],
    "analyze SMALL (text)": ["analyze", str(LOG)],
    "diff SMALL_A SMALL_B": ["diff", str(HLO_A), str(HLO_B)],
}

#: what the console script runs
ENTRY = (
    "import sys; from recompile_doctor.cli.main import run; sys.argv[0] = 'recompile-doctor'; run()"
)


def best_of(
    argv: list[str], n: int, installed: bool, write: bool = False
) -> tuple[float, float, int]:
    """The fastest of ``n`` runs of the CLI with ``argv``: wall and CPU (user + system)
    seconds, each the least of the runs, and the exit code; ``installed``: without site's
    start-up (and the editable install's import hook); ``write``: whatever
    ``PYTHONDONTWRITEBYTECODE`` says, the run may write its bytecode and the package's
    dataclass code (``recompile_doctor.dataclass_code``)."""
    best = cpu = float("inf")
    code = 0
    env = dict(os.environ)
    if write:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    flags: list[str] = []
    if installed:
        flags = ["-S"]
        env["PYTHONPATH"] = os.pathsep.join([str(ROOT), sysconfig.get_paths()["purelib"]])
    for _ in range(n):
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        code = subprocess.run(
            [sys.executable, *flags, "-c", ENTRY, *argv],
            stdout=subprocess.DEVNULL,
            cwd=ROOT,
            env=env,
        ).returncode
        best = min(best, time.perf_counter() - t0)
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = min(cpu, r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime)
    return best, cpu, code


def baseline(n: int) -> float:
    """The fastest of ``n`` runs of a bare interpreter: the floor no command goes under."""
    best = float("inf")
    for _ in range(n):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        best = min(best, time.perf_counter() - t0)
    return best


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=10, help="runs of each command (default 10)")
    args = ap.parse_args()
    compileall.compile_dir(str(ROOT / "recompile_doctor"), quiet=1)
    for argv in COMMANDS.values():  # (a first run keeps the dataclasses' code, as a .pyc)
        for installed in (False, True):
            best_of(argv, 1, installed, write=True)
    print(f"best of {args.n} runs, target {TARGET_S:.2f} s (wall)")
    print(f"  {'':30s} {'venv':>8s} {'(cpu)':>8s} {'installed':>10s} {'(cpu)':>8s}")
    print(f"  {'python -c pass':30s} {baseline(args.n):7.3f}s {'':29s}  (the interpreter alone)")
    for name, argv in COMMANDS.items():
        venv, venv_cpu, code = best_of(argv, args.n, installed=False)
        inst, inst_cpu, _ = best_of(argv, args.n, installed=True)
        worst = max(venv, inst)
        verdict = "ok" if worst < TARGET_S else "OVER"
        print(
            f"  {name:30s} {venv:7.3f}s {venv_cpu:7.3f}s {inst:9.3f}s {inst_cpu:7.3f}s "
            f" {worst / TARGET_S:5.2f}x target {verdict} (exit {code})"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
