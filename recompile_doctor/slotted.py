"""Objects of slotted dataclasses made, and copied with changes, without calling their
``__init__``: their slots are set directly through the classes' slot descriptors (which set
a field even on a frozen class, as its ``__init__`` does).  A frozen dataclass's
``__init__`` sets each field through ``object.__setattr__``: twice the time, for the
millions of objects an analysis makes again from the timeline's columns and packed chunks,
and the events a worker hands to the parent (:mod:`recompile_doctor.parsers._event_codec`).
No ``__post_init__`` runs: only for classes that have none.  :func:`faster_init` gives such a
class an ``__init__`` that sets its slots the same way.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import struct
import sys
from collections.abc import Callable
from types import ModuleType
from typing import Any, Final, TypeVar

from recompile_doctor.dataclass_code import exec_kept

T = TypeVar("T")

#: per class: its dataclass fields when it is a slotted dataclass, else None
_SLOTTED: dict[type, tuple[Any, ...] | None] = {}


def remade_from_fields(obj: Any) -> tuple[Any, ...]:
    """What ``__reduce__`` gives for a frozen dataclass of a compiled module (its own
    ``__reduce__`` calls this): its class, called again with its fields' values in order.
    (mypyc gives such a class a state setter that sets each field through the frozen
    class's ``__setattr__``, which refuses: a copy or an unpickled object failed with
    ``FrozenInstanceError`` in the compiled build.)  Only for classes whose ``__init__``
    takes every field, in order."""
    return (type(obj), tuple(getattr(obj, f.name) for f in dataclasses.fields(obj)))


def slot_setters(cls: type) -> tuple[Any, ...] | None:
    """``(field name, its slot's setter)`` for each field of the slotted dataclass ``cls``,
    in the order of its fields; None for any other class."""
    try:
        return _SLOTTED[cls]
    except KeyError:
        pass
    setters: tuple[Any, ...] | None = None
    if dataclasses.is_dataclass(cls) and "__slots__" in cls.__dict__:
        # the slot descriptors set a field even on a frozen class (as its __init__ does)
        names = [f.name for f in dataclasses.fields(cls)]
        setters = tuple((n, getattr(cls, n).__set__) for n in names)
    _SLOTTED[cls] = setters
    return setters


def rebuilt(cls: type, values: tuple[Any, ...]) -> Any:
    """An object of the slotted dataclass ``cls`` with these field values (in the order of
    its fields), made without calling its ``__init__``."""
    make = _MAKERS.get(cls)
    if make is None:
        make = maker_of(cls)
    return make(values)


def maker_of(cls: type) -> Callable[[tuple[Any, ...]], Any]:
    """The :func:`maker` of ``cls``, made once (compiled code asks :data:`MAKERS` first, and
    calls the maker without :func:`rebuilt`'s interpreted frame)."""
    make = _MAKERS.get(cls)
    if make is None:
        make = _MAKERS[cls] = maker(cls)
    return make


#: per slotted dataclass: a function of its field values that makes an object of it
_MAKERS: dict[type, Callable[[tuple[Any, ...]], Any]] = {}
#: (the same, for compiled callers: :func:`maker_of` fills it)
MAKERS: Final = _MAKERS


def _space(cls: type, setters: tuple[Any, ...]) -> dict[str, Any]:
    """The names the text of :func:`maker` and :func:`replacer` runs with: ``new``, ``cls``
    and each slot's setter (``s0``...), in the module of ``cls`` (so that the package's own
    texts are compiled once and kept between runs, :mod:`recompile_doctor.dataclass_code`)."""
    env: dict[str, Any] = {"__name__": cls.__module__, "new": object.__new__, "cls": cls}
    env.update({f"s{i}": set_ for i, (_, set_) in enumerate(setters)})
    return env


def maker(cls: type) -> Callable[[tuple[Any, ...]], Any]:
    """A function that makes an object of the slotted dataclass ``cls`` from its field
    values: the C module's (``parsers/_native.c``, its slots set from a plan of their
    places: a quarter of the instructions) where it is built, unless
    ``RECOMPILE_DOCTOR_NATIVE=0``; else :func:`maker_py`'s.  Both refuse a number of values
    other than the class's fields' (``ValueError``)."""
    made = _native_maker(cls)
    return made if made is not None else maker_py(cls)


def native_plan(cls: type) -> tuple[ModuleType, Any] | None:
    """The C module and its plan of the slots of ``cls`` (a slotted dataclass), in the
    order of its fields; None where the module is not built or is turned off
    (``RECOMPILE_DOCTOR_NATIVE=0``, as for the scanner: ``parsers._spans``)."""
    from recompile_doctor.parsers._spans import native_in_use

    native = native_in_use()
    if native is None:
        return None
    setters = slot_setters(cls)
    assert setters is not None
    return native, native.slot_plan(cls, tuple(getattr(cls, n) for n, _ in setters))


def _native_maker(cls: type) -> Callable[[tuple[Any, ...]], Any] | None:
    got = native_plan(cls)
    if got is None:
        return None
    native, plan = got
    return functools.partial(native.make_slotted, plan)


def maker_py(cls: type) -> Callable[[tuple[Any, ...]], Any]:
    """:func:`maker` in Python: one slot set after the other without a loop (written out as
    ``dataclasses`` writes ``__init__``: half the time of a loop over the slots, for the
    millions of objects an analysis makes again from the timeline's columns and packed
    chunks)."""
    setters = slot_setters(cls)
    assert setters is not None
    n = len(setters)
    env = _space(cls, setters)
    unpack = "".join(f"v{i}, " for i in range(n))
    body = "".join(f"    s{i}(o, v{i})\n" for i in range(n))
    # (unpacking checks the number of values, as zip(strict=True) did)
    src = f"def make(values):\n    o = new(cls)\n    ({unpack}) = values\n{body}    return o\n"
    exec_kept(src, env)  # (our own text: field positions only)
    make: Callable[[tuple[Any, ...]], Any] = env["make"]
    return make


def replacer(cls: type, names: tuple[str, ...]) -> Callable[..., Any]:
    """A function ``(obj, *values)``: a copy of ``obj`` (of the slotted dataclass ``cls``)
    with the fields ``names`` set to ``values`` and the others taken from ``obj``, made
    without ``__init__`` and written out as :func:`maker` is (``dataclasses.replace`` for
    these fields, without its ``__init__``, keyword arguments or loop: a tenth of the time
    of a loop over the slots, for the timeline's copy of every lookup, reason and note it
    keeps; in C where the module is built, as :func:`maker`: :func:`replacer_py` is the
    Python).  Raises ``TypeError`` for a class that is not a slotted dataclass, a name that
    is not one of its fields, or one named twice."""
    setters = slot_setters(cls)
    if setters is None:
        raise TypeError(f"{cls.__qualname__} is not a slotted dataclass")
    fields = [n for n, _ in setters]
    for name in names:
        if name not in fields:
            raise TypeError(f"{cls.__name__} has no field {name!r}")
    if len(set(names)) != len(names):
        raise TypeError(f"{cls.__name__}: a field named twice in {names!r}")
    got = native_plan(cls)
    if got is None:
        return replacer_py(cls, names)
    native, plan = got
    positions = struct.pack(f"{len(names)}n", *[fields.index(n) for n in names])
    return functools.partial(native.copy_slotted, plan, positions)


def replacer_py(cls: type, names: tuple[str, ...]) -> Callable[..., Any]:
    """:func:`replacer` in Python (``cls`` and ``names`` as it checked them)."""
    setters = slot_setters(cls)
    assert setters is not None
    fields = [n for n, _ in setters]
    env = _space(cls, setters)
    params = "".join(f", v{i}" for i in range(len(names)))
    body = "".join(
        f"    s{i}(o, {f'v{names.index(n)}' if n in names else f'obj.{n}'})\n"
        for i, n in enumerate(fields)
    )
    src = f"def replace(obj{params}):\n    o = new(cls)\n{body}    return o\n"
    exec_kept(src, env)  # (our own text: field names only)
    replace: Callable[..., Any] = env["replace"]
    return replace


def faster_init(cls: type[T]) -> type[T]:
    """Give ``cls`` (a frozen dataclass with slots, no ``__post_init__``, no ``InitVar``)
    an ``__init__`` that sets its slots directly; returns ``cls``.

    For the frozen classes made once per log line (the typed events of
    :mod:`recompile_doctor.events`): the ``__init__`` that ``dataclasses`` writes sets each
    field through ``object.__setattr__`` (1.7 µs for an event of seven fields on the
    development machine, a twentieth of a JAX log's time); this one calls each slot's
    setter (about 1 µs), with the same parameters, defaults and default factories (a new
    value per object), so that nothing else can tell the two apart.  Its text is compiled
    once and kept like the methods ``dataclasses`` writes
    (:mod:`recompile_doctor.dataclass_code`)."""
    c: Any = cls  # (a dataclass: its fields and parameters are read)
    params = dataclasses.fields(c)
    old: Any = c.__init__
    code = old.__code__
    positional = [f.name for f in params if not f.kw_only]
    keywords = [f.name for f in params if f.kw_only]
    if (
        not c.__dataclass_params__.frozen
        or "__slots__" not in cls.__dict__
        or hasattr(cls, "__post_init__")
        or any(not f.init for f in params)
        or list(code.co_varnames[1 : 1 + code.co_argcount - 1]) != positional
        or list(code.co_varnames[code.co_argcount : code.co_argcount + code.co_kwonlyargcount])
        != keywords
    ):
        raise TypeError(f"{cls.__qualname__}: not a frozen, slotted dataclass of plain fields")
    setters = dict(slot_setters(cls) or ())
    given = old.__defaults__ or ()
    defaults = dict(zip(positional[len(positional) - len(given) :], given, strict=True))
    defaults.update(old.__kwdefaults__ or {})
    env: dict[str, Any] = {}
    body = []
    for f in params:
        env[f"_set_{f.name}"] = setters[f.name]
        value = f.name
        if f.default_factory is not dataclasses.MISSING:
            # (dataclasses' own marker is the parameter's default: a new value when it is)
            env[f"_marker_{f.name}"] = defaults[f.name]
            env[f"_factory_{f.name}"] = f.default_factory
            value = f"_factory_{f.name}() if {f.name} is _marker_{f.name} else {f.name}"
        body.append(f"        _set_{f.name}(self, {value})")
    signature = ", ".join(["self", *positional, *(["*", *keywords] if keywords else [])])
    text = (
        f"def __make__({', '.join(env)}):\n"
        f"    def __init__({signature}):\n" + "\n".join(body) + "\n    return __init__\n"
    )
    space: dict[str, Any] = {"__name__": cls.__module__}
    exec_kept(text, space)
    new = space["__make__"](*env.values())
    new.__defaults__ = old.__defaults__
    new.__kwdefaults__ = old.__kwdefaults__
    new.__qualname__ = f"{cls.__qualname__}.__init__"
    new.__module__ = cls.__module__
    new.__annotations__ = old.__annotations__
    new.__doc__ = old.__doc__
    native = _native_init(cls, new, [*positional, *keywords], len(positional), defaults)
    c.__init__ = new if native is None else native
    if native is not None:
        _calls_in_c(cls, native)
    _reads_from_slots(cls)
    return cls


def _calls_in_c(cls: type, init: Any) -> None:
    """Have a call of ``cls`` make its object and run its C ``__init__`` (``init``) in one
    call of the C module (``class_calls`` in ``parsers/_native.c``), instead of the generic
    way a class is called (its arguments made a tuple and a dict, ``object.__new__``, the
    ``__init__`` looked up and called: about 1,600 instructions a typed event; a JAX
    worker makes 57,000 of them for 24 MB).  Nothing where the module has no such function,
    or where this Python's classes are called another way already (it refuses them)."""
    from recompile_doctor.parsers._spans import native_in_use

    native = native_in_use()
    calls = getattr(native, "class_calls", None)
    if calls is None:
        return
    # (a class called in a way of its own, or the module's table of classes full: left so)
    with contextlib.suppress(TypeError, ValueError):
        calls(cls, init)


def _reads_from_slots(cls: type) -> None:
    """Have the C module answer reads of the fields of ``cls`` (a slotted dataclass) from
    their slots (``fast_fields`` in ``parsers/_native.c``) where the package runs compiled:
    compiled code reads an interpreted class's field through the generic attribute look-up
    (about 150 instructions, and the parent of a JAX log read by two processes reads 1.5
    million of them for 24 MB: a tenth of its reading).  Not where it runs interpreted: the
    interpreter's own fast path for a slot read wants the generic look-up, and would not be
    taken.  Nothing where the C module is not built, is turned off
    (``RECOMPILE_DOCTOR_NATIVE=0``), or has no such function."""
    if not _runs_compiled():
        return
    got = native_plan(cls)
    fast = getattr(got[0], "fast_fields", None) if got is not None else None
    if got is None or fast is None:
        return
    setters = slot_setters(cls)
    assert setters is not None
    # (a class that reads its attributes its own way, or the module's table full: left so)
    with contextlib.suppress(TypeError, ValueError):
        fast(got[1], tuple(name for name, _ in setters))


@functools.cache
def _runs_compiled() -> bool:
    """Whether the timeline's builder, the reader of the events' fields, runs compiled
    (asked once)."""
    from recompile_doctor.compiled_modules import compiled

    return "recompile_doctor.timeline.builder" in compiled()


#: the default of a parameter that has none, for :func:`_native_init`
_REQUIRED: Final = object()


def _native_init(
    cls: type, python: Any, names: list[str], positional: int, defaults: dict[str, Any]
) -> Any | None:
    """The C module's ``__init__`` for ``cls`` (``parsers/_native.c``: ``slot_init``) with
    the parameters of ``python``, :func:`faster_init`'s: ``names`` in the order of the
    signature, the first ``positional`` of them positional or keyword, and their
    ``defaults`` (a factory's marker for a field that has one).  It makes a valid call's
    object in C and hands any other call to ``python``, which raises the error the
    dataclass's own ``__init__`` would.  None where the module is not built or is turned off
    (``RECOMPILE_DOCTOR_NATIVE=0``), or for a class of more fields than it takes."""
    got = native_plan(cls)
    if got is None:
        return None
    native, plan = got
    fields = {f.name: (i, f) for i, f in enumerate(dataclasses.fields(cls))}
    factories = []
    for name in names:
        factory = fields[name][1].default_factory
        factories.append(None if factory is dataclasses.MISSING else factory)
    try:
        return native.slot_init(
            plan,
            tuple(sys.intern(n) for n in names),
            positional,
            struct.pack(f"{len(names)}n", *[fields[n][0] for n in names]),
            tuple(defaults.get(n, _REQUIRED) for n in names),
            tuple(factories),
            _REQUIRED,
            python,
        )
    except ValueError:  # (more fields than it takes)
        return None
