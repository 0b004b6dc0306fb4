"""Terminal rendering: a one-line summary, findings by severity, a compact module table."""

from __future__ import annotations

import click

from recompile_doctor.model import Finding, Report
from recompile_doctor.reports._summary import (
    clip,
    clip_middle,
    headline,
    module_rows,
    parse_health,
    verbosity_hint,
)
from recompile_doctor.timeline.names import function_key

_STYLE = {"error": "red", "warning": "yellow", "info": "cyan"}
MAX_MODULE_ROWS = 20


def render(report: Report, color: bool = False, width: int = 100) -> str:
    """The text report (no colour unless ``color``)."""

    def st(text: str, **kw: object) -> str:
        return click.style(text, **kw) if color else text  # type: ignore[arg-type]

    out: list[str] = [st("recompile-doctor: " + headline(report), bold=True), parse_health(report)]
    hint = verbosity_hint(report)
    if hint:
        out.append("hint: " + hint)
    for f in report.findings:
        out.append("")
        out.extend(_finding(f, st, width))
    rows = module_rows(report)
    if rows:
        out.append("")
        out.append(st("Modules", bold=True))
        name_w = min(max(len(r.module) for r in rows), 48)
        out.append(
            f"  {'module':<{name_w}}  {'compiles':>8}  {'hashes':>6}  {'after warm-up':>13}  "
            f"{'compile s':>9}  cache"
        )
        for r in rows[:MAX_MODULE_ROWS]:
            out.append(
                f"  {clip(r.module, name_w):<{name_w}}  {r.compilations:>8}  {r.hashes:>6}  "
                f"{r.after_warmup:>13}  {r.compile_s:>9.1f}  {r.cache}"
            )
        if len(rows) > MAX_MODULE_ROWS:
            out.append(f"  … and {len(rows) - MAX_MODULE_ROWS} more modules (see --format json)")
    return "\n".join(out) + "\n"


def _finding(f: Finding, st: object, width: int) -> list[str]:
    style = st  # a callable(text, **kw)
    sev = f.severity.upper()
    head = f"{sev:<7} {f.rule}: {f.title}"
    if f.consideration is not None:
        head += f" (Consideration {f.consideration})"
    meta = f"×{f.count}"
    if f.wasted_seconds:
        meta += f", {f.wasted_seconds:.1f} s wasted"
    lines = [
        style(head, fg=_STYLE[f.severity], bold=True) + f"  {meta}",  # type: ignore[operator]
    ]
    if f.modules:
        # TF appends per-trace ids to long names; the function name is what a user knows
        names = list(dict.fromkeys(function_key(m) for m in f.modules))
        mods = ", ".join(names[:4]) + (f" (+{len(names) - 4})" if len(names) > 4 else "")
        lines.append(f"  modules:  {clip(mods, width - 12)}")
    lines.append(f"  why:      {f.detail}")
    lines.append(f"  fix:      {f.advice}")
    lines.append("  evidence:")
    for e in f.evidence:
        loc = f"{e.source}:{e.line}"
        lines.append(f"    {loc}: {clip_middle(e.text.strip(), max(width - len(loc) - 6, 40))}")
    if f.diff:
        lines.append("  changes (old → new):")
    for d in f.diff[:6]:
        name = d.a_instruction or d.b_instruction or "?"
        where = f"  ({d.op_name})" if d.op_name else ""
        if d.detail:
            change = clip(d.detail, width - 40)
        else:
            change = f"{clip(d.a_text or '-', 40)} → {clip(d.b_text or '-', 40)}"
        lines.append(clip(f"    {d.kind:<16} {name:<22} {change}{where}", width + 40))
    if len(f.diff) > 6:
        lines.append(f"    … {len(f.diff) - 6} more")
    return lines
