"""The framework log decoders on big logs: ``recompile-doctor analyze`` against ``grep -c -F``
with the same key strings, per framework.

Generates, deterministically, one log per format by repeating a real fixture log with noise
lines (the same prefix style, no key string) between its records (never inside a multi-line
block), so that about 20 % of the lines hold a key string (a verbose run with many
compilations); a TORCH_TRACE file is all records, so it is repeated without noise.  torch's
frames are numbered anew in each repetition (a real log's compile ids never repeat).  Then
runs, each in a fresh process, ``recompile-doctor analyze --format json -o /dev/null -v``
and ``grep -c -F -e KEY ...`` and prints seconds, MB/s, CPU seconds, the ratio to grep, peak
RSS and the parts of the log taken over (``-v``).  Figures are printed, never asserted;
``tests/test_bench_inputs.py`` checks that the generated logs parse whole.

    python benchmarks/bench_frameworks.py [--mb 100] [--dir DIR] [--only jax,torch]
    python benchmarks/bench_frameworks.py --parse-only   # in-process parse, no report

``--dir`` keeps the generated logs there (reused by the next run).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from bench_scale import (  # (this folder is on sys.path)
    key_strings,
    machine_line,
    parts_read,
    run_analyze,
    timed,
    varied,
    write_log,
)

ROOT = Path(__file__).resolve().parent.parent
FIX = ROOT / "fixtures"

#: noise line makers: line number -> a line of the format's prefix style holding no key string
NOISE: dict[str, Callable[[int], str]] = {
    "jax": lambda n: (
        f"DEBUG:jax._src.dispatch:step {n}: dispatching jit(summarize) to device CpuDevice(id=0)",
        f"step {n} loss 0.1257 lr 0.001 throughput 1234.5 samples/s",
        f"DEBUG:absl:input pipeline: prefetched batch {n} (shape (32, 224, 224, 3))",
    )[n % 3],
    "tensorflow": lambda n: (
        f"I0000 00:00:1795374921.{n % 1000000:06d}   24077 input_pipeline.cc:88] "
        f"prefetched batch {n} of 32 elements",
        f"Epoch 1/3 - step {n} - loss: 0.3125 - accuracy: 0.9012",
        f"I0000 00:00:1795374921.{n % 1000000:06d}   24077 bfc_allocator.cc:1101] "
        f"InUse at 7f3a2c{n % 65536:04x} of size 256 next {n}",
    )[n % 3],
    "torch": lambda n: (
        f"I1122 19:11:18.{n % 1000000:06d} 16266 train/loop.py:42] step {n} loss 0.3125",
        f"epoch 0 step {n} batch 32 lr 0.001",
        f"W1122 19:11:18.{n % 1000000:06d} 16266 data/loader.py:311] worker 3 slow batch {n}",
    )[n % 3],
    "ptxla": lambda n: (
        f"epoch 0 step {n} batch 32 loss 0.3125",
        f"I1122 19:11:18.{n % 1000000:06d} 16266 train.py:42] prefetched batch {n}",
        f"[step {n}] throughput 1234.5 samples/s",
    )[n % 3],
}

#: (name, format, fixture logs, noise?)
CASES: tuple[tuple[str, str, tuple[str, ...], bool], ...] = (
    ("jax", "jax", ("jax/growing_shape/run.log", "jax/persistent_warm/run.log"), True),
    (
        "tensorflow",
        "tensorflow",
        ("tensorflow/batch_size_signature_vlog/run.log", "tensorflow/growing_shape/run.log"),
        True,
    ),
    ("torch", "torch", ("torch/batch_size/run.log", "torch/value_guard/run.log"), True),
    ("torch-trace", "torch-trace", ("torch/batch_size/trace",), False),
    ("ptxla", "ptxla", ("ptxla/partial_last_batch/run.log",), True),
)

TARGET_RELEVANT = 0.20

#: a torch text log's glog prefix up to its process id: the fixtures were captured by
#: different processes, and a log of one run has one (a new id is a new run, appended)
_TORCH_PID_RE = re.compile(r"^((?:\[\w+\]:)*[VIWEFC]\d{4} [\d:.]+ +)\d+ ")


def _fixture_lines(rel: str) -> list[str]:
    p = FIX / rel
    if p.is_dir():
        p = sorted(p.iterdir())[0]
    lines = p.read_text(encoding="utf-8").splitlines()
    if rel.startswith("torch/") and p.parent.name != "trace":
        lines = [_TORCH_PID_RE.sub(r"\g<1>16266 ", ln) for ln in lines]
    return lines


def _block_prefixes() -> tuple[str, ...]:
    """PyTorch/XLA's analysis blocks' prefixes (the decoder's): each line of a block carries
    one; a rule of ``=`` opens and closes a block, and the debug output prints a block's
    lines together."""
    from recompile_doctor.parsers.ptxla_detect import _PREFIXES

    return tuple(_PREFIXES)


def _starts_record(line: str, nxt: str | None) -> bool:
    """Noise may go before ``nxt``: it starts a record (no indented continuation, no guard or
    explanation line of a block under way)."""
    if nxt is None:
        return True
    return not (nxt[:1] in (" ", "\t", "") or "[__guards]" in nxt or "[__recompiles" in nxt)


def _in_blocks(body: list[str]) -> list[bool]:
    """For each line, whether a PyTorch/XLA analysis block is still open after it (no noise
    may go there: the real output never interleaves other lines into one)."""
    out = []
    open_ = False
    prefixes = _block_prefixes()
    for line in body:
        for prefix in prefixes:
            if line.startswith(prefix):
                if line[len(prefix) :].startswith("====="):
                    open_ = not open_
                break
        out.append(open_)
    return out


#: where torch names a frame: a compile id ``[0/1]``, ``"compile_id": "0/1"``, a failed
#: guard's ``0/1: ...``, and a trace record's ``"frame_id": 0``
_FRAME_RES = (
    re.compile(r"(\[)(\d+)(?=/\d+)"),
    re.compile(r'("compile_id": ")(\d+)(?=/)'),
    re.compile(r'((?:^|[\s"]))(\d+)(?=/\d+:)'),
    re.compile(r'("frame_id": )(\d+)'),
)
#: per format, the numbers its compile ids are made of: torch's frames, and TensorFlow's
#: function numbers (``__inference_train_step_77``, whose compile id is that name and how
#: many times it was compiled)
_NUMBERED: dict[str, tuple[re.Pattern[str], ...]] = {
    "torch": _FRAME_RES,
    "torch-trace": _FRAME_RES,
    "tensorflow": (re.compile(r"(_inference_[A-Za-z_]+?_)(\d+)"),),
}


#: fixtures of a run that grows a shape at every step, and where it names the growing
#: (leading) dimension: each repetition goes on growing it, as a longer run would, so that no
#: signature repeats (a repeated one is a memo hit a real growing run never gives: JAX's
#: ``Compiling ...`` fields hit 7,126 times of 7,136 when the fixture's eight shapes came
#: round again)
_GROWING: dict[str, re.Pattern[str]] = {
    "jax/growing_shape/run.log": re.compile(r"((?:float32|f32)\[)(\d+)(?=,)"),
}


def _moved_up(line: str, by: int, rxs: Iterable[re.Pattern[str]]) -> str:
    """``line`` with each number that one of ``rxs`` finds (its group 2, after group 1)
    moved up by ``by``."""
    if by:
        for rx in rxs:
            line = rx.sub(lambda m: f"{m[1]}{int(m[2]) + by}", line)
    return line


def _frames(lines: list[str], fmt: str) -> int:
    """How many frame (or function) numbers ``lines`` use (one more than the highest)."""
    res = _NUMBERED[fmt]
    return 1 + max((int(m[2]) for ln in lines for rx in res for m in rx.finditer(ln)), default=0)


def _renumbered(line: str, offset: int, fmt: str) -> str:
    """``line`` with each torch frame number (TensorFlow function number) moved up by
    ``offset``: every repetition of a fixture is new frames, as in a real log, whose
    compile ids never repeat (repeated ids would be one compilation logged again, and the
    log would time few compilations: a TensorFlow log of 1 GB was 11 of them)."""
    return _moved_up(line, offset, _NUMBERED[fmt])


def case_lines(fmt: str, rels: tuple[str, ...], noise: bool) -> Iterator[str]:
    """The lines of one case, forever: the fixtures repeated with noise between records."""
    keys = key_strings(fmt)
    parts = [_fixture_lines(rel) for rel in rels]
    body = [ln for part in parts for ln in part]
    # each fixture of each repetition gets frame (function) numbers of its own
    frames = max(_frames(part, fmt) for part in parts) if fmt in _NUMBERED else 0
    part_of = [j for j, part in enumerate(parts) for _ in part]
    growing = [_GROWING.get(rel) for rel in rels]
    # (how far a growing part's dimension moves up at each repetition: its largest)
    grows = [
        0 if rx is None else max(int(m[2]) for ln in part for m in rx.finditer(ln))
        for rx, part in zip(growing, parts, strict=True)
    ]
    relevant = sum(1 for ln in body if any(k in ln for k in keys))
    inside = _in_blocks(body)
    slots = [
        i
        for i in range(len(body))
        if not inside[i] and _starts_record(body[i], (body[i + 1 : i + 2] and body[i + 1]) or None)
    ]
    want = max(0, round(relevant / TARGET_RELEVANT) - len(body)) if noise else 0
    per_slot = [want // len(slots) + (1 if k < want % len(slots) else 0) for k in range(len(slots))]
    extra = dict(zip(slots, per_slot, strict=True))
    make = NOISE.get(fmt)
    n = 0
    rep = 0
    while True:
        rep += 1
        for i, line in enumerate(body):
            if frames:
                line = _renumbered(line, ((rep - 1) * len(parts) + part_of[i]) * frames, fmt)
            rx = growing[part_of[i]]
            if rx is not None:
                line = _moved_up(line, (rep - 1) * grows[part_of[i]], (rx,))
            # each repetition prints other durations and times (a real log never repeats a
            # "... in 0.0123 sec" line), so per-message memos get no unfair hits
            yield varied(line, rep + i)
            for _ in range(extra.get(i, 0)):
                n += 1
                assert make is not None
                yield make(n)


PARSE_ONLY = """
import sys, time, resource
from recompile_doctor.parsers import ParseCounter, parse_log
c = ParseCounter(sys.argv[1])
t = time.process_time()
n = sum(1 for _ in parse_log(sys.argv[1], c, log_format=sys.argv[2]))
print(time.process_time() - t, n, c.recognized, c.malformed)
"""


def _ours(
    path: Path, fmt: str, parse_only: bool, workers: int | None = None
) -> tuple[float, float, float, str]:
    """Wall and CPU seconds, peak RSS (MB) and error output of one run of ours
    (``workers``: its processes for the log, else as many as it takes)."""
    if parse_only:
        env = dict(os.environ)
        if workers is not None:
            env["RECOMPILE_DOCTOR_WORKERS"] = str(workers)
        out = subprocess.run(
            [sys.executable, "-c", PARSE_ONLY, str(path), fmt],
            capture_output=True,
            text=True,
            env=env,
        ).stdout.split()
        cpu = float(out[0])
        return cpu, cpu, 0.0, ""
    err: list[str] = []
    wall, cpu, rss, _ = run_analyze(path, err=err, fmt=fmt, workers=workers)
    return wall, cpu, rss, err[0]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mb", type=float, default=100, help="size of each generated log (MB)")
    ap.add_argument("--dir", type=Path, default=None, help="keep the generated logs here")
    ap.add_argument("--only", default="", help="comma-separated case names")
    ap.add_argument("--parse-only", action="store_true", help="time parse_log in-process only")
    ap.add_argument(
        "--repeat", type=int, default=1, help="best of N runs of grep and of ours, in turn"
    )
    args = ap.parse_args()
    where = args.dir or Path(tempfile.mkdtemp(prefix="rd-bench-fw-"))
    where.mkdir(parents=True, exist_ok=True)
    only = {s for s in args.only.split(",") if s}
    size = int(args.mb * 1e6)
    print(machine_line())
    print(
        f"{'log':>12} {'MB':>6} {'relevant':>8} {'ours s':>7} {'1 proc':>6} {'MB/s':>6} "
        f"{'grep s':>7} "
        f"{'x grep':>6} {'cpu s':>6} {'grep cpu':>8} {'x grep':>6} {'peak RSS':>9} {'parts':>5}"
    )
    for name, fmt, rels, noise in CASES:
        if only and name not in only:
            continue
        path = where / f"{name}.log"
        if not path.exists() or abs(path.stat().st_size - size) > size // 20:
            write_log(path, case_lines(fmt, rels, noise), size)
        keys = key_strings(fmt)
        mb = path.stat().st_size / 1e6
        grep = ["grep", "-c", "-F", *[a for k in keys for a in ("-e", k)], str(path)]
        hits = int(subprocess.run(grep, capture_output=True, text=True).stdout.strip() or 0)
        total = sum(1 for _ in path.open("rb"))
        gwall = gcpu = wall = cpu = one = float("inf")
        rss = 0.0
        for _ in range(max(1, args.repeat)):
            gw, gc, _, _ = timed(grep)
            gwall, gcpu = min(gwall, gw), min(gcpu, gc)
            w, c, r, err = _ours(path, fmt, args.parse_only)
            wall, cpu, rss = min(wall, w), min(cpu, c), max(rss, r)
            one = min(one, _ours(path, fmt, args.parse_only, workers=1)[0])
        taken, again = parts_read(err)
        print(
            f"{name:>12} {mb:6.0f} {hits / total:8.1%} {wall:7.2f} {one:6.2f} {mb / wall:6.1f} "
            f"{gwall:7.2f} {wall / max(gwall, 1e-3):6.1f} {cpu:6.2f} {gcpu:8.2f} "
            f"{cpu / max(gcpu, 1e-3):6.1f} {rss:8.0f}M {taken:>5}"
        )
        if again:
            print(f"{'':>12} ({name}, read twice: {again})")
    print(
        "ours: recompile-doctor analyze --format json -o /dev/null (all its processes); 1 proc: "
        "the same read by one process (RECOMPILE_DOCTOR_WORKERS=1), wall seconds; grep: "
        "grep -c -F with the format's key strings; MB/s: of log text per wall second; x grep: "
        "wall seconds, then CPU seconds, against grep's; parts: the workers' parts taken over "
        "by the reader before them, of all (`-v` says where)"
    )


if __name__ == "__main__":
    main()
