"""The fleet roll-up as text, Markdown, JSON or one self-contained HTML page."""

from __future__ import annotations

import html
import io
import json
from collections.abc import Sequence
from typing import Any

Rollup = dict[str, Any]


def _secs(v: Any) -> str:
    return f"{float(v or 0):.1f} s"


def _ranks(r: dict[str, Any]) -> str:
    return ", ".join(f"rank {x['rank']}: {x['compilations']}" for x in r["ranks"]) or "-"


def _sections(data: Rollup) -> list[tuple[str, list[str], list[list[str]]]]:
    """(title, header, rows) of every table of the report, as display strings."""
    runs = [
        [
            r["run_path"],
            r["host"] or "-",
            r["date"] or "-",
            _secs(r["wasted_seconds"]),
            str(r["recompilations"]),
            r["top_cause"] or "-",
            r["analyze"],
        ]
        for r in data["runs"]
    ]
    causes = [
        [
            c["rule"],
            c["severity"],
            _secs(c["wasted_seconds"]),
            str(c["runs"]),
            str(c["recompilations"]),
        ]
        for c in data["causes_by_cost"]
    ]
    by_runs = [
        [c["rule"], str(c["runs"]), _secs(c["wasted_seconds"])] for c in data["causes_by_runs"]
    ]
    recurring = [
        [f["function"], f["rule"], str(f["runs"]), _secs(f["wasted_seconds"])]
        for f in data["recurring_functions"]
    ]
    first = [
        [
            f["rule"],
            f["first_date"],
            "yes" if f["regression"] else "no",
            str(f["runs_before"]),
            f"{f['runs_with_cause']}/{f['runs_since']}",
        ]
        for f in data["first_seen"]
    ]
    div = [[d["run_path"], _ranks(d)] for d in data["diverging_ranks"]]
    failed = [
        [f["run_path"], f["file"], f["status"], f["error"] or ""] for f in data["failed_files"]
    ]
    return [
        (
            "Runs by wasted time",
            ["run", "host", "date", "wasted", "recompiles", "top cause", "explain with"],
            runs,
        ),
        ("Causes by total cost", ["cause", "severity", "wasted", "runs", "recompiles"], causes),
        ("Causes by number of runs", ["cause", "runs", "wasted"], by_runs),
        (
            "Functions whose cause recurs across runs",
            ["function", "cause", "runs", "wasted"],
            recurring,
        ),
        (
            "When each cause first appeared",
            ["cause", "first seen", "regression", "runs before", "runs with it since"],
            first,
        ),
        ("Ranks that diverge", ["run", "compilations per rank"], div),
        ("Failed or partly read files", ["run", "file", "status", "error"], failed),
    ]


def _headline(data: Rollup) -> str:
    t = data["totals"]
    span = f"{t['first_date']} to {t['last_date']}" if t["first_date"] else "no runs"
    return (
        f"{t['runs']} runs ({t['files']} files, {t['failed_files']} failed, "
        f"{t['partial_files']} partly read), {span}: "
        f"{t['compilations']} compilations, {t['recompilations']} after warm-up, "
        f"{_secs(t['wasted_seconds'])} wasted; {t['runs_with_findings']} runs with findings."
    )


def _text_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]

    def fmt(cells: Sequence[str]) -> str:
        return "  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)).rstrip()

    return [fmt(header), fmt(["-" * w for w in widths]), *(fmt(r) for r in rows)]


def render_text(data: Rollup) -> str:
    out = ["recompile-doctor fleet report: " + data["folder"], _headline(data), ""]
    for title, header, rows in _sections(data):
        out.append(title)
        out.extend(_text_table(header, rows) if rows else ["(none)"])
        out.append("")
    return "\n".join(out)


def _md_cell(s: str) -> str:
    return s.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def render_markdown(data: Rollup) -> str:
    out = ["# recompile-doctor fleet report", "", _md_cell(_headline(data)), ""]
    for title, header, rows in _sections(data):
        out += [f"## {title}", ""]
        if not rows:
            out += ["(none)", ""]
            continue
        out.append("| " + " | ".join(header) + " |")
        out.append("|" + "---|" * len(header))
        out += ["| " + " | ".join(_md_cell(c) for c in r) + " |" for r in rows]
        out.append("")
    return "\n".join(out)


def render_json(data: Rollup) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n"


_CSS = """
body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#222}
table{border-collapse:collapse;margin:.5em 0 1.5em}
th,td{border:1px solid #ccc;padding:.25em .5em;text-align:left;vertical-align:top}
th{background:#f3f3f3} code{font-size:12px;word-break:break-all}
.none{color:#777}
"""


def _cost_plot(data: Rollup) -> str:
    """An inline SVG bar chart of wasted time by cause ('' when nothing was wasted)."""
    causes = [c for c in data["causes_by_cost"] if c["wasted_seconds"]][:12]
    if not causes:
        return ""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with matplotlib.rc_context({"svg.hashsalt": "fleet", "svg.fonttype": "none"}):
        fig, ax = plt.subplots(figsize=(7, 0.35 * len(causes) + 1))
        names = [c["rule"] for c in reversed(causes)]
        ax.barh(names, [c["wasted_seconds"] for c in reversed(causes)], color="#c0504d")
        ax.set_xlabel("wasted seconds (all runs)")
        fig.tight_layout()
        buf = io.StringIO()
        fig.savefig(buf, format="svg", metadata={"Date": None})
        plt.close(fig)
    svg = buf.getvalue()
    svg = svg[svg.index("<svg") :]
    start, end = svg.find("<metadata>"), svg.find("</metadata>")
    if start >= 0 and end > start:  # the RDF block names no one and loads nothing
        svg = svg[:start] + svg[end + len("</metadata>") :]
    return svg


def render_html(data: Rollup) -> bytes:
    e = html.escape
    parts = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
        "<title>recompile-doctor fleet report</title>",
        f"<style>{_CSS}</style></head><body>",
        "<h1>recompile-doctor fleet report</h1>",
        f"<p>{e(data['folder'])}</p><p>{e(_headline(data))}</p>",
    ]
    plot = _cost_plot(data)
    if plot:
        parts.append(f"<h2>Wasted time by cause</h2><figure>{plot}</figure>")
    for title, header, rows in _sections(data):
        parts.append(f"<h2>{e(title)}</h2>")
        if not rows:
            parts.append("<p class='none'>(none)</p>")
            continue
        parts.append("<table><tr>" + "".join(f"<th>{e(h)}</th>" for h in header) + "</tr>")
        for r in rows:
            cells = [
                f"<td><code>{e(c)}</code></td>" if h == "explain with" else f"<td>{e(c)}</td>"
                for h, c in zip(header, r, strict=True)
            ]
            parts.append("<tr>" + "".join(cells) + "</tr>")
        parts.append("</table>")
    parts.append("</body></html>\n")
    return "".join(parts).encode("utf-8")


def render(data: Rollup, fmt: str) -> str | bytes:
    if fmt == "html":
        return render_html(data)
    if fmt == "json":
        return render_json(data)
    if fmt == "markdown":
        return render_markdown(data)
    return render_text(data)
