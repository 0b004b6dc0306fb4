"""``recompile-doctor diff A B``: what changed between two compilations, and why it recompiles.

Exit code as diff(1): 0 no difference that can cause a recompile, 1 differences, 2 trouble.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from recompile_doctor.cli._common import common_options, format_for, use_color, write_output
from recompile_doctor.errors import RecompileDoctorError

if TYPE_CHECKING:
    from recompile_doctor.differ import DiffResult
    from recompile_doctor.parsers.hlo import HloModule


def _read(path: str) -> HloModule:
    from recompile_doctor.parsers.hlo import parse_hlo, parse_hlo_file

    if path == "-":
        return parse_hlo(sys.stdin.read(), "-")
    return parse_hlo_file(path)


def run_diff(a: str, b: str, module: str | None, stage: str | None) -> DiffResult:
    from recompile_doctor.differ import DiffResult, diff_modules, diff_paths

    if a == "-" and b == "-":
        raise RecompileDoctorError("only one of A and B can be '-' (stdin)", path="-")
    if "-" in (a, b):
        ma, mb = _read(a), _read(b)
        return DiffResult(a, b, [diff_modules(ma, mb)])
    return diff_paths(a, b, module=module, stage=stage)


@click.command("diff")
@click.argument("a", metavar="A")
@click.argument("b", metavar="B")
@click.option(
    "--module",
    "module",
    metavar="NAME",
    help="Only this module: its full name, its function (a_inference_mlp, jit_mlp) or the "
    "function's short name (mlp).",
)
@click.option(
    "--stage",
    metavar="STAGE",
    help="Dump stage to compare (default before_optimizations, else the only stage present), "
    "e.g. cpu_after_optimizations.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json", "markdown"]),
    default=None,
    help="Output format (default: from the -o suffix, else text).",
)
@click.option("-o", "--output", metavar="FILE", help="Write the report to FILE instead of stdout.")
@click.option("--html", "html_out", metavar="FILE", help="Also write an HTML page.")
@click.option("--force", is_flag=True, help="Overwrite existing output files.")
@common_options
def command(
    a: str,
    b: str,
    module: str | None,
    stage: str | None,
    fmt: str | None,
    output: str | None,
    html_out: str | None,
    force: bool,
    no_color: bool,
) -> None:
    """Compare two HLO text files or two XLA dump folders (--xla_dump_to) and name the cause
    of the recompilation: batch size, shape, dtype, constant, frozen weights, graph change.

    Folders are paired by module name, never by the module_NNNN counter. Exit code: 0 when
    nothing that can cause a recompile differs, 1 when something does, 2 on errors.
    """
    from recompile_doctor.reports.diff import render

    res = run_diff(a, b, module, stage)
    fmt = format_for(fmt, output)
    if fmt == "html":  # -o page.html: the HTML page, never on a terminal
        html_out, output = output, None
        if html_out is None:
            raise RecompileDoctorError("use --html FILE (or -o FILE.html) for HTML", path="-")
        fmt = "text"
    color = fmt == "text" and output in (None, "-") and use_color(no_color)
    if fmt == "text":
        from recompile_doctor.reports.diff import render_text

        data: str | bytes = render_text(res, color=color)
    else:
        data = render(res, fmt)
    inputs = [a, b]
    if output is not None or not html_out:
        write_output(data, output, force=force, inputs=inputs)
    if html_out:
        write_output(
            render(res, "html"), html_out, force=force, inputs=inputs, binary_ok_on_tty=False
        )
    raise click.exceptions.Exit(0 if res.equivalent else 1)
