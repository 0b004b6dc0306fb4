"""The real TensorFlow captures (``fixtures/tensorflow/<case>/``): what the log alone says
about each case, against the case's hand-written ``expected.json``."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from recompile_doctor.events import CompileStarted, FrameworkNote, RecompileReason, TypedEvent
from recompile_doctor.parsers import ParseCounter, parse_log
from recompile_doctor.timeline.builder import build_timeline
from tests.conftest import FIXTURES

TF_CASES = sorted(p.parent for p in (FIXTURES / "tensorflow").glob("*/expected.json"))


def _parse(case: Path) -> tuple[list[TypedEvent], ParseCounter]:
    counter = ParseCounter(str(case / "run.log"))
    return list(parse_log(str(case / "run.log"), counter)), counter


def _expected(case: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((case / "expected.json").read_text())
    return data


def test_every_capture_is_covered() -> None:
    assert len(TF_CASES) >= 10


@pytest.mark.parametrize("case", TF_CASES, ids=lambda p: p.name)
def test_capture_is_detected_as_tensorflow_and_nothing_is_malformed(case: Path) -> None:
    # GIVEN a real TensorFlow log WHEN it is parsed with format detection
    _, counter = _parse(case)
    # THEN it is TensorFlow's format and every line that names a message fits it
    assert counter.format == "tensorflow"
    assert counter.malformed == 0
    assert counter.recognized > 0


@pytest.mark.parametrize("case", TF_CASES, ids=lambda p: p.name)
def test_capture_events_quote_their_lines_verbatim(case: Path) -> None:
    lines = (case / "run.log").read_text().split("\n")
    events, _ = _parse(case)
    for ev in events:
        assert ev.span.text == lines[ev.span.line - 1]
        if ev.record is not None:
            assert ev.record.text == ev.span.text


@pytest.mark.parametrize("case", TF_CASES, ids=lambda p: p.name)
def test_capture_compile_counts_per_function(case: Path) -> None:
    # GIVEN a capture WHEN parsed
    exp = _expected(case)
    events, _ = _parse(case)
    counts = Counter(ev.key.function for ev in events if isinstance(ev, CompileStarted))
    text = (case / "run.log").read_text()
    if " times, compile time: " in text:
        # THEN with the profiler's lines, every XLA compilation of every function is seen
        assert dict(counts) == exp["functions"]
        assert sum(counts.values()) == exp["xla_compilations"]
    else:
        # THEN at default verbosity the log names no compilation (the dumps do), only that
        # XLA compiled a cluster in this process
        assert counts == Counter()
        notes = [ev for ev in events if isinstance(ev, FrameworkNote)]
        assert [n.note for n in notes].count("xla-cluster-compiled") == 1


@pytest.mark.parametrize("case", TF_CASES, ids=lambda p: p.name)
def test_capture_compilations_have_durations_and_times(case: Path) -> None:
    events, _ = _parse(case)
    for ev in events:
        if isinstance(ev, CompileStarted):
            assert ev.duration_s is not None and 0 < ev.duration_s < 60
            assert ev.span.t is not None and ev.span.t > 0
            assert ev.key.framework == "tensorflow"
            assert ev.key.module is not None and ev.key.module.startswith("a_inference_")


@pytest.mark.parametrize("case", TF_CASES, ids=lambda p: p.name)
def test_capture_recompile_reasons_match_expected(case: Path) -> None:
    # GIVEN a capture and what a correct diagnosis from its log alone is
    exp = _expected(case)
    text = (case / "run.log").read_text()
    events, _ = _parse(case)
    tl = build_timeline(events)
    by_id = {c.id: c for c in tl.compilations}
    reasons = [(r, by_id.get(cid) if cid is not None else None) for r, cid in tl.reasons]
    from_log = set(exp["rules_without_dumps"])
    shape_rules = from_log - {"retracing"}
    # THEN the reasons are exactly those the log can show
    got_rules = {r.rule for r, _ in reasons}
    assert got_rules == from_log
    for cause in exp["causes"]:
        expected_lines = set(cause["log_lines"])
        fn = cause["function"]
        if cause["rule"] in shape_rules:
            [(r, comp)] = [(r, c) for r, c in reasons if r.rule == cause["rule"]]
            assert r.key.function == fn
            assert (r.changes[0].old, r.changes[0].new) == (cause["old"], cause["new"])
            # the compilation it explains is the recompilation the profiler line reports
            assert comp is not None and comp.function == fn
            assert expected_lines <= set(r.lines) | {comp.line}
            assert r.span.line in expected_lines | set(r.lines)
    if "retracing" in from_log:
        [fn] = {c["function"] for c in exp["causes"] if c["log_lines"]}
        shown = {n for c in exp["causes"] for n in c["log_lines"]}
        warns = [(r, c) for r, c in reasons if r.rule == "retracing"]
        assert warns, "the retracing warning is a reason"
        for r, comp in warns:
            assert r.key.function == fn
            assert r.span.line in shown
            assert "triggered tf.function retracing" in r.reason
            # it explains the compilation of the call that traced, just before it
            assert comp is not None and comp.line in shown
            assert comp.line < r.span.line
            assert r.key.compile_id == comp.compile_id
    # the log never names the user's call site (TF records its own frames)
    assert "capture.py" not in text
    assert all(r.call_site is None for r, _ in reasons)


@pytest.mark.parametrize("case", TF_CASES, ids=lambda p: p.name)
def test_capture_retracing_warning_counts(case: Path) -> None:
    events, _ = _parse(case)
    notes = [
        ev for ev in events if isinstance(ev, FrameworkNote) and ev.note == "retracing-warning"
    ]
    reasons = [ev for ev in events if isinstance(ev, RecompileReason) and ev.rule == "retracing"]
    assert len(notes) == len(reasons)
    # TF warns at the 5th and 6th trace, at most twice per function
    assert [(n.detail["count"], n.detail["calls"]) for n in notes] in ([], [(5, 5), (6, 6)])


@pytest.mark.parametrize(
    "case", sorted(p.parent.name for p in (FIXTURES / "tensorflow").glob("*/run.log"))
)
def test_runs_appended_to_one_log_are_each_their_own(case: str, tmp_path: Path) -> None:
    from recompile_doctor import analyze
    from recompile_doctor.events import ProcessStarted

    # GIVEN a captured run appended to itself (2>> run.log, run again: the same clusters,
    # each compiled "1 times" again), and the two runs as two files
    one = (FIXTURES / "tensorflow" / case / "run.log").read_text()
    appended = tmp_path / "appended.log"
    appended.write_text(one + one)
    (tmp_path / "a.log").write_text(one)
    (tmp_path / "b.log").write_text(one)
    # THEN the compilations and findings are those of the two files: the second run's
    # first counted compilation starts a new process, none of its compilations is lost
    with (
        analyze([str(appended)]) as r1,
        analyze([str(tmp_path / "a.log"), str(tmp_path / "b.log")]) as r2,
    ):
        assert len(r1.compilations) == len(r2.compilations)
        assert [(f.rule, f.count, round(f.wasted_seconds, 6)) for f in r1.findings] == [
            (f.rule, f.count, round(f.wasted_seconds, 6)) for f in r2.findings
        ]
    counted = " times, compile time: " in one
    new = [e for e in parse_log(str(appended)) if isinstance(e, ProcessStarted) and e.new]
    assert len(new) == (1 if counted else 0)
