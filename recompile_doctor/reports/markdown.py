"""Markdown rendering, for pull-request comments and issues (drawn from the report view)."""

from __future__ import annotations

from recompile_doctor.model import Report
from recompile_doctor.reports.durations import fmt_seconds
from recompile_doctor.reports.messages import clip
from recompile_doctor.reports.view import evidence_groups, report_view

MAX_FUNCTION_ROWS = 50


def _cell(text: str) -> str:
    return clip(text, 200).replace("|", "\\|")


def _code(text: str) -> str:
    t = clip(text, 240)
    return f"`` {t} ``" if "`" in t else f"`{t}`"


def _code_cell(text: str) -> str:
    # GitHub tables split on "|" even inside code spans unless it is escaped
    return _code(text).replace("|", "\\|")


def render(report: Report) -> str:
    v = report_view(report)
    out = ["# recompile-doctor report", "", f"**{v.headline.line}**", "", v.parse_health]
    if v.cache_line:
        out += ["", v.cache_line]
    if v.hint:
        out += ["", f"> {v.hint}"]
    if v.findings:
        out += ["", "## Findings"]
    for f in v.findings:
        cons = f" (Consideration {f.consideration})" if f.consideration is not None else ""
        cost = f"; **wasted:** {fmt_seconds(f.wasted_seconds)}" if f.wasted_seconds else ""
        out += [
            "",
            f"### {f.severity.upper()} `{f.rule}`: {f.title}{cons}",
            "",
            f"- **Count:** {f.count}{cost}",
        ]
        if f.functions:
            label = "Functions" if len(f.functions) > 1 else "Function"
            out.append(f"- **{label}:** " + ", ".join(_code(m) for m in f.functions[:10]))
        out.append(f"- **Why:** {f.why}")
        if f.changes:
            out.append("- **Changed:** " + "; ".join(_code(c.text()) for c in f.changes[:10]))
        out += [f"- **Fix:** {f.advice}", "", "Evidence:", ""]
        for e, alike in evidence_groups(f.evidence):
            out.append(f"- `{e.location}` {_code(e.message)}")
            if alike:
                lines = ", ".join(str(o.line) for o in alike[:8]) + (
                    ", …" if len(alike) > 8 else ""
                )
                out.append(f"  - … {len(alike)} more like it (lines {lines})")
        diff = f.finding.diff
        if diff:
            out += ["", "| change | instruction | old → new | op_name |", "|---|---|---|---|"]
            for d in diff[:10]:
                name = d.a_instruction or d.b_instruction or "?"
                change = d.detail or f"{d.a_text or '-'} → {d.b_text or '-'}"
                out.append(
                    f"| {_cell(d.kind)} | {_code_cell(name)} | {_code_cell(change)} | "
                    f"{_code_cell(d.op_name) if d.op_name else ''} |"
                )
    for x in v.crossruns:
        out += [
            "",
            "## Across runs",
            "",
            f"Run B ({_code(x.run_b or '?')}) did not reuse what run A ({_code(x.run_a or '?')}) "
            "compiled; the part of the cache key that differs:",
            "",
            "| component | run A | run B | rule |",
            "|---|---|---|---|",
        ]
        for cr in x.rows:
            out.append(
                f"| {_code_cell(cr.component)} | {_code_cell(cr.a or '(unset)')} | "
                f"**{_code_cell(cr.b or '(unset)')}** | `{cr.rule}` |"
            )
    rows = v.functions
    if rows:
        out += [
            "",
            "## Functions",
            "",
            "| function | framework | compilations | graphs | after warm-up | compiling | cache |",
            "|---|---|---:|---:|---:|---:|---|",
        ]
        for r in rows[:MAX_FUNCTION_ROWS]:
            secs = fmt_seconds(r.compile_seconds) if r.has_durations else "–"
            out.append(
                f"| {_code_cell(v.row_name(r))} | {r.framework} | {r.compilations} | {r.graphs} "
                f"| {r.after_warmup} | {secs} | {r.cache_text} |"
            )
        if len(rows) > MAX_FUNCTION_ROWS:
            out.append(f"\n… and {len(rows) - MAX_FUNCTION_ROWS} more functions.")
    return "\n".join(out) + "\n"
