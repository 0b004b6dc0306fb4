"""The lookups' outcomes per cache store are counted as the timeline takes each lookup, so
that the summary's ``cache_by_store`` never reads the packed lookups back."""

from __future__ import annotations

from collections.abc import Iterable

from recompile_doctor.api import cache_by_store
from recompile_doctor.events import CacheLookup
from recompile_doctor.parsers import parse_log
from recompile_doctor.timeline import build_timeline
from recompile_doctor.timeline.types import Timeline
from tests.test_fastpath import _fixture_logs


def _by_store(lookups: Iterable[CacheLookup]) -> dict[str, dict[str, int]]:
    """The counts by a pass over the lookups, as the summary counted them before."""
    out: dict[str, dict[str, int]] = {}
    names = {"hit": "hits", "miss": "misses", "write": "writes"}
    for lk in lookups:
        if lk.outcome in names:
            d = out.setdefault(lk.store, {"hits": 0, "misses": 0, "writes": 0})
            d[names[lk.outcome]] += 1
    return out


def test_the_lookups_are_tallied_per_store_as_they_are_added() -> None:
    # GIVEN every fixture log, WHEN its timeline is built, THEN the builder's tally is what
    # a pass over its lookups counts, store by store, and the summary reads the tally
    stores: set[str] = set()
    counted = 0
    for log in _fixture_logs():
        if log.suffix == ".gz":
            continue
        tl = build_timeline(parse_log(str(log)))
        assert tl.lookups_tallied is not None, log
        want = _by_store(lk for lk, _ in tl.lookups)
        assert tl.lookups_tallied.by_store() == want, log
        assert cache_by_store(tl) == want, log
        stores |= want.keys()
        counted += sum(n for d in want.values() for n in d.values())
    # (every kind of store the fixtures have: an executable cache, JAX's persistent one,
    # torch's FX-graph cache, ...)
    assert len(stores) >= 4 and counted > 100, stores


def test_a_timeline_made_without_a_tally_counts_its_lookups() -> None:
    # GIVEN a timeline built elsewhere, without the builder's tally
    log = next(p for p in _fixture_logs() if "persistent" in str(p) and p.suffix == ".log")
    built = build_timeline(parse_log(str(log)))
    tl = Timeline(
        built.compilations,
        loads=(),
        events=(),
        processes=(),
        comp_process=(),
        uncacheable=frozenset(),
        lookups=list(built.lookups),
    )
    # THEN the summary's counts come from a pass over its lookups, and the tally is a copy
    want = _by_store(lk for lk, _ in built.lookups)
    assert want and cache_by_store(tl) == want
    got = cache_by_store(built)
    got[next(iter(got))]["hits"] += 100
    assert cache_by_store(built) == want
