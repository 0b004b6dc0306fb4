"""Folding what the timeline ignores changes nothing in the report.

``analyze`` asks the Poplar decoder to leave out the events the timeline has no use for
(``parse_log(fold=True)``): a step (``Execute M``) right after a step of the same module
with nothing the timeline uses in between, and the start of a load.  On a long run those are
most of the decoded lines.

GIVEN every Poplar log fixture, and generated logs mixing steps of two modules, loads,
compilations, cache lines, MPI ranks, invalid stamps (and stamps that only look like
stamps), lines without a stamp, colours and skipped lines, WHEN each is analysed with and without folding (line by line and by the fast
path in small blocks), THEN the reports are identical, and folding does leave events out.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import poplar_prefix, write_poplar_log
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from recompile_doctor import api
from recompile_doctor.parsers import ParseCounter, _scan, parse_log, poplar_decoder
from recompile_doctor.parsers.poplar_decoder import PoplarDecoder
from tests.conftest import examples

ROOT = Path(__file__).resolve().parent.parent
POPLAR_LOGS = sorted(
    p
    for d in ("fixtures/poplar", "fixtures/simulated")
    for p in (ROOT / d).rglob("*")
    if p.is_file() and (p.suffix == ".log" or p.name.endswith(".log.gz"))
)

MESSAGES = (
    "Execute a_inference_train_step_806__XlaMustCompile_true",
    "Execute a_inference_train_step_806__XlaMustCompile_true",
    "Execute a_inference_test_step_37__XlaMustCompile_true",
    "Starting phase: Loading executable",
    "Ending phase: Loading executable (duration 560 ms; diff RSS: 0.586426 MB)",
    "Begin XLA compilation: a_inference_train_step_806__XlaMustCompile_true  "
    "(Hash: 0x9a3c5e21d04b7f11) for ordinal  0",
    "End XLA compilation: a_inference_train_step_806__XlaMustCompile_true (Hash: 0x5be1c0de)",
    "Couldn't find /tmp/cache/1f0e2d3c4b5a697.poplar_exec in executable cache",
    "Poplar version: 3.1.0 (e12d5f9f01) Poplar package: 9c103dc348",
    "stream copy of 4096 bytes",  # no anchor: a skipped line
    "Ending phase: Loading executable",  # no duration: timed from the start of the load
)


def _report(path: Path, fold: bool, monkeypatch: pytest.MonkeyPatch, chunk: int | None) -> str:
    with monkeypatch.context() as mp:
        if not fold:  # (and without the remembered splits of steps: the full reading)
            mp.setattr(PoplarDecoder, "fold_repeats", lambda self: None)
            mp.setattr(poplar_decoder, "_SPLIT_CHARS", -1)  # (none remembered)
            poplar_decoder._SPLIT.clear()
        if chunk is not None:
            mp.setattr(_scan, "CHUNK_BYTES", chunk)
        else:
            mp.setenv("RECOMPILE_DOCTOR_PLAIN", "1")
        return api.analyze([str(path)]).dumps()


@pytest.mark.parametrize("path", POPLAR_LOGS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_poplar_fixture_gives_the_same_report_folded(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert _report(path, True, monkeypatch, None) == _report(path, False, monkeypatch, None)


line = st.tuples(
    # prefix kind (with an invalid stamp, none, and a stamp that only looks like one)
    st.sampled_from([0, 1, 2, 5, 6, 7]),
    st.integers(0, 300),  # seconds
    st.integers(0, len(MESSAGES) - 1),
    st.sampled_from(["", "", "", "\x1b[32m", "[1,0]<stdout>:", "[0,0]<stdout>:"]),
)


@settings(
    max_examples=examples(int(os.environ.get("FOLD_EXAMPLES", "60"))),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(lines=st.lists(line, min_size=1, max_size=40), chunk=st.sampled_from([None, 256, 700]))
# a repeated step whose stamp only looks like one; a load timed from its folded start
@example(lines=[(0, 1, 0, ""), (7, 2, 0, ""), (0, 3, 0, "")], chunk=None)
@example(
    lines=[(1, 1, 3, ""), (1, 2, 10, ""), (0, 3, 2, ""), (1, 4, 3, ""), (1, 9, 10, "")], chunk=None
)
def test_generated_logs_give_the_same_report_folded(
    lines: list[tuple[int, int, int, str]],
    chunk: int | None,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    path = write_poplar_log(tmp_path / "run.log", lines, MESSAGES)
    assert _report(path, True, monkeypatch, chunk) == _report(path, False, monkeypatch, None)


def test_folding_leaves_out_repeated_steps_and_load_starts_but_counts_their_lines(
    tmp_path: Path,
) -> None:
    # GIVEN a steady run: a compilation, then steps, each few steps a load
    lines = [
        poplar_prefix(0, 0) + MESSAGES[8],
        poplar_prefix(0, 1) + MESSAGES[5],
        poplar_prefix(0, 5) + MESSAGES[6],
    ]
    for i in range(30):
        lines.append(poplar_prefix(0, 10 + i) + MESSAGES[0])
        if i % 10 == 9:
            lines += [
                poplar_prefix(1, 10 + i) + MESSAGES[3],
                poplar_prefix(1, 11 + i) + MESSAGES[4],
            ]
    path = tmp_path / "run.log"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    counts = {}
    kinds = {}
    for fold in (False, True):
        c = ParseCounter(str(path))
        evs = list(parse_log(str(path), c, fold=fold))
        counts[fold] = (c.recognized, c.unrecognized, c.malformed)
        kinds[fold] = [type(e).__name__ for e in evs]
    # WHEN parsed with folding, THEN every line is still counted as recognized
    assert counts[True] == counts[False] == (len(lines), 0, 0)
    # and only the repeated steps and the load starts are left out: each step after a load
    # stays (it is the step the load is attributed to)
    assert kinds[False].count("Executed") == 30
    assert kinds[True].count("Executed") == 3
    assert kinds[True].count("ExecutableLoaded") == kinds[False].count("ExecutableLoaded") == 3
    assert kinds[False].count("FrameworkNote") == 3
    assert kinds[True].count("FrameworkNote") == 0


def test_the_fast_path_folds_repeated_steps_unread_and_changes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """GIVEN a steady run (steps of two modules, loads between them) with repeated steps
    whose stamps are odd: a date that does not exist, digits that are not ASCII, another
    clock's stamp before the same text, a line ending in CR, a step past midnight,
    and a load whose start has no stamp (it takes the time of the folded step before it),
    WHEN it is analysed by the fast path (small blocks) with folding, THEN the report is
    the full reading's, the repeated steps were folded from their bytes without being
    decoded, and the odd ones went the long way (the invalid date stays malformed)."""
    tf, step = "I tensorflow/x.cc:1109] ", MESSAGES[0]
    lines = [poplar_prefix(0, 0) + MESSAGES[8], poplar_prefix(0, 1) + MESSAGES[5]]
    lines += [poplar_prefix(0, 5) + MESSAGES[6]]
    for i in range(600):  # (past the 400 lines format detection reads line by line)
        lines.append(poplar_prefix(0, 10 + i) + (step if i % 10 < 8 else MESSAGES[2]))
        if i % 10 == 9:
            lines += [
                poplar_prefix(1, 10 + i) + MESSAGES[3],
                poplar_prefix(1, 11 + i) + MESSAGES[4],
            ]
    odd = [
        f"2023-02-30 10:00:00.517107: {tf}{step}",  # no 30 February: malformed
        f"2023-04-26 10:00:0\u0661.517107: {tf}{step}",  # an Arabic-Indic digit
        f"2023-04-26T10:00:02.517107: {tf}{step}",  # an ISO-shaped stamp, the same text
        f"2023-04-26 10:00:03.517107: {tf}{step}\r",  # CRLF
        f"2023-04-26 23:59:59.517107: {tf}{step}",
        f"2023-04-27 00:00:01.517107: {tf}{step}",  # past midnight
    ]
    # a load whose start has no stamp of its own: it takes the time of the folded step
    # before it, and its end (without a duration) is timed from there
    at = 450
    lines[at:at] = [
        poplar_prefix(0, 455) + step,
        poplar_prefix(0, 457) + step,
        poplar_prefix(6, 0) + MESSAGES[3],
        poplar_prefix(1, 460) + MESSAGES[10],
    ]
    for k, text in enumerate(odd):
        at = 500 + 7 * k
        # (a load after each, its start unstamped: the time the odd line gave, if any)
        lines[at:at] = [
            poplar_prefix(0, 700 + k) + step,
            text,
            poplar_prefix(6, 0) + MESSAGES[3],
            poplar_prefix(1, 710 + k) + MESSAGES[10],
        ]
    path = tmp_path / "run.log"
    path.write_bytes(("\n".join(lines) + "\n").encode("utf-8"))

    folded: list[bool] = []
    decoded: list[str] = []
    fold_line, decode = PoplarDecoder.fold_line, PoplarDecoder.decode
    with monkeypatch.context() as mp:
        mp.setattr(
            PoplarDecoder, "fold_line", lambda s, b: folded.append(fold_line(s, b)) or folded[-1]
        )
        mp.setattr(
            PoplarDecoder, "decode", lambda s, n, raw: decoded.append(raw) or decode(s, n, raw)
        )
        fast = _report(path, True, monkeypatch, 300)
    assert fast == _report(path, False, monkeypatch, None)
    assert '"malformed": 1' in fast
    # most repeated steps never reached decode; the odd ones did
    assert folded.count(True) >= 200
    assert len(decoded) < len(lines) - 200
    assert odd[0] in decoded and odd[2] in decoded and odd[3].rstrip("\r") in decoded


# (its reading without shortcuts replaces Clock.overrides: compiled callers call their own)
@pytest.mark.pure_only
@settings(
    max_examples=examples(int(os.environ.get("FOLD_EXAMPLES", "60"))),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    lines=st.lists(
        st.tuples(
            st.integers(0, 7),  # every prefix kind, the clocks mixed
            st.integers(0, 2 * 86400),  # across midnight, in any order
            st.sampled_from([0, 0, 0, 1, 2, 3, 4, 9, 10]),  # mostly repeated steps
            st.sampled_from(["", "", "", "\x1b[32m", "[1,0]<stdout>:"]),
        ),
        min_size=1,
        max_size=40,
    ),
    chunk=st.sampled_from([None, 256, 700]),
)
# a load started on an unstamped line after a folded step: it starts at that step's time
@example(lines=[(0, 10, 0, ""), (0, 20, 0, ""), (6, 0, 3, ""), (1, 30, 10, "")], chunk=None)
def test_folded_steps_give_the_full_reading_whatever_the_clocks(
    lines: list[tuple[int, int, int, str]],
    chunk: int | None,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """GIVEN repeated steps between lines of every clock, crossing midnight, WHEN folded
    (a repeated step's stamp read only when a later line needs it), THEN the report is that
    of a reading of every line's stamp, with nothing folded or remembered."""
    from recompile_doctor.parsers._prefixes import Clock

    path = write_poplar_log(tmp_path / "run.log", lines, MESSAGES)
    folded = _report(path, True, monkeypatch, chunk)
    with monkeypatch.context() as mp:
        mp.setattr(Clock, "overrides", lambda self, cur, before: False)
        full = _report(path, False, monkeypatch, None)
    assert folded == full
