"""Each compilation's module as a number, counted once for all the plots.

The timeline's lanes and the cost plot both group a run's compilations by module.  Each
numbered the module names by fingerprint on its own
(:class:`~recompile_doctor.timeline.distinct.NameIndex`, 20 bytes a slot: 21 MB for the
524,000 modules of a 4 GB TensorFlow log), after matplotlib was imported and beside what
the page held, so each was a peak of its own.  :func:`module_numbers` numbers them once,
before the page's libraries are imported, and keeps only a 4-byte number per compilation;
the fingerprints are dropped as it returns.

Past :data:`~recompile_doctor.timeline.distinct.HELD` distinct modules the table of
fingerprints is given up (62 MB at once for the 1,047,000 modules of an 8 GB log) and the
modules are numbered by sorting instead, in bounded memory: each compilation's
(fingerprint, place) is written in sorted runs of ``HELD`` to an anonymous temporary file,
the runs are merged to find each module's first compilation, and a pass in order numbers
the modules by it (:func:`_numbered_by_sorting`).
"""

from __future__ import annotations

import heapq
from array import array
from collections.abc import Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass

from recompile_doctor.model import Compilation
from recompile_doctor.name_digest import WIDTH
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


def module_numbers(compilations: Collection[Compilation], held: int = HELD) -> ModuleNumbers:
    """The numbers of the compilations' modules (a table's read from its module column
    alone, without making the compilations); past ``held`` distinct modules, numbered by
    sorting (the compilations are then read again)."""
    index = NameIndex()
    of = array("I")
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


def _modules(compilations: Iterable[Compilation]) -> Iterator[str]:
    if isinstance(compilations, CompilationTable):
        return compilations.modules()
    return (c.module for c in compilations)


#: a record of :func:`_numbered_by_sorting`: a module's fingerprint, then the compilation's
#: place (big-endian: records sort as (fingerprint, place))
_PLACE = 8


def _numbered_by_sorting(compilations: Collection[Compilation], held: int) -> ModuleNumbers:
    """:func:`module_numbers`, holding at most ``held`` records at a time."""
    n = len(compilations)
    code = "I" if n < 1 << 32 else "Q"
    of = array(code, bytes(array(code).itemsize * n))
    blobs = Blobs("recompile-doctor-modules-")
    try:
        runs: list[list[Blob]] = []
        run: list[bytes] = []
        for i, m in enumerate(_modules(compilations)):
            run.append(fingerprint(m) + i.to_bytes(_PLACE, "big"))
            if len(run) == held:
                runs.append(put_sorted_run(blobs, run))
                run = []
        if run:
            runs.append(put_sorted_run(blobs, run))
        del run
        # each compilation's place -> the place of its module's first compilation
        last = b""
        first = 0
        for record in heapq.merge(*(read_run(r, WIDTH + _PLACE) for r in runs)):
            i = int.from_bytes(record[-_PLACE:], "big")
            if record[:-_PLACE] != last:
                last = record[:-_PLACE]
                first = i
            of[i] = first
    finally:
        blobs.close()
    # in order, a module's first compilation comes before its others: it is numbered
    # first, and they take its number
    count = 0
    for i in range(n):
        f = of[i]
        if f == i:
            of[i] = count
            count += 1
        else:
            of[i] = of[f]
    return ModuleNumbers(of, count)
