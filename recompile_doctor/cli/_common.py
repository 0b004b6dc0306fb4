"""What every subcommand shares: common options, colour rules, writing output files.

The library never prints; only modules under ``cli/`` do, and they go through here.
"""

from __future__ import annotations

import contextlib
import os
import stat
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import IO, TYPE_CHECKING, Any, TextIO, TypeVar

import click

from recompile_doctor.errors import RecompileDoctorError
from recompile_doctor.parsers._reader import collect_notes
from recompile_doctor.read_at import FileSpan, copy_span, span_pieces

if TYPE_CHECKING:
    from pathlib import Path

F = TypeVar("F", bound=Callable[..., Any])

#: file suffix -> output format name
SUFFIX_FORMATS: dict[str, str] = {
    ".json": "json",
    ".md": "markdown",
    ".markdown": "markdown",
    ".txt": "text",
    ".html": "html",
    ".htm": "html",
}


def _set_verbosity(ctx: click.Context, _param: click.Parameter, value: int) -> int:
    if value:
        import logging  # only with -v: not at every start

        level = logging.INFO if value == 1 else logging.DEBUG
        logging.basicConfig(level=level, format="recompile-doctor: %(levelname)s: %(message)s")
        logging.getLogger("recompile_doctor").setLevel(level)
    return value


def common_options(f: F) -> F:
    """``--debug``, ``-v/--verbose`` and ``--no-color``, accepted by every command."""
    f = click.option(
        "--debug", is_flag=True, expose_value=False, help="Show a traceback on errors."
    )(f)
    f = click.option(
        "-v",
        "--verbose",
        count=True,
        expose_value=False,
        callback=_set_verbosity,
        help="More logging on stderr (-vv for debug).",
    )(f)
    f = click.option(
        "--no-color",
        "no_color",
        is_flag=True,
        default=False,
        help="No colour (also when NO_COLOR is set or output is not a terminal).",
    )(f)
    return f


def _warmup(_ctx: click.Context, _param: click.Parameter, value: str | None) -> int | None:
    if value is None or value == "auto":
        return None
    try:
        n = int(value)
    except ValueError:
        raise click.BadParameter(f"expected a number or 'auto', not {value!r}") from None
    if n < 0:
        raise click.BadParameter("must be 0 or more")
    return n


def analysis_options(f: F) -> F:
    """``--dumps DIR`` (repeatable) and ``--warmup N|auto``, shared by analyze and report."""
    f = click.option(
        "--warmup",
        callback=_warmup,
        metavar="N|auto",
        help="The first N compilations of each module are warm-up (default auto: a module's "
        "first compilation, and everything before the first executed step).",
    )(f)
    f = click.option(
        "--dumps",
        "dumps",
        multiple=True,
        metavar="DIR",
        help="XLA dump folder of the same run (--xla_dump_to); repeatable. The HLO of "
        "recompiled modules is diffed and the cause named.",
    )(f)
    return f


def check_dump_dirs(dumps: Sequence[str]) -> None:
    """Fail early, in the tool's one-line format, on a ``--dumps`` that is not a folder."""
    for d in dumps:
        from pathlib import Path  # pathlib and what it imports: only with --dumps

        if not Path(d).exists():
            raise RecompileDoctorError("no such directory", path=d)
        if not Path(d).is_dir():
            raise RecompileDoctorError("not a directory, expected an XLA dump folder", path=d)


def use_color(no_color: bool, stream: TextIO | None = None) -> bool:
    """Colour only on a tty, never with ``--no-color`` or a non-empty ``NO_COLOR``."""
    if no_color or os.environ.get("NO_COLOR"):
        return False
    s = stream if stream is not None else sys.stdout
    try:
        return s.isatty()
    except (AttributeError, ValueError):
        return False


def format_for(fmt: str | None, output: str | None, default: str = "text") -> str:
    """The explicit ``--format``, else the one the ``-o`` suffix implies, else ``default``."""
    if fmt:
        return fmt
    if output and output != "-":
        from pathlib import Path  # pathlib and what it imports: not at every start

        return SUFFIX_FORMATS.get(Path(output).suffix.lower(), default)
    return default


def check_output_path(path: str, force: bool, inputs: Sequence[str] = ()) -> Path:
    """The one guard before writing ``path``: never an input, a file inside an input folder
    (a dump folder, a cache) or stdin's file, ``--force`` or not; an existing regular file
    only with ``force`` (a device, FIFO or ``/dev/stdout`` is written as it is)."""
    from pathlib import Path  # pathlib and what it imports: not at every start

    p = Path(path)
    clash = _input_clash(path, inputs)
    if clash is not None:
        raise RecompileDoctorError(f"{clash}; choose another output", path=path)
    if p.is_dir():
        raise RecompileDoctorError("is a directory, expected a file to write", path=path)
    if p.is_file() and not force:
        raise RecompileDoctorError("file exists (use --force to overwrite)", path=path)
    if not p.parent.exists():
        raise RecompileDoctorError(f"no such directory: {p.parent}", path=path)
    return p


def _stat(path: str) -> os.stat_result | None:
    try:
        return os.stat(path)
    except (OSError, ValueError):
        return None


def _stdin_stat() -> os.stat_result | None:
    try:
        return os.fstat(sys.stdin.fileno())
    except (OSError, ValueError, AttributeError):
        return None


def _input_clash(output: str, inputs: Sequence[str]) -> str | None:
    """Why writing ``output`` would touch an input, or ``None``.  Paths are compared resolved
    (symlinks, ``..``) and files by device and inode (hard links, ``/dev/fd/N``)."""
    out_real = os.path.realpath(output)
    out_st = _stat(output)
    for i in inputs:
        if i == "-":
            st = _stdin_stat()
            if (
                out_st is not None
                and st is not None
                and stat.S_ISREG(st.st_mode)
                and (st.st_dev, st.st_ino) == (out_st.st_dev, out_st.st_ino)
            ):
                return "is an input (stdin is read from it)"
            continue
        in_real = os.path.realpath(i)
        in_st = _stat(i)
        if out_real == in_real or (
            out_st is not None
            and in_st is not None
            and (out_st.st_dev, out_st.st_ino) == (in_st.st_dev, in_st.st_ino)
        ):
            return f"is an input ({i})"
        if in_st is not None and stat.S_ISDIR(in_st.st_mode):
            try:
                inside = os.path.commonpath([out_real, in_real]) == in_real
            except ValueError:
                inside = False
            if inside:
                return f"is inside an input folder ({i})"
    return None


def write_output(
    data: str | bytes | Iterable[str] | Iterable[bytes | FileSpan],
    output: str | None,
    *,
    force: bool = False,
    inputs: Sequence[str] = (),
    binary_ok_on_tty: bool = True,
) -> None:
    """Write to ``output`` (a path) or to stdout when ``output`` is None or ``-`` (text as
    UTF-8; pieces of bytes as they are; a span of a file copied by the system where it can:
    ``read_at.copy_span``)."""
    if output is None or output == "-":
        if isinstance(data, bytes):
            if not binary_ok_on_tty and sys.stdout.isatty():
                raise RecompileDoctorError(
                    "refusing to write HTML to a terminal; use -o FILE", path="-"
                )
            sys.stdout.buffer.write(data)
            sys.stdout.flush()
        elif isinstance(data, str):
            click.echo(data, nl=False)
        else:
            for piece in data:
                if isinstance(piece, FileSpan):
                    sys.stdout.flush()  # (what was written before it, in its order)
                    binary: IO[bytes] | None = getattr(sys.stdout, "buffer", None)
                    if binary is not None:
                        copy_span(piece, binary)
                    else:  # (a stream of text alone)
                        for data in span_pieces(piece):
                            click.echo(data, nl=False)
                else:
                    click.echo(piece, nl=False)
        return
    p = check_output_path(output, force, inputs)
    try:
        if isinstance(data, bytes):
            p.write_bytes(data)
        elif isinstance(data, str):
            p.write_text(data, encoding="utf-8")
        else:
            with p.open("wb") as f:
                for piece in data:
                    if isinstance(piece, FileSpan):
                        copy_span(piece, f)
                    else:
                        f.write(piece if isinstance(piece, bytes) else piece.encode("utf-8"))
    except BrokenPipeError:
        raise  # -o /dev/stdout into `| head`: quiet, as on stdout
    except OSError as e:
        raise RecompileDoctorError(f"cannot write: {e.strerror or e}", path=output) from e


def warn(message: str) -> None:
    """``recompile-doctor: warning: <message>`` on stderr (one line)."""
    click.echo(f"recompile-doctor: warning: {' '.join(message.split())}", err=True)


@contextlib.contextmanager
def warn_on_read_problems(strict: bool = False) -> Iterator[None]:
    """Around an analysis: after it, warn about every input that could be read only in part
    (``run.log.gz:722: gzip stream ends early; analysed the 722 lines before``).  With
    ``strict``, the first such input is an error (exit 2) instead."""
    with collect_notes() as notes:
        yield
    if strict and notes:
        n = notes[0]
        raise RecompileDoctorError(
            f"{n.what} after line {n.last_good_line} ({n.detail})", path=n.path
        )
    for n in notes:
        warn(n.message())
