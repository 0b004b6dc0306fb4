"""Items pickled for the timeline's packed chunks and spilled columns, a slotted dataclass
as its class and field values.

A module of its own, never compiled: a compiled subclass of :class:`pickle.Pickler` crashes
the pickler (its ``reducer_override`` is called from the pickler's C code), so the compiled
:mod:`.packed` calls these (and :mod:`.column`).
"""

from __future__ import annotations

import io
import pickle
from typing import Any

from recompile_doctor.slotted import rebuilt, slot_setters


def dumps(items: list[Any]) -> bytes:
    """``items`` pickled, a slotted dataclass as its class and field values (see below)."""
    buf = io.BytesIO()
    _Pickler(buf, protocol=pickle.HIGHEST_PROTOCOL).dump(items)
    return buf.getvalue()


def loads(data: bytes | memoryview) -> list[Any]:
    """The items :func:`dumps` pickled."""
    items: list[Any] = pickle.loads(data)
    return items


# A slotted dataclass unpickles through dataclasses' __setstate__, which looks up the
# class's fields for every object (12 us each: most of an analysis's time on a log with
# 100,000 loads).  Packed items are pickled as (class, field values) instead and rebuilt
# by setting the slots directly (:mod:`recompile_doctor.slotted`).


class _Pickler(pickle.Pickler):
    def reducer_override(self, obj: Any) -> Any:
        setters = slot_setters(type(obj))
        if setters is None:
            return NotImplemented
        return rebuilt, (type(obj), tuple([getattr(obj, n) for n, _ in setters]))
