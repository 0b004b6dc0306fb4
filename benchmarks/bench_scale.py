"""Big logs: ``recompile-doctor analyze`` against ``grep -c -F`` with the same key strings.

Generates, deterministically, a DEBUG-style Poplar log (default 1 GB; a few percent of its
lines hold a key string), a Poplar log where 20 % of the lines are relevant, a JAX log, and
the gzip of the 20 % log; then runs, each in a fresh process, ``recompile-doctor analyze
--format json -o /dev/null`` and ``grep -c -F -e KEY ...`` (output to a pipe) and prints
seconds, MB/s, the ratio to grep and peak RSS.  Figures are printed, never asserted.

    python benchmarks/bench_scale.py [--gb 1] [--dir DIR] [--plain]

``--dir`` keeps the generated logs there (reused by the next run); ``--plain`` also times
the line-by-line path (``RECOMPILE_DOCTOR_PLAIN=1``: the "before" figure; slow).
"""

from __future__ import annotations

import argparse
import gzip
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
POPLAR_CASE = ROOT / "fixtures" / "poplar" / "cases" / "alternating_graphs.log"
POPLAR_CUT = 40  # the case's first lines: version, flags, device; then steps repeat
JAX_CASE = ROOT / "fixtures" / "jax" / "growing_shape" / "run.log"

#: DEBUG-level lines of a Poplar run that hold no key string (time stamp prepended)
POPLAR_NOISE = (
    "Z PO:ENGINE   3556102.3556102 D: [stream] copy from host buffer 0x7f3a2c000000 "
    "to tile 1023 exchange block {n} (4096 bytes)",
    "Z PO:ENGINE   3556102.3556102 D: Running program step {n} on 1 IPU(s), sync id 17",
    "Z PL:POPLIN   3556102.3556102 D: matMul planner cache hit for key {n} "
    "(ConvParams{{1,4096,1024}} fp16)",
    "Z PO:TARGET   3556102.3556102 D: IPU0 tile 311 memory usage 412331 bytes of 638976",
    "Z PO:ENGINE   3556102.3556102 D: handle stream callback #{n} returned in 12 us",
)
JAX_NOISE = (
    "DEBUG:jax._src.dispatch:step {n}: dispatching jit(summarize) to device CpuDevice(id=0)",
    "step {n} loss 0.1257 lr 0.001 throughput 1234.5 samples/s",
    "DEBUG:absl:input pipeline: prefetched batch {n} (shape (32, 224, 224, 3))",
)


#: the last three digits of a number with six or more decimals (durations, stamps, memory)
_VARY_RE = re.compile(r"(\d\.\d{3,})\d{3}\b")
#: a Poplar phase's duration in milliseconds
_PHASE_MS_RE = re.compile(r"\(duration (\d+) ms;")


def varied(line: str, k: int) -> str:
    """``line`` as its ``k``th repetition prints it: other durations and amounts, 100,000
    variants in turn (a real log never repeats "... in 0.0123 sec" or "(duration 607 ms;
    diff RSS: 0.586426 MB)"), so that per-message memos get no hit a real log would not give
    them."""
    line = _VARY_RE.sub(rf"\g<1>{k % 1000:03d}", line)
    if "(duration " in line:
        line = _PHASE_MS_RE.sub(lambda m: f"(duration {int(m[1]) + k // 1000 % 100} ms;", line)
    return line


def _stamp(us: int, sep: str) -> str:
    s, frac = divmod(us, 1_000_000)
    m, s = divmod(s, 60)
    h, m = divmod(m, 60)
    return f"2023-04-26{sep}{15 + h:02d}:{m:02d}:{s:02d}.{frac:06d}"


#: DEBUG lines the graph compilation writes before the first executable is loaded: a real
#: log's first load comes long after the lines format detection reads (and after the point
#: where the workers are forked)
POPLAR_COMPILE_NOISE = 2000


def _poplar_lines(noise_per_line: int) -> Iterator[str]:
    lines = POPLAR_CASE.read_text().splitlines()
    n = 0
    for line in lines[:POPLAR_CUT]:
        if "Starting phase: Loading executable" in line and n == 0:
            for n in range(1, POPLAR_COMPILE_NOISE + 1):
                yield line[:26] + POPLAR_NOISE[n % len(POPLAR_NOISE)].format(n=n)
        yield line
    body = lines[POPLAR_CUT:]
    us = 0
    n = 0
    k = 0
    while True:
        for line in body:
            us += 1000
            k += 1
            sep = "T" if line[10:11] == "T" else " "
            head, colon, message = line[26:].partition(": ")  # (the message only: not the ids)
            yield _stamp(us, sep) + head + colon + varied(message, k)
            for _ in range(noise_per_line):
                n += 1
                us += 100
                yield _stamp(us, "T") + POPLAR_NOISE[n % len(POPLAR_NOISE)].format(n=n)


def _jax_lines(noise_per_line: int) -> Iterator[str]:
    lines = JAX_CASE.read_text().splitlines()
    n = 0
    k = 0
    while True:
        for line in lines:
            k += 1
            yield varied(line, k)
            for _ in range(noise_per_line):
                n += 1
                yield JAX_NOISE[n % len(JAX_NOISE)].format(n=n)


def write_log(path: Path, lines: Iterator[str], size: int) -> None:
    """``lines`` up to about ``size`` bytes, 2,000 lines a write."""
    done = 0
    with path.open("w", encoding="utf-8", newline="\n") as f:
        while done < size:
            batch = "\n".join(next(lines) for _ in range(2_000)) + "\n"
            f.write(batch)
            done += len(batch)


def key_strings(fmt: str) -> list[str]:
    from recompile_doctor.parsers import _scan_literals, get_format

    return _scan_literals(get_format(fmt)) or []


def timed(
    cmd: list[str], env: dict[str, str] | None = None, err: list[str] | None = None
) -> tuple[float, float, float, int]:
    """Wall seconds, CPU seconds (user + system), peak RSS (MB), exit code of ``cmd``
    (its output to a pipe that is drained; its error output appended to ``err`` if given)."""
    with tempfile.TemporaryFile() as e:
        t = time.perf_counter()
        p = subprocess.Popen(
            cmd, env=env, stdout=subprocess.PIPE, stderr=e if err is not None else None
        )
        assert p.stdout is not None
        while p.stdout.read(1 << 16):
            pass
        p.stdout.close()
        _, status, usage = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t
        if err is not None:
            e.seek(0)
            err.append(e.read().decode("utf-8", "replace"))
    p.returncode = os.waitstatus_to_exitcode(status)
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, p.returncode


_READ_BY = re.compile(r": read by (\d+) processes: (.*)$", re.MULTILINE)
_TWICE = re.compile(r"\(([\d,]+) read twice\)")


def parts_read(err: str) -> tuple[str, str]:
    """How a run given ``-v`` read its log's parts, from its error output: ``("1/1", "")``
    when the one worker's part was taken over (``"-"``: one process read it all), and what
    was read twice: the parts read again, which cost a second process's time for nothing
    (the reason to look), and the lines from a seam to where the reader met its worker,
    with where a worker missed a name the reader knew (which moves that meeting later)."""
    m = _READ_BY.search(err)
    if m is None:
        return "-", ""
    said = m[2].split("; ")
    parts = [p for p in said if p.startswith("part ")]
    again = [p for p in parts if "taken over" not in p]
    twice = sum(int(n.replace(",", "")) for n in _TWICE.findall(m[2]))
    missed = [p for p in said if not p.startswith("part ")]
    if missed:
        again.append(f"{twice:,} lines ({'; '.join(missed)})")
    taken = sum("taken over" in p for p in parts)
    return f"{taken}/{len(parts)}", "; ".join(again)


def run_analyze(
    path: Path,
    plain: bool = False,
    err: list[str] | None = None,
    fmt: str | None = None,
    workers: int | None = None,
) -> tuple[float, float, float, int]:
    """``analyze --format json -o /dev/null -v`` (``--log-format fmt`` if given; ``workers``:
    the processes per log, else as many as it takes) in a fresh process: see :func:`timed`
    (``-v`` says how the log's parts were read: :func:`parts_read`)."""
    env = dict(os.environ)
    if plain:
        env["RECOMPILE_DOCTOR_PLAIN"] = "1"
    if workers is not None:
        env["RECOMPILE_DOCTOR_WORKERS"] = str(workers)
    cmd = [sys.executable, "-m", "recompile_doctor", "analyze", str(path), "--format", "json"]
    if fmt is not None:
        cmd += ["--log-format", fmt]
    return timed([*cmd, "-o", os.devnull, "-v"], env, err)


SCAN_ONLY = """
import sys, time
from recompile_doctor.parsers import ParseCounter, _scan_literals, get_format
from recompile_doctor.parsers._reader import ReadStats, open_input, skip_bom
from recompile_doctor.parsers._scan import Blocks, FastLines, make_matcher

class Idle:  # a decoder that wants nothing: the reader and matcher alone
    continuing = False
    wants_skipped = "none"

fmt = get_format(sys.argv[2])
t = time.perf_counter()
st = ReadStats()
with open_input(sys.argv[1], st) as f:
    skip_bom(f, st)
    fl = FastLines(Blocks(f, sys.argv[1]), make_matcher(_scan_literals(fmt) or []), Idle(),
                   fmt and (lambda s: True), ParseCounter(sys.argv[1]))
    n = sum(1 for _ in fl.lines())
print(time.perf_counter() - t, n, fl.lineno)
"""


def run_scan(path: Path, fmt: str) -> float:
    """Seconds of the fast path's reading and matching alone (candidate lines decoded to
    text and numbered, nothing parsed)."""
    out = subprocess.run(
        [sys.executable, "-c", SCAN_ONLY, str(path), fmt],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    return float(out[0])


DECOMPRESS_ONLY = """
import sys, time
from recompile_doctor.parsers._reader import ReadStats, open_input
from recompile_doctor.parsers._scan import Blocks

t = time.perf_counter()
with open_input(sys.argv[1], ReadStats()) as f:
    b = Blocks(f, sys.argv[1])
    while b.next(b.end):
        pass
print(time.perf_counter() - t)
"""


def run_decompress(path: Path) -> float:
    """Seconds to read a gzip log through the fast path's reader alone (decompression into
    the reused buffer, nothing matched): the bound for any analysis of that input."""
    out = subprocess.run(
        [sys.executable, "-c", DECOMPRESS_ONLY, str(path)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return float(out)


def run_grep(path: Path, keys: list[str], gz: bool = False) -> tuple[float, float]:
    """Wall and CPU seconds of ``grep -c -F -e KEY ...`` (``zgrep`` for gzip)."""
    grep = shutil.which("zgrep" if gz else "grep")
    if grep is None:
        return float("nan"), float("nan")
    args = [grep, "-c", "-F"]
    for k in keys:
        args += ["-e", k]
    wall, cpu, _, _ = timed([*args, str(path)])
    return wall, cpu


def _best_of(
    n: int, path: Path, keys: list[str], gz: bool
) -> tuple[float, float, float, float, float, int, str]:
    """grep's and our best wall and CPU seconds over ``n`` runs taken in turn, our peak RSS,
    exit code and error output (of the last run)."""
    g = gcpu = secs = cpu = float("inf")
    rss, rc = 0.0, 0
    err: list[str] = []
    for _ in range(max(1, n)):
        gw, gc = run_grep(path, keys, gz)
        g, gcpu = min(g, gw), min(gcpu, gc)
        w, c, r, rc = run_analyze(path, err=err)
        secs, cpu, rss = min(secs, w), min(cpu, c), max(rss, r)
    return g, gcpu, secs, cpu, rss, rc, err[-1]


#: asks the Python the timed runs use which matcher its recompile_doctor scans with
_PROBE = (
    "from recompile_doctor import compiled_modules, matcher_choice; "
    "print(matcher_choice.describe()); print(compiled_modules.describe())"
)


def machine_line(pythonpath: str | None = None) -> str:
    """The machine, the Python, the matcher and the build (pure or compiled) of the timed
    runs, asked of the interpreter that runs them, in the folder they run in (the
    ``bytes.find`` fallback is slower than hyperscan, the pure build than the compiled one:
    a figure means little without them).  Exits with a one-line message when that
    interpreter cannot import the package (a Python other than the project's venv's)."""
    env = dict(os.environ) if pythonpath is None else dict(os.environ, PYTHONPATH=pythonpath)
    got = subprocess.run(
        [sys.executable, "-c", _PROBE], env=env, capture_output=True, text=True, check=False
    )
    if got.returncode != 0:
        raise SystemExit(
            f"{sys.executable} cannot import recompile_doctor: run `make setup`, then "
            "the benchmark with .venv/bin/python"
        )
    matcher, build = got.stdout.strip().splitlines()
    return (
        f"machine: {platform.machine()}, {os.cpu_count()} CPUs, Python "
        f"{platform.python_version()}, matcher: {matcher}, build: {build}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gb", type=float, default=1.0, help="size of the DEBUG-style log in GB")
    ap.add_argument("--dir", type=Path, default=None, help="keep the generated logs here")
    ap.add_argument("--plain", action="store_true", help="also time the line-by-line path")
    ap.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="best of N runs of grep and of ours, taken in turn (the speed of a shared "
        "machine drifts: compare figures taken together)",
    )
    args = ap.parse_args()
    tmp = None
    if args.dir is None:
        tmp = tempfile.TemporaryDirectory()
        where = Path(tmp.name)
    else:
        where = args.dir
        where.mkdir(parents=True, exist_ok=True)
    big = int(args.gb * 1e9)
    cases = [
        # name, file, lines, size, format
        ("poplar-debug", "poplar_debug.log", _poplar_lines(16), big, "poplar"),
        ("poplar-20%", "poplar_20pct.log", _poplar_lines(4), big // 4, "poplar"),
        ("jax", "jax.log", _jax_lines(8), big // 4, "jax"),
    ]
    print(machine_line())
    print(
        f"{'log':>15} {'MB':>7} {'relevant':>9} {'ours s':>7} {'MB/s':>6} {'grep s':>7} "
        f"{'x grep':>6} {'ours cpu':>8} {'grep cpu':>8} {'x grep':>6} {'peak RSS':>9} "
        f"{'scan s':>6} {'parts':>5}" + (f" {'plain s':>8} {'plain RSS':>9}" if args.plain else "")
    )
    for name, fname, lines, size, fmt in cases:
        path = where / fname
        if not path.exists() or abs(path.stat().st_size - size) > size // 50:
            write_log(path, lines, size)
        targets = [(name, path, False)]
        if name in ("poplar-20%", "poplar-debug"):  # gzip: the default level, and the fastest
            level = 6 if name == "poplar-20%" else 1
            gz = path.with_suffix(".log.gz")
            if not gz.exists() or gz.stat().st_mtime < path.stat().st_mtime:
                with path.open("rb") as src, gzip.open(gz, "wb", compresslevel=level) as dst:
                    shutil.copyfileobj(src, dst, 1 << 20)
            targets.append((name + " gz", gz, True))
        keys = key_strings(fmt)
        for label, p, is_gz in targets:
            mb = path.stat().st_size / 1e6  # uncompressed size, for MB/s of log text
            hits = subprocess.run(
                ["grep", "-c", "-F", *[a for k in keys for a in ("-e", k)], str(path)],
                stdout=subprocess.PIPE,
                text=True,
                check=False,
            ).stdout.strip()
            total = sum(1 for _ in path.open("rb")) if not is_gz else 0
            rel = f"{int(hits) / total:8.1%}" if total else f"{'':>8}"
            g, gcpu, secs, cpu, rss, rc, err = _best_of(args.repeat, p, keys, is_gz)
            taken, again = parts_read(err)
            row = (
                f"{label:>15} {mb:>7.0f} {rel:>9} {secs:>7.2f} {mb / secs:>6.0f} {g:>7.2f} "
                f"{secs / g:>6.2f} {cpu:>8.2f} {gcpu:>8.2f} {cpu / gcpu:>6.2f} {rss:>7.0f}MB "
                f"{run_scan(p, fmt):>6.2f} {taken:>5}"
            )
            if args.plain:
                psecs, _, prss, _ = run_analyze(p, plain=True)
                row += f" {psecs:>8.2f} {prss:>7.0f}MB"
            if rc not in (0, 1):
                row += f"  (exit {rc})"
            print(row, flush=True)
            if again:
                print(f"{'':>15} ({label}, read twice: {again})", flush=True)
            if is_gz:
                d = run_decompress(p)
                print(
                    f"{'':>15} gzip decompression alone (the bound): {d:.2f} s = "
                    f"{mb / d:.0f} MB/s of log text; analyze reaches {d / secs:.0%} of it",
                    flush=True,
                )
    print(
        "ours: recompile-doctor analyze --format json -o /dev/null; grep: grep -c -F with the "
        "format's key strings (zgrep for gzip); MB/s of uncompressed log text; scan: the "
        "fast path's reading and matching alone (candidate lines found, numbered, decoded); "
        "cpu: user + system seconds (steadier than wall time on a busy machine); parts: the "
        "workers' parts taken over by the reader before them, of all (`-v` says where)"
    )
    if tmp is not None:
        tmp.cleanup()


if __name__ == "__main__":
    main()
