"""Consideration 6 and the causes the dumps name (Considerations 2-5).

A *recompilation* is a compilation of a function after its warm-up.  For each one:

* with ``--dumps``, the differ compares the HLO of this compilation with the previous one of
  the same function and names the cause (``batch-size-changed``, ``frozen-weights``,
  ``growing-shape``, ``constant-changed``, ``dtype-changed``, ``shape-changed``,
  ``graph-changed``); when only elided ``{...}`` constants differ, the cause is frozen weights
  (``frozen-weights`` plus the info ``constants-elided``);
* otherwise ``recompile-after-warmup`` says what the log does tell: a different HLO hash means
  the graph changed; the same hash means the executable cache was missed or is disabled.

Evidence: the ``Begin XLA compilation`` (or progress-bar) lines of the recompilation and of the
compilation before it.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from recompile_doctor.analyses._common import (
    CompileDiff,
    DumpSequence,
    Options,
    comp_evidence,
    make_finding,
    plural,
    seconds,
)
from recompile_doctor.model import Compilation, DiffEvidence, Evidence, Finding
from recompile_doctor.rules import RULES
from recompile_doctor.timeline import Timeline, function_key

_MAX_DETAIL_LINES = 4


def _log_reason(prev: Compilation, c: Compilation) -> str:
    if c.hash and prev.hash:
        if c.hash != prev.hash:
            return (
                f"HLO hash {prev.hash} → {c.hash}: the graph changed "
                f"(line {prev.line} → line {c.line})"
            )
        outcome = {
            "miss": f"the executable cache was missed ({c.cache_file or 'file not found'})",
            "disabled": "the executable cache is disabled",
            "hit": "it was loaded from the executable cache",
            "unknown": "the log does not show the cache outcome",
        }[c.cache]
        return (
            f"same HLO hash {c.hash} compiled again (line {prev.line} → line {c.line}): "
            f"the graph did not change; {outcome}"
        )
    if c.module.startswith("<"):
        return (
            f"a graph was constructed after warm-up (line {c.line}); the log does not name "
            "the module or its hash (set TF_POPLAR_VLOG_LEVEL=1 to print 'Begin XLA "
            "compilation: <module> (Hash: 0x...)')"
        )
    return (
        f"compiled again (line {prev.line} → line {c.line}); the log has no HLO hash "
        "(set TF_POPLAR_VLOG_LEVEL=1 to print 'Begin XLA compilation ... (Hash: 0x...)')"
    )


def recompilations(
    tl: Timeline,
) -> list[tuple[Compilation, Compilation, list[Compilation], int]]:
    """``(previous, recompilation, all compilations of its function, its index there)`` for
    every compilation after warm-up, in log order."""
    out = []
    for comps in tl.by_function().values():
        for i, c in enumerate(comps):
            if i > 0 and not c.warmup:
                out.append((comps[i - 1], c, comps, i))
    out.sort(key=lambda t: (t[1].source, t[1].line))
    return out


@dataclass(frozen=True, slots=True)
class _DumpMap:
    """How one function's dumps line up with its compilations (see :func:`_diff_for`)."""

    seq: DumpSequence
    by_position: bool  # one dump per compilation
    hash_rank: dict[str, int]  # HLO hash -> order of first appearance
    changed: tuple[CompileDiff, ...]  # the diffs that found a difference


def _dump_map(opts: Options, comps: list[Compilation]) -> _DumpMap | None:
    seq = opts.dump_diffs.get(function_key(comps[0].module))
    if seq is None or not seq.diffs:
        return None
    hashes = dict.fromkeys(x.hash for x in comps if x.hash)
    return _DumpMap(
        seq,
        seq.count == len(comps),
        {h: k for k, h in enumerate(hashes) if h is not None},
        tuple(d for d in seq.diffs if d.causes),
    )


def _diff_for(dm: _DumpMap | None, comps: list[Compilation], index: int) -> CompileDiff | None:
    """The dump diff that explains compilation ``comps[index]`` of its function, if any.

    When the function has one dump per compilation, the k-th dump is the k-th compilation.
    Otherwise (a compilation served from an in-process cache wrote no ``Begin`` line, or
    dumps are missing), the k-th distinct HLO hash is explained by the k-th diff that found a
    difference.
    """
    if dm is None:
        return None
    if dm.by_position:
        return dm.seq.diffs[index - 1]
    c = comps[index]
    k = dm.hash_rank.get(c.hash) if c.hash is not None else None
    if k is None or k == 0 or k - 1 >= len(dm.changed) or comps[index - 1].hash == c.hash:
        return None
    return dm.changed[k - 1]


@dataclass(frozen=True, slots=True)
class Verdict:
    """Why one recompilation happened: its rule ids (most important first) and a note."""

    previous: Compilation
    compilation: Compilation
    rules: tuple[str, ...]
    note: str
    diff: CompileDiff | None


def verdicts(tl: Timeline, opts: Options) -> list[Verdict]:
    """A verdict for every recompilation after warm-up, in log order."""
    out = []
    maps: dict[str, _DumpMap | None] = {}  # per function key
    for prev, c, comps, index in recompilations(tl):
        key = function_key(c.module)
        if key not in maps:
            maps[key] = _dump_map(opts, comps)
        d = _diff_for(maps[key], comps, index)
        if d is None or not d.causes:
            note = _log_reason(prev, c)
            if d is not None:
                note += "; the dumps of the two compilations are equivalent"
            elif opts.dumps_given:
                note += "; no dump of this compilation was found in --dumps"
            out.append(Verdict(prev, c, ("recompile-after-warmup",), note, d))
            continue
        causes = [x for x in d.causes if x in RULES]
        if causes == ["constants-elided"]:
            # only elided constants differ, and the executable did change: frozen weights
            causes = ["frozen-weights", "constants-elided"]
        out.append(Verdict(prev, c, tuple(causes), d.summary, d))
    return out


def recompilation_causes(tl: Timeline, opts: Options) -> dict[int, str]:
    """Compilation id -> the rule id that explains it, for every recompilation."""
    return {v.compilation.id: v.rules[0] for v in verdicts(tl, opts) if v.rules}


def diagnose_recompilations(tl: Timeline, opts: Options) -> list[Finding]:
    """One finding per cause over all recompilations after warm-up."""
    groups: dict[str, list[tuple[Compilation, Compilation, str]]] = defaultdict(list)
    diff_ev: dict[str, list[DiffEvidence]] = defaultdict(list)
    for v in verdicts(tl, opts):
        for cause in v.rules:
            groups[cause].append((v.previous, v.compilation, v.note))
            if v.diff is not None:
                diff_ev[cause].extend(v.diff.evidence)
    findings = []
    for rule_id, items in groups.items():
        recs = [c for _, c, _ in items]
        uniq = {(c.source, c.line): c for c in recs}
        wasted = sum(seconds(c.duration_s) for c in uniq.values())
        detail = f"{plural(len(uniq), 'recompilation')} after warm-up: {_describe(items)}."
        evidence: list[Evidence] = []
        for prev, c, _ in items:
            evidence += [comp_evidence(prev), comp_evidence(c)]
        findings.append(
            make_finding(
                rule_id,
                detail=detail,
                modules=(c.module for c in recs),
                count=len(uniq),
                wasted=wasted if rule_id != "constants-elided" else 0.0,
                evidence=evidence,
                advice=_advice(rule_id, opts),
                diff=diff_ev.get(rule_id, ())[:20],
            )
        )
    return findings


def _describe(items: list[tuple[Compilation, Compilation, str]]) -> str:
    """Per function: the note of its recompilation, or the first and last of several."""
    by_fn: dict[str, list[tuple[Compilation, str]]] = defaultdict(list)
    for _, c, note in items:
        if not by_fn[function_key(c.module)] or by_fn[function_key(c.module)][-1][0] is not c:
            by_fn[function_key(c.module)].append((c, note))
    parts = []
    for fn, lst in list(by_fn.items())[:_MAX_DETAIL_LINES]:
        if len(lst) == 1:
            parts.append(f"{fn} (line {lst[0][0].line}): {lst[0][1]}")
        else:
            parts.append(
                f"{fn}, {len(lst)} times (lines {lst[0][0].line} to {lst[-1][0].line}); "
                f"first: {lst[0][1]}; last: {lst[-1][1]}"
            )
    if len(by_fn) > _MAX_DETAIL_LINES:
        parts.append(f"and {len(by_fn) - _MAX_DETAIL_LINES} more functions")
    return "; ".join(parts)


def _advice(rule_id: str, opts: Options) -> str | None:
    if rule_id == "recompile-after-warmup" and opts.dumps_given:
        return (
            "The dumps could not name a cause: check that --dumps holds the dumps of this run "
            "(XLA_FLAGS=--xla_dump_to=DIR), one file per compilation, and compare the two "
            "compilations' HLO with 'recompile-doctor diff'."
        )
    return None
