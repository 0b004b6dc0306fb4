"""Regular expressions compiled on first use, so that importing a log format costs nothing
until a log of that format is read.

``X_RE = lazy_re(r"...")`` is used as a compiled pattern (``X_RE.search(s)``, ``.match``,
``.fullmatch``, ``.sub``, ``.finditer``, ``.findall``, ``.split``).  The first call compiles
the pattern and puts its bound methods on the object, so later calls cost what a compiled
pattern's calls cost.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any


class LazyRe:
    """A :class:`re.Pattern` compiled on first use."""

    __slots__ = (
        "_flags",
        "_source",
        "findall",
        "finditer",
        "fullmatch",
        "match",
        "search",
        "split",
        "sub",
    )

    search: Callable[..., re.Match[str] | None]
    match: Callable[..., re.Match[str] | None]
    fullmatch: Callable[..., re.Match[str] | None]
    sub: Callable[..., str]
    finditer: Callable[..., Iterator[re.Match[str]]]
    findall: Callable[..., list[Any]]
    split: Callable[..., list[Any]]

    def __init__(self, source: str, flags: int = 0) -> None:
        self._source = source
        self._flags = flags

    @property
    def pattern(self) -> str:
        return self._source

    def compiled(self) -> re.Pattern[str]:
        return re.compile(self._source, self._flags)

    def __getattr__(self, name: str) -> Any:
        # only reached while the methods are not set yet
        if name not in ("findall", "finditer", "fullmatch", "match", "search", "split", "sub"):
            raise AttributeError(name)
        p = self.compiled()
        self.search = p.search
        self.match = p.match
        self.fullmatch = p.fullmatch
        self.sub = p.sub
        self.finditer = p.finditer
        self.findall = p.findall
        self.split = p.split
        return getattr(p, name)


def lazy_re(source: str, flags: int = 0) -> LazyRe:
    """``re.compile(source, flags)``, done on first use."""
    return LazyRe(source, flags)
