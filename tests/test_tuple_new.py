"""The named tuples of every decoded line and event are made by ``tuple_new``: the C
module's twin of ``tuple.__new__`` where it is built.  It makes the same objects, and what
it does not make itself it hands to ``tuple.__new__``, errors and all."""

from __future__ import annotations

import gc
import os
import sys
import time
from collections.abc import Callable, Iterable
from typing import Any, NamedTuple

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from recompile_doctor.events import Span
from recompile_doctor.model import Event
from recompile_doctor.parsers import _tuples
from recompile_doctor.parsers._format import Decoded
from recompile_doctor.parsers._prefixes import Prefix
from recompile_doctor.parsers._spans import native_module
from tests.conftest import examples

NATIVE: Any = native_module()
needs_native = pytest.mark.skipif(NATIVE is None, reason="the C module is not built here")

_CLASSES = [Span, Event, Decoded, Prefix, tuple]
_VALUES = st.one_of(st.none(), st.integers(), st.floats(allow_nan=False), st.text(max_size=8))


@needs_native
@settings(max_examples=examples(300))
@given(st.sampled_from(_CLASSES), st.lists(_VALUES, max_size=10), st.booleans())
def test_made_as_tuple_new_makes_them(cls: type, items: list[Any], as_list: bool) -> None:
    given_items: Iterable[Any] = items if as_list else tuple(items)
    made: Any = NATIVE.tuple_new(cls, given_items)
    assert type(made) is cls
    assert made == tuple.__new__(cls, given_items)
    assert tuple(made) == tuple(items)
    assert gc.is_tracked(made) or cls is tuple


class _Pair(NamedTuple):
    a: int
    b: str


class _Grandchild(_Pair):
    __slots__ = ()


def _refused(make: Callable[..., Any], *args: Any) -> str:
    with pytest.raises(TypeError) as info:
        make(*args)
    return str(info.value)


@needs_native
def test_what_it_does_not_make_goes_to_tuple_new() -> None:
    # a generator, no items, a class further down than right under tuple: made by
    # tuple.__new__
    assert NATIVE.tuple_new(_Pair, (x for x in (1, "b"))) == _Pair(1, "b")
    assert NATIVE.tuple_new(_Pair) == tuple.__new__(_Pair) == ()
    assert NATIVE.tuple_new(tuple, []) is tuple.__new__(tuple, []) == ()
    got = NATIVE.tuple_new(_Grandchild, (1, "b"))
    assert type(got) is _Grandchild and got == (1, "b")
    # refused with tuple.__new__'s own words: not a class of tuples, a C class of tuples,
    # not iterable, the wrong number of arguments
    for args in [(int, (1,)), (time.struct_time, tuple(range(9))), (_Pair, 3), (), (_Pair, (), 1)]:
        assert _refused(NATIVE.tuple_new, *args) == _refused(tuple.__new__, *args)


@needs_native
def test_the_items_are_held_as_long_as_the_tuple_lives() -> None:
    item = object()
    before = sys.getrefcount(item)
    made = [NATIVE.tuple_new(_Pair, (item, "b")), NATIVE.tuple_new(_Pair, [item, "b"])]
    assert sys.getrefcount(item) == before + 2
    assert made[0][0] is item and made[1][0] is item
    del made
    assert sys.getrefcount(item) == before


#: RECOMPILE_DOCTOR_NATIVE as the package was imported (before any test changes it)
_NATIVE_AT_IMPORT = os.environ.get("RECOMPILE_DOCTOR_NATIVE")


def test_native_0_gives_tuple_new(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RECOMPILE_DOCTOR_NATIVE", "0")
    assert _tuples.chosen_tuple_new() == tuple.__new__
    monkeypatch.delenv("RECOMPILE_DOCTOR_NATIVE")
    expected = tuple.__new__ if NATIVE is None else NATIVE.tuple_new
    assert _tuples.chosen_tuple_new() == expected
    # (the module's own choice, made when it was imported: by the environment then)
    assert (_tuples.tuple_new is expected) == (_NATIVE_AT_IMPORT != "0")


@needs_native
@settings(max_examples=examples(300))
@given(st.sampled_from([*_CLASSES, _Grandchild]), st.lists(_VALUES, max_size=10))
def test_tuple_of_makes_what_tuple_new_makes(cls: type, items: list[Any]) -> None:
    # (the items as the call's own arguments: the same object as tuple.__new__'s)
    made: Any = NATIVE.tuple_of(cls, *items)
    assert type(made) is cls
    assert made == tuple.__new__(cls, items)
    item = object()
    before = sys.getrefcount(item)
    held = NATIVE.tuple_of(cls, item, *items)
    count = sys.getrefcount(item)  # (not in an assert: pytest's rewriting holds its parts)
    assert count == before + 1
    assert tuple.__getitem__(held, 0) is item
    del held
    count = sys.getrefcount(item)
    assert count == before


@needs_native
def test_tuple_of_refuses_as_tuple_new_does() -> None:
    for args in [(int, 1), (time.struct_time, *range(9))]:
        assert _refused(NATIVE.tuple_of, *args) == _refused(tuple.__new__, args[0], args[1:])
    with pytest.raises(TypeError):
        NATIVE.tuple_of()
    with pytest.raises(TypeError):
        NATIVE.tuple_of(3, 1)


def test_the_lines_tuples_are_made_by_tuple_of_where_the_module_is() -> None:
    # (span, record and answer: equal to the named tuples' own, either way)
    sp = _tuples.new_span("a.log", 3, "text", 1.5)
    assert type(sp) is Span and sp == Span("a.log", 3, "text", 1.5, None)
    ev = _tuples.new_event("k", "a.log", 3, None, "text", "m", None, {"x": 1})
    assert type(ev) is Event and ev == Event("k", "a.log", 3, None, "text", "m", None, {"x": 1})
    got = _tuples.recognized([])
    assert got is _tuples._RECOGNIZED
    expected = None if _NATIVE_AT_IMPORT == "0" or NATIVE is None else NATIVE.tuple_of
    assert _tuples.tuple_of is expected
