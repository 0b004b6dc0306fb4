"""The benchmarks' generated logs are logs the parsers read whole: a generator that cut a
record in two (noise inside a multi-line block) would time a broken parse, and one that
repeated its lines word for word would time memos that a real log never lets hit.

GIVEN each framework case of ``benchmarks/bench_frameworks.py``, generated small, WHEN
parsed, THEN no line is malformed (the fixtures it repeats have none), about a fifth of the
lines are recognized where noise is added, every repetition compiles anew (torch's and
TensorFlow's compile ids are not repeated: twice the log is about twice the compilations),
and every compilation names its function.
"""

from __future__ import annotations

import os
import sys
from itertools import islice
from pathlib import Path
from typing import Any

import pytest

from recompile_doctor import analyze
from tests.conftest import benchmark_script

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def bench() -> object:
    return benchmark_script("bench_frameworks")


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


@pytest.mark.parametrize("noise", [16, 4])  # (the 1 GB DEBUG log's, the 20 % log's)
def test_a_generated_poplar_log_parses_whole_with_its_phases_varied(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, noise: int
) -> None:
    bench_scale = benchmark_script("bench_scale")
    # GIVEN the Poplar case repeated with DEBUG noise, as benchmarks/bench_scale.py writes it
    path = tmp_path / "poplar.log"
    bench_scale.write_log(path, bench_scale._poplar_lines(noise), 1_500_000)
    # THEN its loads print other durations and amounts each time (a real log's do, and a
    # memo of messages must get no hit a real log would not give it)
    ends = [ln[27:] for ln in path.read_text().splitlines() if "Ending phase: Loading" in ln]
    assert len(ends) > 100 and len(set(ends)) > 0.95 * len(ends), (len(ends), len(set(ends)))
    # AND it parses whole, into the findings of the same log with its lines repeated as
    # they are (the same causes, as often; only the seconds differ)
    same = tmp_path / "same.log"
    monkeypatch.setattr(bench_scale, "varied", lambda line, k: line)
    bench_scale.write_log(same, bench_scale._poplar_lines(noise), 1_500_000)
    with analyze(str(same)) as rep:
        want = [(f.rule, f.count) for f in rep.findings]
    with analyze(str(path)) as rep:
        (info,) = rep.inputs
        assert rep.parse.malformed == 0, rep.parse
        assert 0.02 < rep.parse.recognized / info.lines < 0.3, (rep.parse, info)
        assert want and [(f.rule, f.count) for f in rep.findings] == want


def test_a_generated_growing_shape_log_goes_on_growing(bench: Any, tmp_path: Path) -> None:
    # GIVEN the JAX case as benchmarks/bench_frameworks.py writes it (its growing-shape
    # fixture repeated)
    cases = {c[0]: c for c in bench.CASES}
    _, fmt, rels, noise = cases["jax"]
    path = tmp_path / "jax.log"
    bench.write_log(path, bench.case_lines(fmt, rels, noise), 400_000)
    # THEN no signature is compiled twice: each repetition goes on growing the shape, as a
    # longer run does (a repeated one is a memo hit a real growing run never gives)
    grown: list[str] = []
    firsts = 0  # (compilations of a function never seen: each repetition's first)
    fresh = False
    for ln in path.read_text().splitlines():
        fresh = fresh or ln.lstrip().startswith("summarize id=")  # (never seen before)
        if ln.startswith("Compiling jit(summarize) with global shapes"):
            grown.append(ln)
            firsts += fresh
            fresh = False
    assert len(grown) > 30 and len(set(grown)) == len(grown), (len(grown), len(set(grown)))
    # AND the growth is read as such: one growing-shape finding, of every step but the
    # first of each repetition (which begins, as the fixture does, with a function never
    # seen)
    with analyze(str(path)) as rep:
        grows = [f for f in rep.findings if f.rule == "growing-shape"]
        assert len(grows) == 1, [f.rule for f in rep.findings]
        assert grows[0].count == len(grown) - firsts, (grows[0].count, len(grown), firsts)


def test_instruction_counts_take_the_first_lines_run_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN a valgrind that reports as many instructions as the log it runs on has bytes
    fake = tmp_path / "bin" / "valgrind"
    fake.parent.mkdir()
    fake.write_text('#!/bin/sh\necho "==1== Collected : $(wc -c < "$6")" >&2\n')
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake.parent}:{os.environ['PATH']}")
    bi = benchmark_script("bench_instructions")
    log, head = tmp_path / "a.log", tmp_path / "h.log"
    log.write_text("x" * 1000)
    head.write_text("x" * 40)
    # WHEN the work of the log is counted THEN it is its run's count less its head's
    assert bi.instructions(log, "jax", None) == 1000
    assert bi.work(log, head, "jax", "/elsewhere") == 960
    # AND without valgrind the benchmark says it is skipped, and succeeds
    monkeypatch.setenv("PATH", str(tmp_path / "nothing"))
    monkeypatch.setattr(sys, "argv", ["bench_instructions.py"])
    assert bi.main() == 0
    assert "valgrind not found" in capsys.readouterr().out


def test_instruction_counts_cover_every_framework_log_and_the_poplar_debug_one() -> None:
    # GIVEN the instruction benchmark's cases
    bi = benchmark_script("bench_instructions")
    bf, bs = benchmark_script("bench_frameworks"), benchmark_script("bench_scale")
    got = {name: (fmt, lines) for name, fmt, lines in bi.cases()}
    # THEN they are the framework logs, each in its format, and the DEBUG-style Poplar log
    # of bench_scale.py (the one its 2x-grep target is about), line for line
    assert list(got) == [c[0] for c in bf.CASES] + ["poplar-debug"]
    assert [got[c[0]][0] for c in bf.CASES] == [c[1] for c in bf.CASES]
    fmt, lines = got["poplar-debug"]
    want = bs._poplar_lines(16)
    assert fmt == "poplar"
    assert list(islice(lines(), 3000)) == list(islice(want, 3000))
    # AND each framework case's lines are bench_frameworks.py's
    name, fmt, rels, noise = bf.CASES[0]
    assert list(islice(got[name][1](), 500)) == list(islice(bf.case_lines(fmt, rels, noise), 500))


def test_the_matcher_benchmark_finds_the_same_lines_with_every_matcher(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN the matcher benchmark over small logs of JAX's and the DEBUG Poplar one
    bm = benchmark_script("bench_matchers")
    argv = ["bench_matchers.py", "--mb", "0.3", "--dir", str(tmp_path), "--repeat", "1"]
    monkeypatch.setattr(sys, "argv", [*argv, "--only", "jax,poplar-debug"])
    # WHEN it runs THEN every matcher here finds the same candidate lines in each
    bm.main()
    rows = [line.split() for line in capsys.readouterr().out.splitlines()]
    got = {r[0]: r for r in rows if r and r[0] in ("jax", "poplar-debug")}
    assert set(got) == {"jax", "poplar-debug"}
    assert all(r[-1] != "DIFFER" and int(r[-1]) > 0 for r in got.values())
