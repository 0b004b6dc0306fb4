"""Shared test helpers: paths, the CLI runner, the JSON schemas, golden files."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
CASES = FIXTURES / "poplar" / "cases"
REAL = FIXTURES / "poplar" / "real"
SCHEMAS = ROOT / "recompile_doctor" / "schemas"
GOLDENS = Path(__file__).resolve().parent / "goldens"


@pytest.fixture(autouse=True)
def _stable_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Pin what changes output: time zone, terminal width, colour."""
    monkeypatch.setenv("TZ", "UTC")
    monkeypatch.setenv("COLUMNS", "100")
    monkeypatch.delenv("NO_COLOR", raising=False)
    yield


def run_cli(*args: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """Run ``recompile-doctor ARGS`` in-process; return (exit code, stdout, stderr)."""
    from recompile_doctor.cli.main import main

    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def schema(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((SCHEMAS / name).read_text())
    return data


def validate_report_json(data: Any) -> None:
    import jsonschema

    jsonschema.validate(data, schema("report.schema.json"))


def golden(name: str, actual: str) -> None:
    """Compare ``actual`` with ``tests/goldens/<name>``; RD_REGEN_GOLDENS=1 rewrites it."""
    path = GOLDENS / name
    if os.environ.get("RD_REGEN_GOLDENS"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(actual, encoding="utf-8")
    assert path.exists(), f"missing golden {path}; run with RD_REGEN_GOLDENS=1"
    assert actual == path.read_text(encoding="utf-8")
