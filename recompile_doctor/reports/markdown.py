"""Markdown rendering, for pull-request comments and issues."""

from __future__ import annotations

from recompile_doctor.model import Report
from recompile_doctor.reports._summary import (
    clip,
    headline,
    module_rows,
    parse_health,
    verbosity_hint,
)


def _cell(text: str) -> str:
    return clip(text, 200).replace("|", "\\|")


def _code(text: str) -> str:
    t = clip(text, 240)
    fence = "``" if "`" in t else "`"
    return f"{fence} {t} {fence}" if fence == "``" else f"`{t}`"


def _code_cell(text: str) -> str:
    # GitHub tables split on "|" even inside code spans unless it is escaped
    return _code(text).replace("|", "\\|")


def render(report: Report) -> str:
    out = ["# recompile-doctor report", "", f"**{headline(report)}**", "", parse_health(report)]
    hint = verbosity_hint(report)
    if hint:
        out += ["", f"> {hint}"]
    if report.findings:
        out += ["", "## Findings"]
    for f in report.findings:
        cons = f" (Consideration {f.consideration})" if f.consideration is not None else ""
        out += [
            "",
            f"### {f.severity.upper()} `{f.rule}`: {f.title}{cons}",
            "",
            f"- **Count:** {f.count}; **wasted:** {f.wasted_seconds:.1f} s",
        ]
        if f.modules:
            out.append("- **Modules:** " + ", ".join(_code(m) for m in f.modules[:10]))
        out += [f"- **Why:** {f.detail}", f"- **Fix:** {f.advice}", "", "Evidence:", ""]
        for e in f.evidence:
            out.append(f"- `{e.source}:{e.line}` {_code(e.text.strip())}")
        if f.diff:
            out += ["", "| change | instruction | old → new | op_name |", "|---|---|---|---|"]
            for d in f.diff[:10]:
                name = d.a_instruction or d.b_instruction or "?"
                change = d.detail or f"{d.a_text or '-'} → {d.b_text or '-'}"
                out.append(
                    f"| {_cell(d.kind)} | {_code_cell(name)} | {_code_cell(change)} | "
                    f"{_code_cell(d.op_name) if d.op_name else ''} |"
                )
    rows = module_rows(report)
    if rows:
        out += [
            "",
            "## Modules",
            "",
            "| module | compilations | hashes | after warm-up | compile s | cache |",
            "|---|---:|---:|---:|---:|---|",
        ]
        for r in rows[:50]:
            out.append(
                f"| {_code_cell(r.module)} | {r.compilations} | {r.hashes} | {r.after_warmup} | "
                f"{r.compile_s:.1f} | {r.cache} |"
            )
        if len(rows) > 50:
            out.append(f"\n… and {len(rows) - 50} more modules.")
    return "\n".join(out) + "\n"
