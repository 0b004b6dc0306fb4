"""The C module's multi-literal scan (``literal_positions`` in ``parsers/_native.c``) and the
matcher that takes it or hyperscan a buffer at a time: the same candidate lines as a find
per literal, whatever the bytes and literals (overlapping ones, one literal, a literal at
the very end, bytes of any value); bad arguments are refused, not read past."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from recompile_doctor import matcher_choice
from recompile_doctor.parsers import _scan
from recompile_doctor.parsers._spans import native_in_use
from tests.conftest import examples

NATIVE: Any = native_in_use()
pytestmark = pytest.mark.skipif(
    NATIVE is None, reason="the C module is not built here, or turned off"
)

#: a small alphabet: literals and text share their bytes, so matches and near misses abound
_ALPHABET = b"ab\nc\x00\xff "
_bytes = st.lists(st.sampled_from(list(_ALPHABET)), max_size=400).map(bytes)
_literal = st.lists(st.sampled_from(list(b"ab c\x00\xff")), min_size=2, max_size=7).map(bytes)


def _lines(data: bytes | bytearray, end: int, positions: list[int]) -> set[int]:
    """The lines (by their start) holding a position below ``end``."""
    return {data.rfind(b"\n", 0, p) + 1 for p in positions if p < end}


@settings(max_examples=examples(400), deadline=None)
@given(_bytes, st.lists(_literal, min_size=1, max_size=6), st.integers(0, 400))
def test_the_lines_a_find_per_literal_gives(data: bytes, lits: list[bytes], cut: int) -> None:
    buf = bytearray(data)
    end = min(cut, len(buf))
    got = NATIVE.literal_positions(buf, end, tuple(_scan._minimal(lits)))
    want = _scan.FindMatcher(lits).positions(buf, end)
    assert got == sorted(got) and all(0 <= p < end for p in got)
    assert _lines(buf, end, got) == _lines(buf, end, want)
    # (one position a line: the first place of the line's first literal found)
    assert len(got) == len(_lines(buf, end, got))


def test_literals_at_the_edges() -> None:
    data = bytearray(b"abcd\nxx abcd\nab\nzzzabc")
    end = len(data)
    for lits in [(b"abcd",), (b"abc", b"zz"), (b"ab", b"abcd"), (b"bc", b"zzzabc")]:
        got = NATIVE.literal_positions(data, end, lits)
        assert _lines(data, end, got) == _lines(
            data, end, _scan.FindMatcher(list(lits)).positions(data, end)
        )
    # a literal cut by the end is not there; a window longer than the data finds nothing
    assert NATIVE.literal_positions(data, end - 1, (b"zzzabc",)) == []
    assert NATIVE.literal_positions(bytearray(b"ab"), 2, (b"abc", b"abd")) == []
    assert NATIVE.literal_positions(bytearray(b"ab"), 99, (b"ab", b"cd")) == [0]


def test_long_literals_and_many() -> None:
    long = b"x" * 300 + b"!"
    data = bytearray(b"y\n" + long + b"\n" + b"x" * 299 + b"\n")
    assert NATIVE.literal_positions(data, len(data), (long, b"zz" * 200)) == [2]
    lits = tuple(b"L%03d" % i for i in range(256))
    data = bytearray(b"a L255 b\nL000\nL25\n")
    assert NATIVE.literal_positions(data, len(data), lits) == [2, 9]


def test_bad_arguments_are_refused() -> None:
    data = bytearray(b"abc\n")
    for lits in [(), (b"a",), (b"a\nb",), ("ab",), [b"ab"], tuple(b"%03d" % i for i in range(257))]:
        with pytest.raises((TypeError, ValueError)):
            NATIVE.literal_positions(data, 4, lits)
    with pytest.raises(TypeError):
        NATIVE.literal_positions(data, 4)
    with pytest.raises(ValueError):
        NATIVE.literal_positions(data, -1, (b"ab",))
    assert not matcher_choice.native_scans([b"a", b"bc"])
    assert not matcher_choice.native_scans([b"a\nb"])
    assert not matcher_choice.native_scans([b"%03d" % i for i in range(257)])
    assert matcher_choice.native_scans([b"ab"])


def test_the_density_matcher_takes_either_and_finds_the_same() -> None:
    # a log whose buffers are dense, then sparse, then dense in candidate lines
    dense = b"".join(b"line %d anchor here\n" % i for i in range(60_000))
    sparse = b"".join(b"line %d nothing here\n" % i for i in range(60_000)) + b"one anchor\n"
    lits = [b"anchor", b"nothing here at all"]
    calls: list[int] = []  # (the buffers the other matcher was asked about)
    at = [0]

    class Counted:
        def positions(self, data: bytearray, end: int) -> list[int]:
            calls.append(at[0])
            return _scan.FindMatcher(lits).positions(data, end)

    m = _scan.DensityMatcher(_scan.NativeMatcher(lits, NATIVE.literal_positions), Counted())
    for k, part in enumerate((dense, sparse, dense, dense)):
        at[0] = k
        buf = bytearray(part)
        got = m.positions(buf, len(buf))
        want = _scan.FindMatcher(lits).positions(buf, len(buf))
        assert _lines(buf, len(buf), got) == _lines(buf, len(buf), want)
    # the first buffer by the C scan; the one after a sparse one by the other; then back
    assert calls == [2]


@pytest.mark.skipif(not matcher_choice.has_hyperscan(), reason="hyperscan is not installed")
def test_the_reader_takes_the_density_matcher_where_both_are() -> None:
    assert matcher_choice.engine_for([b"Compiling ", b"TRACING"]) == "density"
    assert matcher_choice.engine_for([b'] {"']) == "native"  # (one literal: memmem)
    m = _scan.make_matcher(["Compiling ", "TRACING"])
    assert isinstance(m, _scan.DensityMatcher)


def test_without_hyperscan_the_c_scan(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(matcher_choice, "has_hyperscan", lambda: False)
    assert matcher_choice.engine_for([b"Compiling ", b"TRACING"]) == "native"
    monkeypatch.setenv("RECOMPILE_DOCTOR_NATIVE", "0")
    assert matcher_choice.engine_for([b"Compiling ", b"TRACING"]) == "find"
