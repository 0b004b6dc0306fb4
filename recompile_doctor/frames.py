"""The timeline as pandas DataFrames (pandas is imported only when these are called)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from recompile_doctor.model import COMPILATION_KEYS, EVENT_KEYS, Report

if TYPE_CHECKING:
    import pandas as pd

EVENT_COLUMNS = list(EVENT_KEYS)
#: a compilation's fields up to its ordinal (not its verbatim text and what follows it)
COMPILATION_COLUMNS = list(COMPILATION_KEYS[: COMPILATION_KEYS.index("ordinal") + 1])


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
