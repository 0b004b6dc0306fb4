"""``recompile-doctor report``: logs or a saved JSON report in, one HTML page out."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest

from recompile_doctor.cli.main import main

REAL = Path(__file__).resolve().parent.parent / "fixtures" / "poplar" / "real"
#: a real PopTorch/PopART log (ALCF docs) in which a module compiles again
LOG = REAL / "D_alcf_poptorch_popart_poprun.log"


def test_report_writes_one_html_page_with_the_findings(tmp_path: Path) -> None:
    # GIVEN a real log WHEN the report command runs
    out = tmp_path / "r.html"
    rc = main(["report", str(LOG), "-o", str(out)])
    # THEN it succeeds and the page names the finding and its evidence line
    assert rc == 0
    html = out.read_text(encoding="utf-8")
    assert html.startswith("<!DOCTYPE html>")
    assert "recompile-after-warmup" in html
    assert 'id="ev-d-alcf-poptorch-popart-poprun-log-' in html


def test_report_refuses_to_overwrite_without_force(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN an existing file
    out = tmp_path / "r.html"
    out.write_text("keep me")
    # WHEN report would write to it
    rc = main(["report", str(LOG), "-o", str(out)])
    # THEN it refuses with one line and exit 2, and the file is untouched
    assert rc == 2
    err = capsys.readouterr().err
    assert err.strip().count("\n") == 0
    assert f"recompile-doctor: error: {out}: file exists (use --force to overwrite)" in err
    assert out.read_text() == "keep me"
    # AND with --force it overwrites
    assert main(["report", str(LOG), "-o", str(out), "--force"]) == 0
    assert out.read_text().startswith("<!DOCTYPE html>")


def test_default_output_name_is_recompile_report_html(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["report", str(LOG)]) == 0
    assert (tmp_path / "recompile-report.html").is_file()


def test_saved_json_report_is_rerendered_without_the_logs(tmp_path: Path) -> None:
    # GIVEN a report saved with analyze --format json, and the page made from the log
    saved = tmp_path / "saved.json"
    assert main(["analyze", str(LOG), "--format", "json", "-o", str(saved)]) == 0
    direct = tmp_path / "direct.html"
    assert main(["report", str(LOG), "-o", str(direct)]) == 0
    # WHEN the saved report is rendered (the log is no longer needed)
    again = tmp_path / "again.html"
    assert main(["report", str(saved), "-o", str(again)]) == 0
    # THEN it is the same page
    assert again.read_bytes() == direct.read_bytes()


def test_saved_report_and_logs_cannot_be_mixed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    saved = tmp_path / "saved.json"
    assert main(["analyze", str(LOG), "--format", "json", "-o", str(saved)]) == 0
    rc = main(["report", str(saved), str(LOG), "-o", str(tmp_path / "x.html")])
    assert rc == 2
    assert "either logs or one saved JSON report" in capsys.readouterr().err


def test_missing_log_is_one_line_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["report", str(tmp_path / "nope.log"), "-o", str(tmp_path / "x.html")])
    assert rc == 2
    err = capsys.readouterr().err
    assert err.startswith("recompile-doctor: error: ") and "nope.log" in err
    assert "Traceback" not in err
    assert not (tmp_path / "x.html").exists()


def test_html_is_never_written_to_a_terminal(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN stdout is a terminal
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.setattr(sys, "stdout", Tty())
    # WHEN the page is asked for on stdout
    rc = main(["report", str(LOG), "-o", "-"])
    # THEN it refuses
    assert rc == 2
    assert "refusing to write HTML to a terminal" in capsys.readouterr().err


def test_html_goes_to_stdout_when_piped(monkeypatch: pytest.MonkeyPatch) -> None:
    buf = io.BytesIO()

    class Pipe(io.TextIOWrapper):
        def isatty(self) -> bool:
            return False

    monkeypatch.setattr(sys, "stdout", Pipe(buf, encoding="utf-8"))
    assert main(["report", str(LOG), "-o", "-"]) == 0
    assert buf.getvalue().startswith(b"<!DOCTYPE html>")


def test_report_has_help_text() -> None:
    assert main(["report", "--help"]) == 0


def test_analyze_html_writes_the_same_page_as_report(tmp_path: Path) -> None:
    # GIVEN the same log through `analyze --html` and through `report`
    a = tmp_path / "a.html"
    b = tmp_path / "b.html"
    assert main(["analyze", str(LOG), "--html", str(a), "-o", str(tmp_path / "a.txt")]) in (0, 1)
    assert main(["report", str(LOG), "-o", str(b)]) == 0
    # THEN the pages are identical
    assert a.read_bytes() == b.read_bytes()
