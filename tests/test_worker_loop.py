"""A worker's loop over its part of a log (``_parallel.Team._work``): the lines decoded in
runs by one call (``_decoding.decode_into``, compiled in a compiled build) up to the next
line after which the worker has something else to do (``_parallel._next_stop``).

GIVEN the line-by-line rules the loop had (look whether the parent is still there every
``PARENT_CHECK_EVERY`` lines, a checkpoint after each of the first ``CHECKPOINTS_DENSE``
lines and every ``CHECKPOINT_EVERY``-th up to ``CHECKPOINTS``, publish them at
``CHECKPOINTS``, a late checkpoint when it is due), WHEN the stops are asked for from any
point, THEN each is the first line past it at which one of those rules acts; and GIVEN
lines and a decoder, WHEN they are decoded in runs of any lengths, THEN the counts, the
events, the keys missed and their lines are those of decoding them one at a time.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from types import SimpleNamespace
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from recompile_doctor.events import TypedEvent
from recompile_doctor.parsers import _parallel
from recompile_doctor.parsers._decoding import decode_into
from recompile_doctor.parsers._format import Decoded
from tests.conftest import examples


def _acts(d: int, late_next: int) -> bool:
    """Whether the loop does anything besides decoding after its ``d``-th line (the rules
    as the loop wrote them line by line)."""
    p = _parallel
    return (
        d % p.PARENT_CHECK_EVERY == 0
        or d <= p.CHECKPOINTS_DENSE
        or (d <= p.CHECKPOINTS and d % p.CHECKPOINT_EVERY == 0)
        or d == p.CHECKPOINTS
        or (d > p.CHECKPOINTS and d >= late_next)
    )


@settings(max_examples=examples(300))
@given(
    decoded=st.one_of(
        st.integers(0, 12_000),
        st.sampled_from([0, 31, 32, 33, 63, 64, 4095, 4096, 4991, 4992, 4999, 5000, 5001]),
    ),
    late_ahead=st.integers(-50, 9_000),
)
def test_each_stop_is_the_first_line_at_which_the_loop_acts(decoded: int, late_ahead: int) -> None:
    late = SimpleNamespace(next=max(_parallel.CHECKPOINTS + 1, decoded + late_ahead))
    stop = _parallel._next_stop(decoded, late)  # type: ignore[arg-type]
    assert stop > decoded
    assert _acts(stop, late.next)
    assert not any(_acts(d, late.next) for d in range(decoded + 1, stop))


class _Decoder:
    """Decodes "line N" into one event per N % 3 and misses a key on every fifth line;
    a line "bad" is malformed, "skip" unrecognized."""

    def __init__(self, missed: list[tuple[object, ...]]) -> None:
        self.missed = missed

    def decode(self, lineno: int, raw: str) -> Decoded:
        if raw == "bad":
            return Decoded("malformed", (), "bad")
        if raw == "skip":
            return Decoded("unrecognized")
        if lineno % 5 == 0:
            self.missed.append(("table", lineno))
        n = int(raw.split()[1]) % 3
        events: Any = tuple(f"ev{lineno}.{i}" for i in range(n))  # (stand-ins: strings)
        return Decoded("recognized", events)


class _Sink:
    def __init__(self) -> None:
        self.items: list[Any] = []

    def add(self, events: Iterable[TypedEvent]) -> None:
        self.items.extend(events)

    def missed(self, line: int, keys: list[tuple[object, ...]]) -> None:
        self.items.append(("missed", line, list(keys)))


def _lines(n: int) -> Iterator[tuple[int, str]]:
    for i in range(1, n + 1):
        yield i * 2, "bad" if i % 11 == 0 else "skip" if i % 7 == 0 else f"line {i}"


def _decoded_in_runs(n: int, runs: list[int]) -> tuple[Any, ...]:
    missed: list[tuple[object, ...]] = []
    decoder, sink = _Decoder(missed), _Sink()
    c = SimpleNamespace(recognized=0, unrecognized=0, malformed=0)
    lines = _lines(n)
    done, lasts = 0, []
    for most in [*runs, n + 1]:  # (the last run: whatever is left)
        got, last = decode_into(lines, decoder, c, sink, missed, most)  # type: ignore[arg-type]
        assert got <= max(most, 0)
        assert got == most or got == n - done or most <= 0
        done += got
        lasts.append(last if got else None)
        if done == n:
            break
    assert done == n
    assert missed == []
    return (c.recognized, c.unrecognized, c.malformed), sink.items, [x for x in lasts if x]


@settings(max_examples=examples(200))
@given(n=st.integers(0, 60), runs=st.lists(st.integers(-1, 9), max_size=12))
def test_lines_decoded_in_runs_are_those_decoded_one_at_a_time(n: int, runs: list[int]) -> None:
    counts, items, lasts = _decoded_in_runs(n, runs)
    one_counts, one_items, _ = _decoded_in_runs(n, [1] * n)
    assert (counts, items) == (one_counts, one_items)
    # each run ends on the line it says it ended on
    assert all(last % 2 == 0 and 0 < last <= 2 * n for last in lasts)


def test_a_run_counts_writes_the_keys_missed_before_the_events_and_stops_where_told() -> None:
    missed: list[tuple[object, ...]] = []
    decoder, sink = _Decoder(missed), _Sink()
    c = SimpleNamespace(recognized=0, unrecognized=0, malformed=0)
    lines = _lines(12)
    assert decode_into(lines, decoder, c, sink, missed, 0) == (0, -1)  # type: ignore[arg-type]
    assert decode_into(lines, decoder, c, sink, missed, 3) == (3, 6)  # type: ignore[arg-type]
    assert next(lines) == (8, "line 4")  # (left where it stopped: the next call goes on)
    assert decode_into(lines, decoder, c, sink, missed, 100) == (8, 24)  # type: ignore[arg-type]
    assert (c.recognized, c.unrecognized, c.malformed) == (9, 1, 1)
    # line 10 (the fifth) missed a key: written with its number, before its two events
    at = sink.items.index(("missed", 10, [("table", 10)]))
    assert sink.items[at + 1 : at + 3] == ["ev10.0", "ev10.1"]
    assert missed == []


def test_a_recording_table_answers_held_keys_and_records_the_others() -> None:
    # GIVEN a worker's recording dictionary holding its own entries (one of them None) and
    # an inherited one from the lines before its part
    from recompile_doctor.parsers._checkpoint import _MissDict

    missed: list[tuple[object, ...]] = []
    d = _MissDict({"own": 1, "none": None}, "_table", missed, {"old": 7})
    # WHEN held keys are asked for, THEN they are answered and nothing is recorded
    assert d.get("own") == 1 and d["own"] == 1 and "own" in d
    assert d.get("none", 5) is None and d["none"] is None and "none" in d
    assert missed == []
    # WHEN a missing key is asked for, THEN the default (or KeyError), and it is recorded
    assert d.get("gone", 5) == 5 and "gone" not in d
    try:
        d["gone"]
    except KeyError:
        pass
    else:
        raise AssertionError("a missing key was found")
    assert missed == [("_table", "gone")] * 3
    # WHEN an inherited key is first asked for, THEN it is the worker's own from then on,
    # recorded once with its value's state
    missed.clear()
    assert d.get("old") == 7 and d["old"] == 7 and "old" in d
    assert len(missed) == 1 and missed[0][:2] == ("_table", "old")
