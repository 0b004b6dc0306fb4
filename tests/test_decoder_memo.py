"""The decoders' memos and shortcuts change no event: GIVEN every real capture of a framework
log (and the same logs again, so that the memos are warm with another log's messages), WHEN
it is decoded with the memos on and with them off, THEN the events, statuses and line numbers
are the same; glog stamps read without ``strptime`` are the values ``strptime`` gives."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from recompile_doctor.events import TypedEvent
from recompile_doctor.parsers import ParseCounter, parse_log
from recompile_doctor.parsers._lazy_re import lazy_re
from recompile_doctor.parsers._memo import set_enabled
from recompile_doctor.parsers._pylog import glog_stamp
from tests.conftest import examples

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"

#: log format -> its captured logs
LOGS: dict[str, list[Path]] = {
    "jax": sorted(FIXTURES.glob("jax/*/run.log")),
    "tensorflow": sorted(FIXTURES.glob("tensorflow/*/run.log")),
    "torch": sorted(FIXTURES.glob("torch/*/run.log")),
    "torch-trace": sorted(FIXTURES.glob("torch/*/trace/dedicated_log*")),
    "ptxla": sorted(FIXTURES.glob("ptxla/*/run.log")),
}


def _decode(fmt: str, path: Path, fast: bool) -> tuple[list[TypedEvent], tuple[int, int, int]]:
    c = ParseCounter(str(path))
    events = list(parse_log(str(path), c, log_format=fmt, fast=fast))
    return events, (c.recognized, c.unrecognized, c.malformed)


def _all(fmt: str, fast: bool) -> Iterator[tuple[list[TypedEvent], tuple[int, int, int]]]:
    for path in LOGS[fmt] * 2:  # the second round meets memos filled by every log
        yield _decode(fmt, path, fast)


@pytest.fixture
def memos_off() -> Iterator[None]:
    set_enabled(False)
    try:
        yield
    finally:
        set_enabled(True)


@pytest.mark.parametrize("fast", [True, False], ids=["fast", "plain"])
@pytest.mark.parametrize("fmt", sorted(LOGS))
def test_memos_change_no_event(fmt: str, fast: bool) -> None:
    assert LOGS[fmt], f"no captured {fmt} logs"
    set_enabled(True)
    with_memos = list(_all(fmt, fast))
    set_enabled(False)
    try:
        without = list(_all(fmt, fast))
    finally:
        set_enabled(True)
    assert any(events for events, _ in with_memos)
    for (ev_on, counts_on), (ev_off, counts_off), path in zip(
        with_memos, without, LOGS[fmt] * 2, strict=True
    ):
        assert counts_on == counts_off, path
        assert [(e.span.line, e) for e in ev_on] == [(e.span.line, e) for e in ev_off], path


def _strptime_stamp(month_day: str, time: str) -> float | None:
    try:
        return datetime.strptime(f"2000{month_day} {time}", "%Y%m%d %H:%M:%S.%f").timestamp()
    except ValueError:
        return None


_TWO = st.integers(0, 99).map(lambda n: f"{n:02d}")


@settings(max_examples=examples(500))
@given(
    month=st.integers(0, 13),
    day=st.integers(0, 32),
    hms=st.tuples(st.integers(0, 25), st.integers(0, 61), st.integers(0, 62)),
    frac=st.text("0123456789", min_size=0, max_size=8),
)
def test_glog_stamp_is_what_strptime_reads(
    month: int, day: int, hms: tuple[int, int, int], frac: str
) -> None:
    md = f"{month:02d}{day:02d}"
    time = f"{hms[0]:02d}:{hms[1]:02d}:{hms[2]:02d}.{frac}"
    assert glog_stamp(md, time) == _strptime_stamp(md, time)


@settings(max_examples=examples(1000))
@given(
    md=st.text("0123456789١ x", max_size=6),
    time=st.text("0123456789١:. +x", max_size=18) | st.from_regex(r"\d\d:\d\d:\d\d\.\d{1,7}"),
)
def test_glog_stamp_of_any_text_is_what_strptime_reads(md: str, time: str) -> None:
    # GIVEN any text where a glog stamp goes (other digits, other shapes), THEN the fast
    # reading and strptime's agree (or both find no date)
    assert glog_stamp(md, time) == _strptime_stamp(md, time)


def test_glog_stamp_of_a_real_line() -> None:
    """GIVEN torch's ``V1122 19:11:16.722000`` WHEN read THEN its seconds differ from the
    next second's by exactly the printed difference."""
    a = glog_stamp("1122", "19:11:16.722000")
    b = glog_stamp("1122", "19:11:17.000500")
    assert a is not None and b is not None
    assert b - a == pytest.approx(0.2785)
    assert glog_stamp("0230", "19:11:16.722000") is None  # no 30 February


def test_lazy_regex_is_the_compiled_pattern() -> None:
    """GIVEN a pattern compiled on first use WHEN each method is called THEN it answers as
    the compiled pattern does."""
    import re

    src = r"(?P<k>\w+)=(?P<v>\d+)"
    lazy, real = lazy_re(src), re.compile(src)
    text = "a=1 b=x c=22"
    assert lazy.pattern == src
    m1, m2 = lazy.search(text), real.search(text)
    assert m1 is not None and m2 is not None and m1.groupdict() == m2.groupdict()
    assert lazy.match("zz") is None and lazy.fullmatch("k=3") is not None
    assert [m[0] for m in lazy.finditer(text)] == ["a=1", "c=22"]
    assert lazy.findall(text) == real.findall(text)
    assert lazy.sub("_", text) == "_ b=x _"
    assert lazy.split(text) == real.split(text)
    with pytest.raises(AttributeError):
        _ = lazy.nonexistent  # type: ignore[attr-defined]


def test_a_memo_keeps_no_key_longer_than_it_is_told() -> None:
    # GIVEN a memo that keeps keys of up to 4 characters (and a counting function)
    from recompile_doctor.parsers import _memo

    calls: list[object] = []

    def upper(s: object) -> object:
        calls.append(s)
        return str(s).upper()

    got = _memo.memo(upper, 8)
    _memo._MEMOS[-1].longest = 4  # (its table)
    # WHEN short and long strings, a number, and tuples of short and long strings are
    # asked twice each
    for key in ("abcd", "abcde", 12345678, ("ab", "cd"), ("ab", ("c", "de"))):
        assert got(key) == got(key) == str(key).upper()
    # THEN only the long string and the tuple holding 5 characters were worked out twice
    assert calls == [
        "abcd", "abcde", "abcde", 12345678, ("ab", "cd"), ("ab", ("c", "de")), ("ab", ("c", "de"))
    ]  # fmt: skip


def test_a_memo_holds_string_keys_of_bounded_length_in_all() -> None:
    # GIVEN a memo whose string keys may hold 10 characters in all
    from recompile_doctor.parsers import _memo

    calls: list[str] = []

    def upper(s: str) -> str:
        calls.append(s)
        return s.upper()

    got = _memo.memo(upper)
    _memo._MEMOS[-1].key_chars = 10  # (its table)
    # WHEN keys of 4 characters are asked, then asked again
    for key in ("aaaa", "bbbb", "aaaa", "bbbb", "cccc", "aaaa"):
        assert got(key) == key.upper()
    # THEN the third key emptied the memo before it was kept
    assert calls == ["aaaa", "bbbb", "cccc", "aaaa"]
