"""Slotted dataclasses made and copied with their slots set directly: the faster
``__init__`` of the typed events (the same parameters, defaults, default factories and
errors as the one ``dataclasses`` writes), and the written-out copy with fields replaced."""

from __future__ import annotations

import copy
import dataclasses
import functools
import gc
import inspect
import pickle
import struct
import subprocess
import sys
import typing
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from recompile_doctor import events, model
from recompile_doctor.compiled_modules import NATIVE_ENV
from recompile_doctor.model import ValueChange
from recompile_doctor.parsers._spans import native_in_use, native_module
from recompile_doctor.slotted import (
    _native_maker,
    faster_init,
    maker,
    maker_py,
    replacer,
    replacer_py,
    slot_setters,
)
from recompile_doctor.timeline import types as timeline_types
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
    # (in C where the module is built: its __wrapped__ is the Python, which it hands the
    # calls it does not make whole)
    for cls in FASTER:
        init: Any = cls.__init__
        assert init.__qualname__ == f"{cls.__qualname__}.__init__"
        python = inspect.unwrap(init)
        # (the module in use when the classes were made: not with RECOMPILE_DOCTOR_NATIVE=0)
        assert (python is not init) == (native_in_use() is not None), cls
        first = dataclasses.fields(cls)[0].name
        assert f"_set_{first}" in python.__code__.co_freevars, cls


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


# -- the makers: C where the module is built, the Python twin elsewhere --------------------

NATIVE: Any = native_module()
needs_native = pytest.mark.skipif(NATIVE is None, reason="the C module is not built here")
#: for what the package chose (its makers, copies and __init__s): the C module in use, not
#: merely built (RECOMPILE_DOCTOR_NATIVE=0 turns it off, and the package makes its objects
#: in Python)
needs_native_in_use = pytest.mark.skipif(
    native_in_use() is None, reason="the C module is not built, or turned off"
)


def _slotted_classes() -> list[type]:
    """Every slotted dataclass of the modules whose objects are made again from their
    field values (events taken back from a worker, packed chunks, the compilations' table)."""
    out = []
    for mod in (events, model, timeline_types):
        for c in vars(mod).values():
            if isinstance(c, type) and c.__module__ == mod.__name__ and slot_setters(c):
                out.append(c)
    return out


SLOTTED = _slotted_classes()
_VALUES = st.one_of(st.none(), st.integers(), st.text(max_size=5), st.builds(object))


def test_the_classes_made_again_are_found() -> None:
    assert {events.CacheLookup, events.CompileKey, ValueChange} <= set(SLOTTED)
    assert any(c.__name__ == "Compilation" for c in SLOTTED)


@needs_native_in_use
@settings(max_examples=examples(100), deadline=None)
@given(data=st.data())
def test_the_c_maker_makes_what_the_python_maker_makes(data: st.DataObject) -> None:
    # GIVEN a slotted dataclass made again from field values, and any values for its fields
    cls = data.draw(st.sampled_from(SLOTTED))
    setters = slot_setters(cls) or ()
    values = tuple(data.draw(st.lists(_VALUES, min_size=len(setters), max_size=len(setters))))
    c_make, py_make = _native_maker(cls), maker_py(cls)
    assert c_make is not None
    # WHEN both makers make an object of them, THEN each field holds the very value given,
    # in both, and the objects are of the class (tracked by the collector alike)
    made, twin = c_make(values), py_make(values)
    assert type(made) is type(twin) is cls
    for name, _ in setters:
        assert getattr(made, name) is getattr(twin, name)
    assert gc.is_tracked(made) == gc.is_tracked(twin)
    # and a number of values other than the fields' is refused by both
    for wrong in (values[:-1], (*values, None)):
        with pytest.raises(ValueError):
            c_make(wrong)
        with pytest.raises(ValueError):
            py_make(wrong)


@needs_native_in_use
def test_the_c_makers_objects_hold_their_values_as_long_as_they_live() -> None:
    value = object()
    make = _native_maker(events.CompileKey)
    assert make is not None
    n = len(slot_setters(events.CompileKey) or ())
    before = sys.getrefcount(value)
    made = [make((value,) * n) for _ in range(100)]
    assert sys.getrefcount(value) == before + 100 * n
    del made
    gc.collect()
    assert sys.getrefcount(value) == before


@needs_native
def test_a_plan_is_made_only_of_the_classs_own_object_slots() -> None:
    import abc

    key = events.CompileKey
    ok = NATIVE.slot_plan(key, (key.function,))
    assert NATIVE.make_slotted(ok, ("f",)).function == "f"
    refused: list[tuple[Any, Any]] = [
        (key, (property(lambda _s: 1),)),  # not a slot
        (key, (ValueChange.what,)),  # another class's slot
        (type, (type.__dict__["__basicsize__"],)),  # a read-only member, not an object
        (key, [key.function]),  # not a tuple
        ("CompileKey", (key.function,)),  # not a class
    ]

    class Abstract(abc.ABC):
        __slots__ = ("x",)

        @abc.abstractmethod
        def f(self) -> None: ...

    refused.append((Abstract, (Abstract.x,)))  # type: ignore[attr-defined]
    for cls, descriptors in refused:
        with pytest.raises(TypeError):
            NATIVE.slot_plan(cls, descriptors)
    # (a plan is its capsule, nothing else)
    for args in ((object(), ()), (ok, ["f"]), (ok,)):
        with pytest.raises(TypeError):
            NATIVE.make_slotted(*args)


def test_native_0_makes_with_the_python_maker(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(NATIVE_ENV, "0")
    assert not isinstance(maker(events.CompileKey), functools.partial)
    monkeypatch.delenv(NATIVE_ENV)
    made = maker(events.CompileKey)
    if NATIVE is None:
        assert not isinstance(made, functools.partial)
    else:
        assert isinstance(made, functools.partial) and made.func is NATIVE.make_slotted


@needs_native_in_use
@settings(max_examples=examples(100), deadline=None)
@given(data=st.data())
def test_the_c_copy_is_the_python_copy(data: st.DataObject) -> None:
    # GIVEN a slotted class made again, an object of it of any field values, and some of
    # its fields with new values
    cls = data.draw(st.sampled_from(SLOTTED))
    fields = [n for n, _ in slot_setters(cls) or ()]
    values = tuple(data.draw(st.lists(_VALUES, min_size=len(fields), max_size=len(fields))))
    obj = maker_py(cls)(values)
    names = tuple(data.draw(st.lists(st.sampled_from(fields), unique=True, max_size=4)))
    new = tuple(data.draw(st.lists(_VALUES, min_size=len(names), max_size=len(names))))
    c_copy, py_copy = replacer(cls, names), replacer_py(cls, names)
    assert isinstance(c_copy, functools.partial)
    # WHEN both copy it, THEN the copies hold the very same values, the object is unchanged
    made, twin = c_copy(obj, *new), py_copy(obj, *new)
    assert type(made) is type(twin) is cls
    for name in fields:
        assert getattr(made, name) is getattr(twin, name)
    assert all(getattr(obj, n) is v for n, v in zip(fields, values, strict=True))
    # and a number of values other than the names' is refused by both
    for wrong in (new[:-1], (*new, None)):
        if len(wrong) != len(names):
            with pytest.raises(TypeError):
                c_copy(obj, *wrong)
            with pytest.raises(TypeError):
                py_copy(obj, *wrong)
    # and so is an object of another class
    with pytest.raises((TypeError, AttributeError)):
        c_copy(object(), *new)


@needs_native
def test_a_copy_of_an_object_with_a_slot_unset_is_refused_alike() -> None:
    cls = events.CompileKey
    bare = object.__new__(cls)  # (no slot set)
    for copier in (replacer(cls, ("function",)), replacer_py(cls, ("function",))):
        with pytest.raises(AttributeError):
            copier(bare, "f")
    fields = tuple(n for n, _ in slot_setters(cls) or ())
    every = maker_py(cls)(tuple(range(len(fields))))
    whole = replacer(cls, fields)(bare, *range(len(fields)))  # (every slot given)
    assert dataclasses.astuple(whole) == dataclasses.astuple(every)


def test_a_field_named_twice_is_refused() -> None:
    with pytest.raises(TypeError, match="twice"):
        replacer(events.CacheLookup, ("key", "key"))


def test_native_0_copies_with_python(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(NATIVE_ENV, "0")
    assert not isinstance(replacer(events.CacheLookup, ("key",)), functools.partial)


def _init_made(cls: Any, init: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """``cls(*args, **kwargs)`` made by ``init`` (or the error it raises)."""
    obj = object.__new__(cls)
    try:
        init(obj, *args, **kwargs)
    except TypeError as e:
        return ("refused", str(e))
    return ("made", obj)


@needs_native_in_use
@settings(max_examples=examples(200), deadline=None)
@given(data=st.data())
def test_the_c_init_of_every_typed_event_is_its_python_init(data: st.DataObject) -> None:
    # GIVEN any typed event class and any call (fields by position or keyword, some left to
    # their defaults, some unknown or repeated) THEN the C __init__ makes what the Python
    # one makes, or is refused with its words
    cls = data.draw(st.sampled_from(FASTER))
    init: Any = cls.__init__
    python = init.__wrapped__
    names = list(inspect.signature(python).parameters)[1:]
    n = data.draw(st.integers(0, len(names) + 1))
    args = tuple(data.draw(st.lists(st.integers(), min_size=n, max_size=n)))
    kwargs = data.draw(
        st.dictionaries(st.sampled_from([*names, "z", "self"]), st.integers(), max_size=4)
    )
    c, py = _init_made(cls, init, args, kwargs), _init_made(cls, python, args, kwargs)
    assert c[0] == py[0]
    if c[0] == "refused":
        assert c[1] == py[1]
    else:
        for f in dataclasses.fields(cls):
            assert getattr(c[1], f.name) == getattr(py[1], f.name), f.name


@needs_native_in_use
def test_the_c_init_calls_a_factory_for_each_object_and_passes_on_its_error() -> None:
    a, b = FAST(1), FAST(1)
    assert a.c == [] and a.c is not b.c
    marker = inspect.signature(FAST).parameters["c"].default
    assert FAST(1, 2, marker).c == []  # (the marker given is the default: a new value)

    def fails() -> list[int]:
        raise RuntimeError("no value")

    failing: Any = faster_init(_shape("Failing"))
    failing_init = NATIVE.slot_init(
        *_slot_init_args(failing, factories={"c": fails}), failing.__init__.__wrapped__
    )
    obj = object.__new__(failing)
    with pytest.raises(RuntimeError, match="no value"):
        failing_init(obj, 1)
    with pytest.raises(AttributeError):
        _ = obj.a  # (nothing set)


def _slot_init_args(cls: Any, factories: dict[str, Any]) -> tuple[Any, ...]:
    """The arguments of ``slot_init`` for ``cls`` (a faster_init class), but its
    ``__wrapped__``, with these ``factories``."""
    from recompile_doctor.slotted import _REQUIRED, native_plan

    got = native_plan(cls)
    assert got is not None
    fields = [f.name for f in dataclasses.fields(cls)]
    params = inspect.signature(cls.__init__.__wrapped__).parameters
    names = list(params)[1:]
    positional = sum(1 for p in params.values() if p.kind == p.POSITIONAL_OR_KEYWORD) - 1
    defaults = tuple(
        _REQUIRED if params[n].default is params[n].empty else params[n].default for n in names
    )
    return (
        got[1],
        tuple(names),
        positional,
        struct.pack(f"{len(names)}n", *[fields.index(n) for n in names]),
        defaults,
        tuple(factories.get(n) for n in names),
        _REQUIRED,
    )


@needs_native
def test_the_c_init_holds_what_it_sets_as_long_as_its_object_lives() -> None:
    value = object()
    before = sys.getrefcount(value)
    made = [FAST(value, value, [value], value, k=value) for _ in range(100)]
    assert sys.getrefcount(value) == before + 100 * 5  # (a, b, d, k and c's item)
    for obj in made[:50]:  # (made again: the old values let go)
        type(obj).__init__(obj, 1)
    assert sys.getrefcount(value) == before + 50 * 5
    del made, obj
    gc.collect()
    assert sys.getrefcount(value) == before


@needs_native_in_use
def test_slot_init_refuses_what_is_not_the_signature_of_its_plan() -> None:
    good = _slot_init_args(FAST, {"c": list})
    wrapped = FAST.__init__.__wrapped__
    assert NATIVE.slot_init(*good, wrapped)(object.__new__(FAST), 1) is None
    bad: list[tuple[Any, ...]] = [
        (object(), *good[1:], wrapped),  # not a plan
        (good[0], good[1][:-1], *good[2:], wrapped),  # a parameter short
        (good[0], good[1], 99, *good[3:], wrapped),  # more positions than parameters
        (good[0], *good[1:3], good[3][:-1], *good[4:], wrapped),  # fields cut short
        (good[0], *good[1:3], good[3][:8] * (len(good[1])), *good[4:], wrapped),  # a slot twice
        (*good, "not callable"),
        (*good[:5], (1,) * len(good[1]), good[6], wrapped),  # a factory not callable
    ]
    for args in bad:
        with pytest.raises((TypeError, ValueError)):
            NATIVE.slot_init(*args)


def test_native_0_inits_with_python(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(NATIVE_ENV, "0")
    cls: Any = faster_init(_shape("Shape"))
    assert inspect.isfunction(cls.__init__)
    monkeypatch.delenv(NATIVE_ENV)
    cls = faster_init(_shape("Shape"))
    assert inspect.isfunction(cls.__init__) == (NATIVE is None)


# -- a call of the class made in one C call (class_calls) --------------------------------


@needs_native
def test_every_class_with_a_c_init_is_called_in_c_where_the_module_is_in_use() -> None:
    on = native_in_use() is not None
    for cls in (*FASTER, FAST):
        assert NATIVE.sped_up(cls)[1] is on, cls
    assert not NATIVE.sped_up(PLAIN)[1]


@pytest.mark.skipif(native_in_use() is None, reason="the C module is not built, or turned off")
@settings(max_examples=examples(200), deadline=None)
@given(data=st.data())
def test_a_call_of_the_class_makes_what_its_python_init_makes(data: st.DataObject) -> None:
    # GIVEN any class given the C __init__ and any call (by position or keyword, some left
    # to their defaults, some unknown, repeated or too many) THEN calling the class makes
    # what its Python __init__ makes on a new object, or is refused with its words
    cls = data.draw(st.sampled_from([*FASTER, FAST]))
    python = cls.__init__.__wrapped__
    names = list(inspect.signature(python).parameters)[1:]
    n = data.draw(st.integers(0, len(names) + 2))
    args = tuple(data.draw(st.lists(st.integers(), min_size=n, max_size=n)))
    kwargs = data.draw(
        st.dictionaries(st.sampled_from([*names, "z", "self"]), st.integers(), max_size=4)
    )
    try:
        got: Any = ("made", cls(*args, **kwargs))
    except TypeError as e:
        got = ("refused", str(e))
    want = _init_made(cls, python, args, kwargs)
    assert got[0] == want[0]
    if got[0] == "refused":
        assert got[1] == want[1]
    else:
        assert type(got[1]) is cls
        for f in dataclasses.fields(cls):
            assert getattr(got[1], f.name) == getattr(want[1], f.name), f.name


@needs_native
def test_a_class_whose_init_is_set_anew_or_a_subclass_is_called_the_generic_way() -> None:
    cls = faster_init(_shape("Renewed"))
    assert NATIVE.sped_up(cls)[1] is (native_in_use() is not None)
    made = cls(1, 2)
    assert (made.a, made.b, made.c, made.k) == (1, 2, [], 7)

    def init(self: Any, a: int) -> None:
        object.__setattr__(self, "a", -a)
        object.__setattr__(self, "b", 0)
        object.__setattr__(self, "c", [])
        object.__setattr__(self, "d", None)
        object.__setattr__(self, "k", 0)

    cls.__init__ = init
    assert cls(5).a == -5
    with pytest.raises(TypeError):
        cls(5, 6)

    @dataclass(frozen=True, slots=True)
    class Sub(FAST):  # type: ignore[misc,valid-type]
        e: int = 3

    s = Sub(1, e=4)
    assert (s.a, s.b, s.e, type(s)) == (1, 1, 4, Sub)
    # a class whose __init__ is another, or an __init__ not of the C module: refused
    with pytest.raises(TypeError):
        NATIVE.class_calls(PLAIN, FAST.__init__)
    with pytest.raises(TypeError):
        NATIVE.class_calls(FAST, object())


_MANY_CLASSES = """
from tests.test_slotted import _shape, faster_init
made = [faster_init(_shape(f"Many{k}")) for k in range(70)]
for k, cls in enumerate(made):
    obj = cls(k, 2)
    assert (obj.a, obj.b, obj.c, obj.d, obj.k) == (k, 2, [], None, 7)
    assert obj.a == k and getattr(obj, "b") == 2
print("ok")
"""


@needs_native
def test_more_classes_than_the_c_tables_hold_are_made_all_the_same() -> None:
    # GIVEN more classes given the faster __init__ than the C module's tables take (64; in
    # a process of its own: the tables are the process's) THEN each is made and read; those
    # past the tables are called and read the generic way
    got = subprocess.run(
        [sys.executable, "-c", _MANY_CLASSES], capture_output=True, text=True, check=False
    )
    assert got.returncode == 0 and got.stdout.strip() == "ok", got.stderr
