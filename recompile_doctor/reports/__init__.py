"""Renderers: each turns a :class:`~recompile_doctor.model.Report` into text or bytes.

Registered by name with the file suffixes that select them, so ``-o report.html`` picks HTML.
Every renderer has the same signature: ``render(report) -> str | bytes``.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

from recompile_doctor.model import Report

#: format name -> module under recompile_doctor.reports exposing ``render(report)``
RENDERERS: dict[str, str] = {
    "text": "recompile_doctor.reports.text",
    "json": "recompile_doctor.reports.json_report",
    "markdown": "recompile_doctor.reports.markdown",
    "html": "recompile_doctor.reports.html",
}


def renderer(fmt: str) -> Callable[[Report], str | bytes]:
    """The ``render`` function of format ``fmt`` (KeyError for an unknown format)."""
    mod = importlib.import_module(RENDERERS[fmt])
    fn: Callable[[Report], str | bytes] = mod.render
    return fn


def render(report: Report, fmt: str) -> str | bytes:
    """Render ``report`` as ``fmt`` (text, json, markdown or html)."""
    return renderer(fmt)(report)
