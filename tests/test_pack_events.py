"""A worker's batch of events packed into bytes and back (``parsers/_native_pack.c``, through
``_event_codec.pack`` and ``unpack``): the events the event codec gives back (the same
values of the same types at every depth, the records of one line shared, equal value
objects one object), for every fixture and for generated values; what it does not pack
written as before; bytes cut short or changed refused with ValueError, never a crash."""

from __future__ import annotations

import contextlib
import itertools
import math
import sys
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from recompile_doctor.events import CompileKey, FrameworkNote, RecompileReason, Span
from recompile_doctor.model import Event, ValueChange
from recompile_doctor.parsers import _event_codec as codec
from recompile_doctor.parsers import parse_log
from recompile_doctor.parsers._spans import native_module
from tests.test_event_values import _KEYS, _VALUES, _shape
from tests.test_native_codec import _event_shape
from tests.test_parallel import PLAIN_FIXTURES

C: Any = codec.native_codec() if native_module() is not None else None
pytestmark = pytest.mark.skipif(C is None, reason="the C module is not built here")

MISSED = [codec.MISSED, 12, [("function_of", ("jax", "f")), ("eager", "g")]]


def _items_way(batch: list[Any], before: Event | None) -> tuple[list[Any], Any]:
    """The batch written and read the way that is not packed (the codec's items)."""
    out: list[Any] = []
    for x in batch:
        if type(x) is list:
            out.append(x)
        else:
            out.append(codec.encode(x, before))
            before = x.record
    return codec.batch_items(codec.ITEMS + codec.marshal_dumps(out), None)


def _sharing(items: list[Any]) -> list[bool]:
    """Whether each event holds the record of the event before it."""
    evs = [x for x in items if type(x) is not list]
    return [b.record is not None and b.record is a.record for a, b in itertools.pairwise(evs)]


def _shapes(items: list[Any]) -> list[Any]:
    return [x if type(x) is list else _event_shape(x) for x in items]


def test_every_fixture_s_events_come_back_as_the_codec_gives_them() -> None:
    n = 0
    for path in PLAIN_FIXTURES:
        evs = list(parse_log(str(path)))
        # GIVEN a fixture's events in batches of 50, with what is not an event among them
        for k in range(0, len(evs), 50):
            batch: list[Any] = [MISSED, *evs[k : k + 25], [codec.ENDING], *evs[k + 25 : k + 50]]
            got = codec.pack(batch, None)
            assert got is not None, path
            data, last = got
            assert data[:1] == codec.PACKED
            # THEN they come back equal, of the same types, sharing as the items' way does
            back, back_last = codec.unpack(data, None)
            theirs, _ = _items_way(batch, None)
            assert _shapes(back) == _shapes(batch) == _shapes(theirs), path
            assert _sharing(back) == _sharing(batch) == _sharing(theirs), path
            # (and the last event's record, for the next batch)
            assert last is next(x.record for x in reversed(batch) if type(x) is not list)
            assert _shape(back_last) == _shape(last)
            n += len(batch)
    assert n > 1000


def test_a_batch_goes_on_from_the_record_of_the_batch_before() -> None:
    # GIVEN the events of one line (one record) split between two batches
    evs = [ev for p in PLAIN_FIXTURES for ev in parse_log(str(p))]
    k = next(
        i
        for i in range(1, len(evs))
        if evs[i].record is not None and evs[i].record is evs[i - 1].record
    )
    first = codec.pack(evs[:k], None)
    assert first is not None
    back1, last1 = codec.unpack(first[0], None)
    second = codec.pack(evs[k : k + 3], first[1])
    assert second is not None
    # THEN the second batch's first event shares the record the first batch ended with
    back2, _ = codec.unpack(second[0], last1)
    assert back2[0].record is last1 is back1[-1].record
    assert _event_shape(back2[0]) == _event_shape(evs[k])
    # and without the record before, the batch is refused, not read wrong
    with pytest.raises(ValueError, match="record before"):
        codec.unpack(second[0], None)


def test_equal_value_objects_come_back_as_one_and_the_empty_detail_shared() -> None:
    key = CompileKey("jax", "f", module="jit_f")
    twin = CompileKey("jax", "f", module="jit_f")
    change = ValueChange("f", "x", "f32[1]", "f32[2]", "a.py:1", "run.log", 3)
    evs = []
    for n, k in enumerate([key, twin, key]):
        rec = Event("note", "run.log", n + 1, None, f"line {n}")  # (the empty detail)
        evs.append(FrameworkNote(Span("run.log", n + 1, f"line {n}"), rec, "noted", k, {}))
    reason_rec = Event("reason", "run.log", 9, 1.5, "why", "m", "h", {"c": [change, change]})
    evs.append(
        RecompileReason(
            Span("run.log", 9, "why", 1.5), reason_rec, key, "shape", "why", (change,), "a", (9,)
        )
    )
    got = codec.pack(evs, None)
    assert got is not None
    back, _ = codec.unpack(got[0], None)
    assert back == evs
    assert back[0].key is back[1].key is back[2].key is back[3].key
    assert back[0].record.detail is Event("x", "y", 1, None, "z").detail
    assert back[3].changes[0] is back[3].record.detail["c"][0] is back[3].record.detail["c"][1]


@pytest.mark.parametrize(
    "text",
    ["ascii", "latin-1 é", "bmp € ✓", "astral 𝄞", "lone \udc80 surrogate", "", "\x00nul"],
)
def test_any_text_comes_back_as_it_was(text: str) -> None:
    rec = Event("note", "r\u00e9.log", 1, -0.0, text, None, None, {text: text})
    ev = FrameworkNote(Span("r\u00e9.log", 1, text, -0.0, "rank " + text), rec, text, None, {})
    got = codec.pack([ev], None)
    assert got is not None
    (back,), _ = codec.unpack(got[0], None)
    assert back == ev and _event_shape(back) == _event_shape(ev)
    assert math.copysign(1, back.span.t) == -1  # (-0.0 stays)


def test_ints_of_any_size_come_back() -> None:
    # (a decoder's missed look-up of a long name, held by its 128-bit digest)
    from recompile_doctor.name_digest import name_number

    digest = name_number("f" * 300)
    ints = [0, -1, 2**63 - 1, -(2**63), 2**63, -(2**63) - 1, digest, -digest, 10**4000]
    batch = [[codec.MISSED, 3, [("function_of", digest)]], [ints]]
    got = codec.pack(batch, None)
    assert got is not None
    back, _ = codec.unpack(got[0], None)
    assert back == batch and _shape(back) == _shape(batch)


def test_interned_strings_come_back_interned() -> None:
    name = sys.intern("a_function_name_" + "x" * 3)
    rec = Event("note", "run.log", 1, None, "line", name, None, {name: 1})
    ev = FrameworkNote(Span("run.log", 1, "line"), rec, "noted", None, {})
    got = codec.pack([ev], None)
    assert got is not None
    (back,), _ = codec.unpack(got[0], None)
    assert sys.intern(back.record.module) is back.record.module


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(st.lists(st.dictionaries(st.text(max_size=6), _VALUES, max_size=4), max_size=4), _KEYS)
def test_generated_values_come_back(details: list[Any], key: CompileKey) -> None:
    evs: list[Any] = []
    for n, detail in enumerate(details):
        rec = Event("note", "run.log", n + 1, float(n), "a line", None, None, detail)
        evs.append(FrameworkNote(Span("run.log", n + 1, "a line"), rec, "noted", key, detail))
        evs.append([codec.MISSED, n, [("k", tuple(detail))]])
    # THEN they are packed (an int of any size too), and come back as they were
    got = codec.pack(evs, None)
    assert got is not None
    data, _ = codec.batch_bytes(evs, None)
    assert data[:1] == codec.PACKED
    back, _ = codec.batch_items(data, None)
    assert _shapes(back) == _shapes(evs)
    assert [_shape(x.detail) for x in back if type(x) is not list] == [_shape(d) for d in details]


class _Str(str):
    pass


@pytest.mark.parametrize(
    "value",
    [
        "huge",
        _Str("a str of another class"),
        {1, 2},
        object(),
        1j,
        "deep",
    ],
)
def test_what_is_not_packed_leaves_the_batch_to_the_items_way(value: Any) -> None:
    if value == "huge":  # (more digits than int's str gives)
        value = 10**5000
    if value == "deep":  # (lists nested deeper than the packer goes)
        value = []
        for _ in range(120):
            value = [value]
    rec = Event("note", "run.log", 1, None, "line", None, None, {"v": value})
    ev = FrameworkNote(Span("run.log", 1, "line"), rec, "noted", None, {})
    assert codec.pack([ev], None) is None
    try:
        data, _ = codec.batch_bytes([ev], None)
    except (codec.Unencodable, ValueError):
        return  # (nor written by the items' way: refused, as it was)
    assert data[:1] == codec.ITEMS
    (back,), _ = codec.batch_items(data, None)
    assert back == ev


def _a_packed_batch() -> bytes:
    evs = [ev for p in PLAIN_FIXTURES[:6] for ev in parse_log(str(p))][:120]
    got = codec.pack([MISSED, *evs, [codec.ENDING]], None)
    assert got is not None
    return got[0]


def test_a_batch_cut_short_anywhere_is_refused() -> None:
    data = _a_packed_batch()
    whole, _ = codec.unpack(data, None)
    ends = 0
    for cut in range(1, len(data)):
        try:
            back, _ = codec.unpack(data[:cut], None)
        except ValueError:
            continue
        # (cut where an item ends: the items before it, whole)
        ends += 1
        assert _shapes(back) == _shapes(whole[: len(back)])
    assert ends <= len(whole)
    with pytest.raises(ValueError, match="not a packed batch"):
        codec.unpack(b"M" + data[1:], None)
    with pytest.raises(ValueError, match="not a packed batch"):
        codec.unpack(b"", None)


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_changed_bytes_are_refused_or_read_never_a_crash(data: st.DataObject) -> None:
    batch = bytearray(_PACKED)
    for _ in range(data.draw(st.integers(1, 4))):
        at = data.draw(st.integers(1, len(batch) - 1))
        batch[at] = data.draw(st.integers(0, 255))
    with contextlib.suppress(ValueError, TypeError, OverflowError, MemoryError):
        codec.unpack(bytes(batch), None)


_PACKED = _a_packed_batch() if C is not None else b""


def test_the_parent_follows_packed_records() -> None:
    import tempfile

    evs = [ev for p in PLAIN_FIXTURES[:4] for ev in parse_log(str(p))]
    with tempfile.TemporaryFile() as f:
        w = codec.EventWriter(f)
        for k, ev in enumerate(evs):
            if k % 7 == 0:
                w.missed(k, [("a", ("k", k))])
            w.add((ev,))
        w.flush()
        got = list(codec.follow(f.fileno(), lambda: True, 0, (0.001, 0.01)))
    events = [e for x in got if isinstance(x, list) for e in x]
    assert [_event_shape(e) for e in events] == [_event_shape(e) for e in evs]
    assert sum(isinstance(x, codec.Missed) for x in got) == len(range(0, len(evs), 7))


def test_pairs_of_an_event_and_a_value_come_back_as_pairs() -> None:
    # GIVEN the timeline's lookups: pairs of an event and its compilation's number (or None)
    evs = [ev for p in PLAIN_FIXTURES[:5] for ev in parse_log(str(p))][:80]
    pairs = [(ev, k if k % 3 else None) for k, ev in enumerate(evs)]
    got = codec.pack([*pairs, MISSED, evs[0]], None)
    assert got is not None
    back, _ = codec.unpack(got[0], None)
    assert back == [*pairs, MISSED, evs[0]]
    assert all(type(x) is tuple for x in back[: len(pairs)])
    # AND a pair cut after its event is refused
    one = codec.pack([pairs[1]], None)
    assert one is not None
    with pytest.raises(ValueError, match="cut short"):
        codec.unpack(one[0][:-1], None)
    # (a pair of anything else, or a triple, is not packed)
    assert codec.pack([("not an event", 1)], None) is None
    assert codec.pack([(evs[0], 1, 2)], None) is None
