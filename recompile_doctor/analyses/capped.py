"""The evidence lines a finding keeps, gathered one line at a time.

An analysis gathering the evidence of 100,000 recompilations asks of each line whether it
would be kept before it makes it (:meth:`Capped.wants`): twice per recompilation, from the
verdicts' grouping by cause (compiled: interpreted, each ask was a call out of compiled
code).
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable
from typing import Final

from recompile_doctor.model import Evidence

#: at most this many evidence lines per finding (the first ones, in line order)
MAX_EVIDENCE: Final = 12


class Capped:
    """:func:`cap` fed one line at a time: only the lines kept so far are held, however
    many come (an analysis collecting the evidence of 100,000 recompilations)."""

    __slots__ = ("_kept", "_keys")

    def __init__(self) -> None:
        self._keys: list[tuple[str, int]] = []  # sorted, at most MAX_EVIDENCE
        self._kept: dict[tuple[str, int], Evidence] = {}

    def wants(self, source: str, line: int) -> bool:
        """Whether the line ``line`` of ``source`` would be kept now: not seen already, and
        not after every line kept once they are as many as kept at most (a caller asks
        before it makes the line's evidence)."""
        keys = self._keys
        if len(keys) >= MAX_EVIDENCE and _not_before(source, line, keys[-1]):
            return False  # (once full, what most asks are told: no pair made for them)
        return (source, line) not in self._kept

    def add(self, e: Evidence) -> None:
        if not self.wants(e.source, e.line):
            return  # a line seen already, or after every line kept
        keys, kept = self._keys, self._kept
        k = (e.source, e.line)
        bisect.insort(keys, k)
        kept[k] = e
        if len(keys) > MAX_EVIDENCE:
            del kept[keys.pop()]

    def lines(self) -> tuple[Evidence, ...]:
        return tuple(self._kept[k] for k in self._keys)

    def full_before(self, e: Evidence) -> bool:
        """Whether ``e`` and every line after it (in line order) would be left out."""
        keys = self._keys
        return len(keys) >= MAX_EVIDENCE and _not_before(e.source, e.line, keys[-1])


def _not_before(source: str, line: int, last: tuple[str, int]) -> bool:
    """``(source, line) >= last``, compared a part at a time: compiled code made, boxed and
    compared a pair for every ask (three tuples a call, 1,600 instructions; two asks per
    recompilation of a finding)."""
    last_source, last_line = last
    return source > last_source or (source == last_source and line >= last_line)


def cap(evidence: Iterable[Evidence], in_order: bool = False) -> tuple[Evidence, ...]:
    """Unique evidence lines in input order, at most :data:`MAX_EVIDENCE` (the first of
    equal lines kept).  Streams: only the lines kept so far are held, however many come.
    ``in_order``: the lines come sorted by (input, line), so the reading stops at the first
    that would be left out (the same lines: those after it would be left out as well)."""
    kept = Capped()
    for e in evidence:
        if in_order and kept.full_before(e):
            break
        kept.add(e)
    return kept.lines()
