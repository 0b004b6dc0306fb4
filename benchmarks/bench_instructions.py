"""Instructions, not seconds: ``recompile-doctor analyze`` of each framework's log counted by
valgrind's callgrind, against another build of the package when one is given.

A machine whose speed drifts (this project's development VM ran the same build a third
slower from one hour to the next) cannot separate two builds that differ by a few percent;
the number of instructions a run executes hardly moves from run to run.  For each framework,
the log ``bench_frameworks.py`` generates (20 % of its lines relevant), and the DEBUG-style
Poplar log of ``bench_scale.py`` (the one its 2x-grep target is about; 6 % relevant), is
analyzed by one process (``RECOMPILE_DOCTOR_WORKERS=1``, ``--format json -o /dev/null``) under ``valgrind
--tool=callgrind``, and so are its first lines alone: the difference is the work the log
takes, start-up and the report's fixed part taken off.  Prints millions of instructions,
per MB of log, and the ratio to ``--against`` (a ``PYTHONPATH`` of the other build, e.g. a
``build/compiled`` of another commit).  Skipped, with a line that says so, without valgrind.

    python benchmarks/bench_instructions.py [--mb 3] [--only jax,tensorflow,poplar-debug]
        [--against /path/to/other/build] [--dir DIR]

A run of a 3 MB log takes half a minute or more under callgrind.  Without a ``PYTHONPATH``
the package the environment imports is counted: the pure build in the project's venv,
which instructions compare as reliably as the compiled one (wall time on a machine whose
speed drifts cannot separate a few percent).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

from bench_frameworks import CASES, case_lines  # (this folder is on sys.path)
from bench_scale import _poplar_lines, machine_line, write_log

#: the command as its console script runs it (``run``: the collector's thresholds and the
#: heap trimming of a process of ours; ``main`` alone is a library caller's)
ANALYZE = """
import sys
from recompile_doctor.cli.main import run
sys.argv[1:] = ["analyze", sys.argv[1], "--log-format", sys.argv[2], "--format", "json",
                "-o", "/dev/null"]
run()
"""
#: the lines of a log the start-up run reads (enough for its format to be found)
HEAD_LINES = 200
_COLLECTED_RE = re.compile(r"Collected : (\d+)")


def cases() -> list[tuple[str, str, Callable[[], Iterator[str]]]]:
    """(name, log format, the log's lines) of each case: the framework logs, then the
    DEBUG-style Poplar log (16 noise lines a message, as ``bench_scale.py`` writes it)."""
    out: list[tuple[str, str, Callable[[], Iterator[str]]]] = [
        (name, fmt, lambda fmt=fmt, rels=rels, noise=noise: case_lines(fmt, rels, noise))
        for name, fmt, rels, noise in CASES
    ]
    out.append(("poplar-debug", "poplar", lambda: _poplar_lines(16)))
    return out


def instructions(log: Path, fmt: str, pythonpath: str | None) -> int:
    """The instructions one ``analyze`` of ``log`` executes, as callgrind counts them."""
    env = dict(os.environ, RECOMPILE_DOCTOR_WORKERS="1")
    if pythonpath is not None:
        env.update(PYTHONPATH=pythonpath, PYTHONSAFEPATH="1")
    run = subprocess.run(
        [
            "valgrind",
            "--tool=callgrind",
            "--callgrind-out-file=/dev/null",
            sys.executable,
            "-c",
            ANALYZE,
            str(log),
            fmt,
        ],
        capture_output=True,
        text=True,
        env=env,
    )
    m = _COLLECTED_RE.search(run.stderr)
    if m is None or run.returncode not in (0, 1):
        tail = run.stderr.strip().splitlines()[-1:] or ["no output"]
        sys.exit(f"bench_instructions: {log}: the run failed ({run.returncode}): {tail[0]}")
    return int(m[1])


def work(log: Path, head: Path, fmt: str, pythonpath: str | None) -> int:
    """The instructions ``log`` takes beyond those of its first lines alone."""
    return instructions(log, fmt, pythonpath) - instructions(head, fmt, pythonpath)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mb", type=float, default=3, help="size of each generated log (MB)")
    ap.add_argument("--dir", type=Path, default=None, help="keep the generated logs here")
    ap.add_argument("--only", default="", help="comma-separated case names")
    ap.add_argument("--against", default=None, help="PYTHONPATH of the build to compare with")
    args = ap.parse_args()
    if shutil.which("valgrind") is None:
        print("bench_instructions: valgrind not found (apt-get install valgrind): skipped")
        return 0
    where = args.dir or Path(tempfile.mkdtemp(prefix="rd-bench-instr-"))
    where.mkdir(parents=True, exist_ok=True)
    only = {s for s in args.only.split(",") if s}
    size = int(args.mb * 1e6)
    print(machine_line())
    if args.against:
        print(f"against: {machine_line(args.against)} (PYTHONPATH={args.against})")
    print(f"{'log':>12} {'MB':>5} {'M instr':>9} {'M/MB':>7} {'against':>9} {'ratio':>6}")
    for name, fmt, lines in cases():
        if only and name not in only:
            continue
        log = where / f"{name}-{args.mb:g}MB.log"
        if not log.exists():
            write_log(log, lines(), size)
        head = where / f"{name}-head.log"
        with log.open(encoding="utf-8") as f:
            head.write_text("".join(f.readline() for _ in range(HEAD_LINES)), encoding="utf-8")
        mb = log.stat().st_size / 1e6
        ours = work(log, head, fmt, None)
        line = f"{name:>12} {mb:5.1f} {ours / 1e6:9.1f} {ours / 1e6 / mb:7.1f}"
        if args.against:
            theirs = work(log, head, fmt, args.against)
            line += f" {theirs / 1e6:9.1f} {ours / max(theirs, 1):6.3f}"
        print(line, flush=True)
    print(
        "M instr: millions of instructions of analyze --format json by one process, its "
        f"first {HEAD_LINES} lines' run taken off; M/MB: per MB of log; against: the same "
        "with --against's build; ratio: ours / theirs (below 1: fewer)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
