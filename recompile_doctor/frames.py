"""The timeline as pandas DataFrames (pandas is imported only when these are called)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from recompile_doctor.model import Report

if TYPE_CHECKING:
    import pandas as pd

EVENT_COLUMNS = ["kind", "source", "line", "t", "module", "hash", "detail", "text"]
COMPILATION_COLUMNS = [
    "id",
    "module",
    "hash",
    "source",
    "line",
    "t",
    "duration_s",
    "cache",
    "warmup",
    "cause",
    "end_line",
    "cache_file",
    "ordinal",
]


def events_frame(report: Report) -> pd.DataFrame:
    """One row per kept event (compiles, cache lines, loads, attach, ...), in log order."""
    import pandas as pd

    rows = [e.to_json() for e in report.events]
    return pd.DataFrame(rows, columns=EVENT_COLUMNS)


def compilations_frame(report: Report) -> pd.DataFrame:
    """One row per compilation, with its cache outcome, warm-up flag and cause."""
    import pandas as pd

    rows = [{k: c.to_json()[k] for k in COMPILATION_COLUMNS} for c in report.compilations]
    return pd.DataFrame(rows, columns=COMPILATION_COLUMNS)
