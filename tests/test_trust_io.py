"""Never wrong, never silent: inputs that are pipes, broken, huge, strange or hostile."""

from __future__ import annotations

import codecs
import gzip
import os
import threading
from pathlib import Path

import pytest

from recompile_doctor.errors import RecompileDoctorError
from recompile_doctor.parsers import ParseCounter, parse_log
from recompile_doctor.parsers._reader import (
    ReadStats,
    collect_notes,
    iter_lines,
    read_lines_around,
    release_spool,
)
from tests.conftest import CASES, FIXTURES, run_cli

ALT = CASES / "alternating_graphs.log"
KITCHEN = FIXTURES / "simulated" / "kitchen-sink"


def _feed_fifo(fifo: Path, data: bytes) -> threading.Thread:
    """Write ``data`` into the FIFO once (one writer, like ``cat run.log > f &``)."""

    def write() -> None:
        with open(fifo, "wb") as f:
            f.write(data)

    t = threading.Thread(target=write, daemon=True)
    t.start()
    return t


def _run_with_timeout(fn, seconds: float = 20.0):  # type: ignore[no-untyped-def]
    """Run ``fn`` in a thread; fail (instead of hanging the suite) when it blocks."""
    box: dict[str, object] = {}

    def target() -> None:
        try:
            box["value"] = fn()
        except BaseException as e:  # re-raised in the test thread
            box["error"] = e

    t = threading.Thread(target=target, daemon=True)
    t.start()
    t.join(seconds)
    if t.is_alive():
        pytest.fail(f"blocked for more than {seconds} s (reading an input twice?)")
    if "error" in box:
        raise box["error"]  # type: ignore[misc]
    return box.get("value")


# --- item 6: a named pipe is read once --------------------------------------------------


def test_a_fifo_is_read_once_and_context_comes_from_the_private_copy(tmp_path: Path) -> None:
    # GIVEN a named pipe fed once by a writer
    fifo = tmp_path / "f"
    os.mkfifo(fifo)
    data = b"one\ntwo\nthree\nfour\nfive\n"
    _feed_fifo(fifo, data)
    stats = ReadStats()
    # WHEN it is read, then the lines around line 3 are asked for
    lines = _run_with_timeout(lambda: list(iter_lines(str(fifo), stats)))
    ctx = _run_with_timeout(lambda: read_lines_around(str(fifo), {3: 1}))
    # THEN both work without a second writer, and the context is right
    assert [t for _, t in lines] == ["one", "two", "three", "four", "five"]
    assert stats.spooled
    assert ctx == {3: (["two"], "three", ["four"])}
    release_spool(str(fifo))


def test_analyze_of_a_fifo_finishes_with_evidence_context(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN `cat run.log > f & recompile-doctor analyze f`
    fifo = tmp_path / "f"
    os.mkfifo(fifo)
    _feed_fifo(fifo, ALT.read_bytes())
    # WHEN analysed
    code, out, err = _run_with_timeout(
        lambda: run_cli("analyze", str(fifo), "--format", "json", capsys=capsys)
    )
    # THEN it ends, and the findings carry the lines around their evidence
    assert code == 0, err
    import json

    report = json.loads(out)
    evidence = [e for f in report["findings"] for e in f["evidence"]]
    assert evidence and all(e.get("context") for e in evidence)


def test_analyze_lets_go_of_the_private_copy_once_the_context_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN a pipe analysed from Python (a notebook reading many pipes in one process)
    from recompile_doctor import api
    from recompile_doctor.parsers import _reader

    fifo = tmp_path / "f"
    os.mkfifo(fifo)
    _feed_fifo(fifo, ALT.read_bytes())
    import tempfile

    copies: list[object] = []
    real = tempfile.TemporaryFile

    def kept(*args: object, **kwargs: object) -> object:
        f = real(*args, **kwargs)  # type: ignore[call-overload]
        copies.append(f)
        return f

    monkeypatch.setattr(tempfile, "TemporaryFile", kept)
    # WHEN the analysis returns
    report = _run_with_timeout(lambda: api.analyze([str(fifo)]))
    # THEN its findings carry context read from the copy, and the copy is closed (deleted)
    evidence = [e for f in report.findings for e in f.evidence]
    assert evidence and all(e.before or e.after for e in evidence)
    assert len(copies) == 1 and copies[0].closed  # type: ignore[attr-defined]
    assert str(fifo) not in _reader._SPOOLS


def test_stdin_context_is_read_from_the_private_copy(monkeypatch: pytest.MonkeyPatch) -> None:
    import io
    import sys

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"a\nb\nc\n")))
    assert [t for _, t in iter_lines("-")] == ["a", "b", "c"]
    assert read_lines_around("-", {2: 1}) == {2: (["a"], "b", ["c"])}
    release_spool("-")


def test_a_regular_file_is_not_copied(tmp_path: Path) -> None:
    p = tmp_path / "a.log"
    p.write_bytes(b"x\ny\n")
    stats = ReadStats()
    list(iter_lines(str(p), stats))
    assert not stats.spooled


# --- item 8: a killed run's log, UTF-16 logs ------------------------------------------------


def _cut_gzip(tmp_path: Path, lines: int = 2000) -> tuple[Path, bytes]:
    text = b"".join(b"line %d of a killed run\n" % i for i in range(1, lines + 1))
    p = tmp_path / "run.log.gz"
    p.write_bytes(gzip.compress(text)[:-10])  # GIVEN the last 10 bytes are missing
    return p, text


def test_a_gzip_cut_short_yields_what_is_readable_and_says_where(tmp_path: Path) -> None:
    p, text = _cut_gzip(tmp_path)
    stats = ReadStats()
    with collect_notes() as notes:
        got = list(iter_lines(str(p), stats))
    # THEN the readable lines come out, the break is noted (not raised)
    assert got and [t for _, t in got] == text.decode().splitlines()[: len(got)]
    assert stats.truncated is not None and stats.truncated.last_good_line == len(got)
    assert notes == [stats.truncated]
    assert stats.truncated.message() == (
        f"{p}:{len(got)}: gzip stream ends early; analysed the {len(got)} lines before"
    )


@pytest.mark.parametrize("fast", [True, False], ids=["fast", "plain"])
def test_a_gzip_broken_at_its_header_is_named_by_its_first_error(
    tmp_path: Path, fast: bool
) -> None:
    # GIVEN a file that starts with the gzip magic, then plain text (no compression method)
    p = tmp_path / "run.log"
    p.write_bytes(b"\x1f\x8b\n2026-11-22 19:10:38,361 WARNING jax: TRACING CACHE MISS at x.py:1\n")
    c = ParseCounter(str(p))
    # WHEN it is read, by either path
    list(parse_log(str(p), c, fast=fast))
    # THEN the break is gzip's first word on it, not what it says on reading further
    assert c.read.truncated is not None
    assert c.read.truncated.detail == "Unknown compression method"


def test_a_gzip_cut_short_raises_when_strict(tmp_path: Path) -> None:
    p, _ = _cut_gzip(tmp_path)
    with pytest.raises(RecompileDoctorError, match="gzip stream ends early"):
        list(iter_lines(str(p), strict=True))


def test_analyze_of_a_cut_gzip_warns_and_exits_0_or_2_when_strict(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN the log of a killed run: gzip of a real log, the last 10 bytes gone
    p = tmp_path / "run.log.gz"
    p.write_bytes(gzip.compress(ALT.read_bytes())[:-10])
    code, out, err = run_cli("analyze", str(p), capsys=capsys)
    assert code == 0 and "compilation" in out
    assert err.startswith(f"recompile-doctor: warning: {p}:")
    assert "gzip stream ends early; analysed the" in err
    code, out, err = run_cli("analyze", str(p), "--strict", capsys=capsys)
    assert code == 2 and "gzip stream ends early" in err


@pytest.mark.parametrize(
    ("bom", "codec"),
    [
        (codecs.BOM_UTF16_LE, "utf-16-le"),
        (codecs.BOM_UTF16_BE, "utf-16-be"),
        (codecs.BOM_UTF8, "utf-8"),
    ],
)
def test_a_byte_order_mark_selects_the_encoding(tmp_path: Path, bom: bytes, codec: str) -> None:
    p = tmp_path / "win.log"
    p.write_bytes(bom + "caf\u00e9 one\r\ntwo\rstill two\r\nthree".encode(codec))
    stats = ReadStats()
    got = list(iter_lines(str(p), stats))
    assert got == [(1, "caf\u00e9 one"), (2, "two\rstill two"), (3, "three")]
    assert stats.encoding == codec


def test_a_utf16_log_is_analysed_like_the_utf8_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    p = tmp_path / "win.log"
    p.write_bytes(codecs.BOM_UTF16_LE + ALT.read_text(encoding="utf-8").encode("utf-16-le"))
    _, want, _ = run_cli("analyze", str(ALT), "--format", "json", capsys=capsys)
    code, got, _ = run_cli("analyze", str(p), "--format", "json", capsys=capsys)
    assert code == 0
    assert json.loads(got)["summary"] == json.loads(want)["summary"]
    assert json.loads(got)["summary"]["compilations"] > 0


# --- item 7: one bad line never sinks the analysis ----------------------------------------

SIM_LOG = FIXTURES / "simulated" / "alternating-graphs" / "run.log"
HUGE = "9" * 400


def _with_line_edited(tmp_path: Path, old: str, new: str) -> tuple[Path, int]:
    """The real simulated log with the first line that contains ``old`` edited."""
    lines = SIM_LOG.read_text(encoding="utf-8").splitlines(keepends=True)
    n = next(i for i, line in enumerate(lines) if old in line)
    lines[n] = lines[n].replace(old, new, 1)
    p = tmp_path / "run.log"
    p.write_text("".join(lines), encoding="utf-8")
    return p, n + 1


@pytest.mark.parametrize(
    "stamp",
    [
        "2023-13-26T09:00:12.861957Z",
        "2023-04-31T09:00:12.861957Z",
        "2023-04-26 25:00:12.861957:",
        "09:61:00.000 ",
    ],
)
def test_a_prefix_with_an_impossible_time_is_a_problem_not_a_crash(stamp: str) -> None:
    from recompile_doctor.parsers._prefixes import Clock, split_prefix

    line = {
        "Z": f"{stamp} PO:ENGINE   1.1 I: Starting phase: x",
        ":": f"{stamp} I tensorflow/compiler/x.cc:12] msg",
        " ": f"{stamp}1234 PO:ENGINE   [I] msg",
    }[stamp[-1]]
    prefix, msg, _ = split_prefix(line)
    assert prefix.seconds is None and prefix.problem is not None
    assert stamp.strip(" :Z") in prefix.problem
    assert Clock().absolute(prefix) is None  # inherits (nothing yet)
    assert msg in ("Starting phase: x", "msg")


def test_a_log_line_with_a_month_13_is_not_an_internal_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    p, _ = _with_line_edited(tmp_path, "2023-04-26T09:00:12", "2023-13-26T09:00:12")
    code, out, err = run_cli("analyze", str(p), "--format", "json", capsys=capsys)
    assert code == 0 and "internal error" not in err
    import json

    assert json.loads(out)["summary"]["compilations"] > 0


def test_a_log_line_with_a_month_13_counts_as_malformed_and_strict_names_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    # GIVEN the stamp of a known message (the end of engine compilation) names month 13
    p, n = _with_line_edited(tmp_path, "2023-04-26T09:00:36.538779Z", "2023-13-26T09:00:36.538779Z")
    code, out, _ = run_cli("analyze", str(p), "--format", "json", capsys=capsys)
    assert code == 0 and json.loads(out)["parse"]["malformed"] == 1
    code, _, err = run_cli("analyze", str(p), "--strict", capsys=capsys)
    assert code == 2 and f"{p}:{n}:" in err and "internal error" not in err


def test_a_400_digit_duration_is_a_malformed_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    p, n = _with_line_edited(
        tmp_path,
        "Ending phase: engineCompilation (duration ",
        f"Ending phase: engineCompilation (duration {HUGE}",
    )
    code, out, err = run_cli("analyze", str(p), "--format", "json", capsys=capsys)
    assert code == 0 and "internal error" not in err
    assert json.loads(out)["parse"]["malformed"] == 1
    code, _, err = run_cli("analyze", str(p), "--strict", capsys=capsys)
    assert code == 2 and f"{p}:{n}:" in err


@pytest.mark.parametrize(
    ("text", "want"),
    [("12", 12), (" 7 ", 7), ("-3", -3), (HUGE, None), ("1e3", None), ("", None), ("x", None),
     (None, None), ("1" * 16, None), ("١٢", None)],
)  # fmt: skip
def test_safe_int(text: str | None, want: int | None) -> None:
    from recompile_doctor.parsers._prefixes import safe_int

    assert safe_int(text) == want


@pytest.mark.parametrize(
    ("text", "want"),
    [("1.5", 1.5), ("-0.25", -0.25), ("2e3", 2000.0), (HUGE, None), ("1e400", None),
     ("inf", None), ("nan", None), ("Infinity", None), ("", None), (None, None)],
)  # fmt: skip
def test_safe_float(text: str | None, want: float | None) -> None:
    from recompile_doctor.parsers._prefixes import safe_float

    assert safe_float(text) == want


@pytest.mark.parametrize(
    "args", [("--max-size", HUGE), ("--max-size", "1e400"), ("--older-than", HUGE + "d")]
)
def test_an_absurd_prune_limit_is_a_usage_error(
    tmp_path: Path, args: tuple[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "abc.poplar_exec").write_bytes(b"x")
    code, _, err = run_cli("cache", "prune", str(cache), *args, capsys=capsys)
    assert code == 2 and "internal error" not in err
    assert "larger than 8 EiB" in err or "longer than 1000 years" in err or "expected" in err
    assert (cache / "abc.poplar_exec").exists()


# --- items 13 and 15: outputs never touch inputs; only regular files need --force ----------


def _tree_hash(root: Path) -> dict[str, bytes]:
    import hashlib

    if root.is_file():
        return {root.name: hashlib.sha256(root.read_bytes()).digest()}
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).digest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


@pytest.fixture()
def sim(tmp_path: Path) -> Path:
    """A copy of the kitchen-sink run: log, dumps, cache."""
    import shutil

    dst = tmp_path / "run"
    shutil.copytree(KITCHEN, dst)
    return dst


def _dump_file(sim: Path) -> Path:
    return next(p for p in sorted((sim / "dumps").iterdir()) if p.is_file())


def _a_dump_pair(sim: Path) -> tuple[Path, Path]:
    files = sorted(p for p in (sim / "dumps").iterdir() if p.name.endswith(".txt"))
    return files[0], files[1]


@pytest.mark.parametrize(
    ("case", "args", "victim"),
    [
        ("html is the log", lambda s: ["analyze", f"{s}/run.log", "--html", f"{s}/run.log"],
         lambda s: s / "run.log"),
        ("html in the dumps", lambda s: ["analyze", f"{s}/run.log", "--dumps", f"{s}/dumps",
                                         "--html", str(_dump_file(s))], lambda s: s / "dumps"),
        ("-o in the dumps", lambda s: ["analyze", f"{s}/run.log", "--dumps", f"{s}/dumps",
                                       "-o", f"{s}/dumps/new.txt"], lambda s: s / "dumps"),
        ("report in the dumps", lambda s: ["report", f"{s}/run.log", "--dumps", f"{s}/dumps",
                                           "-o", str(_dump_file(s))], lambda s: s / "dumps"),
        ("diff -o in A", lambda s: ["diff", f"{s}/dumps", f"{s}/dumps", "-o",
                                    str(_dump_file(s))], lambda s: s / "dumps"),
        ("diff of files -o A", lambda s: ["diff", str(_a_dump_pair(s)[0]),
                                          str(_a_dump_pair(s)[1]), "-o",
                                          str(_a_dump_pair(s)[0])], lambda s: s / "dumps"),
        ("cache ls -o an entry", lambda s: ["cache", "ls", f"{s}/cache", "-o",
                                            str(next((s / "cache").glob("*.poplar_exec")))],
         lambda s: s / "cache"),
        ("cache ls -o a log", lambda s: ["cache", "ls", f"{s}/cache", "--log", f"{s}/run.log",
                                         "-o", f"{s}/run.log"], lambda s: s / "run.log"),
        ("prune -o in the cache", lambda s: ["cache", "prune", f"{s}/cache", "--keep-newest",
                                             "100", "-o", f"{s}/cache/plan.json"],
         lambda s: s / "cache"),
        ("via a symlink", lambda s: ["analyze", f"{s}/run.log", "-o", f"{s}/link.txt"],
         lambda s: s / "run.log"),
        ("via a hard link", lambda s: ["analyze", f"{s}/run.log", "-o", f"{s}/hard.txt"],
         lambda s: s / "run.log"),
    ],
)  # fmt: skip
def test_no_output_may_be_an_input_or_inside_one_force_or_not(
    sim: Path,
    case: str,
    args,
    victim,
    capsys: pytest.CaptureFixture[str],  # type: ignore[no-untyped-def]
) -> None:
    (sim / "link.txt").symlink_to(sim / "run.log")
    os.link(sim / "run.log", sim / "hard.txt")
    before = _tree_hash(victim(sim))
    code, _, err = run_cli(*args(sim), "--force", capsys=capsys)
    assert code == 2, err
    assert "choose another output" in err and err.count("\n") == 1
    assert "is an input" in err or "is inside an input folder" in err
    assert _tree_hash(victim(sim)) == before
    assert not (sim / "dumps" / "new.txt").exists() and not (sim / "cache" / "plan.json").exists()


def test_stdin_redirected_from_the_output_is_refused(
    sim: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN `analyze - -o in.log --force < in.log`
    import sys

    log = sim / "run.log"
    before = log.read_bytes()
    with open(log, "rb") as f:
        monkeypatch.setattr(sys, "stdin", io_wrapper(f))
        code, _, err = run_cli("analyze", "-", "-o", str(log), "--force", capsys=capsys)
    assert code == 2 and f"{log}: is an input (stdin is read from it)" in err
    assert log.read_bytes() == before


def io_wrapper(f):  # type: ignore[no-untyped-def]
    import io

    return io.TextIOWrapper(f)


def test_the_refusal_names_output_and_input(sim: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = sim / "run.log"
    code, _, err = run_cli("analyze", str(log), "--html", str(log), "--force", capsys=capsys)
    assert code == 2
    assert err == (f"recompile-doctor: error: {log}: is an input ({log}); choose another output\n")


@pytest.mark.parametrize("target", ["/dev/null", "fifo"])
def test_a_device_or_fifo_output_needs_no_force(
    tmp_path: Path, target: str, capsys: pytest.CaptureFixture[str]
) -> None:
    if target == "fifo":
        fifo = tmp_path / "out"
        os.mkfifo(fifo)
        got: list[bytes] = []

        def drain() -> None:
            with open(fifo, "rb") as f:
                got.append(f.read())

        t = threading.Thread(target=drain, daemon=True)
        t.start()
        target = str(fifo)
    code, _, err = _run_with_timeout(
        lambda: run_cli("analyze", str(ALT), "-o", target, "--format", "json", capsys=capsys)
    )
    assert code == 0, err
    if target != "/dev/null":
        t.join(10)
        assert got and got[0].startswith(b"{")


# --- item 12: an unexpected error names the input, and a bug says it is one ----------------


@pytest.mark.pure_only  # (it replaces a function of a compiled module)
def test_a_bug_while_reading_names_the_input_line_and_asks_for_a_report(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import recompile_doctor.parsers.poplar_decoder as parsers

    real = parsers.match_message

    def buggy(msg: str):  # type: ignore[no-untyped-def]
        if "Loading executable" in msg:
            raise ZeroDivisionError("division by zero")
        return real(msg)

    monkeypatch.setattr(parsers, "match_message", buggy)
    lines = ALT.read_text(encoding="utf-8").splitlines()
    n = next(i for i, t in enumerate(lines, 1) if "Loading executable" in t)
    code, out, err = run_cli("analyze", str(ALT), capsys=capsys)
    assert code == 2 and out == ""
    assert err == (
        f"recompile-doctor: internal error: ZeroDivisionError: division by zero "
        f"(while reading {ALT}:{n}) \u2014 this is a bug; please report it with the output "
        "of --debug\n"
    )


def test_a_bug_after_reading_says_so_without_a_stale_position(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import recompile_doctor.api as api

    def buggy(*_a, **_k):  # type: ignore[no-untyped-def]
        raise KeyError("x")

    monkeypatch.setattr(api, "diagnose", buggy)
    code, _, err = run_cli("analyze", str(ALT), capsys=capsys)
    assert code == 2
    assert err.startswith("recompile-doctor: internal error: KeyError: 'x' \u2014 this is a bug")


def test_an_os_error_on_a_file_is_an_input_error_naming_it(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import recompile_doctor.api as api

    def denied(*_a, **_k):  # type: ignore[no-untyped-def]
        raise PermissionError(13, "Permission denied", "/some/dumps/module_0001.txt")

    monkeypatch.setattr(api, "diagnose", denied)
    code, _, err = run_cli("analyze", str(ALT), capsys=capsys)
    assert code == 2
    assert err == "recompile-doctor: error: /some/dumps/module_0001.txt: Permission denied\n"


# --- item 11: a saved report is validated before it is trusted -----------------------------

GOLDEN_REPORT = Path(__file__).parent / "goldens" / "analyze" / "alternating_graphs.log.json"


def _saved(tmp_path: Path, edit) -> Path:  # type: ignore[no-untyped-def]
    import json

    data = json.loads(GOLDEN_REPORT.read_text(encoding="utf-8"))
    edit(data)
    p = tmp_path / "saved.json"
    p.write_text(json.dumps(data), encoding="utf-8")  # allow_nan: writes Infinity, NaN
    return p


def _set(path: str, value: object):  # type: ignore[no-untyped-def]
    """An edit that sets ``a.b[0].c`` in the report."""
    import re

    def edit(data: object) -> None:
        keys: list[str | int] = [
            int(k) if k.isdigit() else k for k in re.findall(r"[^.\[\]]+", path)
        ]
        target = data
        for k in keys[:-1]:
            target = target[k]  # type: ignore[index]
        target[keys[-1]] = value  # type: ignore[index]

    return edit


@pytest.mark.parametrize(
    ("field", "value", "what"),
    [
        ("findings[0].severity", "fatal", "unknown severity 'fatal'"),
        ("summary.compile_seconds", float("inf"), "expected a finite number, not inf"),
        ("summary.load_seconds", float("nan"), "expected a finite number, not nan"),
        ("summary.wasted_seconds", -1.0, "must be 0 or more"),
        ("summary.compilations", 2.5, "expected an integer, not a number"),
        ("summary.loads", True, "expected an integer, not a boolean"),
        ("findings[0].rule", "no-such-rule", "unknown rule id 'no-such-rule'"),
        ("compilations[1].cause", "made-up", "unknown rule id 'made-up'"),
        ("compilations[0].duration_s", 1e300, "is too large"),
        ("compilations[0].cache", "maybe", "unknown cache state 'maybe'"),
        ("findings[0].evidence[0].line", 0, "must be 1 or more"),
        ("findings[0].evidence", "x", "expected a list, not a string"),
        ("events[0].detail", {"duration_ms": float("inf")}, "finite"),
        ("inputs[0].lines", 10**400, "too large"),
        ("parse", None, "expected an object, not null"),
    ],
)
def test_a_bad_field_of_a_saved_report_is_named(
    tmp_path: Path, field: str, value: object, what: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from recompile_doctor.report_check import check_report_json

    p = _saved(tmp_path, _set(field, value))
    import json

    with pytest.raises(RecompileDoctorError) as e:
        check_report_json(json.loads(p.read_text()), str(p))
    assert str(e.value).startswith(f"{p}: field {field.split('.detail')[0]}")
    assert what in str(e.value)
    # AND through the CLI: one line, exit 2, no internal error, no page written
    out = tmp_path / "r.html"
    code, _, err = run_cli("report", str(p), "-o", str(out), capsys=capsys)
    assert code == 2 and err.startswith(f"recompile-doctor: error: {p}: field ")
    assert "internal error" not in err and not out.exists()


def test_a_missing_field_is_named(tmp_path: Path) -> None:
    import json

    from recompile_doctor.report_check import check_report_json

    p = _saved(tmp_path, lambda d: d["findings"][0].pop("severity"))
    with pytest.raises(RecompileDoctorError, match=r"field findings\[0\]\.severity: missing"):
        check_report_json(json.loads(p.read_text()), str(p))


def test_every_golden_report_passes_the_check() -> None:
    import json

    from recompile_doctor.report_check import check_report_json

    for g in sorted(GOLDEN_REPORT.parent.glob("*.json")):
        check_report_json(json.loads(g.read_text(encoding="utf-8")), str(g))


def test_a_fresh_report_of_every_simulated_scenario_passes_the_check(
    capsys: pytest.CaptureFixture[str],
) -> None:
    import json

    from recompile_doctor.report_check import check_report_json

    for d in sorted((FIXTURES / "simulated").iterdir()):
        if (d / "run.log").is_file():
            args = ["analyze", str(d / "run.log"), "--format", "json"]
            if (d / "dumps").is_dir():
                args += ["--dumps", str(d / "dumps")]
            _, out, _ = run_cli(*args, capsys=capsys)
            check_report_json(json.loads(out), str(d))


def test_the_schema_rejects_infinity_too() -> None:
    import json

    import jsonschema

    from tests.conftest import schema

    data = json.loads(GOLDEN_REPORT.read_text(encoding="utf-8"))
    data["summary"]["compile_seconds"] = float("inf")
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(data, schema("report.schema.json"))


# --- item 14: prune never deletes outside the cache it listed -------------------------------


def _cache_with_entries(root: Path, n: int = 6) -> Path:
    import time

    d = root / "cache"
    d.mkdir()
    t = time.time() - 10 * 86400
    for i in range(n):
        f = d / f"{0xABC0 + i:x}.poplar_exec"
        f.write_bytes(b"x" * (100 + i))
        os.utime(f, (t + i, t + i))
    return d


def _look_alikes(src: Path, dst: Path) -> None:
    """Files named, sized and dated like the cache's entries (``cp -p``)."""
    import shutil

    dst.mkdir()
    for f in src.iterdir():
        shutil.copy2(f, dst / f.name)


def test_prune_after_the_folder_was_swapped_for_a_symlink_deletes_nothing(
    tmp_path: Path,
) -> None:
    from recompile_doctor.cache import index
    from recompile_doctor.cache_prune import Criteria, apply, plan

    cache = _cache_with_entries(tmp_path)
    p = plan(index(str(cache)), Criteria(older_than_s=86400.0))
    assert len(p.remove) == 6
    # WHEN, between listing and deleting, the folder is swapped for a symlink to look-alikes
    decoy = tmp_path / "precious"
    _look_alikes(cache, decoy)
    cache.rename(tmp_path / "cache.moved")
    cache.symlink_to(decoy)
    apply(p)
    # THEN nothing outside the listed folder is removed, and the failure is reported
    assert sorted(f.name for f in decoy.iterdir()) == sorted(s.entry.file for s in p.remove)
    assert not p.removed and len(p.failed) == 6
    assert all("replaced since it was listed" in (s.why_skipped or "") for s in p.skipped)


def test_prune_skips_an_entry_swapped_for_a_symlink_or_another_file(tmp_path: Path) -> None:
    import shutil

    from recompile_doctor.cache import index
    from recompile_doctor.cache_prune import Criteria, apply, plan

    cache = _cache_with_entries(tmp_path, 3)
    outside = tmp_path / "outside.poplar_exec"
    p = plan(index(str(cache)), Criteria(older_than_s=86400.0))
    a, b, c = (s.entry.file for s in p.remove)
    # WHEN one entry becomes a symlink to a file elsewhere, another a copy with the same
    # size and time (another inode)
    shutil.copy2(cache / a, outside)
    (cache / a).unlink()
    (cache / a).symlink_to(outside)
    shutil.copy2(cache / b, tmp_path / "copy")
    os.replace(tmp_path / "copy", cache / b)
    apply(p)
    assert outside.exists() and (cache / a).is_symlink() and (cache / b).exists()
    assert [s.entry.file for s in p.removed] == [c]
    why = {s.entry.file: s.why_skipped for s in p.skipped}
    assert why == {a: "not a regular file", b: "changed since it was listed"}


def test_prune_swap_while_waiting_on_the_unused_by_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN prune reads an --unused-by log (a pipe it waits on) after listing the cache
    import recompile_doctor.cache as cache_mod

    cache = _cache_with_entries(tmp_path)
    decoy = tmp_path / "precious"
    log = tmp_path / "run.log"
    log.write_bytes((KITCHEN / "run.log").read_bytes())
    real_read_usage = cache_mod.read_usage

    def swap_then_read(logs):  # type: ignore[no-untyped-def]
        _look_alikes(cache, decoy)
        cache.rename(tmp_path / "cache.moved")
        cache.symlink_to(decoy)
        return real_read_usage(logs)

    monkeypatch.setattr(cache_mod, "read_usage", swap_then_read)
    code, _, err = run_cli(
        "cache", "prune", str(cache), "--unused-by", str(log), "--yes", capsys=capsys
    )
    # THEN the look-alikes survive and the command says it removed nothing
    assert len(list(decoy.iterdir())) == 6
    assert code == 2 and "could not be removed" in err


# --- item 9: HLO with a header or an instruction wrapped over many lines parses in linear time


def _wrapped_header_module(n: int) -> str:
    params = ",\n".join("f32[2]{0}" for _ in range(n))
    return (
        f"HloModule m, entry_computation_layout={{({params}\n)->f32[2]{{0}}}}\n\n"
        "ENTRY main {\n  ROOT p = f32[2]{0} parameter(0)\n}\n"
    )


def _wrapped_constant_module(n: int) -> str:
    values = ",\n".join(str(i) for i in range(n))
    return f"HloModule m\n\nENTRY main {{\n  ROOT c = s32[{n}]{{0}} constant({{{values}}})\n}}\n"


@pytest.mark.parametrize("make", [_wrapped_header_module, _wrapped_constant_module])
def test_wrapped_constructs_are_tokenized_a_bounded_number_of_times(
    make,
    monkeypatch: pytest.MonkeyPatch,  # type: ignore[no-untyped-def]
) -> None:
    """Linear, not quadratic: the characters tokenized stay within a small multiple of the
    text, whatever the number of wrapped lines (20,000 here)."""
    from recompile_doctor.parsers.hlo import _parser, parse_hlo

    text = make(20_000)
    seen = [0]
    real = _parser.tokenize

    def counting(s: str) -> list[str]:
        seen[0] += len(s)
        return real(s)

    monkeypatch.setattr(_parser, "tokenize", counting)
    m = parse_hlo(text, "wrapped.txt")
    assert m.name == "m" and m.entry == "main"
    assert seen[0] <= 4 * len(text)


def test_a_wrapped_header_keeps_its_whole_value() -> None:
    from recompile_doctor.parsers.hlo import parse_hlo

    m = parse_hlo(_wrapped_header_module(3), "h.txt")
    assert m.attrs["entry_computation_layout"] == "{(f32[2]{0},f32[2]{0},f32[2]{0})->f32[2]{0}}"


def test_an_unclosed_wrapped_header_is_an_error_at_its_line() -> None:
    from recompile_doctor.parsers.hlo import parse_hlo

    text = "HloModule m, entry_computation_layout={(f32[2]{0},\nf32[2]{0}\n"
    with pytest.raises(RecompileDoctorError) as e:
        parse_hlo(text, "h.txt")
    assert str(e.value).startswith("h.txt:") and "open bracket" in str(e.value)


# --- item 10: deep shapes and huge numbers in HLO are clean errors ---------------------------

HUGE_HLO_NUMBER = "9" * 400


def _module(root: str) -> str:
    return f"HloModule m\n\nENTRY main {{\n  ROOT {root}\n}}\n"


@pytest.mark.parametrize(
    ("root", "col", "what"),
    [
        ("p = " + "(" * 500 + "f32[2]{0}" + ")" * 500 + " parameter(0)", None,
         "shape nested more than 100 levels deep"),
        (f"p = f32[{HUGE_HLO_NUMBER}]{{0}} parameter(0)", 12,
         "expected an int64 dimension size"),
        (f"p = f32[{'9' * 5000}]{{0}} parameter(0)", 12, "expected an int64 dimension size"),
        (f"p = f32[2]{{0}} parameter({HUGE_HLO_NUMBER})", 32,
         "expected a parameter number (an int64)"),
        (f"p = f32[2]{{0}} parameter({'9' * 5000})", 32, "expected a parameter number"),
    ],
)  # fmt: skip
def test_deep_or_huge_hlo_is_a_clean_error_at_its_place(
    root: str, col: int | None, what: str
) -> None:
    from recompile_doctor.parsers.hlo import parse_hlo

    with pytest.raises(RecompileDoctorError) as e:
        parse_hlo(_module(root), "m.txt")
    assert e.value.path == "m.txt" and e.value.line == 4
    assert col is None or e.value.col == col
    assert what in e.value.message and len(str(e.value)) < 400


def test_a_tuple_100_levels_deep_still_parses() -> None:
    from recompile_doctor.parsers.hlo import parse_hlo

    m = parse_hlo(_module("p = " + "(" * 100 + "f32[2]{0}" + ")" * 100 + " parameter(0)"), "m")
    assert m.computations["main"].instructions[0].shape.is_tuple


def test_huge_metadata_numbers_are_dropped_not_fatal() -> None:
    from recompile_doctor.parsers.hlo import parse_hlo

    root = f'p = f32[2]{{0}} parameter(0), metadata={{op_name="a" source_line={"9" * 5000}}}'
    ins = parse_hlo(_module(root), "m").computations["main"].instructions[0]
    assert ins.metadata.op_name == "a" and ins.metadata.source_line is None


def test_diff_of_a_deep_shape_is_exit_2_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = tmp_path / "a.txt"
    a.write_text(_module("p = " + "(" * 5000 + "f32[2]{0}" + ")" * 5000 + " parameter(0)"))
    b = tmp_path / "b.txt"
    b.write_text(_module("p = f32[2]{0} parameter(0)"))
    code, _, err = run_cli("diff", str(a), str(b), capsys=capsys)
    assert code == 2 and err.startswith(f"recompile-doctor: error: {a}:4:")
    assert "internal error" not in err


def test_stdin_redirected_from_a_file_gets_evidence_context(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import io
    import json
    import sys

    with open(ALT, "rb") as f:
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(f))
        code, out, _ = run_cli("analyze", "-", "--format", "json", capsys=capsys)
    evidence = [e for x in json.loads(out)["findings"] for e in x["evidence"]]
    assert code == 0 and evidence and all(e.get("context") for e in evidence)
    release_spool("-")


def test_a_corrupt_gzip_hlo_is_a_one_line_error(tmp_path: Path) -> None:
    from recompile_doctor.parsers.hlo import parse_hlo_file

    data = gzip.compress(_module("p = f32[2]{0} parameter(0)").encode() * 50)
    p = tmp_path / "m.txt.gz"
    p.write_bytes(data[:12] + bytes([data[12] ^ 0xFF]) + data[13:])  # GIVEN a damaged stream
    with pytest.raises(RecompileDoctorError) as e:
        parse_hlo_file(p)
    assert str(e.value).startswith(f"{p}: bad gzip data")
