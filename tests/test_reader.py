"""Streaming input: files, gzip by magic bytes, stdin, CRLF, bad bytes, errors."""

from __future__ import annotations

import gzip
import io
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from recompile_doctor.errors import RecompileDoctorError
from recompile_doctor.parsers._reader import (
    ReadStats,
    iter_lines,
    read_lines_around,
    release_spool,
)
from tests.conftest import limit_line_bytes


def test_plain_file_lines_are_numbered_from_one(tmp_path: Path) -> None:
    p = tmp_path / "a.log"
    p.write_bytes(b"one\ntwo\nthree")  # GIVEN a truncated last line (no newline)
    assert list(iter_lines(str(p))) == [(1, "one"), (2, "two"), (3, "three")]


def test_gzip_is_detected_by_magic_bytes_not_name(tmp_path: Path) -> None:
    p = tmp_path / "run.log"  # GIVEN a gzip file without a .gz suffix
    p.write_bytes(gzip.compress(b"a\nb\n"))
    stats = ReadStats()
    assert [t for _, t in iter_lines(str(p), stats)] == ["a", "b"]
    assert stats.compressed


def test_crlf_and_invalid_utf8_never_fail(tmp_path: Path) -> None:
    p = tmp_path / "a.log"
    p.write_bytes(b"caf\xe9\r\nok\r\n\xff\xfe\n")
    assert [t for _, t in iter_lines(str(p))] == ["caf\ufffd", "ok", "\ufffd\ufffd"]


def test_stdin_is_read_for_dash(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = io.TextIOWrapper(io.BytesIO(gzip.compress(b"x\ny\n")))
    monkeypatch.setattr(sys, "stdin", fake)
    try:
        assert [t for _, t in iter_lines("-")] == ["x", "y"]
    finally:
        release_spool("-")  # (the private copy kept for the evidence's context)


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda d: d / "missing.log", "no such file"),
        (lambda d: d, "is a directory"),
        (lambda d: _write(d / "empty.log", b""), "empty input"),
    ],
)
def test_bad_inputs_raise_one_line_errors(tmp_path: Path, make, message: str) -> None:  # type: ignore[no-untyped-def]
    path = str(make(tmp_path))
    with pytest.raises(RecompileDoctorError) as e:
        list(iter_lines(path))
    assert message in str(e.value)
    assert "\n" not in str(e.value)
    assert str(e.value).startswith(path)


def test_context_lines_are_read_around_wanted_lines(tmp_path: Path) -> None:
    p = tmp_path / "a.log"
    p.write_text("".join(f"l{i}\n" for i in range(1, 11)))
    got = read_lines_around(str(p), {1: 2, 5: 2, 10: 2})
    assert got[1] == ([], "l1", ["l2", "l3"])
    assert got[5] == (["l3", "l4"], "l5", ["l6", "l7"])
    assert got[10] == (["l8", "l9"], "l10", [])


def _write(p: Path, data: bytes) -> Path:
    p.write_bytes(data)
    return p


def _truncated_gzip() -> bytes:
    data = gzip.compress("".join(f"line {i * 7919 % 10007}\n" for i in range(5000)).encode())
    return data[: len(data) // 2]


def test_a_gzip_broken_halfway_is_noted_not_raised_unless_strict(tmp_path: Path) -> None:
    p = _write(tmp_path / "bad.gz", _truncated_gzip())
    stats = ReadStats()
    assert list(iter_lines(str(p), stats))  # GIVEN half a gzip stream: the first half is read
    assert stats.truncated is not None and stats.truncated.last_good_line == stats.lines
    with pytest.raises(RecompileDoctorError) as e:
        list(iter_lines(str(p), strict=True))
    assert str(e.value).startswith(f"{p}: gzip stream ends early after line {stats.lines}")


_LINE_BYTES = st.lists(
    st.sampled_from([b"a", b"b", b"\r", b"\n", b"\r\n", b"\xff", "é".encode(), b"xyzxyz"]),
    max_size=12,
).map(b"".join)


@given(
    st.lists(_LINE_BYTES, max_size=30),
    st.sampled_from([b"", b"\xef\xbb\xbf"]),
    st.dictionaries(st.integers(1, 40), st.integers(0, 3), min_size=1, max_size=5),
    st.integers(1, 9),
    st.booleans(),
    st.booleans(),
)
def test_context_by_blocks_is_the_line_by_line_context(
    pieces: list[bytes], bom: bytes, wanted: dict[int, int], block: int, gz: bool, py: bool
) -> None:
    """GIVEN any bytes (CR, CRLF, invalid UTF-8, lines longer than the limit, a last line
    without its end, a UTF-8 BOM, gzip or not), WHEN the lines around some wanted lines are
    read by counting line ends in tiny blocks (with the C byte work or the Python), THEN
    they are what reading every line gives."""
    import gzip
    import tempfile

    from recompile_doctor.parsers import _reader
    from recompile_doctor.parsers._spans import NATIVE_ENV

    data = bom + b"".join(pieces)
    with tempfile.TemporaryDirectory() as tmp, pytest.MonkeyPatch.context() as mp:
        if py:
            mp.setenv(NATIVE_ENV, "0")
        mp.setattr(_reader, "_AROUND_BLOCK", block)
        limit_line_bytes(mp, 8)
        p = Path(tmp) / ("a.log.gz" if gz else "a.log")
        p.write_bytes(gzip.compress(data) if gz else data)
        assert read_lines_around(str(p), wanted) == _reader._read_lines_around(str(p), wanted)
