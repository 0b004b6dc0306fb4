"""What a diff produces: per-module :class:`ModuleDiff` (causes, changes) and a :class:`DiffResult`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from recompile_doctor import rules
from recompile_doctor.model import DiffEvidence

if TYPE_CHECKING:
    from recompile_doctor.differ.options import SettingChange

SCHEMA_DIFF = "recompile-doctor/diff/1"

#: causes in order of importance (most important first)
#: causes in order of importance (most important first): the one order of rules.py
CAUSE_ORDER = rules.CAUSE_ORDER


@dataclass(frozen=True, slots=True)
class Side:
    """One side of a change: an instruction, its computation and its (abbreviated) text."""

    instruction: str
    computation: str
    text: str
    line: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {"instruction": self.instruction, "computation": self.computation, "text": self.text}


@dataclass(frozen=True, slots=True)
class Change:
    """An instruction-level difference, rolled up into ``rule``."""

    kind: str
    a: Side | None
    b: Side | None
    op_name: str | None
    detail: str
    rule: str

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "a": self.a.to_json() if self.a else None,
            "b": self.b.to_json() if self.b else None,
            "op_name": self.op_name,
            "detail": self.detail,
            "rule": self.rule,
        }


@dataclass(frozen=True, slots=True)
class Cause:
    """One line of explanation: a rule id and what changed and why it recompiles."""

    rule: str
    message: str

    @property
    def advice(self) -> str:
        """What to change: the rule's advice, the same words ``analyze`` gives."""
        return rules.rule(self.rule).advice

    def to_json(self) -> dict[str, Any]:
        return {"rule": self.rule, "message": self.message, "advice": self.advice}


@dataclass(frozen=True, slots=True)
class Note:
    """Information that is not a cause: what the HLO text cannot show, and where to look.

    ``rule`` is an info rule id (``constants-elided``) or None."""

    rule: str | None
    message: str

    def to_json(self) -> dict[str, Any]:
        return {"rule": self.rule, "message": self.message}


@dataclass(slots=True)
class ModuleDiff:
    """The diff of two compilations of one module."""

    name: str
    a_path: str
    b_path: str
    equivalent: bool
    explanations: list[Cause] = field(default_factory=list)
    changes: list[Change] = field(default_factory=list)
    stats: dict[str, int] = field(default_factory=dict)
    #: ``None`` when A's compilation is compared with B's; ``"a"`` (``"b"``) when an extra
    #: compilation of folder A (B) is compared with its predecessor in the same folder
    within: str | None = None
    #: never causes: e.g. ``constants-elided`` (values printed as {...} were not compared)
    notes: list[Note] = field(default_factory=list)
    #: flags, compile options, topology beside the HLO that differ (and are in the cache key)
    settings: list[SettingChange] = field(default_factory=list)

    @property
    def causes(self) -> list[str]:
        """Rule ids, most important first."""
        return [c.rule for c in self.explanations]

    def add_cause(self, rule: str, message: str, first: bool = False) -> None:
        for k, old in enumerate(self.explanations):
            if old.rule == rule:
                self.explanations[k] = Cause(rule, f"{old.message}; {message}")
                return
        cause = Cause(rule, message)
        if first:
            self.explanations.insert(0, cause)
        else:
            self.explanations.append(cause)

    def sort_causes(self) -> None:
        self.explanations.sort(key=lambda c: rules.cause_rank(c.rule))

    def to_evidence(self) -> tuple[DiffEvidence, ...]:
        return tuple(
            DiffEvidence(
                kind=c.kind,
                module=self.name,
                a_instruction=c.a.instruction if c.a else None,
                a_text=c.a.text if c.a else None,
                b_instruction=c.b.instruction if c.b else None,
                b_text=c.b.text if c.b else None,
                op_name=c.op_name,
                detail=c.detail,
                a_path=self.a_path,
                b_path=self.b_path,
            )
            for c in self.changes
        )

    def to_json(self) -> dict[str, Any]:
        out = {
            "name": self.name,
            "a": self.a_path,
            "b": self.b_path,
            "within": self.within,
            "equivalent": self.equivalent,
            "causes": self.causes,
            "explanations": [c.to_json() for c in self.explanations],
            "changes": [c.to_json() for c in self.changes],
            "notes": [n.to_json() for n in self.notes],
        }
        if self.settings:  # only when the dumps hold the side files and they differ
            out["settings"] = [c.to_json() for c in self.settings]
        return out


@dataclass(slots=True)
class DiffResult:
    """``diff A B`` as a whole: every module pair, and the modules found on one side only."""

    a: str
    b: str
    modules: list[ModuleDiff] = field(default_factory=list)
    unpaired_a: list[str] = field(default_factory=list)
    unpaired_b: list[str] = field(default_factory=list)

    @property
    def compared(self) -> list[ModuleDiff]:
        """A's compilations compared with B's (1st with 1st, 2nd with 2nd, ...)."""
        return [m for m in self.modules if m.within is None]

    def extra(self, side: str) -> list[ModuleDiff]:
        """Extra compilations of folder ``side`` ("a" or "b"), each against its predecessor."""
        return [m for m in self.modules if m.within == side]

    @property
    def equivalent(self) -> bool:
        """Nothing that can cause a recompile differs, and both sides compiled as often."""
        return all(m.equivalent and m.within is None for m in self.modules) and not (
            self.unpaired_a or self.unpaired_b
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA_DIFF,
            "a": self.a,
            "b": self.b,
            "modules": [m.to_json() for m in self.modules],
            "unpaired": {"a": list(self.unpaired_a), "b": list(self.unpaired_b)},
        }
