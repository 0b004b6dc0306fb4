"""Terminal rendering: a one-line summary, findings worst first, a compact function table.

Everything is drawn from :func:`recompile_doctor.reports.view.report_view` and fitted to the
terminal's width (``COLUMNS``): log lines show their message without the logger's prefix and
wrap instead of being cut; info findings take one line each unless ``verbose``.
"""

from __future__ import annotations

import os
import sys
from collections import Counter
from collections.abc import Callable

import click

from recompile_doctor.model import Report
from recompile_doctor.reports.durations import fmt_seconds
from recompile_doctor.reports.messages import clip, log_message, printable, wrap
from recompile_doctor.reports.view import (
    FindingView,
    ReportView,
    clip_pair,
    evidence_groups,
    report_view,
)

_STYLE = {"error": "red", "warning": "yellow", "info": "cyan"}
MAX_FUNCTION_ROWS = 20
#: evidence lines listed per finding in text (the JSON report has them all)
MAX_EVIDENCE = 6
#: instruction changes listed per finding
MAX_DIFF = 6
#: narrowest layout, however narrow the terminal
MIN_WIDTH = 60

Style = Callable[..., str]


def terminal_width() -> int:
    """The terminal's width (``COLUMNS`` wins; 100 when output is not a terminal), at least
    :data:`MIN_WIDTH`: the columns ``shutil.get_terminal_size((100, 24))`` gives, without
    importing ``shutil`` (and with it ``bz2`` and ``lzma``: 2.4 ms of a small log's command)."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    out = sys.__stdout__
    if columns <= 0 and out is not None:
        try:
            columns = os.get_terminal_size(out.fileno()).columns
        except (AttributeError, ValueError, OSError):
            columns = 0
    return max(columns or 100, MIN_WIDTH)


def render(
    report: Report, color: bool = False, width: int | None = None, verbose: bool = False
) -> str:
    """The text report (no colour unless ``color``; ``width`` defaults to the terminal's)."""
    w = max(width if width is not None else terminal_width(), MIN_WIDTH)
    v = report_view(report)

    def st(text: str, **kw: object) -> str:
        return click.style(text, **kw) if color else text  # type: ignore[arg-type]

    out: list[str] = [st("recompile-doctor: " + v.headline.line, bold=True), v.parse_health]
    if v.cache_line:
        out.append(clip(v.cache_line, w))
    if v.hint:
        out += wrap("hint: " + v.hint, w, "      ", max_lines=12)
    for f in v.findings:
        if f.severity == "info" and not verbose:
            continue
        out.append("")
        out.extend(_finding(f, st, w))
    if v.infos and not verbose:
        out.append("")
        for f in v.infos:
            names = f" ({', '.join(f.functions[:3])})" if f.functions else ""
            out.append(
                clip(f"{st('INFO', fg='cyan', bold=True)}    {f.rule}: {f.title}{names}", w + 20)
            )
        out.append("  (-v shows the details of info findings)")
    out.extend(_crossruns(v, st, w))
    out.extend(_functions(v, st, w))
    return "\n".join(out) + "\n"


def _crossruns(v: ReportView, st: Style, w: int) -> list[str]:
    """Across runs: the two runs and the part of the cache key that differs, side by side."""
    out: list[str] = []
    for x in v.crossruns:
        out += ["", st("Across runs", bold=True)]
        out.append(clip(f"  run A: {x.run_a or '?'}", w))
        out.append(clip(f"  run B: {x.run_b or '?'} (did not reuse what run A compiled)", w))
        cw = min(max((len(r.component) for r in x.rows), default=9), 40)
        vw = max((w - cw - 10) // 2, 12)
        out.append(f"  {'component':<{cw}}  {'run A':<{vw}}  run B")
        for r in x.rows:
            a, b = clip_pair(r.a or "(unset)", r.b or "(unset)", vw)
            out.append(f"  {clip(r.component, cw):<{cw}}  {a:<{vw}}  {st(b, fg='yellow')}")
    return out


def _field(label: str, text: str, w: int, max_lines: int = 8) -> list[str]:
    pad = " " * 13
    lines = wrap(text, w, pad, max_lines=max_lines)
    return [f"  {label + ':':<11}{lines[0]}"] + [pad + x for x in lines[1:]]


def why_lines(why: str, w: int) -> list[str]:
    """The finding's "why", compact: one line when it fits, else its head then one line per
    function clause, identical clauses (``first: X``, ``last: X``) collapsed with a count."""
    if len(why) <= w - 12:
        return _field("why", why, w)
    head, sep, rest = why.partition(": ")
    if not sep or len(head) > 60 or "; " not in rest:
        return _field("why", why, w)
    clauses = [c.strip().rstrip(".") for c in rest.split("; ") if c.strip()]
    counts: Counter[str] = Counter()
    order: list[str] = []
    for c in clauses:
        key = c.removeprefix("first: ").removeprefix("last: ")
        if key not in counts:
            order.append(c)
        counts[key] += 1
    out = _field("why", head + ":", w)
    for c in order:
        n = counts[c.removeprefix("first: ").removeprefix("last: ")]
        text = c.removeprefix("first: ").removeprefix("last: ") if n > 1 else c
        # "first: ..." and "last: ..." belong to the clause above them
        pad = " " * (17 if text.startswith(("first: ", "last: ")) else 15)
        lines = wrap(text + (f" (×{n})" if n > 1 else ""), w, pad, max_lines=3)
        out.append(pad[:-2] + "- " + lines[0])
        out += [pad + x for x in lines[1:]]
    return out


def _finding(f: FindingView, st: Style, w: int) -> list[str]:
    sev = f.severity.upper()
    head = f"{sev:<7} {f.rule}: {f.title}"
    if f.consideration is not None:
        head += f" (Consideration {f.consideration})"
    meta = f"×{f.count}" + (f", {f.cost}" if f.cost else "")
    lines = [st(head, fg=_STYLE[f.severity], bold=True) + f"  {meta}"]
    if f.functions:
        names = ", ".join(f.functions[:4]) + (
            f" (+{len(f.functions) - 4})" if len(f.functions) > 4 else ""
        )
        label = "functions:" if len(f.functions) > 1 else "function:"
        lines.append(f"  {label:<11}{clip(names, w - 13)}")
    lines += why_lines(f.why, w)
    if f.changes:
        lines.append("  changed:")
        for c in f.changes[:MAX_DIFF]:
            who = f"{c.function}: " if len(f.functions) > 1 and c.function else ""
            lines.append(clip(f"    {who}{c.text(w - 6 - len(who))}", w))
        if len(f.changes) > MAX_DIFF:
            lines.append(f"    … {len(f.changes) - MAX_DIFF} more")
    lines += _field("fix", f.advice, w)
    if f.evidence:
        lines.append("  evidence:")
    groups = evidence_groups(f.evidence)
    for first, others in groups[:MAX_EVIDENCE]:
        e = first
        loc = f"{e.location}: "
        text_lines = e.evidence.text.strip().splitlines() or [""]
        msg = " ⏎ ".join(log_message(t) for t in text_lines if t.strip())
        pad = " " * 6
        wrapped = wrap(loc + msg, w, pad, max_lines=4)
        lines.append("    " + wrapped[0])
        lines += [pad + x for x in wrapped[1:]]
        if others:
            where = ", ".join(str(o.line) for o in others[:8]) + (", …" if len(others) > 8 else "")
            lines.append(f"      … {len(others)} more like it (lines {where})")
    if len(groups) > MAX_EVIDENCE:
        rest = sum(1 + len(o) for _, o in groups[MAX_EVIDENCE:])
        lines.append(f"    … {rest} more lines (--format json lists all)")
    diff = f.finding.diff
    if diff:
        lines.append("  instructions (old → new):")
    for d in diff[:MAX_DIFF]:
        name = d.a_instruction or d.b_instruction or "?"
        where = f"  ({d.op_name})" if d.op_name else ""
        change = d.detail or f"{d.a_text or '-'} → {d.b_text or '-'}"
        lines.append(clip(f"    {d.kind:<16} {name:<22} {change}{where}", w))
    if len(diff) > MAX_DIFF:
        lines.append(f"    … {len(diff) - MAX_DIFF} more")
    return lines


def _functions(v: ReportView, st: Style, w: int) -> list[str]:
    rows = v.functions
    if not rows:
        return []
    names = [printable(v.row_name(r)) for r in rows[:MAX_FUNCTION_ROWS]]
    fw = v.several_frameworks
    fixed = 8 + 8 + 13 + 11 + (12 if fw else 0) + 2
    cache_w = max(len(r.cache_text) for r in rows[:MAX_FUNCTION_ROWS])
    name_w = max(min(max(len(n) for n in names), w - fixed - cache_w - 4, 48), 12)
    out = ["", st("Functions", bold=True)]
    head = f"  {'function':<{name_w}}"
    if fw:
        head += f"  {'framework':<10}"
    head += f"  {'compiles':>8}  {'graphs':>6}  {'after warm-up':>13}  {'compiling':>9}  cache"
    out.append(head)
    for r, name in zip(rows[:MAX_FUNCTION_ROWS], names, strict=False):
        secs = fmt_seconds(r.compile_seconds) if r.has_durations else "–"
        line = f"  {clip(name, name_w):<{name_w}}"
        if fw:
            line += f"  {r.framework:<10}"
        line += (
            f"  {r.compilations:>8}  {r.graphs:>6}  {r.after_warmup:>13}  {secs:>9}  {r.cache_text}"
        )
        out.append(line)
    if len(rows) > MAX_FUNCTION_ROWS:
        out.append(f"  … and {len(rows) - MAX_FUNCTION_ROWS} more functions (see --format json)")
    return out
