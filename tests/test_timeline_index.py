"""The timeline's indexes give what a look through every note and reason gives.

GIVEN the timeline of every log fixture (each framework, each case), WHEN an analysis asks
for the notes of a kind or the reasons of a rule through the builder's index, THEN it gets
exactly the items, in log order, that filtering all of them gives; and each reason keeps the
compilation it was attached to (reasons are attached after they are packed).
"""

from __future__ import annotations

import dataclasses
from array import array
from pathlib import Path

import pytest

from recompile_doctor.parsers import parse_log
from recompile_doctor.timeline import build_timeline
from recompile_doctor.timeline.packed import Packed
from recompile_doctor.timeline.types import At, Attributed

ROOT = Path(__file__).resolve().parent.parent
LOGS = sorted(
    p
    for p in (ROOT / "fixtures").rglob("*")
    if p.is_file()
    and (p.suffix in (".log", ".txt") or p.name.endswith(".log.gz"))
    and "hlo" not in p.parts
)


def test_there_are_fixtures_with_notes_and_reasons() -> None:
    tls = [build_timeline(parse_log(str(p), fold=True)) for p in LOGS]
    assert sum(len(t.notes) for t in tls) > 0
    assert sum(len(t.reasons) for t in tls) > 0
    assert any(cid is not None for t in tls for _, cid in t.reasons)


@pytest.mark.parametrize("path", LOGS, ids=lambda p: str(p.relative_to(ROOT)))
def test_index_gives_what_filtering_gives(path: Path) -> None:
    try:
        tl = build_timeline(parse_log(str(path), fold=True))
    except Exception as e:  # a fixture of bad input: nothing to index
        pytest.skip(f"not a readable log: {e}")
    plain = dataclasses.replace(tl, note_index=None, reason_index=None)
    kinds = {n.note for n in tl.notes} | {"graph-break", "never-logged"}
    for kind in kinds:
        assert tl.notes_of(kind) == plain.notes_of(kind)
    assert tl.notes_of(*kinds) == list(tl.notes)
    rules = {r.rule for r, _ in tl.reasons if r.rule is not None} | {"recompile-limit"}
    for rule in rules:
        got, want = tl.reasons_of(rule), plain.reasons_of(rule)
        assert got == want
        # (a view of the places: the reasons are read when asked for, by index too)
        assert isinstance(got, At)
        assert [got[i] for i in range(-len(want), len(want))] == want + want
        assert list(got[1:]) == want[1:]


def test_a_reason_attached_after_packing_keeps_its_compilation() -> None:
    # GIVEN reasons packed two to a chunk, attached to compilations after they were packed
    reasons: Packed[str] = Packed(chunk=2)
    for r in "abcde":
        reasons.append(r)
    ids = array("q", [-1] * 5)
    seq = Attributed(reasons, ids)
    ids[0] = 7
    ids[3] = 2
    # THEN reading gives each reason with its compilation, None where there is none
    assert list(seq) == [("a", 7), ("b", None), ("c", None), ("d", 2), ("e", None)]
    assert seq[3] == ("d", 2)
    assert seq[-1] == ("e", None)
    assert seq[1:3] == [("b", None), ("c", None)]
    assert seq == [("a", 7), ("b", None), ("c", None), ("d", 2), ("e", None)]


def test_retracing_warnings_are_counted_without_being_held(tmp_path: Path) -> None:
    from recompile_doctor import analyze
    from recompile_doctor.analyses.capped import cap
    from recompile_doctor.model import Evidence

    # GIVEN a TensorFlow run's warnings of retracing without its compilations (none of them
    # explained by a recompilation's cause), repeated 40 times in one log
    run = "".join(
        line
        for line in (ROOT / "fixtures" / "tensorflow" / "growing_shape" / "run.log")
        .read_text()
        .splitlines(keepends=True)
        if "triggered tf.function retracing" in line
    )
    log = tmp_path / "retraced.log"
    log.write_text(run * 40)
    with analyze([str(log)]) as report:
        (finding,) = [
            f
            for f in report.findings
            if f.rule == "retracing" and f.detail.startswith("The framework reported")
        ]
    tl = build_timeline(parse_log(str(log), fold=True))
    shown = [
        r for r in tl.reasons_of("retracing") if (r.key.function or r.key.name) in finding.modules
    ]
    # THEN the finding, made in one pass over the warnings, counts those of its functions and
    # shows their first lines, as a list of them all gave
    assert len(shown) >= 40
    assert finding.count == len(shown)
    want = cap(Evidence(r.span.source, r.span.line, r.span.text) for r in shown)
    assert [(e.source, e.line, e.text) for e in finding.evidence] == [
        (e.source, e.line, e.text) for e in want
    ]


def test_the_builder_takes_every_class_of_event() -> None:
    # GIVEN the builder's table of what to do with each class of event (it looks an
    # event's class up there: a new class left out would fail every log that gives one)
    from recompile_doctor import events
    from recompile_doctor.timeline import builder

    classes = {
        c
        for c in vars(events).values()
        if isinstance(c, type) and issubclass(c, events._Base) and c is not events._Base
    }
    # THEN every class of event is in it, and nothing else
    assert set(builder._ON_CLASS) == classes
