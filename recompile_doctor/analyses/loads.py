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
from recompile_doctor.timeline import Load, Switch, Timeline, function_key


def _reloads(tl: Timeline) -> list[Load]:
    return [ld for ld in tl.loads if ld.reload and not ld.warmup]


def _switching_loads(tl: Timeline) -> list[Load]:
    rl = _reloads(tl)
    modules = {ld.module for ld in tl.loads if ld.attributed and ld.module is not None}
    if len(rl) >= 2 and len(modules) >= 2 and all(ld.attributed for ld in rl):
        return rl
    return []


def _graphs_per_process(tl: Timeline) -> dict[int, set[str]]:
    out: dict[int, set[str]] = {}
    for c, p in zip(tl.compilations, tl.comp_process, strict=True):
        out.setdefault(p, set()).add(function_key(c.module))
    return out


def _inferred_loads(tl: Timeline) -> list[Load]:
    """Re-loads after warm-up that no Execute line names, in a process that compiled two
    or more graphs for its device: the graphs take turns (train / eval each epoch)."""
    graphs = _graphs_per_process(tl)
    rl = [ld for ld in _reloads(tl) if not ld.attributed and len(graphs.get(ld.process, ())) >= 2]
    return rl if len(rl) >= 2 else []


def _switch_lines(tl: Timeline) -> list[Switch]:
    """Switches back to an executable that ran before on the device, from the Execute lines
    (the log shows no load lines, e.g. at POPLAR_LOG_LEVEL=WARN)."""
    loaded_procs = {ld.process for ld in tl.loads}
    back = [s for s in tl.switches if s.back and s.process not in loaded_procs]
    modules = {m for s in back for m in (s.from_module, s.to_module)}
    return back if len(back) >= 2 and len(modules) >= 2 else []


def _ev(ld: Load) -> Evidence:
    return Evidence(ld.source, ld.line, ld.text)


def executable_switching(tl: Timeline, opts: Options) -> list[Finding]:
    """Executables that take turns on a device after warm-up, from whichever evidence the
    log has: load lines attributed by the Execute lines after them; Execute lines alone;
    or recurring load lines while several graphs were compiled for the device."""
    rl = _switching_loads(tl)
    basis = "'Loading executable' lines, each attributed to the module that executed next"
    if not rl:
        rl = _inferred_loads(tl)
        graphs = max((len(g) for g in _graphs_per_process(tl).values()), default=0)
        basis = (
            "'Loading executable' lines that recur while "
            f"{graphs} graphs were compiled "
            "for the device (the log does not name the loaded module: TF_POPLAR_VLOG_LEVEL=1 "
            "prints the Execute lines)"
        )
    if rl:
        wasted = sum(seconds(ld.duration_s) for ld in rl)
        mods = sorted({ld.module for ld in rl if ld.module})
        names = sorted({function_key(m) for m in mods})
        mean_ms = 1000.0 * wasted / len(rl)
        detail = (
            f"After warm-up the device switched executables {plural(len(rl), 'time')}"
            + (f" between {', '.join(names)}" if len(names) > 1 else "")
            + f"; each switch loads the executable again ({mean_ms:.0f} ms on average), "
            f"{wasted:.1f} s in all. Evidence: {basis}."
        )
        return [
            make_finding(
                "executable-switching",
                detail=detail,
                modules=mods,
                count=len(rl),
                wasted=wasted,
                evidence=(_ev(ld) for ld in rl),
            )
        ]
    sw = _switch_lines(tl)
    if not sw:
        return []
    names = sorted({function_key(m) for s in sw for m in (s.from_module, s.to_module)})
    detail = (
        f"After warm-up the device switched executables {plural(len(sw), 'time')} between "
        f"{', '.join(names)}: each switch loads the other executable onto the device again. "
        "Evidence: the Execute lines; the log does not show how long the loads took "
        "(POPLAR_LOG_LEVEL=INFO prints 'Loading executable' with its duration)."
    )
    return [
        make_finding(
            "executable-switching",
            detail=detail,
            modules=sorted({m for s in sw for m in (s.from_module, s.to_module)}),
            count=len(sw),
            wasted=0.0,
            evidence=(Evidence(s.source, s.line, s.text) for s in sw),
        )
    ]


def slow_load(tl: Timeline, opts: Options) -> list[Finding]:
    """Slow re-loads after warm-up that switching does not already explain."""
    explained = {(ld.source, ld.line) for ld in _switching_loads(tl) or _inferred_loads(tl)}
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
            evidence=(_ev(ld) for ld in slow),
        )
    ]
