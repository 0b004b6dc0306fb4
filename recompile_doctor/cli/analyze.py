"""``recompile-doctor analyze LOG...``: the timeline, the findings, the fix."""

from __future__ import annotations

import sys
from collections.abc import Iterable
from itertools import chain
from typing import TYPE_CHECKING

import click

from recompile_doctor.cli._common import (
    analysis_options,
    check_dump_dirs,
    check_output_path,
    common_options,
    format_for,
    use_color,
    warn_on_read_problems,
    write_output,
)
from recompile_doctor.cli._progress import progress_for
from recompile_doctor.errors import RecompileDoctorError
from recompile_doctor.heap_trim import give_back
from recompile_doctor.parsers import format_names
from recompile_doctor.told import Stopwatch, tell, telling

if TYPE_CHECKING:
    from recompile_doctor.model import Report
    from recompile_doctor.read_at import FileSpan


def fails(report: Report, fail_on: str | None) -> bool:
    """True when a finding at or above ``fail_on`` exists."""
    from recompile_doctor.model import SEVERITY_RANK

    if fail_on is None:
        return False
    worst = report.worst_severity()
    return worst is not None and SEVERITY_RANK[worst] >= SEVERITY_RANK[fail_on]


@click.command("analyze")
@click.argument("logs", nargs=-1, required=True, metavar="LOG...")
@click.option(
    "--log-format",
    type=click.Choice(format_names()),
    default=None,
    help="Force the log format (default: detected per file).",
)
@analysis_options
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json", "markdown"]),
    default=None,
    help="Output format (default: text, or from the -o suffix).",
)
@click.option("-o", "--output", metavar="FILE", help="Write the report to FILE.")
@click.option("--html", "html", metavar="FILE", help="Also write the HTML report to FILE.")
@click.option(
    "--fail-on",
    type=click.Choice(["info", "warning", "error"]),
    default=None,
    help="Exit 1 when a finding of this severity or worse exists (for CI).",
)
@click.option(
    "--strict",
    is_flag=True,
    help="Exit 2 on a line that looks like a known message but is malformed.",
)
@click.option("--force", is_flag=True, help="Overwrite existing output files.")
@click.option(
    "-q", "--quiet", is_flag=True, help="Print nothing when no warning or error is found."
)
@common_options
def command(
    logs: tuple[str, ...],
    log_format: str | None,
    dumps: tuple[str, ...],
    fmt: str | None,
    output: str | None,
    html: str | None,
    warmup: int | None,
    fail_on: str | None,
    strict: bool,
    force: bool,
    quiet: bool,
    no_color: bool,
) -> int:
    """Analyze compile LOG(s): what compiled, what it cost, why it recompiled.

    Reads JAX, TensorFlow, torch.compile (text or TORCH_TRACE), PyTorch/XLA and Poplar
    (TensorFlow-on-IPU) logs; plain or gzip, - for stdin.

    Prints how many compilations happened, which hit or missed the executable cache, how many
    came after warm-up, how much time they cost, and findings with the exact log lines behind
    them and the change to make.
    """
    from recompile_doctor.api import analyze as run_analysis

    out_fmt = format_for(fmt, output)
    if out_fmt == "html":
        raise RecompileDoctorError("use --html FILE (or the report command) for HTML", path=output)
    if logs.count("-") > 1:
        raise RecompileDoctorError("stdin (-) can be read only once", path="-")
    check_dump_dirs(dumps)
    # check output paths before the (possibly long) analysis
    for path in (output, html):
        if path is not None and path != "-":
            check_output_path(path, force, (*logs, *dumps))
    with progress_for(list(logs)) as progress, warn_on_read_problems(strict):
        report = run_analysis(
            list(logs),
            dumps=list(dumps),
            warmup=warmup,
            strict=strict,
            log_format=log_format,
            on_progress=progress,
            events_json=out_fmt == "json",  # (written by a second process meanwhile)
        )
    with report:  # a long run's spooled events go as soon as they are written
        give_back()  # (what the analysis freed: the report is made in fresh memory otherwise)
        watch = Stopwatch()
        code = _write(report, output, html, out_fmt, force, quiet, fail_on, no_color, logs, dumps)
        if watch.on:
            tell(f"report ({out_fmt}{', and HTML' if html else ''}) written in {watch.lap():.2f} s")
        return code


def _write(
    report: Report, output: str | None, html: str | None, out_fmt: str, force: bool,
    quiet: bool, fail_on: str | None, no_color: bool, logs: tuple[str, ...],
    dumps: tuple[str, ...],
) -> int:  # fmt: skip
    """Write ``report`` where asked; the exit code."""
    from recompile_doctor.reports import render

    if html is not None:
        write_output(
            render(report, "html").encode("utf-8"),
            html,
            force=force,
            inputs=(*logs, *dumps),
            binary_ok_on_tty=False,
        )
    quiet_ok = quiet and not any(f.severity != "info" for f in report.findings)
    if not quiet_ok:
        if out_fmt == "text":
            from recompile_doctor.reports.text import render as render_text

            to_tty = output is None or output == "-"
            text: str | bytes | Iterable[str] | Iterable[bytes | FileSpan] = render_text(
                report,
                color=to_tty and use_color(no_color, sys.stdout),
                verbose=telling(),  # (-v: the text report details info findings too)
            )
        elif out_fmt == "json":
            # piece by piece: a big report is never held whole as one string (its events'
            # text, written by a second process, copied by the system from its file)
            text = chain(report.json_parts(), (b"\n",))
        else:
            text = render(report, out_fmt)
        write_output(text, output, force=force, inputs=(*logs, *dumps))
    return 1 if fails(report, fail_on) else 0
