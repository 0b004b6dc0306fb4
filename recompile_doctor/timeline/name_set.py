"""The distinct names a finding lists (its modules), sorted, without holding them all.

A finding names every module it concerns, and a run that compiles each function once under a
new name (TensorFlow's ``__inference_f_<n>``, retraced 263,000 times in a 2 GB log) gives it
hundreds of thousands: 40 MB of names held from the analyses to the end of the report.
:class:`NameSet` keeps at most :data:`RUN_NAMES` in a set (of :data:`RUN_CHARS` characters
in all: names can be long); past that it writes them sorted as a run (a
:class:`~recompile_doctor.timeline.packed.Packed` sequence: compressed chunks in a temporary
file) and begins another.  :meth:`NameSet.sorted` merges the runs into one
``Packed`` sequence, each name once (a tuple when there were few).

A run being merged holds a chunk of its names in memory (1,024 names, about 80 kB): the 255
runs of the 4.2 million modules of a 32 GB TensorFlow log held 20 MB at once.  So every
:data:`FAN_IN` runs of one size are merged into one as they come (a run is merged again
once per sixteenfold of names), and no merge reads more than :data:`FAN_IN` runs at once.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Sequence

from recompile_doctor.timeline.packed import Packed

#: names held in memory before they are written as a sorted run, and the characters they
#: may hold (16,384 generated names of 20,000 characters were 320 MB)
RUN_NAMES = 16_384
RUN_CHARS = 1 << 22
#: runs merged at once (each holds a chunk of its names in memory meanwhile)
FAN_IN = 16


class NameSet:
    """Distinct names, sorted when asked (:meth:`sorted`)."""

    __slots__ = ("_chars", "_levels", "_names", "_runs")

    def __init__(self, names: Iterable[str] = ()) -> None:
        self._names: set[str] = set()
        self._chars = 0  # (of the names in the set)
        self._runs: list[Packed[str]] = []
        self._levels: list[int] = []  # each run's: merged from FAN_IN ** level runs
        for n in names:
            self.add(n)

    def add(self, name: str) -> None:
        names = self._names
        if name not in names:
            names.add(name)
            self._chars += len(name)
            if len(names) >= RUN_NAMES or self._chars >= RUN_CHARS:
                self._write_run()

    def _write_run(self) -> None:
        run: Packed[str] = Packed(plain=0, rows=str)
        for n in sorted(self._names):
            run.append(n, len(n))
        self._names = set()
        self._chars = 0
        runs = self._runs
        runs.append(run)
        self._levels.append(0)
        levels = self._levels
        # (like a counter in base FAN_IN: the levels never grow towards the end)
        while len(levels) >= FAN_IN and levels[-FAN_IN] == levels[-1]:
            level = levels[-1]
            merged = _merged(runs[-FAN_IN:])
            del runs[-FAN_IN:], levels[-FAN_IN:]
            runs.append(merged)
            levels.append(level + 1)

    def sorted(self) -> Sequence[str]:
        """The names, sorted, each once (the set is empty afterwards)."""
        if not self._runs:
            out = tuple(sorted(self._names))
            self._names = set()
            self._chars = 0
            return out
        if self._names:
            self._write_run()
        runs = self._runs
        while len(runs) > FAN_IN:  # (at most FAN_IN - 1 of each level: a few)
            runs[-FAN_IN:] = [_merged(runs[-FAN_IN:])]
        merged = _merged(runs) if len(runs) > 1 else runs[0]
        self._runs = []
        self._levels = []
        return merged


def _merged(runs: list[Packed[str]]) -> Packed[str]:
    """Sorted runs merged into one, each name once; the runs are closed."""
    merged: Packed[str] = Packed(plain=0, rows=str)
    last = None
    for n in heapq.merge(*runs):
        if n != last:
            merged.append(n, len(n))
            last = n
    for run in runs:
        run.close()
    return merged
