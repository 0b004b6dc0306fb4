"""The PyTorch/XLA decoder (PT_XLA_DEBUG_LEVEL analysis blocks, metrics reports) on the
fixture rendered from the documented formats and on each message form."""

from __future__ import annotations

import glob
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from recompile_doctor.events import (
    CacheLookup,
    CompileFinished,
    CompileStarted,
    FrameworkNote,
    RecompileReason,
)
from recompile_doctor.parsers import ParseCounter, detect_format, parse_log
from recompile_doctor.parsers.ptxla import PtxlaDecoder, sniff
from tests.conftest import examples

ROOT = Path(__file__).resolve().parent.parent / "fixtures"
CASE = ROOT / "ptxla" / "partial_last_batch"


def _parse(path: Path) -> tuple[ParseCounter, list[object]]:
    c = ParseCounter(str(path))
    return c, list(parse_log(str(path), c))


def _decode(lines: list[str]) -> list[object]:
    d = PtxlaDecoder("x.log")
    out: list[object] = []
    for i, ln in enumerate(lines, 1):
        out.extend(d.decode(i, ln).events)
    out.extend(d.finish())
    return out


def _block(
    prefix: str, graph_hash: str, inputs: int = 6, frame: str = "step (/w/train.py:9)"
) -> list[str]:
    title = "Compilation Cause" if prefix.startswith("Compilation") else "Execution Cause"
    body = [
        "=" * 80,
        title,
        "  user torch_xla.sync",
        "Graph Info: ",
        f"  Graph Hash: {graph_hash}",
        f"  Number of Graph Inputs: {inputs}",
        "  Number of Graph Outputs: 5",
        "Python Frame Triggered Execution: ",
        "  sync (/v/lib/python3.11/site-packages/torch_xla/torch_xla.py:87)",
        f"  {frame}",
        "-" * 80,
        "=" * 80,
    ]
    return [prefix + b for b in body]


C = "Compilation Analysis: "
E = "Execution Analysis: "


def test_fixture_gives_two_compiles_a_graph_change_and_the_cache_hits() -> None:
    exp = json.loads((CASE / "expected.json").read_text())
    c, events = _parse(CASE / "run.log")
    assert c.format == "ptxla" and c.malformed == 0
    started = [e for e in events if isinstance(e, CompileStarted)]
    assert [e.key.graph_hash for e in started] == [x["graph_hash"] for x in exp["compiles"]]
    assert [e.span.line for e in started] == [x["log_lines"][0] for x in exp["compiles"]]
    assert {e.key.function for e in started} == {"train_loop"}
    assert all(e.key.framework == "ptxla" for e in started)
    finished = [e for e in events if isinstance(e, CompileFinished)]
    assert [e.key.graph_hash for e in finished if e.key] == [
        x["graph_hash"] for x in exp["compiles"]
    ]
    (reason,) = [e for e in events if isinstance(e, RecompileReason)]
    cause = exp["causes"][0]
    assert reason.rule in {cause["rule"], *cause["acceptable_rules"]}
    assert reason.key.graph_hash == cause["graph_hash"]
    assert (reason.changes[0].old, reason.changes[0].new) == tuple(cause["log_old_new"])
    assert reason.call_site == cause["call_site"] == reason.changes[0].call_site
    assert list(reason.lines) == exp["compiles"][1]["log_lines"]
    hits = [e for e in events if isinstance(e, CacheLookup) and e.outcome == "hit"]
    assert len(hits) == exp["cached_compiles"]
    assert all(h.store == "xla" for h in hits)
    (note,) = [e for e in events if isinstance(e, FrameworkNote)]
    assert note.note == "xla-metrics" and note.span.line == exp["metrics_report_line"]
    assert note.detail["cached_compiles"] == exp["cached_compiles"]
    assert note.detail["uncached_compiles"] == exp["uncached_compiles"]
    assert note.detail["compile_time_samples"] == len(exp["compiles"])


def test_a_changed_input_count_is_named_beside_the_hash() -> None:
    evs = _decode(_block(C, "aaa", inputs=6) + _block(C, "bbb", inputs=7))
    (r,) = [e for e in evs if isinstance(e, RecompileReason)]
    assert r.rule == "graph-changed"
    assert [(c.what, c.old, c.new) for c in r.changes] == [
        ("graph hash", "aaa", "bbb"),
        ("graph inputs", "6", "7"),
    ]
    assert r.call_site == "train.py:9" and r.key.function == "step"
    assert "user torch_xla.sync" in r.reason


def test_the_same_hash_compiled_again_is_no_graph_change() -> None:
    evs = _decode(_block(C, "aaa") + _block(C, "aaa"))
    assert [e for e in evs if isinstance(e, RecompileReason)] == []
    assert len([e for e in evs if isinstance(e, CompileStarted)]) == 2


def test_graphs_of_two_functions_are_not_compared() -> None:
    evs = _decode(_block(C, "aaa", frame="f (/w/a.py:1)") + _block(C, "bbb", frame="g (/w/a.py:2)"))
    assert [e for e in evs if isinstance(e, RecompileReason)] == []


def test_only_an_execution_not_right_after_its_compile_is_a_cache_hit() -> None:
    evs = _decode(_block(C, "aaa") + _block(E, "aaa") + _block(E, "aaa"))
    hits = [e for e in evs if isinstance(e, CacheLookup) and e.outcome == "hit"]
    assert len(hits) == 1 and hits[0].key is not None and hits[0].key.graph_hash == "aaa"
    assert hits[0].span.line == 25


def test_older_metric_totals_and_counters_are_read() -> None:
    lines = [
        "Metric: CompileTime",
        "  TotalSamples: 21",
        "  Counter: 06m09s401ms746.001us",
        "Counter: UncachedCompile",
        "  Value: 21",
        "Counter: PersistentCacheMiss",
        "  Value: 3",
        "pt-xla-profiler: CompileTime too frequent: 21 counts during 11 steps",
    ]
    evs = _decode(lines)
    notes = {e.note: e for e in evs if isinstance(e, FrameworkNote)}
    assert notes["xla-metrics"].detail["compile_time_samples"] == 21
    assert notes["xla-metrics"].detail["uncached_compiles"] == 21
    assert notes["xla-metrics"].detail["persistent_cache_misses"] == 3
    assert notes["xla-too-frequent"].detail == {"metric": "CompileTime", "count": 21, "steps": 11}


def test_an_analysis_line_outside_a_block_is_malformed() -> None:
    d = PtxlaDecoder("x.log")
    res = d.decode(1, C + "  Graph Hash: aaa")
    assert res.status == "malformed" and res.problem is not None


def test_a_block_cut_at_end_of_file_still_starts_its_compilation() -> None:
    evs = _decode(_block(C, "aaa")[:6])
    assert [e.key.graph_hash for e in evs if isinstance(e, CompileStarted)] == ["aaa"]


def test_the_fixture_is_detected_as_ptxla() -> None:
    head = (CASE / "run.log").read_text().splitlines()[:400]
    fmt = detect_format(head)
    assert fmt is not None and fmt.name == "ptxla"


OTHER_LOGS = [
    p
    for pat in ("simulated/*/run.log", "jax/*/run.log", "tensorflow/*/run.log", "torch/*/run.log")
    for p in glob.glob(str(ROOT / pat))
]


@pytest.mark.parametrize("path", OTHER_LOGS)
def test_other_frameworks_logs_do_not_sniff_as_ptxla(path: str) -> None:
    head = Path(path).read_text(errors="replace").splitlines()[:400]
    assert sniff(head) == 0


@settings(max_examples=examples(200), deadline=None)
@given(
    st.lists(st.sampled_from([C, E, "Metric: ", "Counter: ", "  Value: ", ""]), max_size=30),
    st.lists(st.text(max_size=60), max_size=30),
)
def test_garbage_never_raises(prefixes: list[str], texts: list[str]) -> None:
    _decode([p + t for p, t in zip(prefixes, texts, strict=False)])


_GRAPH_BODIES = [
    "=" * 80,
    "Compilation Cause",
    "  user torch_xla.sync",
    "Graph Info: ",
    "  Graph Hash: 6c1d8f0b",
    "  Graph Hash: b7e2a94c",
    "  Number of Graph Inputs: 6",
    "  Number of Graph Outputs: 5",
    "  Graph Name: step_fn",
    "Python Frame Triggered Execution: ",
    "  sync (/opt/venv/lib/python3.11/site-packages/torch_xla/torch_xla.py:87)",
    "  train_loop (/tmp/ptxla/train.py:24)",
    "  <module> (/tmp/ptxla/train.py:31)",
    "  Analysis: inside a body",
    "-" * 80,
    "",
]


@settings(max_examples=examples(200))
@given(
    bodies=st.lists(st.sampled_from(_GRAPH_BODIES), min_size=1, max_size=300),
    prefix=st.sampled_from(
        ["Compilation Analysis: ", "Execution Analysis: ", "Post Compilation Analysis: "]
    ),
)
def test_a_blocks_graph_read_from_its_text_is_the_one_read_from_its_lines(
    bodies: list[str], prefix: str
) -> None:
    # GIVEN a block's lines (short blocks, and blocks of deep frames past the memo's bound)
    from recompile_doctor.parsers.ptxla import _graph_of_block, _parse_graph

    text = prefix + ("\n" + prefix).join(bodies)
    # THEN the graph read from the block's text (memoized by it) is the one of its lines
    assert _graph_of_block(text) == _parse_graph(bodies)
