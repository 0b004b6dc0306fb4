"""Across runs: why a later process did not reuse what an earlier one compiled.

With a persistent or executable cache shared by several runs (``analyze A.log B.log``: each log
is its own process), a later process that misses the cache for a function an earlier process
compiled — or logs another cache key for it — was compiling a different cache entry.  The
entry's key is made of components, and one of them changed:

* JAX logs the hash of each component (``get_cache_key hash of serialized <component>:``), the
  XLA flags it includes in the key, and the compile options (replicas, partitions, device
  assignment).  A changed ``XLA flags`` hash is ``flags-changed`` (the included flags,
  old -> new); ``compile_options`` (or ``accelerator_config``, ``compression``,
  ``custom_hook``) ``compile-options-changed``; ``jax_lib version`` / ``backend version``
  ``version-changed``.  The ``compile_options`` hash also changes with the flags (they are its
  debug options): then the flags are the cause.  When only the ``computation`` hash differs,
  the program itself changed: the dumps of both runs (``--dumps A --dumps B``) say how
  (including constant values the HLO text elides, from ``module.mlir``), else
  ``graph-changed`` says so and asks for the dumps.
* Other frameworks (Poplar) name the process's flags and version: flags or version that differ
  between the two processes are ``flags-changed`` / ``version-changed``.

A hit across runs is what the cache is for and raises nothing.
"""

from __future__ import annotations

import bisect
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from recompile_doctor.analyses._common import (
    CompileDiff,
    Options,
    comp_evidence,
    make_finding,
    seconds,
)
from recompile_doctor.errors import RecompileDoctorError
from recompile_doctor.events import EXECUTABLE_STORES, CacheLookup, FrameworkNote, Span
from recompile_doctor.model import Compilation, DiffEvidence, Evidence, Finding, ValueChange
from recompile_doctor.name_digest import held
from recompile_doctor.rules import rule as rule_of
from recompile_doctor.timeline import Timeline, function_key
from recompile_doctor.timeline.table import NO_INT, CompilationTable
from recompile_doctor.wording import plural

if TYPE_CHECKING:
    from recompile_doctor.differ.options import SettingChange

UNSET = "(unset)"
#: component -> the rule its change is (JAX's names, ``jax/_src/cache_key.py``)
COMPONENT_RULES = {
    "XLA flags": "flags-changed",
    "compile_options": "compile-options-changed",
    "accelerator_config": "compile-options-changed",
    "compression": "compile-options-changed",
    "custom_hook": "compile-options-changed",
    "jax_lib version": "version-changed",
    "backend version": "version-changed",
}
_KEY_NOTES = frozenset({"cache-key-component", "cache-key-flag", "compile-options"})
_RULE_ORDER = ("flags-changed", "compile-options-changed", "version-changed")


def _ev(sp: Span) -> Evidence:
    return Evidence(sp.source, sp.line, sp.text)


@dataclass(slots=True, repr=False, eq=False)  # working state: never compared or shown
class _Key:
    """What one compilation's log says about its cache key."""

    components: dict[str, FrameworkNote] = field(default_factory=dict)
    flags: dict[str, tuple[str, FrameworkNote]] = field(default_factory=dict)  # included only
    flags_seen: bool = False
    options: FrameworkNote | None = None
    lookups: list[CacheLookup] = field(default_factory=list)

    @property
    def outcomes(self) -> set[str]:
        return {lk.outcome for lk in self.lookups}

    @property
    def cache_key(self) -> str | None:
        for lk in self.lookups:
            if lk.key is not None and lk.key.cache_key:
                return lk.key.cache_key
        return None

    def miss_line(self) -> Evidence | None:
        for lk in self.lookups:
            if lk.outcome == "miss":
                return _ev(lk.span)
        return None


@dataclass(slots=True, repr=False, eq=False)  # working state: never compared or shown
class _Pair:
    """A later compilation that missed, and the earlier one it could have reused."""

    old: Compilation
    new: Compilation
    rules: dict[str, list[ValueChange]] = field(default_factory=dict)
    evidence: list[Evidence] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    diff: tuple[DiffEvidence, ...] = ()

    def add(self, rule: str, changes: list[ValueChange], *evidence: Evidence) -> None:
        self.rules.setdefault(rule, []).extend(changes)
        self.evidence.extend(evidence)


class _Owners:
    """Which compilation a line belongs to: the first (in compilation order) of its source
    whose lines, from its first to its last, hold the line (and of the module, when one is
    given).  By source, the compilations sorted by their first line, with the furthest last
    line among those before each: a look-up walks back only over those that can hold it."""

    def __init__(self, table: CompilationTable) -> None:
        by_source: dict[str, list[tuple[int, int, int]]] = defaultdict(list)
        for i, (src, line, end) in enumerate(
            zip(table.source, table.line, table.end_line, strict=True)
        ):
            by_source[src].append((line, i, line if end == NO_INT else end))
        self._table = table
        self._starts: dict[str, list[int]] = {}
        self._spans: dict[str, list[tuple[int, int, int]]] = {}
        self._reach: dict[str, list[int]] = {}
        for src, spans in by_source.items():
            spans.sort()
            reach, far = [], -1
            for _, _, end in spans:
                far = max(far, end)
                reach.append(far)
            self._spans[src] = spans
            self._starts[src] = [line for line, _, _ in spans]
            self._reach[src] = reach

    def of(self, source: str, line: int, module: str | None) -> int | None:
        starts = self._starts.get(source)
        if starts is None:
            return None
        spans, reach, module_of = self._spans[source], self._reach[source], self._table.module_of
        best: int | None = None
        k = bisect.bisect_right(starts, line) - 1
        while k >= 0 and reach[k] >= line:
            _, i, end = spans[k]
            if end >= line and (module is None or module == module_of(i)):
                best = i if best is None else min(best, i)
            k -= 1
        return best


def _keys(tl: Timeline) -> dict[int, _Key]:
    """Compilation id -> the key facts logged between its first and last line."""
    out: dict[int, _Key] = defaultdict(_Key)
    notes = tl.notes_of(*_KEY_NOTES)
    owners = _Owners(tl.compilations) if notes else None
    for n in notes:
        assert owners is not None
        cid = owners.of(n.span.source, n.span.line, n.key.module if n.key is not None else None)
        if cid is None:
            continue
        k = out[cid]
        if n.note == "cache-key-component":
            k.components.setdefault(str(n.detail.get("component")), n)
        elif n.note == "cache-key-flag":
            k.flags_seen = True
            if n.detail.get("included"):
                name, _, value = str(n.detail.get("flag")).partition("=")
                k.flags.setdefault(name, (value or "true", n))
        elif k.options is None:
            k.options = n
    for lk, cid in tl.lookups:
        if cid is not None and lk.store in EXECUTABLE_STORES:
            out[cid].lookups.append(lk)
    return out


def _change(
    new: Compilation, what: str, old_v: str | None, new_v: str | None, sp: Span | None
) -> ValueChange:
    return ValueChange(
        new.function or function_key(new.module),
        what,
        old_v,
        new_v,
        None,
        sp.source if sp else new.source,
        sp.line if sp else new.line,
    )


def _flag_changes(p: _Pair, ka: _Key, kb: _Key) -> tuple[list[ValueChange], list[Evidence]]:
    changes, evidence = [], []
    for name in sorted(set(ka.flags) | set(kb.flags)):
        a, b = ka.flags.get(name), kb.flags.get(name)
        va, vb = (a[0] if a else None), (b[0] if b else None)
        if va == vb:
            continue
        shown = b or a
        assert shown is not None
        changes.append(_change(p.new, name, va or UNSET, vb or UNSET, shown[1].span))
        evidence += [_ev(x[1].span) for x in (a, b) if x is not None]
    return changes, evidence


def _option_changes(p: _Pair, ka: _Key, kb: _Key) -> tuple[list[ValueChange], list[Evidence]]:
    if ka.options is None or kb.options is None:
        return [], []
    changes = []
    for name in ("num_replicas", "num_partitions", "device_assignment"):
        va, vb = ka.options.detail.get(name), kb.options.detail.get(name)
        if va != vb:
            changes.append(_change(p.new, name, str(va), str(vb), kb.options.span))
    if not changes:
        return [], []
    return changes, [_ev(ka.options.span), _ev(kb.options.span)]


def _settings(d: CompileDiff | None, rule: str) -> list[SettingChange]:
    """The dumps' flags / compile options that differ, for ``rule`` (none without dumps)."""
    if d is None or d.a_path is None or d.b_path is None:
        return []
    try:
        from recompile_doctor.differ.options import compare_side_files  # only across runs
        from recompile_doctor.parsers.dumps import side_files

        found = compare_side_files(side_files(d.a_path), side_files(d.b_path))
    except RecompileDoctorError:
        return []
    return [s for s in found if s.rule == rule]


def _setting_changes(p: _Pair, settings: list[SettingChange]) -> list[ValueChange]:
    return [
        ValueChange(
            p.new.function or function_key(p.new.module),
            f"{s.file}: {s.field}",
            s.old or UNSET,
            s.new or UNSET,
            None,
            s.b_path or None,
            None,
        )
        for s in settings
    ]


def _hash_change(p: _Pair, comp: str, a: FrameworkNote, b: FrameworkNote) -> ValueChange:
    return _change(
        p.new, f"{comp} (hash)", str(a.detail.get("hash")), str(b.detail.get("hash")), b.span
    )


def _compare_components(p: _Pair, ka: _Key, kb: _Key, d: CompileDiff | None) -> None:
    differ = [
        comp
        for comp, nb in kb.components.items()
        if comp in ka.components and ka.components[comp].detail.get("hash") != nb.detail.get("hash")
    ]
    for comp in differ:
        a, b = ka.components[comp], kb.components[comp]
        ev = (_ev(a.span), _ev(b.span))
        if comp == "computation":
            _program_changed(p, a, b, d)
            continue
        rule = COMPONENT_RULES.get(comp, "compile-options-changed")
        if comp == "XLA flags":
            changes, fev = _flag_changes(p, ka, kb)
            changes += _setting_changes(p, _settings(d, rule))
            p.add(rule, changes or [_hash_change(p, comp, a, b)], *ev, *fev)
        elif comp == "compile_options":
            changes, oev = _option_changes(p, ka, kb)
            if not changes and "XLA flags" in differ:
                p.notes.append(
                    "the compile_options hash differs too: the XLA flags are part of its "
                    "debug options"
                )
                p.evidence.extend(ev)
                continue
            changes += _setting_changes(p, _settings(d, rule))
            p.add(rule, changes or [_hash_change(p, comp, a, b)], *ev, *oev)
        else:
            p.add(rule, [_hash_change(p, comp, a, b)], *ev)


def _program_changed(p: _Pair, a: FrameworkNote, b: FrameworkNote, d: CompileDiff | None) -> None:
    ev = (_ev(a.span), _ev(b.span))
    hashes = f"hash of the computation {str(a.detail.get('hash'))[:12]}… → {str(b.detail.get('hash'))[:12]}…"
    if d is not None and d.causes:
        rule = d.causes[0]
        p.notes.append(f"the program itself changed ({hashes}); the dumps show: {d.summary}")
        p.diff = d.evidence
        changes = [
            ValueChange(
                p.new.function or function_key(p.new.module),
                de.b_instruction or de.a_instruction or de.kind,
                de.a_text,
                de.b_text,
                None,
                de.b_path,
                None,
            )
            for de in d.evidence[:5]
        ]
        p.add(rule, changes, *ev)
        return
    if d is not None:
        p.notes.append(
            f"the program itself changed ({hashes}), though its HLO text is equivalent: {d.summary}"
        )
    else:
        p.notes.append(
            f"the program itself changed ({hashes}); give the dump folders of both runs "
            "(--dumps A --dumps B) to see what changed"
        )
    p.add("graph-changed", [_hash_change(p, "computation", a, b)], *ev)


def _compare_without_hashes(p: _Pair, ka: _Key, kb: _Key, d: CompileDiff | None) -> None:
    """No component hashes logged: compare what the log does show."""
    if ka.flags_seen and kb.flags_seen:
        changes, fev = _flag_changes(p, ka, kb)
        if changes:
            p.add("flags-changed", changes, *fev)
    changes, oev = _option_changes(p, ka, kb)
    if changes:
        p.add("compile-options-changed", changes, *oev)
    if not p.rules and d is not None and d.causes:
        p.notes.append(f"the dumps show: {d.summary}")
        p.diff = d.evidence
        p.add(d.causes[0], [], *p.evidence)


def _compare_processes(p: _Pair, tl: Timeline, pa: int, pb: int) -> None:
    """Frameworks that name the process's flags and version (Poplar)."""
    a, b = tl.processes[pa], tl.processes[pb]
    if a.version and b.version and a.version != b.version:
        p.add("version-changed", [_change(p.new, "version", a.version, b.version, None)])
    if a.framework != "jax" and (a.flags or "") != (b.flags or "") and (a.flags or b.flags):
        old_t, new_t = set((a.flags or "").split()), set((b.flags or "").split())
        what = "flags"
        changes = [
            _change(
                p.new,
                what,
                " ".join(sorted(old_t - new_t)) or UNSET,
                " ".join(sorted(new_t - old_t)) or UNSET,
                b.config_span,
            )
        ]
        ev = [_ev(s) for s in (a.config_span, b.config_span) if s is not None]
        p.add("flags-changed", changes, *ev)


def after_earlier_runs(table: CompilationTable) -> Iterator[tuple[int, int]]:
    """``(id, earlier id)`` for each compilation (not eager) of a function that an earlier
    process compiled too: the earlier one is the last compilation of the function in the
    latest of those processes.  (Per function, the last compilation of each process so far:
    a few entries, where a list of every earlier compilation made this quadratic.)"""
    procs = table.process
    seen: dict[str | int, dict[int, int]] = defaultdict(dict)  # (a long name: held)
    for i, fn in enumerate(table.function_keys()):
        proc = procs[i]
        last_of = seen[held(fn)]
        earlier = [p for p in last_of if p < proc]
        last_of[proc] = i
        if earlier and not table.eager_of(i):
            yield i, last_of[max(earlier)]


def _pairs(tl: Timeline, opts: Options) -> list[_Pair]:
    keys = _keys(tl)
    table = tl.compilations
    procs = table.process
    out = []
    for i, old_id in after_earlier_runs(table):
        proc = procs[i]
        kb = keys.get(i, _Key())
        if table.cache_of(i) == "hit" or "hit" in kb.outcomes:
            continue
        ka = keys.get(old_id, _Key())
        key_a, key_b = ka.cache_key, kb.cache_key
        missed = table.cache_of(i) == "miss" or "miss" in kb.outcomes
        if key_a is not None and key_a == key_b:
            continue  # the same key: the entry was not there (not written, evicted)
        if not missed and not (key_a and key_b):
            continue
        old, c = table[old_id], table[i]
        p = _Pair(old, c)
        d = opts.joined.by_compilation.get(c.id)
        if ka.components and kb.components:
            _compare_components(p, ka, kb, d)
        else:
            _compare_without_hashes(p, ka, kb, d)
            _compare_processes(p, tl, procs[old_id], proc)
        if p.rules:
            miss = kb.miss_line()
            p.evidence.append(miss if miss is not None else comp_evidence(c))
            out.append(p)
    return out


def _detail(rule: str, pairs: list[_Pair]) -> str:
    first = pairs[0]
    runs = f"{first.new.source} did not reuse what {first.old.source} compiled"
    what = []
    for p in pairs:
        for ch in p.rules[rule]:
            what.append(f"{ch.what}: {ch.old} → {ch.new}")
    notes = list(dict.fromkeys(n for p in pairs for n in p.notes))
    text = (
        f"{plural(len(pairs), 'compilation')} of a later run missed the cache for "
        f"{'a function' if len(pairs) == 1 else 'functions'} an earlier run compiled ({runs})"
    )
    if what:
        text += ": " + "; ".join(dict.fromkeys(what))
    if notes:
        text += ". " + "; ".join(notes)
    return text + "."


def crossrun_misses(tl: Timeline, opts: Options) -> list[Finding]:
    """A later process missed (or keyed differently) what an earlier one compiled: name the key
    component that changed, old -> new."""
    if len(tl.processes) < 2:
        return []
    by_rule: dict[str, list[_Pair]] = defaultdict(list)
    for p in _pairs(tl, opts):
        for rule in p.rules:
            by_rule[rule].append(p)
    out = []
    for rule, pairs in sorted(by_rule.items(), key=lambda kv: _order(kv[0])):
        out.append(
            make_finding(
                rule,
                detail=_detail(rule, pairs),
                modules=(p.new.module for p in pairs),
                count=len(pairs),
                wasted=sum(seconds(p.new.duration_s) for p in pairs),
                evidence=[e for p in pairs for e in p.evidence],
                diff=[e for p in pairs for e in p.diff],
                changes=[ch for p in pairs for ch in p.rules[rule]],
                advice=rule_of(rule).advice_for(pairs[0].new.framework),
            )
        )
    return out


def _order(rule: str) -> int:
    return _RULE_ORDER.index(rule) if rule in _RULE_ORDER else len(_RULE_ORDER)
