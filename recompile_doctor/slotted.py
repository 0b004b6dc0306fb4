"""Objects of slotted dataclasses made, and copied with changes, without calling their
``__init__``: their slots are set directly through the classes' slot descriptors (which set
a field even on a frozen class, as its ``__init__`` does).  A frozen dataclass's
``__init__`` sets each field through ``object.__setattr__``: twice the time, for the
millions of objects an analysis makes again from the timeline's columns and packed chunks,
and the events a worker hands to the parent (:mod:`recompile_doctor.parsers._event_codec`).
No ``__post_init__`` runs: only for classes that have none.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

#: per class: its dataclass fields when it is a slotted dataclass, else None
_SLOTTED: dict[type, tuple[Any, ...] | None] = {}


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
        make = _MAKERS[cls] = maker(cls)
    return make(values)


#: per slotted dataclass: a function of its field values that makes an object of it
_MAKERS: dict[type, Callable[[tuple[Any, ...]], Any]] = {}


def maker(cls: type) -> Callable[[tuple[Any, ...]], Any]:
    """A function that makes an object of the slotted dataclass ``cls`` from its field
    values, one slot set after the other without a loop (written out as ``dataclasses``
    writes ``__init__``: half the time of a loop over the slots, for the millions of objects
    an analysis makes again from the timeline's columns and packed chunks)."""
    setters = slot_setters(cls)
    assert setters is not None
    n = len(setters)
    env: dict[str, Any] = {"new": object.__new__, "cls": cls}
    env.update({f"s{i}": set_ for i, (_, set_) in enumerate(setters)})
    unpack = "".join(f"v{i}, " for i in range(n))
    body = "".join(f"    s{i}(o, v{i})\n" for i in range(n))
    # (unpacking checks the number of values, as zip(strict=True) did)
    src = f"def make(values):\n    o = new(cls)\n    ({unpack}) = values\n{body}    return o\n"
    exec(src, env)  # (our own text: field positions only)
    make: Callable[[tuple[Any, ...]], Any] = env["make"]
    return make


def replaced(obj: T, **changes: Any) -> T:
    """``dataclasses.replace(obj, **changes)`` without calling ``__init__``: the object's
    slots are set directly, as :func:`rebuilt` does (a third of the time: the timeline
    copies one event per cache lookup, reason and note, and the report one compilation per
    recompilation).  For a slotted dataclass; any other goes through ``replace``."""
    cls = type(obj)
    setters = slot_setters(cls)
    if setters is None:
        return dataclasses.replace(obj, **changes)  # type: ignore[type-var]
    new: Any = object.__new__(cls)
    for name, set_ in setters:
        set_(new, changes.pop(name) if name in changes else getattr(obj, name))
    if changes:
        raise TypeError(f"{cls.__name__} has no field {next(iter(changes))!r}")
    return new  # type: ignore[no-any-return]
