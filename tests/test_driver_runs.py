"""The driver hands the analysis its events in runs (``_decoding.decoded_runs``,
``runs_of``, ``runs_after``; ``logs.parse_log_runs``), so that its interpreted generators and
the loop that feeds the timeline run once per run, not once per event.

GIVEN lines whose events come in any numbers (none, one, more than a run holds), WHEN they
are decoded in runs, THEN the events are those decoded one line at a time, in order, in runs
of at most ``RUN_MAX`` and never empty; the events before an error are given before it is
raised; and ``parse_log`` (the events one at a time) is ``parse_log_runs`` flattened.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from recompile_doctor.errors import RecompileDoctorError
from recompile_doctor.parsers import parse_log
from recompile_doctor.parsers._decoding import (
    RUN_MAX,
    UNKNOWN_FORMAT,
    decoded_runs,
    runs_after,
    runs_of,
)
from recompile_doctor.parsers._format import Decoded
from recompile_doctor.parsers.logs import ParseCounter, parse_log_runs
from tests.conftest import examples

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


class _Decoder:
    """Decodes "N" into N events (stand-ins: strings); "bad" is malformed, "skip"
    unrecognized."""

    def decode(self, lineno: int, raw: str) -> Decoded:
        if raw == "bad":
            return Decoded("malformed", (), "bad")
        if raw == "skip":
            return Decoded("unrecognized")
        events: Any = tuple(f"ev{lineno}.{i}" for i in range(int(raw)))
        return Decoded("recognized", events)


def _counter() -> Any:
    return SimpleNamespace(recognized=0, unrecognized=0, malformed=0, format=UNKNOWN_FORMAT)


_line = st.one_of(
    st.integers(0, 3).map(str),
    st.sampled_from([RUN_MAX - 1, RUN_MAX, RUN_MAX + 1, 2 * RUN_MAX + 3]).map(str),
    st.sampled_from(["bad", "skip"]),
)


def _check_runs(runs: list[list[Any]]) -> None:
    assert all(0 < len(r) <= RUN_MAX for r in runs)


@settings(max_examples=examples(200))
@given(raws=st.lists(_line, max_size=40))
def test_runs_hold_the_events_of_the_lines_in_order(raws: list[str]) -> None:
    lines = list(enumerate(raws, 1))
    c = _counter()
    runs = list(decoded_runs(iter(lines), _Decoder(), c, "fmt", "x.log", False))  # type: ignore[arg-type]
    _check_runs(runs)
    one_at_a_time = [ev for n, raw in lines for ev in _Decoder().decode(n, raw).events]
    assert [ev for r in runs for ev in r] == one_at_a_time
    assert (c.recognized, c.unrecognized, c.malformed) == (
        sum(raw.isdigit() for raw in raws),
        raws.count("skip"),
        raws.count("bad"),
    )
    assert c.format == ("fmt" if c.recognized else UNKNOWN_FORMAT)


def _counts_of(raws: list[str]) -> tuple[int, int, int]:
    return (sum(r.isdigit() for r in raws), raws.count("skip"), raws.count("bad"))


class _Recorded:
    """Lines, noting how many were taken each time one is (what the counter must say of
    the lines before it when a run is handed on)."""

    def __init__(self, raws: list[str], fail_after: int | None = None) -> None:
        self.raws = raws
        self.taken = 0
        self.fail_after = fail_after

    def __iter__(self) -> Iterator[tuple[int, str]]:
        for n, raw in enumerate(self.raws, 1):
            if self.fail_after is not None and n > self.fail_after:
                raise OSError("the disk went away")
            self.taken = n
            yield n, raw


@settings(max_examples=examples(200))
@given(raws=st.lists(_line, max_size=40), fail=st.none() | st.integers(0, 40))
def test_the_counter_holds_every_line_decoded_when_a_run_is_handed_on(
    raws: list[str], fail: int | None
) -> None:
    # GIVEN lines decoded in runs (the reading failing after some of them, or not), WHEN
    # each run is handed on, and when the generator ends or fails, THEN the counter holds
    # every line decoded by then (the lines are counted where they are decoded, and the
    # counts handed over whenever the generator gives control back)
    lines = _Recorded(raws, fail)
    c = _counter()
    runs = decoded_runs(iter(lines), _Decoder(), c, "fmt", "x.log", False)  # type: ignore[arg-type]
    try:
        for _run in runs:
            # (the line that filled the run is decoded, and counted, before it is handed on)
            assert (c.recognized, c.unrecognized, c.malformed) == _counts_of(raws[: lines.taken])
    except OSError:
        assert fail is not None and fail < len(raws)
    assert (c.recognized, c.unrecognized, c.malformed) == _counts_of(raws[: lines.taken])


def test_a_run_left_early_has_its_lines_counted() -> None:
    # GIVEN runs whose consumer stops after the first, THEN the lines decoded are counted
    raws = [str(RUN_MAX), "skip", "bad", "1", str(RUN_MAX)]
    c = _counter()
    runs = decoded_runs(iter(enumerate(raws, 1)), _Decoder(), c, "fmt", "x.log", False)  # type: ignore[arg-type]
    next(runs)
    assert (c.recognized, c.unrecognized, c.malformed) == (1, 0, 0)
    runs.close()
    assert (c.recognized, c.unrecognized, c.malformed) == (1, 0, 0)


@settings(max_examples=examples(100))
@given(before=st.lists(_line.filter(lambda r: r != "bad"), max_size=20))
def test_with_strict_the_events_before_a_malformed_line_come_before_its_error(
    before: list[str],
) -> None:
    lines = list(enumerate([*before, "bad", "5"], 1))
    runs = decoded_runs(iter(lines), _Decoder(), _counter(), "fmt", "x.log", True)  # type: ignore[arg-type]
    got: list[Any] = []
    with pytest.raises(RecompileDoctorError) as err:
        for run in runs:
            got.extend(run)
    assert err.value.line == len(before) + 1
    assert got == [ev for n, raw in lines[: len(before)] for ev in _Decoder().decode(n, raw).events]


def test_the_events_before_a_failing_read_come_before_its_error() -> None:
    def lines() -> Iterator[tuple[int, str]]:
        yield 1, "2"
        yield 2, "3"
        raise OSError("the disk went away")

    runs = decoded_runs(lines(), _Decoder(), _counter(), "fmt", "x.log", False)  # type: ignore[arg-type]
    assert next(runs) == ["ev1.0", "ev1.1", "ev2.0", "ev2.1", "ev2.2"]
    with pytest.raises(OSError, match="went away"):
        next(runs)


@settings(max_examples=examples(200))
@given(n=st.integers(0, 3 * RUN_MAX + 5))
def test_runs_of_cuts_events_into_runs(n: int) -> None:
    runs = list(runs_of(iter(range(n))))  # type: ignore[arg-type]
    _check_runs(runs)
    assert [x for r in runs for x in r] == list(range(n))


@settings(max_examples=examples(200))
@given(sizes=st.lists(st.integers(1, 9), max_size=10), skip=st.integers(0, 100))
def test_runs_after_leaves_out_the_first_events(sizes: list[int], skip: int) -> None:
    counter = itertools.count()
    runs: list[Any] = [[next(counter) for _ in range(k)] for k in sizes]
    flat = [x for r in runs for x in r]
    got = list(runs_after(iter(runs), skip))
    assert all(got)
    assert [x for r in got for x in r] == flat[skip:]


@pytest.mark.parametrize(
    "log",
    ["jax/growing_shape/run.log", "torch/batch_size/run.log", "tensorflow/growing_shape/run.log"],
)
def test_parse_log_is_its_runs_flattened(log: str) -> None:
    path = str(FIXTURES / log)
    c1, c2 = ParseCounter(path), ParseCounter(path)
    runs = list(parse_log_runs(path, c1))
    _check_runs(runs)
    assert [ev for r in runs for ev in r] == list(parse_log(path, c2))
    assert (c1.recognized, c1.unrecognized, c1.malformed, c1.format) == (
        c2.recognized,
        c2.unrecognized,
        c2.malformed,
        c2.format,
    )


def test_parse_log_left_early_closes_its_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN parse_log's events taken one at a time, WHEN the caller stops after the first,
    # THEN the runs behind it are closed then (not when collected)
    from recompile_doctor.parsers import logs

    closed: list[bool] = []
    real = logs.parse_log_runs

    def runs(*args: Any, **kwargs: Any) -> Iterator[Any]:
        try:
            yield from real(*args, **kwargs)
        finally:
            closed.append(True)

    monkeypatch.setattr(logs, "parse_log_runs", runs)
    events = logs.parse_log(str(FIXTURES / "jax/growing_shape/run.log"))
    next(events)
    assert closed == []
    events.close()
    assert closed == [True]
