"""Text rendering of ``cache ls`` (a table, newest first, and totals) and ``cache prune``."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

import click

from recompile_doctor.cache import CacheEntry, CacheIndex
from recompile_doctor.cache_prune import PrunePlan, Selected
from recompile_doctor.reports.durations import fmt_bytes
from recompile_doctor.reports.messages import clip
from recompile_doctor.wording import plural

Style = Callable[..., str]

VLOG_HINT = "run with TF_CPP_VMODULE=poplar_compiler=1 to log cache loads and misses"


def fmt_age(seconds: float) -> str:
    if seconds < 0:
        return "future"
    for limit, div, unit in ((60, 1, "s"), (3600, 60, "m"), (86400, 3600, "h"),
                             (365 * 86400, 86400, "d")):  # fmt: skip
        if seconds < limit:
            return f"{int(seconds // div)}{unit}"
    return f"{int(seconds // (365 * 86400))}y"


def _when(e: CacheEntry) -> str:
    return datetime.fromtimestamp(e.mtime, UTC).strftime("%Y-%m-%d %H:%M")


def _styler(color: bool) -> Style:
    def st(text: str, **kw: object) -> str:
        return click.style(text, **kw) if color else text  # type: ignore[arg-type]

    return st


def render_ls(idx: CacheIndex, now: float, color: bool = False, width: int = 100) -> str:
    """The listing: one row per entry, newest first, then the totals."""
    st = _styler(color)
    n = len(idx.entries)
    out = [st(f"Executable cache {idx.dir}: {plural(n, 'entry', 'entries')}, "
              f"{fmt_bytes(idx.total_bytes)}", bold=True)]  # fmt: skip
    if not n:
        out.append("  no <hash>.poplar_exec files in this folder")
    many_logs = len(idx.logs) > 1
    if n:
        hw = max(len(e.hash) for e in idx.entries)
        head = f"  {'HASH':<{hw}}  {'SIZE':>9}  {'MODIFIED (UTC)':<16}  {'AGE':>5}  LOCK  USES"
        head += "  LOGS" if many_logs else ""
        out.append(head + "  MODULES")
        for e in idx.entries:
            row = (f"  {e.hash:<{hw}}  {fmt_bytes(e.bytes):>9}  {_when(e):<16}  "
                   f"{fmt_age(now - e.mtime):>5}  {'yes' if e.locked else '-':<4}  "
                   f"{(str(e.uses) if idx.logs else '-'):>4}")  # fmt: skip
            if many_logs:
                nums = ",".join(str(idx.logs.index(g) + 1) for g in e.logs) or "-"
                row += f"  {nums:<4}"
            mods = ", ".join(e.modules) or "-"
            row += "  " + clip(mods, max(width - len(row) - 2, 24))
            if e.locked:
                row = st(row, fg="yellow")
            elif idx.logs and e.uses == 0:
                row = st(row, dim=True)
            out.append(row)
    out.extend(_ls_footer(idx))
    return "\n".join(out) + "\n"


def _ls_footer(idx: CacheIndex) -> list[str]:
    out: list[str] = []
    unref = [e for e in idx.entries if e.uses == 0]
    locked = sum(1 for e in idx.entries if e.locked)
    if locked:
        out.append(
            f"{plural(locked, 'entry', 'entries')} locked (.compile_lock/.read_lock: in use now)"
        )
    if not idx.logs:
        out.append(
            "no --log given: which modules used each entry is unknown, so every entry counts "
            f"as unreferenced ({fmt_bytes(idx.unreferenced_bytes)})"
        )
        return out
    if len(idx.logs) > 1:
        out.append("logs: " + ", ".join(f"{i}={g}" for i, g in enumerate(idx.logs, 1)))
    out.append(
        f"unreferenced by the given logs: {fmt_bytes(idx.unreferenced_bytes)} in "
        f"{plural(len(unref), 'entry', 'entries')}"
    )
    for g in idx.logs_without_cache_lines:
        out.append(f"note: {g} has no executable-cache lines ({VLOG_HINT})")
    return out


def _sel_row(s: Selected, why: bool = False) -> str:
    e = s.entry
    text = f"  {e.file}  {fmt_bytes(e.bytes):>9}  {_when(s.entry)}  {', '.join(s.reasons)}"
    return text + (f"  ({s.why_skipped})" if why and s.why_skipped else "")


def render_prune(p: PrunePlan, color: bool = False) -> str:
    """The plan (dry run) or what was done (``--yes``)."""
    st = _styler(color)
    out: list[str] = []
    if p.applied:
        out.append(st(f"Removed {plural(len(p.removed), 'entry', 'entries')} from {p.dir}, freed "
                      f"{fmt_bytes(p.freed_bytes)}", bold=True))  # fmt: skip
        out.extend(_sel_row(s) for s in p.removed)
    elif p.remove:
        out.append(st(f"Dry run: would remove {plural(len(p.remove), 'entry', 'entries')} from {p.dir}, "
                      f"freeing {fmt_bytes(p.bytes_to_free)} (add --yes to delete)", bold=True))  # fmt: skip
        out.extend(_sel_row(s) for s in p.remove)
    else:
        out.append(f"Nothing to remove from {p.dir}.")
    if p.skipped:
        out.append(
            st(
                f"Skipped {plural(len(p.skipped), 'entry', 'entries')} (left in place):",
                fg="yellow",
            )
        )
        out.extend(_sel_row(s, why=True) for s in p.skipped)
    out.append(f"Kept {plural(p.kept, 'entry', 'entries')} that no criterion selects.")
    return "\n".join(out) + "\n"
