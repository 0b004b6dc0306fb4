"""``recompile-doctor fleet scan|report|query``: many runs into Parquet, a roll-up, SQL.

Exit codes of ``fleet scan``: 0 every file analysed, 1 some files failed (each recorded in
the ``runs`` table with its one-line error, and listed on stderr), 2 usage error or an
unusable output folder.
"""

from __future__ import annotations

import csv
import io
import json
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import click

from recompile_doctor.cli._common import common_options, format_for, warn, write_output
from recompile_doctor.errors import RecompileDoctorError


@click.group("fleet")
@common_options
def command(no_color: bool) -> None:
    """Many runs at once: scan logs into Parquet, roll them up, query them with SQL.

    fleet scan PATH_OR_GLOB... --out DIR analyses every run (on a local process pool, or a
    Dask cluster with --scheduler); fleet report DIR is the roll-up; fleet query DIR "SQL"
    runs DuckDB SQL over the tables runs, events, compilations and findings.
    """


@contextmanager
def _bar(enabled: bool) -> Iterator[tuple[Any, Any]]:
    """``(on_start(total), on_done(result))`` callbacks driving a bar on stderr (a tty only)."""
    if not enabled or not sys.stderr.isatty():
        yield None, None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

    with Progress(
        "[progress.description]{task.description}",
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=Console(stderr=True),
        transient=True,
    ) as bar:
        task = bar.add_task("scanning runs", total=None)
        yield (lambda n: bar.update(task, total=n)), (lambda _r: bar.advance(task))


@command.command("scan")
@click.argument("paths", nargs=-1, required=True, metavar="PATH_OR_GLOB...")
@click.option("--out", "out", required=True, metavar="DIR", help="The Parquet folder to write.")
@click.option(
    "--scheduler",
    metavar="tcp://HOST:PORT",
    help="Run on an existing Dask distributed cluster (its workers read the files).",
)
@click.option(
    "--jobs",
    type=click.IntRange(min=1),
    default=None,
    help="Local worker processes (default: one per core; 1: in this process).",
)
@click.option(
    "--host-from",
    metavar="REGEX",
    help="Take a run's host from the (?P<host>...) group of REGEX searched in its folder "
    "path (default: a host=NAME folder in the path).",
)
@click.option("--no-progress", is_flag=True, help="No progress bar.")
@common_options
def scan_command(
    paths: tuple[str, ...],
    out: str,
    scheduler: str | None,
    jobs: int | None,
    host_from: str | None,
    no_progress: bool,
    no_color: bool,
) -> int:
    """Analyse every log under PATH_OR_GLOB (a run is a folder: its logs, and a trace/
    subfolder, are analysed together) into hive-partitioned Parquet tables runs, events,
    compilations and findings under DIR.  Re-running scans only runs whose files changed
    (size or mtime).  Exit 0: all files analysed; 1: some failed (recorded in runs); 2: usage.
    """
    from recompile_doctor.fleet.discover import compile_host_from
    from recompile_doctor.fleet.executors import executor_for
    from recompile_doctor.fleet.scan import scan

    if scheduler is not None and jobs is not None:
        raise RecompileDoctorError("--jobs is for the local pool; a cluster has its own workers")
    compile_host_from(host_from)
    with (
        executor_for(scheduler, jobs) as (ex, workers),
        _bar(not no_progress) as (
            on_start,
            on_done,
        ),
    ):
        result = scan(
            list(paths),
            out,
            ex,
            host_from=host_from,
            workers=workers,
            on_start=on_start,
            on_done=on_done,
        )
    if result.runs == 0:
        warn("no log file (*.log, *.txt, *.out, *.err, plain or .gz) under the paths given")
    for path, error in result.failed:
        warn(f"{path}: failed: {error}" if not error.startswith(path) else f"failed: {error}")
    click.echo(
        f"recompile-doctor: fleet: {result.runs} runs, {result.scanned} scanned, "
        f"{result.skipped} unchanged, {result.files_read} files read, "
        f"{result.failed_files} failed -> {out}",
        err=True,
    )
    return 1 if result.failed_files else 0


@command.command("report")
@click.argument("folder", metavar="DIR")
@click.option("-o", "--output", metavar="FILE", help="Write the report to FILE (.html for HTML).")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json", "markdown", "html"]),
    default=None,
    help="Output format (default: text, or from the -o suffix).",
)
@click.option("--top", type=click.IntRange(min=1), default=25, help="Rows per list.")
@click.option("--force", is_flag=True, help="Overwrite an existing output file.")
@common_options
def report_command(
    folder: str, output: str | None, fmt: str | None, top: int, force: bool, no_color: bool
) -> int:
    """The roll-up of a fleet folder: runs ranked by wasted time, causes by cost and by
    runs, recurring functions, when each cause first appeared, diverging ranks, failures."""
    from recompile_doctor.fleet.render import render
    from recompile_doctor.fleet.rollup import rollup

    out_fmt = format_for(fmt, output)
    data = rollup(folder, top)
    write_output(
        render(data, out_fmt), output, force=force, inputs=(folder,), binary_ok_on_tty=False
    )
    return 0


def _cell(v: Any) -> str:
    return "" if v is None else str(v)


def _as_text(cols: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    cells = [[_cell(v) for v in r] for r in rows]
    widths = [max([len(c), *(len(r[i]) for r in cells)]) for i, c in enumerate(cols)]

    def line(vals: Sequence[str]) -> str:
        return "  ".join(v.ljust(w) for v, w in zip(vals, widths, strict=True)).rstrip()

    out = [line(cols), line(["-" * w for w in widths]), *(line(r) for r in cells)]
    out.append(f"({len(rows)} row{'s' if len(rows) != 1 else ''})")
    return "\n".join(out) + "\n"


def _jsonable(v: Any) -> Any:
    if isinstance(v, (str, int, float, bool)) or v is None:
        return v
    if isinstance(v, dict):
        return {str(k): _jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    return str(v)


@command.command("query")
@click.argument("folder", metavar="DIR")
@click.argument("sql", metavar="SQL")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json", "csv"]),
    default="text",
    help="Output format (default: an aligned table).",
)
@click.option("-o", "--output", metavar="FILE", help="Write the result to FILE.")
@click.option("--force", is_flag=True, help="Overwrite an existing output file.")
@common_options
def query_command(
    folder: str, sql: str, fmt: str, output: str | None, force: bool, no_color: bool
) -> int:
    """Run DuckDB SQL over the tables runs, events, compilations and findings of DIR."""
    from recompile_doctor.fleet.rollup import query

    cols, rows = query(folder, sql)
    if fmt == "json":
        text = (
            json.dumps(
                [_jsonable(dict(zip(cols, r, strict=True))) for r in rows],
                indent=2,
                ensure_ascii=False,
            )
            + "\n"
        )
    elif fmt == "csv":
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(cols)
        w.writerows([[_cell(v) for v in r] for r in rows])
        text = buf.getvalue()
    else:
        text = _as_text(cols, rows)
    write_output(text, output, force=force, inputs=(folder,))
    return 0
