"""Evidence lines with their context, as numbered rows of one source."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from recompile_doctor.model import Evidence
from recompile_doctor.reports.highlight import Span, highlight


@dataclass(frozen=True, slots=True)
class Row:
    """A numbered log line; ``id`` (its anchor) is set on evidence lines."""

    number: int
    spans: tuple[Span, ...]
    match: bool
    id: str | None = None


@dataclass(frozen=True, slots=True)
class Excerpt:
    """Consecutive lines of one source, one or more of them evidence lines."""

    source: str
    rows: tuple[Row, ...]
    label: str = ""

    @property
    def matches(self) -> tuple[Row, ...]:
        return tuple(r for r in self.rows if r.match)

    @property
    def id(self) -> str:
        return self.matches[0].id or ""

    @property
    def line(self) -> int:
        return self.matches[0].number


def excerpt(
    ev: Evidence, anchor: str, needles: Sequence[str], context: bool, label: str | None = None
) -> Excerpt:
    rows: list[Row] = []
    if context:
        first = ev.line - len(ev.before)
        rows += [
            Row(first + i, (Span(t),), False) for i, t in enumerate(ev.before) if first + i >= 1
        ]
    rows.append(Row(ev.line, highlight(ev.text, needles), True, anchor))
    if context:
        rows += [Row(ev.line + 1 + i, (Span(t),), False) for i, t in enumerate(ev.after)]
    return Excerpt(ev.source, tuple(rows), label or ev.source)


def merge_excerpts(xs: Sequence[Excerpt]) -> tuple[Excerpt, ...]:
    """Excerpts of the same source whose lines overlap or touch become one block, so a line
    is shown once; evidence lines keep their anchors and win over context lines."""
    out: list[Excerpt] = []
    for x in xs:
        prev = out[-1] if out else None
        if (
            prev is not None
            and prev.source == x.source
            and x.rows[0].number <= prev.rows[-1].number + 1
            and x.rows[-1].number >= prev.rows[0].number
        ):
            by: dict[int, Row] = {r.number: r for r in prev.rows}
            for r in x.rows:
                if r.number not in by or (r.match and not by[r.number].match):
                    by[r.number] = r
            out[-1] = Excerpt(x.source, tuple(by[k] for k in sorted(by)), x.label)
        else:
            out.append(x)
    return tuple(out)
