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
    event_evidence,
    make_finding,
    plural,
    seconds,
)
from recompile_doctor.model import Finding
from recompile_doctor.timeline import Timeline


def cache_disabled(tl: Timeline, opts: Options) -> list[Finding]:
    """Compilations with cache outcome ``disabled``, or flags that set no cache path."""
    # compilations with unhashable custom ops are precompile-unsupported's, not the cache's
    disabled = [c for c in tl.compilations if c.cache == "disabled" and c.id not in tl.uncacheable]
    flag_events = [
        e
        for e in tl.events
        if e.kind == "poplar-flags" and "executable_cache_path" not in str(e.detail.get("flags"))
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
        detail += f" TF_POPLAR_FLAGS is set to '{flag_events[0].detail.get('flags')}', with no --executable_cache_path."
    if repeated:
        detail += (
            f" {plural(len(repeated), 'graph')} compiled again by a later process "
            f"with the same HLO hash ({wasted:.1f} s wasted)."
        )
    else:
        detail += " Every later run will compile them again."
    evidence = [event_evidence(e) for e in flag_events[:1]] + [comp_evidence(c) for c in comps]
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


def cache_cold(tl: Timeline, opts: Options) -> list[Finding]:
    """Warm-up compilations that missed the executable cache."""
    missed = [c for c in tl.compilations if c.cache == "miss" and c.warmup]
    if not missed:
        return []
    files = {c.cache_file for c in missed}
    miss_lines = [e for e in tl.events if e.kind == "cache-miss" and e.detail.get("path") in files]
    hits = sum(1 for c in tl.compilations if c.cache == "hit")
    detail = (
        f"{plural(len(missed), 'compilation')} missed the executable cache during warm-up "
        f"({sum(seconds(c.duration_s) for c in missed):.1f} s compiling)"
        + (f"; {plural(hits, 'executable')} loaded from it." if hits else ".")
        + " Expected on a first run: the executables are saved for the next one."
    )
    return [
        make_finding(
            "cache-cold",
            detail=detail,
            modules=(c.module for c in missed),
            count=len(missed),
            wasted=0.0,
            evidence=[event_evidence(e) for e in miss_lines] or [comp_evidence(c) for c in missed],
        )
    ]
