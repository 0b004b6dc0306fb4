"""HTML report of a 10,000-compilation run: page size, render time, browser open time.

Budget (the issue): under 5 MB, opens in under 2 s.  Prints figures and ratios -- against
the budget and against the saved JSON report of the same run as a baseline -- never asserts.

    .venv/bin/python benchmarks/bench_html.py [--compilations N] [--modules M] [--out FILE]

The browser figure needs the ``playwright`` package and the system's Chromium
(``/usr/bin/chromium``, or ``RD_CHROMIUM``); without them it is skipped.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

from recompile_doctor.model import (
    Compilation,
    DiffEvidence,
    Event,
    Evidence,
    Finding,
    InputInfo,
    ParseStats,
    Report,
    Summary,
    sort_findings,
)
from recompile_doctor.reports.html import render
from recompile_doctor.rules import rule

BUDGET_BYTES = 5 * 1024 * 1024
BUDGET_OPEN_S = 2.0
TF = "tensorflow/compiler/plugin/poplar/driver"


def synthetic_run(n: int, modules: int) -> Report:
    """``n`` compilations over ``modules`` modules, an executable load after each, the first
    compilation of each module warm-up, and one finding per cause with all its evidence."""
    comps: list[Compilation] = []
    events: list[Event] = []
    t = 0.0
    line = 1
    for i in range(n):
        m = i % modules
        mod = f"a_inference_step_{m}__XlaMustCompile_true_config_proto_31755809947661_.{m}"
        warm = i < modules
        dur = 0.4 + (i * 7919 % 97) / 20.0
        h = f"0x{(i * 2654435761) % (1 << 60):x}"
        text = (
            f"2023-04-26 14:42:{t % 60:09.6f}: I {TF}/poplar_compiler.cc:1487] "
            f"Begin XLA compilation: {mod}  (Hash: {h}) for ordinal  0"
        )
        cache = "miss" if warm or i % 3 else "hit"
        comps.append(
            Compilation(
                i,
                mod,
                h,
                "run.log",
                line,
                round(t, 3),
                dur,
                cache,
                warm,
                None,
                line + 40,
                text=text,
            )  # type: ignore[arg-type]
        )
        t += dur
        events.append(
            Event(
                "phase-end",
                "run.log",
                line + 41,
                round(t, 3),
                "Ending phase: Loading executable (duration 607 ms; diff RSS: 0.586426 MB)",
                module=mod,
                detail={"name": "Loading executable", "duration_ms": 607},
            )
        )
        t += 0.7
        line += 45
    late = [c for c in comps if not c.warmup]
    findings = []
    for k, rid in enumerate(("recompile-after-warmup", "executable-switching", "constant-changed")):
        r = rule(rid)
        picked = late[k::3]
        findings.append(
            Finding(
                rid,
                r.severity,
                r.consideration,
                r.title,
                r.why,
                r.advice,
                tuple(sorted({c.module for c in picked})),
                len(picked),
                sum(c.duration_s or 0 for c in picked),
                tuple(
                    Evidence(c.source, c.line, c.text, ("before 1", "before 2"), ("after 1",))
                    for c in picked
                ),
                tuple(
                    DiffEvidence(
                        "constant",
                        c.module,
                        "%constant.1",
                        "%constant.1 = f32[] constant(0.001)",
                        "%constant.1",
                        "%constant.1 = f32[] constant(0.0005)",
                    )
                    for c in picked[:500]
                )
                if rid == "constant-changed"
                else (),
            )
        )
    return Report(
        inputs=(InputInfo("run.log", "poplar", line, line * 110),),
        parse=ParseStats(len(comps) + len(events), line - len(comps) - len(events), 0),
        summary=Summary(
            compilations=len(comps),
            cache_hits=sum(c.cache == "hit" for c in comps),
            cache_misses=sum(c.cache == "miss" for c in comps),
            loads=len(events),
            distinct_graphs=len({c.hash for c in comps}),
            recompilations_after_warmup=len(late),
            compile_seconds=sum(c.duration_s or 0 for c in comps if c.compiled),
            load_seconds=0.607 * len(events),
            wasted_seconds=sum(f.wasted_seconds for f in findings),
        ),
        compilations=tuple(comps),
        events=tuple(events),
        findings=sort_findings(findings),
    )


def open_seconds(path: Path) -> float | None:
    """Seconds from navigation start to the end of the load event in headless Chromium."""
    chromium = os.environ.get("RD_CHROMIUM", "/usr/bin/chromium")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return None
    if not os.path.isfile(chromium):
        return None
    args = [
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--no-first-run",
    ]
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=chromium, headless=True, args=args)
        try:
            page = b.new_page(viewport={"width": 1280, "height": 900})
            best = float("inf")
            for _ in range(3):
                page.goto(path.resolve().as_uri(), wait_until="load")
                ms = page.evaluate(
                    "() => { const n = performance.getEntriesByType('navigation')[0];"
                    " return n.loadEventEnd - n.startTime; }"
                )
                best = min(best, float(ms) / 1000.0)
            return best
        finally:
            b.close()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--compilations", type=int, default=10_000)
    ap.add_argument("--modules", type=int, default=120)
    ap.add_argument("--out", type=Path, default=None, help="keep the page here")
    args = ap.parse_args(argv)

    report = synthetic_run(args.compilations, args.modules)
    json_bytes = len(report.dumps().encode("utf-8"))
    t0 = time.perf_counter()
    page = render(report).encode("utf-8")
    render_s = time.perf_counter() - t0
    out = args.out or Path(tempfile.mkdtemp(prefix="rd-bench-")) / "report.html"
    out.write_bytes(page)

    print(f"compilations        {args.compilations:,} over {args.modules:,} modules")
    print(
        f"html size           {len(page) / 1e6:.2f} MB  ({len(page) / BUDGET_BYTES:.0%} of the 5 MB budget)"
    )
    print(
        f"json report size    {json_bytes / 1e6:.2f} MB  (html/json = {len(page) / json_bytes:.2f})"
    )
    print(f"render time         {render_s:.2f} s")
    opened = open_seconds(out)
    if opened is None:
        print("browser open time   skipped (no playwright or no Chromium)")
    else:
        print(
            f"browser open time   {opened:.2f} s  ({opened / BUDGET_OPEN_S:.0%} of the 2 s budget)"
        )
    print(f"page                {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
