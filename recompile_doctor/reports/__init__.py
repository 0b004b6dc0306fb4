"""Renderers: each turns a :class:`~recompile_doctor.model.Report` (or a diff result) into text.

Registered by name with the file suffixes that select them, so ``-o report.html`` picks HTML.
Every report renderer has the same signature, ``render(report) -> str``; :func:`render`
dispatches a :class:`~recompile_doctor.differ.result.DiffResult` to the diff renderers.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING

from recompile_doctor.model import Report

if TYPE_CHECKING:
    from recompile_doctor.differ.result import DiffResult

#: format name -> module under recompile_doctor.reports exposing ``render(report)``
RENDERERS: dict[str, str] = {
    "text": "recompile_doctor.reports.text",
    "json": "recompile_doctor.reports.json_report",
    "markdown": "recompile_doctor.reports.markdown",
    "html": "recompile_doctor.reports.html",
}


def _check(fmt: str) -> None:
    if fmt not in RENDERERS:
        raise ValueError(f"unknown format {fmt!r}: choose one of {', '.join(RENDERERS)}")


def renderer(fmt: str) -> Callable[[Report], str]:
    """The ``render`` function of format ``fmt`` (ValueError for an unknown format)."""
    _check(fmt)
    mod = importlib.import_module(RENDERERS[fmt])
    fn: Callable[[Report], str] = mod.render
    return fn


def render(result: Report | DiffResult, fmt: str) -> str:
    """``result`` (a report, or the result of :func:`recompile_doctor.diff`) as ``fmt``: text,
    json, markdown or html.  Always a string; write it as UTF-8."""
    _check(fmt)
    if isinstance(result, Report):
        return renderer(fmt)(result)
    from recompile_doctor.differ.result import DiffResult
    from recompile_doctor.reports import diff

    if not isinstance(result, DiffResult):
        raise TypeError(f"cannot render a {type(result).__name__}: give a Report or a diff")
    out = diff.render(result, fmt)
    return out.decode("utf-8") if isinstance(out, bytes) else out
