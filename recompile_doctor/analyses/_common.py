"""Shared pieces of the analyses: options, the dump-diff hand-off, building findings."""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from recompile_doctor.model import (
    Compilation,
    DiffEvidence,
    Event,
    Evidence,
    Finding,
    ValueChange,
)
from recompile_doctor.rules import rule
from recompile_doctor.timeline.name_set import NameSet

if TYPE_CHECKING:
    from recompile_doctor.join import Joined

#: at most this many evidence lines per finding (the first ones, in line order)
MAX_EVIDENCE = 12


@dataclass(frozen=True, slots=True)
class CompileDiff:
    """What the dumps say changed between two consecutive compilations of one function."""

    causes: tuple[str, ...]  # rule ids, most important first; () means equivalent
    summary: str  # one line per cause, for the finding's detail
    evidence: tuple[DiffEvidence, ...] = ()
    a_path: str | None = None
    b_path: str | None = None
    notes: tuple[str, ...] = ()  # info rule ids the differ noted (constants-elided)


@dataclass(frozen=True, slots=True)
class Options:
    """What an analysis may consult besides the timeline: the dump diffs joined to it
    (:mod:`recompile_doctor.join`) and thresholds."""

    joined: Joined = field(default_factory=lambda: _empty_join())
    slow_load_s: float = 0.5
    #: results an analysis computed once and others reuse (e.g. the recompilation verdicts)
    memo: dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def dumps_given(self) -> bool:
        return self.joined.given


def _empty_join() -> Joined:
    from recompile_doctor.join import Joined

    return Joined()


def comp_evidence(c: Compilation) -> Evidence:
    return Evidence(c.source, c.line, c.text)


def event_evidence(e: Event) -> Evidence:
    return Evidence(e.source, e.line, e.text)


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
        k = (source, line)
        return k not in self._kept and not (len(keys) >= MAX_EVIDENCE and k >= keys[-1])

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
        return len(keys) >= MAX_EVIDENCE and (e.source, e.line) >= keys[-1]


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


def make_finding(
    rule_id: str,
    *,
    detail: str,
    modules: Iterable[str] | NameSet,
    count: int,
    wasted: float,
    evidence: Iterable[Evidence],
    advice: str | None = None,
    diff: Sequence[DiffEvidence] = (),
    changes: Sequence[ValueChange] = (),
    evidence_in_order: bool = False,
) -> Finding:
    r = rule(rule_id)
    ev = cap(evidence, evidence_in_order)
    if not ev:
        raise ValueError(f"finding {rule_id} without evidence")
    return Finding(
        rule=r.id,
        severity=r.severity,
        consideration=r.consideration,
        title=r.title,
        detail=detail,
        advice=advice or r.advice,
        modules=(modules if isinstance(modules, NameSet) else NameSet(modules)).sorted(),
        count=count,
        wasted_seconds=round(wasted, 6),
        evidence=ev,
        diff=tuple(diff),
        changes=tuple(changes),
    )


def seconds(x: float | None) -> float:
    return x if x is not None else 0.0
