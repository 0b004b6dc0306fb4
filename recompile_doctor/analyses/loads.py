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

from collections.abc import Callable, Iterable, Iterator

from recompile_doctor.analyses._common import Options, make_finding, seconds
from recompile_doctor.model import Evidence, Finding
from recompile_doctor.name_digest import held
from recompile_doctor.timeline import Load, Switch, Timeline, function_key
from recompile_doctor.wording import names_listed, plural

# A switching run has a re-load every few steps: hundreds of thousands in a big log.  The
# analyses below pass over the timeline's loads as often as they need (they are kept packed)
# and never hold a list of the re-loads.


def _reloads(tl: Timeline) -> Iterator[Load]:
    return (ld for ld in tl.loads if ld.reload and not ld.warmup)


def _switching(tl: Timeline) -> bool:
    """Every re-load after warm-up (two or more) is attributed to a module, and the device
    ran two or more modules."""
    tally = tl.load_tally()
    return not tally.unattributed and tally.reloads >= 2 and len(tally.modules) >= 2


def _graphs_per_process(tl: Timeline) -> dict[int, set[str | int]]:
    """Per process, its functions (a long name by its digest: held)."""
    out: dict[int, set[str | int]] = {}
    table = tl.compilations
    for key, p in zip(table.function_keys(), table.process, strict=True):
        out.setdefault(p, set()).add(held(key))
    return out


def _inferred(tl: Timeline) -> Callable[[Load], bool] | None:
    """Which re-loads after warm-up are inferred switches: those no Execute line names, in a
    process that compiled two or more graphs for its device (the graphs take turns, train /
    eval each epoch); None unless there are two or more."""
    unattributed = tl.load_tally().unattributed
    if not unattributed:
        return None  # (without a pass over the compilations)
    graphs = _graphs_per_process(tl)

    def inferred(ld: Load) -> bool:
        return not ld.attributed and len(graphs.get(ld.process, ())) >= 2

    n = sum(k for p, k in unattributed.items() if len(graphs.get(p, ())) >= 2)
    return inferred if n >= 2 else None


def _switch_loads(tl: Timeline) -> Callable[[], Iterator[Load]] | None:
    """The re-loads that are switches between executables (attributed, else inferred), as
    a function that passes over them; None when there are none."""
    if _switching(tl):
        return lambda: _reloads(tl)
    inferred = _inferred(tl)
    if inferred is None:
        return None
    return lambda: (ld for ld in _reloads(tl) if inferred(ld))


def _totals(loads: Iterable[Load]) -> tuple[int, float, list[str]]:
    """How many, seconds in all (summed in order), the modules named."""
    n = 0
    wasted = 0.0
    mods: set[str] = set()
    for ld in loads:
        n += 1
        wasted += seconds(ld.duration_s)
        if ld.module:
            mods.add(ld.module)
    return n, wasted, sorted(mods)


def _switch_lines(tl: Timeline) -> list[Switch]:
    """Switches back to an executable that ran before on the device, from the Execute lines
    (the log shows no load lines, e.g. at POPLAR_LOG_LEVEL=WARN)."""
    loaded_procs = tl.load_tally().processes
    back = [s for s in tl.switches if s.back and s.process not in loaded_procs]
    modules = {m for s in back for m in (s.from_module, s.to_module)}
    return back if len(back) >= 2 and len(modules) >= 2 else []


def _ev(ld: Load) -> Evidence:
    return Evidence(ld.source, ld.line, ld.text)


def executable_switching(tl: Timeline, opts: Options) -> list[Finding]:
    """Executables that take turns on a device after warm-up, from whichever evidence the
    log has: load lines attributed by the Execute lines after them; Execute lines alone;
    or recurring load lines while several graphs were compiled for the device."""
    loads = _switch_loads(tl)
    if loads is not None:
        if _switching(tl):  # (every re-load after warm-up: counted as the loads were added)
            basis = "'Loading executable' lines, each attributed to the module that executed next"
            tally = tl.load_tally()
            count, wasted, mods = tally.reloads, tally.reload_seconds, sorted(tally.reload_modules)
        else:
            graphs = max((len(g) for g in _graphs_per_process(tl).values()), default=0)
            basis = (
                "'Loading executable' lines that recur while "
                f"{graphs} graphs were compiled "
                "for the device (the log does not name the loaded module: "
                "TF_POPLAR_VLOG_LEVEL=1 prints the Execute lines)"
            )
            count, wasted, mods = _totals(loads())
        names = sorted({function_key(m) for m in mods})
        mean_ms = 1000.0 * wasted / count
        detail = (
            f"After warm-up the device switched executables {plural(count, 'time')}"
            + (f" between {names_listed(names, 'executable')}" if len(names) > 1 else "")
            + f"; each switch loads the executable again ({mean_ms:.0f} ms on average), "
            f"{wasted:.1f} s in all. Evidence: {basis}."
        )
        return [
            make_finding(
                "executable-switching",
                detail=detail,
                modules=mods,
                count=count,
                wasted=wasted,
                evidence=(_ev(ld) for ld in loads()),
                evidence_in_order=tl.load_tally().in_order,
            )
        ]
    sw = _switch_lines(tl)
    if not sw:
        return []
    names = sorted({function_key(m) for s in sw for m in (s.from_module, s.to_module)})
    detail = (
        f"After warm-up the device switched executables {plural(len(sw), 'time')} between "
        f"{names_listed(names, 'executable')}: each switch loads the other executable onto the "
        "device again. "
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
    if _switching(tl):
        return []  # every re-load is a switch
    inferred = _inferred(tl)

    def slow() -> Iterator[Load]:
        for ld in _reloads(tl):
            if (inferred is None or not inferred(ld)) and seconds(
                ld.duration_s
            ) >= opts.slow_load_s:
                yield ld

    count, wasted, mods = _totals(slow())
    if count < 2:
        return []
    detail = (
        f"{plural(count, 'executable load')} of {opts.slow_load_s * 1000:.0f} ms or more "
        f"happened after warm-up ({wasted:.1f} s in all); the Graphcore note calls more than "
        "500 ms each time significant. The log does not say which executables were switched: "
        "set TF_POPLAR_VLOG_LEVEL=1 (or TF_CPP_VMODULE='poplar_compiler=1,poplar_executable=1') "
        "to name them."
    )
    return [
        make_finding(
            "slow-load",
            detail=detail,
            modules=mods,
            count=count,
            wasted=wasted,
            evidence=(_ev(ld) for ld in slow()),
            evidence_in_order=tl.load_tally().in_order,
        )
    ]
