"""``recompile-doctor``: the click group, subcommand registration and error handling.

``main(argv)`` is testable in-process and returns the exit code; ``run()`` is the console
script.  Errors of the tool's own type print one line and exit 2; ``--debug`` shows the
traceback instead.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

import click

from recompile_doctor._version import __version__
from recompile_doctor.errors import RecompileDoctorError


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="recompile-doctor")
@click.option("--debug", is_flag=True, expose_value=False, help="Show a traceback on errors.")
def cli() -> None:
    """Explain why XLA-compiled programs recompile, and what to change.

    Reads Graphcore Poplar / TensorFlow-on-IPU logs and XLA HLO dumps, builds a timeline of
    compilations, cache hits and executable loads, and names the cause of each recompilation
    with the exact log lines or HLO instructions behind it.
    """


def _register() -> None:
    # One module per subcommand; each exposes ``command``.
    from recompile_doctor.cli import analyze, cache, demo, diff, fleet, report, scenarios, simulate

    for mod in (analyze, report, diff, simulate, scenarios, demo, cache, fleet):
        cli.add_command(mod.command)


_register()


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI and return its exit code (0 ok, 1 findings/differences, 2 trouble)."""
    args = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in args
    try:
        rv = cli.main(args=args, prog_name="recompile-doctor", standalone_mode=False)
    except RecompileDoctorError as e:
        if debug:
            raise
        click.echo(f"recompile-doctor: error: {e}", err=True)
        return e.exit_code
    except click.exceptions.Exit as e:
        return int(e.exit_code)
    except click.exceptions.Abort:
        click.echo("recompile-doctor: aborted", err=True)
        return 130
    except click.ClickException as e:
        if debug:
            raise
        msg = " ".join(e.format_message().split())
        click.echo(f"recompile-doctor: error: {msg} (see --help)", err=True)
        return 2
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        click.echo("recompile-doctor: interrupted", err=True)
        return 130
    except OSError as e:
        if debug:
            raise
        click.echo(f"recompile-doctor: error: {_os_error(e)}", err=True)
        return 2
    except Exception as e:  # the tool never shows a traceback unless asked
        if debug:
            raise
        click.echo(f"recompile-doctor: {internal_error(e)}", err=True)
        return 2
    return int(rv or 0)


def _os_error(e: OSError) -> str:
    """``path: what`` for an operating-system error on a file (bad input, not a bug)."""
    what = e.strerror or str(e)
    name = e.filename if e.filename is not None else _where(e)
    return f"{name}: {what}" if name else what


def _where(e: BaseException) -> str | None:
    """``path:line`` of the input being read where ``e`` was raised: the innermost frame of
    its traceback that holds a ``path`` (str) and a ``lineno``/``line`` (int), as every line
    reader of the tool does."""
    tb = e.__traceback__
    found: str | None = None
    while tb is not None:
        loc = tb.tb_frame.f_locals
        path = loc.get("path")
        line = loc.get("lineno", loc.get("line"))
        if isinstance(path, str) and isinstance(line, int) and not isinstance(line, bool):
            found = f"{path}:{line}"
        tb = tb.tb_next
    return found


def internal_error(e: BaseException) -> str:
    """The one line for a bug: what broke, while reading which input (when one was being
    read), and what to do about it."""
    text = " ".join(str(e).split()) or "(no message)"
    where = _where(e)
    at = f" (while reading {where})" if where else ""
    return (
        f"internal error: {type(e).__name__}: {text}{at} \u2014 this is a bug; please report "
        "it with the output of --debug"
    )


def run() -> None:
    """Console-script entry point."""
    sys.exit(main())
