"""The command line's process leaves its objects to the interpreter's exit without having the
collector scan them all once more (``gc_pause.leave_the_rest_to_exit``); a library call, or
``main`` called in process, leaves the host's collector as it was.

GIVEN the console script's entry run in a fresh interpreter, WHEN it ends (an analysis that
finds a recompilation, a bad input), THEN its objects were frozen before the interpreter's
exit, its output and exit code are whole; and GIVEN ``main`` called in process, THEN nothing
is frozen.
"""

from __future__ import annotations

import gc
import os
import subprocess
import sys
from pathlib import Path

from recompile_doctor.cli.main import main

ROOT = Path(__file__).resolve().parent.parent
LOG = ROOT / "fixtures" / "jax" / "growing_shape" / "run.log"

#: the console script's entry, with what the collector holds frozen written at exit (atexit
#: runs before the interpreter's last collection)
ENTRY = (
    "import atexit, gc, sys\n"
    "atexit.register(lambda: sys.stderr.write(f'frozen={gc.get_freeze_count()}\\n'))\n"
    "from recompile_doctor.cli.main import run\n"
    "sys.argv[0] = 'recompile-doctor'\n"
    "run()\n"
)


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    return subprocess.run(
        [sys.executable, "-c", ENTRY, *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=120,
        check=False,
    )


def _frozen(stderr: str) -> int:
    lines = [x for x in stderr.splitlines() if x.startswith("frozen=")]
    assert len(lines) == 1, stderr
    return int(lines[0].removeprefix("frozen="))


def test_the_command_line_freezes_its_objects_before_it_exits_and_keeps_its_output() -> None:
    got = _run("analyze", str(LOG), "--format", "json")
    assert got.returncode == 0, got.stderr
    assert got.stdout.lstrip().startswith("{") and got.stdout.rstrip().endswith("}")
    assert '"findings"' in got.stdout
    assert _frozen(got.stderr) > 10_000  # (the modules' objects, at least)


def test_a_failing_command_keeps_its_exit_code_and_message() -> None:
    got = _run("analyze", str(LOG.parent / "no-such.log"))
    assert got.returncode == 2
    assert "no-such.log" in got.stderr
    assert _frozen(got.stderr) > 0


def test_main_in_process_freezes_nothing(tmp_path: Path) -> None:
    before = gc.get_freeze_count()
    assert main(["analyze", str(LOG), "--format", "json", "-o", str(tmp_path / "r.json")]) == 0
    assert gc.get_freeze_count() == before
