"""Consideration 0: the executable cache.

* ``cache-disabled``: compilations happen and no executable-cache activity appears.  Evidence:
  the ``Begin XLA compilation`` lines (printed at the same verbosity as the cache lines, so their
  presence without ``Loaded``/``Couldn't find`` proves the cache is off), or a
  ``TF_POPLAR_FLAGS is set to '...'`` line without ``--executable_cache_path``.
* ``cache-cold`` (info): warm-up compilations that missed the cache (``Couldn't find``).
"""

from __future__ import annotations

from recompile_doctor.analyses._common import (
    Options,
    comp_evidence,
    make_finding,
    seconds,
)
from recompile_doctor.model import Evidence, Finding
from recompile_doctor.rules import rule
from recompile_doctor.timeline import Timeline
from recompile_doctor.wording import plural


def cache_disabled(tl: Timeline, opts: Options) -> list[Finding]:
    """Compilations with cache outcome ``disabled``, or flags that set no cache path."""
    # compilations with unhashable custom ops are precompile-unsupported's, not the cache's
    disabled = [c for c in tl.compilations if c.cache == "disabled" and c.id not in tl.uncacheable]
    # processes whose compiler flags were logged and turn no executable cache on
    flag_events = [
        p.config_span for p in tl.processes if p.config_span is not None and not p.cache_configured
    ]
    unknown = [c for c in tl.compilations if c.cache == "unknown"]
    if not disabled and not (flag_events and unknown):
        return []
    comps = disabled or unknown
    # compiling a graph already compiled by an earlier process is the cost of no cache
    first_seen: dict[str, int] = {}
    repeated = []
    chosen = {c.id for c in comps}
    for c, proc in zip(tl.compilations, tl.comp_process, strict=True):
        if c.id not in chosen or c.hash is None:
            continue
        if c.hash in first_seen and first_seen[c.hash] != proc:
            repeated.append(c)
        first_seen.setdefault(c.hash, proc)
    total = sum(seconds(c.duration_s) for c in comps)
    wasted = sum(seconds(c.duration_s) for c in repeated)
    detail = (
        f"{plural(len(comps), 'compilation')} ({total:.1f} s) ran with no executable cache: "
        "no 'Loaded ... from' or 'Couldn't find ... in executable cache' line follows "
        "'Begin XLA compilation'."
    )
    if flag_events:
        flags = next(p.flags for p in tl.processes if p.config_span is flag_events[0])
        detail += f" The compiler flags are '{flags}', which set no cache path."
    if repeated:
        detail += (
            f" {plural(len(repeated), 'graph')} compiled again by a later process "
            f"with the same HLO hash ({wasted:.1f} s wasted)."
        )
    else:
        detail += " Every later run will compile them again."
    evidence = [Evidence(s.source, s.line, s.text) for s in flag_events[:1]] + [
        comp_evidence(c) for c in comps
    ]
    return [
        make_finding(
            "cache-disabled",
            detail=detail,
            modules=(c.module for c in comps),
            count=len(comps),
            wasted=wasted,
            evidence=evidence,
        )
    ]


_STORE_NAMES = {
    "executable": "the executable cache",
    "persistent": "the persistent compilation cache",
    "fx-graph": "the FX-graph cache",
    "aot-autograd": "the AOT-autograd cache",
    "xla": "the XLA compilation cache",
}


def cache_cold(tl: Timeline, opts: Options) -> list[Finding]:
    """Warm-up compilations that missed a cache of compiled programs."""
    missed = [c for c in tl.compilations if c.cache == "miss" and c.warmup]
    if not missed:
        return []
    ids = {c.id for c in missed}
    lookups = [lk for lk, cid in tl.lookups if cid in ids and lk.outcome == "miss"]
    miss_lines = [Evidence(lk.span.source, lk.span.line, lk.span.text) for lk in lookups]
    stores = sorted({lk.store for lk in lookups}) or ["executable"]
    where = " and ".join(_STORE_NAMES.get(s, f"the {s} cache") for s in stores)
    hits = sum(1 for c in tl.compilations if c.cache == "hit")
    detail = (
        f"{plural(len(missed), 'compilation')} missed {where} during warm-up "
        f"({sum(seconds(c.duration_s) for c in missed):.1f} s compiling)"
        + (f"; {plural(hits, 'executable')} loaded from it." if hits else ".")
        + " Expected on a first run: the compiled programs are saved for the next one."
    )
    frameworks = {c.framework for c in missed}
    return [
        make_finding(
            "cache-cold",
            detail=detail,
            modules=(c.module for c in missed),
            count=len(missed),
            wasted=0.0,
            evidence=miss_lines or [comp_evidence(c) for c in missed],
            advice=rule("cache-cold").advice_for(
                frameworks.pop() if len(frameworks) == 1 else None
            ),
        )
    ]
