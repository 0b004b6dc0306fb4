"""``recompile-doctor cache ls`` and ``cache prune``: the executable cache on disk."""

from __future__ import annotations

import json
import shutil
import sys
import time
from collections.abc import Callable
from typing import Any, TypeVar

import click

from recompile_doctor.cache import index
from recompile_doctor.cache_prune import Criteria, apply, parse_duration, parse_size, plan
from recompile_doctor.cli._common import common_options, format_for, use_color, write_output
from recompile_doctor.errors import RecompileDoctorError
from recompile_doctor.reports.cache import VLOG_HINT, render_ls, render_prune

F = TypeVar("F", bound=Callable[..., Any])


def _output_options(f: F) -> F:
    f = click.option("--force", is_flag=True, help="Overwrite an existing output file.")(f)
    f = click.option("-o", "--output", metavar="FILE", help="Write to FILE instead of stdout.")(f)
    f = click.option(
        "--format",
        "fmt",
        type=click.Choice(["text", "json"]),
        default=None,
        help="Output format (default: text, or from the -o suffix).",
    )(f)
    return f


def _parsed(
    parse: Callable[[str], Any],
) -> Callable[[click.Context, click.Parameter, str | None], Any]:
    def callback(_ctx: click.Context, _param: click.Parameter, value: str | None) -> Any:
        if value is None:
            return None
        try:
            return parse(value)
        except ValueError as e:
            raise click.BadParameter(str(e)) from None

    return callback


def _check_stdin(logs: tuple[str, ...]) -> None:
    if logs.count("-") > 1:
        raise RecompileDoctorError("stdin (-) can be read only once", path="-")


def _emit(
    data: dict[str, Any], text: Callable[[bool], str], fmt: str | None, output: str | None,
    force: bool, no_color: bool, inputs: tuple[str, ...],
) -> None:  # fmt: skip
    if format_for(fmt, output) == "json":
        write_output(json.dumps(data, indent=2) + "\n", output, force=force, inputs=inputs)
        return
    to_tty = output is None or output == "-"
    write_output(text(to_tty and use_color(no_color, sys.stdout)), output, force=force,
                 inputs=inputs)  # fmt: skip


@click.group("cache")
@common_options
def command(no_color: bool) -> None:
    """Inspect and prune a Poplar executable cache (--executable_cache_path).

    `ls` lists the cached executables (<hash>.poplar_exec): size, age, lock, and which modules
    used each one according to logs.  `prune` removes entries by use, age, count or total size;
    it is a dry run unless --yes, and never touches an entry whose lock file exists.
    """


@command.command("ls")
@click.argument("directory", metavar="DIR")
@click.option("--log", "logs", multiple=True, metavar="LOG",
              help="A log of a run that used this cache (repeatable): names the modules that "
              "used each entry and counts the uses.")  # fmt: skip
@_output_options
@common_options
def ls(directory: str, logs: tuple[str, ...], fmt: str | None, output: str | None,
       force: bool, no_color: bool) -> None:  # fmt: skip
    """List the executable cache in DIR, newest first, with totals.

    Entries are matched to log lines by the hash in the file name, so logs from another machine
    (other cache paths) work.  Without --log every entry counts as unreferenced.
    """
    _check_stdin(logs)
    idx = index(directory, logs)
    now = time.time()
    width = shutil.get_terminal_size((100, 24)).columns
    _emit(idx.to_json(), lambda color: render_ls(idx, now, color, width), fmt, output, force,
          no_color, (directory, *logs))  # fmt: skip


@command.command("prune")
@click.argument("directory", metavar="DIR")
@click.option("--unused-by", "unused_by", multiple=True, metavar="LOG",
              help="Remove entries that no such log used (repeatable; give every run's log).")  # fmt: skip
@click.option("--older-than", callback=_parsed(parse_duration), metavar="AGE",
              help="Remove entries last written more than AGE ago (30m, 12h, 7d, 2w, 3600s).")  # fmt: skip
@click.option("--keep-newest", type=click.IntRange(min=0), metavar="N",
              help="Remove all but the N newest entries.")  # fmt: skip
@click.option("--max-size", callback=_parsed(parse_size), metavar="SIZE",
              help="Keep the newest entries that fit in SIZE (500M, 10G = powers of 1024; "
              "10GB = of 1000; or bytes); remove the rest.")  # fmt: skip
@click.option("--yes", is_flag=True, help="Really delete (default: a dry run that only lists).")
@_output_options
@common_options
def prune(directory: str, unused_by: tuple[str, ...], older_than: float | None,
          keep_newest: int | None, max_size: int | None, yes: bool, fmt: str | None,
          output: str | None, force: bool, no_color: bool) -> None:  # fmt: skip
    """Remove cache entries from DIR: a dry run unless --yes.

    An entry is removed when ANY given criterion selects it.  Entries whose .compile_lock or
    .read_lock exists are skipped; lock files and anything that is not a <hash>.poplar_exec
    file are never removed.  Exit 2 if a removal fails.
    """
    criteria = Criteria(unused_by, older_than, keep_newest, max_size)
    if not criteria.any():
        raise RecompileDoctorError(
            "nothing selected: give --unused-by, --older-than, --keep-newest or --max-size",
            path=directory,
        )
    _check_stdin(unused_by)
    idx = index(directory, unused_by)
    if idx.logs_without_cache_lines:
        raise RecompileDoctorError(
            f"no executable-cache lines in this log ({VLOG_HINT}); refusing to treat every "
            "entry as unused",
            path=idx.logs_without_cache_lines[0],
        )
    p = plan(idx, criteria)
    if yes:
        apply(p)
    _emit(p.to_json(), lambda color: render_prune(p, color), fmt, output, force, no_color,
          (directory, *unused_by))  # fmt: skip
    if p.failed:
        first = p.failed[0]
        raise RecompileDoctorError(
            f"{len(p.failed)} of {len(p.remove)} entries could not be removed "
            f"(first: {first.entry.file}: {first.why_skipped})",
            path=directory,
        )
