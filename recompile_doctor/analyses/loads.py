"""Consideration 1: executables loaded onto the device again and again.

Evidence: the Poplar ``Ending phase: Loading executable (duration N ms; ...)`` lines.  A load is
a *re*-load when the device had another executable loaded in between (the real stack loads an
engine only when it is not the current one).

* ``executable-switching``: two or more re-loads after warm-up alternate between two or more
  executables.
* ``slow-load``: re-loads of 500 ms or more recur after warm-up, and no switching between known
  executables explains them (the log does not say which module was loaded: only
  ``POPLAR_LOG_LEVEL=INFO`` is set, no ``Execute <module>`` lines).
"""

from __future__ import annotations

from recompile_doctor.analyses._common import Options, make_finding, plural, seconds
from recompile_doctor.model import Evidence, Finding
from recompile_doctor.timeline import Load, Timeline, function_key


def _reloads(tl: Timeline) -> list[Load]:
    return [ld for ld in tl.loads if ld.reload and not ld.warmup]


def _switching_loads(tl: Timeline) -> list[Load]:
    rl = _reloads(tl)
    modules = {ld.module for ld in tl.loads if ld.attributed and ld.module is not None}
    if len(rl) >= 2 and len(modules) >= 2 and all(ld.attributed for ld in rl):
        return rl
    return []


def _ev(ld: Load) -> Evidence:
    return Evidence(ld.source, ld.line, ld.text)


def executable_switching(tl: Timeline, opts: Options) -> list[Finding]:
    """Re-loads after warm-up that alternate between executables."""
    rl = _switching_loads(tl)
    if not rl:
        return []
    wasted = sum(seconds(ld.duration_s) for ld in rl)
    mods = sorted({ld.module for ld in rl if ld.module})
    mean_ms = 1000.0 * wasted / len(rl)
    detail = (
        f"After warm-up the device switched executables {plural(len(rl), 'time')} between "
        f"{plural(len(mods), 'graph')} ({', '.join(sorted({function_key(m) for m in mods}))}); "
        "each switch loads the executable "
        f"again ('Loading executable', {mean_ms:.0f} ms on average), {wasted:.1f} s in all."
    )
    return [
        make_finding(
            "executable-switching",
            detail=detail,
            modules=mods,
            count=len(rl),
            wasted=wasted,
            evidence=[_ev(ld) for ld in rl],
        )
    ]


def slow_load(tl: Timeline, opts: Options) -> list[Finding]:
    """Slow re-loads after warm-up that switching does not already explain."""
    explained = {(ld.source, ld.line) for ld in _switching_loads(tl)}
    slow = [
        ld
        for ld in _reloads(tl)
        if (ld.source, ld.line) not in explained and seconds(ld.duration_s) >= opts.slow_load_s
    ]
    if len(slow) < 2:
        return []
    wasted = sum(seconds(ld.duration_s) for ld in slow)
    detail = (
        f"{plural(len(slow), 'executable load')} of {opts.slow_load_s * 1000:.0f} ms or more "
        f"happened after warm-up ({wasted:.1f} s in all); the Graphcore note calls more than "
        "500 ms each time significant. The log does not say which executables were switched: "
        "set TF_POPLAR_VLOG_LEVEL=1 (or TF_CPP_VMODULE='poplar_compiler=1,poplar_executable=1') "
        "to name them."
    )
    return [
        make_finding(
            "slow-load",
            detail=detail,
            modules=(ld.module for ld in slow if ld.module),
            count=len(slow),
            wasted=wasted,
            evidence=[_ev(ld) for ld in slow],
        )
    ]
