"""The timeline's packed lookups, reasons and notes: their chunks packed as the log readers'
workers pack their batches (where the C module is in use), else encoded by the event codec
and marshalled, not pickled.

GIVEN the typed events of every fixture log, alone or paired with a plain value as the
timeline keeps its lookups, WHEN they are packed in chunks and read back, THEN each comes
back equal, of its class, its record and key equal; the chunks are the codec's; and a
chunk holding anything else (an item of another kind, a value the codec does not know) is
pickled and comes back as well.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from recompile_doctor.events import CacheLookup, RecompileReason, TypedEvent
from recompile_doctor.parsers import _event_codec as codec
from recompile_doctor.parsers import parse_log
from recompile_doctor.timeline.blobs import Blobs
from recompile_doctor.timeline.packed import Packed
from tests.test_fastpath import _fixture_logs

EVENTS: list[TypedEvent] = [
    ev for path in _fixture_logs() if path.suffix != ".gz" for ev in parse_log(str(path))
]


def _tags(p: Packed[Any]) -> list[bytes]:
    return [Blobs.get(c)[:1] for c in p._chunks if not isinstance(c, list)]  # type: ignore[arg-type]


def _packed(items: list[Any], chunk: int) -> Packed[Any]:
    p: Packed[Any] = Packed(chunk=chunk, plain=0)
    for it in items:
        p.append(it)
    return p


def test_the_fixtures_hold_lookups_and_reasons_with_records_and_keys() -> None:
    assert sum(type(e) is CacheLookup for e in EVENTS) > 20
    assert sum(type(e) is RecompileReason for e in EVENTS) > 20
    assert any(e.record is not None for e in EVENTS)
    assert any(getattr(e, "key", None) is not None for e in EVENTS)


@pytest.mark.parametrize("chunk", [1, 7, 256])
@pytest.mark.parametrize("native", [True, False], ids=["C", "python"])
def test_events_and_pairs_read_back_equal_from_the_codecs_chunks(chunk: int, native: bool) -> None:
    # (packed as a worker packs its batch where the C module is in use, else the codec's
    # items marshalled)
    chosen = codec._NATIVE[:]  # (the list itself is kept: a compiled build holds it)
    if not native:
        codec._NATIVE[:] = [None]
    elif codec.native_codec() is None:
        pytest.skip("the C module is not built here")
    try:
        pairs = [(ev, i if i % 3 else None) for i, ev in enumerate(EVENTS)]
        for items in (EVENTS, pairs):
            p = _packed(items, chunk)
            assert set(_tags(p)) == ({b"K"} if native else {b"E"})
            for got in (list(p), [p[i] for i in range(len(items))]):
                assert got == items
                assert [repr(x) for x in got] == [repr(x) for x in items]
            p.close()
    finally:
        codec._NATIVE[:] = chosen


def test_other_items_and_unknown_values_are_pickled_and_read_back() -> None:
    ev = next(e for e in EVENTS if type(e) is CacheLookup)
    odd = dataclasses.replace(ev, entry=frozenset({"a"}))  # type: ignore[arg-type]
    cases: list[list[Any]] = [
        [ev, (ev, 1)],  # events and pairs in one chunk
        [(ev, 1, 2), (ev, 3, 4)],  # triples
        [(ev, [1]), (ev, [2])],  # a pair's second item not plain
        [ev, odd],  # a value the codec does not know
    ]
    for items in cases:
        p = _packed(items, len(items))
        assert _tags(p) == [b"P"], items
        assert list(p) == items
        p.close()
