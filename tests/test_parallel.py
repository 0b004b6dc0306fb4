"""Several processes over one log give the one-process result.

GIVEN a log long enough for workers (every fixture log repeated; generated logs with anchors
across chunk boundaries, CRLF, invalid UTF-8, very long lines), WHEN it is parsed by one
process and by two to four (the parts split anywhere), THEN all give the same events (sharing
their records the same way), the same counters and the same read statistics; the workers'
parts are taken over for every log format, and workers hand over to each other; gzip logs
(cut short, of several members) alike; a failed
worker (first, in the middle), no process to spare, states that never meet, an abandoned
parse and a process where forking is unsafe all fall back to fewer processes.
"""

from __future__ import annotations

import _thread
import dataclasses
import gzip
import os
import re
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from recompile_doctor import api
from recompile_doctor.compiled_modules import source_path
from recompile_doctor.errors import RecompileDoctorError
from recompile_doctor.parsers import (
    LOG_FORMATS,
    ParseCounter,
    _event_codec,
    _parallel,
    _reader,
    _scan,
    logs,
    parse_log,
)
from recompile_doctor.parsers._checkpoint import checkpoint
from recompile_doctor.parsers.jax_detect import JAX
from recompile_doctor.parsers.logs import records
from tests.conftest import benchmark_script, examples, limit_line_bytes, poplar_prefix
from tests.test_fastpath import FIXTURES, _fixture_logs
from tests.test_fastpath import logs as generated_logs

ROOT = Path(__file__).resolve().parent.parent

# The tests fork whatever threads earlier tests left running (a cluster's IO loop), which
# Python 3.12 and later warn about (usable() itself never forks a process with threads)
pytestmark = pytest.mark.filterwarnings("ignore:This process:DeprecationWarning")

#: the processes usable() allows in the run under way
_ALLOWED = [1]


@pytest.fixture(autouse=True)
def _workers_on(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    # small inputs get workers too, and neither the machine's CPUs nor the threads other
    # tests left behind (a cluster's IO loop) decide: each run says how many processes
    if not request.node.name.startswith(("test_forking_only_", "test_threads_")):
        monkeypatch.setattr(_parallel, "usable", lambda: _ALLOWED[0])
    small_parts(monkeypatch)


def small_parts(monkeypatch: pytest.MonkeyPatch) -> None:
    """Small inputs split into parts, a worker's events handed over in many records."""
    monkeypatch.setattr(_reader, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(_parallel, "PART_MIN_BYTES", 1)
    monkeypatch.setattr(_scan, "CHUNK_BYTES", 4096)  # the head does not take it all
    monkeypatch.setattr(_event_codec, "BATCH", 16)  # many records: taken while written


def _share(mp: pytest.MonkeyPatch, share: float) -> None:
    """The parent's share of the log, whatever its format's decoder says."""
    mp.setattr(_parallel, "share_for", lambda _decoder: share)


class Spy:
    """Counts the workers started, the parts taken over (per format) and the chains of
    more than one part."""

    def __init__(self, mp: pytest.MonkeyPatch) -> None:
        self.workers = 0
        self.adopted: Counter[str] = Counter()
        self.chained = 0
        start = _parallel.Team.__init__
        adopt = logs._FastPart._adopt

        def counted_start(team: _parallel.Team, *a: Any) -> None:
            start(team, *a)
            self.workers += sum(m is not None for m in team.members)

        def counted_adopt(part: logs._FastPart, chain: Any, c: ParseCounter, fmt: Any) -> None:
            self.adopted[fmt.name] += 1
            self.chained += len(chain) > 1
            adopt(part, chain, c, fmt)

        mp.setattr(_parallel.Team, "__init__", counted_start)
        mp.setattr(logs._FastPart, "_adopt", counted_adopt)


def _run(path: Path, processes: int, fmt: str | None = None, fold: bool = False) -> Any:
    _ALLOWED[0] = processes
    try:
        c = ParseCounter(str(path))
        try:
            events = list(parse_log(str(path), c, log_format=fmt, fold=fold))
        except RecompileDoctorError as e:
            return ("error", str(e), c.read.lines)
    finally:
        _ALLOWED[0] = 1
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


#: (processes, the parent's share) and whether the events are folded: the even fixtures are
#: read the first way, the odd ones the second (every format gets both)
WAYS = [
    (False, [(2, 0.15), (4, 0.5)]),
    (True, [(2, 0.6), (3, 0.3)]),
]


#: the fixtures by folder (a stack's), each with its place among all (which way it is read)
FIXTURE_GROUPS: dict[str, list[tuple[int, Path]]] = {}
for _i, _src in enumerate(PLAIN_FIXTURES):
    FIXTURE_GROUPS.setdefault(_src.relative_to(FIXTURES).parts[0], []).append((_i, _src))


#: the stacks whose fixtures are also read gzipped: compression is the reader's, below the
#: lines a decoder sees, so every stack is read plain and a few gzipped (pairwise: Poplar's
#: real captures, TensorFlow's takeover on counts, PyTorch/XLA's blocks), which halves the
#: dearest test of the suite; the gzip reader's own cases are the tests after this one
GZIPPED_GROUPS = ("poplar", "ptxla", "tensorflow")


@pytest.mark.parametrize(
    ("gzipped", "group"),
    [(False, g) for g in sorted(FIXTURE_GROUPS)] + [(True, g) for g in GZIPPED_GROUPS],
    ids=lambda v: str(v),
)
def test_several_processes_match_one_on_every_fixture(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, gzipped: bool, group: str
) -> None:
    # GIVEN every fixture log of a stack's folder repeated (and gzipped: workers decompress
    # up to their parts)
    spy = Spy(monkeypatch)
    formats = set()
    for i, src in FIXTURE_GROUPS[group]:
        path = _repeated(src, tmp_path / f"{i}.log", lines=2000)
        if gzipped:
            path = path.with_suffix(".log.gz")
            path.write_bytes(gzip.compress((tmp_path / f"{i}.log").read_bytes(), 1))
        fold, ways = WAYS[i % 2]
        started = spy.workers
        one = _run(path, 1, fold=fold)
        assert spy.workers == started  # (the reference is one process)
        assert one[-1][2] is gzipped  # (read as gzip, or not)
        formats.add(one[3][0])
        for processes, share in ways:
            _share(monkeypatch, share)
            assert _run(path, processes, fold=fold) == one, (src, processes, share)
    # (each read by two to four processes after the one: one to three workers each time)
    assert spy.workers >= len(FIXTURE_GROUPS[group]) * 3
    # the workers' parts are taken over (not decoded again) for every format, and workers
    # hand over to the workers after them
    assert set(spy.adopted) >= formats - {"unknown"}, spy.adopted
    assert spy.chained > 0


def test_the_fixtures_read_by_several_processes_are_of_every_format() -> None:
    # (the test above takes over the parts of the formats of its fixtures: all of them)
    found = set()
    for group in FIXTURE_GROUPS.values():
        for _, src in group:
            c = ParseCounter(str(src))
            list(parse_log(str(src), c))
            found.add(c.format)
    assert found >= {f.name for f in LOG_FORMATS}, found


@pytest.mark.parametrize("cut", [0.03, 0.3, 0.7, 0.97, -8])
def test_a_gzip_log_ending_early_is_read_as_one_process_reads_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cut: float
) -> None:
    # GIVEN a gzipped log cut short (before the first split, in a worker's part, near the
    # end, in its trailer): its trailer is garbage or gone, and the stream breaks
    data = gzip.compress(_big_log(tmp_path).read_bytes(), compresslevel=1)
    n = int(len(data) * cut) if cut > 0 else len(data) + int(cut)
    path = tmp_path / "cut.log.gz"
    path.write_bytes(data[:n])
    one = _run(path, 1)
    assert one[-1][-1] is not None  # (one process saw the break)
    # THEN several processes read the same lines, events and the same break
    for processes in (2, 3):
        assert _run(path, processes) == one


@pytest.mark.parametrize("cut", [0.5, 0.8, 0.95])
def test_a_worker_meeting_the_break_of_a_gzip_log_leaves_it_to_the_reader_before(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cut: float
) -> None:
    # GIVEN a gzipped log cut short whose last bytes happen to read as the size of its text
    # (so parts are placed over the whole text: the break falls in a worker's part)
    text = _big_log(tmp_path).read_bytes()
    data = gzip.compress(text, compresslevel=1)
    path = tmp_path / "cut.log.gz"
    path.write_bytes(data[: int(len(data) * cut)] + len(text).to_bytes(4, "little"))
    one = _run(path, 1)
    assert one[-1][-1] is not None
    spy = Spy(monkeypatch)
    # THEN workers start, the one that meets the break fails, and whoever reads on from
    # the part before reads to the break: the one-process result
    assert _run(path, 2) == one
    assert _run(path, 3) == one
    assert spy.workers >= 2


def test_a_gzip_log_of_several_members_is_read_as_one_process_reads_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN two gzip members one after the other (``cat a.gz b.gz``): the trailer tells the
    # size of the last member only, less than the text
    data = _big_log(tmp_path).read_bytes()
    half = data.index(b"\n", len(data) // 3) + 1
    path = tmp_path / "two.log.gz"
    path.write_bytes(gzip.compress(data[:half]) + gzip.compress(data[half:]))
    spy = Spy(monkeypatch)
    # THEN the parts are placed by that size, and the result is one process's
    assert _run(path, 2) == _run(path, 1)
    assert spy.workers == 1


@settings(
    max_examples=examples(int(os.environ.get("FASTPATH_EXAMPLES", "150"))),
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
    processes=st.integers(2, 4),
    gzipped=st.booleans(),
)
def test_several_processes_match_one_on_generated_logs(
    tmp_path_factory: pytest.TempPathFactory,
    data: bytes,
    chunk: int,
    fmt: str | None,
    share: float,
    fold: bool,
    processes: int,
    gzipped: bool,
) -> None:
    path = tmp_path_factory.mktemp("log") / "run.log"
    path.write_bytes(gzip.compress(data, compresslevel=1) if gzipped else data)
    with pytest.MonkeyPatch.context() as mp:
        # a short head and small buffers: the split falls anywhere, lines cross buffers
        mp.setattr(logs, "SNIFF_LINES", 3)
        mp.setattr(logs, "SNIFF_MAX_LINES", 6)
        mp.setattr(_scan, "CHUNK_BYTES", chunk)
        limit_line_bytes(mp, 50)
        _share(mp, share)
        assert _run(path, processes, fmt, fold) == _run(path, 1, fmt, fold)


def _big_log(tmp_path: Path) -> Path:
    src = ROOT / "fixtures" / "jax" / "growing_shape" / "run.log"
    return _repeated(src, tmp_path / "big.log", lines=20_000)


@pytest.mark.parametrize("budget", [0, 300, 3_000])
def test_workers_out_of_checkpoint_bytes_give_the_one_process_result(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, budget: int
) -> None:
    # GIVEN workers whose checkpoints may take no bytes, or a few (the first ones only),
    # WHEN three processes read a log THEN the result is one process's (the readers before
    # meet them at the checkpoints they kept, or read their parts themselves)
    path = _big_log(tmp_path)
    one = _run(path, 1)
    monkeypatch.setattr(_parallel, "CHECKPOINT_BYTES", budget)
    _few_checkpoints(monkeypatch)
    assert _run(path, 3) == one


@pytest.mark.parametrize(("processes", "failing"), [(2, 1), (3, 1), (3, 2), (4, 2), (4, 3)])
def test_a_failed_worker_leaves_the_others_to_read_its_part(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, processes: int, failing: int
) -> None:
    path = _big_log(tmp_path)
    one = _run(path, 1)
    work = _parallel.Team._work

    def fail_one(team: _parallel.Team, k: int, *a: Any) -> None:
        if k == failing:
            raise OSError("no space left on device")
        work(team, k, *a)

    monkeypatch.setattr(_parallel.Team, "_work", fail_one)
    spy = Spy(monkeypatch)
    assert _run(path, processes) == one
    assert spy.workers == processes - 1


@pytest.mark.parametrize(("processes", "failing"), [(2, 1), (3, 1), (3, 2)])
def test_a_worker_failing_while_its_events_are_taken_leaves_the_rest_to_the_parent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, processes: int, failing: int
) -> None:
    # GIVEN a worker that writes its records of events but the last, then pauses (the
    # parent takes them) and fails: THEN the parent decodes on from where it handed over,
    # leaving out the events taken already: the one-process result
    src = ROOT / "fixtures" / "poplar" / "cases" / "alternating_graphs.log"
    path = _repeated(src, tmp_path / "big.log", lines=20_000)  # (decoders that meet soon)
    one = _run(path, 1)
    monkeypatch.setattr(_event_codec, "BATCH", 64)
    flush = _event_codec.EventWriter.flush
    me = [0]

    def fail_at_the_end(out: _event_codec.EventWriter) -> None:
        if me[0] != failing:
            flush(out)
            return
        out.f.flush()  # (the records written so far: not the last one)
        time.sleep(1.0)  # the parent takes them
        raise OSError("no space left on device")

    work = _parallel.Team._work

    def numbered(team: _parallel.Team, k: int, *a: Any) -> None:
        me[0] = k  # (in the worker's process)
        work(team, k, *a)

    monkeypatch.setattr(_event_codec.EventWriter, "flush", fail_at_the_end)
    monkeypatch.setattr(_parallel.Team, "_work", numbered)
    taken: list[int] = []
    events = _parallel.Stream.events

    def seen(stream: _parallel.Stream) -> Any:
        yield from events(stream)
        if stream.chain is None:
            taken.append(stream.taken)

    monkeypatch.setattr(_parallel.Stream, "events", seen)
    assert _run(path, processes) == one
    assert taken and taken[0] > 0  # (events of the failed worker were taken, then left out)


def test_decoders_that_learnt_the_same_in_another_order_meet(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN a JAX log whose functions are first compiled in one order and, in the worker's
    # part, in another: the decoders learn the same modules' functions in other orders,
    # which the JAX decoder only looks up: THEN their states meet, and the worker's part
    # is taken over
    def compiles(names: str) -> str:
        return "".join(
            f"Compiling jit({f}) with global shapes and types (ShapedArray(float32[{n}]),). "
            "Argument mapping: (UnspecifiedValue,).\n"
            f"Finished XLA compilation of jit({f}) in 0.01 sec\nstep {n}\n"
            for n in range(2)
            for f in names
        )

    path = tmp_path / "jax.log"
    path.write_text(compiles("abc") * 300 + compiles("cba") * 300, encoding="utf-8")
    one = _run(path, 1, "jax")
    spy = Spy(monkeypatch)
    _share(monkeypatch, 0.5)
    assert _run(path, 2, "jax") == one
    assert spy.adopted["jax"] == 1
    a, b = JAX.decoder("x"), JAX.decoder("x")
    a._function_of.update({"jit_f": "f", "jit_g": "g"})  # type: ignore[attr-defined]
    b._function_of.update({"jit_g": "g", "jit_f": "f"})  # type: ignore[attr-defined]
    assert checkpoint(a) == checkpoint(b)
    b._function_of["jit_h"] = "h"  # type: ignore[attr-defined]
    assert checkpoint(a) != checkpoint(b)


def test_a_worker_first_seeing_a_folded_line_later_than_the_parent_meets_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN a Poplar run whose first load comes after the lines format detection reads
    # (the compilation's output comes first, as in a real DEBUG log): the parent first
    # folds load starts from one line and the worker from another, later one.  WHEN it is
    # read folded by two processes, THEN their states still meet (a folding decoder keeps
    # what it folds the repeats of without that line's time), the worker's part is taken
    # over, and the result is one process's
    utc, tf = (lambda s: poplar_prefix(1, s)), (lambda s: poplar_prefix(0, s))
    lines = [tf(0) + "Poplar version: 3.1.0 (e12d5f9f01) Poplar package: 9c103dc348"]
    lines += [utc(1) + f"Sub-graph optimisation pass {n} done" for n in range(500)]
    for n in range(400):
        lines += [
            utc(10 + n) + "Starting phase: Loading executable",
            utc(10 + n) + "Ending phase: Loading executable (duration 560 ms; diff RSS: 0.5 MB)",
            *(
                tf(10 + n) + f"Execute a_inference_{'ab'[n % 2]}_step_1__XlaMustCompile"
                for _ in "xyz"
            ),
        ]
    path = tmp_path / "run.log"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    one = _run(path, 1, "poplar", fold=True)
    spy = Spy(monkeypatch)
    _share(monkeypatch, 0.5)
    assert _run(path, 2, "poplar", fold=True) == one
    assert spy.workers == 1 and spy.adopted["poplar"] == 1


def test_a_given_format_still_lets_the_parent_take_over_the_workers_parts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN a Poplar log read with its format given (--log-format): WHEN two processes read
    # it, THEN the worker's part is taken over, as with the format detected (the first
    # lines are still read before the worker is forked, so its clock starts from the log's
    # first stamp: the states never met before), and the result is one process's
    src = ROOT / "fixtures" / "poplar" / "cases" / "alternating_graphs.log"
    path = _repeated(src, tmp_path / "run.log", lines=6000)
    for fold in (False, True):
        one = _run(path, 1, "poplar", fold=fold)
        spy = Spy(monkeypatch)
        _share(monkeypatch, 0.5)
        assert _run(path, 2, "poplar", fold=fold) == one
        assert spy.workers == 1 and spy.adopted["poplar"] == 1, fold


def test_a_worker_whose_parent_is_gone_removes_the_team_files_and_stops(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN a worker that finds its parent gone (as after the parent was killed: it is
    # another process's child then): THEN it removes the team's folder and stops,
    # writing nothing; the parent (here alive) reads the parts itself
    import shutil

    path = _big_log(tmp_path)
    one = _run(path, 1)
    removed = tmp_path / "removed"
    rmtree = shutil.rmtree

    def noted(folder: str, ignore_errors: bool = False) -> None:
        if os.getpid() != parent:
            removed.mkdir(exist_ok=True)
            (removed / str(os.getpid())).write_text(folder)
        rmtree(folder, ignore_errors=ignore_errors)

    parent = os.getpid()
    monkeypatch.setattr(shutil, "rmtree", noted)
    monkeypatch.setattr(_parallel.os, "getppid", lambda: -1)
    spy = Spy(monkeypatch)
    # (one worker: a second's files would be made after the first had removed the folder)
    assert _run(path, 2) == one
    assert spy.workers == 1 and not spy.adopted
    assert len(list(removed.iterdir())) == 1


def _enclosing_function(parent: dict[Any, Any], node: Any) -> str | None:
    """The name of the function the AST ``node`` is in."""
    import ast

    while node in parent:
        node = parent[node]
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return node.name
    return None


def test_what_a_decoder_compares_unordered_it_only_looks_up() -> None:
    # GIVEN each decoder's UNORDERED_STATE (dictionaries whose order a checkpoint ignores):
    # THEN its module only indexes them, gets or sets their items and makes them empty:
    # never iterates, pops or hands them on, so the order of their entries cannot change
    # an event (and a later change that does fails here); its RESIDUAL_STATE likewise, but
    # for entries taken out when asked for and the iteration of them in finish()
    import ast
    import inspect

    checked: Counter[str] = Counter()
    for fmt in LOG_FORMATS:
        cls = type(fmt.decoder("x"))
        residual = getattr(cls, "RESIDUAL_STATE", frozenset())
        names = getattr(cls, "UNORDERED_STATE", frozenset()) | residual
        module = inspect.getmodule(cls)
        assert module is not None
        # (its source file: a compiled module has no source inspect finds)
        tree = ast.parse((ROOT / source_path(module.__name__)).read_text(encoding="utf-8"))
        parent = {kid: node for node in ast.walk(tree) for kid in ast.iter_child_nodes(node)}
        for node in ast.walk(tree):
            if not (
                isinstance(node, ast.Attribute)
                and node.attr in names
                and isinstance(node.value, ast.Name)
                and node.value.id == "self"
            ):
                continue
            up = parent[node]
            # a residual dictionary (RESIDUAL_STATE) may also lose an entry it is asked for,
            # and is iterated and emptied in finish() only; a decoder that has one never
            # discards from a looked-up set (the parent adds its own to the last worker's)
            calls = (
                ("get", "setdefault", "add")
                if residual
                else ("get", "setdefault", "add", "discard")
            )
            if node.attr in residual:
                calls += ("pop",)
                if _enclosing_function(parent, up) == "finish":
                    calls += ("items", "values", "clear")
            # (the end of a run, which only a reader from the start runs: a worker fails
            # first, ReadAlone; what it keeps is what the run before did not leave)
            if _enclosing_function(parent, up) == getattr(cls, "RUN_END", None):
                checked[cls.__name__] += 1
                continue
            looked_up = (
                (isinstance(up, ast.Subscript) and up.value is node)
                or (
                    isinstance(up, ast.Attribute)
                    and up.attr in calls
                    and isinstance(parent[up], ast.Call)
                    and parent[up].func is up  # type: ignore[attr-defined]
                )
                or (  # (x in self.names, x not in self.names)
                    isinstance(up, ast.Compare)
                    and node in up.comparators
                    and all(isinstance(op, (ast.In, ast.NotIn)) for op in up.ops)
                )
            )
            # made empty, in __init__ only: a worker watches the objects its decoder had
            # when it started (record_misses), so a decoder never puts new ones in their place
            made = (
                isinstance(up, (ast.Assign, ast.AnnAssign))
                and (
                    (isinstance(up.value, ast.Dict) and not up.value.keys)
                    or (
                        isinstance(up.value, ast.Call)
                        and isinstance(up.value.func, ast.Name)
                        and up.value.func.id in ("set", "DigestTable")
                        and not up.value.args
                    )
                )
                and _enclosing_function(parent, up) == "__init__"
            )
            assert looked_up or made, (cls.__name__, node.attr, node.lineno)
            checked[cls.__name__] += 1
    assert len(checked) >= 5 and sum(checked.values()) >= 20, checked


def test_no_process_to_spare_leaves_fewer_to_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _big_log(tmp_path)
    one = _run(path, 1)
    fork = os.fork
    forks = [0]

    def second_fork_fails() -> int:
        forks[0] += 1
        if forks[0] == 2:
            raise BlockingIOError("Resource temporarily unavailable")
        return fork()

    monkeypatch.setattr(_parallel.os, "fork", second_fork_fails)
    assert _run(path, 4) == one
    monkeypatch.setattr(_parallel.os, "fork", lambda: (_ for _ in ()).throw(OSError("no")))
    assert _run(path, 3) == one


def test_states_that_never_meet_leave_the_parent_to_read_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _big_log(tmp_path)
    one = _run(path, 1)
    # each process's states are its own (the process id): no two ever equal
    monkeypatch.setattr(_parallel, "checkpoint", lambda _d: os.getpid())
    spy = Spy(monkeypatch)
    assert _run(path, 3) == one
    assert spy.workers == 2 and not spy.adopted


def test_an_abandoned_parse_stops_its_workers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _big_log(tmp_path)
    teams: list[_parallel.Team] = []
    start = _parallel.Team.__init__

    def keep(team: _parallel.Team, *a: Any) -> None:
        start(team, *a)
        teams.append(team)

    monkeypatch.setattr(_parallel.Team, "__init__", keep)
    monkeypatch.setattr(_parallel.Team, "_work", lambda *_a: threading.Event().wait(60))
    _ALLOWED[0] = 3
    events = parse_log(str(path))
    while not teams:
        next(events)
    [team] = teams
    pids = [m.pid for m in team.members if m is not None]
    assert len(pids) == 2
    for pid in pids:
        assert os.waitpid(pid, os.WNOHANG) == (0, 0)  # the workers run
    events.close()
    _ALLOWED[0] = 1
    for pid in pids:
        with pytest.raises(ChildProcessError):  # stopped, and reaped
            os.waitpid(pid, os.WNOHANG)
    assert not os.path.exists(team.dir)  # their files are gone


def test_the_report_is_the_same_with_several_processes(tmp_path: Path) -> None:
    path = _big_log(tmp_path)
    reports = []
    for n in (1, 2, 3):
        _ALLOWED[0] = n
        try:
            with api.analyze(str(path)) as rep:
                reports.append("".join(rep.iter_json()))
        finally:
            _ALLOWED[0] = 1
    assert reports[1] == reports[0] and reports[2] == reports[0]


@pytest.mark.parametrize("gzipped", [False, True])
def test_progress_only_goes_up_and_ends_at_the_size(tmp_path: Path, gzipped: bool) -> None:
    # with workers, the first part's share read stands for the whole while they read the
    # rest: the bar moves at the pace of the whole, never back, and ends at the size (of
    # the file: a gzip log's text read is shown as that share of the file's bytes)
    path = _big_log(tmp_path)
    if gzipped:
        path = tmp_path / "big.log.gz"
        path.write_bytes(gzip.compress(_big_log(tmp_path).read_bytes()))
    size = path.stat().st_size
    for n in (1, 2, 3):
        seen: list[int] = []
        _ALLOWED[0] = n
        try:
            list(parse_log(str(path), on_progress=seen.append))
        finally:
            _ALLOWED[0] = 1
        assert len(seen) > 10
        assert seen == sorted(set(seen)) and seen[-1] == size, n
        if n > 1:  # most of the size is shown before the first part is over
            assert seen[-2] > 0.75 * size


def test_forking_only_where_it_is_safe(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(_parallel.WORKERS_ENV, raising=False)
    monkeypatch.setattr(_parallel, "threads", lambda: 1)
    monkeypatch.setattr(_parallel.os, "sched_getaffinity", lambda _pid: set(range(16)))
    assert _parallel.usable() == _parallel.MAX_PROCESSES
    monkeypatch.setattr(_parallel.os, "sched_getaffinity", lambda _pid: {0, 1})
    assert _parallel.usable() == 2
    monkeypatch.setattr(_parallel.os, "sched_getaffinity", lambda _pid: {0})
    assert _parallel.usable() == 1  # one CPU
    monkeypatch.setenv(_parallel.WORKERS_ENV, "3")
    assert _parallel.usable() == 3  # asked for
    monkeypatch.setenv(_parallel.WORKERS_ENV, "1")
    assert _parallel.usable() == 1
    monkeypatch.delenv(_parallel.WORKERS_ENV)
    monkeypatch.setattr(_parallel.os, "sched_getaffinity", lambda _pid: {0, 1})
    monkeypatch.setattr(_parallel, "threads", lambda: 2)
    assert _parallel.usable() == 1  # another thread could hold a lock the worker needs
    monkeypatch.setattr(_parallel, "threads", lambda: 1)
    _parallel.one_process_per_input()  # a fleet pool's worker
    try:
        assert _parallel.usable() == 1
    finally:
        del os.environ[_parallel.WORKERS_ENV]


@pytest.mark.skipif(not os.path.exists("/proc/self/stat"), reason="the system's count: Linux")
def test_threads_threading_does_not_know_are_counted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(_parallel.WORKERS_ENV, raising=False)
    monkeypatch.setattr(_parallel.os, "sched_getaffinity", lambda _pid: {0, 1})
    # GIVEN a thread started below threading (as a C library starts its pool's)
    before = _parallel.threads()
    started, release = threading.Event(), threading.Lock()
    release.acquire()

    def wait() -> None:
        started.set()
        with release:
            pass

    _thread.start_new_thread(wait, ())
    try:
        assert started.wait(10)
        # THEN it is counted, and this process is not forked
        assert threading.active_count() < _parallel.threads() == before + 1
        assert _parallel.usable() == 1
    finally:
        release.release()


def _fixture_decoders() -> Iterator[tuple[Path, list[str], Any]]:
    """Each plain fixture log of a known format: its path, its lines and a new decoder."""
    from recompile_doctor.parsers import detect_format

    for path in PLAIN_FIXTURES:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
        fmt = detect_format(lines[:200])
        if fmt is not None:
            yield path, lines, fmt.decoder(str(path))


def test_a_workers_decoder_survives_the_handing_over() -> None:
    # GIVEN each fixture log of a format whose decoder a worker hands to the parent when it
    # ends the input (RESIDUAL_STATE: pickled, its recording tables plain), read by a
    # decoder that records its misses as a worker's does
    import pickle

    from recompile_doctor.parsers._checkpoint import record_misses, residual_of, unrecorded

    handed = 0
    for path, lines, decoder in _fixture_decoders():
        if not residual_of(decoder):
            continue
        record_misses(decoder)
        # WHEN it is handed over after any of its lines (in a block or between them)
        for lineno, raw in enumerate(lines, 1):
            decoder.decode(lineno, raw)
            if lineno % 7 and lineno != len(lines):
                continue
            copy = pickle.loads(pickle.dumps(unrecorded(decoder), protocol=5))
            # THEN the parent's copy is in the worker decoder's state, with plain tables
            assert checkpoint(copy) == checkpoint(decoder), (path, lineno)
            for name in residual_of(copy):
                assert type(getattr(copy, name)) is dict, (path, name)
            handed += 1
    assert handed > 50, handed


def test_events_survive_the_encoding() -> None:
    # every event of every fixture comes back equal, sharing its record as before
    n = shared = 0
    for path in PLAIN_FIXTURES:
        evs = list(parse_log(str(path)))
        items = []
        last = None
        for ev in evs:
            items.append(_event_codec.encode(ev, last))
            last = ev.record
        back = []
        last = None
        for item in items:
            back.append(_event_codec.decode(item, last))
            last = back[-1].record
        assert [repr(e) for e in back] == [repr(e) for e in evs], path
        assert back == evs, path
        for i in range(1, len(evs)):
            same = evs[i].record is not None and evs[i].record is evs[i - 1].record
            assert (back[i].record is not None and back[i].record is back[i - 1].record) == same
            shared += same
        n += len(evs)
    assert n > 1000 and shared > 10
    # (the parent makes them without their __init__, field by field: recompile_doctor.slotted;
    # nothing of theirs runs after __init__, and their fields begin with span, record, keep)
    for cls in _event_codec._CLASSES:
        assert not hasattr(cls, "__post_init__"), cls
        names = [f.name for f in dataclasses.fields(cls)]
        assert names[:3] == ["span", "record", "keep"], cls


def test_a_worker_hands_over_long_lines_in_records_bounded_by_their_size(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN the events of a TORCH_TRACE log (long lines) WHEN a worker writes them THEN
    # each record (decoded at once by the parent) holds no more than about BATCH_CHARS of
    # their lines, and they all come back, in order
    monkeypatch.setattr(_event_codec, "BATCH", 10**6)
    monkeypatch.setattr(_event_codec, "BATCH_CHARS", 20_000)
    evs = [
        ev
        for p in PLAIN_FIXTURES
        if p.parent.name == "trace" and "torch" in p.parts
        for ev in parse_log(str(p))
    ]
    longest = max(len(e.span.text) for e in evs)
    path = tmp_path / "events"
    with path.open("wb") as f:
        w = _event_codec.EventWriter(f)
        for ev in evs:
            w.add((ev,))
        w.flush()
    back: list[Any] = []
    records = 0
    with path.open("rb") as f:
        pos, last = 0, None
        while (got := _event_codec.bytes_at(f.fileno(), pos)) is not None:
            data, pos = got
            records += 1
            items, last = _event_codec.batch_items(data, last)
            back += items
            assert sum(len(e.span.text) for e in items) <= 20_000 + longest
    assert records > 1 and [repr(e) for e in back] == [repr(e) for e in evs]


@pytest.mark.parametrize("skip", [0, 1, 300, 10**6])
def test_a_workers_events_are_followed_in_runs_with_what_is_not_an_event_in_its_place(
    tmp_path: Path, skip: int
) -> None:
    # GIVEN a worker's file of three records: events, a name it missed among them, more
    # events than a run holds, and the end of its decoder's input before its last events
    evs = [ev for p in PLAIN_FIXTURES if "jax" in p.parts for ev in parse_log(str(p))]
    evs = (evs * (1 + 700 // len(evs)))[:700]
    run = tuple(evs)  # (a writer takes a decoder's answer: a tuple)
    path = tmp_path / "events"
    with path.open("wb") as f:
        w = _event_codec.EventWriter(f)
        w.add(run[:5])
        w.missed(42, [("names", "train_step")])
        w.add(run[5:600])
        w.flush()
        w.add(run[600:650])
        w.flush()
        w.ending()
        w.add(run[650:])
        w.flush()
    # WHEN it is followed, the worker gone, the first `skip` events left out
    with path.open("rb") as f:
        got = list(_event_codec.follow(f.fileno(), lambda: True, skip, (0.0, 0.0)))
    # THEN the events come in runs of at most RUN_MAX, in order, none empty, the others
    # (the missed name, the end) where they were written; the skipped events are not given
    # (what is not an event is, whatever was skipped)
    assert all(len(x) <= _event_codec.RUN_MAX for x in got if type(x) is list)
    assert all(x for x in got if type(x) is list)
    flat: list[Any] = []
    for x in got:
        if type(x) is list:
            flat.extend(repr(e) for e in x)
        else:
            flat.append(x)
    expected: list[Any] = [repr(e) for e in evs[:5]]
    expected.append(_event_codec.Missed(42, [("names", "train_step")]))
    expected += [repr(e) for e in evs[5:650]]
    expected.append(_event_codec.ENDED)
    expected += [repr(e) for e in evs[650:]]
    events_seen = 0
    wanted: list[Any] = []
    for x in expected:
        if isinstance(x, str):
            events_seen += 1
            if events_seen <= skip:
                continue
        wanted.append(x)
    assert flat == wanted
    assert any(x is _event_codec.ENDED for x in got)


def test_a_gzip_stream_is_searched_for_line_starts_forward_in_bounded_memory() -> None:
    import io as _io
    import tracemalloc

    # GIVEN a text of short lines, a line of 3 MB, and short lines again, read forward once
    text = b"a\nbb\n" * 1000 + b"x" * (3 << 20) + b"\nccc\n" * 1000
    reads: list[int] = []

    class Stream(_io.BytesIO):
        def read1(self, n: int = -1) -> bytes:
            got = super().read1(n)
            reads.append(len(got))
            return got

    find = _parallel.StreamLineStart(Stream(text))
    # THEN each line start is the first after its position (each asked for at or after the
    # last one found, as splits_for asks), as in the text itself
    last = 0
    for pos in (0, 2, 4999, 6000, (3 << 20) + 5000, (3 << 20) + 5001, len(text) - 3):
        pos = max(pos, last)
        expected = text.find(b"\n", pos)
        tracemalloc.start()
        last = find(pos) or 0
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert last == (expected + 1 if expected >= 0 else 0), pos
        assert peak < 5 << 19, (pos, peak)  # (never the whole long line: about a read held)
    assert find(len(text)) is None
    assert max(reads) <= 1 << 20


@settings(max_examples=examples(150), deadline=None)
@given(
    lines=st.lists(
        st.sampled_from([b"", b"ab", b"xx SEAM yy", b"SEAM", b"SE", b"AM q"]), max_size=40
    ),
    asked=st.lists(st.integers(min_value=0, max_value=400), min_size=1, max_size=4),
    window=st.integers(min_value=1, max_value=60),
    tail=st.booleans(),
)
# (a seam line just past the window: one byte short of it; and well past it)
@example(lines=[b"ab", b"ab", b"SEAM"], asked=[0], window=6, tail=False)
@example(lines=[b"ab", b"ab", b"ab", b"SEAM", b"ab"], asked=[0], window=3, tail=True)
def test_a_part_begins_at_the_first_seam_line_within_the_window(
    tmp_path_factory: pytest.TempPathFactory,
    lines: list[bytes],
    asked: list[int],
    window: int,
    tail: bool,
) -> None:
    import io as _io

    # GIVEN a text of lines, some holding a seam literal (or half of one), a seam window
    # and positions asked for in increasing order, as splits_for asks
    text = b"\n".join(lines) + (b"\n" if tail else b"")
    path = tmp_path_factory.mktemp("seams") / "text"
    path.write_bytes(text)
    seams = (b"SEAM",)

    def expected(pos: int) -> int | None:
        # (the first line start after pos; then the first line from there that holds a seam
        # wholly within the window's bytes)
        nl = text.find(b"\n", pos)
        if nl < 0 or nl + 1 >= len(text):
            return None if nl < 0 else nl + 1
        start = nl + 1
        hit = text.find(b"SEAM", start, start + window)
        nl = text.rfind(b"\n", start, hit) if hit >= 0 else -1
        return nl + 1 if nl >= 0 else start

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_parallel, "SEAM_WINDOW", window)
        with path.open("rb") as f:
            in_file = _parallel.file_line_start(f.fileno(), len(text), seams)
            in_stream = _parallel.StreamLineStart(_io.BytesIO(text), seams)
            last = 0
            for pos in sorted(asked):
                pos = max(pos, last)
                want = expected(pos)
                # THEN the file's and the stream's finders give it
                assert in_file(pos) == want, pos
                assert in_stream(pos) == want, pos
                last = want or pos


@pytest.mark.parametrize("case", ["met", "never met", "worker failed", "failed while taken"])
def test_how_the_parts_were_read_is_logged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, case: str
) -> None:
    # GIVEN a log read by three processes, WHEN the states meet, never meet, or a worker
    # fails before or while its events are taken, THEN -v says for each part whether it
    # was taken over (where, and how many lines were read twice) or read again, and why:
    # a part read twice is otherwise silent
    import logging

    src = ROOT / "fixtures" / "poplar" / "cases" / "alternating_graphs.log"
    path = _repeated(src, tmp_path / "big.log", lines=20_000)
    work = _parallel.Team._work
    if case == "never met":
        monkeypatch.setattr(_parallel, "checkpoint", lambda _d: os.getpid())
    elif case == "worker failed":

        def fail_second(team: _parallel.Team, k: int, *a: Any) -> None:
            if k == 2:
                raise OSError("no space left on device")
            work(team, k, *a)

        monkeypatch.setattr(_parallel.Team, "_work", fail_second)
    elif case == "failed while taken":
        monkeypatch.setattr(_event_codec, "BATCH", 64)
        flush = _event_codec.EventWriter.flush
        me = [0]

        def fail_at_the_end(out: _event_codec.EventWriter) -> None:
            if me[0] != 1:
                flush(out)
                return
            out.f.flush()
            time.sleep(1.0)
            raise OSError("no space left on device")

        def numbered(team: _parallel.Team, k: int, *a: Any) -> None:
            me[0] = k
            work(team, k, *a)

        monkeypatch.setattr(_event_codec.EventWriter, "flush", fail_at_the_end)
        monkeypatch.setattr(_parallel.Team, "_work", numbered)
    caplog.set_level(logging.INFO, logger="recompile_doctor")
    _run(path, 3)
    said = [r.getMessage() for r in caplog.records if "processes:" in r.getMessage()]
    assert len(said) == 1, said
    head, _, parts = said[0].partition(": read by 3 processes: ")
    assert head == str(path)
    two, three = parts.split("; ")
    taken = re.compile(
        r"part (\d)/3 \(from line ([\d,]+)\): taken over at line ([\d,]+) \(([\d,]+) read twice\)"
    )
    # the benchmarks' column of parts taken over reads the same line
    taken_of_all, again = benchmark_script("bench_scale").parts_read(
        f"recompile-doctor: INFO: {said[0]}\n"
    )
    assert taken_of_all == f"{sum('taken over' in p for p in (two, three))}/2"
    assert again == "; ".join(p for p in (two, three) if "taken over" not in p)
    if case == "met":
        for k, text in ((2, two), (3, three)):
            m = taken.fullmatch(text)
            assert m is not None, text
            first, at, twice = (int(g.replace(",", "")) for g in m.groups()[1:])
            assert int(m[1]) == k and first <= at and twice == at - first + 1
    elif case == "never met":
        # (each worker is stopped once this process went past its last checkpoint)
        stopped = "(their states never met, and its worker was stopped)"
        assert two == f"part 2/3: read again by this process {stopped}"
        assert three == f"part 3/3: read again by this process {stopped}"
    elif case == "worker failed":
        assert taken.fullmatch(two), two
        assert three == "part 3/3: read again by the process of part 2 (its worker failed)"
    else:
        assert two == "part 2/3: read again by this process (worker 1 failed)"
        assert three == "part 3/3: read again by this process (worker 1 failed)"


def test_the_benchmarks_count_the_lines_read_twice_past_a_worker_s_misses() -> None:
    # a worker that looked up names its reader knew is met later: the lines between its
    # part's start and that meeting are the cost, not a part read again
    said = (
        "x.log: read by 2 processes: part 2/2 (from line 1,281,065): taken over at line "
        "1,281,128 (64 read twice); worker 1 missed a name this process knew at line "
        "1,281,072; worker 1 missed a name this process knew at line 1,281,089"
    )
    taken_of_all, twice = benchmark_script("bench_scale").parts_read(
        f"recompile-doctor: INFO: {said}\n"
    )
    assert taken_of_all == "1/1"
    assert twice == (
        "64 lines (worker 1 missed a name this process knew at line 1,281,072; "
        "worker 1 missed a name this process knew at line 1,281,089)"
    )


def test_the_sizes_compared_first_are_those_of_the_state() -> None:
    # GIVEN every fixture log decoded line by line by its format's decoder, THEN after each
    # line the sizes read off the decoder equal those of its checkpoint: the quick check
    # the parent makes before comparing whole states never turns away an equal state
    from recompile_doctor.parsers._checkpoint import checkpoint, sizes, sizes_of

    compared = 0
    for path, lines, dec in _fixture_decoders():
        for n, line in enumerate(lines, 1):
            dec.decode(n, line)
            state = checkpoint(dec)
            if state is not None:
                assert sizes(dec) == sizes_of(state), (path, n)
                compared += 1
    assert compared > 5000


def _with_early_names(tmp_path: Path, again: str | None) -> Path:
    """A JAX log whose functions init_model and warmup_fn are compiled once, after the
    lines read before the workers are forked (so a worker never learns them), in a run
    that recompiles other functions again and again; ``again``: lines of theirs that come
    back in the later parts."""
    body = (ROOT / "fixtures" / "jax" / "growing_shape" / "run.log").read_text()
    extra = (ROOT / "fixtures" / "jax" / "two_functions" / "run.log").read_text()
    extra = extra.replace("train_step", "init_model").replace("eval_step", "warmup_fn")
    lines = (body * 300).splitlines(keepends=True)
    cut = len(lines) * 2 // 3
    text = "".join(lines[:600]) + extra + "".join(lines[600:cut]) + (again or "")
    path = tmp_path / "early.log"
    path.write_text(text + "".join(lines[cut:]))
    return path


@pytest.mark.parametrize("later", ["never", "looked up"])
@pytest.mark.parametrize("processes", [2, 3])
def test_a_worker_lacking_names_the_parent_learnt_is_taken_over_unless_it_needs_them(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    later: str,
    processes: int,
) -> None:
    # GIVEN a log whose decoder learns names in the parent's part that no worker learns:
    # WHEN they are never looked up again, THEN the parent takes over the worker's part
    # (its names are among the parent's: with equal states they would never meet); WHEN a
    # later line looks one up (the worker finds nothing where the parent would find it),
    # THEN the parent reads on from the match itself, past that line, and (two processes:
    # the worker's own part) takes the worker's events again from the first of its later
    # checkpoints where their states meet; the result is one process's either way
    import logging

    again = None
    if later == "looked up":
        extra = (ROOT / "fixtures" / "jax" / "two_functions" / "run.log").read_text()
        fin = [ln for ln in extra.splitlines(keepends=True) if "Finished XLA compilation" in ln]
        again = fin[0].replace("train_step", "init_model")
    path = _with_early_names(tmp_path, again)
    one = _run(path, 1)
    _share(monkeypatch, 0.5 if processes == 2 else 0.3)
    spy = Spy(monkeypatch)
    caplog.set_level(logging.INFO, logger="recompile_doctor")
    assert _run(path, processes) == one
    said = [r.getMessage() for r in caplog.records if "processes:" in r.getMessage()]
    assert len(said) == 1, said
    if later == "never":
        assert spy.adopted["jax"] == 1, said
        assert "part 2/" in said[0] and "taken over at line" in said[0].split("; ")[0], said
    else:
        assert "missed a name this process knew" in said[0], said
        if processes == 2:
            assert spy.adopted["jax"] == 1, said
            m = re.search(r"taken over at line ([\d,]+).*knew at line ([\d,]+)", said[0])
            assert m is not None, said
            taken, missed = (int(g.replace(",", "")) for g in m.groups())
            assert taken >= missed, said


def _jax_block(kind: str, name: str) -> str:
    """Lines a JAX log writes about function ``name``: a whole compilation, its last line
    alone (which looks the function up by its module), a cache-miss explanation (which
    makes it a user function), or an eager operation's compilation."""
    if kind == "compile":
        return (
            f"Finished tracing {name} for jit in 0.001 sec\n"
            f"Compiling jit({name}) with global shapes and types (ShapedArray(float32[1,4]),). "
            "Argument mapping: (UnspecifiedValue,).\n"
            f"Finished jaxpr to MLIR module conversion jit({name}) in 0.01 sec\n"
            f"Finished XLA compilation of jit({name}) in 0.02 sec\n"
        )
    if kind == "finished":
        return f"Finished XLA compilation of jit({name}) in 0.02 sec\n"
    if kind == "explained":
        return (
            "TRACING CACHE MISS at /tmp/x.py:10:5 (main):\n"
            "  never seen function:\n"
            f"    {name} id=1 defined at /tmp/x.py:3\n"
        )
    return (  # an eager operation (a name JAX's own functions have)
        f"Compiling jit(_{name}) with global shapes and types (ShapedArray(int32[]),). "
        "Argument mapping: (UnspecifiedValue,).\n"
        f"Finished XLA compilation of jit(_{name}) in 0.001 sec\n"
    )


def _anywhere(kinds: list[Any], names: list[Any], most: int) -> st.SearchStrategy[Any]:
    """Up to ``most`` blocks (where in the log, what, of whom) to put anywhere in a log."""
    where = st.floats(0.0, 1.0)
    return st.lists(st.tuples(where, st.sampled_from(kinds), st.sampled_from(names)), max_size=most)


#: how a log is read by several processes: the parent's share, their number, and whether
#: the workers record few first checkpoints (then late ones: _few_checkpoints)
_READERS: dict[str, st.SearchStrategy[Any]] = {
    "share": st.floats(0.2, 0.7),
    "processes": st.integers(2, 3),
    "late": st.booleans(),
}


@settings(
    max_examples=examples(int(os.environ.get("TAKEOVER_EXAMPLES", "25"))),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    blocks=_anywhere(
        ["compile", "finished", "explained", "eager"],
        ["init_model", "warmup_fn", "summarize", "score"],
        12,
    ),
    **_READERS,
)
def test_a_takeover_on_names_among_the_parents_is_the_one_process_result(
    tmp_path_factory: pytest.TempPathFactory,
    blocks: list[tuple[float, str, str]],
    share: float,
    processes: int,
    late: bool,
) -> None:
    # GIVEN a JAX log where functions are compiled, looked up, explained or run eagerly
    # anywhere (before or after the parts' splits, once or again), WHEN two or three
    # processes read it, THEN the result is one process's: a worker lacking a name is
    # taken over only while it never needs one the parent knew, and again from a later
    # checkpoint where their states meet (``late``: few first checkpoints, then late ones,
    # thinned out, so that the late ones are the ones met)
    body = (ROOT / "fixtures" / "jax" / "growing_shape" / "run.log").read_text()
    lines = (body * 120).splitlines(keepends=True)
    inserted = [(where, [_jax_block(kind, name)]) for where, kind, name in blocks]
    path = _with_blocks(tmp_path_factory.mktemp("log") / "run.log", lines, inserted)
    _same_as_one_process(path, share, processes, late)


def _with_blocks(path: Path, lines: list[str], blocks: list[tuple[float, list[str]]]) -> Path:
    """``lines`` written to ``path`` with each block's lines before the line at its
    fraction of them."""
    at: dict[int, list[str]] = {}
    for where, block in blocks:
        at.setdefault(int(where * len(lines)), []).extend(block)
    path.write_text("".join("".join(at.get(i, ())) + line for i, line in enumerate(lines)))
    return path


def _same_as_one_process(path: Path, share: float, processes: int, late: bool) -> None:
    """``processes`` read ``path`` (the parent's ``share``; ``late``: few first checkpoints)
    as one does."""
    with pytest.MonkeyPatch.context() as mp:
        _share(mp, share)
        if late:
            _few_checkpoints(mp)
        assert _run(path, processes) == _run(path, 1)


def _few_checkpoints(mp: pytest.MonkeyPatch) -> None:
    """Workers record a few first checkpoints, then late ones every 16 lines, at most 4 (so
    that they are thinned out)."""
    mp.setattr(_parallel, "CHECKPOINTS", 40)
    mp.setattr(_parallel, "CHECKPOINTS_DENSE", 8)
    mp.setattr(_parallel, "CHECKPOINT_EVERY", 8)
    mp.setattr(_parallel, "LATE_EVERY", 16)
    mp.setattr(_parallel, "LATE_MAX", 4)
    mp.setattr(_parallel, "LATE_COST", 1e9)  # (spaced by lines only: the same on any machine)


def test_no_late_checkpoint_is_taken_of_a_decoder_whose_tables_are_big(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # GIVEN a worker's decoder whose looked-up tables hold more entries than a late
    # checkpoint may (its state is built and written whole: 90 MB at once in the worker of
    # an 8 GB TensorFlow log), and one whose tables hold that many
    class Decoder:
        def __init__(self, n: int) -> None:
            self.continuing = False
            self.counts = {k: 1 for k in range(n // 2)}
            self.names = {f"f{k}" for k in range(n - n // 2)}

    monkeypatch.setattr(_parallel, "LATE_MAX_ENTRIES", 10)
    kept = _parallel._Kept()
    late = _parallel._Late(kept)
    try:
        # WHEN a late checkpoint is due for each
        late.take(Decoder(11), 100, _parallel.Counts(), 0, 6000)  # type: ignore[arg-type]
        # THEN the big one's is not taken (and the next is due after the usual spacing)
        assert kept.dumped == [] and late.next == 6000 + late.every
        late.take(Decoder(10), 200, _parallel.Counts(), 0, late.next)  # type: ignore[arg-type]
        # AND the other's is, whole
        assert len(kept.dumped) == 1
        assert kept.dumped[0].size > 0
    finally:
        kept.close()


def test_a_workers_checkpoints_stop_at_their_byte_budget(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # GIVEN a worker's checkpoints of states that grow (a decoder that learns long names)
    # and a budget of bytes for them all
    monkeypatch.setattr(_parallel, "CHECKPOINT_BYTES", 10_000)
    kept = _parallel._Kept()
    try:
        names: list[str] = []
        taken = []
        for k in range(12):
            names.append(f"name{k}_" + "x" * 1_000)
            cp = (k, (("names", tuple(names)),), 0, 0, 0, k)
            taken.append(kept.add(cp))  # type: ignore[arg-type]
        # THEN the first are written whole, in order, and none past the budget
        assert taken == [True] * 3 + [False] * 9, taken  # (1 + 2 + 3 kB, then 4 more)
        assert sum(d.size for d in kept.dumped) <= 10_000
        assert kept.full  # (the worker takes no more: each would be built for nothing)
        # AND a state bigger than the budget on its own is refused, not written
        fresh = _parallel._Kept()
        try:
            assert fresh.add((99, (("x" * 20_000,),), 0, 0, 0, 0)) is False  # type: ignore[arg-type]
            assert fresh.dumped == [] and fresh.full
        finally:
            fresh.close()
    finally:
        kept.close()


def test_late_checkpoints_thinned_out_keep_the_first_ones(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # GIVEN a worker's first checkpoints, then more late ones than it keeps
    class Decoder:
        def __init__(self, n: int) -> None:
            self.continuing = False
            self.counts = {k: 1 for k in range(n)}

    monkeypatch.setattr(_parallel, "LATE_MAX", 4)
    kept = _parallel._Kept()
    late = _parallel._Late(kept)
    try:
        for k in range(3):
            assert kept.add((k, (("first", k),), 0, 0, 0, k))  # type: ignore[arg-type]
        first = list(kept.dumped)
        every = late.every
        for k in range(5):
            late.take(Decoder(k), 100 + k, _parallel.Counts(), 0, late.next)  # type: ignore[arg-type]
        # THEN every other late one is dropped, the first ones all stay, and the spacing
        # doubles
        assert kept.dumped[:3] == first
        assert len(kept.dumped) == 3 + 2 and late.taken == 2
        assert late.every == 2 * every
    finally:
        kept.close()


def test_a_worker_is_met_again_at_a_late_checkpoint_after_a_name_it_missed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    # GIVEN a JAX log whose early function comes back in the worker's part, far past the
    # worker's first checkpoints, WHEN two processes read it, THEN the parent reads on past
    # that line and takes the worker's events again from one of its late checkpoints; the
    # result is one process's
    import logging

    extra = (ROOT / "fixtures" / "jax" / "two_functions" / "run.log").read_text()
    fin = [ln for ln in extra.splitlines(keepends=True) if "Finished XLA compilation" in ln]
    path = _with_early_names(tmp_path, fin[0].replace("train_step", "init_model"))
    one = _run(path, 1)
    _share(monkeypatch, 0.3)
    _few_checkpoints(monkeypatch)
    spy = Spy(monkeypatch)
    caplog.set_level(logging.INFO, logger="recompile_doctor")
    assert _run(path, 2) == one
    said = [r.getMessage() for r in caplog.records if "processes:" in r.getMessage()]
    assert spy.adopted["jax"] == 1, said
    m = re.search(
        r"\(from line ([\d,]+)\): taken over at line ([\d,]+).*knew at line ([\d,]+)", said[0]
    )
    assert m is not None, said
    first, taken, missed = (int(g.replace(",", "")) for g in m.groups())
    assert taken >= missed, said
    # (past the first checkpoints: 40 decoded lines of the worker's part)
    assert taken - first > 200, said


#: where a torch text log names a frame: a compile id ``[0/1]``, a failed guard's ``0/1: ...``
_TORCH_FRAME_RES = (
    re.compile(r"(\[)(\d+)(?=/\d+\])"),
    re.compile(r"((?:^|\s))(\d+)(?=/\d+:)"),
)


def _torch_lines(case: str, frame: int) -> list[str]:
    """The torch lines of a fixture, its frames numbered from ``frame``."""
    text = (ROOT / "fixtures" / "torch" / case / "run.log").read_text()
    out = []
    for line in text.splitlines(keepends=True):
        if "torch/" not in line:
            continue
        for rx in _TORCH_FRAME_RES:
            line = rx.sub(lambda m: f"{m[1]}{int(m[2]) + frame}", line)
        out.append(line)
    return out


@settings(
    max_examples=examples(int(os.environ.get("TAKEOVER_EXAMPLES", "25"))),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    # (the frame: the same one may come back)
    blocks=_anywhere(["value_guard", "dtype", "specialized_int", "recompile_limit"], [900, 950], 8),
    **_READERS,
)
def test_a_torch_log_with_frames_anywhere_is_the_one_process_result(
    tmp_path_factory: pytest.TempPathFactory,
    blocks: list[tuple[float, str, int]],
    share: float,
    processes: int,
    late: bool,
) -> None:
    # GIVEN a torch.compile log of new frames again and again (reasons held for a guard
    # dump that never comes among them: the parent holds those of its part at the seam),
    # with the compilations of a few frames anywhere (before or after the parts' splits,
    # once or again), WHEN two or three processes read it, THEN the result is one
    # process's: the parent ends the input with the last worker's decoder and what it
    # held that the worker never met, and a worker that meets one of those frames again
    # is left at that line
    inserted = [(where, _torch_lines(case, frame)) for where, case, frame in blocks]
    path = _with_blocks(tmp_path_factory.mktemp("log") / "run.log", _new_frames(), inserted)
    _same_as_one_process(path, share, processes, late)


def _new_frames() -> list[str]:
    """The lines of a torch.compile run of new frames again and again, whose recompile
    reasons wait for a guard dump that never comes."""
    body: list[str] = []
    for rep in range(12):
        body += _torch_lines("value_guard", 10 * rep) + _torch_lines("batch_size", 10 * rep + 5)
    return body


@pytest.mark.parametrize("head_ends", ["between frames", "in a guard dump"])
def test_a_torch_worker_is_taken_over_with_the_reasons_the_parent_held(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    head_ends: str,
) -> None:
    # GIVEN a torch.compile log of new frames again and again, whose recompile reasons
    # wait for a guard dump that never comes (held to the end), WHEN two processes read
    # it, THEN the parent takes over the worker's part (before, the reasons it held made
    # their states differ to the end) and the result is one process's.  The lines read
    # before the workers start end between two frames' lines (after the script's own first
    # lines), or inside a guard dump that goes on past them, whose frame the parent then
    # names otherwise than the worker's copy of the decoder does (before, they never met:
    # the worker's entries the lines before its part left are its own only once it asks
    # for them)
    import logging

    body = _new_frames()
    if head_ends == "between frames":
        first = len(_torch_lines("value_guard", 0) + _torch_lines("batch_size", 0))
        preamble = logs.SNIFF_LINES - first  # (the head ends with the first repetition)
        body[:0] = [f"setup: step {i} of the script's own output\n" for i in range(preamble)]
    path = tmp_path / "run.log"
    path.write_text("".join(body))
    one = _run(path, 1)
    _share(monkeypatch, 0.5)
    spy = Spy(monkeypatch)
    ended: list[int] = []
    end_with = _parallel.Stream._end_with

    def counted(stream: _parallel.Stream, w: int, extra: Any) -> Any:
        got = end_with(stream, w, extra)
        ended.append(len(extra.get("_held", ())))
        return got

    monkeypatch.setattr(_parallel.Stream, "_end_with", counted)
    caplog.set_level(logging.INFO, logger="recompile_doctor")
    assert _run(path, 2) == one
    said = [r.getMessage() for r in caplog.records if "processes:" in r.getMessage()]
    assert spy.adopted["torch"] == 1, said
    # (the parent ended the input with the reasons it held that the worker never met)
    assert len(ended) == 1 and ended[0] > 3, ended


def _read_split_before(
    path: Path, lines: list[str], split: int, begins: int, monkeypatch: pytest.MonkeyPatch
) -> Spy:
    """Read the log ``lines`` at ``path`` by two processes, the worker's share ending at the
    end of line ``split - 1``: the result is one process's, and the part begins at line
    ``begins`` (0-based); the spy of the reading."""
    inside = sum(len(line.encode()) for line in lines[:split]) - 1  # (the line before's end)
    one = _run(path, 1)
    begun = _split_at(monkeypatch, inside)
    spy = Spy(monkeypatch)
    assert _run(path, 2) == one
    assert begun == [sum(len(line.encode()) for line in lines[:begins])]
    return spy


def _split_at(monkeypatch: pytest.MonkeyPatch, inside: int) -> list[int]:
    """Split the next log read by two processes at the line after byte ``inside``; the
    list of where the parts begun then begin (filled as the team starts)."""

    def split_inside(line_start: Any, bom: int, *_a: Any) -> list[int]:
        got = line_start(bom + inside)
        return [] if got is None else [got - bom]

    monkeypatch.setattr(_parallel, "splits_for", split_inside)
    begun: list[int] = []
    fork = _parallel.Team.__init__

    def started(team: _parallel.Team, *a: Any) -> None:
        fork(team, *a)
        begun.extend(team.splits)

    monkeypatch.setattr(_parallel.Team, "__init__", started)
    return begun


@pytest.mark.parametrize("seams", [True, False], ids=["at a seam", "without seams"])
def test_a_torch_part_begins_at_a_recompilation_not_inside_its_guard_dump(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seams: bool
) -> None:
    # GIVEN a torch.compile log of new frames, each compiled again after a "Recompiling
    # function" block that names its function and then its guard dump, and the worker's
    # share ending inside such a guard dump, WHEN two processes read it, THEN the part
    # begins at the next recompilation's first line and the parent takes the worker's part
    # over; without the format's seams the worker, which sees that compilation first in its
    # dump, waits to the end for a name the lines before gave: the two never meet, and the
    # parent reads the part again.  Either way the result is one process's
    from recompile_doctor.parsers.torch import TorchLogDecoder

    path = tmp_path / "run.log"
    lines = _new_frames()
    path.write_text("".join(lines))
    recompiles = [i for i, line in enumerate(lines) if "] Recompiling function " in line]
    k = next(i for i in recompiles if i > len(lines) // 2)
    dump = next(i for i in range(k, len(lines)) if "[__guards]" in lines[i]) + 5
    assert all(f"[{lines[k].split('[')[1].split(']')[0]}]" in lines[i] for i in range(k, dump))
    if not seams:
        monkeypatch.setattr(TorchLogDecoder, "PART_SEAMS", ())
    seam = next(i for i in recompiles if i > dump)
    spy = _read_split_before(path, lines, dump, seam if seams else dump, monkeypatch)
    assert spy.adopted["torch"] == (1 if seams else 0)


class _Tables:
    """A decoder's looked-up tables, as record_misses sees them."""

    UNORDERED_STATE = frozenset({"names", "seen"})

    def __init__(self) -> None:
        self.names: dict[str, str] = {}
        self.seen: set[str] = set()


def test_an_entry_from_before_the_part_is_the_workers_own_once_asked_for() -> None:
    # GIVEN a worker's decoder whose tables hold entries the lines before its part left:
    # THEN its checkpoint leaves them out until it asks for one, which is then recorded
    # with its value; a reader holding another value (or none) for it knew more: the
    # worker's events from that line on may differ; an entry taken out is not asked again
    from recompile_doctor.parsers._checkpoint import knew, record_misses, sizes

    worker = _Tables()
    worker.names["f"] = "train_step"
    worker.seen.add("jit_f")
    missed = record_misses(worker)  # type: ignore[arg-type]
    assert dict(sizes(worker)) == {"names": 0, "seen": 0}  # type: ignore[arg-type]
    assert worker.names.get("f") == "train_step" and "jit_f" in worker.seen
    assert "g" not in worker.names
    assert dict(sizes(worker)) == {"names": 1, "seen": 1}  # type: ignore[arg-type]
    assert [m[:2] for m in missed] == [("names", "f"), ("seen", "jit_f"), ("names", "g")]
    same = _Tables()
    same.names["f"] = "train_step"
    same.seen.add("jit_f")
    assert not knew(same, missed)  # type: ignore[arg-type]
    other = _Tables()
    other.names["f"] = "eval_step"
    other.seen.add("jit_f")
    assert knew(other, missed)  # type: ignore[arg-type]
    gone = _Tables()
    gone.names["f"] = "train_step"
    assert knew(gone, missed)  # type: ignore[arg-type]
    knows_g = _Tables()
    knows_g.names.update(f="train_step", g="init")
    knows_g.seen.add("jit_f")
    assert knew(knows_g, missed)  # type: ignore[arg-type]
    worker.seen.discard("jit_f")
    missed.clear()
    assert "jit_f" not in worker.seen and missed == [("seen", "jit_f")]
    # a value that cannot be compared (a callback) is taken as changed
    worker.names._inherited["h"] = same.names["h"] = print  # type: ignore[attr-defined]
    missed.clear()
    assert worker.names.get("h") is print
    assert knew(same, missed)  # type: ignore[arg-type]


@pytest.mark.parametrize("broken", ["garbage", "missing", "conflict"])
def test_a_parent_that_cannot_end_with_the_workers_decoder_reads_on_itself(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, broken: str
) -> None:
    # GIVEN a torch log whose worker is taken over while the parent holds reasons the
    # worker never had, WHEN the worker's decoder before its finish() cannot be had (a
    # broken or missing file) or does not take the parent's residue, THEN the parent
    # decodes the worker's part on itself: the result is still one process's
    body = _new_frames()
    path = tmp_path / "run.log"
    path.write_text("".join(body))
    one = _run(path, 1)
    _share(monkeypatch, 0.5)
    if broken == "conflict":
        monkeypatch.setattr(_parallel, "with_residue", lambda *_a: False)
    else:
        monkeypatch.setattr(
            _parallel.Team, "ended", lambda _t, _k: b"garbage" if broken == "garbage" else None
        )
    ended: list[object] = []
    end_with = _parallel.Stream._end_with

    def seen(stream: _parallel.Stream, w: int, extra: Any) -> Any:
        got = end_with(stream, w, extra)
        ended.append(got)
        return got

    monkeypatch.setattr(_parallel.Stream, "_end_with", seen)
    assert _run(path, 2) == one
    assert ended == [None]


def test_workers_collect_less_often_and_leave_the_callers_collector_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN a library call (not the command line) with the host's own collector thresholds,
    # WHEN several processes read a log, THEN each forked worker (a process of ours) runs
    # with the thresholds for long-lived objects, and the caller's are as it set them
    import gc

    from recompile_doctor.gc_pause import LONG_LIVED_THRESHOLDS

    seen = tmp_path / "thresholds"
    work = _parallel.Team._work

    def noted(team: _parallel.Team, *a: Any) -> None:
        seen.write_text(repr(gc.get_threshold()))
        work(team, *a)

    monkeypatch.setattr(_parallel.Team, "_work", noted)
    host = gc.get_threshold()
    try:
        gc.set_threshold(701, 11, 12)
        path = _repeated(
            ROOT / "fixtures" / "jax" / "growing_shape" / "run.log", tmp_path / "a.log"
        )
        _run(path, 2)
        assert gc.get_threshold() == (701, 11, 12)
    finally:
        gc.set_threshold(*host)
    assert seen.read_text() == repr(LONG_LIVED_THRESHOLDS)


@given(
    head=st.tuples(st.integers(), st.text(max_size=5), st.none() | st.tuples(st.integers())),
    values=st.lists(
        st.tuples(st.integers(), st.text(max_size=30), st.lists(st.integers(), max_size=4)),
        max_size=6,
    ),
)
@pytest.mark.parametrize("dumped", ["none", "some", "all"])
def test_a_workers_checkpoints_are_read_one_at_a_time(
    head: tuple[Any, ...], values: list[tuple[Any, ...]], dumped: str
) -> None:
    """GIVEN a head and values written by put_indexed (some or all of them dumped to a
    file of their own first, as a worker's late checkpoints are), THEN the head reads back
    alone and each value when asked for (by index, from the end, by slice); a file cut
    short gives no head (before it is opened), or an error for the value cut (after)."""
    import tempfile

    from recompile_doctor.parsers._event_codec import Dumped, Indexed, put_indexed

    with tempfile.TemporaryFile() as f, tempfile.TemporaryFile() as late:
        given: list[Any] = [
            Dumped.to(late, v) if dumped == "all" or (dumped == "some" and k % 2) else v
            for k, v in enumerate(values)
        ]
        put_indexed(f, head, given)
        f.flush()
        got = Indexed.at(f.fileno(), 0)
        assert got is not None
        read_head, cps = got
        assert read_head == head
        assert len(cps) == len(values)
        assert [cps[i] for i in range(len(values))] == values == list(cps)
        assert cps[1:] == values[1:]
        if values:
            assert cps[-1] == values[-1]
            f.truncate(os.fstat(f.fileno()).st_size - 1)
            with pytest.raises(OSError):
                cps[-1]
            assert Indexed.at(f.fileno(), 0) is None  # (a value cut short: none of it)
        f.truncate(3)
        assert Indexed.at(f.fileno(), 0) is None


def test_a_dumped_value_cut_short_is_an_error_not_a_short_record() -> None:
    """GIVEN a late checkpoint dumped to its file, and that file cut short WHEN the part's
    record is written THEN it raises (the worker fails and the parent reads its part
    itself) instead of writing a record that reads as another value."""
    import tempfile

    from recompile_doctor.parsers._event_codec import Dumped, put_indexed

    with tempfile.TemporaryFile() as f, tempfile.TemporaryFile() as late:
        d = Dumped.to(late, (1, ("state", (1, 2)), 3, 4, 5, 6))
        late.truncate(d.size - 1)
        with pytest.raises(OSError):
            put_indexed(f, ("head",), [d])


#: a torch glog prefix up to its process id
_TORCH_PID_RE = re.compile(r"^((?:\[\w+\]:)*[VIWEFC]\d{4} [\d:.]+ +)\d+ ")


@settings(
    max_examples=examples(int(os.environ.get("TAKEOVER_EXAMPLES", "25"))),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(restarts=st.lists(st.floats(0.0, 1.0), min_size=1, max_size=3), **_READERS)
def test_a_torch_log_of_runs_begun_again_is_the_one_process_result(
    tmp_path_factory: pytest.TempPathFactory,
    restarts: list[float],
    share: float,
    processes: int,
    late: bool,
) -> None:
    # GIVEN a torch.compile log of new frames again and again, begun again by another
    # process (2>>: its id in every line's prefix, its compile ids from [0/0]) at a few
    # places anywhere, before or after the parts' splits
    lines = _new_frames()
    cuts = sorted(int(w * len(lines)) for w in restarts)
    pid, out, pids = 1000, [], set()
    for i, line in enumerate(lines):
        while cuts and cuts[0] <= i:
            cuts.pop(0)
            pid += 1
        out.append(_TORCH_PID_RE.sub(rf"\g<1>{pid} ", line))
        pids.add(pid)
    path = tmp_path_factory.mktemp("log") / "run.log"
    path.write_text("".join(out))
    # WHEN two or three processes read it, THEN the result is one process's: a worker that
    # meets a new run fails, and the reader before it reads that part
    _same_as_one_process(path, share, processes, late)
    # AND each new run starts a new process
    started = [e for e in parse_log(str(path)) if type(e).__name__ == "ProcessStarted"]
    assert len(started) == len(pids) - 1


def _read_with_a_failing_worker(path: Path, caplog: pytest.LogCaptureFixture) -> list[str]:
    """The events of ``path`` read by two processes (the parent's share a third), checking
    that the worker failed (at a new run in its part), the parent read that part, and the
    result is one process's.  The failing worker lingers before it exits, so the parent is
    done before it has gone: what the parent says must not hang on that race."""
    import logging

    caplog.set_level(logging.INFO, logger="recompile_doctor")
    fail = _parallel.Team._fail

    def lingering(team: _parallel.Team, k: int) -> None:
        fail(team, k)
        if os.getpid() != team._parent:  # (the worker: the parent has no need to wait)
            time.sleep(1.0)

    with pytest.MonkeyPatch.context() as mp:
        _share(mp, 0.33)
        mp.setattr(_parallel.Team, "_fail", lingering)
        got = _run(path, 2)
    said = [r.getMessage() for r in caplog.records if "processes:" in r.getMessage()]
    assert said and said[0].endswith("part 2/2: read again by this process (its worker failed)")
    assert got == _run(path, 1)
    events: list[str] = got[0]
    return events


def test_a_worker_meeting_a_new_torch_run_in_its_part_leaves_it_to_the_reader_before(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # GIVEN a torch.compile log begun again by another process late in it (in the worker's
    # part of two)
    lines = [_TORCH_PID_RE.sub(r"\g<1>1000 ", x) for x in _new_frames()]
    cut = int(0.8 * len(lines))
    lines[cut:] = [_TORCH_PID_RE.sub(r"\g<1>1001 ", x) for x in lines[cut:]]
    path = tmp_path / "run.log"
    path.write_text("".join(lines))
    # WHEN two processes read it, THEN the worker fails at the new run, the parent reads
    # its part, and the result is one process's, with one new process where the second
    # run begins
    events = _read_with_a_failing_worker(path, caplog)
    assert sum("ProcessStarted(" in e for e in events) == 1


def test_a_worker_meeting_a_new_tensorflow_run_in_its_part_leaves_it_to_the_reader_before(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # GIVEN a TensorFlow run appended to itself many times (each run's clusters compiled "1
    # times" again: a new run each time)
    run = (ROOT / "fixtures" / "tensorflow" / "growing_shape" / "run.log").read_text()
    path = tmp_path / "run.log"
    path.write_text(run * 30)
    # WHEN two processes read it, THEN the worker fails at the first new run in its part,
    # the parent reads it, and the result is one process's, with a new process for each
    # run after the first
    events = _read_with_a_failing_worker(path, caplog)
    assert sum("ProcessStarted(" in e and "new=True" in e for e in events) == 29


def _tf_profiler_line(t: float, cluster: int, times: int) -> str:
    """A TensorFlow profiler line: cluster ``cluster`` compiled ``times`` times by then."""
    return (
        f"I0000 00:00:{1795374628 + t:.6f}   14884 device_compilation_profiler.cc:113] "
        f"Compiled __inference_step_{cluster} {times} times, compile time: 1000 us, "
        "cumulative: 1000 us (0 us / 1 ms)\n"
    )


#: the clusters of the log of the takeover's property test (each process's part holds
#: hundreds of them, and a worker's misses are among them, with 1,200 as with 2,400)
_TAKEOVER_CLUSTERS = 1200


def _tf_clusters(n: int) -> list[str]:
    """A TensorFlow log of ``n`` clusters, each compiled once, every third twice (the
    counts differ: a table whose values were mixed up gives other events)."""
    lines = []
    for i in range(n):
        lines.append(_tf_profiler_line(i * 0.01, i, 1))
        if i % 3 == 0:
            lines.append(_tf_profiler_line(i * 0.01 + 0.005, i, 2))
    return lines


def _few_buckets(mp: pytest.MonkeyPatch, bits: int = 4) -> None:
    """Packed keys in ``2 ** bits`` buckets: a table packed from a few entries on merges its
    new ones at every few more, and a merge's fixed cost is one step per bucket (4,096 of
    them: three quarters of the time of a test that merges hundreds of times)."""
    from recompile_doctor.timeline import packed_keys

    mp.setattr(packed_keys, "BUCKET_BITS", bits)
    mp.setattr(packed_keys, "BUCKETS", 1 << bits)
    mp.setattr(packed_keys, "_SHIFT", 32 - bits)


@settings(
    max_examples=examples(int(os.environ.get("TAKEOVER_EXAMPLES", "25"))),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    again=st.lists(
        st.tuples(st.floats(0.0, 1.0), st.integers(0, _TAKEOVER_CLUSTERS - 1), st.integers(1, 3)),
        max_size=6,
    ),
    cold=st.booleans(),
    **_READERS,
)
def test_a_tensorflow_takeover_with_the_parents_counts_packed_is_the_one_process_result(
    tmp_path_factory: pytest.TempPathFactory,
    again: list[tuple[float, int, int]],
    cold: bool,
    share: float,
    processes: int,
    late: bool,
) -> None:
    # GIVEN a TensorFlow log of a new cluster per compilation, where some clusters are
    # compiled again anywhere later, counted on ("2 times": a name a worker misses where
    # the parent, which read the log from its start, knows its count) or from 1 again (a
    # new run of the process, which only the parent's count tells), WHEN two or three
    # processes read it, the parent's counts packed as soon as it takes over a worker (from
    # 16 entries on: from one on, a table merged its new entries at every eighth more, and
    # this test took twice as long), THEN the result is one process's: its packed table
    # answers the workers' misses, and a write after them (reading on) unpacks it with each
    # count kept
    from recompile_doctor.parsers import _digest_table

    lines = _tf_clusters(_TAKEOVER_CLUSTERS)
    blocks = []
    for where, cluster, times in again:
        at = max(where, (cluster * 4 / 3 + 2) / len(lines))  # (after its first compilations)
        t = at * _TAKEOVER_CLUSTERS * 0.01 + 0.001
        blocks.append((min(at, 1.0), [_tf_profiler_line(t, cluster, times)]))
    path = _with_blocks(tmp_path_factory.mktemp("log") / "run.log", lines, blocks)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_digest_table, "PACK_FROM", 16)
        _few_buckets(mp)
        if cold:  # (the packed counts in a file, in every process: pickled from a worker)
            mp.setattr(_digest_table, "COLD_FROM", 1)
        _same_as_one_process(path, share, processes, late)


@pytest.mark.parametrize("cold_from", [1, 10**9])
@pytest.mark.parametrize("times", [1, 3])
def test_the_parent_packs_its_counts_while_it_takes_over_a_tensorflow_worker(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    times: int,
    cold_from: int,
) -> None:
    # GIVEN a TensorFlow log of a new cluster per compilation, one of the parent's part
    # compiled again in the worker's part: "1 times" (a new run of the process, which only
    # the parent's count of it tells) or "3 times" (counted on from the parent's 2), then
    # two more "2 times" (a new run after the parent's count of 2, not after a new run; a
    # count on after its 1)
    import logging

    from recompile_doctor.parsers import _digest_table

    lines = _tf_clusters(2400)
    lines[2600:2600] = [
        _tf_profiler_line(26.0, 600, times),
        _tf_profiler_line(26.1, 603, 2),
        _tf_profiler_line(26.2, 604, 2),
    ]
    path = tmp_path / "run.log"
    path.write_text("".join(lines))
    one = _run(path, 1)
    packed: list[int] = []
    pack = _digest_table.DigestTable.pack

    def counted(table: _digest_table.DigestTable) -> None:
        pack(table)
        if table.packed():
            packed.append(len(table))

    monkeypatch.setattr(_digest_table.DigestTable, "pack", counted)
    monkeypatch.setattr(_digest_table, "PACK_FROM", 1)
    monkeypatch.setattr(_digest_table, "COLD_FROM", cold_from)  # (1: in a file)
    _few_buckets(monkeypatch)
    _share(monkeypatch, 0.5)
    caplog.set_level(logging.INFO, logger="recompile_doctor")
    # WHEN two processes read it, THEN the parent packs its counts when it takes over the
    # worker's events, finds the worker's miss in them and reads on (unpacked by its next
    # count), and the result is one process's
    got = _run(path, 2)
    assert got == one
    assert packed and packed[0] >= 1000, packed
    said = [r.getMessage() for r in caplog.records if "processes:" in r.getMessage()]
    assert "missed a name this process knew" in said[0] and "line 2,601" in said[0], said
    assert sum("new=True" in e for e in got[0]) == 1


def _jax_new_functions(n: int) -> list[str]:
    """A bare JAX log (no time stamps) of a new function per compilation, each explained
    first (``jax_explain_cache_misses``), with lines of the program between."""
    out: list[str] = []
    for i in range(n):
        fn = f"step_{i:05d}"
        out += [
            "TRACING CACHE MISS at /tmp/run.py:10:4 (main):\n",
            "  never seen function:\n",
            f"    {fn} id=1400 defined at /tmp/run.py:3\n",
            f"loss {i} 0.25\n",
            f"Finished tracing {fn} for jit in 0.001 sec\n",
            f"Compiling jit({fn}) with global shapes and types (ShapedArray(float32[4]),). "
            "Argument mapping: (UnspecifiedValue,).\n",
            f"loss {i} 0.50\n",
            f"Finished XLA compilation of jit({fn}) in 0.01 sec\n",
        ]
    return out


@pytest.mark.parametrize("seams", [True, False], ids=["at a seam", "without seams"])
def test_a_jax_part_begins_at_an_explanation_not_between_it_and_its_compilation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seams: bool
) -> None:
    # GIVEN a bare JAX log of a new function per compilation, each explained before it is
    # compiled, past the lines where the decoder stops looking for time stamps, and the
    # worker's share ending between an explanation and its compilation, WHEN two processes
    # read it, THEN the part begins at the next explanation and the parent takes the
    # worker's part over; without the format's seams the worker takes the function it never
    # saw named for an eager operation, and the parent reads the part again.  Either way
    # the result is one process's
    from recompile_doctor.parsers.jax import JaxDecoder

    path = tmp_path / "run.log"
    lines = _jax_new_functions(400)
    path.write_text("".join(lines))
    misses = [i for i, line in enumerate(lines) if line.startswith("TRACING CACHE MISS")]
    k = next(i for i in misses if i > 2_000)
    if not seams:
        monkeypatch.setattr(JaxDecoder, "PART_SEAMS", ())
    seam = next(i for i in misses if i > k)
    # (split before its tracing)
    spy = _read_split_before(path, lines, k + 3, seam if seams else k + 3, monkeypatch)
    assert spy.adopted["jax"] == (1 if seams else 0)


def test_a_bare_jax_log_s_decoder_stops_looking_for_stamps_at_any_line_past_the_first_ones() -> (
    None
):
    # GIVEN two JAX decoders of a bare log (no time stamps): one from its first line, one
    # from the middle (a worker's), fed only JAX lines past the lines looked at for stamps
    from recompile_doctor.parsers import _checkpoint
    from recompile_doctor.parsers.jax import _LOOK_FOR_STAMPS, JaxDecoder

    lines = _jax_new_functions(300)
    start = next(
        i for i, line in enumerate(lines) if i > _LOOK_FOR_STAMPS + 50 and "TRACING" in line
    )
    reader, worker = JaxDecoder("a.log"), JaxDecoder("a.log")
    for n, line in enumerate(lines[:start], 1):
        if line.startswith("loss"):
            reader.skipped(n, line)
        else:
            reader.decode(n, line)
    # WHEN the worker reads JAX lines only (no line it would skip) from there on
    for n, line in enumerate(lines[start : start + 4], start + 1):
        if not line.startswith("loss"):
            reader.decode(n, line)
            worker.decode(n, line)
    # THEN both stopped looking for stamps, and their states meet (the reader's names
    # are a superset of the worker's)
    assert reader.wants_skipped == worker.wants_skipped == "none"
    lookups = _checkpoint.lookups_of(reader)
    assert _checkpoint.agrees(
        _checkpoint.checkpoint(reader), _checkpoint.checkpoint(worker), lookups
    )
