"""Renderers for a diff result (``recompile-doctor diff``): text, markdown, JSON and HTML.

The causes come first, one line each; then a compact old -> new view of the key instructions
behind each cause (constants abbreviated, with the count of elements that differ).
"""

from __future__ import annotations

import json
from collections.abc import Callable

from recompile_doctor.differ.result import Change, DiffResult, ModuleDiff
from recompile_doctor.wording import plural

KEY_CHANGES_PER_CAUSE = 5


def _extra_note(m: ModuleDiff) -> str:
    """Why A or B is on both sides of this comparison (empty for a comparison across)."""
    if m.within is None:
        return ""
    side = m.within.upper()
    return (
        f"extra compilation in {side}: {side} compiled this module more often than "
        f"{'B' if side == 'A' else 'A'}; compared with its previous compilation in {side}"
    )


def _summary(res: DiffResult) -> str:
    compared = res.compared
    differ = sum(1 for m in compared if not m.equivalent)
    parts = [
        f"{plural(len(compared), 'module')} compared: {differ} "
        f"{'differs' if differ == 1 else 'differ'}, {len(compared) - differ} equivalent"
    ]
    for side in ("a", "b"):
        extra = res.extra(side)
        if extra:
            changed = sum(1 for m in extra if not m.equivalent)
            parts.append(
                f"{plural(len(extra), 'extra compilation')} in {side.upper()} "
                f"({changed} with a change against the previous one)"
            )
    if res.unpaired_a:
        parts.append(f"only in A: {', '.join(res.unpaired_a)}")
    if res.unpaired_b:
        parts.append(f"only in B: {', '.join(res.unpaired_b)}")
    return "; ".join(parts)


def _key_changes(m: ModuleDiff, rule: str) -> tuple[list[Change], int]:
    mine = [c for c in m.changes if c.rule == rule]
    total = sum(
        v
        for k, v in m.stats.items()
        if k.startswith("changes.") and k[8:] in {c.kind for c in mine}
    )
    return mine[:KEY_CHANGES_PER_CAUSE], max(total, len(mine))


def _names(c: Change) -> str:
    a = c.a.instruction if c.a else "-"
    b = c.b.instruction if c.b else "-"
    return a if a == b else f"{a} → {b}"


def _change_line(c: Change) -> str:
    where = f"  ({c.op_name})" if c.op_name else ""
    return f"{c.kind:<22}{_names(c):<34} {c.detail}{where}"


def render_text(res: DiffResult, color: bool = False) -> str:
    bold, red, green, reset = ("\x1b[1m", "\x1b[31m", "\x1b[32m", "\x1b[0m") if color else ("",) * 4
    out: list[str] = []
    for m in res.modules:
        if m.equivalent:
            out.append(
                f"{bold}{m.name}{reset}: {green}equivalent{reset} (no difference that "
                "can cause a recompile)"
            )
        else:
            out.append(f"{bold}{m.name}{reset}: {red}{', '.join(m.causes)}{reset}")
        if m.within is not None:
            out.append(f"  ({_extra_note(m)})")
        for cause in m.explanations:
            out.append(f"  {cause.rule}: {cause.message}")
            out.append(f"    what to change: {cause.advice}")
        for note in m.notes:
            out.append(f"  note{f' ({note.rule})' if note.rule else ''}: {note.message}")
        out.append(f"    a: {m.a_path}")
        out.append(f"    b: {m.b_path}")
        if m.settings:
            out.append("  settings beside the HLO (old → new):")
            out.extend(f"    {c.file:<16}{c.text}" for c in m.settings)
        for cause in m.explanations:
            shown, total = _key_changes(m, cause.rule)
            if not shown:
                continue
            out.append(f"  [{cause.rule}] key instructions (old → new):")
            out.extend(f"    {_change_line(c)}" for c in shown)
            if total > len(shown):
                out.append(f"    … {total - len(shown)} more")
        out.append("")
    out.append(_summary(res))
    return "\n".join(out) + "\n"


def _md(s: str) -> str:
    return s.replace("|", "\\|").replace("\n", " ")


def render_markdown(res: DiffResult) -> str:
    out = [f"# recompile-doctor diff: `{res.a}` → `{res.b}`", "", _summary(res), ""]
    for m in res.modules:
        verdict = "equivalent" if m.equivalent else ", ".join(f"`{c}`" for c in m.causes)
        out += [f"## `{m.name}`: {verdict}", ""]
        if m.within is not None:
            out += [f"_{_extra_note(m)}_", ""]
        out += [f"- a: `{m.a_path}`", f"- b: `{m.b_path}`"]
        for cause in m.explanations:
            out.append(f"- **{cause.rule}**: {_md(cause.message)}")
            out.append(f"  - what to change: {_md(cause.advice)}")
        out += [f"- _note{f' ({n.rule})' if n.rule else ''}_: {_md(n.message)}" for n in m.notes]
        out.append("")
        if m.settings:
            out += ["| cause | file | field | old | new |", "|---|---|---|---|---|"]
            for st in m.settings:
                out.append(
                    f"| {st.rule} | {st.file} | `{_md(st.field)}` | {_md(st.old or '(unset)')} "
                    f"| {_md(st.new or '(unset)')} |"
                )
            out.append("")
        rows = [c for cause in m.explanations for c in _key_changes(m, cause.rule)[0]]
        if rows:
            out += ["| cause | change | old | new | detail |", "|---|---|---|---|---|"]
            for c in rows:
                a = f"`{_md(c.a.instruction)}`" if c.a else "—"
                b = f"`{_md(c.b.instruction)}`" if c.b else "—"
                detail = _md(c.detail) + (f" ({_md(c.op_name)})" if c.op_name else "")
                out.append(f"| {c.rule} | {c.kind} | {a} | {b} | {detail} |")
            out.append("")
    return "\n".join(out).rstrip("\n") + "\n"


def render_json(res: DiffResult) -> str:
    return json.dumps(res.to_json(), indent=2, ensure_ascii=False) + "\n"


def render_html(res: DiffResult) -> bytes:
    """The self-contained HTML page of the report family (causes, side-by-side changes)."""
    from recompile_doctor.reports.html import render_diff

    return render_diff(res)


RENDERERS: dict[str, Callable[[DiffResult], str | bytes]] = {
    "text": render_text,
    "markdown": render_markdown,
    "json": render_json,
    "html": render_html,
}


def render(res: DiffResult, fmt: str) -> str | bytes:
    return RENDERERS[fmt](res)
