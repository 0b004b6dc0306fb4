"""recompile-doctor: explains why XLA-compiled programs recompile, and what to change.

The public API::

    import recompile_doctor as rd
    report = rd.analyze(["run.log"], dumps=["dumps/"])
    for f in report.findings:
        print(f.rule, f.title, f.evidence[0].line)
    rd.compilations_frame(report)      # pandas DataFrame, one row per compilation
    rd.render(report, "html")          # text, json, markdown or html (a str)
    rd.render(rd.diff(a, b), "text")   # a diff renders too
    rd.load_report("report.json")      # a saved JSON report
    rd.diff("dumpA/", "dumpB/")        # what changed between two HLO dumps, and why
    rd.simulate("partial-batch", out)  # a simulated Poplar run: run.log, dumps, cache
"""

from typing import TYPE_CHECKING, Any

from recompile_doctor import dataclass_code as _dataclass_code

_dataclass_code.install()  # (before any of the package's dataclasses is made)

from recompile_doctor._version import __version__  # noqa: E402

if TYPE_CHECKING:
    from recompile_doctor.api import analyze, load_report
    from recompile_doctor.differ import diff_paths as diff
    from recompile_doctor.errors import RecompileDoctorError
    from recompile_doctor.frames import compilations_frame, events_frame
    from recompile_doctor.model import (
        Compilation,
        DiffEvidence,
        Event,
        Evidence,
        Finding,
        ParseStats,
        Report,
        Summary,
    )
    from recompile_doctor.reports import render
    from recompile_doctor.rules import RULES, Rule
    from recompile_doctor.simulate import run_scenario as simulate

# The public names are imported on first use: ``recompile-doctor --help`` and the commands
# load only the modules they need.
_LAZY = {
    "analyze": ("recompile_doctor.api", "analyze"),
    "load_report": ("recompile_doctor.api", "load_report"),
    "diff": ("recompile_doctor.differ", "diff_paths"),
    "RecompileDoctorError": ("recompile_doctor.errors", "RecompileDoctorError"),
    "compilations_frame": ("recompile_doctor.frames", "compilations_frame"),
    "events_frame": ("recompile_doctor.frames", "events_frame"),
    "render": ("recompile_doctor.reports", "render"),
    "RULES": ("recompile_doctor.rules", "RULES"),
    "Rule": ("recompile_doctor.rules", "Rule"),
    "simulate": ("recompile_doctor.simulate", "run_scenario"),
    **{
        n: ("recompile_doctor.model", n)
        for n in (
            "Compilation",
            "DiffEvidence",
            "Event",
            "Evidence",
            "Finding",
            "ParseStats",
            "Report",
            "Summary",
        )
    },
}


def __getattr__(name: str) -> Any:
    where = _LAZY.get(name)
    if where is None:
        raise AttributeError(f"module 'recompile_doctor' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(where[0]), where[1])
    globals()[name] = value
    return value


__all__ = [
    "RULES",
    "Compilation",
    "DiffEvidence",
    "Event",
    "Evidence",
    "Finding",
    "ParseStats",
    "RecompileDoctorError",
    "Report",
    "Rule",
    "Summary",
    "__version__",
    "analyze",
    "compilations_frame",
    "diff",
    "events_frame",
    "load_report",
    "render",
    "simulate",
]
