"""Each compilation's module as a number, counted once for all the plots.

The timeline's lanes and the cost plot both group a run's compilations by module.  Each
numbered the module names by fingerprint on its own
(:class:`~recompile_doctor.timeline.distinct.NameIndex`, 20 bytes a slot: 21 MB for the
524,000 modules of a 4 GB TensorFlow log), after matplotlib was imported and beside what
the page held, so each was a peak of its own.  :func:`module_numbers` numbers them once,
before the page's libraries are imported, and keeps only a 4-byte number per compilation;
the fingerprints are dropped as it returns.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from recompile_doctor.model import Compilation
from recompile_doctor.timeline.distinct import NameIndex
from recompile_doctor.timeline.table import CompilationTable


@dataclass(frozen=True, slots=True)
class ModuleNumbers:
    """``of[i]``: the number of compilation ``i``'s module, modules numbered 0, 1, ... in
    order of their first compilation; ``count``: how many modules."""

    of: Sequence[int]
    count: int


def module_numbers(compilations: Iterable[Compilation]) -> ModuleNumbers:
    """The numbers of the compilations' modules (a table's read from its module column
    alone, without making the compilations)."""
    modules: Iterable[str]
    if isinstance(compilations, CompilationTable):
        modules = compilations.modules()
    else:
        modules = (c.module for c in compilations)
    index = NameIndex()
    of = array("I")
    for m in modules:
        of.append(index.number(m))
    return ModuleNumbers(of, len(index))
