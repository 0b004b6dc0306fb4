"""The torch text-log and structured-trace decoders on the real captures and on each
message form."""

from __future__ import annotations

import glob
import json
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from recompile_doctor.events import CompileStarted, FrameworkNote, RecompileReason
from recompile_doctor.parsers import ParseCounter, parse_log
from recompile_doctor.parsers.torch import TorchLogDecoder, sniff
from recompile_doctor.parsers.torch_trace import sniff as trace_sniff
from tests.conftest import examples

ROOT = Path(__file__).resolve().parent.parent / "fixtures"
CASES = sorted(p.parent.name for p in (ROOT / "torch").glob("*/expected.json"))


def _parse(path: Path) -> tuple[ParseCounter, list[object]]:
    c = ParseCounter(str(path))
    return c, list(parse_log(str(path), c))


@pytest.mark.parametrize("case", CASES)
def test_text_log_gives_the_expected_causes(case: str) -> None:
    exp = json.loads((ROOT / "torch" / case / "expected.json").read_text())
    path = ROOT / "torch" / case / "run.log"
    c, events = _parse(path)
    assert c.malformed == 0
    if case == "compile_failed":  # nothing is logged under TORCH_LOGS=recompiles
        return
    assert c.format == "torch"
    lines = path.read_text().splitlines()
    reasons = [e for e in events if isinstance(e, RecompileReason)]
    for cause in exp["causes"]:
        if cause["rule"] in ("graph-break", "rank-divergence"):
            continue
        got = [
            r
            for r in reasons
            if r.rule == cause["rule"] and r.key.compile_id == cause["compile_id"]
        ]
        assert got, cause
        r = got[0]
        assert list(r.lines) == cause["log_lines"]
        assert r.span.text.split("\n") == [lines[i - 1] for i in r.lines]
        if cause["rule"] != "global-state-changed":  # old/new grad mode is not in the text
            assert r.changes[0].old == cause["old"]
        if r.changes[0].new is not None and cause["rule"] != "global-state-changed":
            assert r.changes[0].new == cause["new"]
        assert cause["torch_reason"].split("  #")[0].rstrip() in r.reason
        if "rank" in cause:
            assert r.span.rank == str(cause["rank"])
    breaks = [e for e in events if isinstance(e, FrameworkNote) and e.note == "graph-break"]
    assert len(breaks) == sum(1 for x in exp["causes"] if x["rule"] == "graph-break")
    for b in breaks:
        assert b.detail["user_frame"] == "capture.py:170"
    started = Counter(e.key.function for e in events if isinstance(e, CompileStarted))
    for fn, n in exp["frames"].items():
        assert started.get(fn, 0) in (0, n) or started.get(None, 0) == n


@pytest.mark.parametrize("case", CASES)
def test_trace_gives_the_expected_compilations(case: str) -> None:
    exp = json.loads((ROOT / "torch" / case / "expected.json").read_text())
    counts: Counter[str | None] = Counter()
    rules: set[tuple[str | None, str | None]] = set()
    for path in sorted((ROOT / "torch" / case / "trace").iterdir()):
        c, events = _parse(path)
        assert c.format == "torch-trace" and c.malformed == 0
        counts.update(e.key.function for e in events if isinstance(e, CompileStarted))
        rules.update((e.rule, e.key.compile_id) for e in events if isinstance(e, RecompileReason))
    if "ranks" in exp:
        assert sum(counts.values()) == sum(sum(r["frames"].values()) for r in exp["ranks"].values())
    else:
        assert dict(counts) == exp["frames"]
    for cause in exp["causes"]:
        if cause["rule"] not in ("graph-break", "rank-divergence"):
            assert (cause["rule"], cause["compile_id"]) in rules


OTHER_LOGS = [
    p
    for pat in (
        "simulated/*/run.log",
        "poplar/real/*.log",
        "jax/*/run.log",
        "tensorflow/*/run.log",
    )
    for p in glob.glob(str(ROOT / pat))
]


@pytest.mark.parametrize("path", OTHER_LOGS)
def test_other_frameworks_logs_do_not_sniff_as_torch(path: str) -> None:
    head = Path(path).read_text(errors="replace").splitlines()[:400]
    assert sniff(head) == 0 and trace_sniff(head) == 0


def test_a_trace_does_not_sniff_as_a_text_log() -> None:
    path = next((ROOT / "torch" / "dtype" / "trace").iterdir())
    head = path.read_text().splitlines()[:400]
    assert sniff(head) == 0 < trace_sniff(head)


P = "V1122 19:11:45.043000 17328 torch/_dynamo/guards.py:5396] [0/1] [__recompiles] "


def _decode(lines: list[str]) -> list[object]:
    d = TorchLogDecoder("x.log")
    out: list[object] = []
    for i, ln in enumerate(lines, 1):
        out.extend(d.decode(i, ln).events)
    out.extend(d.finish())
    return out


@pytest.mark.parametrize(
    ("guard", "rule", "old", "new"),
    [
        (
            "tensor 'x' size mismatch at index 0. expected 32, actual 8",
            "batch-size-changed",
            "32",
            "8",
        ),
        ("tensor 'x' size mismatch at index 1. expected 3, actual 4", "shape-changed", "3", "4"),
        (
            "tensor 'w' dtype mismatch. expected Float, actual Double",
            "dtype-changed",
            "Float",
            "Double",
        ),
        ("L['n'] == 3", "constant-changed", "3", None),
        ("self.scale == 0.5     # x  # mp/a/b.py:1 in f", "constant-changed", "0.5", None),
        ("___check_obj_id(L['m'], 1234)", "object-recreated", None, None),
        ("GLOBAL_STATE changed: grad_mode ", "global-state-changed", None, None),
        ("BACKEND_MATCH failure", "retracing", None, None),
    ],
)
def test_each_guard_form_maps_to_its_rule(
    guard: str, rule: str, old: str | None, new: str | None
) -> None:
    evs = _decode(
        [
            P + "Recompiling function f in file.py:38\r\n",
            P + "    triggered by the following guard failure(s):\r\n",
            P + f"    - 0/0: {guard}\r\n",
        ]
    )
    (r,) = [e for e in evs if isinstance(e, RecompileReason)]
    assert r.rule == rule and r.key.function == "f" and r.key.compile_id == "0/1"
    if old is not None:
        assert (r.changes[0].old, r.changes[0].new) == (old, new)
    assert [e.key.compile_id for e in evs if isinstance(e, CompileStarted)] == ["0/0", "0/1"]


def test_older_cache_size_limit_wording_is_a_recompile_limit() -> None:
    w = "W1122 19:12:01.763000 17718 torch/_dynamo/convert_frame.py:1994] [0/64] "
    evs = _decode(
        [w + "torch._dynamo hit config.cache_size_limit (64)", w + "   function: 'f' (a.py:3)"]
    )
    notes = [e for e in evs if isinstance(e, FrameworkNote)]
    assert notes[0].note == "recompile-limit" and notes[0].detail["limit"] == 64


def test_a_block_cut_at_end_of_file_is_still_reported() -> None:
    evs = _decode([P + "Recompiling function f in file.py:38"])
    assert [e.key.function for e in evs if isinstance(e, RecompileReason)] == ["f"]


@settings(max_examples=examples(200), deadline=None)
@given(st.lists(st.text(max_size=120), max_size=20))
def test_garbage_never_raises(lines: list[str]) -> None:
    _decode([P + ln for ln in lines] + lines)


def _with_pid(text: str, pid: str) -> str:
    """The lines of a captured log as another process wrote them (its glog prefix's id)."""
    import re

    return re.sub(r"^((?:\[\w+\]:)*[VIWEFC]\d{4} [\d:.]+ +)\d+ ", rf"\g<1>{pid} ", text, flags=re.M)


def test_runs_appended_to_one_log_are_each_their_own(tmp_path: Path) -> None:
    from recompile_doctor import analyze
    from recompile_doctor.events import ProcessStarted

    # GIVEN a captured run, and the same run again appended by another process (2>>), and
    # the two as two files
    one = (ROOT / "torch" / "batch_size" / "run.log").read_text()
    again = _with_pid(one, "99999")
    assert again != one
    appended = tmp_path / "appended.log"
    appended.write_text(one + again)
    (tmp_path / "a.log").write_text(one)
    (tmp_path / "b.log").write_text(again)
    # WHEN read
    _c, events = _parse(appended)
    # THEN a new process starts where the second run's lines begin, and its compilations
    # (compile ids [0/0] again) are its own, as from two files
    n = len(one.splitlines())
    [started] = [e for e in events if isinstance(e, ProcessStarted)]
    assert started.span.line == n + 1 and started.new
    starts = [e.span.line for e in events if isinstance(e, CompileStarted)]
    firsts = [e.span.line for e in _parse(tmp_path / "a.log")[1] if isinstance(e, CompileStarted)]
    assert starts == [*firsts, *(n + x for x in firsts)]
    with (
        analyze([str(appended)]) as r1,
        analyze([str(tmp_path / "a.log"), str(tmp_path / "b.log")]) as r2,
    ):
        assert len(r1.compilations) == len(r2.compilations) == 2 * len(firsts)
        assert [(f.rule, f.count) for f in r1.findings] == [(f.rule, f.count) for f in r2.findings]


def test_ranks_of_one_run_and_a_process_seen_again_start_no_new_run() -> None:
    from recompile_doctor.events import ProcessStarted

    # GIVEN two ranks' lines interleaved (a process id each), and lines without a rank from
    # two processes writing at once (A, B, then A again)
    line = "[rank{r}]:V1122 19:11:18.04{k}000 {pid} torch/_dynamo/guards.py:4786] [0/0] [__guards] GUARDS:"
    bare = "V1122 19:11:18.04{k}000 {pid} torch/_dynamo/guards.py:4786] [{f}/0] [__guards] GUARDS:"
    dec = TorchLogDecoder("run.log")
    lines = [line.format(r=k % 2, k=k, pid=100 + k % 2) for k in range(6)]
    lines += [bare.format(k=k, pid=pid, f=k) for k, pid in enumerate(["7", "8", "7", "8"])]
    events = [e for n, raw in enumerate(lines, 1) for e in dec.decode(n, raw).events]
    events += list(dec.finish())
    # THEN only the second bare process's first line starts a new run; each rank keeps its
    # compilation, and a process seen before is not a new one
    assert [e.span.line for e in events if isinstance(e, ProcessStarted)] == [8]
    assert len([e for e in events if isinstance(e, CompileStarted)]) == 2 + 4


def test_the_decoder_reads_the_line_pattern_s_groups_in_their_order() -> None:
    # GIVEN the torch line pattern, THEN its groups are LINE_GROUPS in order: the decoder
    # takes them all at once by position
    from recompile_doctor.parsers.torch_detect import LINE_GROUPS, LINE_RE

    index = LINE_RE.compiled().groupindex
    assert tuple(sorted(index, key=index.__getitem__)) == LINE_GROUPS
    assert len(index) == LINE_RE.compiled().groups


# pieces of torch lines, right and nearly right, joined at random: the fast reading of a
# line's prefix must give what the pattern gives (its groups, or no match) on each
_LINE_PIECES = (
    "[default0]:", "[default12]:", "[rank1]:", "[rank]:", "[default", "]:", "[",
    "V", "I", "W", "E", "F", "C", "X", "1122", "0931", "11٢2", "112", " ",
    "19:11:18", "19:11:1", "19:1١:18", ".046001", ".04600", ".٠46001", "  ", "16266", "1\u00a06",
    "torch/_dynamo/guards.py", "torch/a b.py", "torch/x]y.py", "torch/", "notorch/x.py",
    ":4786]", ":]", ":47a]", "]", " [0/0]", " [1/1_1]", " [0/0_]", " [a/0]", " [0/٣]",
    " [__guards]", " [__recompiles_verbose]", " [__]", " [__gu-ards]", " [__ü]",
    " GUARDS:", " Recompiling function f in /x.py:3", "x", "\t", "\r", "\n", "\x0b",
    "\u2028", "[0/0]", "[__guards]", " [", "]]",
)  # fmt: skip
_PREFIX = "V1122 19:11:18.046001 16266 torch/_dynamo/guards.py:4786]"


@settings(max_examples=examples(3000), deadline=None)
@given(
    st.one_of(
        st.lists(st.sampled_from(_LINE_PIECES), max_size=14).map("".join),
        # a well-formed prefix, then pieces (tags, messages, near misses)
        st.tuples(
            st.sampled_from(("", "[default1]:", "[rank3]:", "[default0]:[rank0]:")),
            st.lists(st.sampled_from(_LINE_PIECES), max_size=6).map("".join),
        ).map(lambda t: t[0] + _PREFIX + t[1]),
        # a well-formed prefix with one character changed
        st.tuples(
            st.integers(0, len(_PREFIX) - 1),
            st.one_of(st.sampled_from("XV0٣ \u00a0]:[./_\n"), st.characters()),
        ).map(lambda t: _PREFIX[: t[0]] + t[1] + _PREFIX[t[0] + 1 :] + " [0/0] m"),
        st.text(max_size=80),
    )
)
def test_a_line_s_prefix_read_by_str_methods_is_the_pattern_s(text: str) -> None:
    # GIVEN any text, THEN the decoder's reading of a line gives the line pattern's groups,
    # or None where the pattern does not match
    from recompile_doctor.parsers.torch import split_line
    from recompile_doctor.parsers.torch_detect import LINE_RE

    m = LINE_RE.match(text)
    assert split_line(text) == (None if m is None else m.groups())


def test_a_line_s_prefix_read_by_str_methods_on_every_torch_fixture() -> None:
    # GIVEN every line of the torch captures, THEN the fast reading is the pattern's, and
    # most lines match (the test is not passing on lines that match nothing)
    from recompile_doctor.parsers.torch import split_line
    from recompile_doctor.parsers.torch_detect import LINE_RE

    matched = 0
    for path in sorted((ROOT / "torch").glob("*/*.log")):
        for raw in path.read_text(encoding="utf-8", errors="replace").splitlines():
            m = LINE_RE.match(raw)
            assert split_line(raw) == (None if m is None else m.groups()), (path, raw)
            matched += m is not None
    assert matched > 1000


def test_the_pieces_a_line_s_prefix_is_read_by_are_kept_within_bounds() -> None:
    # GIVEN more distinct sources, stamps' seconds and tags than the tables keep, THEN each
    # table stays within its bound, and every line still reads as the pattern reads it
    from recompile_doctor.bounded import KEPT_MAX
    from recompile_doctor.parsers import torch
    from recompile_doctor.parsers.torch_detect import LINE_RE

    for k in range(KEPT_MAX + 50):
        line = (
            f"V{1100 + k % 30:04d} 19:{k // 60 % 60:02d}:{k % 60:02d}.000001 7 "
            f"torch/_dynamo/guards.py:{k}] [{k}/0] [__tag{k}] msg"
        )
        m = LINE_RE.match(line)
        assert m is not None
        assert torch.split_line(line) == m.groups()
    for table in (torch._HEADS, torch._SOURCES, torch._TAGS):
        assert 0 < len(table) <= KEPT_MAX
