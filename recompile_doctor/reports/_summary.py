"""Words and tables shared by the text and Markdown renderers."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from recompile_doctor.model import Report


def headline(report: Report) -> str:
    """One line: how many compilations, how many after warm-up, causes, time wasted."""
    s = report.summary
    hits = f" ({s.cache_hits} loaded from cache)" if s.cache_hits else ""
    line = f"{s.compilations} compilation{'s' if s.compilations != 1 else ''}{hits}, "
    line += f"{s.recompilations_after_warmup} after warm-up"
    problems = [f for f in report.findings if f.severity != "info"]
    if not problems:
        if s.compilations == 0:
            return line + "; no compilation activity recognized"
        return line + "; no recompilation problems found"
    causes = sorted({f.rule for f in problems})
    line += f", {len(causes)} cause{'s' if len(causes) != 1 else ''}"
    line += f"; {s.wasted_seconds:.1f} s wasted; top cause: {problems[0].rule}"
    return line


@dataclass(frozen=True, slots=True)
class ModuleRow:
    module: str
    compilations: int
    hashes: int
    cache: str
    compile_s: float
    after_warmup: int


def module_rows(report: Report) -> list[ModuleRow]:
    """Per module: compilations, distinct hashes, cache outcomes, compile time, after warm-up."""
    by: dict[str, list[int]] = {}
    for i, c in enumerate(report.compilations):
        by.setdefault(c.module, []).append(i)
    rows = []
    for module, idx in by.items():
        comps = [report.compilations[i] for i in idx]
        outcomes = Counter(c.cache for c in comps)
        cache = ", ".join(f"{k}×{v}" if v > 1 else k for k, v in sorted(outcomes.items()))
        rows.append(
            ModuleRow(
                module=module,
                compilations=len(comps),
                hashes=len({c.hash for c in comps if c.hash}),
                cache=cache,
                compile_s=round(sum(c.duration_s or 0.0 for c in comps if c.compiled), 3),
                after_warmup=sum(1 for c in comps if not c.warmup),
            )
        )
    rows.sort(key=lambda r: (-r.after_warmup, -r.compile_s, r.module))
    return rows


def parse_health(report: Report) -> str:
    p = report.parse
    total_lines = sum(i.lines for i in report.inputs)
    names = ", ".join(i.path for i in report.inputs)
    return (
        f"{names}: {total_lines} lines, {p.recognized} recognized, "
        f"{p.unrecognized} unrecognized, {p.malformed} malformed"
    )


def clip(text: str, width: int) -> str:
    """Printable, one line, at most ``width`` characters."""
    clean = "".join(ch if ch.isprintable() else "·" for ch in text)
    return clean if len(clean) <= width else clean[: max(width - 1, 1)] + "…"


def clip_middle(text: str, width: int, head: int = 27) -> str:
    """Like :func:`clip`, but keeps the start (a timestamp) and the end (the message)."""
    clean = "".join(ch if ch.isprintable() else "·" for ch in text)
    if len(clean) <= width or width <= head + 10:
        return clip(clean, width)
    tail = width - head - 1
    return clean[:head] + "…" + clean[-tail:]


def verbosity_hint(report: Report) -> str | None:
    """What to do when the inputs show no compilation at all, in the words of the
    frameworks the inputs were detected as (every known framework when none was)."""
    from recompile_doctor.parsers import how_to_log

    if report.summary.compilations or not report.inputs:
        return None
    advice = how_to_log(i.format for i in report.inputs)
    if report.parse.recognized == 0:
        return (
            "No line of these inputs is a compile message of a framework recompile-doctor "
            f"reads. {advice}"
        )
    return f"No compilation was found. {advice}"
