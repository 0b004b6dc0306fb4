"""A faster ``__init__`` for the frozen, slotted dataclasses made once per log line (the
typed events of :mod:`recompile_doctor.events`).

A frozen class refuses its own ``__setattr__``, so the ``__init__`` that ``dataclasses``
writes sets each field through ``object.__setattr__``: 1.7 µs for an event of seven fields
on the development machine, a twentieth of a JAX log's time.  :func:`faster_init` gives the
class an ``__init__`` that calls each slot's own setter instead (0.9 µs), with the same
parameters, defaults and default factories (a new value per object), so that nothing else
can tell the two apart.  Its text is compiled once and kept like the methods
``dataclasses`` writes (:mod:`recompile_doctor.dataclass_code`).
"""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

from recompile_doctor.dataclass_code import exec_kept

T = TypeVar("T")


def faster_init(cls: type[T]) -> type[T]:
    """Give ``cls`` (a frozen dataclass with slots, no ``__post_init__``, no ``InitVar``)
    an ``__init__`` that sets its slots directly; returns ``cls``."""
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
    given = old.__defaults__ or ()
    defaults = dict(zip(positional[len(positional) - len(given) :], given, strict=True))
    defaults.update(old.__kwdefaults__ or {})
    env: dict[str, Any] = {}
    body = []
    for f in params:
        env[f"_set_{f.name}"] = getattr(cls, f.name).__set__
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
    c.__init__ = new
    return cls
