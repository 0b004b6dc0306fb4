"""Reads of a slotted dataclass's fields answered from its slots by the C module
(``fast_fields`` in ``parsers/_native.c``), as the compiled build has them for the typed
events and compile keys: every read gives what the generic look-up gives (a field, an empty
slot's error, a method, a name built at run time, a subclass's field, a class that was never
registered), and objects of such a class compare, copy, pickle and print as before."""

from __future__ import annotations

import copy
import dataclasses
import pickle
from typing import Any

import pytest

from recompile_doctor import events, slotted
from recompile_doctor.compiled_modules import compiled
from recompile_doctor.parsers._spans import native_in_use

NATIVE: Any = native_in_use()
needs_native = pytest.mark.skipif(
    NATIVE is None or not hasattr(NATIVE, "fast_fields"),
    reason="the C module is not built here, or turned off",
)


@dataclasses.dataclass(frozen=True, slots=True)
class Base:
    """A base with a field."""

    span: str


@dataclasses.dataclass(frozen=True, slots=True)
class Point(Base):
    """Fields of several kinds, one with a default."""

    x: int
    label: str | None = None

    def doubled(self) -> int:
        return 2 * self.x


@dataclasses.dataclass(frozen=True, slots=True)
class Twin(Base):
    """The same fields as Point, never registered."""

    x: int
    label: str | None = None

    def doubled(self) -> int:
        return 2 * self.x


def _register(cls: type) -> None:
    got = slotted.native_plan(cls)
    assert got is not None
    setters = slotted.slot_setters(cls)
    assert setters is not None
    NATIVE.fast_fields(got[1], tuple(n for n, _ in setters))


@needs_native
def test_reads_give_what_the_generic_look_up_gives() -> None:
    _register(Point)
    _register(Point)  # (twice: nothing more)
    p, t = Point("s", 3, "a"), Twin("s", 3, "a")
    assert type(p).__getattribute__ is object.__getattribute__
    for name in ("span", "x", "label"):
        assert getattr(p, name) == getattr(t, name)
        # a name that is another string object than the interned one: the generic way
        other = "".join(list(name))
        assert getattr(p, other) == getattr(t, name)
    assert p.doubled() == 6 and p.__class__ is Point
    assert dataclasses.astuple(p) == ("s", 3, "a")
    with pytest.raises(AttributeError):
        _ = p.nothing  # type: ignore[attr-defined]


@needs_native
def test_an_empty_slot_raises_as_it_did() -> None:
    _register(Point)
    p = object.__new__(Point)
    with pytest.raises(AttributeError) as got:
        _ = p.x
    t = object.__new__(Twin)
    with pytest.raises(AttributeError) as want:
        _ = t.x
    assert str(got.value) == str(want.value).replace("Twin", "Point")


@needs_native
def test_objects_compare_copy_pickle_and_print_as_before() -> None:
    _register(Point)
    p = Point("s", 3, None)
    assert p == Point("s", 3, None) and p != Point("s", 4, None)
    assert hash(p) == hash(Point("s", 3, None))
    assert copy.copy(p) == p and copy.deepcopy(p) == p
    assert pickle.loads(pickle.dumps(p)) == p
    assert repr(p) == repr(Twin("s", 3, None)).replace("Twin", "Point")
    assert dataclasses.replace(p, x=5).x == 5


@needs_native
def test_a_subclass_made_after_reads_its_own_way() -> None:
    _register(Point)

    @dataclasses.dataclass(frozen=True, slots=True)
    class Labelled(Point):
        """A subclass with a property shadowing nothing, and a field of its own."""

        extra: int = 0

        @property
        def shown(self) -> str:
            return f"{self.label}:{self.extra}"

    q = Labelled("s", 1, "l", 7)
    assert (q.span, q.x, q.label, q.extra, q.shown) == ("s", 1, "l", 7, "l:7")


@needs_native
def test_bad_arguments_are_refused() -> None:
    got = slotted.native_plan(Twin)
    assert got is not None
    with pytest.raises(TypeError):
        NATIVE.fast_fields(got[1], ("span", "x"))  # a name short
    with pytest.raises(TypeError):
        NATIVE.fast_fields(got[1], ("span", "x", 3))  # not a str
    with pytest.raises(TypeError):
        NATIVE.fast_fields("plan", ("span", "x", "label"))

    class Own:
        __slots__ = ("a",)

        def __getattr__(self, name: str) -> Any:
            return name

    plan = NATIVE.slot_plan(Own, (Own.a,))
    with pytest.raises(TypeError):
        NATIVE.fast_fields(plan, ("a",))  # (it reads its attributes its own way)
    assert Twin("s", 1).x == 1  # (left as it was)


def test_the_events_read_from_their_slots_where_the_builder_runs_compiled() -> None:
    # the typed events and compile keys, as faster_init made them: from their slots where
    # the builder runs compiled and the C module is in use, the generic way elsewhere
    on = NATIVE is not None and "recompile_doctor.timeline.builder" in compiled()
    assert slotted._runs_compiled() is ("recompile_doctor.timeline.builder" in compiled())
    for cls in (events.CompileKey, events.CacheLookup, events.RecompileReason):
        assert cls.__getattribute__ is object.__getattribute__
        if NATIVE is not None:
            assert NATIVE.sped_up(cls)[0] is on
    if on:
        _register(Point)
        assert NATIVE.sped_up(Point)[0] and not NATIVE.sped_up(Twin)[0]
