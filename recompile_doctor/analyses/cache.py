"""Consideration 0: the executable cache.

* ``cache-disabled``: compilations happen and no executable-cache activity appears.  Evidence:
  the ``Begin XLA compilation`` lines (printed at the same verbosity as the cache lines, so their
  presence without ``Loaded``/``Couldn't find`` proves the cache is off), or a
  ``TF_POPLAR_FLAGS is set to '...'`` line without ``--executable_cache_path``.
* ``cache-cold`` (info): warm-up compilations that missed the cache (``Couldn't find``).
"""

from __future__ import annotations

from itertools import chain

from recompile_doctor.analyses._common import (
    Options,
    make_finding,
)
from recompile_doctor.model import Evidence, Finding
from recompile_doctor.rules import rule
from recompile_doctor.timeline import Timeline
from recompile_doctor.wording import plural


def cache_disabled(tl: Timeline, opts: Options) -> list[Finding]:
    """Compilations with cache outcome ``disabled``, or flags that set no cache path."""
    # compilations with unhashable custom ops are precompile-unsupported's, not the cache's
    table = tl.compilations
    uncacheable = tl.uncacheable
    disabled = [i for i in table.ids_with_cache("disabled") if i not in uncacheable]
    # processes whose compiler flags were logged and turn no executable cache on
    flag_events = [
        p.config_span for p in tl.processes if p.config_span is not None and not p.cache_configured
    ]
    unknown = table.ids_with_cache("unknown") if flag_events else []
    if not disabled and not (flag_events and unknown):
        return []
    ids = disabled or unknown
    # compiling a graph already compiled by an earlier process is the cost of no cache
    first_seen: dict[str, int] = {}
    repeated = []
    for i in ids:  # (in order, as the compilations are)
        h = table.hash[i]
        if h is None:
            continue
        proc = table.process[i]
        if h in first_seen and first_seen[h] != proc:
            repeated.append(i)
        first_seen.setdefault(h, proc)
    total = sum(table.seconds_of(i) for i in ids)
    wasted = sum(table.seconds_of(i) for i in repeated)
    detail = (
        f"{plural(len(ids), 'compilation')} ({total:.1f} s) ran with no executable cache: "
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
    evidence = chain(
        (Evidence(s.source, s.line, s.text) for s in flag_events[:1]),
        (table.evidence_of(i) for i in ids),
    )
    return [
        make_finding(
            "cache-disabled",
            detail=detail,
            modules=(table.module_of(i) for i in ids),
            count=len(ids),
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
    table = tl.compilations
    missed = [i for i in table.ids_with_cache("miss") if table.warmup[i]]
    if not missed:
        return []
    ids = set(missed)
    lookups = [lk for lk, cid in tl.lookups if cid in ids and lk.outcome == "miss"]
    miss_lines = [Evidence(lk.span.source, lk.span.line, lk.span.text) for lk in lookups]
    stores = sorted({lk.store for lk in lookups}) or ["executable"]
    where = " and ".join(_STORE_NAMES.get(s, f"the {s} cache") for s in stores)
    hits = table.count_cache("hit")
    detail = (
        f"{plural(len(missed), 'compilation')} missed {where} during warm-up "
        f"({sum(table.seconds_of(i) for i in missed):.1f} s compiling)"
        + (f"; {plural(hits, 'executable')} loaded from it." if hits else ".")
        + " Expected on a first run: the compiled programs are saved for the next one."
    )
    frameworks = {table.framework_of(i) for i in missed}
    return [
        make_finding(
            "cache-cold",
            detail=detail,
            modules=(table.module_of(i) for i in missed),
            count=len(missed),
            wasted=0.0,
            evidence=miss_lines or (table.evidence_of(i) for i in missed),
            advice=rule("cache-cold").advice_for(
                frameworks.pop() if len(frameworks) == 1 else None
            ),
        )
    ]
