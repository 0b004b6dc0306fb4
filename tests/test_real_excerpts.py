"""The verbatim real excerpts of reference/poplar_formats.md §8, parsed event by event."""

from __future__ import annotations

import pytest

from recompile_doctor import analyze
from recompile_doctor.parsers import ParseCounter, parse_log, records
from tests.conftest import REAL

EXPECTED = {
    "A_cookbook_old_phases.log": (
        [
            ("phase-start", 1),
            ("phase-end", 2),
            ("phase-start", 3),
            ("compile-step", 4),
            ("phase-start", 5),
            ("phase-end", 6),
            ("phase-start", 8),
            ("phase-end", 9),
            ("phase-start", 10),
            ("phase-end", 16),
            ("phase-end", 25),
            ("phase-start", 26),
            ("phase-end", 28),
            ("phase-start", 29),
        ],
        (14, 15, 0),
    ),
    "B_technote_lines.log": ([("phase-end", 6)], (1, 5, 0)),
    "C_alcf_tf2_sdk31_always.log": (
        [("poplar-version", 1), ("attach", 2), ("cluster-compiled", 8)],
        (3, 7, 0),
    ),
    "D_alcf_poptorch_popart_poprun.log": (
        [("graph-compiled", 4), ("graph-compiled", 10)],
        (2, 11, 0),
    ),
    "E_keras_on_demand_sdk26.log": (
        [
            ("poplar-version", 1),
            ("progress-start", 9),
            ("progress-end", 10),
            ("cluster-compiled", 11),
            ("attach", 12),
            ("progress-start", 16),
            ("progress-end", 17),
        ],
        (7, 11, 0),
    ),
    "F_2020_auto_replication.log": ([("replication", 2)], (1, 2, 0)),
    "G_popart_odla.log": ([], (0, 4, 0)),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_real_excerpt_events(name: str) -> None:
    # GIVEN a real excerpt WHEN parsed THEN exactly the expected events, nothing malformed
    path = str(REAL / name)
    counter = ParseCounter(path)
    events = [(e.kind, e.line) for e in records(parse_log(path, counter))]
    want_events, want_counts = EXPECTED[name]
    assert events == want_events
    assert (counter.recognized, counter.unrecognized, counter.malformed) == want_counts


def test_cookbook_phases_nesting_and_durations() -> None:
    path = str(REAL / "A_cookbook_old_phases.log")
    ends = {e.detail["name"]: e for e in records(parse_log(path)) if e.kind == "phase-end"}
    assert ends["findRootNodeCandidates"].detail["depth"] == 3
    assert ends["smallSubGraphOptimisation"].detail["depth"] == 2
    assert ends["Create adjacencies"].detail == {
        "name": "Create adjacencies",
        "depth": 3,
        "duration_ms": 30,
        "diff_rss_mb": 16.4961,
        "total_rss_mb": 2440.24,
    }
    # old time-only prefix: seconds since the first line
    assert ends["replicateConstants"].t == pytest.approx(0.062)


def test_technote_load_line_is_a_load() -> None:
    report = analyze([str(REAL / "B_technote_lines.log")])
    loads = [e for e in report.events if e.kind == "load"]
    assert [(e.line, e.detail["duration_s"]) for e in loads] == [(6, 0.607)]
    assert report.summary.loads == 1 and report.findings == ()


def test_always_attaches_before_compiling_and_on_demand_after() -> None:
    # ALWAYS (excerpt C): attach, then "Compiled cluster"; ON_DEMAND (excerpt E): the reverse
    c = [e.kind for e in records(parse_log(str(REAL / "C_alcf_tf2_sdk31_always.log")))]
    assert c.index("attach") < c.index("cluster-compiled")
    e = [x.kind for x in records(parse_log(str(REAL / "E_keras_on_demand_sdk26.log")))]
    assert e.index("progress-end") < e.index("cluster-compiled") < e.index("attach")


def test_keras_progress_bars_are_two_compilations_of_unknown_cache() -> None:
    report = analyze([str(REAL / "E_keras_on_demand_sdk26.log")])
    comps = [(c.line, c.duration_s, c.cache) for c in report.compilations]
    assert comps == [(9, 30.1, "unknown"), (16, 14.4, "unknown")]
    assert report.findings == ()  # train and test functions, each compiled once: healthy


def test_poptorch_compilations_from_progress_bars() -> None:
    report = analyze([str(REAL / "D_alcf_poptorch_popart_poprun.log")])
    assert [c.duration_s for c in report.compilations] == [386.0, 1684.0]
