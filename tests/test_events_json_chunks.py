"""The events' JSON text written from the spool's own bytes (``json_chunk`` in
``parsers/_native_json.c``, used by ``events_json.utf8_texts``): a spooled chunk's text is the
text of its events, whatever their values (or None, and the caller writes them); the report's
events come in the order iterating gives, chunks whole only where no other event comes in
between; odd bytes never crash."""

from __future__ import annotations

import marshal
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from recompile_doctor import events_json as ej
from recompile_doctor import json_text
from recompile_doctor.json_text import (
    ITEM_HEADS,
    _joined,
    _text_py,
    fields_text,
    fields_text_apart,
    object_pieces,
)
from recompile_doctor.model import COMPILATION_KEYS, EVENT_KEYS, Event, events_json
from recompile_doctor.parsers._spans import native_in_use, native_module
from recompile_doctor.timeline import spool
from recompile_doctor.timeline.spool import EventSpool, ReportEvents, SpooledChunk
from tests.conftest import examples

NATIVE: Any = native_module()
needs_native = pytest.mark.skipif(NATIVE is None, reason="the C module is not built here")
#: for what goes through ``json_text.chunk_text`` (the module in use, not merely built:
#: RECOMPILE_DOCTOR_NATIVE=0 turns it off, and the chunk is written from its rows)
needs_native_in_use = pytest.mark.skipif(
    native_in_use() is None, reason="the C module is not built, or turned off"
)

#: the places of EVENT_KEYS' values in a row (model.Event's order)
_ORDER = (0, 1, 2, 3, 5, 6, 7, 4)
#: within what json_chunk writes itself (beyond: None, the caller writes the chunk)
_INT_BITS = 59

_texts = st.text(st.characters(codec=None, exclude_categories=()), max_size=12)
_ints = st.integers(-(2**_INT_BITS), 2**_INT_BITS)
_leaves = st.one_of(
    st.none(),
    st.booleans(),
    _ints,
    st.floats(allow_nan=True, allow_infinity=True),
    _texts,
)
_values = st.recursive(
    _leaves,
    lambda kids: st.one_of(
        st.lists(kids, max_size=4),
        st.lists(kids, max_size=3).map(tuple),
        st.dictionaries(_texts, kids, max_size=4),
    ),
    max_leaves=20,
)
#: what json_chunk gives up on (the Python writes it): keys of other types, big ints
_others = st.one_of(
    st.dictionaries(st.one_of(st.integers(), st.none(), st.booleans()), _leaves, min_size=1),
    st.integers(2**60, 10**40),
    st.integers(-(10**40), -(2**60)),
)


def _rows(draw: st.DrawFn, values: st.SearchStrategy[Any], n: int) -> list[tuple[Any, ...]]:
    """Rows of events' values as the spool writes them, some of their objects shared (the
    same string, dict or list in two places, a string as a key too: marshal writes it once,
    then refers to it)."""
    shared = draw(
        st.lists(st.one_of(_texts, st.dictionaries(_texts, values, max_size=3)), max_size=3)
    )
    pool = st.one_of(values, st.sampled_from(shared)) if shared else values
    # (a string shared as a key and a value: written once, its text copied after)
    words = [x for x in shared if isinstance(x, str)]
    keys = st.one_of(_texts, st.sampled_from(words)) if words else _texts
    rows = []
    for _ in range(n):
        detail = draw(st.dictionaries(keys, pool, max_size=5))
        rows.append(
            (
                draw(st.one_of(_texts, st.sampled_from(shared) if shared else _texts)),
                draw(_texts),
                draw(_ints),
                draw(st.one_of(st.none(), st.floats(allow_nan=True, allow_infinity=True))),
                draw(_texts),
                draw(st.one_of(st.none(), _texts)),
                draw(st.one_of(st.none(), _texts)),
                detail,
            )
        )
    return rows


def _python_text(rows: list[tuple[Any, ...]], first: bool) -> bytes:
    """The events' items as the Python writes them (``json_text._text_py``)."""
    pieces = object_pieces(EVENT_KEYS, 2)
    out = []
    for i, row in enumerate(rows):
        head = ITEM_HEADS[0 if first and i == 0 else 1]
        out.append(head + _joined(pieces, [_text_py(row[k], 3, "  ") for k in _ORDER]))
    return "".join(out).encode("utf-8", "surrogatepass")


def _chunk(rows: list[tuple[Any, ...]]) -> bytes:
    return spool._chunk_bytes(rows)


@needs_native_in_use
@settings(max_examples=examples(400))
@given(data=st.data(), n=st.integers(0, 6), first=st.booleans())
def test_a_chunk_s_text_is_the_text_of_its_events(data: st.DataObject, n: int, first: bool) -> None:
    # GIVEN a spooled chunk of events whose values are of the kinds the parsers give:
    # strings of any characters (quotes, controls, lone surrogates), numbers, nested lists,
    # tuples and dicts, objects shared between events
    rows = _rows(data.draw, _values, n)
    chunk = _chunk(rows)
    assert chunk[:1] == b"M"
    # WHEN its text is written from its bytes, THEN it is the Python's text of those events
    assert json_text.chunk_text(chunk, EVENT_KEYS, first) == _python_text(rows, first)


@needs_native
@settings(max_examples=examples(300))
@given(data=st.data(), n=st.integers(1, 4))
def test_a_chunk_of_values_not_written_from_bytes_gives_none_or_the_same_text(
    data: st.DataObject, n: int
) -> None:
    # GIVEN a chunk holding values C does not write from bytes (a dict of other keys, an
    # int past 60 bits) among the others
    rows = _rows(data.draw, st.one_of(_values, _others), n)
    got = json_text.chunk_text(_chunk(rows), EVENT_KEYS, True)
    # THEN it gives the same text, or None (and the caller writes the chunk's rows)
    assert got is None or got == _python_text(rows, True)
    # AND such a value alone always gives None
    odd = [(*rows[0][:7], {"x": data.draw(_others)})]
    assert json_text.chunk_text(_chunk(odd), EVENT_KEYS, True) is None


@needs_native_in_use
@pytest.mark.parametrize("first", [True, False])
@pytest.mark.parametrize("text", ["\x01" * 5000, '"\\' * 3000, "x" * 9000, "\u00e9\x1f" * 2000])
def test_a_chunk_whose_text_outgrows_its_bytes_is_whole(text: str, first: bool) -> None:
    # GIVEN events whose text is longer written than marshalled (controls: 6 bytes each,
    # quotes and backslashes 2) or not (plain letters), many of them
    rows = [("k", "a.log", n, 0.5, text, "m", None, {"lines": [n, n + 1]}) for n in range(30)]
    # WHEN the chunk's text is written from its bytes, THEN it is whole and the Python's
    assert json_text.chunk_text(_chunk(rows), EVENT_KEYS, first) == _python_text(rows, first)


class _Name(str):
    """A string marshal does not write (the spool pickles its chunk)."""


@needs_native_in_use
def test_a_chunk_too_big_to_hold_its_text_whole_gives_none(monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN a chunk bigger than the most written from bytes (its text is made whole)
    rows = [("k", "a.log", n, None, "x" * 100, None, None, {}) for n in range(40)]
    chunk = _chunk(rows)
    assert json_text.chunk_text(chunk, EVENT_KEYS, True) == _python_text(rows, True)
    monkeypatch.setattr(json_text, "CHUNK_BYTES_MOST", len(chunk) - 1)
    # THEN it is left to the caller, which writes its rows a piece at a time
    assert json_text.chunk_text(chunk, EVENT_KEYS, True) is None


@needs_native
def test_a_pickled_chunk_gives_none() -> None:
    # GIVEN a chunk the spool pickled (a value marshal does not write)
    rows = [("k", "a.log", 1, None, "t", None, None, {"c": _Name("red")})]
    chunk = _chunk(rows)
    assert chunk[:1] == b"P"
    # THEN it is left to the caller
    assert json_text.chunk_text(chunk, EVENT_KEYS, True) is None


@needs_native
@settings(max_examples=examples(300))
@given(data=st.data(), n=st.integers(1, 4))
def test_cut_or_changed_bytes_never_crash(data: st.DataObject, n: int) -> None:
    # GIVEN a chunk cut short anywhere, or with any byte changed
    chunk = _chunk(_rows(data.draw, _values, n))
    cut = data.draw(st.integers(0, len(chunk) - 1))
    # THEN a chunk cut short gives None (its events are read as the spool reads them)
    assert NATIVE.json_chunk(chunk[:cut], object_pieces(EVENT_KEYS, 2), 3, "  ", ITEM_HEADS) is None
    at = data.draw(st.integers(0, len(chunk) - 1))
    changed = chunk[:at] + bytes([data.draw(st.integers(0, 255))]) + chunk[at + 1 :]
    # AND a changed one gives None or bytes, never a crash or an error
    got = NATIVE.json_chunk(changed, object_pieces(EVENT_KEYS, 2), 3, "  ", ITEM_HEADS)
    assert got is None or isinstance(got, bytes)


@needs_native
def test_references_to_numbers_not_given_and_deep_nesting_give_none() -> None:
    pieces = object_pieces(EVENT_KEYS, 2)
    row = marshal.dumps([("k", "a.log", 1, None, "t", None, None, {})])
    # a reference ('r') to an object never numbered, in place of the (empty) detail
    assert row.endswith(b"{0")
    bad = b"M" + row[:-2] + b"r\x63\x00\x00\x00"
    assert NATIVE.json_chunk(bad, pieces, 3, "  ", ITEM_HEADS) is None
    # a detail nested far deeper than any event's
    deep: Any = []
    for _ in range(200):
        deep = [deep]
    rows = [("k", "a.log", 1, None, "t", None, None, {"d": deep})]
    assert NATIVE.json_chunk(_chunk(rows), pieces, 3, "  ", ITEM_HEADS) is None
    # a list that holds itself (marshal refers back to it), and a list shared by many
    # details, written far more often than read: None, or the same text
    itself: list[Any] = []
    itself.extend([itself, itself])
    rows = [("k", "a.log", 1, None, "t", None, None, {"d": itself})]
    assert NATIVE.json_chunk(_chunk(rows), pieces, 3, "  ", ITEM_HEADS) is None
    shared = [list(range(50))] * 50
    rows = [("k", "a.log", n, None, "t", None, None, {"d": shared}) for n in range(50)]
    got = NATIVE.json_chunk(_chunk(rows), pieces, 3, "  ", ITEM_HEADS)
    assert got is None or got == _python_text(rows, True)
    # rows that are not an event's eight values
    assert NATIVE.json_chunk(b"M" + marshal.dumps([("k", 1)]), pieces, 3, "  ", ITEM_HEADS) is None
    assert NATIVE.json_chunk(b"M" + marshal.dumps(("k",)), pieces, 3, "  ", ITEM_HEADS) is None


@needs_native
def test_wrong_arguments_are_refused() -> None:
    pieces = object_pieces(EVENT_KEYS, 2)
    with pytest.raises(TypeError):
        NATIVE.json_chunk(bytearray(b"M"), pieces, 3, "  ", ITEM_HEADS)
    with pytest.raises(TypeError):
        NATIVE.json_chunk(b"M", pieces[:3], 3, "  ", ITEM_HEADS)
    with pytest.raises(TypeError):
        NATIVE.json_chunk(b"M", pieces, 3, b"  ", ITEM_HEADS)
    with pytest.raises(ValueError):
        NATIVE.json_chunk(b"M", pieces, -1, "  ", ITEM_HEADS)
    with pytest.raises(TypeError):
        NATIVE.json_chunk(b"M", pieces, 3, "  ")


def _event(line: int, text: str = "x", **detail: Any) -> Event:
    return Event("compile-begin", "a.log", line, 0.5, text, "jit_f", None, detail)


def _flat(events: ReportEvents) -> list[Event]:
    out: list[Event] = []
    for part in events.parts():
        if isinstance(part, SpooledChunk):
            out.extend(Event(*row) for row in part.rows())
        else:
            out.append(part)
    return out


@settings(max_examples=examples(200))
@given(
    lines=st.lists(st.integers(1, 60), min_size=1, max_size=60).map(sorted),
    loads=st.lists(st.integers(0, 62), max_size=6),
    late=st.lists(st.integers(1, 60), max_size=2),
    spool_after=st.integers(1, 10),
)
def test_the_parts_are_the_events_in_order(
    lines: list[int], loads: list[int], late: list[int], spool_after: int
) -> None:
    # GIVEN spooled events in log order (chunks of 4), executable loads on any line (on a
    # chunk's lines, between chunks, on the line of a chunk's last event), and perhaps
    # events that came too late for their place
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(spool, "CHUNK", 4)
        sp = EventSpool(spool_after=spool_after)
        for i, n in enumerate(lines):
            sp.append(_event(n, k=i))
        for n in late:
            sp.append(_event(n, late=True))
        events = ReportEvents(sp, [_event(n, "load") for n in loads], {"a.log": 0})
        # WHEN they are taken in parts, THEN the parts hold the events in the order
        # iterating gives them
        assert _flat(events) == list(events)
        # AND a chunk comes whole unless an event comes in its middle
        if not late and not loads and sp.spooled:
            assert any(isinstance(p, SpooledChunk) for p in events.parts())
        events.close()


@pytest.mark.parametrize("native", [True, False])
def test_the_utf8_text_is_the_events_text(monkeypatch: pytest.MonkeyPatch, native: bool) -> None:
    # GIVEN a report's events spooled in chunks, loads merged with them, a late one, a
    # chunk that C does not write (a detail of int keys), one the spool pickled, and text
    # of every kind
    if not native:
        monkeypatch.setattr(json_text, "native_text", lambda: None)
    elif native_in_use() is None:
        pytest.skip("the C module is not built, or turned off")
    monkeypatch.setattr(spool, "CHUNK", 5)
    monkeypatch.setattr(ej, "PIECE", 64)
    sp = EventSpool(spool_after=7)
    for n in range(1, 80):
        detail: dict[Any, Any] = {"n": n, "s": 'é€𝄞 "q" \t \udc80'}
        if n == 23:
            detail = {1: "int key"}
        if n == 41:
            detail = {"c": _Name("red")}
        sp.append(Event("compile-begin", "a.log", n, 0.25, f"line {n} \x01 \\", None, "h", detail))
    sp.append(_event(3, "late"))
    loads = [_event(n, "load") for n in (2, 30, 31, 79, 90)]
    events = ReportEvents(sp, loads, {"a.log": 0})
    written: list[bool] = []
    chunk_text = json_text.chunk_text

    def counted(data: bytes, keys: tuple[str, ...], first: bool) -> bytes | None:
        got = chunk_text(data, keys, first)
        written.append(got is not None)
        return got

    monkeypatch.setattr(json_text, "chunk_text", counted)
    # THEN its text in UTF-8 pieces is the report's text of its events
    want = "".join(events_json(events)).encode("utf-8", "surrogatepass")
    assert b"".join(ej.utf8_texts(events)) == want
    # (chunks written from their bytes, and the two C does not write, by their rows)
    if native:
        assert written.count(False) == 2 and written.count(True) >= 5
    # and so without late events or loads (every chunk whole)
    sp2 = EventSpool(spool_after=7)
    for n in range(1, 80):
        sp2.append(_event(n, f"line {n}", n=n))
    plain = ReportEvents(sp2, (), {"a.log": 0})
    want = "".join(events_json(plain)).encode("utf-8", "surrogatepass")
    assert b"".join(ej.utf8_texts(plain)) == want
    # and for events that are not a report's (a list)
    few = [_event(n) for n in range(3)]
    assert b"".join(ej.utf8_texts(few)) == "".join(events_json(few)).encode()
    events.close()
    plain.close()


@pytest.mark.parametrize("native", [True, False])
@settings(max_examples=examples(200))
@given(data=st.data())
def test_a_text_apart_is_the_text_around_its_value(native: bool, data: st.DataObject) -> None:
    # GIVEN a compilation's values (any of them), and one of them set apart
    values = tuple(data.draw(_values) for _ in COMPILATION_KEYS)
    at = data.draw(st.integers(0, len(COMPILATION_KEYS) - 1))
    with pytest.MonkeyPatch.context() as mp:
        if not native:
            mp.setattr(json_text, "native_text", lambda: None)
        before, after = fields_text_apart(COMPILATION_KEYS, values, 2, at)
    # THEN the text around it and its own text are the object's text
    assert before + _text_py(values[at], 3, "  ") + after == fields_text(
        COMPILATION_KEYS, values, 2
    )
    with pytest.raises(ValueError):
        fields_text_apart(COMPILATION_KEYS, values[1:], 2, at)
