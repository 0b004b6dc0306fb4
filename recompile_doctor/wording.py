"""Words the findings and the reports share."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import islice
from operator import itemgetter


def plural(n: int, word: str, many: str | None = None) -> str:
    """``n`` and ``word``, plural unless ``n`` is one (``many``: the plural, where not
    ``word + "s"``), the number with thousands separators: ``23,685 recompilations``."""
    return f"{n:,} {word if n == 1 else (many or word + 's')}"


def counted(texts: Iterable[str], most: int, other: str, by_count: bool = False) -> str:
    """The distinct ``texts`` joined with "; ", each once, in the order first given (or the
    most frequent first, ``by_count``), with its count when it came more than once
    (``reason (3×)``); past ``most`` distinct ones, how many others (``and 2 other
    reasons``, ``other`` being the word): a thousand repetitions of one reason are one line,
    not a thousand."""
    counts: dict[str, int] = {}
    for t in texts:
        counts[t] = counts.get(t, 0) + 1
    items = sorted(counts.items(), key=_COUNT, reverse=True) if by_count else counts.items()
    return listed(
        [f"{t} ({n}×)" if n > 1 else t for t, n in islice(items, most)], len(counts), other
    )


#: the names a finding's detail spells out before it counts the others (its ``modules`` list
#: them all): a run that retraces 100,000 functions is not one detail of a megabyte
NAMED_IN_DETAIL = 8


def names_listed(names: Sequence[str], word: str = "function", most: int = NAMED_IN_DETAIL) -> str:
    """The first ``most`` of ``names`` joined with ", ", then how many others there are
    (``f, g and 3 more functions``, ``word`` naming them)."""
    shown = list(islice(names, most))
    more = len(names) - len(shown)
    return ", ".join(shown) + (f" and {plural(more, 'more ' + word)}" if more > 0 else "")


def listed(first: Sequence[str], total: int, other: str) -> str:
    """The ``first`` of ``total`` distinct texts joined with "; ", then how many others
    (``and 2 other reasons``, ``other`` being the word): :func:`counted`'s wording, for a
    caller that kept only the first ones and a count."""
    parts = list(first)
    if total > len(parts):
        parts.append(f"and {plural(total - len(parts), other)}")
    return "; ".join(parts)


_COUNT = itemgetter(1)
