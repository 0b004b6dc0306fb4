"""The JAX log format: real captures (``fixtures/jax``) and every message form -> typed events.

Each fixture case has an ``expected.json`` written by hand from what its script does; the
decoder must find the same compilations, persistent-cache lookups and recompile causes, on
the same lines, without calling any line malformed.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from recompile_doctor.errors import RecompileDoctorError
from recompile_doctor.events import (
    CacheLookup,
    CompileActivity,
    CompileFinished,
    CompileStarted,
    FrameworkNote,
    ProcessConfig,
    ProcessStarted,
    RecompileReason,
    TypedEvent,
)
from recompile_doctor.parsers import LOG_FORMATS, ParseCounter, get_format, how_to_log, parse_log
from recompile_doctor.parsers._pylog import split_pylog
from recompile_doctor.parsers.jax import ANCHORS, type_change_rule
from recompile_doctor.rules import SHAPE_RULES
from tests.conftest import FIXTURES, examples

JAX_DIR = FIXTURES / "jax"
SIMULATED = sorted((FIXTURES / "simulated").glob("*/run.log"))


# -- helpers -----------------------------------------------------------------------------------
def parse(path: Path | str, **kw: Any) -> tuple[list[TypedEvent], ParseCounter]:
    c = ParseCounter(str(path))
    return list(parse_log(str(path), c, **kw)), c


def parse_text(tmp_path: Path, text: str, **kw: Any) -> tuple[list[TypedEvent], ParseCounter]:
    p = tmp_path / "run.log"
    p.write_bytes(text.encode("utf-8"))
    return parse(p, **kw)


def of(events: list[TypedEvent], kind: type[Any]) -> list[Any]:
    return [e for e in events if isinstance(e, kind)]


def persistent(events: list[TypedEvent]) -> Counter[str]:
    return Counter(e.outcome for e in of(events, CacheLookup) if e.store == "persistent")


def _runs() -> Iterator[Any]:
    """One param per run.log: (path, expected facts of that run, the case's expected.json)."""
    for exp in sorted(JAX_DIR.rglob("expected.json")):
        data = json.loads(exp.read_text())
        case = exp.parent.relative_to(JAX_DIR).as_posix()
        if "runs" in data:
            for run, facts in data["runs"].items():
                facts = {"eager_functions": [], "causes": [], **facts, "run": run}
                yield pytest.param(exp.parent / run / "run.log", facts, data, id=f"{case}/{run}")
        else:
            yield pytest.param(exp.parent / "run.log", data, data, id=case)


RUNS = list(_runs())

#: what the log itself shows for a cause found elsewhere (history of shapes, the dumps)
_LOG_RULE = {"growing-shape": "batch-size-changed", "frozen-weights": "object-recreated"}


def _log_rule(cause: dict[str, Any], reasons: list[RecompileReason]) -> str | None:
    """The rule the decoder gives the lines of ``cause`` (None: the log cannot show it)."""
    if not cause["log_lines"]:
        return None  # e.g. constants-elided: the dumps only
    rule: str = cause["rule"]
    if rule in _LOG_RULE:
        return _LOG_RULE[rule]
    named = {c.what for r in reasons for c in r.changes}
    if rule == "constant-changed" and cause["argument"] not in named:
        return "object-recreated"  # a closure's constant: the log shows the re-created function
    return rule


# -- the captures ------------------------------------------------------------------------------
def test_every_case_is_covered() -> None:
    assert len(RUNS) == 12 + 2 * 4


@pytest.mark.parametrize(("log", "facts", "case"), RUNS)
def test_capture_is_detected_and_fully_recognized(
    log: Path, facts: dict[str, Any], case: dict[str, Any]
) -> None:
    # GIVEN a real JAX run.log WHEN it is parsed with format detection
    events, c = parse(log)
    # THEN it is JAX's format, nothing is malformed, and the process knows its framework
    assert c.format == "jax"
    assert c.malformed == 0
    started = of(events, ProcessStarted)
    assert [(s.framework, s.new) for s in started] == [("jax", False)]
    assert events[0] is started[0]


@pytest.mark.parametrize(("log", "facts", "case"), RUNS)
def test_compilations_per_function(log: Path, facts: dict[str, Any], case: dict[str, Any]) -> None:
    # GIVEN a real JAX run.log WHEN it is parsed
    events, _ = parse(log)
    starts, ends = of(events, CompileStarted), of(events, CompileFinished)
    # THEN each user function has as many compile starts and ends as the script compiled it
    user_starts = Counter(f"jit({s.key.function})" for s in starts if not s.key.eager)
    user_ends = Counter(f"jit({e.key.function})" for e in ends if not e.key.eager)
    assert user_starts == Counter(facts["functions"])
    assert user_ends == Counter(facts["functions"])
    # AND the eager operations are told apart from them
    eager = [f"jit({s.key.function})" for s in starts if s.key.eager]
    assert eager == facts["eager_functions"]
    assert all(e.key.module == f"jit_{e.key.function}" for e in ends)
    # AND the XLA compilations are those not served by the persistent cache
    hits = persistent(events)["hit"]
    assert len(starts) - hits == facts["xla_compilations"]
    # AND every compilation's duration is the one JAX printed
    assert all(e.duration_s is not None and e.duration_s > 0 for e in ends)
    assert all(s.arguments and s.arguments.startswith("(ShapedArray(") for s in starts)


@pytest.mark.parametrize(("log", "facts", "case"), RUNS)
def test_persistent_cache_lookups(log: Path, facts: dict[str, Any], case: dict[str, Any]) -> None:
    # GIVEN a real JAX run.log WHEN it is parsed
    events, _ = parse(log)
    counts = persistent(events)
    expected = facts["persistent_cache"]
    # THEN its persistent-cache hits, misses and writes are counted once each (the lru and
    # compiler lines of one lookup are one lookup; a miss logged with no cache is none)
    if expected is None:
        assert counts["hit"] == counts["miss"] == counts["write"] == 0
    else:
        assert (counts["hit"], counts["miss"], counts["write"]) == (
            expected["hits"],
            expected["misses"],
            expected["writes"],
        )
        for lk in of(events, CacheLookup):
            if lk.store == "persistent" and lk.outcome in ("hit", "miss", "write"):
                assert lk.key is not None and lk.entry is not None
                assert lk.key.cache_key == lk.entry
                assert lk.entry.startswith(f"{lk.key.module}-")


@pytest.mark.parametrize(("log", "facts", "case"), RUNS)
def test_recompile_reasons(log: Path, facts: dict[str, Any], case: dict[str, Any]) -> None:
    # GIVEN a real JAX run.log WHEN it is parsed
    events, _ = parse(log)
    reasons = of(events, RecompileReason)
    causes = facts["causes"] if "run" not in facts else []
    # THEN the reasons name exactly the causes the log shows
    wanted = {r for c in causes if (r := _log_rule(c, reasons)) is not None}
    assert {r.rule for r in reasons} == wanted
    for cause in causes:
        rule = _log_rule(cause, reasons)
        if rule is None:
            continue
        fn = cause["function"]
        matching = [r for r in reasons if r.key.function == fn and r.rule == rule]
        assert matching, cause
        lines = {n for r in matching for n in r.lines}
        assert set(cause["log_lines"]) <= lines
        assert {r.call_site for r in matching} == {cause["call_site"]}
        changes = [c for r in matching for c in r.changes if c.what == cause["argument"]]
        if cause["rule"] == "growing-shape":
            # JAX compares with the closest earlier key: always the first shape
            assert rule in SHAPE_RULES
            assert [c.new for c in changes] == cause["sequence"][1:]
            assert {c.old for c in changes} == {cause["sequence"][0]}
        elif cause["argument"] is not None and rule == cause["rule"]:
            assert set(cause["log_lines"]) == lines
            assert (changes[0].old, changes[0].new) == (cause["old"], cause["new"])
            both = {(c.what, c.old, c.new) for c in matching[0].changes}
            expect = {(x["argument"], x["old"], x["new"]) for x in cause.get("changes", [])}
            assert expect <= both
            assert all(c.function == fn and c.call_site == cause["call_site"] for c in changes)
            assert all(c.line in r.lines for r in matching for c in r.changes)


@pytest.mark.parametrize(("log", "facts", "case"), RUNS)
def test_reasons_are_the_verbatim_blocks(
    log: Path, facts: dict[str, Any], case: dict[str, Any]
) -> None:
    # GIVEN a real JAX run.log WHEN it is parsed
    events, _ = parse(log)
    text = log.read_text(encoding="utf-8").splitlines()
    for r in of(events, RecompileReason):
        # THEN each reason is its block's lines, verbatim, on consecutive lines
        assert r.reason.split("\n") == [text[n - 1] for n in r.lines]
        assert list(r.lines) == list(range(r.lines[0], r.lines[-1] + 1))
        assert "TRACING CACHE MISS at " in r.reason.split("\n")[0]
        # AND the weak-type URL glued to a value stays in the reason but not in the value
        assert all("https://" not in (c.old or "") + (c.new or "") for c in r.changes)


def test_tracing_misses_are_one_per_block() -> None:
    # GIVEN growing_shape, whose summarize is traced 8 times WHEN parsed
    events, _ = parse(JAX_DIR / "growing_shape" / "run.log")
    misses = [e for e in of(events, CacheLookup) if e.store == "tracing"]
    # THEN each trace is one tracing-cache miss, the first one without a reason
    assert [m.span.line for m in misses] == [1, 9, 19, 29, 39, 49, 59, 69]
    assert [r.span.line for r in of(events, RecompileReason)] == [9, 19, 29, 39, 49, 59, 69]


def test_persistent_miss_logged_without_a_cache_is_not_a_lookup() -> None:
    # GIVEN static_arg: JAX_LOGGING_LEVEL=DEBUG and no persistent cache configured
    events, _ = parse(JAX_DIR / "static_arg" / "run.log")
    # THEN its DEBUG 'PERSISTENT COMPILATION CACHE MISS' lines count as no miss, and the
    # cache is reported off for each compilation
    lookups = [e for e in of(events, CacheLookup) if e.store == "persistent"]
    assert [(e.outcome, e.span.line) for e in lookups] == [("disabled", 35), ("disabled", 74)]
    assert all(e.key is not None and e.key.function == "train_step_lr" for e in lookups)


def test_time_is_seconds_since_the_first_stamp() -> None:
    # GIVEN batch_size (asctime prefix, first line at 19:10:38,361) WHEN parsed
    events, _ = parse(JAX_DIR / "batch_size" / "run.log")
    ends = of(events, CompileFinished)
    # THEN t is measured from the first stamp, and durations are JAX's
    assert [e.span.t for e in ends] == [pytest.approx(0.530), pytest.approx(0.860)]
    assert [e.duration_s for e in ends] == [0.365457773, 0.295343876]
    # AND a log of bare messages has no time
    events, _ = parse(JAX_DIR / "healthy" / "run.log")
    assert {e.span.t for e in events} == {None}


def test_static_arg_first_stamp_is_a_noise_line() -> None:
    # GIVEN static_arg, whose first stamped line (19:10:47,208) is not a JAX message
    events, _ = parse(JAX_DIR / "static_arg" / "run.log")
    # THEN times count from it
    assert of(events, CompileStarted)[0].span.t == pytest.approx(0.549)


def test_cache_key_components_and_flags() -> None:
    # GIVEN the flag_changed pair WHEN both runs are parsed
    def facts(run: str) -> tuple[dict[str, str], set[str], set[str]]:
        events, _ = parse(JAX_DIR / "crossrun" / "flag_changed" / run / "run.log")
        notes = of(events, FrameworkNote)
        comps = {
            n.detail["component"]: n.detail["hash"]
            for n in notes
            if n.note == "cache-key-component"
        }
        flags = [n for n in notes if n.note == "cache-key-flag"]
        assert all(n.key is not None and n.key.module == "jit_train_step" for n in flags)
        inc = {n.detail["flag"] for n in flags if n.detail["included"]}
        exc = {n.detail["flag"] for n in flags if not n.detail["included"]}
        return comps, inc, exc

    case = json.loads((JAX_DIR / "crossrun" / "flag_changed" / "expected.json").read_text())
    (ca, ia, xa), (cb, ib, xb) = facts("a"), facts("b")
    # THEN the components and hashes are those logged, and only the flag b adds is included
    assert ca["XLA flags"] == case["crossrun"]["hashes"]["a"]["XLA flags"]
    assert cb["XLA flags"] == case["crossrun"]["hashes"]["b"]["XLA flags"]
    assert ca["computation"] == cb["computation"]
    assert list(ca) == [
        "computation",
        "jax_lib version",
        "backend version",
        "XLA flags",
        "compile_options",
        "accelerator_config",
        "compression",
        "custom_hook",
    ]
    assert ia == set() and ib == {case["crossrun"]["new"]}
    assert xa == xb == {"--xla_dump_hlo_as_text", "--xla_dump_to=dumps"}


@pytest.mark.parametrize("case", ["compile_option_changed", "frozen_weights_pair"])
def test_crossrun_component_hashes(case: str) -> None:
    # GIVEN a cross-run pair WHEN each run is parsed
    exp = json.loads((JAX_DIR / "crossrun" / case / "expected.json").read_text())
    for run in ("a", "b"):
        events, _ = parse(JAX_DIR / "crossrun" / case / run / "run.log")
        comps = {
            n.detail["component"]: n.detail["hash"]
            for n in of(events, FrameworkNote)
            if n.note == "cache-key-component"
        }
        # THEN the component hashes the case names are those of that run
        for component, h in (exp["crossrun"].get("hashes") or {}).get(run, {}).items():
            assert comps[component] == h


def test_compile_options_note() -> None:
    # GIVEN compile_option_changed (device 0 in a, device 1 in b) WHEN parsed
    got = []
    for run in ("a", "b"):
        events, _ = parse(JAX_DIR / "crossrun" / "compile_option_changed" / run / "run.log")
        got += [n.detail for n in of(events, FrameworkNote) if n.note == "compile-options"]
    # THEN each run's device assignment is a note
    assert [d["device_assignment"] for d in got] == ["[[CpuDevice(id=0)]]", "[[CpuDevice(id=1)]]"]
    assert {(d["num_replicas"], d["num_partitions"]) for d in got} == {(1, 1)}


# -- prefixes ----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("line", "level", "logger", "message", "clock"),
    [
        (
            "2026-11-22 19:10:38,361 WARNING jax._src.dispatch: Finished tracing f for jit",
            "warning",
            "jax._src.dispatch",
            "Finished tracing f for jit",
            "local",
        ),
        (
            "WARNING:jax._src.dispatch:Finished tracing f for jit",
            "warning",
            "jax._src.dispatch",
            "Finished tracing f for jit",
            "none",
        ),
        (
            "DEBUG:2026-11-22 19:10:47,853:jax._src.compiler:173: get_compile_options: x",
            "debug",
            "jax._src.compiler",
            "get_compile_options: x",
            "local",
        ),
        (
            "W0610 23:50:26.227175 dispatch.py:205] Finished tracing f for jit",
            "warning",
            "dispatch.py",
            "Finished tracing f for jit",
            "time-only",
        ),
        (
            "I1122 19:10:47.728875   15526 pjrt_client.cc:579] PjRt-IFRT device count: total=1",
            "info",
            "pjrt_client.cc",
            "PjRt-IFRT device count: total=1",
            "time-only",
        ),
        (
            "2023-04-26 14:42:34.517107: I tensorflow/core/x.cc:1619] Compiled cluster",
            "info",
            "tensorflow/core/x.cc",
            "Compiled cluster",
            "local",
        ),
        (
            "2026-11-22 19:10:38,361 - jax - INFO - hello",
            "info",
            "jax",
            "hello",
            "local",
        ),
        ("Finished tracing f for jit", None, None, "Finished tracing f for jit", "none"),
        ("step 3 loss 0.1176", None, None, "step 3 loss 0.1176", "none"),
    ],
)
def test_split_pylog(
    line: str, level: str | None, logger: str | None, message: str, clock: str
) -> None:
    # GIVEN a line in one of the logging formats WHEN split
    pl = split_pylog(line)
    # THEN its level, logger and message come apart, with the time when it has one
    assert (pl.level, pl.logger, pl.message, pl.clock) == (level, logger, message, clock)
    assert (pl.seconds is None) == (clock == "none")


def test_split_pylog_times() -> None:
    a = split_pylog("2026-11-22 19:10:38,361 WARNING jax: x")
    b = split_pylog("WARNING:2026-11-22 19:10:39,000:jax:1: x")
    assert a.seconds is not None and b.seconds is not None
    assert b.seconds - a.seconds == pytest.approx(0.639)
    assert split_pylog("W0610 23:50:26.227175 d.py:1] x").seconds == pytest.approx(
        23 * 3600 + 50 * 60 + 26.227175
    )
    # an impossible date is no time, not an error
    assert split_pylog("2026-02-31 10:00:00,000 WARNING jax: x").seconds is None


# -- message forms -----------------------------------------------------------------------------
_COMPILE = """\
WARNING:jax._src.dispatch:Finished tracing f for jit in 0.010000000 sec
WARNING:jax._src.interpreters.pxla:Compiling jit(f) with global shapes and types (ShapedArray(float32[4]),). Argument mapping: (UnspecifiedValue,).
WARNING:jax._src.dispatch:Finished jaxpr to MLIR module conversion jit(f) in 0.020000000 sec
WARNING:jax._src.dispatch:Finished XLA compilation of jit(f) in 0.300000000 sec
"""


def test_one_compilation(tmp_path: Path) -> None:
    # GIVEN the lines of one compilation WHEN parsed
    events, c = parse_text(tmp_path, _COMPILE)
    # THEN it is one start (with its argument types) and one end (with JAX's duration)
    (s,) = of(events, CompileStarted)
    (e,) = of(events, CompileFinished)
    assert (s.key.function, s.key.module, s.key.eager) == ("f", "jit_f", False)
    assert s.arguments == "(ShapedArray(float32[4]),)"
    assert s.span.line == 2 and e.span.line == 4
    assert e.key == s.key and e.duration_s == 0.3
    (n,) = [n for n in of(events, FrameworkNote) if n.note == "traced"]
    assert n.detail["duration_s"] == 0.01 and n.span.line == 1
    assert [a.span.line for a in of(events, CompileActivity)] == [3]
    assert (c.recognized, c.malformed) == (4, 0)


def test_older_wordings(tmp_path: Path) -> None:
    # GIVEN JAX's older wordings (pjit era; 2023-2025 explanation headers)
    text = """\
TRACING CACHE MISS at /src/train.py:10:4 (main) because:
  never seen function:
    step id=1 defined at /src/train.py:3
Finished tracing + transforming step for pjit in 0.012 sec
Compiling pjit(step) with global shapes and types (ShapedArray(float32[4]),). Argument mapping: (UnspecifiedValue,).
Finished XLA compilation of pjit(step) in 0.5 sec
TRACING CACHE MISS at /src/train.py:12:4 (main) costing 12.345 ms because:
  for step defined at /src/train.py:3
  all previously seen cache keys are different. Closest previous key:
  * key with different input types:
      types now: x: f32[8]
      * at x, now f32[8] and before f32[4]
Finished tracing + transforming step for pjit in 0.012 sec
"""
    events, c = parse_text(tmp_path, text)
    # THEN they are recognized as the current ones are
    assert c.malformed == 0 and c.format == "jax"
    (s,) = of(events, CompileStarted)
    assert (s.key.function, s.key.module, s.key.eager) == ("step", "pjit_step", False)
    (r,) = of(events, RecompileReason)
    assert (r.rule, r.call_site, r.lines) == (
        "batch-size-changed",
        "train.py:12",
        (7, 8, 9, 10, 11, 12),
    )
    assert [(x.what, x.old, x.new, x.line) for x in r.changes] == [("x", "f32[4]", "f32[8]", 12)]
    (rec,) = [e.record for e in of(events, CacheLookup) if e.span.line == 7]
    assert rec is not None and rec.detail["cost_ms"] == 12.345
    assert [n.note for n in of(events, FrameworkNote)] == ["traced", "traced"]


def test_older_static_and_context_explanations(tmp_path: Path) -> None:
    # GIVEN 2025-era explanations of static arguments and tracing context
    text = """\
TRACING CACHE MISS at t.py:5:1 (main) costing 1.000 ms because:
  for g defined at t.py:2
  all previously seen cache keys are different. Closest previous key:
  * key with different value of static kwargs:
      now {lr: 0.01, n: 3} and before {lr: 0.1, n: 3}
TRACING CACHE MISS at t.py:6:1 (main) costing 1.000 ms because:
  for g defined at t.py:2
  all previously seen cache keys are different. Closest previous key:
  * key with different tracing context, e.g. due to config or context manager.
      found differences at positions
        [3]: now True and before False, and
        [5]: now 1 and before 0
      compare to tuple returned by config.trace_context() in jax/_src/config.py.
"""
    events, c = parse_text(tmp_path, text)
    a, b = of(events, RecompileReason)
    assert (a.rule, [(x.what, x.old, x.new) for x in a.changes]) == (
        "constant-changed",
        [("lr", "0.1", "0.01")],
    )
    assert b.rule == "global-state-changed"
    assert [(x.what, x.old, x.new) for x in b.changes] == [
        ("tracing context [3]", "False", "True"),
        ("tracing context [5]", "0", "1"),
    ]
    assert c.malformed == 0


def test_current_explanations(tmp_path: Path) -> None:
    # GIVEN the explanation kinds of the current JAX source (partial_eval.diff_*)
    text = """\
TRACING CACHE MISS at /a/t.py:5:1 (main):
  for g defined at /a/t.py:2
  all previously seen cache keys differ. For the closest previous key:
  Tracing context doesn't match, e.g. due to config or context manager.
  * enable_x64 differs: now True and before False
TRACING CACHE MISS at /a/t.py:6:1 (main):
  for g defined at /a/t.py:2
  all previously seen cache keys differ. For the closest previous key:
  different input types:
  * at x, now f32[8,3] and before f32[8,4]
  * at n, now i32[] and before f32[]
  * at b, now f32[7,4] and before f32[8,4]
TRACING CACHE MISS at /a/t.py:7:1 (main):
  for g defined at /a/t.py:2
  all previously seen cache keys differ. For the closest previous key:
  Debug info doesn't match.
TRACING CACHE MISS at /a/t.py:8:1 (main):
  for g defined at /a/t.py:2
  all previously seen cache keys differ. For the closest previous key:
  different input pytree:
  * at input path [0][1], now PyTreeDef((*, *)) and before PyTreeDef((*,)), so the numbers of children do not match
"""
    events, c = parse_text(tmp_path, text)
    r = of(events, RecompileReason)
    assert [x.rule for x in r] == [
        "global-state-changed",
        "batch-size-changed",
        "retracing",
        "retracing",
    ]
    assert [(x.what, x.old, x.new) for x in r[0].changes] == [("enable_x64", "False", "True")]
    # several changed arguments: one change each, the block's rule by priority
    assert [(x.what, type_change_rule(x.old or "", x.new or "")) for x in r[1].changes] == [
        ("x", "shape-changed"),
        ("n", "dtype-changed"),
        ("b", "batch-size-changed"),
    ]
    assert r[2].changes == ()
    assert [x.what for x in r[3].changes] == ["args[1]"]
    assert c.malformed == 0


@pytest.mark.parametrize(
    ("old", "new", "rule"),
    [
        ("f32[32,16]", "f32[8,16]", "batch-size-changed"),
        ("f32[8]", "f32[4]", "batch-size-changed"),
        ("f32[8,16]", "f32[8,17]", "shape-changed"),
        ("f32[8,16]", "f32[8,16,1]", "shape-changed"),
        ("f32[8,16]", "bf16[8,16]", "dtype-changed"),
        ("f32[8,16]", "bf16[4,16]", "batch-size-changed"),
        ("f32[]{weak_type=True}", "f32[]{weak_type=False}", "weak-type-changed"),
        ("f32[8]({devices=[2]<=[2]})", "f32[8]", "retracing"),
        ("float0", "f32[]", "retracing"),
        ("f8_e4m3fn[4]", "f32[4]", "dtype-changed"),
    ],
)
def test_type_change_rules(old: str, new: str, rule: str) -> None:
    assert type_change_rule(old, new) == rule


def test_eager_by_name_without_explanations(tmp_path: Path) -> None:
    # GIVEN a log without cache-miss explanations (JAX_LOG_COMPILES only)
    text = "".join(
        f"Compiling jit({fn}) with global shapes and types (). Argument mapping: ().\n"
        f"Finished XLA compilation of jit({fn}) in 0.1 sec\n"
        for fn in ("broadcast_in_dim", "train_step", "_where")
    )
    events, _ = parse_text(tmp_path, text)
    # THEN JAX-internal names are eager operations and the rest user functions
    assert [(s.key.function, s.key.eager) for s in of(events, CompileStarted)] == [
        ("broadcast_in_dim", True),
        ("train_step", False),
        ("_where", True),
    ]
    assert [e.key.eager for e in of(events, CompileFinished)] == [True, False, True]
    assert not any(s.cache_visible for s in of(events, CompileStarted))


def test_eager_by_explanations(tmp_path: Path) -> None:
    # GIVEN explanations on: a user function is always explained before its first compile
    text = (
        "TRACING CACHE MISS at /a/t.py:5:1 (main):\n"
        "  never seen function:\n"
        "    _step id=1 defined at /a/t.py:2\n"
        "Compiling jit(_step) with global shapes and types (). Argument mapping: ().\n"
        "Compiling jit(norm) with global shapes and types (). Argument mapping: ().\n"
    )
    events, _ = parse_text(tmp_path, text)
    # THEN an explained function is the user's, whatever its name, and the others are eager
    assert [(s.key.function, s.key.eager) for s in of(events, CompileStarted)] == [
        ("_step", False),
        ("norm", True),
    ]
    assert all(s.cache_visible for s in of(events, CompileStarted))
    assert of(events, RecompileReason) == []  # a first trace is no recompilation


def test_persistent_cache_lines(tmp_path: Path) -> None:
    key = "jit_f-" + "ab" * 32
    text = f"""\
WARNING:jax._src.interpreters.pxla:Compiling jit(f) with global shapes and types (). Argument mapping: ().
DEBUG:jax._src.compilation_cache:Initialized persistent compilation cache at /c
DEBUG:jax._src.lru_cache:Cache miss for key: '{key}'
WARNING:jax._src.compiler:PERSISTENT COMPILATION CACHE MISS for 'jit_f' with key '{key}'
WARNING:jax._src.compilation_cache:Writing jit_f to persistent compilation cache with key '{key}'
WARNING:jax._src.dispatch:Finished XLA compilation of jit(f) in 0.3 sec
WARNING:jax._src.interpreters.pxla:Compiling jit(f) with global shapes and types (). Argument mapping: ().
DEBUG:jax._src.lru_cache:Cache hit for key: '{key}'
WARNING:jax._src.dispatch:Finished XLA compilation of jit(f) in 0.01 sec
DEBUG:jax._src.compiler:Not writing persistent cache entry for 'jit_f' because it took < 1.00 seconds to compile (0.48s)
"""
    events, c = parse_text(tmp_path, text)
    lookups = [(e.outcome, e.span.line) for e in of(events, CacheLookup)]
    # THEN a lookup logged by both the lru cache and the compiler counts once (the compiler's
    # line), an lru line alone counts, and the cache is configured
    assert lookups == [("miss", 4), ("write", 5), ("hit", 8)]
    (cfg,) = of(events, ProcessConfig)
    assert cfg.cache_configured and cfg.flags == "jax_compilation_cache_dir=/c"
    (nw,) = [n for n in of(events, FrameworkNote) if n.note == "persistent-cache-not-written"]
    assert nw.detail == {
        "reason": "compile-time",
        "min_compile_time_s": 1.0,
        "compile_time_s": 0.48,
    }
    assert c.malformed == 0


def test_debug_miss_without_a_cache(tmp_path: Path) -> None:
    # GIVEN a DEBUG miss with nothing showing a cache in use, then a WARNING one
    text = (
        "DEBUG:jax._src.compiler:PERSISTENT COMPILATION CACHE MISS for 'jit_f' with key 'jit_f-1'\n"
        "WARNING:jax._src.compiler:PERSISTENT COMPILATION CACHE MISS for 'jit_f' with key 'jit_f-2'\n"
    )
    events, c = parse_text(tmp_path, text)
    # THEN only the WARNING one (logged because a cache is enabled) is a miss
    assert [e.entry for e in of(events, CacheLookup)] == ["jit_f-2"]
    assert c.recognized == 2


def test_crlf_is_the_same_log(tmp_path: Path) -> None:
    # GIVEN a capture with CRLF line ends WHEN parsed
    src = (JAX_DIR / "batch_size" / "run.log").read_text(encoding="utf-8")
    lf, _ = parse_text(tmp_path, src)
    (tmp_path / "crlf").mkdir()
    crlf, c = parse_text(tmp_path / "crlf", src.replace("\n", "\r\n"))

    # THEN the events are the same (sources aside)
    def facts(evs: list[TypedEvent]) -> list[tuple[str, int, float | None]]:
        return [(type(e).__name__, e.span.line, e.span.t) for e in evs]

    assert facts(crlf) == facts(lf) and c.malformed == 0
    (r,) = of(crlf, RecompileReason)
    assert "\r" not in r.reason


def test_block_cut_at_end_of_file(tmp_path: Path) -> None:
    # GIVEN a log that ends inside an explanation
    text = (
        "TRACING CACHE MISS at /a/t.py:5:1 (main):\n"
        "  for g defined at /a/t.py:2\n"
        "  all previously seen cache keys differ. For the closest previous key:\n"
        "  different input types:\n"
        "  * at x, now f32[2] and before f32[1]"
    )
    events, c = parse_text(tmp_path, text)
    # THEN what it says is still reported, from every line of it
    (r,) = of(events, RecompileReason)
    assert (r.rule, r.lines) == ("batch-size-changed", (1, 2, 3, 4, 5))
    assert c.malformed == 0 and c.recognized == 5


def test_header_cut_at_end_of_file(tmp_path: Path) -> None:
    events, _c = parse_text(tmp_path, "TRACING CACHE MISS at /a/t.py:5:1 (main):\n")
    (lk,) = of(events, CacheLookup)
    assert lk.store == "tracing" and lk.key is None
    assert of(events, RecompileReason) == []


@pytest.mark.parametrize(
    "line",
    [
        "Finished XLA compilation of jit(f) in",
        "Finished XLA compilation of jit(f) in 1e999 sec",
        "Finished XLA compilation of jit(f) in nan sec",
        "Finished XLA compilation",
        "Finished tracing f for jit in x sec",
        "Compiling jit(f) with glob",
        "TRACING CACHE MISS",
        "get_cache_key hash of serialized computation",
        "PERSISTENT COMPILATION CACHE MISS for jit_f",
    ],
)
def test_malformed_lines(tmp_path: Path, line: str) -> None:
    # GIVEN a JAX message that does not fit its format WHEN parsed
    _events, c = parse_text(tmp_path, _COMPILE + line + "\n")
    # THEN that line is malformed, not an error
    assert c.malformed == 1
    # AND with --strict it is the tool's one-line error naming the line
    with pytest.raises(RecompileDoctorError) as e:
        parse_text(tmp_path, _COMPILE + line + "\n", strict=True)
    assert e.value.line == 5


def test_truncated_end_still_ends_the_compilation(tmp_path: Path) -> None:
    events, _ = parse_text(
        tmp_path,
        "Compiling jit(f) with global shapes and types (). Argument mapping: ().\n"
        "Finished XLA compilation of jit(f) in\n",
    )
    (e,) = of(events, CompileFinished)
    assert e.key is not None and e.key.module == "jit_f" and e.duration_s is None


def test_other_compiling_lines_are_not_jax(tmp_path: Path) -> None:
    _events, c = parse_text(tmp_path, _COMPILE + "Compiling module cluster_1 for IPU\n")
    assert c.malformed == 0 and c.unrecognized == 1


_ANCHOR_BITS = [*ANCHORS, "TRACING CACHE MISS at ", "  * at x, now ", " in 1 sec", "'", "(", "\t"]
_REAL = sorted(
    {ln for p in JAX_DIR.rglob("run.log") for ln in p.read_text(encoding="utf-8").splitlines()}
)


@settings(
    max_examples=examples(150),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    st.lists(
        st.one_of(
            st.text(max_size=60),
            st.sampled_from(_REAL),
            st.builds(
                lambda a, b, c: a + b + c,
                st.text(max_size=10),
                st.sampled_from(_ANCHOR_BITS),
                st.text(max_size=30),
            ),
            st.builds(lambda s, n: s[:n], st.sampled_from(_REAL), st.integers(0, 200)),
        ),
        max_size=30,
    )
)
def test_garbage_never_raises(tmp_path_factory: pytest.TempPathFactory, lines: list[str]) -> None:
    # GIVEN any mix of garbage, real lines, cut lines and anchors WHEN parsed as JAX
    d = tmp_path_factory.mktemp("g")
    text = "\n".join(ln.replace("\n", " ").replace("\r", " ") for ln in lines) + "\n"
    p = d / "run.log"
    p.write_bytes(text.encode("utf-8", "surrogatepass"))
    try:
        events, c = parse(p, log_format="jax")
    except RecompileDoctorError:
        return  # an empty input
    # THEN nothing raises, and the counts add up to the lines
    assert c.recognized + c.unrecognized + c.malformed == c.read.lines
    assert all(e.span.line <= c.read.lines for e in events)


# -- the registry ------------------------------------------------------------------------------
def test_registered() -> None:
    assert [f.name for f in LOG_FORMATS][:2] == ["poplar", "jax"]
    fmt = get_format("jax")
    assert fmt.framework == "jax"
    text = how_to_log(["jax"])
    assert "JAX_LOG_COMPILES=1" in text and "JAX_EXPLAIN_CACHE_MISSES=1" in text
    assert "JAX_DEBUG_LOG_MODULES" in text


@pytest.mark.parametrize("log", SIMULATED, ids=[p.parent.name for p in SIMULATED])
def test_jax_never_claims_a_poplar_log(log: Path) -> None:
    # GIVEN a (simulated) Poplar log WHEN its format is detected
    _, c = parse(log)
    # THEN it is Poplar's, and JAX's sniff sees nothing of its own in it
    assert c.format == "poplar"
    head = log.read_text(encoding="utf-8", errors="replace").splitlines()[:400]
    assert get_format("jax").sniff(head) == 0


def test_jax_sniff_is_zero_on_real_poplar_logs() -> None:
    for log in sorted((FIXTURES / "poplar" / "real").glob("*.log")):
        head = log.read_text(encoding="utf-8", errors="replace").splitlines()[:400]
        assert get_format("jax").sniff(head) == 0, log.name


#: the ``Compiling`` message's pattern as it was, arguments and all (a lazy group before an
#: optional tail and the end): the reference the str-method reading is held to
_COMPILING_WHOLE = (
    r"Compiling (?P<name>\S+)(?: \(\d+\))?(?: for)? with global shapes and types "
    r"(?P<args>.*?)(?:\. Argument mapping: .*)?\s*$"
)
_COMPILING_BITS = st.sampled_from(
    [
        "Compiling ",
        "jit(f)",
        " (3)",
        " for",
        " with global shapes and types ",
        "(ShapedArray(float32[1,4]),)",
        ". Argument mapping: ",
        "(UnspecifiedValue,)",
        ".",
        " ",
        "  \t",
        "\r",
        "\u00a0",
        "\u3000",
        "x",
        "é",
    ]
)


_COMPILING_MESSAGES = st.builds(
    "{}Compiling {}{} with global shapes and types {}{}".format,
    st.sampled_from(["", "x ", "Compiling "]),
    st.sampled_from(
        ["jit(f)", "f", "", "jit(f) (3)", "jit(f) for", "a b", "a\tb", "a\xa0b", "\x00f", "\u0142"]
    ),
    st.sampled_from(["", " (3)", " for", " (3) for", " (x)"]),
    st.lists(_COMPILING_BITS, max_size=5).map("".join),
    st.sampled_from(["", ". Argument mapping: (x,)", ".", " ", "\r", "\u3000 ", ". Argument"]),
)


@settings(max_examples=examples(300))
@given(
    _COMPILING_MESSAGES
    | st.lists(
        _COMPILING_BITS | st.text(st.characters(blacklist_characters="\n"), max_size=4),
        max_size=12,
    ).map("".join)
)
def test_compiling_fields_are_what_the_whole_pattern_reads(msg: str) -> None:
    # GIVEN any message made of a Compiling line's pieces (several mappings, blanks of every
    # kind at its end, a name without its function, text before "Compiling")
    import re

    from recompile_doctor.parsers import _memo
    from recompile_doctor.parsers.jax import _COMPILING_OLD_RE, compiling_fields

    _memo.set_enabled(False)
    try:
        got = compiling_fields(msg)
    finally:
        _memo.set_enabled(True)
    # THEN its name and arguments are what the pattern with the arguments in it reads (the
    # old form's pattern where that one finds nothing)
    m = re.search(_COMPILING_WHOLE, msg) or _COMPILING_OLD_RE.search(msg)
    assert got == (None if m is None else (m["name"], m["args"]))


def _twins(name: str) -> list[Any]:
    """The JAX decoder's reader ``name`` in Python (``<name>_py``), the C module's where it is
    in use, and the one the decoder calls (one of the two)."""
    from recompile_doctor.parsers import jax
    from recompile_doctor.parsers._spans import native_in_use

    native = native_in_use()
    out = [getattr(jax, f"{name}_py"), getattr(jax, name)]
    if native is not None:
        assert getattr(jax, name) is getattr(native, name)
        out.append(getattr(native, name))
    return out


#: the ``Finished tracing`` message's pattern (a lazy function name before an optional
#: wrapper and the seconds at the end): the reference traced_fields is held to
_TRACED_WHOLE = (
    r"Finished tracing(?: \+ transforming)? (?P<fn>.+?)(?: for (?P<w>\w+))? in (?P<s>\S+) sec\s*$"
)
_TRACED_BITS = st.sampled_from(
    [
        "Finished tracing",
        " + transforming",
        " ",
        "summarize",
        " for ",
        "for",
        "jit",
        "pmap_2",
        "ab-c",
        " in ",
        "in",
        "0.0035",
        " sec",
        "sec",
        "  \t",
        "\u00a0",
        "\u3000",
        "_",
        "٣",
        "x",
    ]
)


#: text with no line end in it
_TEXT = st.text(st.characters(blacklist_characters="\n"), max_size=3)
_TRACED_MESSAGES = st.builds(
    "{}Finished tracing{}{}{}{}{}{}{}".format,
    st.sampled_from(["", "x ", "Finished tracing ", "DEBUG: "]),
    st.sampled_from(["", " + transforming", " + transforming "]),
    st.sampled_from([" "] * 4 + ["", "  "]),
    st.lists(_TRACED_BITS | _TEXT, min_size=1, max_size=4).map("".join),
    st.sampled_from(["", " for jit", " for pmap_2", " for ab-c", " for ", " for \u0663", "for x"]),
    # (each part well-formed more often than not, so that most messages are read)
    st.sampled_from([" in "] * 6 + [" in", "in ", " in  ", " in\u00a0"]),
    st.sampled_from(["0.0035"] * 4 + ["\u0663", "x sec", "", "1 2"]),
    st.sampled_from([" sec"] * 4 + [" sec ", " sec\u3000", "sec", " secs", " sec x"]),
)


@settings(max_examples=examples(500))
@given(_TRACED_MESSAGES | st.lists(_TRACED_BITS | _TEXT, max_size=14).map("".join))
@example("Finished tracing  for jit in 0.0035 sec")  # (a function named " for jit")
@example("Finished tracing + transforming  in 0.1 sec")  # (function "+ transforming ")
@example("Finished tracing f for a_b in 0.1 sec\u3000")
@example("Finished tracingFinished tracing for jit in 0.0035 sec")  # (the second one reads)
def test_traced_fields_are_what_the_whole_pattern_reads(msg: str) -> None:
    # GIVEN any message made of a Finished tracing line's pieces (wrappers that are not
    # words, several " in " and " for ", blanks of every kind, text around it)
    import re

    # WHEN its fields are read (by the Python and by the C module, where it is in use) THEN
    # they are what the pattern reads
    m = re.search(_TRACED_WHOLE, msg)
    for read in _twins("traced_fields"):
        assert read(msg) == (None if m is None else (m["fn"], m["w"], m["s"])), read


_IN_SECONDS_BITS = st.sampled_from(
    [
        "Finished XLA compilation of ",
        "Finished jaxpr to MLIR module conversion ",
        "jit(f)",
        "jit_f",
        " in ",
        "in",
        " ",
        "  ",
        "\t",
        "\n",
        "\u00a0",
        "\u3000",
        "\x1c",
        "0.036",
        " sec",
        "sec",
        " secs",
        "x",
    ]
)
_IN_SECONDS_MESSAGES = st.builds(
    "{}{}{}{}{}{}".format,
    st.sampled_from(["", "x ", "Finished XLA compilation of ", "DEBUG: "]),
    st.sampled_from(["Finished XLA compilation of ", "Finished jaxpr to MLIR module conversion "]),
    st.lists(_IN_SECONDS_BITS | _TEXT, min_size=1, max_size=3).map("".join),
    st.sampled_from([" in "] * 6 + [" in", "in ", " in  ", " in\u00a0", "  in "]),
    st.sampled_from(["0.036"] * 4 + ["\u0663", "x sec", "", "1 2", "\t1"]),
    st.sampled_from([" sec"] * 4 + [" sec ", " sec\n", " sec\u3000", "sec", " secs", " sec x"]),
)


@settings(max_examples=examples(500))
@given(_IN_SECONDS_MESSAGES | st.lists(_IN_SECONDS_BITS | _TEXT, max_size=14).map("".join))
@example("Finished XLA compilation of jit(f) in 0.036 sec")
@example("Finished XLA compilation of   in 1 sec")  # (a blank name)
@example("Finished XLA compilation of a b in 1 sec Finished XLA compilation of c in 2 sec")
@example("Finished XLA compilation of a in 1 sec x Finished XLA compilation of c in 2 sec\n")
@example("Finished XLA compilation of a in  sec")
def test_in_seconds_reads_what_the_patterns_read(msg: str) -> None:
    # GIVEN any message made of the pieces of a lowering's or a compilation's end (several
    # prefixes, " in " and " sec", blanks of every kind, text around it)
    from recompile_doctor.parsers.jax import (
        _COMPILED_PREFIX,
        _COMPILED_RE,
        _LOWERED_PREFIX,
        _LOWERED_RE,
    )

    # WHEN its name and seconds are read (by the Python and by the C module, where it is in
    # use) THEN they are what each pattern's search reads
    for prefix, rx in ((_COMPILED_PREFIX, _COMPILED_RE), (_LOWERED_PREFIX, _LOWERED_RE)):
        m = rx.search(msg)
        for read in _twins("in_seconds"):
            assert read(msg, prefix) == (None if m is None else (m["name"], m["s"])), read


def test_a_long_function_name_is_kept_once(tmp_path: Path) -> None:
    """GIVEN a function whose name is longer than a memo keeps (generated code), named by
    its explanation, its compilation's lines and a second compilation THEN every event
    holds the one copy of its name and of its module's name (a log of such names kept one
    copy a line: 190 MB for 100 MB of 8,000-character names), and reads as a short one."""
    from recompile_doctor.bounded import KEY_LONGEST

    name = "f" + "x" * KEY_LONGEST
    text = (
        "TRACING CACHE MISS at /src/train.py:10:4 (main):\n"
        "  never seen function:\n"
        f"    {name} id=1 defined at /src/train.py:3\n"
        f"Compiling jit({name}) with global shapes and types (ShapedArray(float32[1]),). "
        "Argument mapping: (UnspecifiedValue,).\n"
        f"Finished XLA compilation of jit({name}) in 0.1 sec\n"
        f"Compiling jit({name}) with global shapes and types (ShapedArray(float32[2]),). "
        "Argument mapping: (UnspecifiedValue,).\n"
        f"Finished XLA compilation of jit({name}) in 0.1 sec\n"
    )
    events, c = parse_text(tmp_path, text)
    keys = [e.key for e in events if isinstance(e, (CompileStarted, CompileFinished))]
    assert len(keys) == 4 and c.malformed == 0
    assert all(k.function == name and k.module == f"jit_{name}" for k in keys)
    # every string of every event (its fields, its record's detail, its changes) that is
    # the name or the module's name is one object
    held: dict[str, set[int]] = {name: set(), f"jit_{name}": set()}

    def walk(v: object, depth: int = 0) -> None:
        if isinstance(v, str):
            if v in held:
                held[v].add(id(v))
        elif depth < 6 and isinstance(v, (tuple, list)):
            for x in v:
                walk(x, depth + 1)
        elif depth < 6 and isinstance(v, dict):
            for x in v.values():
                walk(x, depth + 1)
        elif depth < 6 and hasattr(v, "__dataclass_fields__"):
            for f in v.__dataclass_fields__:
                walk(getattr(v, f, None), depth + 1)

    for e in events:
        walk(e)
    assert [len(ids) for ids in held.values()] == [1, 1], held


def test_a_decoder_holds_long_names_by_their_digest() -> None:
    """GIVEN functions of long generated names, each explained, compiled and served from
    the persistent cache WHEN a decoder reads them THEN its sets and tables hold each long
    name by its digest, never the name (a new function per compilation held 80 MB of them
    at 400 MB of log), and its events name each as a short one is named."""
    from recompile_doctor.name_digest import HELD_CHARS, held
    from recompile_doctor.parsers.jax import JaxDecoder

    names = [f"f{k}_" + "x" * HELD_CHARS for k in range(3)] + ["short"]
    d = JaxDecoder("run.log")
    events = []
    n = 0
    for fn in names:
        for line in (
            "TRACING CACHE MISS at /src/train.py:10:4 (main):",
            "  never seen function:",
            f"    {fn} id=1 defined at /src/train.py:3",
            f"Compiling jit({fn}) with global shapes and types (ShapedArray(float32[1]),). "
            "Argument mapping: (UnspecifiedValue,).",
            f"Persistent compilation cache hit for 'jit_{fn}' with key 'k{n}'",
            f"Finished XLA compilation of jit({fn}) in 0.1 sec",
        ):
            n += 1
            events += d.decode(n, line).events
    events += d.finish()
    state = [*d._user_functions, *d._function_of, *d._function_of.values(), *d._eager_modules]
    assert all(not isinstance(x, str) or len(x) <= HELD_CHARS for x in state)
    assert {held(fn) for fn in names} <= set(d._user_functions)
    keys = [e.key for e in events if isinstance(e, (CompileStarted, CompileFinished))]
    assert [(k.function, k.module, k.eager) for k in keys] == [
        (fn, f"jit_{fn}", False) for fn in names for _ in range(2)
    ]


_CACHE_BITS = st.sampled_from(
    [
        "Cache hit for key: '",
        "Cache miss for key: '",
        "Cache hit for key: ",
        "jit_f-0a1b",
        "'",
        " ",
        "\n",
        "\u0142",
        "x",
    ]
)


@settings(max_examples=examples(500))
@given(st.lists(_CACHE_BITS | st.text(max_size=3), max_size=10).map("".join))
@example("Cache hit for key: 'jit_train_step-0e5'")
@example("Cache miss for key: 'a' Cache hit for key: 'b'")
@example("Cache hit for key: 'open Cache miss for key: 'b'")
def test_lru_fields_are_what_the_pattern_reads(msg: str) -> None:
    from recompile_doctor.parsers.jax import _LRU_RE, lru_fields

    m = _LRU_RE.search(msg)
    assert lru_fields(msg) == (None if m is None else (m["outcome"], m["key"]))


_OPTIONS_BITS = st.sampled_from(
    [
        "get_compile_options: num_replicas=",
        " num_partitions=",
        " device_assignment=",
        "[[CpuDevice(id=0)]]",
        "1",
        "12",
        "\u0663",
        "\u00b2",
        "x",
        " ",
        "\t",
        "\u3000",
        "\n",
    ]
)


@settings(max_examples=examples(500))
@given(st.lists(_OPTIONS_BITS | st.text(max_size=3), max_size=12).map("".join))
@example("get_compile_options: num_replicas=1 num_partitions=1 device_assignment=[[0]]  ")
@example("get_compile_options: num_replicas=\u0663 num_partitions=1 device_assignment=x\u3000")
@example("get_compile_options: num_replicas=1 num_partitions=x device_assignment=a")
@example("get_compile_options: num_replicas=1 num_partitions=2 device_assignment=a\nb")
@example(
    "get_compile_options: num_replicas=1x get_compile_options: num_replicas=2 num_partitions=3 device_assignment=d"
)
def test_options_fields_are_what_the_pattern_reads(msg: str) -> None:
    from recompile_doctor.parsers.jax import _OPTIONS_RE, options_fields

    m = _OPTIONS_RE.search(msg)
    assert options_fields(msg) == (None if m is None else (int(m["r"]), int(m["p"]), m["da"]))
