"""The log reader's multi-literal matchers on each format's bench log: the C scan
(``literal_positions``), hyperscan (its wheel, one Python call per match), the two chosen
a buffer at a time by the density of candidate lines (``density``: what the reader uses
when both are here) and the ``bytes.find`` fallback, against ``grep -c -F`` with the same
key strings.  Run it on the build to be measured (``PYTHONPATH=build/compiled``): hyperscan's
call per match runs the package's Python, compiled or not.

Reads each log as the reader does (4 MB buffers of whole lines, one reused buffer) and asks
each matcher for the candidates of every buffer; prints seconds (best of ``--repeat``), MB/s,
the candidate lines each found (they must agree: the same lines, whatever the offsets), and
which matcher the reader picks for the format (``matcher_choice.engine_for``).  The logs are
bench_frameworks.py's (20 % of lines relevant) and bench_scale.py's DEBUG Poplar log (a few
percent), made in ``--dir`` when missing.  Figures are printed, never asserted.

    python benchmarks/bench_matchers.py [--mb 100] [--dir DIR] [--repeat 3] [--only jax]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from bench_frameworks import CASES, case_lines  # (this folder is on sys.path)
from bench_scale import _poplar_lines, key_strings, machine_line, timed, write_log

from recompile_doctor.matcher_choice import engine_for, has_hyperscan, has_native_scan
from recompile_doctor.parsers._scan import CHUNK_BYTES, _minimal, make_matcher

Positions = Callable[[bytearray, int], list[int]]


def _buffers(path: Path) -> list[tuple[bytearray, int]]:
    """The log as the reader's buffers: (buffer, end of its whole lines), each a copy (so
    that every matcher scans the same bytes, read once)."""
    out: list[tuple[bytearray, int]] = []
    rest = b""
    with path.open("rb") as f:
        while True:
            got = f.read(CHUNK_BYTES - len(rest))
            data = bytearray(rest + got)
            if not got:
                if data:
                    out.append((data, len(data)))
                return out
            end = data.rfind(b"\n") + 1
            out.append((data, end))
            rest = bytes(data[end:])


def _lines(bufs: list[tuple[bytearray, int]], hits: list[list[int]]) -> int:
    """The candidate lines: each line holding a position, counted once."""
    n = 0
    for (data, end), pos in zip(bufs, hits, strict=True):
        starts = {data.rfind(b"\n", 0, p) + 1 for p in pos if p < end}
        n += len(starts)
    return n


def _scan(
    positions: Positions, bufs: list[tuple[bytearray, int]], repeat: int
) -> tuple[float, int]:
    best = float("inf")
    hits: list[list[int]] = []
    for _ in range(repeat):
        t = time.perf_counter()
        hits = [positions(data, end) for data, end in bufs]
        best = min(best, time.perf_counter() - t)
    return best, _lines(bufs, hits)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mb", type=float, default=100, help="size of each generated log (MB)")
    ap.add_argument("--dir", type=Path, default=None, help="the logs, made there when missing")
    ap.add_argument("--only", default="", help="comma-separated case names")
    ap.add_argument("--repeat", type=int, default=3, help="best of N scans")
    args = ap.parse_args()
    where = args.dir or Path(tempfile.mkdtemp(prefix="rd-bench-match-"))
    where.mkdir(parents=True, exist_ok=True)
    only = {s for s in args.only.split(",") if s}
    size = int(args.mb * 1e6)
    engines = (["native"] if has_native_scan() else []) + (["hyperscan"] if has_hyperscan() else [])
    if len(engines) == 2:
        engines.insert(1, "density")
    engines.append("find")
    print(machine_line())
    cases = [
        (name, fmt, lambda f=fmt, r=rels, z=noise: case_lines(f, r, z))
        for name, fmt, rels, noise in CASES
    ]
    cases.append(("poplar-debug", "poplar", lambda: _poplar_lines(16)))
    print(
        f"{'log':>12} {'MB':>5} {'picked':>9} "
        + " ".join(f"{e + ' s':>11}" for e in engines)
        + f" {'grep s':>7} {'lines':>9}"
    )
    for name, fmt, lines in cases:
        if only and name not in only:
            continue
        path = where / f"{name}.log"
        if not path.exists() or abs(path.stat().st_size - size) > size // 20:
            write_log(path, lines(), size)
        keys = key_strings(fmt)
        lits = _minimal([k.encode() for k in keys])
        bufs = _buffers(path)
        mb = path.stat().st_size / 1e6
        secs: list[float] = []
        found: set[int] = set()
        for engine in engines:
            s, n = _scan(make_matcher(keys, engine).positions, bufs, args.repeat)
            secs.append(s)
            found.add(n)
        grep = ["grep", "-c", "-F", *[a for k in keys for a in ("-e", k)], str(path)]
        gwall = min(timed(grep)[0] for _ in range(args.repeat))
        agree = str(found.pop()) if len(found) == 1 else "DIFFER"
        print(
            f"{name:>12} {mb:5.0f} {engine_for(lits):>9} "
            + " ".join(f"{s:6.3f} {mb / s / 1e3:3.1f}" for s in secs)
            + f" {gwall:7.3f} {agree:>9}"
        )
    print(
        "seconds: the matcher's calls over the log's 4 MB buffers (read beforehand), best of "
        "--repeat, then GB/s; grep: grep -c -F with the format's key strings (reading the file "
        "too); lines: the candidate lines found, the same for every matcher; picked: the one "
        "the reader uses for the format"
    )


if __name__ == "__main__":
    main()
