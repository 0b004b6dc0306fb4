"""Optional: re-run fixtures/torch/capture.py for a few cheap cases and check that a fresh
capture decodes to the same compilations and recompile reasons as the stored one.

GIVEN torch (in this interpreter, or the one named by RD_TORCH_PYTHON, e.g.
/opt/rd-venvs/torch/bin/python), WHEN a case is captured again from a neutral temporary
folder, THEN its text log and trace give the same frames, compile ids, rules and (apart from
object ids) the same old -> new values as the fixture.  Skipped without torch.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from recompile_doctor.events import CompileStarted, RecompileReason
from recompile_doctor.parsers import ParseCounter, parse_log

ROOT = Path(__file__).resolve().parent.parent / "fixtures" / "torch"
CHEAP_CASES = ["dtype", "specialized_int", "module_recreated"]


def _python() -> str:
    given = os.environ.get("RD_TORCH_PYTHON")
    if given:
        return given
    pytest.importorskip("torch")
    return sys.executable


def _summary(paths: list[Path]) -> tuple[Counter[str | None], list[tuple[object, ...]]]:
    frames: Counter[str | None] = Counter()
    reasons: list[tuple[object, ...]] = []
    for p in paths:
        c = ParseCounter(str(p))
        for e in parse_log(str(p), c):
            if isinstance(e, CompileStarted):
                frames[e.key.function] += 1
            elif isinstance(e, RecompileReason):
                ch = e.changes[0] if e.changes else None
                ids = e.rule == "object-recreated"  # object ids differ from run to run
                values = (ch.what, ch.old, ch.new) if ch and not ids else (ch.what if ch else None,)
                reasons.append((e.rule, e.key.compile_id, e.key.function, *values))
        assert c.malformed == 0, p
    return frames, sorted(reasons, key=repr)


def _inputs(case_dir: Path) -> tuple[list[Path], list[Path]]:
    return [case_dir / "run.log"], sorted((case_dir / "trace").iterdir())


@pytest.fixture(scope="module")
def recaptured(tmp_path_factory: pytest.TempPathFactory) -> Path:
    python = _python()
    work = tmp_path_factory.mktemp("capture")
    shutil.copy(ROOT / "capture.py", work / "capture.py")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TORCH_", "PYTORCH_"))}
    proc = subprocess.run(
        [python, "capture.py", "out", *CHEAP_CASES],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return work / "out"


@pytest.mark.parametrize("case", CHEAP_CASES)
def test_a_fresh_capture_decodes_like_the_fixture(case: str, recaptured: Path) -> None:
    fresh_log, fresh_trace = _inputs(recaptured / case)
    old_log, old_trace = _inputs(ROOT / case)
    assert _summary(fresh_log) == _summary(old_log)
    assert _summary(fresh_trace) == _summary(old_trace)
