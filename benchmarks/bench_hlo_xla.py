"""``diff A B`` end to end against XLA's own HLO parser, on a real ~40,000-instruction pair.

With ``--jax-python PY`` (a python with jax), the pair is captured from JAX: the
``before_optimizations`` dump of one training step (value and gradient) of a deep
transformer-ish stack (dense, gelu, residual, layer norm; ``--layers`` of them, unrolled) at
batch 32 and at batch 16, each captured in its own process from a neutral temporary working
directory.  The capture stops the process once the dump is written (the CPU backend's own
compilation of 40,000 instructions would take minutes and is not needed).  Without it, a
synthetic pair of the same size and shape (``bench_hlo.generate``) is used.

Prints, in one run: our ``diff A B --format json`` end to end (in-process and as a
subprocess), our parse alone, XLA's parser (jaxlib ``hlo_module_from_text``, timed inside the
jax python, before and after ours: the best of both) on both files, ``diff -u``, the ratios, MB/s
and peak memory, and ``diff`` of A with a copy of A where one ``multiply`` of the entry half-way
down is an ``add`` (a one-line change that reaches many instructions).  Figures are printed,
never asserted.  Target: diff end to end <= XLA's parse of A and B; memory <= 5x the inputs.

Times are the best of ``--repeat`` runs, in CPU seconds by default (``--clock cpu``: the
process's, or the child's for a subprocess; steadier than wall time on a shared machine), or
in wall seconds (``--clock wall``).  ``--plain`` diffs with ``RECOMPILE_DOCTOR_PLAIN=1`` (both
files parsed from scratch) for comparison.

    python benchmarks/bench_hlo_xla.py [--jax-python /opt/rd-venvs/jax/bin/python] [--keep DIR]
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from recompile_doctor.differ import diff_paths
from recompile_doctor.parsers.hlo import parse_hlo_file

try:  # (absent from older checkouts, which this benchmark also measures)
    from recompile_doctor.parsers.hlo import parse_hlo_files
except ImportError:  # pragma: no cover
    parse_hlo_files = None  # type: ignore[assignment]
from recompile_doctor.reports.diff import render

T = TypeVar("T")

#: run in the jax python, in a fresh temporary folder: ``capture.py LAYERS BATCH``
CAPTURE = """
import sys
import numpy as np
import jax, jax.numpy as jnp

layers, batch, d = int(sys.argv[1]), int(sys.argv[2]), 64


def layer(x, p):
    w1, b1, w2, g = p
    h = jax.nn.gelu(x @ w1 + b1)
    y = x + h @ w2
    m = jnp.mean(y, axis=-1, keepdims=True)
    v = jnp.mean((y - m) ** 2, axis=-1, keepdims=True)
    return (y - m) * jax.lax.rsqrt(v + 1e-5) * g


def loss(params, x):
    for p in params:
        x = layer(x, p)
    return jnp.mean(x ** 2)


rng = np.random.default_rng(0)
params = [
    (
        rng.standard_normal((d, 2 * d)).astype(np.float32) * 0.1,
        np.zeros(2 * d, np.float32),
        rng.standard_normal((2 * d, d)).astype(np.float32) * 0.1,
        np.ones(d, np.float32),
    )
    for _ in range(layers)
]
step = jax.jit(jax.value_and_grad(loss))
step.lower(params, np.ones((batch, d), np.float32)).compile()
"""

#: run in the jax python: XLA's parser on each file, timed inside (file read excluded)
XLA_PARSE = """
import json, sys, time
try:
    from jaxlib import _hlo
    parse = _hlo.hlo_module_from_text
except ImportError:
    from jax._src.lib import xla_client
    parse = xla_client._xla.hlo_module_from_text
clock = time.process_time if sys.argv[2] == "cpu" else time.perf_counter
texts = [open(p).read() for p in sys.argv[3:]]
best = []
for t in texts:
    b = float("inf")
    for _ in range(int(sys.argv[1])):
        s = clock()
        m = parse(t)
        b = min(b, clock() - s)
        del m
    best.append(b)
print(json.dumps(best))
"""


def _capture_one(py: str, layers: int, batch: int, dest: Path) -> None:
    """The before_optimizations dump of one compilation, captured in a neutral folder."""
    with tempfile.TemporaryDirectory(prefix="rd-capture-") as tmp:
        work = Path(tmp)
        (work / "capture.py").write_text(CAPTURE)
        dump = work / "dump"
        env = dict(os.environ, JAX_PLATFORMS="cpu")
        env["XLA_FLAGS"] = f"--xla_dump_to={dump} --xla_dump_hlo_as_text"
        proc = subprocess.Popen(
            [py, "capture.py", str(layers), str(batch)],
            cwd=work,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        found: Path | None = None
        last = -1
        try:
            while True:
                hits = sorted(dump.glob("*.jit_loss.before_optimizations.txt"))
                if hits:
                    size = hits[0].stat().st_size
                    if size == last and size > 0:  # written and closed: XLA moved on
                        found = hits[0]
                        break
                    last = size
                if proc.poll() is not None:
                    hits = sorted(dump.glob("*.jit_loss.before_optimizations.txt"))
                    found = hits[0] if hits else None
                    break
                time.sleep(0.5)
        finally:
            if proc.poll() is None:
                proc.kill()
            _, err = proc.communicate()
        if found is None:
            raise SystemExit(f"capture failed:\n{err.decode(errors='replace')[-2000:]}")
        shutil.copyfile(found, dest)


def make_pair(tmp: Path, jax_python: str | None, layers: int) -> tuple[Path, Path, str]:
    fa, fb = tmp / "a.hlo", tmp / "b.hlo"
    if jax_python:
        _capture_one(jax_python, layers, 32, fa)
        _capture_one(jax_python, layers, 16, fb)
        return fa, fb, f"JAX value_and_grad, {layers} layers, batch 32 vs 16"
    sys.path.insert(0, str(Path(__file__).parent))
    from bench_hlo import generate  # the synthetic JAX-like step of bench_hlo.py

    n = max(1, layers * 140 // 11)  # about 11 instructions per synthetic layer
    fa.write_text(generate(n, 32, 0))
    fb.write_text(generate(n, 16, 1))
    return fa, fb, f"synthetic (bench_hlo.generate, {n} layers), batch 32 vs 16"


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


#: the clock of ``_best``: set by ``--clock``
CLOCK: Callable[[], float] = time.process_time


def _best(n: int, fn: Callable[[], T], clock: Callable[[], float] | None = None) -> tuple[float, T]:
    best = float("inf")
    result: T | None = None
    clock = clock or CLOCK
    for _ in range(n):
        result = None  # (freeing the last result is not part of the next run)
        gc.collect()
        t = clock()
        result = fn()
        best = min(best, clock() - t)
    assert result is not None
    return best, result


def _best_each(n: int, fns: list[Callable[[], object]], clock: Callable[[], float]) -> list[float]:
    """The best of ``n`` rounds of each of ``fns``, run in turn within each round (a shared
    machine's speed drifts: figures to be compared are taken together)."""
    best = [float("inf")] * len(fns)
    for _ in range(n):
        for k, fn in enumerate(fns):
            gc.collect()
            t = clock()
            fn()
            best[k] = min(best[k], clock() - t)
    return best


def diff_json(a: Path, b: Path) -> str:
    """What ``recompile-doctor diff A B --format json`` computes and prints."""
    return str(render(diff_paths(a, b), "json"))


def xla_parse(xla_py: str, repeat: int, clock: str, files: list[Path]) -> list[float] | None:
    """XLA's parser (in the jax python) on each file: best of ``repeat`` per file, or None."""
    r = subprocess.run(
        [xla_py, "-c", XLA_PARSE, str(repeat), clock, *map(str, files)],
        capture_output=True,
        text=True,
        env=dict(os.environ, JAX_PLATFORMS="cpu"),
    )
    if r.returncode != 0:
        print(f"xla:     failed: {r.stderr.strip().splitlines()[-1:]}")
        return None
    return [float(x) for x in json.loads(r.stdout.strip().splitlines()[-1])]


def one_opcode_changed(fa: Path, dest: Path) -> Path | None:
    """A copy of ``fa`` with one ``multiply`` of the entry computation, half-way down,
    turned into ``add`` (a one-line change whose effect reaches many instructions)."""
    lines = fa.read_text().split("\n")
    entry = next((k for k, line in enumerate(lines) if line.startswith("ENTRY")), None)
    if entry is None:
        return None
    for k in range((entry + len(lines)) // 2, len(lines)):
        if " multiply(" in lines[k]:
            lines[k] = lines[k].replace(" multiply(", " add(", 1)
            dest.write_text("\n".join(lines))
            return dest
    return None


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--jax-python", metavar="PY", help="a python with jax: capture a real pair")
    ap.add_argument("--layers", type=int, default=290, help="~140 instructions each")
    ap.add_argument("--repeat", type=int, default=3, help="best of N runs")
    ap.add_argument("--keep", metavar="DIR", help="keep (and reuse) the pair in DIR")
    ap.add_argument("--profile", metavar="FILE", help="write a cProfile of one in-process diff")
    ap.add_argument("--clock", choices=["cpu", "wall"], default="cpu", help="what is timed")
    ap.add_argument("--plain", action="store_true", help="diff with RECOMPILE_DOCTOR_PLAIN=1")
    args = ap.parse_args()
    global CLOCK
    CLOCK = time.process_time if args.clock == "cpu" else time.perf_counter
    sub_clock = _children_cpu if args.clock == "cpu" else time.perf_counter
    if args.plain:
        os.environ["RECOMPILE_DOCTOR_PLAIN"] = "1"
    tmp = Path(args.keep or tempfile.mkdtemp(prefix="rd-bench-xla-"))
    tmp.mkdir(parents=True, exist_ok=True)
    fa, fb = tmp / "a.hlo", tmp / "b.hlo"
    if args.keep and fa.exists() and fb.exists():
        what = f"reused from {tmp}"
    else:
        fa, fb, what = make_pair(tmp, args.jax_python, args.layers)
    size = (fa.stat().st_size + fb.stat().st_size) / 1e6

    xla_py = args.jax_python
    if xla_py is None:
        try:
            import jaxlib  # type: ignore[import-not-found]  # noqa: F401
        except ImportError:
            pass
        else:
            xla_py = sys.executable
    # XLA is timed before and after ours (best of both): the machine may be busy
    xla_before = xla_parse(xla_py, args.repeat, args.clock, [fa, fb]) if xla_py else None

    t_parse_a, ma = _best(args.repeat, lambda: parse_hlo_file(fa))
    t_parse_b, mb = _best(args.repeat, lambda: parse_hlo_file(fb))
    n_a, n_b = ma.instruction_count(), mb.instruction_count()
    del ma, mb
    print(f"pair:    {what}; {args.clock} time, best of {args.repeat}" + (" (plain)" * args.plain))
    print(f"         A {n_a:,} instructions, B {n_b:,}; {size:.1f} MB together")
    t_parse = t_parse_a + t_parse_b
    print(f"parse:   ours, A + B       {t_parse:.3f} s -> {size / t_parse:.1f} MB/s (each alone)")
    if parse_hlo_files is not None:
        t_pair, _ = _best(args.repeat, lambda: parse_hlo_files(fa, fb))
        print(
            f"parse:   ours, the pair    {t_pair:.3f} s -> {size / t_pair:.1f} MB/s (as diff does)"
        )

    t_in, out = _best(args.repeat, lambda: diff_json(fa, fb))
    causes = [c for m in json.loads(out)["modules"] for c in m["causes"]]
    print(f"diff:    in-process        {t_in:.3f} s (parse both, align, causes, JSON) -> {causes}")
    cmd = [sys.executable, "-m", "recompile_doctor", "diff", str(fa), str(fb), "--format", "json"]
    # as it runs here, and as installed (pip compiles the bytecode): with a bytecode cache,
    # written by a first run; the two taken in turn
    pycache = tempfile.mkdtemp(prefix="rd-bench-pycache-")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = pycache
    subprocess.run(cmd, capture_output=True, check=False, env=env)
    t_sub, t_sub_cached = _best_each(
        args.repeat,
        [
            lambda: subprocess.run(cmd, capture_output=True, check=False),
            lambda: subprocess.run(cmd, capture_output=True, check=False, env=env),
        ],
        sub_clock,
    )
    shutil.rmtree(pycache, ignore_errors=True)
    print(f"diff:    subprocess        {t_sub:.3f} s (with interpreter start-up and imports)")
    print(
        f"diff:    subprocess        {t_sub_cached:.3f} s (the same, bytecode cached as installed)"
    )
    t_u, _ = _best(
        args.repeat,
        lambda: subprocess.run(["diff", "-u", str(fa), str(fb)], capture_output=True),
        sub_clock,
    )
    print(f"diff -u:                   {t_u:.3f} s")

    t_xla: float | None = None
    xla_best: list[float] | None = None
    if xla_py:
        xla_after = xla_parse(xla_py, args.repeat, args.clock, [fa, fb])
        if xla_before is not None and xla_after is not None:
            xla_best = [min(x, y) for x, y in zip(xla_before, xla_after, strict=True)]
            t_xla = sum(xla_best)
            print(
                f"xla:     hlo_module_from_text, A + B {t_xla:.3f} s -> {size / t_xla:.1f} MB/s "
                f"(A {xla_best[0]:.3f} s, B {xla_best[1]:.3f} s; best of runs before and after)"
            )
    else:
        print("xla:     no jax python (--jax-python PY), skipped")

    print(
        f"ratio:   diff end to end (in-process) = {t_in / t_u:.1f}x diff -u"
        + (f" = {t_in / t_xla:.2f}x XLA's parse of A + B (target <= 1)" if t_xla else "")
    )
    print(
        f"         subprocess = {t_sub / t_u:.1f}x diff -u"
        + (f" = {t_sub / t_xla:.2f}x XLA's parse" if t_xla else "")
        + (f"; bytecode cached {t_sub_cached / t_xla:.2f}x" if t_xla else "")
    )

    gc.collect()
    tracemalloc.start()
    diff_json(fa, fb)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e3  # KiB on Linux
    print(
        f"memory:  diff peak (tracemalloc) {peak / 1e6:.0f} MB = {peak / 1e6 / size:.1f}x "
        f"the inputs (target <= 5x); process peak RSS {rss:.0f} MB"
    )
    fc = one_opcode_changed(fa, tmp / "a_one_opcode.hlo")
    if fc is not None:
        t_c, out_c = _best(args.repeat, lambda: diff_json(fa, fc))
        causes_c = [c for m in json.loads(out_c)["modules"] for c in m["causes"]]
        line = (
            f"edit:    A vs A with one multiply -> add: diff in-process {t_c:.3f} s -> {causes_c}"
        )
        if xla_best is not None:  # (XLA's parse of A, twice)
            line += f" = {t_c / (2 * xla_best[0]):.2f}x XLA's parse of both"
        print(line)
        fc.unlink()
    if args.profile:
        import cProfile

        cProfile.runctx("diff_json(fa, fb)", globals(), {"fa": fa, "fb": fb}, args.profile)
        print(f"profile: {args.profile}")
    if not args.keep:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
