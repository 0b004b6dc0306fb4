"""Words the findings and the reports share."""

from __future__ import annotations


def plural(n: int, word: str, many: str | None = None) -> str:
    """``n`` and ``word``, plural unless ``n`` is one (``many``: the plural, where not
    ``word + "s"``), the number with thousands separators: ``23,685 recompilations``."""
    return f"{n:,} {word if n == 1 else (many or word + 's')}"
