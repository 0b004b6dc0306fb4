"""A finding's detail names a few functions and counts the others; its modules list them all.

A run can retrace, fail or hit the recompile limit in thousands of functions: the detail is
one line a person reads, not a megabyte."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from recompile_doctor import analyze
from recompile_doctor.wording import NAMED_IN_DETAIL, names_listed

ROOT = Path(__file__).resolve().parents[1]

RETRACE = (
    "WARNING:tensorflow:5 out of the last 5 calls to <function case.<locals>.{fn} at "
    "0x7f5886f779c0> triggered tf.function retracing. Tracing is expensive and the excessive "
    "number of tracings could be due to (1) creating @tf.function repeatedly in a loop, (2) "
    "passing tensors with different shapes, (3) passing Python objects instead of tensors."
)


@pytest.mark.parametrize(
    ("names", "want"),
    [
        ((), ""),
        (("f",), "f"),
        (tuple("abcdefgh"), "a, b, c, d, e, f, g, h"),
        (tuple("abcdefghi"), "a, b, c, d, e, f, g, h and 1 more function"),
        (tuple("abcdefghijk"), "a, b, c, d, e, f, g, h and 3 more functions"),
    ],
)
def test_names_listed_counts_past_eight(names: tuple[str, ...], want: str) -> None:
    assert names_listed(names) == want


def test_names_listed_names_its_word() -> None:
    assert names_listed(("x", "y", "z"), "executable", most=1) == "x and 2 more executables"


@pytest.mark.parametrize("n", [3, NAMED_IN_DETAIL, 2_000])
def test_retracing_detail_names_eight_functions_and_counts_the_rest(tmp_path: Path, n: int) -> None:
    # GIVEN a TensorFlow log warning of retracing in n distinct functions, each twice
    names = [f"step_{i:05d}" for i in range(n)]
    log = tmp_path / "retraced.log"
    log.write_text("".join(RETRACE.format(fn=fn) + "\n" for fn in names * 2))
    with analyze([str(log)]) as report:
        [finding] = [f for f in report.findings if f.rule == "retracing"]
        modules = list(finding.modules)
    # THEN the detail names the first eight, sorted, and counts the others; the modules
    # list every one of them, and every warning is counted
    shown = ", ".join(names[:NAMED_IN_DETAIL])
    more = n - NAMED_IN_DETAIL
    tail = "" if more <= 0 else f" and {more:,} more function" + ("s" if more > 1 else "")
    assert finding.detail.startswith(f"The framework reported retracing of {shown}{tail}: ")
    assert modules == names
    assert finding.count == 2 * n


def test_a_function_that_hits_the_recompile_limit_twice_is_one_function(tmp_path: Path) -> None:
    # GIVEN a torch.compile log where one function hits the recompile limit in two frames
    lines = (ROOT / "fixtures" / "torch" / "recompile_limit" / "run.log").read_text().splitlines()
    limit = [ln for ln in lines if "convert_frame.py" in ln]
    again = [ln.replace("[0/4]", "[1/4]").replace("17718", "17719") for ln in limit]
    log = tmp_path / "limit.log"
    log.write_text("\n".join([*lines, *again]) + "\n")
    with analyze([str(log)]) as report:
        [finding] = [f for f in report.findings if f.rule == "recompile-limit"]
        modules = list(finding.modules)
    # THEN the finding counts both hits, and names one function once
    assert finding.count == 2
    assert modules == ["repeat_mix"]
    assert finding.detail.startswith("1 function hit the recompile limit (repeat_mix): ")


def test_rank_divergence_details_eight_functions_and_counts_the_rest() -> None:
    from recompile_doctor.analyses._common import Options
    from recompile_doctor.analyses.framework import rank_divergence
    from recompile_doctor.events import CompileFinished, CompileKey, CompileStarted, Span
    from recompile_doctor.timeline import build_timeline

    # GIVEN two ranks of a run, where rank 1 compiles each of 11 functions twice and rank 0
    # once
    events = []
    line = 0
    for rank, times in (("0", 1), ("1", 2)):
        for i in range(11):
            for k in range(times):
                key = CompileKey("torch", f"f{i:02d}", compile_id=f"{i}/{k}")
                line += 1
                sp = Span("run.log", line, f"compile {i}/{k}", float(line), rank)
                events += [CompileStarted(sp, None, key), CompileFinished(sp, None, key)]
    tl = build_timeline(events)
    [finding] = rank_divergence(tl, Options())
    # THEN the detail tells where the first eight part and counts the other three; the
    # modules and the count take all eleven
    named = re.findall(r"(?:^|; )(f\d\d): compiled 1× on rank 0, 2× on rank 1;", finding.detail)
    assert named == [f"f{i:02d}" for i in range(8)]
    assert finding.detail.endswith("; and 3 more functions.")
    assert list(finding.modules) == [f"f{i:02d}" for i in range(11)]
    assert finding.count == 11
