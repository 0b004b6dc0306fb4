"""Memory does not grow with the number of report events: past a threshold they go to a
nameless temporary file in the system's temporary folder and are read back when rendered;
what the timeline keeps per compilation (lookups, reasons, notes) is packed.  The report is
the same either way, and no temporary file outlives the run, whether it succeeds or fails."""

from __future__ import annotations

import enum
import gc
import os
from decimal import Decimal
from pathlib import Path
from typing import Any, NamedTuple

import pytest
from hypothesis import given
from hypothesis import strategies as st

from recompile_doctor import analyze
from recompile_doctor.errors import RecompileDoctorError
from recompile_doctor.model import Event
from recompile_doctor.timeline import packed, spool
from recompile_doctor.timeline.blobs import Blob, Blobs
from recompile_doctor.timeline.packed import PACK_CHARS, Packed
from recompile_doctor.timeline.spool import EventSpool, ReportEvents
from tests.conftest import POPLAR_RUN, long_jax_log


def _open_files_under(folder: Path) -> list[str]:
    """Files under ``folder`` this process has open (Linux: /proc/self/fd)."""
    out = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target.startswith(str(folder)):
            out.append(target)
    return out


@pytest.fixture
def small_spool(monkeypatch: pytest.MonkeyPatch, own_tempdir: Path) -> Path:
    """Spool after 50 events, in chunks of 16, pack chunks of 8, temporary files in a
    folder of the test's own."""
    monkeypatch.setattr(spool, "SPOOL_AFTER", 50)
    monkeypatch.setattr(spool, "CHUNK", 16)
    monkeypatch.setattr(packed, "PACK_CHUNK", 8)
    monkeypatch.setattr(packed, "PLAIN_CHUNKS", 1)
    return own_tempdir


def test_spooled_report_is_the_in_memory_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN a long JAX log and a Poplar run with loads, analyzed with everything in memory
    logs = [long_jax_log(tmp_path, 40), POPLAR_RUN]
    monkeypatch.setattr(spool, "SPOOL_AFTER", 10**9)
    monkeypatch.setattr(packed, "PACK_CHUNK", 10**9)
    in_memory = [analyze([str(log)]) for log in logs]
    assert not any(r.events.spooled for r in in_memory)  # type: ignore[attr-defined]
    # WHEN they are analyzed again with a small spool and small packs
    monkeypatch.setattr(spool, "SPOOL_AFTER", 50)
    monkeypatch.setattr(spool, "CHUNK", 16)
    monkeypatch.setattr(packed, "PACK_CHUNK", 8)
    monkeypatch.setattr(packed, "PLAIN_CHUNKS", 1)
    spooled = [analyze([str(log)]) for log in logs]
    # THEN the events went to the spool, and the saved reports are byte for byte the same
    assert spooled[0].events.spooled  # type: ignore[attr-defined]
    for a, b in zip(in_memory, spooled, strict=True):
        assert len(b.events) > 0
        assert a.dumps() == b.dumps()
        assert list(a.events) == list(b.events) and b.events == a.events
        assert b.events[-1] == list(a.events)[-1]
    for r in (*in_memory, *spooled):
        r.close()


def test_spool_is_nameless_and_closed_with_the_report(tmp_path: Path, small_spool: Path) -> None:
    # GIVEN a long log analyzed with a small spool
    r = analyze([str(long_jax_log(tmp_path, 40))])
    assert r.events.spooled  # type: ignore[attr-defined]
    # THEN the spool sits in the temporary folder (never next to the input) with no name
    assert os.listdir(small_spool) == []
    assert sorted(os.listdir(tmp_path)) == ["long.log", "temp"]
    if os.path.isdir("/proc/self/fd"):
        assert len(_open_files_under(small_spool)) == 1
    # WHEN the report is dropped THEN its file is closed
    del r
    gc.collect()
    if os.path.isdir("/proc/self/fd"):
        assert _open_files_under(small_spool) == []


def test_spool_is_closed_when_the_report_is_closed_or_its_with_block_ends(
    tmp_path: Path, small_spool: Path
) -> None:
    # GIVEN a long log analyzed with a small spool, used in a with block
    log = str(long_jax_log(tmp_path, 40))
    with analyze([log]) as r:
        assert r.events.spooled  # type: ignore[attr-defined]
        n = len(list(r.events))
        if os.path.isdir("/proc/self/fd"):
            assert len(_open_files_under(small_spool)) == 1
    # WHEN the block ends THEN the file is closed while the report is still held
    assert n > 50
    if os.path.isdir("/proc/self/fd"):
        assert _open_files_under(small_spool) == []
    with pytest.raises(ValueError, match="closed"):
        list(r.events)
    # AND close() does the same, any number of times, spooled or not
    other = analyze([log])
    other.close()
    other.close()
    if os.path.isdir("/proc/self/fd"):
        assert _open_files_under(small_spool) == []
    analyze([str(POPLAR_RUN)]).close()


def test_spool_is_removed_when_the_analysis_fails(
    tmp_path: Path, small_spool: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN a parser that fails after many events, once the spool has a file (and the
    # compilations and the reasons' numbers theirs)
    from recompile_doctor import api
    from recompile_doctor.timeline import column

    monkeypatch.setattr(column, "SPILL_AFTER", 3)
    monkeypatch.setattr(column, "CHUNK_ROWS", 2)

    real = api.parse_log_runs

    def failing(*args: object, **kwargs: object):  # type: ignore[no-untyped-def]
        yield from real(*args, **kwargs)  # type: ignore[arg-type]
        raise RecompileDoctorError("broken at the end", path="long.log")

    monkeypatch.setattr(api, "parse_log_runs", failing)
    # WHEN the analysis runs THEN the error comes through
    with pytest.raises(RecompileDoctorError) as info:
        analyze([str(long_jax_log(tmp_path, 40))])
    # AND no spool file is open or left, even while the error (and its frames) is alive
    assert info.value is not None
    assert os.listdir(small_spool) == []
    if os.path.isdir("/proc/self/fd"):
        assert _open_files_under(small_spool) == []


def _event(source: str, line: int) -> Event:
    return Event("compile-begin", source, line, None, f"line {line}", detail={"n": line})


def test_events_out_of_log_order_are_sorted_as_before(small_spool: Path) -> None:
    # GIVEN events that arrive out of line order, more than the spool keeps in memory
    lines = [*range(200, 100, -1), *range(1, 60)]
    sp = EventSpool(spool_after=20)
    for n in lines:
        sp.append(_event("a.log", n))
    loads = [_event("a.log", 150), _event("a.log", 5)]
    # WHEN they become the report's events
    events = ReportEvents(sp, loads, {"a.log": 0})
    # THEN they are in (input, line) order, a spooled event before a load on the same line
    expected = sorted([_event("a.log", n) for n in lines] + loads, key=lambda e: e.line)
    assert list(events) == expected
    assert len(events) == len(expected)


@given(
    st.lists(
        st.tuples(st.sampled_from(["a.log", "b.log"]), st.integers(1, 40), st.integers(0, 3)),
        max_size=80,
    ),
    st.integers(1, 12),
)
def test_events_come_back_in_the_order_a_stable_sort_gives(
    items: list[tuple[str, int, int]], spool_after: int
) -> None:
    """GIVEN events in any order, mostly in log order with some a little late (as a decoder
    gives a reason once its compilation has begun), some far out, of long lines and short,
    WHEN spooled with a small threshold (in events and in characters), THEN they read back
    as a stable sort by (input, line) orders them: a late event put in its place while it
    is among those in memory, the rest sorted at the end."""

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(spool, "CHUNK", 4)
        mp.setattr(spool, "SPOOL_CHARS", 50)
        sp = EventSpool(spool_after=spool_after)
        events = [
            Event("compile-begin", src, n, None, "x" * (20 * size), detail={"k": i})
            for i, (src, n, size) in enumerate(items)
        ]
        for ev in events:
            sp.append(ev)
        order = {"a.log": 0, "b.log": 1}

        def key(e: Event) -> tuple[int, int]:
            return (order[e.source], e.line)

        # (the spool reads back in an order a stable sort takes as the arrival order: what
        # the report sorts when the events are out of order across inputs)
        assert sorted(sp, key=key) == sorted(events, key=key)
        got = list(ReportEvents(sp, (), order))
        sp.close()
    assert got == sorted(events, key=key)


def test_events_held_to_the_end_keep_the_others_streamed(small_spool: Path) -> None:
    # GIVEN events in log order, spooled, then reasons a decoder held to the end of its
    # input (the torch decoders' finish), in the order of their lines, one on a line that
    # already has an event, and a load on a line of its own
    sp = EventSpool(spool_after=20)
    for n in range(1, 100):
        sp.append(_event("a.log", n))
    late = [_event("a.log", n) for n in (5, 40, 41, 60, 97)]
    for ev in late:
        sp.append(ev)
    loads = [_event("a.log", 41)]
    # WHEN they become the report's events
    events = ReportEvents(sp, loads, {"a.log": 0})
    # THEN those whose place was written went to their own spool (the last, whose place is
    # still in memory, was put there), and nothing is sorted in memory
    assert sp.late is not None and len(sp.late) == 4 and events._sorted is None
    # AND they read back as a stable sort of everything, late and loads included
    expected = sorted(
        [_event("a.log", n) for n in range(1, 100)] + late + loads, key=lambda e: e.line
    )
    assert list(events) == expected and len(events) == len(expected) == len(sp) + 1
    # AND the spool itself still reads in arrival order
    assert [e.line for e in sp] == [*range(1, 98), 97, 98, 99, 5, 40, 41, 60]
    events.close()
    with pytest.raises(ValueError, match="closed"):
        list(events)


def test_an_event_a_little_late_keeps_the_events_streamed(small_spool: Path) -> None:
    # GIVEN events in log order but for one reason given after the compilation it explains
    # began, right after the spool started writing to its file
    sp = EventSpool(spool_after=20)
    lines = [*range(1, 22), 23, 22, *range(24, 60)]
    for n in lines:
        sp.append(_event("a.log", n))
    # WHEN they become the report's events, THEN they are streamed back (not sorted in
    # memory), in order
    events = ReportEvents(sp, (), {"a.log": 0})
    assert sp.spooled and sp.in_order({"a.log": 0})
    assert [e.line for e in events] == list(range(1, 60))
    events.close()


def test_events_of_long_lines_go_to_the_file_by_their_size(small_spool: Path) -> None:
    # GIVEN events of 100 kB lines (a TORCH_TRACE record), fewer than the spool keeps
    sp = EventSpool(spool_after=4096)
    for n in range(1, 200):
        sp.append(Event("compile-end", "a.log", n, None, "y" * 100_000))
        # THEN no more than about SPOOL_CHARS of their lines stay in memory
        assert sum(len(e.text) for e in sp._buffer) <= spool.SPOOL_CHARS + 100_000
    assert sp.spooled
    # AND each chunk written (read back at once) holds no more than that either
    assert max(length for _, _, length in sp._chunks) <= spool.SPOOL_CHARS + 200_000
    assert [e.line for e in sp] == list(range(1, 200))
    sp.close()


def test_events_of_several_inputs_follow_the_input_order(small_spool: Path) -> None:
    # GIVEN events of two inputs, spooled, with the loads of both
    sp = EventSpool(spool_after=4)
    for src in ("b.log", "a.log"):
        for n in range(1, 30, 3):
            sp.append(_event(src, n))
    loads = [_event("a.log", 2), _event("b.log", 2)]
    # WHEN read back with b.log first
    got = list(ReportEvents(sp, loads, {"b.log": 0, "a.log": 1}))
    # THEN b.log's events come first, each load among its input's lines
    assert [(e.source, e.line) for e in got][:3] == [("b.log", 1), ("b.log", 2), ("b.log", 4)]
    assert ("a.log", 2) in [(e.source, e.line) for e in got[10:13]]
    assert len(got) == 22


@given(
    st.lists(st.tuples(st.text(max_size=5), st.integers())), st.integers(1, 7), st.integers(0, 3)
)
def test_packed_reads_back_what_was_appended(
    items: list[tuple[str, int]], size: int, plain: int
) -> None:
    # GIVEN items appended to a packed sequence with tiny chunks, the first few left plain
    p: Packed[tuple[str, int]] = Packed(chunk=size, plain=plain)
    for it in items:
        p.append(it)
    # THEN it reads back the same, by iteration and by index
    assert list(p) == items and p == items and len(p) == len(items)
    for i in range(-len(items), len(items)):
        assert p[i] == items[i]
    # AND an item can be replaced wherever it is
    expected = list(items)
    for i in sorted({0, len(items) // 2, len(items) - 1}):
        if 0 <= i < len(items):  # (in a plain chunk, a packed one or the tail)
            p[i] = expected[i] = ("new", i)
    assert list(p) == expected and [p[i] for i in range(len(items))] == expected
    with pytest.raises(IndexError):
        p[len(items)]
    # AND a copy for another process carries the items, packed as they were
    import pickle

    copy = pickle.loads(pickle.dumps(p))
    assert isinstance(copy, Packed) and copy == expected and repr(copy) == repr(p)
    p.close()
    copy.close()


@given(
    st.lists(
        st.tuples(
            st.text(max_size=3),
            st.sampled_from([0, 1, PACK_CHARS // 3, PACK_CHARS - 1, PACK_CHARS]),
        )
    ),
    st.integers(1, 7),
    st.integers(0, 3),
)
def test_packed_chunks_are_bounded_by_the_characters_of_their_items(
    items: list[tuple[str, int]], size: int, plain: int
) -> None:
    """GIVEN items some of which hold a good part of PACK_CHARS characters (their number)
    WHEN they are appended, each with its characters, THEN no chunk holds more than its items nor, but for its last
    item, PACK_CHARS; the first chunks are plain; and the sequence reads back the same by
    iteration, by index, once items are replaced and once copied."""
    p: Packed[tuple[str, int]] = Packed(chunk=size, plain=plain)
    for it in items:
        p.append(it, it[1])
    chunks = [Packed._unpacked(p, c) for c in p._chunks]
    assert sum(map(len, chunks)) + len(p._tail) == len(items)
    for c in [*chunks, p._tail]:
        assert 0 < len(c) <= size or c is p._tail
        assert sum(x[1] for x in c[:-1]) < PACK_CHARS
    assert [isinstance(c, list) for c in p._chunks] == [k < plain for k in range(len(chunks))]
    assert list(p) == items and len(p) == len(items)
    assert [p[i] for i in range(-len(items), len(items))] == items + items
    expected = list(items)
    for i in sorted({0, len(items) // 3, len(items) // 2, len(items) - 1}):
        if 0 <= i < len(items):
            p[i] = expected[i] = ("new", i)
    assert [p[i] for i in range(len(items))] == expected == list(p)
    with pytest.raises(IndexError):
        p[len(items)]
    import pickle

    copy = pickle.loads(pickle.dumps(p))
    assert isinstance(copy, Packed) and copy == expected
    assert [len(Packed._unpacked(copy, c)) for c in copy._chunks] == list(map(len, chunks))
    p.close()
    copy.close()


class _Row(NamedTuple):
    name: str
    n: int
    t: float | None
    flag: bool
    extra: object = None


_ROW_VALUES = st.one_of(st.none(), st.integers(), st.text(max_size=3), st.booleans())


@given(
    st.lists(
        st.builds(
            _Row,
            st.text(max_size=5),
            st.integers(),
            st.none() | st.floats(allow_nan=False),
            st.booleans(),
            # mostly a plain value; now and then one marshal does not write (a frozenset
            # of frozensets is fine, a Decimal or a row inside a row is not)
            _ROW_VALUES | st.just(Decimal("1.5")) | st.just(_Row("x", 1, None, True)),
        )
        | st.tuples(st.text(max_size=2), st.integers())
        | st.builds(
            lambda r: r._replace(name=_Str(r.name)),
            st.builds(
                _Row, st.text(max_size=2), st.integers(), st.none(), st.booleans(), st.none()
            ),
        ),
        max_size=40,
    ),
    st.integers(1, 7),
)
def test_packed_rows_read_back_as_they_were_appended(items: list[Any], size: int) -> None:
    # GIVEN named tuples packed as columns (none left plain), some chunks holding a value
    # marshal does not write, an item of another class, or a string of a subclass
    p: Packed[Any] = Packed(chunk=size, plain=0, rows=_Row)
    for it in items:
        p.append(it)
    # THEN every item reads back equal and of its own class, its values of their own types
    # (a bool stays a bool, a string subclass its subclass), by iteration and by index
    for got in (list(p), [p[i] for i in range(len(items))]):
        assert got == items
        assert [type(x) for x in got] == [type(x) for x in items]
        assert [[type(v) for v in x] for x in got] == [[type(v) for v in x] for x in items]
    p.close()


def test_packed_rows_are_packed_as_columns_when_plain() -> None:
    # GIVEN named tuples of plain values, and strings, each in a sequence packed by rows
    rows: Packed[_Row] = Packed(chunk=4, plain=0, rows=_Row)
    names: Packed[str] = Packed(chunk=4, plain=0, rows=str)
    for i in range(8):
        rows.append(_Row(f"m{i}", i, i / 2, i % 2 == 0))
        names.append(f"m{i}")
    # THEN their chunks are marshalled columns, not pickles
    for seq in (rows, names):
        assert [Blobs.get(c)[:1] for c in seq._chunks] == [b"C", b"C"]  # type: ignore[arg-type]
    assert list(rows)[5] == _Row("m5", 5, 2.5, False) and list(names) == [f"m{i}" for i in range(8)]
    rows.close()
    names.close()


class _Str(str):
    pass


class _Level(enum.Enum):
    DEBUG = "debug"


_DETAIL_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=3),
    lambda inner: st.lists(inner, max_size=3) | st.tuples(inner, inner),
    max_leaves=6,
)


@given(
    st.lists(
        st.tuples(
            st.integers(1, 50),
            st.dictionaries(
                st.sampled_from(["a", "lines", "rule"]),
                _DETAIL_VALUES | st.just(_Level.DEBUG) | st.builds(_Str, st.text(max_size=2)),
                max_size=3,
            ),
        ),
        max_size=30,
    )
)
def test_spooled_events_read_back_with_their_values_types(
    rows: list[tuple[int, dict[str, Any]]],
) -> None:
    # GIVEN events spooled in chunks of 4 from the first, their details holding plain
    # values (marshalled chunks), or a value marshal does not write (an enum, a string of
    # a subclass: that chunk pickled)
    sp = EventSpool(spool_after=4)
    events = [
        Event("k", "run.log", line, 0.5, f"line {line}", None, None, detail)
        for line, detail in sorted(rows, key=lambda r: r[0])
    ]
    old_chunk = spool.CHUNK
    spool.CHUNK = 4
    try:
        for ev in events:
            sp.append(ev)
        got = list(sp)
    finally:
        spool.CHUNK = old_chunk
        sp.close()

    # THEN each reads back equal, every value of its own type (a bool stays a bool, a
    # tuple a tuple, the enum and the subclass theirs) and in its dict's order
    def shape(v: Any) -> Any:
        if isinstance(v, (list, tuple)):
            return (type(v), [shape(x) for x in v])
        if isinstance(v, dict):
            return (type(v), [(k, shape(x)) for k, x in v.items()])
        return type(v), v if v == v else "nan"

    assert [shape(tuple(e)) for e in got] == [shape(tuple(e)) for e in events]
    assert all(type(e) is Event for e in got)


def test_spooled_chunks_are_marshalled_when_plain(small_spool: Path) -> None:
    # GIVEN 100 events of plain details, one of them holding an enum
    sp = EventSpool()
    for i in range(100):
        detail: dict[str, Any] = {"n": i, "lines": [i], "first": i == 0}
        if i == 70:
            detail["level"] = _Level.DEBUG
        sp.append(Event("k", "run.log", i + 1, None, f"line {i}", None, None, detail))
    # THEN the chunks of plain rows were marshalled, the enum's pickled, and all read back
    tags = [Blobs.get(c)[:1] for c in sp._chunks]
    assert tags.count(b"P") == 1 and set(tags) == {b"M", b"P"}
    got = list(sp)
    assert [e.line for e in got] == list(range(1, 101)) and got[70].detail["level"] is _Level.DEBUG
    sp.close()


def test_packed_chunks_read_from_two_places_at_once_are_unpacked_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # GIVEN 40 packed chunks of 10 items (a torch run's reasons: those given in time, then
    # those held to the end of the log)
    p: Packed[int] = Packed(chunk=10, plain=0)
    for n in range(400):
        p.append(n)
    unpacked: list[int] = []
    real = Blobs.get

    def counting(blob: Blob) -> bytes:
        unpacked.append(1)
        return real(blob)

    # (a packed chunk's bytes are read from the blobs once per unpacking: counted there,
    # where compiled code calls too)
    monkeypatch.setattr(Blobs, "get", staticmethod(counting))
    # WHEN they are read in the order of their compilations: one from the first half, one
    # from the second, and so on
    got = [p[i + half] for i in range(200) for half in (0, 200)]
    # THEN each chunk is unpacked once (it was once per item: 400 unpacks, not 40)
    assert got == [i + half for i in range(200) for half in (0, 200)]
    assert len(unpacked) == 40
    p.close()


def test_packed_chunks_are_kept_in_a_file_not_in_memory(small_spool: Path) -> None:
    # GIVEN a packed sequence of 100 items in chunks of 8, the first chunk plain
    p: Packed[str] = Packed()
    for n in range(100):
        p.append(f"item {n}")
    # THEN its packed chunks are places in one nameless temporary file, not bytes
    assert isinstance(p._chunks[0], list)
    assert all(isinstance(c, tuple) and len(c) == 3 for c in p._chunks[1:])
    assert len({c[0] for c in p._chunks[1:]}) == 1  # type: ignore[index]
    assert os.listdir(small_spool) == []
    if os.path.isdir("/proc/self/fd"):
        assert len(_open_files_under(small_spool)) == 1
    assert p[50] == "item 50" and list(p) == [f"item {n}" for n in range(100)]
    # WHEN it is closed THEN its file is gone and a packed chunk cannot be read any more
    p.close()
    if os.path.isdir("/proc/self/fd"):
        assert _open_files_under(small_spool) == []
    assert p[3] == "item 3"  # (the plain chunk)
    with pytest.raises(ValueError):
        p[60]


def test_blobs_written_after_a_fork_go_to_a_file_of_their_own(
    small_spool: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from recompile_doctor.timeline.blobs import Blobs

    # GIVEN blobs written by this process
    b = Blobs("rd-test-")
    first = b.put(b"before the fork")
    # WHEN another process (a fork: another pid) writes
    pid = os.getpid()
    monkeypatch.setattr(os, "getpid", lambda: pid + 1)
    second = b.put(b"after")
    # THEN its blob is in a new file, from its start, and both read back
    assert second[0] is not first[0] and second[1:] == (0, 5)
    assert Blobs.get(first) == b"before the fork" and Blobs.get(second) == b"after"
    # AND closing closes both files
    b.close()
    with pytest.raises(ValueError):
        Blobs.get(first)
    with pytest.raises(ValueError):
        Blobs.get(second)


def test_spooled_events_travel_to_another_process_whole(tmp_path: Path, small_spool: Path) -> None:
    import pickle

    # GIVEN a report whose events are spooled
    r = analyze([str(long_jax_log(tmp_path, 40))])
    # WHEN it is pickled (as for a worker process) and its spool closed
    copy = pickle.loads(pickle.dumps(r))
    r.events.close()  # type: ignore[attr-defined]
    # THEN the copy still has every event, and the closed one refuses to be read
    assert copy.dumps() == analyze([str(long_jax_log(tmp_path, 40))]).dumps()
    with pytest.raises(ValueError):
        list(r.events)


@given(st.lists(st.tuples(st.sampled_from(["a.log", "b.log"]), st.integers(1, 30)), max_size=60))
def test_capped_evidence_is_the_first_lines_of_all(keys: list[tuple[str, int]]) -> None:
    from recompile_doctor.analyses.capped import MAX_EVIDENCE, cap
    from recompile_doctor.model import Evidence

    # GIVEN evidence lines in any order, some repeated (the repeat with other text)
    evidence = [Evidence(src, line, f"text {n}") for n, (src, line) in enumerate(keys)]
    # WHEN they are capped, streaming
    got = cap(iter(evidence))
    # THEN it is the first MAX_EVIDENCE distinct lines in input order, each as first seen
    first: dict[tuple[str, int], Evidence] = {}
    for e in evidence:
        first.setdefault((e.source, e.line), e)
    assert got == tuple(first[k] for k in sorted(first)[:MAX_EVIDENCE])


def test_spool_and_gzip_size_without_pread(
    tmp_path: Path, small_spool: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import gzip

    from recompile_doctor.parsers import _reader

    # GIVEN a long JAX log, gzipped, analyzed with a small spool where the system has pread
    log = tmp_path / "long.log.gz"
    log.write_bytes(gzip.compress(long_jax_log(tmp_path, 40).read_bytes()))
    with analyze([str(log)]) as report:
        expected = report.dumps()
        assert report.events.spooled  # type: ignore[attr-defined]
    with open(log, "rb") as raw:
        size = _reader.gzip_text_size(_reader.decompressed(raw, str(log)))
    assert size == len(gzip.decompress(log.read_bytes()))
    # WHEN the system has no pread (Windows)
    monkeypatch.delattr(os, "pread")
    # THEN the spool reads back by seeking, the trailer is read the same way, and the
    # report is the same
    with open(log, "rb") as raw:
        f = _reader.decompressed(raw, str(log))
        before = f.read(100)
        assert _reader.gzip_text_size(f) == size
        assert f.read(100) == gzip.decompress(log.read_bytes())[100:200]  # (not moved)
        assert before
    with analyze([str(log)]) as report:
        assert report.dumps() == expected


def test_repeated_compile_lines_are_kept_once(tmp_path: Path) -> None:
    """A run that compiles the same signatures again and again keeps one copy of each line:
    the report's compilations share their text, and are equal to what they were."""
    log = long_jax_log(tmp_path, 40)
    with analyze(log) as report:
        comps = report.compilations
        by_text: dict[str, set[int]] = {}
        for c in comps:
            by_text.setdefault(c.text, set()).add(id(c.text))
        assert len(comps) > 2 * len(by_text)  # (the same lines, 40 times)
        assert all(len(ids) == 1 for ids in by_text.values())


def test_one_copy_is_bounded_and_gives_equal_strings() -> None:
    from recompile_doctor.bounded import KEPT_MAX
    from recompile_doctor.timeline.builder import OneCopy

    one = OneCopy()
    first = one("".join(["Compiling ", "jit(f)"]))
    assert one("".join(["Compiling ", "jit(f)"])) is first
    assert one(None) is None
    for i in range(KEPT_MAX + 10):  # a run whose lines all differ
        assert one(f"line {i}") == f"line {i}"
    assert len(one._seen) <= KEPT_MAX
    again = one("".join(["Compiling ", "jit(f)"]))
    assert again == first and again is not first  # forgotten: the table stays bounded


def test_one_copy_is_bounded_in_characters_too() -> None:
    """GIVEN lines longer than OneCopy keeps, and lines that fill its characters WHEN
    each is given THEN a long one is given back as it is, not remembered, and the table
    never holds more than KEY_CHARS characters (each line of a MiB was kept: 4 GB)."""
    from recompile_doctor.bounded import KEY_CHARS, KEY_LONGEST
    from recompile_doctor.timeline.builder import OneCopy

    one = OneCopy()
    long = "x" * (KEY_LONGEST + 1)
    assert one(long) is long and not one._seen
    assert one("".join(["y" * KEY_LONGEST])) == "y" * KEY_LONGEST and one._seen
    for i in range(2 * KEY_CHARS // KEY_LONGEST):
        got = one(f"{i:08d}" * (KEY_LONGEST // 8))
        assert got == f"{i:08d}" * (KEY_LONGEST // 8)
        assert sum(map(len, one._seen)) <= KEY_CHARS
    short = one("".join(["Compiling ", "jit(g)"]))
    assert one("".join(["Compiling ", "jit(g)"])) is short  # (short ones still one copy)


def test_a_written_out_copy_is_dataclasses_replace() -> None:
    """The timeline's copies with fields changed (slots set directly: ``replacer``) equal
    ``dataclasses.replace``'s, for a class with inherited fields too."""
    import dataclasses

    from recompile_doctor.events import CacheLookup, CompileKey, Span
    from recompile_doctor.model import Compilation
    from recompile_doctor.slotted import replacer

    c = Compilation(5, "jit_f", None, "a.log", 1000, 1.0, 0.5, "miss", False, text="Compiling")
    with_cause = replacer(Compilation, ("cause",))
    assert with_cause(c, "batch-size") == dataclasses.replace(c, cause="batch-size")
    assert with_cause(c, "batch-size") is not c and c.cause is None
    rec = Event("cache", "a.log", 3, None, "Loaded x from y")
    span = Span("a.log", 3, "Loaded x from y")
    lk = CacheLookup(span, rec, "executable", "hit", keep=False)
    key = CompileKey("x", None)
    got = replacer(CacheLookup, ("record", "key"))(lk, None, key)
    assert got == dataclasses.replace(lk, record=None, key=key)
    assert got.keep is False and got.span is lk.span
    with pytest.raises(TypeError, match="no field 'nope'"):
        replacer(Compilation, ("nope",))

    @dataclasses.dataclass(frozen=True)
    class Plain:  # not slotted: refused (dataclasses.replace is the way for it)
        a: int
        b: int = 0

    with pytest.raises(TypeError, match="not a slotted dataclass"):
        replacer(Plain, ("b",))


def test_a_full_disk_while_spilling_is_a_one_line_error(
    tmp_path: Path,
    small_spool: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    import errno

    from recompile_doctor.timeline import blobs
    from tests.conftest import run_cli

    # GIVEN a temporary folder whose disk is full
    def full(*args: object) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(blobs, "_write", full)
    # WHEN a log long enough to spool its events is analyzed
    code, out, err = run_cli("analyze", str(long_jax_log(tmp_path, 40)), capsys=capsys)
    # THEN the error is one line naming the temporary folder, not the log, and exit code 2
    assert code == 2 and out == ""
    assert err.strip().count("\n") == 0 and "Traceback" not in err
    assert "temporary folder" in err and os.strerror(errno.ENOSPC) in err
    assert "long" not in err.split("error:")[1].split(":")[0]


def test_the_builder_s_recent_modules_hold_a_bounded_number_of_characters() -> None:
    """GIVEN a run that compiles 300 modules of 8,000-character names, then one of 2 M
    characters, THEN the builder keeps the most recent ones whose names hold OPEN_CHARS
    characters at most (and the last whatever its length), and the count of their
    characters is theirs."""
    from recompile_doctor.events import CompileKey, CompileStarted, Span
    from recompile_doctor.timeline import TimelineBuilder
    from recompile_doctor.timeline import builder as builder_module

    b = TimelineBuilder(None)
    names = [f"m{i:03d}" + "x" * 7_996 for i in range(300)]
    for i, name in enumerate(names):
        sp = Span("a.log", i + 1, f"Compiling {i}", float(i))
        b.feed(CompileStarted(sp, None, CompileKey("tensorflow", "f", name)))
    proc = b._procs[0]
    kept = builder_module.OPEN_CHARS // 8_000
    assert list(proc.open) == names[-kept:]
    assert proc.open_chars == sum(map(len, proc.open)) <= builder_module.OPEN_CHARS
    # a module opened again moves to the end, counted once
    sp = Span("a.log", 301, "Compiling again", 300.0)
    b.feed(CompileStarted(sp, None, CompileKey("tensorflow", "f", names[-kept])))
    assert list(proc.open)[-1] == names[-kept]
    assert proc.open_chars == sum(map(len, proc.open))
    huge = "h" * (2 << 20)
    sp = Span("a.log", 302, "Compiling huge", 301.0)
    b.feed(CompileStarted(sp, None, CompileKey("tensorflow", "f", huge)))
    assert list(proc.open) == [huge] and proc.open_chars == len(huge)
    assert b.finish().compilations[-1].module == huge


def test_the_builder_remembers_recent_modules_and_keys_only() -> None:
    """GIVEN a run that compiles 5,000 differently named modules, each with its own compile
    id, THEN the builder keeps at most OPEN_KEPT modules open per process and KEPT_MAX
    keys, finds every compilation again by its compile id, and a finish line naming a
    recent module (not the last) still closes that module's compilation."""
    from recompile_doctor.bounded import KEPT_MAX
    from recompile_doctor.events import CompileFinished, CompileKey, CompileStarted, Span
    from recompile_doctor.timeline import TimelineBuilder
    from recompile_doctor.timeline import builder as builder_module

    b = TimelineBuilder(None)
    n = 5_000
    for i in range(n):
        sp = Span("a.log", 2 * i + 1, f"Compiling m{i}", float(i))
        b.feed(CompileStarted(sp, None, CompileKey("tensorflow", "f", f"m{i}", compile_id=f"c{i}")))
    proc = b._procs[0]
    assert len(proc.open) == builder_module.OPEN_KEPT
    assert len(b._keys) <= KEPT_MAX
    found = [b._same(("tensorflow", None, f"c{i}"), proc) for i in (0, 777, n - 1)]
    assert [c.id if c is not None else None for c in found] == [0, 777, n - 1]
    assert b._same(("tensorflow", None, "c-none"), proc) is None
    assert b._same(("jax", None, "c1"), proc) is None  # (another framework's ids are its own)
    # a finish line names module m{n-3} (two modules opened after it): it ends that one
    sp = Span("a.log", 2 * n + 1, "Compiled m", float(n))
    b.feed(CompileFinished(sp, None, CompileKey("tensorflow", "f", f"m{n - 3}"), 0.5))
    # the oldest modules are forgotten: a finish line naming one ends the current compilation
    sp = Span("a.log", 2 * n + 3, "Compiled m0", float(n + 1))
    b.feed(CompileFinished(sp, None, CompileKey("tensorflow", "f", "m0"), 0.25))
    table = b.finish().compilations
    assert table[n - 3].end_line == 2 * n + 1 and table[n - 3].duration_s == 0.5
    assert table[n - 1].end_line == 2 * n + 3 and table[n - 1].duration_s == 0.25
    assert table[0].end_line is None
    assert not proc.open and not b._keys and not b._by_compile_id  # (dropped at the end)


def test_a_long_key_is_not_kept_by_the_builder() -> None:
    """GIVEN compile keys whose names are longer than the memos keep WHEN the builder
    takes them THEN it keeps none of them in its table of keys (each would stay there for
    4,096 compilations), and gives each back with its names interned; a short one is
    kept, one object for equal keys."""
    from recompile_doctor.bounded import KEY_LONGEST
    from recompile_doctor.events import CompileKey
    from recompile_doctor.timeline.builder import TimelineBuilder

    b = TimelineBuilder()
    long = "f" + "x" * KEY_LONGEST
    got = b._key(CompileKey("jax", long, module="jit_" + long))
    assert got.function == long and got.module == "jit_" + long
    assert not b._keys
    short = b._key(CompileKey("jax", "f", module="jit_f"))
    assert b._key(CompileKey("jax", "f", module="jit_f")) is short and len(b._keys) == 1


def test_kept_lookups_notes_and_reasons_count_their_keys_names() -> None:
    """GIVEN a run of functions of 8,000-character names, each looked up in the tracing
    cache, noted and explained on a short line WHEN the builder keeps them THEN a chunk of
    each packed sequence closes once its items' keys hold PACK_CHARS characters, not at
    PACK_CHUNK items (1,024 lookups of such keys held 16 MB each time, three chunks of
    them in memory at once), and the items read back as they came."""
    from recompile_doctor.events import (
        CacheLookup,
        CompileKey,
        FrameworkNote,
        RecompileReason,
        Span,
    )
    from recompile_doctor.timeline import TimelineBuilder
    from recompile_doctor.timeline.table import key_chars

    b = TimelineBuilder(None)
    n = 600
    keys = [
        CompileKey("jax", f"f{i:03d}" + "x" * 7_996, f"jit_f{i:03d}" + "x" * 7_996)
        for i in range(n)
    ]
    for i, key in enumerate(keys):
        sp = Span("a.log", 3 * i + 1, "TRACING CACHE MISS at a.py:1:1 (f):", float(i))
        b.feed(CacheLookup(sp, None, "tracing", "miss", key))
        sp = Span("a.log", 3 * i + 2, "retracing f", float(i))
        b.feed(FrameworkNote(sp, None, "retrace-count", key))
        sp = Span("a.log", 3 * i + 3, "f changed", float(i))
        b.feed(RecompileReason(sp, None, key, "retracing", "never seen function"))
    per_chunk = PACK_CHARS // key_chars(keys[0]) + 1
    for packed_items in (b._lookups, b._notes, b._reasons):
        assert len(packed_items) == n
        assert len(packed_items._tail) <= per_chunk
        plain = [c for c in packed_items._chunks if isinstance(c, list)]
        assert plain and all(len(c) <= per_chunk for c in plain)
    tl = b.finish()
    assert [lk.key.function for lk, _ in tl.lookups] == [k.function for k in keys]
    assert [r.key.module for r, _ in tl.reasons] == [k.module for k in keys]


@pytest.mark.parametrize("plain", [True, False])
def test_a_detail_of_another_mapping_is_spooled_as_a_dict(
    small_spool: Path, monkeypatch: pytest.MonkeyPatch, plain: bool
) -> None:
    # GIVEN events whose detail is a mapping other than a dict (read-only), spooled from
    # the first (chunks of several events at once) and then a chunk at a time, by the C
    # writer or (plain) without it
    from types import MappingProxyType

    if not plain:
        monkeypatch.setattr(spool, "rows_dumps", lambda rows: None)
    sp = EventSpool(spool_after=10)
    monkeypatch.setattr(spool, "CHUNK", 4)
    sp._chunk = 4
    events = [
        Event("k", "run.log", i + 1, None, f"line {i}", None, None, MappingProxyType({"n": i}))
        for i in range(40)
    ]
    for ev in events:
        sp.append(ev)
    # THEN every one reads back in order with the same items, those written to the file
    # with a dict (the few still in memory as they were given)
    got = list(sp)
    written = len(events) - len(sp._buffer)
    assert len(sp._chunks) > 3 and written > 20
    assert [(e.line, dict(e.detail)) for e in got] == [(e.line, dict(e.detail)) for e in events]
    assert all(type(e.detail) is dict for e in got[:written])
    sp.close()
