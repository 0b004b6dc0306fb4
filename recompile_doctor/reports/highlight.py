"""Log lines with their key parts marked: the phrases, hashes, durations and names that make a
line evidence."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import regex


@dataclass(frozen=True, slots=True)
class Span:
    """A piece of text and whether it is marked (matched, or changed)."""

    text: str
    mark: bool = False
    elided: bool = False


def _spans(text: str, ranges: Iterable[tuple[int, int]]) -> tuple[Span, ...]:
    merged: list[list[int]] = []
    for a, b in sorted(r for r in ranges if r[1] > r[0]):
        if merged and a <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b])
    out: list[Span] = []
    pos = 0
    for a, b in merged:
        if a > pos:
            out.append(Span(text[pos:a]))
        out.append(Span(text[a:b], True))
        pos = b
    if pos < len(text) or not out:
        out.append(Span(text[pos:]))
    return tuple(out)


#: the parts of a log line that make it evidence: the messages the Graphcore note tells you
#: to look for, hashes, durations and cache file names
_KEY = regex.compile(
    r"Begin XLA compilation|End XLA compilation|Starting phase: graphConstruction"
    r"|Ending phase: Loading executable|Loading executable|Couldn't find|\bLoaded\b"
    r"|attached to|Compiled cluster|retracing|Recompil\w*"
    r"|\(?Hash:? 0x[0-9a-fA-F]+\)?|\bduration \d+(?:\.\d+)? ?m?s\b|[\w./-]{0,256}\.poplar_exec",
    regex.I,
)


def highlight(text: str, needles: Sequence[str] = ()) -> tuple[Span, ...]:
    """``text`` with the matched parts marked: key phrases, hashes, durations, and the
    ``needles`` (the finding's module names)."""
    ranges = [m.span() for m in _KEY.finditer(text)]
    for n in needles:
        if not n:
            continue
        start = text.find(n)
        while start >= 0:
            ranges.append((start, start + len(n)))
            start = text.find(n, start + len(n))
    return _spans(text, ranges)
