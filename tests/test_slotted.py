"""Slotted dataclasses made and copied with their slots set directly: the faster
``__init__`` of the typed events (the same parameters, defaults, default factories and
errors as the one ``dataclasses`` writes), and the written-out copy with fields replaced."""

from __future__ import annotations

import copy
import dataclasses
import inspect
import pickle
import typing
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from recompile_doctor import events
from recompile_doctor.model import ValueChange
from recompile_doctor.slotted import faster_init, replacer
from tests.conftest import examples

TYPED = typing.get_args(events.TypedEvent)
#: every class given the faster __init__
FASTER = (*TYPED, events.CompileKey, ValueChange)


@dataclass(frozen=True, slots=True, init=False, repr=False, eq=False)
class _Base:
    a: int
    k: int = field(default=7, kw_only=True)


def _shape(name: str) -> Any:
    return dataclass(frozen=True, slots=True)(
        type(
            name,
            (_Base,),
            {
                "__annotations__": {"b": "int", "c": "list[int]", "d": "int | None"},
                "b": 1,
                "c": field(default_factory=list),
                "d": None,
                "__module__": __name__,
            },
        )
    )


PLAIN = _shape("Shape")
FAST = faster_init(_shape("Shape"))


def test_every_class_made_per_line_sets_its_slots_directly() -> None:
    for cls in FASTER:
        init: Any = cls.__init__
        assert init.__qualname__ == f"{cls.__qualname__}.__init__"
        first = dataclasses.fields(cls)[0].name
        assert f"_set_{first}" in init.__code__.co_freevars, cls


def test_every_such_classs_parameters_are_its_fields() -> None:
    # (the parameters the dataclass's own __init__ would have: the fields in order, the
    # keyword-only ones after a *, each field's default or a factory's marker)
    for cls in FASTER:
        got = inspect.signature(cls.__init__).parameters
        fields = dataclasses.fields(cls)
        assert list(got)[1:] == [f.name for f in fields if not f.kw_only] + [
            f.name for f in fields if f.kw_only
        ]
        for f in fields:
            p = got[f.name]
            assert p.kind == (p.KEYWORD_ONLY if f.kw_only else p.POSITIONAL_OR_KEYWORD)
            if f.default is not dataclasses.MISSING:
                assert p.default == f.default
            elif f.default_factory is dataclasses.MISSING:
                assert p.default is p.empty


def test_a_typed_event_is_made_copied_pickled_and_replaced_as_before() -> None:
    sp = events.Span("run.log", 3, "text", 1.5)
    key = events.CompileKey("jax", "f")
    a = events.FrameworkNote(sp, None, "traced", key)
    b = events.FrameworkNote(sp, None, "traced", key)
    assert a == b and a.detail == {} and a.detail is not b.detail and a.keep is True
    c = events.CacheLookup(sp, None, "tracing", "miss", key, "e1", keep=False)
    assert (c.store, c.outcome, c.key, c.entry, c.keep) == ("tracing", "miss", key, "e1", False)
    assert pickle.loads(pickle.dumps(c)) == c == copy.copy(c)
    assert dataclasses.replace(c, keep=True).keep is True
    with pytest.raises(dataclasses.FrozenInstanceError):
        c.entry = "e2"  # type: ignore[misc]
    with pytest.raises(TypeError):
        events.CacheLookup(sp, None, "tracing", "miss", key, "e1", False)  # type: ignore[misc]


_ARGS = st.lists(st.integers(0, 9), max_size=6)
_KWARGS = st.dictionaries(st.sampled_from(["a", "b", "c", "d", "k", "z", "self"]), st.integers())


def _made(cls: Any, args: list[int], kwargs: dict[str, int]) -> tuple[str, Any]:
    try:
        return "made", cls(*args, **kwargs)
    except TypeError as e:
        return "refused", str(e)


@settings(max_examples=examples(300))
@given(args=_ARGS, kwargs=_KWARGS)
def test_any_call_makes_what_the_dataclasses_init_makes_or_is_refused_alike(
    args: list[int], kwargs: dict[str, int]
) -> None:
    plain, fast = _made(PLAIN, args, kwargs), _made(FAST, args, kwargs)
    assert plain[0] == fast[0]
    if plain[0] == "refused":
        assert plain[1] == fast[1]
    if plain[0] == "made":
        assert repr(plain[1]) == repr(fast[1])
        assert dataclasses.astuple(plain[1]) == dataclasses.astuple(fast[1])
        if "c" not in kwargs and len(args) < 3:  # (a new list each time, as a factory's)
            assert fast[1].c is not FAST(*args, **kwargs).c


def test_a_class_it_cannot_serve_is_refused() -> None:
    @dataclass(frozen=True)
    class NoSlots:
        a: int

    @dataclass(slots=True)
    class NotFrozen:
        a: int

    @dataclass(frozen=True, slots=True)
    class Post:
        a: int

        def __post_init__(self) -> None:
            pass

    for cls in (NoSlots, NotFrozen, Post):
        with pytest.raises(TypeError):
            faster_init(cls)


_KEPT = (events.CacheLookup, events.RecompileReason, events.FrameworkNote)


@settings(max_examples=examples(200))
@given(
    cls=st.sampled_from(_KEPT),
    names=st.lists(
        st.sampled_from(["span", "record", "keep", "key", "note", "store", "rule"]),
        unique=True,
        max_size=3,
    ),
)
def test_a_written_out_copy_is_dataclasses_replace(cls: Any, names: list[str]) -> None:
    # GIVEN a kept event's class and some of its fields, WHEN copied with those replaced,
    # THEN the copy equals dataclasses.replace's, and the original is unchanged
    sp = events.Span("run.log", 3, "text", 1.5)
    key = events.CompileKey("jax", "f")
    made = {
        events.CacheLookup: lambda: cls(sp, None, "tracing", "miss", key, "e1", keep=False),
        events.RecompileReason: lambda: cls(sp, None, key, "dtype-changed", "why", keep=False),
        events.FrameworkNote: lambda: cls(sp, None, "traced", key, {"d": 1}),
    }[cls]()
    fields = {f.name for f in dataclasses.fields(cls)}
    wanted = tuple(names)
    if not set(wanted) <= fields:
        with pytest.raises(TypeError, match="no field"):
            replacer(cls, wanted)
        return
    values = tuple(f"new {n}" for n in wanted)
    before = dataclasses.astuple(made)
    got = replacer(cls, wanted)(made, *values)
    assert type(got) is cls and got is not made
    assert got == dataclasses.replace(made, **dict(zip(wanted, values, strict=True)))
    assert dataclasses.astuple(made) == before
