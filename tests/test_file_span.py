"""A span of a file copied to another (``read_at.copy_span``): by the system where the
output is a file descriptor it writes to (a file, a pipe), else read and written; in order
with what the output was given before and after it; the rest written as read when the
system's copy stops half way; a span past the file's end an error, a closed pipe a
BrokenPipeError; the source file's offset never moved.  And the command line's JSON,
whose events' text is such a span, the same whether written to a file, a pipe or a
stream of the test's."""

from __future__ import annotations

import errno
import io
import os
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import IO, Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from recompile_doctor import read_at
from recompile_doctor.read_at import FileSpan, copy_span, span_pieces
from tests.conftest import examples, long_jax_log

DATA = bytes(range(256)) * 40 + b"end"


@pytest.fixture
def source(tmp_path: Path) -> IO[bytes]:
    f = open(tmp_path / "src.bin", "w+b")  # noqa: SIM115 - closed below
    f.write(DATA)
    f.flush()
    f.seek(7)  # (an offset of its own, which no copy moves)
    yield f
    f.close()


@settings(max_examples=examples(100), deadline=None)
@given(a=st.integers(0, len(DATA)), n=st.integers(0, len(DATA)), size=st.integers(1, 5000))
def test_a_span_copied_to_a_file_is_its_bytes_in_order(a: int, n: int, size: int) -> None:
    n = min(n, len(DATA) - a)
    with tempfile.TemporaryFile() as f, tempfile.TemporaryFile() as o:
        f.write(DATA)
        f.flush()
        f.seek(7)
        o.write(b"head")  # (buffered, not yet written: the copy flushes it first)
        copy_span(FileSpan(f, a, n), o, size)
        o.write(b"tail")
        assert f.tell() == 7
        o.seek(0)
        assert o.read() == b"head" + DATA[a : a + n] + b"tail"
        assert b"".join(span_pieces(FileSpan(f, a, n), size)) == DATA[a : a + n]


def test_a_span_copied_to_a_pipe(source: IO[bytes]) -> None:
    r, w = os.pipe()
    got: list[bytes] = []

    def read_all() -> None:
        with os.fdopen(r, "rb") as f:
            got.append(f.read())

    reader = threading.Thread(target=read_all)
    reader.start()
    with os.fdopen(w, "wb") as out:
        out.write(b"<")
        copy_span(FileSpan(source, 100, 5000), out, 64)
        out.write(b">")
    reader.join()
    assert got == [b"<" + DATA[100:5100] + b">"]
    assert source.tell() == 7


def test_a_span_copied_to_a_stream_of_memory(source: IO[bytes]) -> None:
    out = io.BytesIO()
    copy_span(FileSpan(source, 3, 700), out, 100)
    assert out.getvalue() == DATA[3:703]


def test_the_rest_is_written_as_read_when_the_system_copy_stops(
    source: IO[bytes], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN a system copy that sends a part, then refuses this kind of output
    real = os.sendfile
    calls: list[int] = []

    def part_then_refused(out_fd: int, in_fd: int, offset: int, count: int) -> int:
        calls.append(offset)
        if len(calls) == 1:
            return real(out_fd, in_fd, offset, min(count, 1000))
        raise OSError(errno.EINVAL, "not for this kind of file")

    monkeypatch.setattr(read_at.os, "sendfile", part_then_refused)
    out = tmp_path / "out.bin"
    with open(out, "wb") as o:
        copy_span(FileSpan(source, 10, 9000), o, 333)
    # THEN the span is whole, the rest read and written from where the copy stopped
    assert out.read_bytes() == DATA[10:9010]
    assert calls == [10, 1010]


def test_without_the_system_copy_it_is_written_as_read(
    source: IO[bytes], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delattr(read_at.os, "sendfile")
    out = tmp_path / "out.bin"
    with open(out, "wb") as o:
        copy_span(FileSpan(source, 0, len(DATA)), o, 4096)
    assert out.read_bytes() == DATA


@pytest.mark.parametrize("system_copy", [True, False])
def test_a_span_past_the_end_of_its_file_is_an_error(
    source: IO[bytes], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, system_copy: bool
) -> None:
    if not system_copy:
        monkeypatch.delattr(read_at.os, "sendfile")
    with open(tmp_path / "out.bin", "wb") as o, pytest.raises(OSError, match="ended 5 bytes"):
        copy_span(FileSpan(source, len(DATA) - 10, 15), o, 4)


def test_a_closed_pipe_is_a_broken_pipe(source: IO[bytes]) -> None:
    r, w = os.pipe()
    os.close(r)
    with os.fdopen(w, "wb") as out, pytest.raises(BrokenPipeError):
        copy_span(FileSpan(source, 0, len(DATA)), out, 64)
        out.flush()


#: the command line in another process, its events' text written by a second process from
#: ten events on (as the tests' ``forking`` fixture does in this one)
_CLI = """
import sys
from recompile_doctor import events_json
events_json.MIN_EVENTS = 10
span = events_json.EventsText.span
def told(self):
    got = span(self)
    print("events' text as a span:", got is not None and got.length > 0, file=sys.stderr)
    return got
events_json.EventsText.span = told
from recompile_doctor.cli.main import run
run()
"""


def test_the_command_line_writes_the_same_json_to_a_file_a_pipe_and_stdout(
    tmp_path: Path,
) -> None:
    from recompile_doctor import analyze

    log = str(long_jax_log(tmp_path, 20))
    with analyze([log]) as report:
        expected = report.dumps().encode("utf-8")
    env: dict[str, Any] = {**os.environ, "RECOMPILE_DOCTOR_WORKERS": "2"}
    args = [sys.executable, "-c", _CLI, "analyze", log, "--format", "json"]
    # a file (-o), stdout on a file, stdout on a pipe
    out = tmp_path / "r.json"
    spanned = b"events' text as a span: True"
    r = subprocess.run([*args, "-o", str(out)], env=env, capture_output=True, check=True)
    assert spanned in r.stderr
    assert out.read_bytes() == expected
    with open(tmp_path / "stdout.json", "wb") as f:
        r = subprocess.run(args, env=env, stdout=f, stderr=subprocess.PIPE, check=True)
    assert spanned in r.stderr
    assert (tmp_path / "stdout.json").read_bytes() == expected
    piped = subprocess.run(args, env=env, capture_output=True, check=True)
    assert spanned in piped.stderr
    assert piped.stdout == expected
