"""Re-capture a few JAX cases with the installed JAX and parse them like the committed ones.

A new JAX release that changes a message shows up here: the same script must give the same
events (compilations, eager operations, cache lookups, recompile reasons and what changed).
Needs JAX: skipped without it (as in CI).  ``RD_JAX_PYTHON=/path/to/python`` runs the
captures with another interpreter that has JAX.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from recompile_doctor.events import (
    CacheLookup,
    CompileFinished,
    CompileStarted,
    FrameworkNote,
    RecompileReason,
    TypedEvent,
)
from recompile_doctor.parsers import ParseCounter, parse_log
from tests.conftest import FIXTURES

JAX_DIR = FIXTURES / "jax"
CASES = [
    "batch_size",
    "weak_type",
    "static_arg",
    "closure_constant",
    "eager_op",
    "persistent_cold",
    "persistent_warm",
    "crossrun/flag_changed/a",
    "crossrun/flag_changed/b",
]


def _python() -> str:
    other = os.environ.get("RD_JAX_PYTHON")
    if other:
        return other
    pytest.importorskip("jax")
    return sys.executable


@pytest.fixture(scope="module")
def recaptured(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The cases re-run from a neutral folder, as the README's commands do."""
    python = _python()
    work = tmp_path_factory.mktemp("capture-jax")
    shutil.copy(JAX_DIR / "capture.py", work / "capture.py")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JAX_", "XLA_"))}
    subprocess.run(
        [python, "capture.py", "out", *CASES],
        cwd=work,
        env=env,
        check=True,
        capture_output=True,
        timeout=600,
    )
    return work / "out"


def _summary(path: Path) -> list[tuple[Any, ...]]:
    """What a log says, without what changes from run to run (times, ids, hashes)."""
    c = ParseCounter(str(path))
    events: list[TypedEvent] = list(parse_log(str(path), c))
    out: list[tuple[Any, ...]] = [("format", c.format, "malformed", c.malformed)]
    for e in events:
        if isinstance(e, CompileStarted):
            out.append(("start", e.key.function, e.key.module, e.key.eager, e.arguments))
        elif isinstance(e, CompileFinished):
            k = e.key
            out.append(("end", k.function if k else None, k.eager if k else None))
        elif isinstance(e, CacheLookup):
            out.append(("lookup", e.store, e.outcome, e.key.function if e.key else None))
        elif isinstance(e, RecompileReason):
            changes = tuple((x.what, x.old, x.new, x.call_site) for x in e.changes)
            out.append(("reason", e.key.function, e.rule, e.call_site, len(e.lines), changes))
        elif isinstance(e, FrameworkNote) and e.note in ("cache-key-flag", "compile-options"):
            out.append(("note", e.note, tuple(sorted(e.detail.items()))))
    return out


@pytest.mark.parametrize("case", CASES)
def test_recapture_gives_the_same_events(recaptured: Path, case: str) -> None:
    # GIVEN a case re-captured with the installed JAX WHEN both logs are parsed
    new = recaptured / case / "run.log"
    assert new.is_file(), f"capture.py wrote no {case}/run.log"
    # THEN the events are those of the committed capture
    assert _summary(new) == _summary(JAX_DIR / case / "run.log")
    # AND the log names no path of the machine it ran on but the capture folder
    text = new.read_text(encoding="utf-8", errors="replace")
    assert str(Path.home()) not in text
