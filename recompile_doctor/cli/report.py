"""``recompile-doctor report LOG... -o report.html``: the HTML report alone.

Runs the same analysis as ``analyze`` (or re-renders a report saved with
``analyze --format json``, without the logs) and writes one self-contained HTML page.
"""

from __future__ import annotations

import click

from recompile_doctor.cli._common import (
    analysis_options,
    check_dump_dirs,
    check_output_path,
    common_options,
    warn_on_read_problems,
    write_output,
)
from recompile_doctor.errors import RecompileDoctorError
from recompile_doctor.heap_trim import give_back
from recompile_doctor.model import Report

DEFAULT_OUTPUT = "recompile-report.html"


@click.command("report")
@click.argument("inputs", nargs=-1, required=True, metavar="LOG...|REPORT.json")
@analysis_options
@click.option(
    "-o",
    "--output",
    metavar="FILE",
    default=DEFAULT_OUTPUT,
    show_default=True,
    help="Where to write the HTML page ('-' for stdout, never a terminal).",
)
@click.option("--force", is_flag=True, help="Overwrite FILE if it exists.")
@common_options
def command(
    inputs: tuple[str, ...],
    dumps: tuple[str, ...],
    output: str,
    warmup: int | None,
    force: bool,
    no_color: bool,
) -> int:
    """Write the HTML report of LOG(s): headline, timeline, cost, findings with their log
    lines and HLO changes, modules, parse health.

    Give a report saved with `analyze --format json` instead of logs to re-render it without
    the logs. The page is one self-contained file that opens offline.
    """
    check_dump_dirs(dumps)
    if output != "-":  # fail before a long analysis
        check_output_path(output, force, (*inputs, *dumps))
    with load(inputs, dumps, warmup) as report:
        # (imported now: matplotlib, numpy and jinja2 are 47 MB, which a long analysis, and
        # the processes it forks, need not carry)
        from recompile_doctor.reports.html import render

        give_back()  # (what the analysis freed: see heap_trim)
        page = render(report).encode("utf-8")
    write_output(page, output, force=force, inputs=(*inputs, *dumps), binary_ok_on_tty=False)
    if output != "-":
        click.echo(f"recompile-doctor: wrote {output}", err=True)
    return 0


def load(inputs: tuple[str, ...], dumps: tuple[str, ...], warmup: int | None) -> Report:
    """Analyze the logs, or read the one saved JSON report among ``inputs``."""
    from recompile_doctor import api

    saved = [p for p in inputs if api.looks_like_json_report(p)]
    if saved:
        if len(inputs) > 1:
            raise RecompileDoctorError(
                "give either logs or one saved JSON report, not both", path=saved[0]
            )
        if dumps or warmup is not None:
            raise RecompileDoctorError(
                "--dumps and --warmup need the logs; a saved report is re-rendered as it is",
                path=saved[0],
            )
        return api.load_report(saved[0])
    if inputs.count("-") > 1:
        raise RecompileDoctorError("stdin (-) can be read only once", path="-")
    with warn_on_read_problems():
        return api.analyze(list(inputs), dumps=list(dumps), warmup=warmup)
