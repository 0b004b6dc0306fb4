"""Start-up imports only what a command uses: GIVEN a fresh interpreter, WHEN the CLI module
is imported (``--version``, ``--help``) or ``analyze`` runs on a small log, THEN pandas,
matplotlib, jinja2, the simulator and the HLO differ are not imported where they are not used;
and the static command table the lazy group lists is the commands' own."""

from __future__ import annotations

import importlib
import inspect
import json
import os
import subprocess
import sys
from pathlib import Path

import click
import pytest

ROOT = Path(__file__).resolve().parent.parent
HEAVY = ("pandas", "matplotlib", "jinja2", "recompile_doctor.simulate")

PROBE = """
import json, sys
before = set(sys.modules)
from recompile_doctor.cli.main import main
code = main(sys.argv[1:])
print(json.dumps({"code": code, "modules": sorted(set(sys.modules) - before)}))
"""


def _modules_after(*argv: str) -> tuple[int, list[str]]:
    out = subprocess.run(
        [sys.executable, "-c", PROBE, *argv], capture_output=True, text=True, cwd=ROOT, check=True
    ).stdout
    res = json.loads(out.strip().splitlines()[-1])
    return int(res["code"]), list(res["modules"])


def _loaded(modules: list[str], prefixes: tuple[str, ...]) -> list[str]:
    return [m for m in modules if any(m == p or m.startswith(p + ".") for p in prefixes)]


@pytest.mark.parametrize("argv", [["--version"], ["--help"]], ids=["version", "help"])
def test_version_and_help_import_no_subcommand(argv: list[str]) -> None:
    code, modules = _modules_after(*argv)
    assert code == 0
    assert _loaded(modules, (*HEAVY, "recompile_doctor.differ", "recompile_doctor.parsers")) == []
    assert [
        m
        for m in modules
        if m.startswith("recompile_doctor.cli.") and m != "recompile_doctor.cli.main"
    ] == []


def test_analyze_of_a_small_log_imports_no_heavy_library() -> None:
    log = ROOT / "fixtures" / "jax" / "growing_shape" / "run.log"
    code, modules = _modules_after("analyze", str(log), "-o", "/dev/null")
    assert code in (0, 1)
    assert "recompile_doctor.cli.analyze" in modules
    assert _loaded(modules, HEAVY) == []


#: what ``analyze`` of a small log needs none of: the third-party ``regex`` (the views use
#: ``re``), ``tempfile`` (only a stream read twice or events past the spool threshold),
#: ``hyperscan`` (only a log longer than the lines format detection reads), the dump
#: scanner, HLO parser and differ (only with ``--dumps``), the other reports' renderers, the
#: decoders of the formats the log is not in (detection needs only their ``*_detect`` half),
#: the workers' machinery (only a plain log of ``PARALLEL_MIN_BYTES`` or more, or gzip),
#: ``ctypes`` (only to give back the memory of a process that grew: ``heap_trim``), OpenSSL's
#: ``_hashlib`` (the name digests take BLAKE2 from ``_blake2`` directly)
NOT_FOR_A_SMALL_LOG = (
    "regex",
    "recompile_doctor.parsers._parallel",
    "recompile_doctor.parsers._checkpoint",
    "recompile_doctor.parsers._event_codec",
    "ctypes",
    "_hashlib",
    "tempfile",
    "hyperscan",
    "recompile_doctor.parsers.dumps",
    "recompile_doctor.parsers.poplar",
    "recompile_doctor.parsers.poplar_decoder",
    "recompile_doctor.parsers.tensorflow",
    "recompile_doctor.parsers.torch",
    "recompile_doctor.parsers.torch_trace",
    "recompile_doctor.parsers.ptxla",
    "recompile_doctor.differ",
    "recompile_doctor.parsers.hlo",
    "recompile_doctor.reports.html",
    "recompile_doctor.reports.markdown",
    "recompile_doctor.reports.plots",
    "recompile_doctor.reports.diff",
)


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_analyze_of_a_small_log_imports_only_what_it_uses(fmt: str) -> None:
    """GIVEN a small JAX log WHEN ``analyze`` writes its text or JSON report THEN the log was
    read and reported, without importing what only big logs, dumps or other reports need;
    the text renderer is imported for the text report only."""
    log = ROOT / "fixtures" / "jax" / "growing_shape" / "run.log"
    code, modules = _modules_after("analyze", str(log), "--format", fmt, "--output", os.devnull)
    assert code in (0, 1)
    assert {"recompile_doctor.parsers.jax", "recompile_doctor.timeline.builder"} <= set(modules)
    assert _loaded(modules, NOT_FOR_A_SMALL_LOG) == []
    assert ("recompile_doctor.reports.text" in modules) == (fmt == "text")


def test_the_static_command_table_is_the_commands_own() -> None:
    """GIVEN the table ``--help`` lists WHEN each module is imported THEN it exposes that
    command, whose help starts with the paragraph the table holds."""
    from recompile_doctor.cli.main import COMMANDS, cli

    assert sorted(cli.commands) == sorted(COMMANDS)
    for name, (module, first_paragraph) in COMMANDS.items():
        cmd = importlib.import_module(module).command
        assert isinstance(cmd, click.Command) and cmd.name == name
        assert inspect.cleandoc(cmd.help or "").split("\n\n")[0] == first_paragraph


def test_help_lists_what_the_commands_themselves_would() -> None:
    """GIVEN the lazy group WHEN ``--help`` is written THEN its rows are the rows click writes
    from the imported commands."""
    from recompile_doctor.cli.main import cli

    lazy = cli.get_help(click.Context(cli, info_name="recompile-doctor", **cli.context_settings))
    eager = click.Group(
        "recompile-doctor",
        commands=[cli.commands[n] for n in cli.commands],
        params=cli.params,
        help=cli.help,
        context_settings=cli.context_settings,
    )
    real = eager.get_help(
        click.Context(eager, info_name="recompile-doctor", **eager.context_settings)
    )
    assert lazy == real
    assert "analyze" in lazy and "simulate" in lazy


def test_simulate_choices_are_the_simulators() -> None:
    """GIVEN ``simulate --connection-type`` WHEN its choices are read THEN they are the
    simulated device's connection types."""
    from recompile_doctor.cli.simulate import command
    from recompile_doctor.simulate.device import CONNECTION_TYPES

    opt = next(p for p in command.params if p.name == "connection_type")
    assert isinstance(opt.type, click.Choice)
    assert tuple(opt.type.choices) == tuple(CONNECTION_TYPES)


def test_a_poplar_log_loads_no_other_formats_decoder() -> None:
    """GIVEN a small Poplar log WHEN it is analysed THEN of the decoders only Poplar's is
    imported (JAX's detection half, like the others', does not bring its decoder)."""
    log = ROOT / "fixtures" / "poplar" / "cases" / "cache_disabled_two_processes.log"
    code, modules = _modules_after("analyze", str(log), "--format", "json", "-o", os.devnull)
    assert code in (0, 1)
    assert "recompile_doctor.parsers.poplar_decoder" in modules
    decoders = (
        "recompile_doctor.parsers.jax",
        "recompile_doctor.parsers.tensorflow",
        "recompile_doctor.parsers.torch",
        "recompile_doctor.parsers.torch_trace",
        "recompile_doctor.parsers.ptxla",
    )
    assert _loaded(modules, decoders) == []


#: the readers of the files beside HLO dumps (flags, compile options, module.mlir)
SIDE_FILE_READERS = (
    "recompile_doctor.differ.options",
    "recompile_doctor.differ.mlir_constants",
    "recompile_doctor.parsers.textproto",
)


def test_diff_of_two_hlo_files_imports_no_side_file_reader() -> None:
    """GIVEN two HLO files with no side files WHEN ``diff`` compares them THEN the readers of
    flags, compile options and module.mlir are not imported (nor anything heavy)."""
    hlo = ROOT / "fixtures" / "hlo" / "samples" / "01_jax_long_text_stackframes.hlo"
    code, modules = _modules_after("diff", str(hlo), str(hlo), "--format", "json")
    assert code == 0
    assert "recompile_doctor.differ.beside" in modules
    assert _loaded(modules, (*HEAVY, *SIDE_FILE_READERS)) == []


def test_a_log_big_enough_to_split_brings_the_workers_machinery(tmp_path: Path) -> None:
    """GIVEN a plain log of ``PARALLEL_MIN_BYTES`` (the small one above, then the program's
    own output, which no parser decodes: the probe is quick) WHEN ``analyze`` reads it THEN
    the workers' machinery is imported, as it decides how many processes read it (one
    process here: the probe's environment says so)."""
    from recompile_doctor.parsers._reader import PARALLEL_MIN_BYTES

    small = (ROOT / "fixtures" / "jax" / "growing_shape" / "run.log").read_bytes()
    own = b"step 0 loss 0.1257\n"
    assert own in small
    big = tmp_path / "big.log"
    big.write_bytes(small + own * (PARALLEL_MIN_BYTES // len(own) + 1))
    env = {**os.environ, "RECOMPILE_DOCTOR_WORKERS": "1"}
    out = subprocess.run(
        [sys.executable, "-c", PROBE, "analyze", str(big), "--format", "json", "-o", os.devnull],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
        env=env,
    ).stdout
    modules = json.loads(out.strip().splitlines()[-1])["modules"]
    assert "recompile_doctor.parsers._parallel" in modules


def test_every_dataclass_has_its_own_docstring() -> None:
    # GIVEN the package's source, WHEN a class is made a dataclass, THEN it has a docstring:
    # without one, ``dataclass`` writes one from ``inspect.signature``, which for a class
    # without its own __init__ compiles the tokenizer's patterns (4 ms of every start-up)
    import ast

    missing = []
    for path in sorted((ROOT / "recompile_doctor").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.ClassDef)
                and any("dataclass" in ast.unparse(d) for d in node.decorator_list)
                and ast.get_docstring(node) is None
            ):
                missing.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name}")
    assert not missing
