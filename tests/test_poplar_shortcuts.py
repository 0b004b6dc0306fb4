"""The Poplar decoder's shortcuts give the events of a full reading.

Shortcuts keep the decoder cheap on big logs: the time stamp of the last skipped line is
not read when the decoded line's own stamp makes it irrelevant (``Clock.overrides``), the
fast path puts off finding that line until the decoder asks (``pending_last``), and the
match of a message, and the prefix of a step line, are remembered (``poplar.match_message``,
``poplar_decoder._SPLIT``).

GIVEN logs that mix every prefix the Poplar stack writes (TensorFlow local time, Poplar UTC,
time-only Poplar/poprun/PopTorch/glog stamps, invalid stamps, ANSI colours, MPI rank tags,
progress bars glued in front, CR-separated segments, lines without a stamp) in any order,
WHEN they are decoded with the shortcuts (line by line, and by the fast path in small
blocks) and line by line with every shortcut off,
THEN the events (times included) and the counters are the same.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from conftest import poplar_prefix, write_poplar_log
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from recompile_doctor.bounded import KEPT_MAX
from recompile_doctor.parsers import ParseCounter, _scan, parse_log, poplar, poplar_decoder
from recompile_doctor.parsers._prefixes import Clock
from tests.conftest import examples

MESSAGES = (
    "Execute a_inference_train_step_806__XlaMustCompile_true",
    "Starting phase: Loading executable",
    "Ending phase: Loading executable (duration 560 ms; diff RSS: 0.586426 MB)",
    "[CACHE] Begin XLA compilation: cluster_1 (Hash: 0x1F2E3D4C5B6A7988)",
    "stream copy of 4096 bytes",  # no anchor: a skipped line
    "Execute a_inference_test_step_37__XlaMustCompile_true",
)


line = st.tuples(
    st.integers(0, 6),  # prefix kind
    st.integers(0, 2 * 86400),  # seconds (may cross midnight)
    st.integers(0, len(MESSAGES) - 1),
    st.sampled_from(["", "\x1b[32m", "[1,0]<stdout>:", "Progress 3/9 ", "x\r"]),
)


def _decode(
    path: Path, shortcuts: bool, monkeypatch: pytest.MonkeyPatch, chunk: int | None = None
) -> Any:
    """Events and counters; ``chunk``: the fast path with blocks of that many bytes (the
    put-off walk back for the last stamped line then meets block ends); else line by line."""
    with monkeypatch.context() as mp:
        if not shortcuts:
            mp.setattr(Clock, "overrides", lambda self, cur, before: False)
            mp.setattr(poplar, "_MEMO_CHARS", -1)
            mp.setattr(poplar_decoder, "_SPLIT_CHARS", -1)  # (none remembered)
            poplar_decoder._SPLIT.clear()
        if chunk is not None:
            mp.setattr(_scan, "CHUNK_BYTES", chunk)
        poplar._MEMO.clear()
        c = ParseCounter(str(path))
        events = [
            repr(e) for e in parse_log(str(path), c, log_format="poplar", fast=chunk is not None)
        ]
    return events, (c.recognized, c.unrecognized, c.malformed)


# (its reading without shortcuts replaces Clock.overrides: compiled callers call their own)
@pytest.mark.pure_only
@settings(
    max_examples=examples(int(os.environ.get("SHORTCUT_EXAMPLES", "60"))),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(lines=st.lists(line, min_size=1, max_size=40), chunk=st.sampled_from([None, 150, 400]))
def test_shortcuts_give_the_full_reading(
    lines: list[tuple[int, int, int, str]],
    chunk: int | None,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    path = write_poplar_log(tmp_path / "run.log", lines, MESSAGES)
    assert _decode(path, True, monkeypatch, chunk) == _decode(path, False, monkeypatch)


def test_the_comparison_is_not_vacuous(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN a mixed-clock log whose clock offset is estimated from a skipped line
    path = tmp_path / "run.log"
    path.write_text(
        poplar_prefix(0, 100) + MESSAGES[0] + "\n"
        + poplar_prefix(1, 3700) + MESSAGES[4] + "\n"
        + poplar_prefix(1, 3705) + MESSAGES[1] + "\n"
        + poplar_prefix(1, 3706) + MESSAGES[4] + "\n"
        + poplar_prefix(0, 107) + MESSAGES[0] + "\n",
        encoding="utf-8",
    )  # fmt: skip
    events = list(parse_log(str(path), log_format="poplar"))
    # THEN the UTC line is placed by the offset estimated from the local line before it
    # (an hour apart: the offset is -3600 s) and the last line by its own local stamp
    assert [(e.span.line, e.span.t) for e in events] == [(1, 0.0), (3, 4.586141), (5, 7.0)]


@pytest.mark.pure_only  # (it replaces a function of a compiled module)
def test_the_shortcut_is_taken_on_a_steady_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN a log where every decoded line has its own stamp on a known clock, with skipped
    # stamped lines between them
    path = tmp_path / "run.log"
    path.write_text(
        "".join(f"{poplar_prefix(1, 60 + i)}{MESSAGES[i % len(MESSAGES)]}\n" for i in range(60)),
        encoding="utf-8",
    )
    read = []
    real = Clock.absolute

    def counting(self: Clock, prefix: Any) -> Any:
        read.append(prefix)
        return real(self, prefix)

    monkeypatch.setattr(Clock, "absolute", counting)
    # WHEN it is decoded with the shortcuts, THEN fewer stamps are read than without them
    _decode(path, True, monkeypatch)
    with_shortcut = len(read)
    read.clear()
    _decode(path, False, monkeypatch)
    assert with_shortcut < len(read)


def test_a_skipped_stamp_the_decoder_did_not_need_is_not_read_at_a_block_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN a log on two clocks (their offset known after the third line), a stamped skipped
    # line, a decoded line whose own stamp makes it irrelevant, the end of a block, then a
    # decoded line without a stamp (it takes the time of the line before it)
    lines = [
        poplar_prefix(0, 100) + MESSAGES[0],  # local time
        poplar_prefix(1, 3700) + MESSAGES[4],  # UTC, skipped: sets the offset (-3600 s)
        poplar_prefix(1, 3705) + MESSAGES[5],
        poplar_prefix(1, 3750) + MESSAGES[4],  # skipped, stamped
        poplar_prefix(1, 3800) + MESSAGES[5],  # decoded: the skipped stamp does not matter
        MESSAGES[0],  # decoded, no stamp
    ]
    path = tmp_path / "run.log"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    block = sum(len(x) + 1 for x in lines[:5]) + 5  # the block ends after the fifth line
    # WHEN it is read by the fast path in such blocks
    with monkeypatch.context() as mp:
        mp.setattr(_scan, "CHUNK_BYTES", block)
        events = list(parse_log(str(path), log_format="poplar", fast=True))
    # THEN the last line has the time of the line before it, not of the skipped one
    assert [(e.span.line, e.span.t) for e in events][-2:] == [(5, 99.586141), (6, 99.586141)]


def test_the_remembered_step_prefixes_stay_bounded(tmp_path: Path) -> None:
    """GIVEN steps of many modules, some with very long lines, WHEN they are decoded, THEN
    the prefixes remembered for them stay within their bounds (a count, and no long line:
    a log of garbage must not fill memory), and the steps are still recognized."""
    poplar_decoder._SPLIT.clear()
    long_name = "x" * 5000
    lines = [
        poplar_prefix(0, n) + f"Execute a_inference_step_{n}__XlaMustCompile" for n in range(5000)
    ]
    lines += [poplar_prefix(0, n) + f"Execute {long_name}_{n}" for n in range(50)]
    path = tmp_path / "run.log"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    c = ParseCounter(str(path))
    events = list(parse_log(str(path), c, log_format="poplar"))
    assert c.recognized == len(lines) and len(events) >= len(lines)
    assert 0 < len(poplar_decoder._SPLIT) <= KEPT_MAX
    assert max(map(len, poplar_decoder._SPLIT)) <= poplar_decoder._SPLIT_CHARS


_DIGITS = st.sampled_from("0123456789") | st.sampled_from("٣൭９²")  # (Unicode Nd, and not)
#: the first 17 characters of a stamp: well-formed (a date that exists or not, Unicode
#: digits), or not
_HEADS = ["2023-04-26 14:42:", "2023-04-26T23:59:", "2023-13-26 00:00:", "2023-04-2٣T14:42:"]
_REST = st.lists(
    st.builds(
        "{}{}{}{}".format,
        _DIGITS,
        _DIGITS,
        st.sampled_from(".x"),
        st.lists(_DIGITS, min_size=5, max_size=7).map("".join),
    )
    | st.builds("".join, st.lists(_DIGITS | st.sampled_from("-: T.Zx"), max_size=12)),
    min_size=1,
    max_size=2,
).map("".join)
_STAMPISH = st.tuples(st.sampled_from(_HEADS), _REST).map("".join) | st.builds(
    "".join, st.lists(_DIGITS | st.sampled_from("-: T.Zx"), max_size=30)
)


@settings(max_examples=examples(1000))
@given(lines=st.lists(_STAMPISH, min_size=1, max_size=8), clock=st.sampled_from(["local", "utc"]))
@example(lines=["2023-04-26 14:42:34.517107: I", "2023-04-26 14:42:59.999999"], clock="local")
@example(lines=["2023-04-26T14:42:34.517107Z", "2023-04-26T14:42:3٣.517107Z"], clock="utc")
@example(lines=["2023-04-26T14:42:34.517107Z", "2023-04-26T14:42:61.000000Z"], clock="utc")
@example(lines=["2023-02-30 14:42:34.517107", "2023-04-26 14:42:34.51710"], clock="local")
@example(lines=["2023-04-26 14:42:34.517107", "2023-04-26 14:42:34x517107"], clock="local")
def test_a_stamp_read_by_its_remembered_head_is_what_the_pattern_and_full_reading_give(
    lines: list[str], clock: str
) -> None:
    # GIVEN any text where a line's stamp would be (a well-formed stamp, a date that does
    # not exist, Unicode digits, a cut stamp, garbage), after other lines whose heads the
    # reader remembered (or with its memory emptied)
    from recompile_doctor.parsers import _prefixes

    for line in [f"{head}00.000000" for head in _HEADS] + lines:
        # WHEN the stamp's seconds are read by the remembered head
        got = _prefixes.stamp_seconds(line, clock)
        # THEN they are what the stamp's pattern and the full reading give
        want = (
            None
            if _prefixes.STAMP_OF[clock].match(line) is None
            else _prefixes.epoch_seconds(line[: _prefixes.STAMP_LEN])
        )
        assert got == want, line
    _prefixes._HEADS[clock].clear()


#: what may follow a stamp: the prefixes' rests as the stack writes them, and shapes that
#: look alike (no space after the file, a second space, a line that ends after the level,
#: other loggers, threads and files, text that merely contains the separators)
_PREFIX_RESTS = [
    ": I tensorflow/x.cc:1109] ",
    ": I tensorflow/x.cc:1109]",
    ": W  12 tensorflow/y.cc:7]  ",
    ": I 3904 x.cc:1] ",
    ": I tensorflow/x.cc:1109]] ",
    ": X tensorflow/x.cc:1109] ",
    "Z PO:ENGINE   3556.3556 I: ",
    "Z PO:ENGINE   3556.3556 I:",
    "Z PL:POPLIN   3556.3557 D: ",
    "Z popart:session 1.2 W: ",
    "Z PO:ENGINE 3556.3556 Q: ",
    "Z PO:ENGINE   3556.3556 I:  ",
    "Z ",
    ": ",
    # (what a line with 6 characters glued in front has where a stamp's rest would be)
    "517107: I tensorflow/x.cc:1109] ",
    "103248Z PO:ENGINE   3556.3556 I: ",
]
_STAMPS = st.sampled_from(
    [
        "2023-04-26 14:42:34.517107",
        "2023-04-26 14:42:35.000001",
        "2023-04-26T14:42:34.103248",
        "2023-04-26T14:43:00.000000",
        "2023-13-26T25:00:00.000000",
        "2023-04-26T14:42:34.10324x",
        "2023-04-2٣ 14:42:34.517107",
        "09:38:52.878 15288",
        "",
    ]
)


@settings(max_examples=examples(500))
@given(
    lines=st.lists(
        st.tuples(
            st.sampled_from(["", "glued ", "[1,0]<stdout>:"]),
            _STAMPS,
            st.sampled_from(_PREFIX_RESTS),
            st.sampled_from(["Execute m", "", " x] y: z", "Ending phase: a (duration 1 ms)"]),
        ).map("".join),
        min_size=1,
        max_size=12,
    )
)
@example(
    lines=[
        "2023-04-26T14:42:34.103248Z PO:ENGINE   3556.3556 I: Execute m",
        "2023-13-26T25:00:00.000000Z PO:ENGINE   3556.3556 I: Execute m",
        "2023-04-26T14:42:34.10324xZ PO:ENGINE   3556.3556 I: Execute m",
    ]
)
@example(
    lines=[
        "glued 2023-04-26 14:42:34.517107: I tensorflow/x.cc:1109] Execute m",
        "2023-04-26 14:42:34.517107517107: I tensorflow/x.cc:1109] Execute m",
    ]
)
def test_a_prefix_read_by_its_remembered_rest_is_what_the_pattern_reads(lines: list[str]) -> None:
    # GIVEN lines of stamps (well-formed or not, of either absolute clock), the text the
    # stack writes after them or text that looks alike, in any order: the rests read by
    # the pattern remembered as they come (or none, at first)
    from recompile_doctor.parsers import _prefixes

    _prefixes._RESTS.clear()
    for line in lines:
        # WHEN the prefix is split off
        got = _prefixes.split_prefix(line)
        # THEN it is what the pattern reads
        assert got == _prefixes._split_prefix(line), line
    _prefixes._RESTS.clear()


def test_a_remembered_rest_is_taken_for_a_line_of_the_same_logger() -> None:
    # GIVEN a TensorFlow and a Poplar line, read once
    from recompile_doctor.parsers import _prefixes

    _prefixes._RESTS.clear()
    tf = "2023-04-26 14:42:34.517107: I tensorflow/x.cc:1109] Execute m"
    po = "2023-04-26T14:42:34.103248Z PO:ENGINE   3556.3556 I: Ending phase: a"
    first = [_prefixes.split_prefix(tf), _prefixes.split_prefix(po)]
    assert set(_prefixes._RESTS) == {": I tensorflow/x.cc:1109] ", "Z PO:ENGINE   3556.3556 I: "}
    # WHEN lines of theirs with other stamps are read (the pattern broken meanwhile)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_prefixes, "_PREFIX_RE", None)
        tf2, po2 = (
            _prefixes.split_prefix(tf.replace(":34.5", ":59.5")),
            _prefixes.split_prefix(po.replace("14:42", "14:43")),
        )
    # THEN the remembered rests give their prefixes and messages
    assert tf2 == (first[0][0]._replace(seconds=first[0][0].seconds + 25), "Execute m", "")
    assert po2 == (first[1][0]._replace(seconds=first[1][0].seconds + 60), "Ending phase: a", "")
    _prefixes._RESTS.clear()


def _bits(x: float) -> bytes:
    import struct

    return struct.pack("<d", x)


@settings(max_examples=examples(3000))
@given(
    x=st.floats(allow_nan=True, allow_infinity=True)
    | st.builds(
        lambda k, half, nudge: (k + half) / 1e6 + nudge,
        st.integers(-(10**13), 10**13),
        st.sampled_from([0.0, 0.5, 0.4999, 0.5001]),
        st.sampled_from([0.0, 1e-12, -1e-12, 5e-13, 1e-9]),
    )
    | st.builds(
        lambda a, b: a - b, st.floats(1.6e9, 1.8e9), st.floats(1.6e9, 1.8e9)
    )  # (two stamps' difference)
    | st.floats(1e9, 2e10)  # (about 2**52 millionths)
)
@example(x=-1e-9)
@example(x=-0.0)
@example(x=0.0000005)
@example(x=2.0000005)
@example(x=1e300)
def test_a_time_rounded_by_multiplication_is_the_float_round_gives(x: float) -> None:
    # GIVEN any float (near a half of a millionth, huge, tiny, negative, zero of either
    # sign, not a number), WHEN a relative time is rounded to the microsecond, THEN it is
    # the float round() gives, to the bit
    from recompile_doctor.microseconds import round6

    assert _bits(round6(x)) == _bits(round(x, 6)), x
