"""The distinct names a finding lists (its modules), sorted, without holding them all.

A finding names every module it concerns, and a run that compiles each function once under a
new name (TensorFlow's ``__inference_f_<n>``, retraced 263,000 times in a 2 GB log) gives it
hundreds of thousands: 40 MB of names held from the analyses to the end of the report.
:class:`NameSet` keeps at most :data:`RUN_NAMES` in a set; past that it writes them sorted as
a run (a :class:`~recompile_doctor.timeline.packed.Packed` sequence: compressed chunks in a
temporary file) and begins another.  :meth:`NameSet.sorted` merges the runs into one
``Packed`` sequence, each name once (a tuple when there were few).
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Sequence

from recompile_doctor.timeline.packed import Packed

#: names held in memory before they are written as a sorted run
RUN_NAMES = 16_384


class NameSet:
    """Distinct names, sorted when asked (:meth:`sorted`)."""

    __slots__ = ("_names", "_runs")

    def __init__(self, names: Iterable[str] = ()) -> None:
        self._names: set[str] = set()
        self._runs: list[Packed[str]] = []
        for n in names:
            self.add(n)

    def add(self, name: str) -> None:
        names = self._names
        if name not in names:
            names.add(name)
            if len(names) >= RUN_NAMES:
                self._write_run()

    def _write_run(self) -> None:
        run: Packed[str] = Packed(plain=0)
        for n in sorted(self._names):
            run.append(n)
        self._runs.append(run)
        self._names = set()

    def sorted(self) -> Sequence[str]:
        """The names, sorted, each once (the set is empty afterwards)."""
        if not self._runs:
            out = tuple(sorted(self._names))
            self._names = set()
            return out
        if self._names:
            self._write_run()
        merged: Packed[str] = Packed()
        last = None
        for n in heapq.merge(*self._runs):
            if n != last:
                merged.append(n)
                last = n
        for run in self._runs:
            run.close()
        self._runs = []
        return merged
