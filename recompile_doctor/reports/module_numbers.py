"""Each compilation's module as a number, counted once for all the plots.

The timeline's lanes and the cost plot both group a run's compilations by module.  Each
numbered the module names by fingerprint on its own
(:class:`~recompile_doctor.timeline.distinct.NameIndex`, 20 bytes a slot: 21 MB for the
524,000 modules of a 4 GB TensorFlow log), after matplotlib was imported and beside what
the page held, so each was a peak of its own.  :func:`module_numbers` numbers them once,
before the page's libraries are imported, and keeps only a number per compilation; the
fingerprints are dropped as it returns.

Past :data:`~recompile_doctor.timeline.distinct.HELD` distinct modules the table of
fingerprints is given up (62 MB at once for the 1,047,000 modules of an 8 GB log) and the
modules are numbered by sorting instead, in bounded memory (:func:`_numbered_by_sorting`):
each compilation's (fingerprint, place) is written in sorted runs of ``HELD`` to an
anonymous temporary file, the runs are merged to find each module's first compilation,
each compilation's (place, first compilation's place) is sorted again by place, and a pass
in order numbers the modules by their first compilations.

A long run's numbers (:func:`~recompile_doctor.timeline.column.numbers`: past
:data:`~recompile_doctor.timeline.column.SPILL_AFTER` compilations), like the page's
per-module sums and counts made from them, are a column in a temporary file, read a chunk
at a time: a run of a new module per compilation held 4 bytes a compilation here and 25-30
bytes a module in the page's view and plots (70 MB or more for the 4.2 million of a 32 GB
TensorFlow log).  They are read in order, and indexed by module number where a module is
compiled again.
"""

from __future__ import annotations

import heapq
from collections.abc import Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass

from recompile_doctor.model import Compilation
from recompile_doctor.name_digest import WIDTH
from recompile_doctor.timeline import column
from recompile_doctor.timeline.blobs import Blob, Blobs
from recompile_doctor.timeline.distinct import (
    HELD,
    NameIndex,
    fingerprint,
    put_sorted_run,
    read_run,
)
from recompile_doctor.timeline.table import CompilationTable


@dataclass(frozen=True, slots=True)
class ModuleNumbers:
    """``of[i]``: the number of compilation ``i``'s module, modules numbered 0, 1, ... in
    order of their first compilation; ``count``: how many modules."""

    of: Sequence[int]
    count: int

    def firsts(self, numbers: Iterable[int]) -> list[int]:
        """The place of the first compilation of each module of ``numbers``, in one pass
        over :attr:`of` (no further than the last asked for)."""
        numbers = list(numbers)  # (read twice)
        asked = iter(sorted(set(numbers)))
        at: dict[int, int] = {}
        want = next(asked, None)
        # (modules are numbered in order of first compilation: module k's first is before
        # module k + 1's, and no compilation before it is of module k)
        for place, k in enumerate(self.of):
            if want is None:
                break
            if k == want:
                at[k] = place
                want = next(asked, None)
        if want is not None:
            raise ValueError(f"no module numbered {want}")
        return [at[k] for k in numbers]


def module_numbers(compilations: Collection[Compilation], held: int = HELD) -> ModuleNumbers:
    """The numbers of the compilations' modules (a table's read from its module column
    alone, without making the compilations); past ``held`` distinct modules, numbered by
    sorting (the compilations are then read again).  A long run's numbers are a column in a
    temporary file (:func:`~recompile_doctor.timeline.column.numbers`), read in order."""
    index = NameIndex()
    of = column.numbers(_code(len(compilations)), bound=len(compilations))
    modules = _modules(compilations)
    for m in modules:
        of.append(index.number(m))
        if len(index) > held:
            break
    else:
        return ModuleNumbers(of, len(index))
    # (the first reading let go, and its chunk of a spilled column, before the second)
    del index, of, modules
    return _numbered_by_sorting(compilations, held)


def _code(n: int) -> str:
    """The type code of numbers below ``n``."""
    return "I" if n <= 1 << 32 else "Q"


def _modules(compilations: Iterable[Compilation]) -> Iterator[str]:
    if isinstance(compilations, CompilationTable):
        return compilations.modules()
    return (c.module for c in compilations)


#: a record of :func:`_numbered_by_sorting`: a module's fingerprint, then the compilation's
#: place (big-endian: records sort as (fingerprint, place)); then, sorted again, a
#: compilation's place and its module's first compilation's
_PLACE = 8


def _numbered_by_sorting(compilations: Collection[Compilation], held: int) -> ModuleNumbers:
    """:func:`module_numbers`, holding at most ``held`` records at a time: the records
    sorted by module find each module's first compilation, sorted again by place they give
    the numbers in order, and nothing is held per compilation or per module."""
    n = len(compilations)
    blobs = Blobs("recompile-doctor-modules-")
    try:
        by_module = _runs(
            blobs,
            (
                fingerprint(m) + i.to_bytes(_PLACE, "big")
                for i, m in enumerate(_modules(compilations))
            ),
            held,
        )
        # each compilation's place -> the place of its module's first compilation
        firsts = _runs(blobs, _firsts(by_module), held)
        del by_module
        # in order, a module's first compilation comes before its others: it is numbered
        # first, and they take its number
        of = column.numbers(_code(n), bound=n, at_random=True)  # (read at first places)
        count = 0
        for record in heapq.merge(*(read_run(r, 2 * _PLACE) for r in firsts)):
            first = int.from_bytes(record[_PLACE:], "big")
            if first == len(of):
                of.append(count)
                count += 1
            else:
                of.append(of[first])
    finally:
        blobs.close()
    return ModuleNumbers(of, count)


def _runs(blobs: Blobs, records: Iterable[bytes], held: int) -> list[list[Blob]]:
    """``records`` (of one width) in sorted runs of ``held``, in ``blobs``."""
    runs: list[list[Blob]] = []
    run: list[bytes] = []
    for record in records:
        run.append(record)
        if len(run) == held:
            runs.append(put_sorted_run(blobs, run))
            run = []
    if run:
        runs.append(put_sorted_run(blobs, run))
    return runs


def _firsts(by_module: list[list[Blob]]) -> Iterator[bytes]:
    """Per compilation, in order of module (the runs of :func:`_numbered_by_sorting`): its
    place and its module's first compilation's (a record of :data:`_PLACE` bytes each)."""
    last = b""
    first = b""
    for record in heapq.merge(*(read_run(r, WIDTH + _PLACE) for r in by_module)):
        place = record[-_PLACE:]
        if record[:-_PLACE] != last:
            last = record[:-_PLACE]
            first = place
        yield place + first
