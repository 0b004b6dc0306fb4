"""``recompile-doctor``: the click group, subcommand registration and error handling.

``main(argv)`` is testable in-process and returns the exit code; ``run()`` is the console
script.  Errors of the tool's own type print one line and exit 2; ``--debug`` shows the
traceback instead.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator, MutableMapping, Sequence

import click

from recompile_doctor._version import __version__
from recompile_doctor.errors import RecompileDoctorError
from recompile_doctor.gc_pause import collect_less_often, leave_the_rest_to_exit
from recompile_doctor.heap_trim import process_is_ours

#: subcommand -> (its module, which exposes ``command``; the first paragraph of its help).
#: A module is imported only when its command runs (or asks for its own help), so that
#: ``--version`` and ``--help`` import none of them; ``tests/test_startup_imports.py``
#: checks this table against the commands.
COMMANDS: dict[str, tuple[str, str]] = {
    "analyze": (
        "recompile_doctor.cli.analyze",
        "Analyze compile LOG(s): what compiled, what it cost, why it recompiled.",
    ),
    "report": (
        "recompile_doctor.cli.report",
        "Write the HTML report of LOG(s): headline, timeline, cost, findings with their log\n"
        "lines and HLO changes, modules, parse health.",
    ),
    "diff": (
        "recompile_doctor.cli.diff",
        "Compare two HLO text files or two XLA dump folders (--xla_dump_to) and name the cause\n"
        "of the recompilation: batch size, shape, dtype, constant, frozen weights, graph change.",
    ),
    "simulate": (
        "recompile_doctor.cli.simulate",
        "Simulate SCENARIO (a built-in name, see `scenarios`, or a .py scenario file).",
    ),
    "scenarios": (
        "recompile_doctor.cli.scenarios",
        "List the built-in scenarios of `simulate`, with the findings each must produce.",
    ),
    "demo": (
        "recompile_doctor.cli.demo",
        "Simulate a problematic IPU training run and diagnose it, offline, in a few seconds.",
    ),
    "cache": (
        "recompile_doctor.cli.cache",
        "Inspect and prune a Poplar executable cache (--executable_cache_path).",
    ),
    "fleet": (
        "recompile_doctor.cli.fleet",
        "Many runs at once: scan logs into Parquet, roll them up, query them with SQL.",
    ),
}


class _LazyCommands(MutableMapping[str, click.Command]):
    """The group's commands: every name of :data:`COMMANDS`, each imported on first use."""

    def __init__(self) -> None:
        self._loaded: dict[str, click.Command] = {}

    def __getitem__(self, name: str) -> click.Command:
        cmd = self._loaded.get(name)
        if cmd is None:
            if name not in COMMANDS:
                raise KeyError(name)
            cmd = importlib.import_module(COMMANDS[name][0]).command
            self._loaded[name] = cmd
        return cmd

    def loaded(self) -> dict[str, click.Command]:
        """The commands imported so far."""
        return self._loaded

    def __setitem__(self, name: str, cmd: click.Command) -> None:
        self._loaded[name] = cmd

    def __delitem__(self, name: str) -> None:
        del self._loaded[name]

    def __iter__(self) -> Iterator[str]:
        return iter(dict.fromkeys([*COMMANDS, *self._loaded]))

    def __len__(self) -> int:
        return len(set(COMMANDS) | set(self._loaded))


_COMMANDS = _LazyCommands()


class _LazyGroup(click.Group):
    """A group whose ``--help`` lists the commands from :data:`COMMANDS` without importing
    them (the same rows click would write from the commands themselves)."""

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        names = self.list_commands(ctx)
        if not names:
            return
        limit = formatter.width - 6 - max(len(n) for n in names)
        rows = [(n, self._short_help(n, limit)) for n in names]
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    def _short_help(self, name: str, limit: int) -> str:
        known = COMMANDS.get(name)
        if known is None or name in _COMMANDS.loaded():
            return self.commands[name].get_short_help_str(limit)
        # a stand-in with the same help shortens it as the command itself would
        return click.Command(name, help=known[1]).get_short_help_str(limit)


def _print_version(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    """``--version``: the version, then the matcher big logs are read with (the slower
    fallback where the hyperscan wheel is missing) and the build (pure Python, or compiled
    with mypyc): a slow run can be traced to either."""
    if not value or ctx.resilient_parsing:
        return
    from recompile_doctor import compiled_modules, matcher_choice

    click.echo(
        f"recompile-doctor, version {__version__}\nlog matcher: {matcher_choice.describe()}\n"
        f"build: {compiled_modules.describe()}"
    )
    ctx.exit()


@click.group(
    cls=_LazyGroup,
    commands=_COMMANDS,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@click.option(
    "--version",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=_print_version,
    help="Show the version and the log matcher in use, and exit.",
)
@click.option("--debug", is_flag=True, expose_value=False, help="Show a traceback on errors.")
def cli() -> None:
    """Explain why XLA-compiled programs recompile, and what to change.

    Reads the compile logs of JAX, TensorFlow, torch.compile (text and TORCH_TRACE),
    PyTorch/XLA and Graphcore Poplar / TensorFlow-on-IPU, and XLA HLO dumps; builds a timeline
    of compilations, cache lookups and executable loads, and names the cause of each recompilation
    with the exact log lines or HLO instructions behind it.
    """


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
    collect_less_often()  # (the process is ours)
    process_is_ours()
    code = main()
    leave_the_rest_to_exit()
    sys.exit(code)
