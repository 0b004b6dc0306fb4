"""Deterministic, unique element ids of an HTML page, and short names of sources."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

import regex

_SLUG = regex.compile(r"[^A-Za-z0-9]+")


def slug(text: str) -> str:
    """A lower-case anchor fragment of letters, digits and dashes (never empty)."""
    s = _SLUG.sub("-", text).strip("-").lower()
    return s[-60:].lstrip("-") or "x"


def basename(path: str) -> str:
    """The last part of a path (either slash)."""
    return path.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1] or path


class Anchors:
    """Unique, deterministic element ids: ``ev-<source-slug>-<line>`` for evidence lines
    (``-2``, ``-3``... for the same line shown again), one slug per distinct source."""

    def __init__(self, sources: Iterable[str]) -> None:
        self._source: dict[str, str] = {}
        used: set[str] = set()
        for src in sorted(set(sources)):
            base = slug(src.rsplit("/", 1)[-1]) if src else "input"
            s, k = base, 1
            while s in used:
                k += 1
                s = f"{base}{k}"
            used.add(s)
            self._source[src] = s
        self._taken: set[str] = set()
        base_names: dict[str, set[str]] = defaultdict(set)
        for src in self._source:
            base_names[basename(src)].add(src)
        self._label = {
            src: basename(src) if len(base_names[basename(src)]) == 1 else src
            for src in self._source
        }

    def label(self, src: str) -> str:
        """How a source is named next to its lines: its file name when that is unambiguous."""
        return self._label.get(src, src)

    def source(self, src: str) -> str:
        if src not in self._source:
            self._source[src] = slug(src)
        return self._source[src]

    def take(self, base: str) -> str:
        s, k = base, 1
        while s in self._taken:
            k += 1
            s = f"{base}-{k}"
        self._taken.add(s)
        return s

    def evidence(self, src: str, line: int) -> str:
        return self.take(f"ev-{self.source(src)}-{line}")
