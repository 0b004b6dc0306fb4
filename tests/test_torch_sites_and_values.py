"""torch: the user's call site, the new value of what changed, frame names, and the message
forms the capture tests do not reach (verbose guard groups, rank prefixes, broken trace
envelopes).  GIVEN real captures or single messages, WHEN decoded, THEN the events say
where the user called the compiled code and what changed, old -> new."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from recompile_doctor.events import CompileStarted, RecompileReason, TypedEvent
from recompile_doctor.parsers import ParseCounter, parse_log
from recompile_doctor.parsers.torch import TorchLogDecoder
from recompile_doctor.parsers.torch import sniff as text_sniff
from recompile_doctor.parsers.torch_trace import TorchTraceDecoder
from recompile_doctor.parsers.torch_trace import sniff as trace_sniff

ROOT = Path(__file__).resolve().parent.parent / "fixtures" / "torch"
CASES = sorted(p.parent.name for p in ROOT.glob("*/expected.json"))
CAPTURE = (ROOT / "capture.py").read_text().splitlines()
NOT_GUARDS = ("graph-break", "rank-divergence", "compile-failed", "recompile-limit")


def _events(path: Path) -> list[TypedEvent]:
    c = ParseCounter(str(path))
    out = list(parse_log(str(path), c))
    assert c.malformed == 0
    return out


def _reasons(paths: list[Path]) -> dict[tuple[str | None, str | None], RecompileReason]:
    out: dict[tuple[str | None, str | None], RecompileReason] = {}
    for p in paths:
        for e in _events(p):
            if isinstance(e, RecompileReason):
                out.setdefault((e.rule, e.key.compile_id), e)
    return out


def _causes(case: str) -> list[dict[str, object]]:
    exp = json.loads((ROOT / case / "expected.json").read_text())
    return [c for c in exp["causes"] if c["rule"] not in NOT_GUARDS]


def _code(site: str) -> str:
    return CAPTURE[int(site.split(":")[1]) - 1]


# -- call sites ----------------------------------------------------------------------------
@pytest.mark.parametrize("case", CASES)
def test_trace_call_site_is_the_line_that_called_the_compiled_code(case: str) -> None:
    """expected.json names the case's ``# CALL`` line.  The trace's dynamo_start stack gives
    the innermost user line above torch's frames: the CALL line itself, or, when the CALL line
    calls the helper ``_train_step``, the helper's ``model(x)`` line.  Where torch cut the
    stack short (a compiled function called directly, a resume function) the guard's own user
    line stands in: a line inside the compiled function (none for a tensor guard)."""
    reasons = _reasons(sorted((ROOT / case / "trace").iterdir()))
    for cause in _causes(case):
        r = reasons[(str(cause["rule"]), str(cause["compile_id"]))]
        expected = str(cause["call_site"])
        site = r.call_site
        if site == expected:
            continue
        if site is None:
            # a direct call (stack cut short) whose guard has no source comment: no user line
            assert "# " not in str(cause["torch_reason"]), (case, cause["compile_id"])
            continue
        if "_train_step(" in _code(expected):
            assert site == "capture.py:54" and "model(x)" in _code(site)
        else:
            # no caller in the stack: the guard's own line, inside the compiled function
            assert site in str(cause["torch_reason"]), (site, cause["torch_reason"])
        assert all(c.call_site == site for c in r.changes)


def test_trace_call_site_of_a_direct_call_under_torch_frames_is_the_call_line() -> None:
    """global_state's eval step calls the compiled module straight from the case function."""
    reasons = _reasons(sorted((ROOT / "global_state" / "trace").iterdir()))
    r = reasons[("global-state-changed", "0/1")]
    assert r.call_site == "capture.py:229" and "# CALL global_state eval" in _code("capture.py:229")


def test_text_log_call_site_is_the_user_stack_line() -> None:
    reasons = _reasons([ROOT / "specialized_int" / "run.log"])
    r = reasons[("constant-changed", "0/2")]
    assert r.call_site == "capture.py:138" and "range(n)" in _code("capture.py:138")


# -- new values ----------------------------------------------------------------------------
#: (case, compile id) whose new value the log or trace shows: the next entry's guard dump
#: (text: [__guards]; trace: dynamo_cpp_guards_str), or a later reason on the same entry
NEW_IN_TEXT = {
    ("specialized_int", "0/1"),
    ("specialized_int", "0/2"),
    ("recompile_limit", "0/1"),
    ("recompile_limit", "0/2"),
    ("recompile_limit", "0/3"),
    ("misleading_first_guard", "0/1"),
    ("module_recreated", "0/1"),
    ("module_recreated", "0/2"),
    ("module_recreated", "0/3"),
}
NEW_IN_TRACE = {
    ("specialized_int", "0/1"),
    ("specialized_int", "0/2"),
    ("specialized_int", "0/3"),
    ("recompile_limit", "0/1"),
    ("recompile_limit", "0/2"),
    ("recompile_limit", "0/3"),
    ("misleading_first_guard", "0/1"),
    ("module_recreated", "0/1"),
    ("module_recreated", "0/2"),
    ("module_recreated", "0/3"),
}


@pytest.mark.parametrize("source", ["text", "trace"])
@pytest.mark.parametrize(
    "case",
    [
        "specialized_int",
        "recompile_limit",
        "misleading_first_guard",
        "module_recreated",
        "value_guard",
        "graph_break",
    ],
)
def test_constant_and_type_id_changes_get_their_new_value(case: str, source: str) -> None:
    paths = (
        [ROOT / case / "run.log"] if source == "text" else sorted((ROOT / case / "trace").iterdir())
    )
    reasons = _reasons(paths)
    known = NEW_IN_TEXT if source == "text" else NEW_IN_TRACE
    for cause in _causes(case):
        r = reasons[(str(cause["rule"]), str(cause["compile_id"]))]
        change = r.changes[0]
        assert change.old == cause["old"]
        if cause["rule"] not in ("constant-changed", "object-recreated"):
            assert change.new == cause["new"]  # a tensor mismatch says both
        elif (case, cause["compile_id"]) in known:
            assert change.new == cause["new"], (case, cause["compile_id"])
        else:
            # value_guard: 0/1 made self.scale dynamic, so nothing pins 0.25; graph_break: the
            # float became dynamic; the last compile of a run has no later reason
            assert change.new is None


P0 = "V1122 19:12:19.846000 18125 torch/_dynamo/guards.py:5394] [0/{n}] [__{tag}] "


def _decode(lines: list[str]) -> list[TypedEvent]:
    d = TorchLogDecoder("x.log")
    out: list[TypedEvent] = []
    for i, ln in enumerate(lines, 1):
        out.extend(d.decode(i, ln).events)
    out.extend(d.finish())
    return out


def _block(n: int, *failures: str) -> list[str]:
    p = P0.format(n=n, tag="recompiles")
    return [
        p + "Recompiling function f in a.py:3",
        p + "    triggered by the following guard failure(s):",
    ] + [p + f"    - {f}" for f in failures]


def test_a_later_reason_on_the_same_entry_gives_the_new_value() -> None:
    evs = _decode(_block(1, "0/0: n == 3") + _block(2, "0/1: n == 4", "0/0: n == 3"))
    rs = {e.key.compile_id: e for e in evs if isinstance(e, RecompileReason)}
    assert (rs["0/1"].changes[0].old, rs["0/1"].changes[0].new) == ("3", "4")
    assert (rs["0/2"].changes[0].old, rs["0/2"].changes[0].new) == ("4", None)


def test_the_new_compiles_guard_dump_gives_the_new_value() -> None:
    g = P0.format(n=1, tag="guards")
    evs = _decode(
        [
            *_block(
                1,
                "0/0: ___check_type_id(model, 111), type=<class 'Head'>  # m(x)  # mp/a.py:9 in f",
            ),
            g
            + "| | +- TYPE_MATCH: ___check_type_id(L['model'], 222), type=<class 'Head'>  # m(x)  # mp/a.py:9 in f",
        ]
    )
    (r,) = [e for e in evs if isinstance(e, RecompileReason)]
    assert r.rule == "object-recreated" and (r.changes[0].old, r.changes[0].new) == ("111", "222")


def test_a_guard_on_another_expression_does_not_fill_the_new_value() -> None:
    g = P0.format(n=1, tag="guards")
    evs = _decode(
        [*_block(1, "0/0: n == 3"), g + "| | +- EQUALS_MATCH: L['m'] == 7  # x  # mp/a.py:9 in f"]
    )
    (r,) = [e for e in evs if isinstance(e, RecompileReason)]
    assert r.changes[0].new is None and r.key.compile_id == "0/1"


def test_trace_guard_artifact_gives_the_new_value_and_the_reason_is_kept_once() -> None:
    head = "V1122 19:11:57.159000 17536 torch/_dynamo/guards.py:5400] "
    lines = [
        head + '{"str": ["/w/train.py", 1]}',
        head
        + '{"dynamo_start": {"stack": [{"line": 9, "name": "f", "filename": 1}]}, "frame_id": 0, "frame_compile_id": 0, "attempt": 0}',
        head
        + '{"artifact": {"name": "recompile_reasons", "encoding": "json"}, "frame_id": 0, "frame_compile_id": 1, "attempt": 0, "has_payload": "x"}',
        '\t["0/0: n == 3  # for _ in range(n):  # w/train.py:10 in f"]',
        head
        + '{"dynamo_start": {"stack": [{"line": 9, "name": "f", "filename": 1}]}, "frame_id": 0, "frame_compile_id": 1, "attempt": 0}',
        head
        + '{"dynamo_cpp_guards_str": {}, "frame_id": 0, "frame_compile_id": 1, "attempt": 0, "has_payload": "y"}',
        "\t| | +- EQUALS_MATCH: L['n'] == 4  # for _ in range(n):  # w/train.py:10 in f",
        head
        + '{"compilation_metrics": {"compile_id": "0/1", "co_name": "f"}, "frame_id": 0, "frame_compile_id": 1, "attempt": 0}',
    ]
    d = TorchTraceDecoder("t.log")
    evs: list[TypedEvent] = []
    for i, ln in enumerate(lines, 1):
        evs.extend(d.decode(i, ln).events)
    evs.extend(d.finish())
    (r,) = [e for e in evs if isinstance(e, RecompileReason)]
    assert (r.changes[0].what, r.changes[0].old, r.changes[0].new) == ("n", "3", "4")
    assert r.call_site == "train.py:10"  # no framework frame above f: the guard's own line
    assert r.lines == (3, 4)


# -- frame names ---------------------------------------------------------------------------
def test_a_healthy_text_log_names_its_compilation_from_the_guard_dump() -> None:
    started = [e for e in _events(ROOT / "healthy" / "run.log") if isinstance(e, CompileStarted)]
    assert [e.key.function for e in started] == ["forward"]  # nn.Sequential.forward


def test_a_guard_comment_in_the_users_file_names_the_frame_over_torchs() -> None:
    g = P0.format(n=0, tag="guards")
    evs = _decode(
        [
            g
            + "| +- LAMBDA_GUARD: x == None  # _dynamo/output_graph.py:1135 in init_ambient_guards",
            g
            + "| | +- TENSOR_MATCH: check_tensor(L['x'])  # F.linear(x)  # nn/modules/linear.py:134 in forward",
            g + "| | +- EQUALS_MATCH: L['n'] == 3  # range(n)  # mp/capture/train.py:12 in step",
        ]
    )
    assert [e.key.function for e in evs if isinstance(e, CompileStarted)] == ["step"]


def test_a_recompile_message_names_the_frame_over_the_guard_dump() -> None:
    g = P0.format(n=0, tag="guards")
    evs = _decode(
        [
            g
            + "| | +- TENSOR_MATCH: check_tensor(L['x'])  # F.linear(x)  # nn/modules/linear.py:134 in forward",
            *_block(1, "0/0: tensor 'x' size mismatch at index 0. expected 4, actual 8"),
        ]
    )
    assert [e.key.function for e in evs if isinstance(e, CompileStarted)] == ["f", "f"]


# -- message forms ---------------------------------------------------------------------------
V = P0.format(n=2, tag="recompiles_verbose")
VERBOSE = [
    V + "Recompiling function scaled_sum in /tmp/capture-torch/capture.py:209",
    V + "    triggered by the following guard failure(s):",
    V + "    guard 0 failures:",
    V
    + "    - 0/1: n == 2                                                   # return (x * n).sum()  # mp/capture-torch/capture.py:211 in scaled_sum",
    V + "    - User stack trace:",
    V + '    -   File "/tmp/capture-torch/capture.py", line 211, in scaled_sum',
    V + "    -     return (x * n).sum()",
    V,
    V + "    guard 1 failures:",
    V + "    - 0/0: tensor 'x' size mismatch at index 0. expected 4, actual 8",
]


def test_verbose_guard_groups_pick_the_closest_entry_not_the_first_listed() -> None:
    evs = _decode(VERBOSE)
    (r,) = [e for e in evs if isinstance(e, RecompileReason)]
    assert r.rule == "batch-size-changed" and r.key.compile_id == "0/2"
    assert (r.changes[0].what, r.changes[0].old, r.changes[0].new) == ("x size[0]", "4", "8")
    assert any("torch listed first: 0/1: n == 2" in c.what for c in r.changes)
    assert r.lines == tuple(range(1, 11))
    assert r.call_site == "capture.py:211"


@pytest.mark.parametrize(
    ("prefix", "rank"),
    [("[default1]:[rank1]:", "1"), ("[rank3]:", "3"), ("[default0]:", "0"), ("", None)],
)
def test_rank_prefixes_tag_the_events_with_the_rank(prefix: str, rank: str | None) -> None:
    p = "V1122 19:12:33.693000 18510 torch/_dynamo/guards.py:5396] [0/1] [__recompiles] "
    evs = _decode(
        [
            prefix + p + "Recompiling function inner in /x/external_utils.py:67",
            prefix + p + "    triggered by the following guard failure(s):",
            prefix
            + p
            + "    - 0/0: tensor 'args[0]' size mismatch at index 0. expected 16, actual 8",
        ]
    )
    (r,) = [e for e in evs if isinstance(e, RecompileReason)]
    assert r.span.rank == rank and r.rule == "batch-size-changed" and r.lines == (1, 2, 3)
    assert {e.span.rank for e in evs if isinstance(e, CompileStarted)} == {rank}


def test_reasons_of_two_ranks_stay_apart() -> None:
    p = "V1122 19:12:33.693000 18510 torch/_dynamo/guards.py:5396] [0/1] [__recompiles] "
    lines = []
    for r in ("0", "1"):
        lines += [
            f"[rank{r}]:" + p + "Recompiling function inner in /x/e.py:67",
            f"[rank{r}]:" + p + "    triggered by the following guard failure(s):",
            f"[rank{r}]:"
            + p
            + f"    - 0/0: tensor 'a' size mismatch at index 0. expected 16, actual {r}",
        ]
    rs = [e for e in _decode(lines) if isinstance(e, RecompileReason)]
    assert [(e.span.rank, e.changes[0].new) for e in rs] == [("0", "0"), ("1", "1")]


T = "V1122 19:11:16.726000 16266 torch/_dynamo/convert_frame.py:303] "


@pytest.mark.parametrize(
    "bad",
    [
        T + '{"dynamo_start": {"stack": [',  # cut off
        T + "[1, 2, 3]",  # not an object (and no envelope)
        T + '{"dynamo_start": 1e999999, "frame_id": "x"}',  # odd but JSON
        '{"dynamo_start": {}} ] {"x": 1}',  # no glog prefix
    ],
)
def test_a_broken_trace_envelope_is_malformed_or_ignored_and_the_next_one_still_counts(
    bad: str,
) -> None:
    d = TorchTraceDecoder("t.log")
    res = d.decode(1, bad)
    assert res.status in ("malformed", "unrecognized", "recognized")
    if '] {"' in bad and not bad.startswith("V"):
        assert res.status == "malformed" and res.problem
    if bad.endswith("["):
        assert res.status == "malformed" and res.problem == "trace envelope is not valid JSON"
    good = (
        T
        + '{"dynamo_start": {"stack": [{"line": 9, "name": "f", "filename": 1}]}, "frame_id": 0, "frame_compile_id": 0, "attempt": 0}'
    )
    res2 = d.decode(2, good)
    evs = list(res2.events) + list(d.finish())
    assert res2.status == "recognized"
    assert [e.key.function for e in evs if isinstance(e, CompileStarted)] == ["f"]


@pytest.mark.parametrize("case", CASES)
def test_text_logs_do_not_sniff_as_traces(case: str) -> None:
    head = (ROOT / case / "run.log").read_text().splitlines()[:400]
    assert trace_sniff(head) == 0
    if case != "compile_failed":  # logs nothing of torch's under TORCH_LOGS=recompiles
        assert text_sniff(head) > 0
