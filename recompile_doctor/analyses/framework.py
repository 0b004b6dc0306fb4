"""What a framework itself reports beyond one recompilation's cause.

* ``recompile-limit``: the framework hit its recompile / cache-size limit and fell back
  (torch's ``torch._dynamo hit config.recompile_limit``); evidence: the limit line, with
  the last reason the framework gave.
* ``compile-failed``: a compilation failed (torch's ``fail_type`` / ``fail_reason``).
* ``graph-break`` (info): torch.compile broke a graph; identical reasons collapse into one
  line with a count.
* ``retracing``: the framework warned that it retraces (TensorFlow's retracing warning)
  and no recompilation of that function got a more specific cause.
* ``rank-divergence``: ranks of one run compiled a function a different number of times;
  the finding names the ranks and the first compile where they part.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from itertools import islice

from recompile_doctor.analyses._common import (
    Options,
    comp_evidence,
    make_finding,
    seconds,
)
from recompile_doctor.analyses.capped import Capped
from recompile_doctor.analyses.recompile import verdicts
from recompile_doctor.events import FrameworkNote, RecompileReason
from recompile_doctor.model import Evidence, Finding
from recompile_doctor.name_digest import held
from recompile_doctor.rules import rule
from recompile_doctor.timeline import Timeline
from recompile_doctor.timeline.name_set import NameSet
from recompile_doctor.timeline.table import NO_RANK
from recompile_doctor.wording import NAMED_IN_DETAIL, counted, listed, names_listed, plural


def _ev(e: RecompileReason | FrameworkNote) -> Evidence:
    return Evidence(e.span.source, e.span.line, e.span.text)


def _framework(frameworks: Iterable[str]) -> str | None:
    """The one framework these are of, else None."""
    fws = set(frameworks)
    return fws.pop() if len(fws) == 1 else None


def recompile_limit(tl: Timeline, opts: Options) -> list[Finding]:
    """The framework's recompile limit was hit."""
    hits = tl.reasons_of("recompile-limit")
    if not hits:
        return []
    fns = NameSet(r.key.function or r.key.name for r in hits).sorted()
    last = hits[-1]
    detail = (
        f"{plural(len(fns), 'function')} hit the recompile limit ({names_listed(fns)}): from "
        "then on the framework no longer compiles them (torch runs them eagerly). "
        f"Last reason: {last.reason.splitlines()[0] if last.reason else 'not given'}"
    )
    return [
        make_finding(
            "recompile-limit",
            detail=detail,
            modules=fns,
            count=len(hits),
            wasted=0.0,
            evidence=map(_ev, hits),
            advice=rule("recompile-limit").advice_for(_framework(r.key.framework for r in hits)),
            changes=list(islice((c for r in hits for c in r.changes), 20)),
        )
    ]


def compile_failed(tl: Timeline, opts: Options) -> list[Finding]:
    """Compilations that failed."""
    fails = tl.reasons_of("compile-failed")
    if not fails:
        return []
    fns = NameSet(r.key.function or r.key.name for r in fails).sorted()
    ids = list(islice((r.key.compile_id for r in fails if r.key.compile_id), 8))
    detail = (
        f"{plural(len(fails), 'compilation')} failed ({names_listed(fns)}"
        + (f"; compile ids {', '.join(ids)}" if ids else "")
        + f"): {fails[0].reason.splitlines()[0] if fails[0].reason else ''}"
    )
    return [
        make_finding(
            "compile-failed",
            detail=detail,
            modules=fns,
            count=len(fails),
            wasted=0.0,
            evidence=map(_ev, fails),
            advice=rule("compile-failed").advice_for(_framework(r.key.framework for r in fails)),
        )
    ]


def graph_breaks(tl: Timeline, opts: Options) -> list[Finding]:
    """Graph breaks, identical reasons collapsed with a count."""
    notes = tl.notes_of("graph-break")
    if not notes:
        return []
    reasons = (str(n.detail.get("reason") or n.span.text.strip()) for n in notes)
    fns = sorted({n.key.function or n.key.name for n in notes if n.key is not None})
    return [
        make_finding(
            "graph-break",
            detail=f"{plural(len(notes), 'graph break')}: "
            + counted(reasons, 5, "other reason", by_count=True),
            modules=fns,
            count=len(notes),
            wasted=0.0,
            evidence=map(_ev, notes),
        )
    ]


def retracing(tl: Timeline, opts: Options) -> list[Finding]:
    """A framework's retracing warning that no recompilation cause already explains: a
    function whose recompilations were given a cause, retracing itself included (that
    finding shows these warnings already), is left out."""
    warned = tl.reasons_of("retracing")
    if not warned:
        return []
    table = tl.compilations
    explained = {  # (Compilation.function_name, from the columns; a long one by its digest)
        held(table.function_of(cid) or table.module_of(cid))
        for cid, first in verdicts(tl, opts).first_rules()
        if first != "recompile-after-warmup"
    }
    # (one pass over the warnings, holding what the finding shows: a run can warn on
    # every step, and each warning is a paragraph)
    first: RecompileReason | None = None
    count = 0
    names = NameSet()
    frameworks: set[str] = set()
    evidence = Capped()
    for r in warned:
        name = r.key.function or r.key.name
        if held(name) in explained:
            continue
        if first is None:
            first = r
        count += 1
        names.add(name)
        frameworks.add(r.key.framework)
        evidence.add(_ev(r))
    if first is None:
        return []
    fns = names.sorted()
    return [
        make_finding(
            "retracing",
            detail=f"The framework reported retracing of {names_listed(fns)}: "
            + (first.reason.splitlines()[0] if first.reason else ""),
            modules=fns,
            count=count,
            wasted=0.0,
            evidence=evidence.lines(),
            advice=rule("retracing").advice_for(_framework(frameworks)),
        )
    ]


def rank_divergence(tl: Timeline, opts: Options) -> list[Finding]:
    """Ranks that compiled a function a different number of times."""
    per: dict[str, dict[int, list[int]]] = defaultdict(lambda: defaultdict(list))
    ranks: set[int] = set()
    table = tl.compilations
    for i, rank in enumerate(table.rank):
        if rank != NO_RANK and table.compiled_of(i) and not table.eager_of(i):
            ranks.add(rank)
            per[table.function_of(i) or table.module_of(i)][rank].append(i)
    if len(ranks) < 2:
        return []
    findings_items = []
    for fn, by_rank in sorted(per.items()):
        counts = {r: len(by_rank.get(r, [])) for r in sorted(ranks)}
        if len(set(counts.values())) < 2:
            continue
        common = min(counts.values())
        extra_ranks = [r for r, n in counts.items() if n > common]
        first = [table[by_rank[r][common]] for r in extra_ranks]
        findings_items.append((fn, counts, extra_ranks, first))
    if not findings_items:
        return []
    parts: list[str] = []
    evidence: list[Evidence] = []
    wasted = 0.0
    for fn, counts, _extra, first in findings_items:
        evidence += [comp_evidence(c) for c in first]
        wasted += sum(seconds(c.duration_s) for c in first)
        if len(parts) == NAMED_IN_DETAIL:
            continue  # (counted below; the finding's modules name every one)
        where = ", ".join(
            f"rank {c.rank} at compile {c.compile_id or '#' + str(counts[c.rank or 0])} "
            f"(line {c.line})"
            for c in first
        )
        parts.append(
            f"{fn}: compiled "
            + ", ".join(f"{n}× on rank {r}" for r, n in counts.items())
            + f"; the ranks part at {where}"
        )
    return [
        make_finding(
            "rank-divergence",
            detail=listed(parts, len(findings_items), "more function") + ".",
            modules=[fn for fn, *_ in findings_items],
            count=sum(len(x[2]) for x in findings_items),
            wasted=wasted,
            evidence=evidence,
        )
    ]
