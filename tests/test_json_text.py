"""The fast indented JSON writer gives exactly ``json.dumps(indent=2, ensure_ascii=False)``.

GIVEN any JSON value (nested dicts and lists, unicode and control characters, big and
special floats, non-string keys), WHEN written by ``dumps_indented`` at any nesting level,
THEN the text is ``json.dumps``'s, with the lines after the first moved right; WHEN written
in pieces (long lists a few items at a time), THEN the pieces make the same text, and no
piece holds more than a few items of a long list.  Every test runs twice: with the text
written in C (``parsers/_native_json.c``, where the module is built) and in Python.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any
from unittest import mock

import pytest
from hypothesis import given
from hypothesis import strategies as st

from recompile_doctor import json_text
from recompile_doctor.json_text import dumps_indented, fields_text, pieces_indented


@pytest.fixture(autouse=True, params=["C", "Python"])
def _writer(request: pytest.FixtureRequest) -> Iterator[None]:
    """The text written by the C functions (skipped where they are not built), or by the
    Python they replace."""
    native = json_text.native_text()
    if request.param == "C" and native is None:
        pytest.skip("the C module is not built here")
    # (the list itself is kept: a compiled build holds its Final names as constants)
    json_text._NATIVE[:] = [native if request.param == "C" else None]
    try:
        yield
    finally:
        json_text._NATIVE[:] = [native]


leaf = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(),
)
keys = st.one_of(st.text(), st.integers(), st.floats(), st.booleans(), st.none())
values = st.recursive(
    leaf,
    lambda kids: st.one_of(
        st.lists(kids, max_size=4),
        st.lists(kids, max_size=3).map(tuple),
        st.dictionaries(keys, kids, max_size=4),
    ),
    max_leaves=25,
)


@given(value=values, level=st.integers(0, 3))
def test_same_text_as_json_dumps(value: Any, level: int) -> None:
    expected = json.dumps(value, indent=2, ensure_ascii=False).replace("\n", "\n" + "  " * level)
    assert dumps_indented(value, level) == expected


@given(value=values, level=st.integers(0, 3), batch=st.integers(1, 3))
def test_pieces_make_the_same_text(value: Any, level: int, batch: int) -> None:
    with mock.patch.object(json_text, "PIECE_ITEMS", batch):
        assert "".join(pieces_indented(value, level)) == dumps_indented(value, level)


def test_a_long_list_is_written_a_few_items_at_a_time() -> None:
    names = [f"module_{i:06d}" for i in range(10_000)]
    value = {"rule": "r", "modules": names, "evidence": [{"line": 1}]}
    pieces = list(pieces_indented(value, 2))
    assert "".join(pieces) == dumps_indented(value, 2)
    longest = max(len(p) for p in pieces)
    assert longest < 30 * json_text.PIECE_ITEMS  # (a name's text is 23 bytes)
    assert len(pieces) > len(names) // json_text.PIECE_ITEMS


def test_what_json_cannot_write_is_refused_alike() -> None:
    with pytest.raises(TypeError):
        json.dumps({"a": {1, 2}}, indent=2)
    with pytest.raises(TypeError):
        dumps_indented({"a": {1, 2}})
    with pytest.raises(TypeError):
        dumps_indented({(1, 2): 3})


@given(
    pairs=st.dictionaries(st.text(), values, min_size=0, max_size=6),
    level=st.integers(0, 3),
    indent=st.integers(1, 4),
)
def test_fields_text_writes_the_dict_of_its_keys_and_values(
    pairs: dict[str, Any], level: int, indent: int
) -> None:
    keys, vals = tuple(pairs), tuple(pairs.values())
    assert fields_text(keys, vals, level, indent) == dumps_indented(pairs, level, indent)
    assert fields_text(keys, vals, level, indent) == dumps_indented(pairs, level, indent)  # cached


@given(
    keys=st.lists(st.text(), min_size=1, max_size=4, unique=True).map(tuple),
    calls=st.lists(st.tuples(st.integers(0, 3), st.integers(1, 4)), min_size=2, max_size=6),
)
def test_one_tuple_of_keys_is_written_at_each_level_and_indent_asked(
    keys: tuple[str, ...], calls: list[tuple[int, int]]
) -> None:
    # GIVEN one tuple of keys (the pieces of the last one asked are kept by identity)
    # WHEN it is written at one level and indent after another THEN each is its own
    vals = tuple(range(len(keys)))
    for level, indent in calls:
        want = dumps_indented(dict(zip(keys, vals, strict=True)), level, indent)
        assert fields_text(keys, vals, level, indent) == want


def test_events_and_compilations_write_their_json() -> None:
    # GIVEN the report of every fixture run, THEN each event's and compilation's text is
    # that of its to_json() dict
    from pathlib import Path

    from recompile_doctor import analyze

    fixtures = Path(__file__).resolve().parent.parent / "fixtures"
    n = 0
    for log in sorted(fixtures.glob("**/run.log")):
        with analyze(str(log)) as rep:
            for item in (*rep.events, *rep.compilations):
                assert item.json_text(2) == dumps_indented(item.to_json(), 2)
                n += 1
    assert n > 500


scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text())


@given(
    kind=st.one_of(st.text(), scalars),
    line=st.one_of(st.integers(), st.booleans()),
    t=st.one_of(st.none(), st.floats(), st.integers()),
    module=scalars,
    hash_=scalars,
    detail=st.dictionaries(keys, values, max_size=4),
    proxy=st.booleans(),
    text=st.text(),
    level=st.integers(0, 3),
)
def test_an_event_of_any_field_types_writes_its_json(
    kind: Any,
    line: Any,
    t: Any,
    module: Any,
    hash_: Any,
    detail: dict[str, Any],
    proxy: bool,
    text: str,
    level: int,
) -> None:
    # GIVEN an event as the parsers make it, or as a hand-edited report's JSON reads back
    # (a number for a module, a bool for a line, a read-only detail), THEN its text is that
    # of its to_json() dict
    from types import MappingProxyType

    from recompile_doctor.model import Event

    ev = Event(
        kind, "run.log", line, t, text, module, hash_, MappingProxyType(detail) if proxy else detail
    )
    assert ev.json_text(level) == dumps_indented(ev.to_json(), level)


def test_a_detail_keyed_by_values_equal_to_others_writes_its_own_keys() -> None:
    # GIVEN details whose keys equal those of another (1 == True == 1.0) but are written
    # otherwise, THEN each event's text is that of its to_json() dict
    from recompile_doctor.model import Event

    for detail in ({1: "a"}, {True: "a"}, {1.0: "a"}, {"1": "a"}, {1: "a"}):
        ev = Event("compile-end", "run.log", 1, None, "x", None, None, detail)
        assert ev.json_text(1) == dumps_indented(ev.to_json(), 1)


def test_the_shapes_remembered_stay_few_whatever_the_details() -> None:
    # GIVEN events whose details each have keys of their own (a saved report read back),
    # THEN each is written as to_json() says, and the shapes kept are bounded
    from recompile_doctor.bounded import KEPT_MAX
    from recompile_doctor.model import Event

    for i in range(KEPT_MAX + 50):
        ev = Event("compile-end", "run.log", 1, None, "x", None, None, {f"k{i}": i})
        assert ev.json_text(1) == dumps_indented(ev.to_json(), 1)
    assert len(json_text._PIECES) <= KEPT_MAX


def test_a_runs_compilations_are_written_from_their_columns_as_from_their_objects() -> None:
    # GIVEN the report of every fixture run (its compilations the timeline's columns)
    from pathlib import Path

    from recompile_doctor import analyze
    from recompile_doctor.model import CompilationRows, compilations_json, list_items_json

    fixtures = Path(__file__).resolve().parent.parent / "fixtures"
    n = 0
    for log in sorted(fixtures.glob("**/run.log")):
        with analyze(str(log)) as rep:
            assert isinstance(rep.compilations, CompilationRows)
            made = list(rep.compilations)
            # THEN the text from their values is the text of the compilations made
            want = "".join(list_items_json(made))
            assert "".join(compilations_json(rep.compilations)) == want
            assert "".join(compilations_json(tuple(made))) == want  # (no columns)
            n += len(made)
    assert n > 100


@given(st.lists(st.text(max_size=12), max_size=40), st.integers(1, 30))
def test_batched_pieces_join_to_the_whole_each_batch_past_its_size(
    pieces: list[str], size: int
) -> None:
    from recompile_doctor.json_text import batched

    got = list(batched(pieces, size))
    assert "".join(got) == "".join(pieces)
    assert all(len(t) >= size for t in got[:-1])
    # (each batch ends where a piece ends: at most one piece's length past the size)
    assert all(len(t) < size + 12 for t in got)
