"""Every subcommand has help text and is documented in the README."""

from __future__ import annotations

import sys

import pytest

from recompile_doctor import __version__, compiled_modules
from recompile_doctor.cli.main import cli
from recompile_doctor.compiled_modules import compiled
from recompile_doctor.matcher_choice import has_hyperscan, has_native_scan
from recompile_doctor.parsers._spans import native_in_use
from tests.conftest import ROOT, run_cli

COMMANDS = sorted(cli.commands)


def test_the_documented_commands_exist() -> None:
    assert {"analyze", "diff", "report", "simulate", "scenarios", "demo"} <= set(COMMANDS)


@pytest.mark.parametrize("name", COMMANDS)
def test_every_subcommand_has_help_and_is_in_the_readme(
    name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run_cli(name, "--help", capsys=capsys)
    assert code == 0 and out.startswith("Usage: recompile-doctor " + name)
    assert "--debug" in out and "--no-color" in out
    assert (cli.commands[name].help or "").strip()
    assert f"recompile-doctor {name}" in (ROOT / "README.md").read_text()


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli("--version", capsys=capsys)
    assert code == 0 and out.startswith(f"recompile-doctor, version {__version__}\n")
    # the matcher big logs are read with: the C scan where the C module is built (hyperscan
    # after buffers of few candidates, where its wheel imports), else hyperscan or bytes.find
    if has_native_scan():
        expected = "the C scan; hyperscan " if has_hyperscan() else "the C scan (hyperscan is not"
    else:
        expected = "hyperscan " if has_hyperscan() else "bytes.find ("
    assert out.splitlines()[1].startswith("log matcher: " + expected)
    # and the build: pure, or compiled with mypyc (`make compiled`)
    build = "compiled with mypyc (" if compiled() else "pure Python, "
    assert out.splitlines()[2].startswith("build: " + build)
    # and where the scanner does its byte work: in C where the C module is built
    native = "in C" if native_in_use() is not None else "in Python ("
    assert f"the scanner's byte work {native}" in out.splitlines()[2]


def test_version_names_the_fallback_matcher_and_how_to_get_hyperscan(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """GIVEN no hyperscan wheel WHEN --version runs THEN it says the log reader falls back
    to bytes.find, and how to install the faster matcher (a slow run can be traced to it)."""
    monkeypatch.setitem(sys.modules, "hyperscan", None)  # import hyperscan: ImportError
    monkeypatch.setenv("RECOMPILE_DOCTOR_NATIVE", "0")  # (nor the C scan)
    assert not has_hyperscan() and not has_native_scan()
    code, out, _ = run_cli("--version", capsys=capsys)
    assert code == 0
    assert out.splitlines()[1] == (
        "log matcher: bytes.find (hyperscan is not installed; "
        "pip install 'recompile-doctor[fast]' reads big logs faster)"
    )
    # with the C module but no hyperscan: the C scan, and what hyperscan would add
    monkeypatch.delenv("RECOMPILE_DOCTOR_NATIVE")
    if has_native_scan():
        code, out, _ = run_cli("--version", capsys=capsys)
        assert out.splitlines()[1] == (
            "log matcher: the C scan (hyperscan is not installed; pip install "
            "'recompile-doctor[fast]' reads logs with few candidate lines faster)"
        )


def test_version_says_where_the_scanner_does_its_byte_work(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """GIVEN the scanner's C module turned off, or not built (no C compiler at install)
    WHEN --version runs THEN its build line says the byte work is done in Python, and why."""
    monkeypatch.setenv("RECOMPILE_DOCTOR_NATIVE", "0")
    code, out, _ = run_cli("--version", capsys=capsys)
    assert code == 0
    assert "the scanner's byte work in Python (RECOMPILE_DOCTOR_NATIVE=0)" in out
    monkeypatch.delenv("RECOMPILE_DOCTOR_NATIVE")
    monkeypatch.setattr(compiled_modules, "native_built", lambda: False)
    code, out, _ = run_cli("--version", capsys=capsys)
    assert "the scanner's byte work in Python (no C compiler when it was installed)" in out


def test_readme_lists_every_rule() -> None:
    """GIVEN the rule catalogue WHEN the README is read THEN its rule table is the one
    rules.py generates (one vocabulary: no rule added or reworded in only one place)."""
    from recompile_doctor.rules import RULES, markdown_table

    readme = (ROOT / "README.md").read_text()
    assert markdown_table() in readme
    for rule_id in RULES:
        assert f"`{rule_id}`" in readme


def test_schema_rule_enum_is_the_catalogue() -> None:
    """GIVEN the report schema WHEN its rule enum is read THEN it is exactly rules.py's ids."""
    import json

    from recompile_doctor.rules import RULE_IDS

    schema = json.loads((ROOT / "recompile_doctor/schemas/report.schema.json").read_text())
    enum = schema["properties"]["findings"]["items"]["properties"]["rule"]["enum"]
    assert sorted(enum) == sorted(RULE_IDS)


def test_diff_schema_names_only_catalogue_rules() -> None:
    """GIVEN the diff schema WHEN its rule enums are read THEN every id is in rules.py."""
    import json

    from recompile_doctor.rules import RULE_IDS

    schema = (ROOT / "recompile_doctor/schemas/diff.schema.json").read_text()
    found: set[str] = set()

    def walk(node: object) -> None:
        if isinstance(node, dict):
            for k, v in node.items():
                if k == "enum" and all(isinstance(x, str) and "-" in x for x in v):
                    found.update(v)
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(json.loads(schema))
    assert found and found <= set(RULE_IDS), found - set(RULE_IDS)
