"""The benchmarks' generated logs are logs the parsers read whole: a generator that cut a
record in two (noise inside a multi-line block) would time a broken parse.

GIVEN each framework case of ``benchmarks/bench_frameworks.py``, generated small, WHEN
parsed, THEN no line is malformed (the fixtures it repeats have none), about a fifth of the
lines are recognized where noise is added, every repetition compiles anew (torch's and
TensorFlow's compile ids are not repeated: twice the log is about twice the compilations),
and every compilation names its function.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from recompile_doctor import analyze

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def bench() -> object:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import bench_frameworks
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    return bench_frameworks


@pytest.mark.parametrize("case", ["jax", "tensorflow", "torch", "torch-trace", "ptxla"])
def test_a_generated_framework_log_parses_whole(bench: object, tmp_path: Path, case: str) -> None:
    cases = {c[0]: c for c in bench.CASES}  # type: ignore[attr-defined]
    name, fmt, rels, noise = cases[case]
    path = tmp_path / f"{name}.log"
    bench.write_log(path, bench.case_lines(fmt, rels, noise), 400_000)  # type: ignore[attr-defined]
    with analyze(str(path)) as rep:
        (info,) = rep.inputs
        p = rep.parse
        assert p.malformed == 0, (case, p)
        if noise:
            assert 0.15 < p.recognized / info.lines < 0.5, (case, p, info)
        # (the fixtures' compile ids are not repeated: each repetition is compilations anew)
        assert len(rep.compilations) >= 4, (case, len(rep.compilations))
        assert all(c.function not in (None, "?") for c in rep.compilations), case
        compiled = len(rep.compilations)
    # AND a log twice as long has about twice the compilations: each repetition's compile
    # ids are its own (a TensorFlow log of 1 GB was 11 compilations when they repeated)
    longer = tmp_path / f"{name}-2.log"
    bench.write_log(longer, bench.case_lines(fmt, rels, noise), 800_000)  # type: ignore[attr-defined]
    with analyze(str(longer)) as rep:
        assert len(rep.compilations) >= 1.6 * compiled, (case, compiled, len(rep.compilations))
