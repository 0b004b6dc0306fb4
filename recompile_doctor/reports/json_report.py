"""JSON rendering: the saved form of a report (schema ``recompile-doctor/report/1``)."""

from __future__ import annotations

from recompile_doctor.model import Report


def render(report: Report) -> str:
    """Indented, deterministic JSON; :meth:`Report.from_json` reads it back."""
    return report.dumps()
