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
from recompile_doctor.timeline.types import Attributed

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
        assert tl.reasons_of(rule) == plain.reasons_of(rule)


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
