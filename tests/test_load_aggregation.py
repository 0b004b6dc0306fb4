"""Memory does not grow with the number of executable loads: past MAX_LOAD_EVENTS the
report keeps the first and last loads one by one and aggregates the rest, exactly counted."""

from __future__ import annotations

from pathlib import Path

from recompile_doctor import analyze
from recompile_doctor.timeline import builder
from tests.conftest import examples

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def test_many_loads_are_aggregated_not_lost(monkeypatch: object) -> None:
    import pytest

    mp = pytest.MonkeyPatch()
    try:
        # GIVEN a switching run whose loads exceed a (small) cap
        log = FIXTURES / "simulated" / "alternating-graphs" / "run.log"
        full = analyze([str(log)])
        loads = [e for e in full.events if e.kind == "load"]
        assert len(loads) >= 6
        mp.setattr(builder, "MAX_LOAD_EVENTS", 4)
        r = analyze([str(log)])
    finally:
        mp.undo()
    # THEN two loads from each end stay, one aggregate holds the rest, and counts are exact
    kept = [e for e in r.events if e.kind == "load"]
    (agg,) = [e for e in r.events if e.kind == "loads"]
    assert len(kept) == 4
    assert agg.detail["count"] == len(loads) - 4
    assert agg.detail["first_line"] == loads[2].line and agg.detail["last_line"] == loads[-3].line
    assert r.summary.loads == full.summary.loads == len(loads)
    assert [f.rule for f in r.findings] == [f.rule for f in full.findings]


def test_the_loads_are_tallied_as_they_are_added() -> None:
    # GIVEN every Poplar fixture with loads, WHEN its timeline is built, THEN the tally the
    # builder kept is the one a pass over the (packed) loads gives, and the analyses read it
    # (its re-loads after warm-up: their count, seconds and modules as a pass over them
    # totals them, the same float)
    from recompile_doctor.analyses.loads import _reloads, _totals
    from recompile_doctor.parsers import parse_log
    from recompile_doctor.timeline import build_timeline
    from recompile_doctor.timeline.types import LoadTally

    seen = 0
    logs = {*FIXTURES.glob("**/run.log"), *FIXTURES.glob("poplar/**/*.log")}
    for log in sorted(logs):
        tl = build_timeline(parse_log(str(log)))
        assert tl.loads_tallied is not None
        assert tl.loads_tallied == LoadTally.of(tl.loads), log
        t = tl.loads_tallied
        assert (t.reloads, t.reload_seconds, sorted(t.reload_modules)) == _totals(_reloads(tl))
        seen += tl.loads_tallied.reloads + 1000 * bool(tl.loads_tallied.unattributed)
    assert seen > 1000  # re-loads after warm-up, and some no Execute line attributes


def test_the_aggregate_is_the_same_whatever_the_cap() -> None:
    # GIVEN a switching run, WHEN the cap on load events is each value from 2 to past the
    # number of loads (odd ones too), THEN the report keeps min(cap, loads) of them one by
    # one (or all of them), the aggregate counts the rest, and nothing is lost
    import pytest

    log = FIXTURES / "simulated" / "alternating-graphs" / "run.log"
    full = [e for e in analyze([str(log)]).events if e.kind == "load"]
    for cap in range(2, len(full) + 2):
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(builder, "MAX_LOAD_EVENTS", cap)
            events = analyze([str(log)]).events
        kept = [e for e in events if e.kind == "load"]
        aggs = [e for e in events if e.kind == "loads"]
        if len(full) <= cap:
            assert kept == full and not aggs
            continue
        (agg,) = aggs
        half = cap // 2
        assert kept == full[:half] + full[len(full) - half :]
        assert agg.detail["count"] == len(full) - 2 * half
        assert agg.detail["first_line"] == full[half].line
        assert agg.detail["last_line"] == full[len(full) - half - 1].line


def test_evidence_read_in_order_stops_early_with_the_same_lines() -> None:
    # GIVEN evidence lines sorted by (input, line), repeats among them, WHEN they are capped
    # knowing that (the reading stops at the first line that would be left out) and not
    # THEN the lines kept are the same, and the reading stopped after the cap's worth
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from recompile_doctor.analyses.capped import MAX_EVIDENCE, cap
    from recompile_doctor.model import Evidence

    @settings(max_examples=examples(200), deadline=None)
    @given(st.lists(st.tuples(st.sampled_from(["a.log", "b.log"]), st.integers(1, 40))))
    def check(keys: list[tuple[str, int]]) -> None:
        lines = [Evidence(s, n, f"{s}:{n}") for s, n in sorted(keys)]
        read = 0

        def counted() -> object:
            nonlocal read
            for e in lines:
                read += 1
                yield e

        assert cap(counted(), in_order=True) == cap(lines)  # type: ignore[arg-type]
        # (it stops at the line after the one that filled it: that line and all after it
        # would be left out, a repeat of the last line kept too)
        firsts = [i for i, e in enumerate(lines) if i == 0 or lines[i - 1] != e]
        full = firsts[MAX_EVIDENCE - 1] if len(firsts) >= MAX_EVIDENCE else None
        assert read == (len(lines) if full is None else min(len(lines), full + 2))

    check()


def test_the_tally_knows_whether_the_loads_came_in_order() -> None:
    # GIVEN loads of two inputs WHEN one comes before a line already passed (another
    # process's, flushed later) THEN the tally says they are not in order, and stays so
    from recompile_doctor.timeline.types import Load, LoadTally

    def load(source: str, line: int) -> Load:
        return Load(source, line, None, 0.5, None, 0, False, True, "", attributed=False)

    ordered = [load("a.log", 1), load("a.log", 5), load("a.log", 5), load("b.log", 2)]
    assert LoadTally.of(ordered).in_order
    late = [load("a.log", 1), load("a.log", 9), load("a.log", 5), load("b.log", 20)]
    assert not LoadTally.of(late).in_order
    assert not LoadTally.of([load("b.log", 1), load("a.log", 2)]).in_order  # type: ignore[arg-type]


def test_switching_findings_are_those_of_evidence_read_to_the_end(
    monkeypatch: object,
) -> None:
    # GIVEN every Poplar fixture with loads WHEN analysed with the evidence of loads read
    # to the end (the order not trusted) and as it is THEN the findings are the same
    import pytest

    from recompile_doctor.analyses import _common

    logs = sorted({*FIXTURES.glob("**/run.log"), *FIXTURES.glob("poplar/**/*.log")})
    seen = 0
    real = _common.cap
    for log in logs:
        fast = analyze([str(log)]).findings
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(_common, "cap", lambda ev, in_order=False: real(ev))
            slow = analyze([str(log)]).findings
        assert [f.to_json() for f in fast] == [f.to_json() for f in slow], log
        seen += sum(f.rule in ("executable-switching", "slow-load") for f in fast)
    assert seen >= 3
