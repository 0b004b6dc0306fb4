"""Two processes over one log give the one-process result.

GIVEN a log long enough for a worker (every fixture log repeated; generated logs with anchors
across chunk boundaries, CRLF, invalid UTF-8, very long lines), WHEN it is parsed by one
process and by two (the split anywhere), THEN both give the same events (sharing their
records the same way), the same counters and the same read statistics; the worker's part is
taken over for every log format; a failed worker, an abandoned parse and a process where
forking is unsafe all fall back to one process.
"""

from __future__ import annotations

import os
import threading
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from recompile_doctor import api
from recompile_doctor.errors import RecompileDoctorError
from recompile_doctor.parsers import (
    LOG_FORMATS,
    ParseCounter,
    _parallel,
    _reader,
    _scan,
    logs,
    parse_log,
)
from recompile_doctor.parsers.logs import records
from tests.test_fastpath import _fixture_logs
from tests.test_fastpath import logs as generated_logs

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def _workers_on(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    # small inputs get a worker too, and neither the machine's CPUs nor the threads other
    # tests left behind (a cluster's IO loop) decide
    if request.node.name != "test_forking_only_where_it_is_safe":
        monkeypatch.setattr(_parallel, "usable", lambda: True)
    monkeypatch.setattr(_parallel, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(_scan, "CHUNK_BYTES", 4096)  # the head does not take it all
    monkeypatch.delenv(_parallel.WORKERS_ENV, raising=False)


class Spy:
    """Counts the workers started and the parts taken over (per format)."""

    def __init__(self, mp: pytest.MonkeyPatch) -> None:
        self.workers = 0
        self.adopted: Counter[str] = Counter()
        start = _parallel.Worker.__init__
        adopt = logs._FastPart._adopt

        def counted_start(worker: _parallel.Worker, *a: Any) -> None:
            self.workers += 1
            start(worker, *a)

        def counted_adopt(
            part: logs._FastPart, got: Any, i: int, c: ParseCounter, fmt: Any
        ) -> None:
            self.adopted[fmt.name] += 1
            adopt(part, got, i, c, fmt)

        mp.setattr(_parallel.Worker, "__init__", counted_start)
        mp.setattr(logs._FastPart, "_adopt", counted_adopt)


def _run(path: Path, workers: bool, fmt: str | None = None, fold: bool = False) -> Any:
    os.environ[_parallel.WORKERS_ENV] = "" if workers else "1"
    try:
        c = ParseCounter(str(path))
        try:
            events = list(parse_log(str(path), c, log_format=fmt, fold=fold))
        except RecompileDoctorError as e:
            return ("error", str(e), c.read.lines)
    finally:
        os.environ.pop(_parallel.WORKERS_ENV, None)
    r = c.read
    shared = [i for i in range(1, len(events)) if events[i].record is events[i - 1].record]
    return (
        [repr(e) for e in events],
        shared,
        [repr(rec) for rec in records(events)],
        (c.format, c.recognized, c.unrecognized, c.malformed),
        (r.lines, r.bytes, r.compressed, r.encoding, r.truncated),
    )


def _repeated(src: Path, dst: Path, lines: int = 3000) -> Path:
    data = src.read_bytes()
    if not data.endswith(b"\n"):
        data += b"\n"
    times = max(2, lines // max(1, data.count(b"\n")))
    dst.write_bytes(data * times)
    return dst


PLAIN_FIXTURES = [p for p in _fixture_logs() if p.suffix != ".gz"]


@pytest.mark.parametrize("share", [0.15, 0.5, 0.85])
def test_two_processes_match_one_on_every_fixture(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, share: float
) -> None:
    monkeypatch.setattr(_parallel, "PARENT_SHARE", share)
    spy = Spy(monkeypatch)
    for i, src in enumerate(PLAIN_FIXTURES):
        path = _repeated(src, tmp_path / f"{i}.log")
        for fold in (False, True):
            one = _run(path, workers=False, fold=fold)
            assert _run(path, workers=True, fold=fold) == one, src
    assert spy.workers > len(PLAIN_FIXTURES)
    # the worker's part is taken over (not decoded again by the parent) for every format
    assert set(spy.adopted) >= {f.name for f in LOG_FORMATS}, spy.adopted


@settings(
    max_examples=int(os.environ.get("FASTPATH_EXAMPLES", "150")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    data=st.tuples(st.lists(generated_logs(), min_size=1, max_size=6), st.integers(1, 8)).map(
        lambda parts_times: b"\n".join(parts_times[0]) * parts_times[1]
    ),
    chunk=st.integers(64, 2048),
    fmt=st.sampled_from([None] + [f.name for f in LOG_FORMATS]),
    share=st.floats(0.0, 1.0),
    fold=st.booleans(),
)
def test_two_processes_match_one_on_generated_logs(
    tmp_path_factory: pytest.TempPathFactory,
    data: bytes,
    chunk: int,
    fmt: str | None,
    share: float,
    fold: bool,
) -> None:
    path = tmp_path_factory.mktemp("log") / "run.log"
    path.write_bytes(data)
    with pytest.MonkeyPatch.context() as mp:
        # a short head and small buffers: the split falls anywhere, lines cross buffers
        mp.setattr(logs, "SNIFF_LINES", 3)
        mp.setattr(logs, "SNIFF_MAX_LINES", 6)
        mp.setattr(_scan, "CHUNK_BYTES", chunk)
        mp.setattr(_scan, "MAX_LINE_BYTES", 50)
        mp.setattr(_reader, "MAX_LINE_BYTES", 50)
        mp.setattr(_parallel, "PARENT_SHARE", share)
        assert _run(path, True, fmt, fold) == _run(path, False, fmt, fold)


def _big_log(tmp_path: Path) -> Path:
    src = ROOT / "fixtures" / "jax" / "growing_shape" / "run.log"
    return _repeated(src, tmp_path / "big.log", lines=20_000)


def test_a_failed_worker_leaves_the_parent_to_read_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _big_log(tmp_path)
    one = _run(path, workers=False)

    def fail(*_a: Any) -> None:
        raise OSError("no space left on device")

    monkeypatch.setattr(_parallel.Worker, "_work", fail)
    spy = Spy(monkeypatch)
    assert _run(path, workers=True) == one
    assert spy.workers == 1 and not spy.adopted


def test_no_process_to_spare_leaves_the_parent_to_read_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _big_log(tmp_path)
    one = _run(path, workers=False)

    def no_fork() -> int:
        raise BlockingIOError("Resource temporarily unavailable")

    monkeypatch.setattr(_parallel.os, "fork", no_fork)
    assert _run(path, workers=True) == one


def test_states_that_never_meet_leave_the_parent_to_read_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _big_log(tmp_path)
    one = _run(path, workers=False)
    monkeypatch.setattr(_parallel, "checkpoint", lambda _d: object())  # never equal
    spy = Spy(monkeypatch)
    assert _run(path, workers=True) == one
    assert spy.workers == 1 and not spy.adopted


def test_an_abandoned_parse_stops_its_worker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _big_log(tmp_path)
    started: list[_parallel.Worker] = []
    start = _parallel.Worker.__init__

    def keep(worker: _parallel.Worker, *a: Any) -> None:
        start(worker, *a)
        started.append(worker)

    monkeypatch.setattr(_parallel.Worker, "__init__", keep)
    monkeypatch.setattr(_parallel.Worker, "_work", lambda *_a: threading.Event().wait(60))
    events = parse_log(str(path))
    while not started:
        next(events)
    [worker] = started
    assert os.waitpid(worker.pid, os.WNOHANG) == (0, 0)  # the worker runs
    events.close()
    with pytest.raises(ChildProcessError):  # stopped, and reaped
        os.waitpid(worker.pid, os.WNOHANG)


def test_the_report_is_the_same_with_two_processes(tmp_path: Path) -> None:
    path = _big_log(tmp_path)
    os.environ[_parallel.WORKERS_ENV] = "1"
    try:
        with api.analyze(str(path)) as rep:
            one = "".join(rep.iter_json())
    finally:
        del os.environ[_parallel.WORKERS_ENV]
    with api.analyze(str(path)) as rep:
        assert "".join(rep.iter_json()) == one


def test_forking_only_where_it_is_safe(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_parallel.threading, "active_count", lambda: 1)
    monkeypatch.setattr(_parallel.os, "sched_getaffinity", lambda _pid: {0, 1})
    assert _parallel.usable()
    monkeypatch.setattr(_parallel.os, "sched_getaffinity", lambda _pid: {0})
    assert not _parallel.usable()  # one CPU
    monkeypatch.setattr(_parallel.os, "sched_getaffinity", lambda _pid: {0, 1})
    monkeypatch.setenv(_parallel.WORKERS_ENV, "1")
    assert not _parallel.usable()
    monkeypatch.delenv(_parallel.WORKERS_ENV)
    monkeypatch.setattr(_parallel.threading, "active_count", lambda: 2)
    assert not _parallel.usable()  # another thread could hold a lock the worker needs
    monkeypatch.setattr(_parallel.threading, "active_count", lambda: 1)
    _parallel.one_process_per_input()  # a fleet pool's worker
    try:
        assert not _parallel.usable()
    finally:
        del os.environ[_parallel.WORKERS_ENV]


def test_events_survive_the_encoding() -> None:
    # every event of every fixture comes back equal, sharing its record as before
    n = shared = 0
    for path in PLAIN_FIXTURES:
        evs = list(parse_log(str(path)))
        items = []
        last = None
        for ev in evs:
            items.append(_parallel.encode(ev, last))
            last = ev.record
        back = []
        last = None
        for item in items:
            back.append(_parallel.decode(item, last))
            last = back[-1].record
        assert [repr(e) for e in back] == [repr(e) for e in evs], path
        for i in range(1, len(evs)):
            same = evs[i].record is not None and evs[i].record is evs[i - 1].record
            assert (back[i].record is not None and back[i].record is back[i - 1].record) == same
            shared += same
        n += len(evs)
    assert n > 1000 and shared > 10
