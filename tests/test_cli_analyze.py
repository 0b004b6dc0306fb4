"""``recompile-doctor analyze`` as a user runs it: formats, exit codes, errors, colour."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import CASES, REAL, golden, run_cli, validate_report_json

ALT = str(CASES / "alternating_graphs.log")
HEALTHY = str(CASES / "healthy_second_run.log")


def test_text_output_starts_with_a_summary_line(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli("analyze", ALT, capsys=capsys)
    assert code == 0 and err == ""
    first = out.splitlines()[0]
    assert first.startswith("recompile-doctor: 2 compilations, 0 after warm-up, 1 cause")
    assert "executable-switching" in out and "\x1b[" not in out  # no colour off a tty


@pytest.mark.parametrize(
    "case", ["alternating_graphs.log", "healthy_second_run.log", "partial_batch_no_dumps.log"]
)
@pytest.mark.parametrize("fmt", ["text", "json", "markdown"])
def test_goldens(
    case: str, fmt: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(CASES.parent.parent.parent)  # paths in output relative to the repo
    code, out, _ = run_cli(
        "analyze", f"fixtures/poplar/cases/{case}", "--format", fmt, capsys=capsys
    )
    assert code == 0
    golden(f"analyze/{case}.{ {'text': 'txt', 'json': 'json', 'markdown': 'md'}[fmt] }", out)


@pytest.mark.parametrize(
    "case", sorted(p.name for p in CASES.glob("*.log")) + sorted(p.name for p in REAL.glob("*.log"))
)
def test_every_json_output_validates_against_the_schema(
    case: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = CASES / case if (CASES / case).exists() else REAL / case
    code, out, _ = run_cli("analyze", str(path), "--format", "json", capsys=capsys)
    assert code == 0
    data = json.loads(out)
    validate_report_json(data)
    assert data["schema"] == "recompile-doctor/report/1"


def test_output_file_format_from_suffix_and_no_overwrite(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "report.json"
    code, stdout, _ = run_cli("analyze", ALT, "-o", str(out), capsys=capsys)
    assert code == 0 and stdout == ""
    validate_report_json(json.loads(out.read_text()))
    code, _, err = run_cli("analyze", ALT, "-o", str(out), capsys=capsys)
    assert code == 2 and "file exists (use --force to overwrite)" in err
    assert run_cli("analyze", ALT, "-o", str(out), "--force", capsys=capsys)[0] == 0
    md = tmp_path / "r.md"
    run_cli("analyze", ALT, "-o", str(md), capsys=capsys)
    assert md.read_text().startswith("# recompile-doctor report")


def test_refuses_to_overwrite_its_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "run.log"
    log.write_bytes((CASES / "alternating_graphs.log").read_bytes())
    before = log.read_bytes()
    code, _, err = run_cli(
        "analyze", str(log), "-o", str(log), "--force", "--format", "text", capsys=capsys
    )
    assert code == 2 and f"{log}: is an input ({log}); choose another output" in err
    assert log.read_bytes() == before


@pytest.mark.parametrize(
    ("fail_on", "log", "code"),
    [
        ("warning", ALT, 1),
        ("error", ALT, 0),
        ("info", HEALTHY, 0),
        ("info", str(CASES / "healthy_first_run.log"), 1),
        (None, ALT, 0),
        ("warning", str(CASES / "precompile_no_cache_path.log"), 1),
    ],
)
def test_fail_on_gates_ci(
    fail_on: str | None, log: str, code: int, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["analyze", log] + (["--fail-on", fail_on] if fail_on else [])
    assert run_cli(*args, capsys=capsys)[0] == code


def test_quiet_prints_nothing_on_success(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli("analyze", HEALTHY, "-q", capsys=capsys) == (0, "", "")
    code, out, _ = run_cli("analyze", ALT, "-q", capsys=capsys)
    assert code == 0 and "executable-switching" in out


def test_gzip_and_stdin(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    gz = tmp_path / "run.log.gz"
    gz.write_bytes(gzip.compress((CASES / "alternating_graphs.log").read_bytes()))
    code, out, _ = run_cli("analyze", str(gz), "--format", "json", capsys=capsys)
    assert json.loads(out)["summary"]["loads"] == 8
    import io

    monkeypatch.setattr(
        sys, "stdin", io.TextIOWrapper(io.BytesIO((CASES / "alternating_graphs.log").read_bytes()))
    )
    code, out, _ = run_cli("analyze", "-", "--format", "json", capsys=capsys)
    assert code == 0
    data = json.loads(out)
    assert data["inputs"][0]["path"] == "-" and data["summary"]["loads"] == 8


@pytest.mark.parametrize(
    ("setup", "expect"),
    [
        (lambda d: d / "nope.log", "nope.log: no such file"),
        (lambda d: d, ": is a directory"),
        (lambda d: _w(d / "e.log", b""), "e.log: empty input"),
    ],
)
def test_bad_input_is_one_line_exit_2_no_traceback(
    tmp_path: Path, setup, expect: str, capsys: pytest.CaptureFixture[str]
) -> None:  # type: ignore[no-untyped-def]
    code, out, err = run_cli("analyze", str(setup(tmp_path)), capsys=capsys)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("recompile-doctor: error: ")
    assert expect in err and "Traceback" not in err


def test_strict_fails_on_a_malformed_known_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    p = _w(tmp_path / "m.log", b"ok\nBegin XLA compilation: cluster_1 (Hash: 0x\n")
    assert run_cli("analyze", str(p), capsys=capsys)[0] == 0
    code, _, err = run_cli("analyze", str(p), "--strict", capsys=capsys)
    assert code == 2 and f"{p}:2: malformed compile-begin line" in err


def test_usage_errors_are_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli("analyze", ALT, "--format", "yaml", capsys=capsys)
    assert code == 2 and err.startswith("recompile-doctor: error:") and err.count("\n") == 1
    code, _, err = run_cli("analyze", ALT, "--warmup", "soon", capsys=capsys)
    assert code == 2 and "--warmup" in err


def test_help_everywhere(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli("--help", capsys=capsys)
    assert code == 0 and "analyze" in out
    code, out, _ = run_cli("analyze", "--help", capsys=capsys)
    assert code == 0 and "--fail-on" in out and "--dumps" in out


def test_colour_only_on_a_tty_and_never_with_no_color() -> None:
    from recompile_doctor.cli._common import use_color

    class Tty:
        def isatty(self) -> bool:
            return True

    assert use_color(False, Tty())  # type: ignore[arg-type]
    assert not use_color(True, Tty())  # type: ignore[arg-type]
    import os

    os.environ["NO_COLOR"] = "1"
    try:
        assert not use_color(False, Tty())  # type: ignore[arg-type]
    finally:
        del os.environ["NO_COLOR"]


def test_debug_shows_the_traceback(tmp_path: Path) -> None:
    r = subprocess.run(
        [sys.executable, "-m", "recompile_doctor", "analyze", str(tmp_path / "x.log"), "--debug"],
        capture_output=True,
        text=True,
    )
    assert r.returncode != 0 and "Traceback" in r.stderr and "RecompileDoctorError" in r.stderr
    r = subprocess.run(
        [sys.executable, "-m", "recompile_doctor", "analyze", str(tmp_path / "x.log")],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 2 and "Traceback" not in r.stderr


def _w(p: Path, data: bytes) -> Path:
    p.write_bytes(data)
    return p


def test_progress_bar_only_for_big_inputs_on_a_tty(monkeypatch: pytest.MonkeyPatch) -> None:
    from recompile_doctor.cli import _progress

    # GIVEN a small input: no bar, even on a terminal
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    with _progress.progress_for([ALT]) as cb:
        assert cb is None
    # GIVEN a "big" input on a terminal: a callback that drives the bar
    monkeypatch.setattr(_progress, "PROGRESS_MIN_BYTES", 10)
    with _progress.progress_for([ALT]) as cb:
        assert cb is not None
        cb(ALT, 100)
    # GIVEN stderr is not a terminal: no bar
    monkeypatch.setattr(sys.stderr, "isatty", lambda: False)
    with _progress.progress_for([ALT]) as cb:
        assert cb is None


def test_missing_dump_folder_is_reported_before_parsing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run_cli("analyze", ALT, "--dumps", str(tmp_path / "nope"), capsys=capsys)
    assert code == 2 and err.strip().endswith("nope: no such directory")
    code, _, err = run_cli("analyze", ALT, "--dumps", ALT, capsys=capsys)
    assert code == 2 and "not a directory" in err


def test_a_log_with_no_compile_messages_gets_a_hint(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN a JAX log without any compile message WHEN analyzed THEN say how to log JAX's
    log = _w(
        tmp_path / "jax.log",
        b"W0610 23:50:26.227175 dispatch.py:205] Finished tracing f for jit in 0.05 sec\n",
    )
    code, out, _ = run_cli("analyze", str(log), capsys=capsys)
    assert code == 0 and "no compilation activity recognized" in out
    assert "hint: No compilation was found" in out and "JAX_LOG_COMPILES=1" in out


@pytest.mark.parametrize("dest", [[], ["-o", "/dev/stdout"]])
def test_a_reader_that_stops_early_gets_no_error(dest: list[str]) -> None:
    # GIVEN the report's reader has gone (`| head` exited), WHEN analyze writes to stdout,
    # by default or as -o /dev/stdout, THEN it stops quietly, as command-line tools do
    log = REAL / "B_technote_lines.log"
    r, w = os.pipe()
    os.close(r)
    try:
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "recompile_doctor",
                "analyze",
                str(log),
                "--format",
                "json",
                *dest,
            ],
            stdout=w,
            stderr=subprocess.PIPE,
            text=True,
            check=False,
        )
    finally:
        os.close(w)
    assert proc.stderr == ""
    assert proc.returncode in (0, 1)


def test_verbose_says_where_the_time_went(tmp_path: Path) -> None:
    # GIVEN two logs analyzed with -v, THEN stderr says, per log, how long it took to read
    # and what was read (the report's own counts), then the analyses' time, then the
    # report's; without -v nothing of it
    import re

    out = tmp_path / "r.json"
    cmd = [sys.executable, "-m", "recompile_doctor", "analyze", ALT, HEALTHY, "-o", str(out)]
    r = subprocess.run([*cmd, "-v"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    rep = json.loads(out.read_text())
    said = [x.removeprefix("recompile-doctor: INFO: ") for x in r.stderr.splitlines()]
    read = re.compile(
        r"(.+): read in [\d.]+ s: ([\d,]+) lines, [\d.]+ MB(, \d+ MB/s)?; "
        r"([\d,]+) recognized, ([\d,]+) malformed"
    )
    reads = [m for x in said if (m := read.fullmatch(x)) is not None]
    assert [m[1] for m in reads] == [i["path"] for i in rep["inputs"]]
    assert [int(m[2].replace(",", "")) for m in reads] == [i["lines"] for i in rep["inputs"]]
    assert sum(int(m[4].replace(",", "")) for m in reads) == rep["parse"]["recognized"]
    n = rep["summary"]["compilations"]
    assert any(
        re.fullmatch(
            rf"{re.escape(ALT)} and 1 more log: timeline and analyses: {n} compilations?, "
            r"\d+ findings? in [\d.]+ s",
            x,
        )
        for x in said
    ), said
    assert re.fullmatch(r"report \(json\) written in [\d.]+ s", said[-1]), said
    out.unlink()
    quiet = subprocess.run(cmd, capture_output=True, text=True)
    assert quiet.returncode == 0 and quiet.stderr == ""
