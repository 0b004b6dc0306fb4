"""The events' JSON text written by a second process while the analyses run: the report's
JSON is byte for byte the one it writes itself, whatever happens to that process."""

from __future__ import annotations

import os
import pickle
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

import pytest

from recompile_doctor import analyze
from recompile_doctor import events_json as ej
from recompile_doctor.model import Event, compilations_json, list_items_json
from recompile_doctor.parsers import _parallel
from recompile_doctor.timeline import spool
from tests.conftest import POPLAR_RUN, long_jax_log

# The tests fork the writer beside the test runner's own threads (pytest-xdist's IO thread),
# which Python 3.12 and later warn about: the product never forks a process with threads
pytestmark = pytest.mark.filterwarnings("ignore:This process:DeprecationWarning")


@pytest.fixture(autouse=True)
def _runner_threads_left_out(monkeypatch: pytest.MonkeyPatch) -> None:
    # the test runner's threads are not the analysis's: each test says whether it wants a
    # second process (WORKERS_ENV), or threads (test_no_second_process_beside_threads)
    monkeypatch.setattr(_parallel, "threads", lambda: 1)


class Usage(NamedTuple):
    """What ``shutil.disk_usage`` returns."""

    total: int
    used: int
    free: int


@pytest.fixture
def forking(monkeypatch: pytest.MonkeyPatch, own_tempdir: Path) -> Path:
    """A second process for 10 events or more, the spool past 50, temporary files in a
    folder of the test's own."""
    monkeypatch.setattr(ej, "MIN_EVENTS", 10)
    monkeypatch.setattr(ej, "PIECE", 64)  # (many pieces: characters split between them)
    monkeypatch.setattr(spool, "SPOOL_AFTER", 50)
    monkeypatch.setattr(spool, "CHUNK", 16)
    monkeypatch.setenv(_parallel.WORKERS_ENV, "2")
    return own_tempdir


def _written_ahead(events: list[Event]) -> str:
    """The text a second process wrote of ``events`` (it must have been started)."""
    ahead = ej.EventsText.start(events)
    assert ahead is not None
    try:
        pieces = ahead.pieces()
        assert pieces is not None
        return "".join(pieces)
    finally:
        ahead.close()


def _alone(log: Path) -> str:
    with analyze([str(log)]) as report:
        assert report.events_text is None
        return report.dumps()


def test_json_is_the_same_with_the_second_process(tmp_path: Path, forking: Path) -> None:
    causes: list[bool] = []
    for log in (long_jax_log(tmp_path, 20), POPLAR_RUN):
        # GIVEN the JSON a report writes of its events itself
        expected = _alone(log)
        # WHEN the events' text is written by a second process during the analyses
        with analyze([str(log)], events_json=True) as report:
            ahead = report.events_text
            assert ahead is not None
            got = report.dumps()
            # THEN that process wrote it, and the report is byte for byte the same
            assert ahead.done()
            assert got == expected
            assert report.dumps() == expected  # (the text can be read again)
            # AND as bytes, the events' text copied as the second process wrote it
            assert b"".join(report.iter_json_bytes()) + b"\n" == expected.encode("utf-8")
            # AND the compilations' text is the second process's, the analyses' causes put
            # in their places (the report's table is the timeline's, with its causes)
            comps = report.compilations
            written = ahead.compilation_pieces(comps, raw=True)
            assert written is not None
            assert b"".join(written) == "".join(compilations_json(comps)).encode("utf-8")
            causes += [c.cause is not None for c in comps]
            # (another sequence of the same compilations is not that table: written anew)
            assert ahead.compilation_pieces(list(comps), raw=True) is None
    assert os.listdir(forking) == []  # nameless files
    assert any(causes) and not all(causes)


def test_compilations_spliced_across_pieces_and_blocks_of_cuts(
    tmp_path: Path, forking: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN the compilations' text read back a few cuts and 64 bytes at a time (a cause's
    # place at a piece's first or last byte, blocks of cuts ending at the last compilation)
    from recompile_doctor import json_text

    log = long_jax_log(tmp_path, 20)
    expected = _alone(log)
    for cuts in (1, 3, 4):
        monkeypatch.setattr(json_text, "CUTS_READ", cuts)
        monkeypatch.setattr(ej, "_CUTS_HELD", cuts + 1)  # (written a few at a time)
        with analyze([str(log)], events_json=True) as report:
            ahead = report.events_text
            assert ahead is not None
            assert ahead.compilation_pieces(report.compilations, raw=True) is not None
            assert len(report.compilations) % 4 == 0  # (the last block of cuts is full)
            # THEN the report is the one written alone, as text and as bytes
            assert report.dumps() == expected
            assert b"".join(report.iter_json_bytes()) + b"\n" == expected.encode("utf-8")


def test_a_failing_writer_leaves_the_report_to_write_its_events(
    tmp_path: Path, forking: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN a writer that fails half way (it raises after writing something)
    log = long_jax_log(tmp_path, 20)
    expected = _alone(log)

    def broken(events: object, f: object, parent: int) -> None:
        os.write(f.fileno(), b'"half')  # type: ignore[attr-defined]
        raise OSError("disk full")

    monkeypatch.setattr(ej, "_write", broken)
    # WHEN the report is written
    with analyze([str(log)], events_json=True) as report:
        assert report.events_text is not None
        # THEN the writer's failure is seen and the report writes the events itself
        assert report.dumps() == expected
        assert not report.events_text.done()


def test_a_killed_writer_leaves_the_report_to_write_its_events(
    tmp_path: Path, forking: Path
) -> None:
    log = long_jax_log(tmp_path, 20)
    expected = _alone(log)
    with analyze([str(log)], events_json=True) as report:
        ahead = report.events_text
        assert ahead is not None and ahead._pid is not None
        os.kill(ahead._pid, signal.SIGKILL)
        assert report.dumps() == expected


def test_closing_the_report_stops_and_reaps_the_writer(tmp_path: Path, forking: Path) -> None:
    # GIVEN a writer still at work (it waits for a signal that never comes)
    log = long_jax_log(tmp_path, 20)
    report = analyze([str(log)], events_json=True)
    ahead = report.events_text
    assert ahead is not None
    pid = ahead._pid
    assert pid is not None
    # WHEN the report is closed before its JSON is written
    report.close()
    # THEN the writer is gone and reaped, its file closed, and the report has no text
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)
    assert ahead.pieces() is None
    assert os.listdir(forking) == []


def test_no_second_process_where_it_is_not_worth_it_or_not_safe(
    tmp_path: Path, forking: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = long_jax_log(tmp_path, 20)
    # few events
    monkeypatch.setattr(ej, "MIN_EVENTS", 10**9)
    with analyze([str(log)], events_json=True) as report:
        assert report.events_text is None
    # one process asked for
    monkeypatch.setattr(ej, "MIN_EVENTS", 10)
    monkeypatch.setenv(_parallel.WORKERS_ENV, "1")
    with analyze([str(log)], events_json=True) as report:
        assert report.events_text is None
    # no fork
    monkeypatch.setenv(_parallel.WORKERS_ENV, "2")

    def no_fork() -> int:
        raise OSError("no more processes")

    monkeypatch.setattr(os, "fork", no_fork)
    expected = _alone(log)
    with analyze([str(log)], events_json=True) as report:
        assert report.events_text is None
        assert report.dumps() == expected
    assert os.listdir(forking) == []


def test_a_copy_of_the_report_for_another_process_has_no_writer(
    tmp_path: Path, forking: Path
) -> None:
    log = long_jax_log(tmp_path, 20)
    with analyze([str(log)], events_json=True) as report:
        copy = pickle.loads(pickle.dumps(report))
        assert copy.events_text is None
        assert copy.dumps() == report.dumps()


def test_any_text_goes_through_unchanged(forking: Path) -> None:
    # GIVEN events whose text holds what UTF-8 cannot hold as it is (a lone surrogate),
    # characters of 2-4 bytes split between pieces, quotes and control characters
    events = [
        Event("compile-begin", "a.log", n, None, f'é€𝄞 "q" \t \udc80 {n}', detail={"k": "ü"})
        for n in range(1, 40)
    ]
    # THEN the text read back is the text the report would write
    assert _written_ahead(events) == "".join(list_items_json(events))


def test_few_events_of_long_lines_are_written_by_the_second_process(
    monkeypatch: pytest.MonkeyPatch, own_tempdir: Path
) -> None:
    # GIVEN fewer events than MIN_EVENTS, whose lines' text counts as many more (a
    # TORCH_TRACE record, a PyTorch/XLA block), and as many events of short lines
    monkeypatch.setenv(_parallel.WORKERS_ENV, "2")
    many = ej.MIN_EVENTS * ej.CHARS_PER_EVENT // 50
    long = [Event("compile-begin", "a.log", n, None, '"x" ' * (many // 4)) for n in range(50)]
    short = [Event("compile-begin", "a.log", n, None, "x") for n in range(50)]
    # THEN the first are written by a second process, the text the report would write
    assert ej.text_chars(long) == 50 * len(long[0].text)
    assert _written_ahead(long) == "".join(list_items_json(long))
    # and the others by the report itself
    assert ej.EventsText.start(short) is None


def test_the_report_s_events_count_their_lines_text_as_they_are_taken(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # GIVEN events spooled past their buffer, one coming too late for its place, and the
    # executable loads merged with them
    monkeypatch.setattr(spool, "SPOOL_AFTER", 8)
    monkeypatch.setattr(spool, "CHUNK", 4)
    s = spool.EventSpool()
    events = [Event("compile-begin", "a.log", n, None, "é" * n) for n in range(10, 60)]
    for e in events:
        s.append(e)
    late = Event("compile-end", "a.log", 1, None, "late line")
    s.append(late)
    assert s.late is not None
    loads = [Event("executable-load", "a.log", 12, None, "a load")]
    got = spool.ReportEvents(s, loads, {"a.log": 0})
    # THEN the characters counted are those of the events read back
    assert got.text_chars == sum(len(e.text) for e in got) == ej.text_chars(got)
    assert got.text_chars == sum(len(e.text) for e in [*events, late, *loads])
    got.close()


def test_the_writer_stops_when_its_parent_is_gone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN a writer whose parent is some other process (here: one already ended)
    monkeypatch.setattr(ej, "PIECE", 4096)
    events = [Event("compile-begin", "a.log", n, None, "x" * 100) for n in range(1, 2000)]
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    with tempfile.TemporaryFile(dir=tmp_path) as f:
        ej._write(events, f, int(gone.stdout))
        # THEN it stopped at the first piece: no one would read the rest
        f.seek(0)
        assert len(f.read()) == 0


def test_the_command_line_writes_json_with_the_second_process(
    tmp_path: Path, forking: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    from tests.conftest import run_cli

    log = str(long_jax_log(tmp_path, 20))
    expected = _alone(Path(log))
    # GIVEN the command line's analyze, watched for the writers it starts
    started: list[ej.EventsText] = []
    start = ej.EventsText.start

    def watched(events: object, *rest: object) -> ej.EventsText | None:
        got = start(events, *rest)  # type: ignore[arg-type]
        if got is not None:
            started.append(got)
        return got

    monkeypatch.setattr(ej.EventsText, "start", staticmethod(watched))
    # WHEN it writes JSON to stdout and to a file, and text
    code, out, err = run_cli("analyze", log, "--format", "json", capsys=capsys)
    assert code == 0 and err == ""
    out_file = tmp_path / "r.json"
    assert run_cli("analyze", log, "-o", str(out_file), capsys=capsys)[0] == 0
    code, text, _ = run_cli("analyze", log, capsys=capsys)
    # THEN the two JSON outputs came from a second process and are the report's own JSON;
    # the text report started none
    assert len(started) == 2 and all(w.done() for w in started)
    assert out == expected
    assert out_file.read_text(encoding="utf-8") == expected
    assert code == 0 and text.startswith("recompile-doctor:")
    assert os.listdir(forking) == []


def test_no_second_process_when_the_text_could_fill_the_temporary_folder(
    tmp_path: Path, forking: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import shutil

    log = long_jax_log(tmp_path, 20)
    with analyze([str(log)]) as report:
        n = len(report.events)
        text = ej.text_chars(report.events)
        compilations = len(report.compilations)
    # GIVEN a temporary folder with room for the text of fewer events than the report has
    # (and of its compilations)
    room = n * ej.EVENT_BYTES + 2 * text + compilations * ej.COMPILATION_BYTES  # (half)

    def usage(free: int) -> Callable[[str], Usage]:
        return lambda path: Usage(free * 4, free * 3, free)

    monkeypatch.setattr(shutil, "disk_usage", usage(room))
    # THEN no second process is started, and the report writes its events itself
    expected = _alone(log)
    with analyze([str(log)], events_json=True) as report:
        assert report.events_text is None
        assert report.dumps() == expected
    # and with room for twice the text, one is
    monkeypatch.setattr(shutil, "disk_usage", usage(room * 2))
    with analyze([str(log)], events_json=True) as report:
        assert report.events_text is not None
        assert report.dumps() == expected


def test_no_second_process_beside_threads(
    tmp_path: Path, forking: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN a process running another thread (a library's pool: threading may not know it)
    log = long_jax_log(tmp_path, 20)
    expected = _alone(log)
    monkeypatch.setattr(_parallel, "threads", lambda: 3)
    # THEN the report writes its events itself, the same text
    with analyze([str(log)], events_json=True) as report:
        assert report.events_text is None
        assert report.dumps() == expected


def test_text_closed_while_read_is_an_error_not_other_bytes(tmp_path: Path, forking: Path) -> None:
    # GIVEN a report's JSON being read piece by piece (small pieces, a small spool)
    log = long_jax_log(tmp_path, 20)
    report = analyze([str(log)], events_json=True)
    assert report.events_text is not None
    pieces = report.iter_json()
    read = ""
    while '"events": ' not in read:
        read += next(pieces)
    read += next(pieces) + next(pieces) + next(pieces)  # ("[", then the writer's text)
    assert '"kind": ' in read.split('"events": ')[1] and report.events_text.done()
    # WHEN the report is closed half way and files are opened meanwhile (their descriptors
    # may be the closed files' numbers)
    report.close()
    others = [open(log, "rb") for _ in range(4)]  # noqa: SIM115
    try:
        # THEN reading on fails, rather than giving another file's bytes
        with pytest.raises(ValueError, match="closed"):
            for _ in pieces:
                pass
    finally:
        for f in others:
            f.close()


def test_the_events_text_is_the_generic_lists_text_for_every_fixture() -> None:
    # GIVEN the report of every fixture run, and events of any value their fields may hold
    # (no time, a hash, a detail read back as a mapping, keys other than strings)
    from types import MappingProxyType

    from recompile_doctor import analyze
    from recompile_doctor.model import events_json

    fixtures = Path(__file__).resolve().parent.parent / "fixtures"
    odd = [
        Event("k", "a.log", 1, None, "t"),
        Event("k", "a.log", 2, 1.5, "t", "m", "h", MappingProxyType({"a": [1, None]})),
        Event("k", "a.log", 3, float("nan"), "t", None, None, {1: True, "b": {"c": ()}}),
    ]
    lists = [odd, odd[:1]]
    for log in sorted(fixtures.glob("**/run.log")):
        with analyze(str(log)) as rep:
            lists.append(list(rep.events))
    assert sum(map(len, lists)) > 500
    for events in lists:
        # THEN the events' own path writes what the generic one writes
        assert "".join(events_json(events)) == "".join(list_items_json(events))
