"""Old -> new HLO instructions with the changed tokens marked and long constants abbreviated."""

from __future__ import annotations

import difflib
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

import regex

from recompile_doctor.model import DiffEvidence
from recompile_doctor.reports.highlight import Span

#: instruction changes shown per finding (or per module in a diff report)
MAX_CHANGES = 40
#: a ``{...}`` list with more values than this is abbreviated
MAX_LIST_VALUES = 8


_TOKEN = regex.compile(r"%[\w.\-]+|[A-Za-z_][\w.\-]*|[-+]?\d[\w.+\-]*|\s+|\S", regex.V1)


def _tokens(text: str) -> list[str]:
    return _TOKEN.findall(text)


def _changed_flags(a: list[str], b: list[str]) -> tuple[list[bool], list[bool]]:
    fa = [False] * len(a)
    fb = [False] * len(b)
    sm = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for op, i1, i2, j1, j2 in sm.get_opcodes():
        if op == "equal":
            continue
        for i in range(i1, i2):
            fa[i] = not a[i].isspace()
        for j in range(j1, j2):
            fb[j] = not b[j].isspace()
    return fa, fb


def _abbreviate(tokens: list[str], flags: list[bool]) -> tuple[Span, ...]:
    """Spans of the tokens, with ``{...}`` lists of more than :data:`MAX_LIST_VALUES` values
    cut to their first and last values and a marker saying how many were left out (marked
    as changed when a left-out value changed)."""
    out: list[Span] = []

    def emit(text: str, mark: bool, elided: bool = False) -> None:
        if out and not elided and not out[-1].elided and out[-1].mark == mark:
            out[-1] = Span(out[-1].text + text, mark)
        else:
            out.append(Span(text, mark, elided))

    i = 0
    n = len(tokens)
    while i < n:
        if tokens[i] == "{":
            # find the matching brace and the value boundaries at depth 1
            depth = 0
            commas: list[int] = []
            j = i
            while j < n:
                t = tokens[j]
                if t == "{":
                    depth += 1
                elif t == "}":
                    depth -= 1
                    if depth == 0:
                        break
                elif t == "," and depth == 1:
                    commas.append(j)
                j += 1
            if j < n and len(commas) + 1 > MAX_LIST_VALUES:
                keep_head = commas[3]  # first 4 values
                keep_tail = commas[-2]  # last 2 values
                for k in range(i, keep_head + 1):
                    emit(tokens[k], flags[k])
                hidden = range(keep_head + 1, keep_tail)
                n_hidden = len(commas) + 1 - 6
                emit(f"… {n_hidden} more values …", any(flags[k] for k in hidden), elided=True)
                for k in range(keep_tail, j + 1):
                    emit(tokens[k], flags[k])
                i = j + 1
                continue
        emit(tokens[i], flags[i])
        i += 1
    return tuple(out)


#: above this many characters, lists are abbreviated before diffing (diffing is quadratic)
_DIFF_CHARS = 20_000


@dataclass(frozen=True, slots=True)
class Change:
    """One instruction-level change between two dumps, with its lines on each side."""

    kind: str
    op_name: str | None
    detail: str
    a_instruction: str | None
    b_instruction: str | None
    a: tuple[Span, ...] | None
    b: tuple[Span, ...] | None


def change(d: DiffEvidence) -> Change:
    """One old -> new instruction pair with the changed tokens marked and long constants
    abbreviated."""
    a_text = d.a_text
    b_text = d.b_text
    if a_text is not None and len(a_text) > _DIFF_CHARS:
        ta = _tokens(a_text)
        a_text = "".join(s.text for s in _abbreviate(ta, [False] * len(ta)))
    if b_text is not None and len(b_text) > _DIFF_CHARS:
        tb = _tokens(b_text)
        b_text = "".join(s.text for s in _abbreviate(tb, [False] * len(tb)))
    ta = _tokens(a_text) if a_text is not None else []
    tb = _tokens(b_text) if b_text is not None else []
    fa, fb = _changed_flags(ta, tb)
    return Change(
        kind=d.kind,
        op_name=d.op_name,
        detail=d.detail,
        a_instruction=d.a_instruction,
        b_instruction=d.b_instruction,
        a=_abbreviate(ta, fa) if a_text is not None else None,
        b=_abbreviate(tb, fb) if b_text is not None else None,
    )


@dataclass(frozen=True, slots=True)
class ChangeGroup:
    """The changes of one module between two dumps."""

    module: str
    a_path: str | None
    b_path: str | None
    changes: tuple[Change, ...]
    more: int


def change_groups(
    diffs: Sequence[DiffEvidence], limit: int = MAX_CHANGES
) -> tuple[ChangeGroup, ...]:
    groups: dict[tuple[str, str | None, str | None], list[DiffEvidence]] = defaultdict(list)
    order: list[tuple[str, str | None, str | None]] = []
    for d in diffs:
        key = (d.module, d.a_path, d.b_path)
        if key not in groups:
            order.append(key)
        groups[key].append(d)
    out = []
    for key in order:
        items = groups[key]
        out.append(
            ChangeGroup(
                key[0],
                key[1],
                key[2],
                tuple(change(d) for d in items[:limit]),
                max(len(items) - limit, 0),
            )
        )
    return tuple(out)
