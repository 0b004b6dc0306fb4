"""Shared test helpers: paths, the CLI runner, the JSON schemas, golden files."""

from __future__ import annotations

import importlib
import json
import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import HealthCheck, settings

if TYPE_CHECKING:
    from recompile_doctor.timeline.types import Timeline

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
CASES = FIXTURES / "poplar" / "cases"
REAL = FIXTURES / "poplar" / "real"
SCHEMAS = ROOT / "recompile_doctor" / "schemas"
GOLDENS = Path(__file__).resolve().parent / "goldens"
#: a recorded JAX run and a simulated Poplar run, both with recompilations
JAX_RUN = FIXTURES / "jax" / "growing_shape" / "run.log"
POPLAR_RUN = FIXTURES / "simulated" / "alternating-graphs" / "run.log"

# Speed is measured in benchmarks/, never by a test: no deadline for an example and no
# check of how fast examples are drawn, so that a slow or loaded machine (CI, the suite on
# every core) fails no test for its time.
#: the share of every property test's examples this run draws, in percent: all of them
#: unless RECOMPILE_DOCTOR_EXAMPLES_PERCENT says otherwise (``make test`` draws 35 % against
#: the source and 12 % against the compiled build, which checks that the compiled modules
#: give what the source gives: the Makefile's EXAMPLES and COMPILED_EXAMPLES)
EXAMPLES_PERCENT = int(os.environ.get("RECOMPILE_DOCTOR_EXAMPLES_PERCENT", "100"))


def benchmark_script(name: str) -> Any:
    """The script ``benchmarks/<name>.py``, imported (its folder on the path meanwhile)."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))


def examples(n: int) -> int:
    """The examples a property test written for ``n`` draws in this run."""
    return max(1, n * EXAMPLES_PERCENT // 100)


settings.register_profile(
    "recompile-doctor",
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    max_examples=examples(100),
)
settings.load_profile("recompile-doctor")


def _compiled_run() -> bool:
    """Whether this run imports a compiled build (``make test-compiled``)."""
    from recompile_doctor.compiled_modules import compiled

    return bool(compiled())


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """A compiled build's run skips the tests marked ``pure_only``: they replace a function
    or method of a compiled module (compiled callers call the compiled one), or subclass a
    compiled class (which takes no Python subclass)."""
    if not _compiled_run():
        return
    skip = pytest.mark.skip(reason="patches a module the compiled build compiles")
    for item in items:
        if item.get_closest_marker("pure_only") is not None:
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def _stable_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Pin what changes output: time zone, terminal width, colour."""
    monkeypatch.setenv("TZ", "UTC")
    monkeypatch.setenv("COLUMNS", "100")
    monkeypatch.delenv("NO_COLOR", raising=False)
    yield


@pytest.fixture
def own_tempdir(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """The system's temporary folder, for this test: a folder of its own (what the run
    leaves there can be listed)."""
    temp = tmp_path / "temp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    return temp


def long_jax_log(folder: Path, copies: int) -> Path:
    """The recorded JAX run, repeated: a log of many compilations and events."""
    log = folder / "long.log"
    log.write_text(JAX_RUN.read_text(encoding="utf-8") * copies, encoding="utf-8")
    return log


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


def poplar_prefix(kind: int, sec: int) -> str:
    """A line prefix the Poplar stack writes, at ``sec`` seconds from 2023-04-26 00:00
    (``kind``: 0 TensorFlow local time, 1 Poplar UTC, 2 old Poplar time only, 3 PopTorch,
    4 glog, 5 an invalid stamp, 6 none: the line inherits the time before it, 7 a stamp
    whose hour is not two digits but reads as a number: no prefix at all)."""
    h, m, s = (sec // 3600) % 24, (sec // 60) % 60, sec % 60
    day = 26 + sec // 86400
    if kind == 0:
        return f"2023-04-{day:02d} {h:02d}:{m:02d}:{s:02d}.517107: I tensorflow/x.cc:1109] "
    if kind == 1:
        return f"2023-04-{day:02d}T{h:02d}:{m:02d}:{s:02d}.103248Z PO:ENGINE   3556.3556 I: "
    if kind == 2:
        return f"{h:02d}:{m:02d}:{s:02d}.878 15288 PO:ENGINE   [I] "
    if kind == 3:
        return f"[{h:02d}:{m:02d}:{s:02d}.611] [poptorch:cpp] [info] "
    if kind == 4:
        return f"I0426 {h:02d}:{m:02d}:{s:02d}.535000 3904 x.py:4760] "
    if kind == 5:
        return "2023-13-26T25:00:00.000000Z PO:ENGINE   3556.3556 I: "  # invalid stamp
    if kind == 7:
        return f"2023-04-{day:02d} +1:{m:02d}:{s:02d}.517107: I tensorflow/x.cc:1109] "
    return ""  # no stamp: inherits the time before


def write_poplar_log(
    path: Path, lines: list[tuple[int, int, int, str]], messages: tuple[str, ...]
) -> Path:
    """Write a generated Poplar log to ``path``: per line (prefix kind of
    :func:`poplar_prefix`, its seconds, the index of its message, text glued in front)."""
    text = "".join(
        f"{glue}{poplar_prefix(kind, sec)}{messages[msg]}\n" for kind, sec, msg, glue in lines
    )
    path.write_text(text, encoding="utf-8")
    return path


def assert_same_fingerprints(got: Any, expected: Any) -> None:
    """Two :class:`~recompile_doctor.differ.fingerprint.Fingerprints` of one module agree:
    the same fingerprint per computation, and per instruction (full, parameters, callers,
    root)."""
    assert got.computation_full == expected.computation_full
    for name, cf in expected.computations.items():
        g = got.computations[name]
        assert (g.full, g.params, g.callers, g.root) == (cf.full, cf.params, cf.callers, cf.root)


def limit_line_bytes(mp: pytest.MonkeyPatch, limit: int) -> None:
    """Cut lines at ``limit`` bytes in every reader: the plain reader, the fast path's
    scanner and the text of a line they share (each holds the limit it reads)."""
    from recompile_doctor.parsers import _line_text, _reader, _scan

    for module in (_line_text, _reader, _scan):
        mp.setattr(module, "MAX_LINE_BYTES", limit)


def timeline_of(*paths: Path) -> Timeline:
    """The timeline of the logs at ``paths`` (each read whole, its format found), as the
    analyses get it."""
    from recompile_doctor.parsers import ParseCounter, parse_log
    from recompile_doctor.timeline import TimelineBuilder

    b = TimelineBuilder(None)
    for path in paths:
        for ev in parse_log(str(path), ParseCounter(str(path)), fold=True):
            b.feed(ev)
    return b.finish()
