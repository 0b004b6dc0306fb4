"""End to end over every real capture of a framework: GIVEN a captured run (log, traces,
dumps) and its hand-written expected.json, WHEN it is analysed, THEN the expected causes are
found with their old -> new values, and a healthy run raises no warning.

The captures were made with the scripts beside them (fixtures/<framework>/capture.py); see
each framework's README for versions.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from recompile_doctor import analyze
from recompile_doctor.model import Report
from recompile_doctor.rules import rule as rule_of

#: known gaps, each with what is missing (tracked in the issue notes)
KNOWN_GAPS: dict[tuple[str, bool], str] = {}

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
FRAMEWORKS = ("jax", "tensorflow", "torch", "ptxla")


def _cases() -> list[Path]:
    out = []
    for fw in FRAMEWORKS:
        for exp in sorted((FIXTURES / fw).glob("*/expected.json")):
            out.append(exp.parent)
    return out


def _inputs(case: Path) -> list[str]:
    logs = [str(case / "run.log")]
    trace = case / "trace"
    if trace.is_dir():
        logs += [str(p) for p in sorted(trace.iterdir()) if p.name.startswith("dedicated_log")]
    return logs


def _expected(case: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((case / "expected.json").read_text())
    return data


def _problems(r: Report) -> set[str]:
    return {f.rule for f in r.findings if f.severity != "info"}


@pytest.fixture(scope="module")
def reports() -> dict[tuple[str, bool], Report]:
    return {}


def _analyse(case: Path, with_dumps: bool, cache: dict[tuple[str, bool], Report]) -> Report:
    key = (str(case), with_dumps)
    if key not in cache:
        dumps = [str(case / "dumps")] if with_dumps and (case / "dumps").is_dir() else []
        cache[key] = analyze(_inputs(case), dumps=dumps)
    return cache[key]


@pytest.mark.parametrize("with_dumps", [False, True], ids=["log", "log+dumps"])
@pytest.mark.parametrize("case", _cases(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_capture_is_diagnosed(
    case: Path, with_dumps: bool, reports: dict[tuple[str, bool], Report]
) -> None:
    exp = _expected(case)
    if with_dumps and not (case / "dumps").is_dir():
        pytest.skip("no dumps in this capture")
    gap = KNOWN_GAPS.get((f"{case.parent.name}/{case.name}", with_dumps))
    if gap is not None:
        pytest.xfail(gap)
    r = _analyse(case, with_dumps, reports)
    # the format of the log is the framework's
    assert any(i.format.startswith(exp["framework"]) for i in r.inputs)
    found = _problems(r)
    if exp.get("healthy"):
        assert found == set(), [f.detail for f in r.findings]
        return
    needs_dumps = set(exp.get("rules_without_dumps", ())) if not with_dumps else None
    for cause in exp.get("causes", []):
        rule = cause["rule"]
        if rule_of(rule).severity == "info" and "frozen-weights" in found:
            continue  # an info note beside the cause it qualifies
        if needs_dumps is not None and rule not in needs_dumps and "rules_without_dumps" in exp:
            continue
        accepted = {rule, *cause.get("acceptable_rules", ())}
        assert accepted & (found | {f.rule for f in r.findings}), (rule, sorted(found))


@pytest.mark.parametrize("case", _cases(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_old_values_are_named(case: Path, reports: dict[tuple[str, bool], Report]) -> None:
    """Every expected cause with an old value has it among the finding's changes or its
    detail (the value the framework logged, verbatim)."""
    exp = _expected(case)
    r = _analyse(case, False, reports)
    for cause in exp.get("causes", []):
        old = cause.get("old")
        if old is None or cause["rule"] in ("rank-divergence", "frozen-weights"):
            continue
        f = next((f for f in r.findings if f.rule == cause["rule"]), None)
        if f is None:
            continue  # test_capture_is_diagnosed reports the missing finding
        texts = [f.detail] + [f"{c.what} {c.old} {c.new}" for c in f.changes]
        olds = {str(old)} | {str(o) for o in cause.get("values", ())}
        if "=" in str(old):
            # "grad_mode=True": the log names what changed; its value only the script knows
            olds.add(str(old).split("=")[0])
        assert any(o in t for o in olds for t in texts), (cause["rule"], old, texts[:3])


@pytest.mark.parametrize("with_dumps", [False, True], ids=["log", "log+dumps"])
@pytest.mark.parametrize(
    "case",
    [c for c in _cases() if c.parent.name in ("jax", "tensorflow")],
    ids=lambda p: f"{p.parent.name}/{p.name}",
)
def test_compilations_and_persistent_cache_are_counted(
    case: Path, with_dumps: bool, reports: dict[tuple[str, bool], Report]
) -> None:
    """The summary counts the XLA compilations (the dumps' when the log is silent about
    them, as TensorFlow is at default verbosity) and the persistent cache's hits, misses and
    writes exactly as the capture made them."""
    exp = _expected(case)
    if with_dumps and not (case / "dumps").is_dir():
        pytest.skip("no dumps in this capture")
    r = _analyse(case, with_dumps, reports)
    compiled = [c for c in r.compilations if c.cache != "hit"]
    logged_only = len(compiled)
    if with_dumps:
        assert (
            r.summary.compilations - (len(r.compilations) - logged_only) == exp["xla_compilations"]
        )
    elif logged_only:
        assert logged_only == exp["xla_compilations"]
    pc = exp.get("persistent_cache")
    got = dict(r.summary.cache_by_store.get("persistent", {}))
    if pc is None:
        assert got == {} or got.get("hits", 0) == got.get("writes", 0) == 0
    else:
        assert got == {"hits": pc["hits"], "misses": pc["misses"], "writes": pc["writes"]}


@pytest.mark.parametrize("case", ["frozen_weights", "growing_shape", "retracing_python_scalar"])
def test_retracing_warnings_behind_a_cause_are_one_finding_not_two(case: str) -> None:
    # GIVEN captured TensorFlow runs whose retracing warnings are the cause given to the
    # function's recompilations (the retracing finding shows them as its evidence)
    log = FIXTURES / "tensorflow" / case / "run.log"
    with analyze([str(log)]) as report:
        retraced = [f for f in report.findings if f.rule == "retracing"]
    # THEN one retracing finding says so, with its cost; the warnings are not reported
    # again as a finding of their own
    assert len(retraced) == 1
    (finding,) = retraced
    assert finding.wasted_seconds > 0
    assert any("triggered tf.function retracing" in e.text for e in finding.evidence)
