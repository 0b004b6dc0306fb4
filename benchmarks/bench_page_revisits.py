"""The HTML page's per-module steps on a run of many modules, each compiled again: their
numbers and sums in temporary files (as a long run has them) against in memory.

Past 200,000 rows the page keeps its per-module and per-compilation numbers in spilled
columns (four chunks of 8,192 numbers held): a run of new modules reads them in order, a
run that compiles old modules again at random reads a chunk back for each.  This times the
steps that index them by module (the numbering, the function rows, the lanes' survey, the
cost plot) both ways on the same compilations, modules compiled a second time in order or
at random.  Prints figures, never asserts.

    .venv/bin/python benchmarks/bench_page_revisits.py [--modules N]
"""

from __future__ import annotations

import argparse
import random
import time
from unittest import mock

from recompile_doctor.model import Compilation
from recompile_doctor.reports import pictures, plot_data
from recompile_doctor.reports.module_numbers import module_numbers
from recompile_doctor.reports.view import function_rows
from recompile_doctor.timeline import column


def compilations(modules: int, at_random: bool) -> list[Compilation]:
    """Each of ``modules`` modules compiled once, then once more (in order or at random)."""
    again = random.Random(1).sample(range(modules), modules) if at_random else range(modules)
    order = [*range(modules), *again]
    return [
        Compilation(
            id=i,
            module=f"cluster_{m}",
            hash=None,
            source="run.log",
            line=3 * i + 1,
            t=float(i),
            duration_s=0.5 + m % 7,
            cache="miss",
            warmup=i < modules,
            end_line=3 * i + 2,
            framework="tensorflow",
            function=f"f_{m % 5}",
        )
        for i, m in enumerate(order)
    ]


def steps(comps: list[Compilation]) -> dict[str, float]:
    """Seconds of each step that indexes the page's arrays by module."""
    t0 = time.perf_counter()
    numbers = module_numbers(comps)
    t1 = time.perf_counter()
    function_rows(comps, numbers)
    t2 = time.perf_counter()
    rows = plot_data.plot_rows(comps)
    plot_data.survey(rows, plot_data.MAX_LANES, set(), numbers)
    t3 = time.perf_counter()
    pictures.cost_picture((), rows, numbers=numbers)
    t4 = time.perf_counter()
    return dict(zip(_STEPS, (t1 - t0, t2 - t1, t3 - t2, t4 - t3), strict=True))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--modules", type=int, default=250_000, help="modules, each compiled twice")
    args = ap.parse_args()
    print(f"{args.modules:,} modules, each compiled twice (seconds)")
    print(f"{'second time':>12} {'arrays':>8} " + " ".join(f"{s:>14}" for s in _STEPS) + "   total")
    for at_random in (False, True):
        comps = compilations(args.modules, at_random)
        for where in ("memory", "files"):
            limit = 1 << 62 if where == "memory" else column.SPILL_AFTER
            with mock.patch.object(column, "SPILL_AFTER", limit):
                got = steps(comps)
            cells = " ".join(f"{got[s]:>14.2f}" for s in _STEPS)
            order = "at random" if at_random else "in order"
            print(f"{order:>12} {where:>8} {cells} {sum(got.values()):>7.2f}")


_STEPS = ("numbers", "function rows", "survey", "cost plot")

if __name__ == "__main__":
    main()
