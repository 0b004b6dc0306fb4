"""Diagnoses: one module per family, each ``(timeline, options) -> list[Finding]``.

:data:`ANALYSES` is the ordered list :func:`diagnose` runs; each returns ``[]`` on an empty
timeline.
"""

from __future__ import annotations

from collections.abc import Callable

from recompile_doctor.analyses._common import CompileDiff, Options
from recompile_doctor.analyses.cache import cache_cold, cache_disabled
from recompile_doctor.analyses.crossrun import crossrun_misses
from recompile_doctor.analyses.framework import (
    compile_failed,
    graph_breaks,
    rank_divergence,
    recompile_limit,
    retracing,
)
from recompile_doctor.analyses.loads import executable_switching, slow_load
from recompile_doctor.analyses.precompile import precompile_unsupported
from recompile_doctor.analyses.recompile import (
    diagnose_recompilations,
    dump_only_recompilations,
)
from recompile_doctor.model import Finding, sort_findings
from recompile_doctor.timeline import Timeline

Analysis = Callable[[Timeline, Options], list[Finding]]

ANALYSES: list[Analysis] = [
    cache_disabled,
    cache_cold,
    crossrun_misses,
    executable_switching,
    slow_load,
    precompile_unsupported,
    diagnose_recompilations,
    dump_only_recompilations,
    recompile_limit,
    compile_failed,
    graph_breaks,
    retracing,
    rank_divergence,
]


def diagnose(tl: Timeline, opts: Options | None = None) -> tuple[Finding, ...]:
    """Run every analysis; findings worst first."""
    o = opts if opts is not None else Options()
    found: list[Finding] = []
    for analysis in ANALYSES:
        found.extend(analysis(tl, o))
    return sort_findings(found)


__all__ = ["ANALYSES", "CompileDiff", "Options", "diagnose"]
