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
        [--against /path/to/other/build] [--dir DIR] [--processes 1|2]

A run of a 3 MB log takes half a minute or more under callgrind.  Without a ``PYTHONPATH``
the package the environment imports is counted: the pure build in the project's venv,
which instructions compare as reliably as the compiled one (wall time on a machine whose
speed drifts cannot separate a few percent).

``--processes 2`` counts a reading shared by two processes instead (a log of 24 MB split, as
the reader splits one of 32 MB or more; a minute or two a case under callgrind): callgrind follows the forked worker, and the
parent's count is cut where its reading starts and where it ends (callgrind dumps its counts
before a C function the command never calls otherwise, which the benchmark calls there).
Printed per case: the parent's reading, its worker's, the parent's work after reading (the
analyses and the report), the events' JSON writer's (a process the report forks as the
analyses start, from 20,000 events on), and the longer of the two readings plus the longer
of the work after and the writer's: what decides the wall time on two free CPUs, the figure
``--against`` compares.
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
from typing import NamedTuple, NoReturn

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
#: the same with two processes, the reading's start and end marked by a call of
#: ``os.getloadavg`` (``--dump-before=os_getloadavg``): the first call of ``parse_log_runs``
#: (``parse_log`` in a build before it) and the parent's account of how its input was read, after the last worker's events; a
#: worker's start and end too (its parent stops it, once it has its events, without waiting
#: for its exit: callgrind then writes no final count)
ANALYZE_SPLIT = """
import os, sys
print(os.getpid(), flush=True)  # (the parent)
from recompile_doctor import api
from recompile_doctor.parsers import _parallel, _reader, logs
_reader.PARALLEL_MIN_BYTES = 1 << 20
name = "parse_log_runs" if hasattr(api, "parse_log_runs") else "parse_log"
parse = getattr(api, name)
def marked_parse(*a, **k):
    os.getloadavg()
    return parse(*a, **k)
setattr(api, name, marked_parse)
told = logs._FastPart.tell_how_read
def marked_tell(self, *a, **k):
    os.getloadavg()
    return told(self, *a, **k)
logs._FastPart.tell_how_read = marked_tell
work = _parallel.Team._work
def marked_work(*a, **k):
    os.getloadavg()  # (the worker's count from here is its own)
    try:
        return work(*a, **k)
    finally:
        os.getloadavg()  # (the parent may stop it before it exits)
_parallel.Team._work = marked_work
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
    run = _callgrind(log, fmt, pythonpath, 1, ANALYZE, "--callgrind-out-file=/dev/null")
    m = _COLLECTED_RE.search(run.stderr)
    if m is None:
        _failed(log, run)
    return int(m[1])


def _callgrind(
    log: Path, fmt: str, pythonpath: str | None, workers: int, program: str, *options: str
) -> subprocess.CompletedProcess[str]:
    """``program`` (``ANALYZE`` or ``ANALYZE_SPLIT``) run on ``log`` under callgrind with
    ``options``, by ``workers`` processes, with the build of ``pythonpath``."""
    env = dict(os.environ, RECOMPILE_DOCTOR_WORKERS=str(workers))
    if pythonpath is not None:
        env.update(PYTHONPATH=pythonpath, PYTHONSAFEPATH="1")
    command = ["valgrind", "--tool=callgrind", *options, sys.executable, "-c", program]
    run = subprocess.run(
        [*command, str(log), fmt], capture_output=True, text=True, env=env, check=False
    )
    if run.returncode not in (0, 1):
        _failed(log, run)
    return run


def _failed(log: Path, run: subprocess.CompletedProcess[str]) -> NoReturn:
    tail = run.stderr.strip().splitlines()[-1:] or ["no output"]
    sys.exit(f"bench_instructions: {log}: the run failed ({run.returncode}): {tail[0]}")


class Split(NamedTuple):
    """The instructions of a reading shared by two processes."""

    parent: int  # the parent's reading (from its first parse_log call to its end)
    #: the worker's, from its start (None: stopped before its end, its count lost: its
    #: parent read its part itself, their states never meeting)
    worker: int | None
    after: int  # the parent's after reading (the analyses and the report)
    #: the events' JSON writer's, forked as the analyses start (None: not forked, the
    #: report wrote its events itself)
    writer: int | None

    @property
    def longest(self) -> int:
        """The longer reading and the longer of the work after it and the writer's (the
        parent waits for the writer before it copies its text)."""
        return max(self.parent, self.worker or 0) + max(self.after, self.writer or 0)


def _summary(path: Path) -> int:
    with path.open(encoding="utf-8", errors="replace") as f:
        for line in f:
            if line.startswith(("summary:", "totals:")):
                return int(line.split()[1])
    sys.exit(f"bench_instructions: {path}: no summary line")


def split_instructions(log: Path, fmt: str, pythonpath: str | None) -> Split:
    """The instructions of ``analyze`` of ``log`` by two processes: the parent's counts cut
    where its reading starts and ends (its dumps ``.1`` and ``.2``; its final count is the
    work after), the worker's where its work starts and ends (its dump ``.2``), and the
    events' JSON writer the report forks as the analyses start (no dump but its final
    count)."""
    with tempfile.TemporaryDirectory(prefix="rd-bench-split-") as d:
        run = _callgrind(
            log,
            fmt,
            pythonpath,
            2,
            ANALYZE_SPLIT,
            "--dump-before=os_getloadavg",
            f"--callgrind-out-file={d}/cg.%p",
        )
        files: dict[str, dict[int, Path]] = {}  # pid: its counts' files, by dump (0: final)
        for f in Path(d).iterdir():
            pid, _, n = f.name.removeprefix("cg.").partition(".")
            files.setdefault(pid, {})[int(n or 0)] = f
        parent = files.pop((run.stdout.split() or [""])[0], {})
        workers = [got for got in files.values() if 1 in got]
        writers = [got[0] for got in files.values() if 1 not in got and 0 in got]
        if len(parent) != 3 or len(workers) != 1 or len(writers) > 1:
            sys.exit(
                f"bench_instructions: {log}: not one parent, one worker and a writer at most "
                f"({len(parent)} counts, {len(workers)} workers, {len(writers)} writers): "
                "was the input split?"
            )
        ended = workers[0].get(2)
        worker = _summary(ended) if ended is not None else None
        writer = _summary(writers[0]) if writers else None
        return Split(_summary(parent[2]), worker, _summary(parent[0]), writer)


def work(log: Path, head: Path, fmt: str, pythonpath: str | None) -> int:
    """The instructions ``log`` takes beyond those of its first lines alone."""
    return instructions(log, fmt, pythonpath) - instructions(head, fmt, pythonpath)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--mb",
        type=float,
        default=None,
        help="size of each generated log (MB; default 3, with --processes 2: 24, the reader "
        "reading the first blocks of a log before it splits the rest)",
    )
    ap.add_argument("--dir", type=Path, default=None, help="keep the generated logs here")
    ap.add_argument("--only", default="", help="comma-separated case names")
    ap.add_argument("--against", default=None, help="PYTHONPATH of the build to compare with")
    ap.add_argument(
        "--processes",
        type=int,
        choices=(1, 2),
        default=1,
        help="2: the reading shared by two processes, each counted (see above)",
    )
    args = ap.parse_args()
    if shutil.which("valgrind") is None:
        print("bench_instructions: valgrind not found (apt-get install valgrind): skipped")
        return 0
    where = args.dir or Path(tempfile.mkdtemp(prefix="rd-bench-instr-"))
    where.mkdir(parents=True, exist_ok=True)
    only = {s for s in args.only.split(",") if s}
    if args.mb is None:
        args.mb = 24 if args.processes == 2 else 3
    size = int(args.mb * 1e6)
    print(machine_line())
    if args.against:
        print(f"against: {machine_line(args.against)} (PYTHONPATH={args.against})")
    split = args.processes == 2
    if split:
        print(
            f"{'log':>12} {'MB':>5} {'parent':>8} {'worker':>8} {'after':>8} {'writer':>8}"
            f" {'longest':>8}"
            f" {'against':>9} {'ratio':>6}"
        )
    else:
        print(f"{'log':>12} {'MB':>5} {'M instr':>9} {'M/MB':>7} {'against':>9} {'ratio':>6}")
    for name, fmt, lines in cases():
        if only and name not in only:
            continue
        log = where / f"{name}-{args.mb:g}MB.log"
        if not log.exists():
            write_log(log, lines(), size)
        mb = log.stat().st_size / 1e6
        if split:
            got = split_instructions(log, fmt, None)
            line = f"{name:>12} {mb:5.1f}" + "".join(
                f" {n / 1e6:8.1f}" if n is not None else f" {'-' if i == 3 else 'stopped':>8}"
                for i, n in enumerate((*got, got.longest))
            )
            if args.against:
                theirs = split_instructions(log, fmt, args.against).longest
                line += f" {theirs / 1e6:9.1f} {got.longest / max(theirs, 1):6.3f}"
            print(line, flush=True)
            continue
        head = where / f"{name}-head.log"
        with log.open(encoding="utf-8") as f:
            head.write_text("".join(f.readline() for _ in range(HEAD_LINES)), encoding="utf-8")
        ours = work(log, head, fmt, None)
        line = f"{name:>12} {mb:5.1f} {ours / 1e6:9.1f} {ours / 1e6 / mb:7.1f}"
        if args.against:
            theirs = work(log, head, fmt, args.against)
            line += f" {theirs / 1e6:9.1f} {ours / max(theirs, 1):6.3f}"
        print(line, flush=True)
    if split:
        print(
            "millions of instructions of analyze --format json by two processes: the parent's "
            "reading, its worker's, the parent's work after reading, the events' JSON "
            "writer's (beside that work; '-': none forked, under 20,000 events), and the "
            "longer reading plus the longer of the two (what two free CPUs take in wall "
            "time; a worker 'stopped' by its parent, which read its part itself, has no "
            "count); against: the same with "
            "--against's build; ratio: ours / theirs (below 1: fewer)"
        )
    else:
        print(
            "M instr: millions of instructions of analyze --format json by one process, its "
            f"first {HEAD_LINES} lines' run taken off; M/MB: per MB of log; against: the same "
            "with --against's build; ratio: ours / theirs (below 1: fewer)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
