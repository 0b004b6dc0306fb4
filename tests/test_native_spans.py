"""The fast path's per-candidate byte work in C (``parsers/_native.c``) against the Python it
replaces (``parsers/_spans.py``, ``parsers/_line_text.py``).

GIVEN buffers of lines (CRLF, bare CR, invalid UTF-8, empty lines, lines longer than the cut)
and candidate positions in them, WHEN the C functions and the Python ones are asked the
same, THEN they give the same spans, counts and texts; and the fast path runs on every
fixture log with the Python ones (``RECOMPILE_DOCTOR_NATIVE=0``) as it does with the C ones.
"""

from __future__ import annotations

import io
import os
import random
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from recompile_doctor.parsers import _scan
from recompile_doctor.parsers._line_text import line_text
from recompile_doctor.parsers._spans import (
    NATIVE_ENV,
    PYTHON,
    after_lines_py,
    chosen,
    line_end_py,
    line_spans_py,
    native_in_use,
    native_module,
    newlines_py,
    skip_prefixed_py,
    take_prefixed_py,
)
from tests.conftest import examples
from tests.test_fastpath import _fixture_logs, _run

#: ``make test`` sets this: the C module must have been built there (a compiler is present)
EXPECT_ENV = "RECOMPILE_DOCTOR_EXPECT_NATIVE"

NATIVE: Any = native_module()
needs_native = pytest.mark.skipif(NATIVE is None, reason="the C module is not built here")


def test_the_c_module_is_built_where_it_is_expected() -> None:
    if os.environ.get(EXPECT_ENV) != "1":
        pytest.skip(f"{EXPECT_ENV} is not set")
    assert NATIVE is not None


def test_native_0_chooses_the_python_functions(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(NATIVE_ENV, "0")
    assert chosen() == PYTHON
    assert (
        line_spans_py,
        line_text,
        line_end_py,
        skip_prefixed_py,
        take_prefixed_py,
        newlines_py,
        after_lines_py,
        False,
    ) == PYTHON
    monkeypatch.delenv(NATIVE_ENV)
    assert chosen().native is (NATIVE is not None)
    if NATIVE is not None:
        assert chosen().line_spans is NATIVE.line_spans
        assert chosen().skip_prefixed is NATIVE.skip_prefixed
        assert chosen().take_prefixed is NATIVE.take_prefixed
        assert chosen().newlines is NATIVE.newlines
        assert chosen().after_lines is NATIVE.after_lines


#: the bytes lines are made of (a bare CR and invalid UTF-8 among them)
PIECES = [b"\r", b"a", b"xyz ", b"\xff\xfe", b"\xc3\xa9", b" ", b"lorem ipsum "]
pieces = st.sampled_from(PIECES)
a_line = st.lists(pieces, max_size=6).map(b"".join)


@st.composite
def buffers(draw: st.DrawFn) -> tuple[bytearray, int, int, list[int]]:
    """Up to 80 lines (LF, CRLF, or none at the end) and candidates sparse or dense: made
    from a drawn seed (drawing each byte through hypothesis took most of the test's time)."""
    rnd = random.Random(draw(st.integers(0, 2**32)))
    data = bytearray()
    for _ in range(draw(st.integers(0, 80))):
        data += b"".join(rnd.choices(PIECES, k=rnd.randint(0, 6)))
        data += rnd.choice([b"\n", b"\n", b"\r\n", b""])
    end = draw(st.one_of(st.just(len(data)), st.integers(0, len(data))))
    starts = [0] + [i + 1 for i in range(end) if data[i] == 10]
    start = draw(st.sampled_from(starts))  # the fast path starts at a line's start
    density = draw(st.sampled_from([0.005, 0.02, 0.1, 0.5]))
    cands = [i for i in range(len(data) + 3) if rnd.random() < density]  # (some past the end)
    return data, start, end, cands


@needs_native
@settings(max_examples=examples(400), suppress_health_check=[HealthCheck.too_slow])
@given(case=buffers())
def test_the_c_spans_are_the_python_spans(case: tuple[bytearray, int, int, list[int]]) -> None:
    data, start, end, cands = case
    assert NATIVE.line_spans(data, start, end, cands) == line_spans_py(data, start, end, cands)
    assert NATIVE.line_spans(bytes(data), start, end, cands) == line_spans_py(
        data, start, end, cands
    )


@needs_native
@settings(max_examples=examples(400), suppress_health_check=[HealthCheck.too_slow])
@given(
    data=st.lists(pieces, max_size=60).map(b"".join),
    bounds=st.tuples(st.integers(0, 600), st.integers(0, 600)),
    limit=st.integers(0, 40),
)
def test_the_c_line_text_is_the_python_line_text(
    data: bytes, bounds: tuple[int, int], limit: int
) -> None:
    a, b = sorted(min(x, len(data)) for x in bounds)
    buf = bytearray(data)
    for lim in (limit, 1 << 20):
        assert NATIVE.line_text(buf, a, b, lim) == line_text(buf, a, b, lim)
    assert NATIVE.line_text(buf, a, b, 1 << 20) == line_text(buf, a, b)


@needs_native
@settings(max_examples=examples(300), suppress_health_check=[HealthCheck.too_slow])
@given(case=buffers(), prefix=st.sampled_from([b"", b"\t", b"a", b"xyz", b"\xff\xfe", b"a\n"]))
def test_the_c_line_ends_and_skips_are_the_python_ones(
    case: tuple[bytearray, int, int, list[int]], prefix: bytes
) -> None:
    data, start, end, _ = case
    starts = [start] + [i + 1 for i in range(start, end) if data[i] == 10]
    for pos in starts:
        assert NATIVE.line_end(data, pos, end) == line_end_py(data, pos, end)
        got = NATIVE.skip_prefixed(data, pos, end, prefix)
        assert got == skip_prefixed_py(data, pos, end, prefix)


@settings(max_examples=examples(300), suppress_health_check=[HealthCheck.too_slow])
@given(
    case=buffers(),
    prefix=st.sampled_from([b"", b"a", b"xyz ", b"a\n"]),
    stop=st.sampled_from([b"", b"a", b"xyz", b"\r", b"\xff"]),
    limit=st.sampled_from([0, 3, 12, 1 << 20]),
)
def test_the_taken_lines_are_the_texts_a_decoder_would_have_cut_from_them(
    case: tuple[bytearray, int, int, list[int]], prefix: bytes, stop: bytes, limit: int
) -> None:
    # GIVEN buffers of lines and a prefix, a stop and a cut
    data, start, end, _ = case
    starts = [start] + [i + 1 for i in range(start, end) if data[i] == 10]
    for pos in starts:
        # WHEN the lines from a line's start on are taken
        got = take_prefixed_py(data, pos, end, prefix, stop, limit)
        # THEN the C takes the same lines and gives the same texts
        if NATIVE is not None:
            assert NATIVE.take_prefixed(data, pos, end, prefix, stop, limit) == got
        if b"\n" in prefix:
            continue  # (past its line: no decoder's; the C and the Python still agree)
        # AND each text is what a decoder makes of the line the plain reader gives: its
        # text stripped of its CRs, after the prefix; the first line not taken starts
        # otherwise, goes on with the stop, is longer than the cut, or is past the end
        at, n = pos, 0
        for body in got[1]:
            e = line_end_py(data, at, end)
            assert data.startswith(prefix, at, e) and e - at <= limit
            assert not data.startswith(stop, at + len(prefix), e)
            assert body == line_text(data, at, e, limit).rstrip("\r\n")[len(prefix) :]
            at, n = (end if e == end else e + 1), n + 1
        assert got[0] == at
        if at < end:
            e = line_end_py(data, at, end)
            assert (
                not data.startswith(prefix, at, end)
                or e - at > limit
                or data.startswith(stop, at + len(prefix), e)
            )


@needs_native
@settings(max_examples=examples(300), suppress_health_check=[HealthCheck.too_slow])
@given(case=buffers(), bounds=st.tuples(st.integers(0, 900), st.integers(0, 900)))
def test_the_c_newline_count_is_the_python_one(
    case: tuple[bytearray, int, int, list[int]], bounds: tuple[int, int]
) -> None:
    data = case[0]
    a, b = bounds  # (either way round, past the end too)
    assert NATIVE.newlines(data, a, b) == newlines_py(data, a, b)
    assert NATIVE.newlines(bytes(data), a, b) == newlines_py(data, a, b)


@needs_native
@settings(max_examples=examples(300), suppress_health_check=[HealthCheck.too_slow])
@given(
    case=buffers(),
    pos=st.integers(0, 900),
    end=st.integers(0, 900),
    k=st.integers(0, 40),
)
def test_the_c_line_k_lines_on_is_the_python_one(
    case: tuple[bytearray, int, int, list[int]], pos: int, end: int, k: int
) -> None:
    data = case[0]
    want = after_lines_py(data, pos, end, k)
    assert NATIVE.after_lines(data, pos, end, k) == want
    assert NATIVE.after_lines(bytes(data), pos, end, k) == want


def test_the_line_k_lines_on_starts_past_the_kth_newline() -> None:
    data = b"ab\n\ncd\r\nef"
    for pos, end, k, want in [
        (0, len(data), 0, 0),
        (0, len(data), 1, 3),
        (0, len(data), 2, 4),
        (0, len(data), 3, 8),
        (0, len(data), 4, -1),
        (4, len(data), 1, 8),
        (0, 3, 1, 3),
        (0, 2, 1, -1),  # (the newline past the end is not counted)
        (9, 3, 0, 9),
    ]:
        assert after_lines_py(data, pos, end, k) == want, (pos, end, k)
        if NATIVE is not None:
            assert NATIVE.after_lines(data, pos, end, k) == want, (pos, end, k)


def test_newlines_are_counted_in_the_span_only() -> None:
    data = bytearray(b"\n\nab\ncd\r\n\n" + b"x" * 300 + b"\n")
    for a, b, want in [
        (0, len(data), 6),
        (1, 2, 1),
        (2, 5, 1),
        (2, 4, 0),
        (5, 9, 1),
        (5, 5, 0),
        (9, 3, 0),
    ]:
        assert newlines_py(data, a, b) == want, (a, b)
        if NATIVE is not None:
            assert NATIVE.newlines(data, a, b) == want, (a, b)


def test_payload_lines_are_passed_up_to_the_first_other_line_or_the_end() -> None:
    data = bytearray(b'{"a": 1}\n\tpayload\n\t\n\tlast\n{"b": 2}\n\t')
    first = data.index(b"\t")
    cases = [
        ((first, len(data), b"\t"), (data.index(b"{", 1), 3)),
        # the very end: a last line that is the prefix alone, no newline
        ((len(data) - 1, len(data), b"\t"), (len(data), 1)),
        # the end cuts a line: its first bytes still count
        ((first, first + 3, b"\t"), (first + 3, 1)),
        ((first, first, b"\t"), (first, 0)),
        # a prefix longer than what is left is not there
        ((len(data) - 1, len(data), b"\tx"), (len(data) - 1, 0)),
        ((0, len(data), b"\t"), (0, 0)),
    ]
    for args, want in cases:
        assert skip_prefixed_py(data, *args) == want, args
        if NATIVE is not None:
            assert NATIVE.skip_prefixed(data, *args) == want, args


def test_the_spans_name_each_candidate_line_once_with_the_lines_before_it() -> None:
    data = bytearray(b"zero\none x x\ntwo\nthree x\r\nfour\nfive x")
    # "one x x" holds two candidates: one span; "five x" has no newline: it ends at the end
    cands = [data.index(b"x"), data.rindex(b"x", 0, 12), data.index(b"three x") + 6]
    cands.append(len(data) - 1)
    want = [5, 12, 1, 17, 25, 1, 31, 37, 1]
    assert line_spans_py(data, 0, len(data), cands) == want
    if NATIVE is not None:
        assert NATIVE.line_spans(data, 0, len(data), cands) == want
        # positions before start are passed over; those at or past end end the list
        assert NATIVE.line_spans(data, 13, 26, cands) == [17, 25, 1]
    assert line_spans_py(data, 13, 26, cands) == [17, 25, 1]


def test_a_long_line_is_cut_where_the_python_cuts_it() -> None:
    line = b"x" * 70 + b"\r" + b"y" * 10
    buf = bytearray(line + b"\n")
    assert line_text(buf, 0, len(line), 71) == "x" * 70  # the CR at the cut goes too
    if NATIVE is not None:
        for limit in (0, 1, 70, 71, 72, 81, 1 << 20):
            assert NATIVE.line_text(buf, 0, len(line), limit) == line_text(buf, 0, len(line), limit)


@needs_native
@pytest.mark.parametrize(
    ("call", "error"),
    [
        (lambda n: n.line_spans(bytearray(b"a\n"), -1, 2, []), ValueError),
        (lambda n: n.newlines(bytearray(b"a\n"), -1, 2), ValueError),
        (lambda n: n.newlines(bytearray(b"a\n"), 0), TypeError),
        (lambda n: n.after_lines(b"a\n", 0, 2, -1), ValueError),
        (lambda n: n.after_lines(b"a\n", -1, 2, 1), ValueError),
        (lambda n: n.after_lines(b"a\n", 0, 2), TypeError),
        (lambda n: n.after_lines("a\n", 0, 2, 1), TypeError),
        (lambda n: n.newlines("a\n", 0, 2), TypeError),
        (lambda n: n.line_spans(bytearray(b"a\n"), 0, 2, (0,)), TypeError),
        (lambda n: n.line_spans(bytearray(b"a\n"), 0, 2, [-3]), ValueError),
        (lambda n: n.line_spans(bytearray(b"a\n"), 0, 2, ["0"]), TypeError),
        (lambda n: n.line_spans("a\n", 0, 2, [0]), TypeError),
        (lambda n: n.line_spans(bytearray(b"a\n"), 0, 2), TypeError),
        (lambda n: n.line_text(bytearray(b"a\n"), 0, 1), TypeError),
        (lambda n: n.line_text(bytearray(b"a\n"), 0, -1, 5), ValueError),
        (lambda n: n.line_text(bytearray(b"a\n"), 0, 1, -5), ValueError),
        (lambda n: n.line_end(bytearray(b"a\n"), -1, 2), ValueError),
        (lambda n: n.line_end(bytearray(b"a\n"), 0), TypeError),
        (lambda n: n.skip_prefixed(bytearray(b"a\n"), 0, 2, "a"), TypeError),
        (lambda n: n.skip_prefixed(bytearray(b"a\n"), 0, -2, b"a"), ValueError),
        (lambda n: n.take_prefixed(bytearray(b"a\n"), 0, 2, "a", b"=", 9), TypeError),
        (lambda n: n.take_prefixed(bytearray(b"a\n"), 0, 2, b"a", "=", 9), TypeError),
        (lambda n: n.take_prefixed(bytearray(b"a\n"), 0, 2, b"a", b"="), TypeError),
        (lambda n: n.take_prefixed(bytearray(b"a\n"), 0, 2, b"a", b"=", -1), ValueError),
        (lambda n: n.take_prefixed(bytearray(b"a\n"), -1, 2, b"a", b"=", 9), ValueError),
        (lambda n: n.take_prefixed("a\n", 0, 2, b"a", b"=", 9), TypeError),
    ],
)
def test_the_c_functions_refuse_bad_arguments(call: Any, error: type[Exception]) -> None:
    with pytest.raises(error):
        call(NATIVE)


def test_the_fast_path_takes_what_the_environment_chooses(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def made() -> _scan.FastLines:
        blocks = _scan.Blocks(io.BytesIO(b""), "run.log")
        counter = SimpleNamespace(recognized=0, unrecognized=0)
        decoder = SimpleNamespace(continuing=False)
        return _scan.FastLines(blocks, _scan.FindMatcher([b"x"]), decoder, lambda _: True, counter)

    assert made().native is (native_in_use() is not None)  # (RECOMPILE_DOCTOR_NATIVE=0: off)
    monkeypatch.setenv(NATIVE_ENV, "0")
    assert made().native is False


@pytest.mark.parametrize("path", _fixture_logs(), ids=lambda p: p.name)
def test_the_fast_path_with_the_python_functions_matches_the_plain_path(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # (with the C ones where built: tests/test_fastpath.py)
    monkeypatch.setenv(NATIVE_ENV, "0")
    assert _run(path, fast=True, engine="find") == _run(path, fast=False)


#: a cache-miss block ended by a line no decoder wants, then candidate lines: the fast path
#: reads past the block's header line by line, and the lines before the next candidate are
#: counted from where it stopped, not from the header's end
JAX_BLOCK_THEN_NOISE = b"""TRACING CACHE MISS at /tmp/capture-jax/x.py:1:1 (f):
  never seen function:
    f id=1 defined at /tmp/capture-jax/x.py:1
step 0 loss 0.1
step 1 loss 0.1
Finished tracing f for jit in 0.001 sec
Compiling jit(f) with global shapes and types (ShapedArray(float32[1,4]),). Argument mapping: (UnspecifiedValue,).
step 2 loss 0.1
Finished XLA compilation of jit(f) in 0.036 sec
"""


@pytest.mark.parametrize("native", ["0", "1"])
def test_lines_read_past_a_block_are_not_counted_twice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, native: str
) -> None:
    path = tmp_path / "run.log"
    path.write_bytes(JAX_BLOCK_THEN_NOISE * 100)  # (past the head read to find the format)
    monkeypatch.setenv(NATIVE_ENV, native)
    fast = _run(path, fast=True, engine="find", fmt="jax")
    assert fast == _run(path, fast=False, fmt="jax")
    assert any("line=6, text='Finished tracing" in e for e in fast[0])
    assert any("line=897, text='Finished tracing" in e for e in fast[0])
