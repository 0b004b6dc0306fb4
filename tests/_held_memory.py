"""The memory a table holds, and the most it holds while one of its merges runs, measured
without tracing every allocation that built it.

``tracemalloc`` slows Python 3.11 about ten times over while it traces (it finds the line of
each allocation by walking its code's line table): a 300,000-entry digest table built under
it took 33 s where untraced 3.8, and the memory tests of the packed tables took 2.5 minutes
of the suite.  So the tests build their tables untraced and then measure:

* :func:`held_bytes`: the bytes of the objects a table reaches, each once, as
  ``sys.getsizeof`` counts them (an object with its buffer and the collector's header): what
  ``tracemalloc`` counted of a 300,000-entry digest table built under it, to 0.05 % (31.537
  bytes an entry against 31.552);
* :func:`peak_while`: the most a table holds while a merge (or packing) runs, traced
  (:func:`traced_merges`: those of its biggest merges as it grows).

What a table leaves outside itself is not in :func:`held_bytes`: the smaller tests that
trace a whole table's making (``test_a_digest_table_takes_less_memory_than_a_dict``) see it.
"""

from __future__ import annotations

import copy
import gc
import sys
import tracemalloc
import types
from collections.abc import Callable, Iterable, Sized

import pytest

#: what a table refers to without holding it: classes, modules, functions and code are
#: shared with everything, and a function (the rows' reader of an index, say) is its caller's
_NOT_HELD = (
    type,
    types.ModuleType,
    types.FunctionType,
    types.BuiltinFunctionType,
    types.MethodType,
    types.MethodWrapperType,
    types.CodeType,
)


def held_bytes(root: object) -> int:
    """The bytes of ``root`` and of every object it reaches (through
    ``gc.get_referents``), each counted once, classes, modules, functions and code not."""
    seen: set[int] = set()
    todo = [root]
    total = 0
    while todo:
        obj = todo.pop()
        if id(obj) in seen or isinstance(obj, _NOT_HELD):
            continue
        seen.add(id(obj))
        total += sys.getsizeof(obj)
        todo.extend(gc.get_referents(obj))
    return total


def peak_while(table: object, parts: Iterable[str], run: Callable[[], object]) -> tuple[int, int]:
    """(what ``table`` holds as ``run`` begins, the most it holds while ``run`` runs), in
    bytes.  ``run`` is traced; the attributes ``parts`` of the table (those ``run`` lets go
    of) are copied under tracing first, so that what ``run`` frees of them counts (anything
    else it frees does not: the peak is never under the true one)."""
    tracemalloc.start()
    try:
        for name in parts:
            setattr(table, name, copy.deepcopy(getattr(table, name)))
        held = held_bytes(table)
        base = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        run()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return held, held + peak - base


def traced_merges(
    monkeypatch: pytest.MonkeyPatch, cls: type[Sized], parts: tuple[str, ...], from_len: int
) -> list[tuple[int, int]] | None:
    """The list to which each merge (``cls._merge``) of a table holding ``from_len`` entries
    or more adds what :func:`peak_while` measures of it (the smaller ones run untraced);
    None where ``cls`` runs compiled (its own calls to ``_merge`` go past the class's
    attribute, and no merge can be watched)."""
    import sys

    from recompile_doctor.compiled_modules import runs_compiled

    if runs_compiled(sys.modules[cls.__module__].__file__ or ""):
        return None
    peaks: list[tuple[int, int]] = []
    merge = cls._merge  # type: ignore[attr-defined]

    def watched(table: Sized) -> None:
        if len(table) < from_len:
            return merge(table)  # type: ignore[no-any-return]
        peaks.append(peak_while(table, parts, lambda: merge(table)))
        return None

    monkeypatch.setattr(cls, "_merge", watched)
    return peaks


def kept_after(run: Callable[[], object]) -> int:
    """The bytes still allocated after ``run`` that were not before it, traced (``run`` once
    untraced first, so that the caches it fills are full; the garbage of cycles collected
    before each count, such as the exceptions ``pytest.raises`` caught): what a C function
    leaks, say."""
    run()
    tracemalloc.start()
    try:
        gc.collect()
        before = tracemalloc.get_traced_memory()[0]
        run()
        gc.collect()
        after = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    return after - before
