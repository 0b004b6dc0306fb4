"""What the analysis of recompilations reads of every reason, kept as the reasons come.

The verdicts (:func:`recompile_doctor.analyses.recompile.verdicts`) ask of each reason
attached to a recompilation its rule, its input and line, whether it names changes, and which
arguments it says grew.  The timeline keeps its reasons packed past the first few thousand
(:mod:`.packed`); reading every one back after the reading of the log, to ask that, was a
tenth of the work after reading a compile-heavy JAX log (and working out the grown arguments
as much again).  :class:`ReasonFacts` is those answers, taken from each reason as the
timeline is given it: one shared tuple per distinct (rule, input, names changes, grown
arguments) -- a run repeats a few -- and, per reason, its number and its line (in a file
past :data:`~recompile_doctor.timeline.column.SPILL_AFTER` reasons, as the builder's other
numbers: :meth:`ReasonFacts.spill`).
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, Final, TypeAlias, cast

from recompile_doctor.bounded import Kept
from recompile_doctor.events import RecompileReason
from recompile_doctor.model import ValueChange
from recompile_doctor.parsers._spans import native_in_use
from recompile_doctor.timeline.blobs import Blobs
from recompile_doctor.timeline.column import Spilled, array_codec

if TYPE_CHECKING:  # (array is not subscriptable at run time in Python 3.11)
    _Numbers: TypeAlias = array[int] | Spilled[int]

#: (rule, input, whether it names changes, the arguments whose shape it says grew)
Fact: TypeAlias = tuple[str | None, str, bool, frozenset[str]]

#: the arguments of a reason whose shapes did not grow (shared)
NOTHING_GREW: Final[frozenset[str]] = frozenset()

#: shape text -> its dimensions (a run's reasons repeat a few shapes)
_DIMS_KEPT: Final[Kept[str, tuple[int, ...] | None]] = Kept()
_DIMS: Final = _DIMS_KEPT.table
#: what :data:`_DIMS` gives for a text it does not hold (an object of its own: a compiled
#: build makes its own copies of a constant tuple, which an identity test would not know)
_UNSEEN: Final = object()


def dims(shape: str | None) -> tuple[int, ...] | None:
    """The dimensions of a shape's text (``f32[32,16]`` -> ``(32, 16)``), None when it has
    none (see :func:`bracketed_dims`)."""
    text = shape or ""
    got = _DIMS.get(text, _UNSEEN)
    if got is not _UNSEEN:
        return cast("tuple[int, ...] | None", got)
    made = _SHAPE_DIMS_C
    return _DIMS_KEPT.put(text, shape_dims_py(text) if made is None else made(text, shape_dims_py))


def shape_dims_py(text: str) -> tuple[int, ...] | None:
    """The numbers of :func:`bracketed_dims` of ``text``, None when it has none or one is
    no number (a blank inside it, more digits than ``int`` takes)."""
    inner = bracketed_dims(text)
    if inner is None:
        return None
    try:
        return tuple([int(x) for x in inner.split(",") if x.strip()])
    except ValueError:
        return None


#: the C module's twin of :func:`shape_dims_py` (``parsers/_native_fields.c``: a tenth of the
#: instructions; text that is not ASCII is left to the Python), None where it is not in use
_SHAPE_DIMS_C: Final[
    Callable[[str, Callable[[str], tuple[int, ...] | None]], tuple[int, ...] | None] | None
] = getattr(native_in_use(), "shape_dims", None)


def bracketed_dims(text: str) -> str | None:
    """What the first ``[...]`` of ``text`` that holds nothing but decimal digits, commas
    and blanks holds (``f32[32,16]`` -> ``32,16``), or None.  (String methods, not a
    pattern's search: in a log of growing shapes every reason brings new shapes.)"""
    i = text.find("[")
    while i >= 0:
        j = text.find("]", i + 1)
        if j < 0:
            return None
        inner = text[i + 1 : j]
        if inner.replace(",", "").isdecimal() or all(
            c.isdecimal() or c.isspace() or c == "," for c in inner
        ):
            return inner
        i = text.find("[", i + 1)
    return None


def grown_arguments(changes: Iterable[ValueChange]) -> frozenset[str]:
    """The arguments whose shape these changes say grew (no dimension smaller, one
    larger)."""
    grown: list[str] | None = None
    for ch in changes:
        old_text, new_text = ch.old, ch.new
        if old_text is None or new_text is None or old_text == new_text:
            continue  # (no shape, or the same one: nothing grew)
        old, new = dims(old_text), dims(new_text)
        if old is None or new is None or len(old) != len(new) or new == old:
            continue
        for k in range(len(new)):
            if new[k] < old[k]:
                break
        else:
            if grown is None:
                grown = []
            grown.append(ch.what)
    return frozenset(grown) if grown else NOTHING_GREW


class ReasonFacts:
    """Per reason (by its place among the timeline's reasons): its :data:`Fact` and line."""

    __slots__ = ("_at", "_facts", "_lines", "_number")

    def __init__(self) -> None:
        self._facts: list[Fact] = []
        self._number: dict[Fact, int] = {}
        self._at: _Numbers = array("I")  # per reason: the number of its fact
        self._lines: _Numbers = array("q")  # per reason: its line

    @classmethod
    def of(cls, reasons: Iterable[RecompileReason]) -> ReasonFacts:
        """The facts of ``reasons``, in their order."""
        out = cls()
        for r in reasons:
            out.append(r)
        return out

    def append(self, r: RecompileReason) -> None:
        """Take the facts of the next reason."""
        changes = r.changes
        fact = (r.rule, r.span.source, bool(changes), grown_arguments(changes))
        n = self._number.get(fact)
        if n is None:
            n = self._number[fact] = len(self._facts)
            self._facts.append(fact)
        self._at.append(n)
        self._lines.append(r.span.line)

    def spill(self, blobs: Blobs) -> None:
        """Keep the numbers in ``blobs``'s file from now on (the builder's file of numbers,
        made once there are many reasons)."""
        self._at = Spilled.of(self._at, array_codec("I"), blobs)
        self._lines = Spilled.of(self._lines, array_codec("q"), blobs)

    def __len__(self) -> int:
        return len(self._at)

    def fact(self, i: int) -> tuple[str | None, str, int, bool, frozenset[str]]:
        """(rule, input, line, whether it names changes, grown arguments) of reason ``i``."""
        rule, source, changed, grown = self._facts[self._at[i]]
        return rule, source, self._lines[i], changed, grown

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ReasonFacts):
            return NotImplemented
        return len(self) == len(other) and all(
            self.fact(i) == other.fact(i) for i in range(len(self))
        )

    __hash__ = None  # type: ignore[assignment]

    def __reduce__(self) -> tuple[Any, ...]:
        # a copy for another process carries the facts (the file stays here)
        return (_remade, (self._facts, list(self._at), list(self._lines)))


def _remade(facts: Sequence[Fact], at: Sequence[int], lines: Sequence[int]) -> ReasonFacts:
    out = ReasonFacts()
    out._facts = list(facts)
    out._number = {f: n for n, f in enumerate(out._facts)}
    out._at = array("I", at)
    out._lines = array("q", lines)
    return out
