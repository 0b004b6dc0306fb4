"""Shared pieces of the analyses: options, the dump-diff hand-off, building findings."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from recompile_doctor.analyses.capped import cap
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
