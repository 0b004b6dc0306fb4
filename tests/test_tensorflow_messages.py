"""Every TensorFlow message form the decoder reads, older wordings and prefixes, broken
input (CRLF, a block cut by the end of the file, garbage), and detection."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from recompile_doctor.events import (
    CacheLookup,
    CompileFinished,
    CompileStarted,
    FrameworkNote,
    ProcessStarted,
    RecompileReason,
    TypedEvent,
)
from recompile_doctor.parsers import ParseCounter, detect_format, parse_log
from recompile_doctor.parsers.tensorflow import (
    TENSORFLOW,
    TensorFlowDecoder,
    classify,
    sniff,
    tf_function_name,
)
from tests.conftest import FIXTURES, examples

ABSL = "I0000 00:00:1795374921.{us:06d}   24077 {file}] "
OLD = "2024-03-12 17:55:10.{us:06d}: I tensorflow/compiler/jit/{file}] "
CLUSTER = "__inference_train_step_77[_XlaMustCompile=true,config_proto=1,executor_type=2]"
MODULE = "a_inference_train_step_77__XlaMustCompile_true_config_proto_1_executor_type_2_.7"
RETRACE = (
    "5 out of the last 5 calls to <function case.<locals>.train_step at 0x7f5886f779c0> "
    "triggered tf.function retracing. Tracing is expensive and the excessive number of "
    "tracings could be due to (1) creating @tf.function repeatedly in a loop, (2) passing "
    "tensors with different shapes, (3) passing Python objects instead of tensors. For (1), "
    "please define your @tf.function outside of the loop. For (2), @tf.function has "
    "reduce_retracing=True option that can avoid unnecessary retracing. For (3), please "
    "refer to https://www.tensorflow.org/guide/function#controlling_retracing and "
    "https://www.tensorflow.org/api_docs/python/tf/function for  more details."
)
#: TF <= 2.8
RETRACE_RELAX = (
    "6 out of the last 11 calls to <function train_step at 0x7f0> triggered tf.function "
    "retracing. Tracing is expensive and the excessive number of tracings could be due to "
    "(1) creating @tf.function repeatedly in a loop, (2) passing tensors with different "
    "shapes, (3) passing Python objects instead of tensors. For (1), please define your "
    "@tf.function outside of the loop. For (2), @tf.function has experimental_relax_shapes=True "
    "option that relaxes argument shapes that can avoid unnecessary retracing."
)
#: TF 2.1 / 2.2
RETRACE_OLD = (
    "11 out of the last 11 calls to <function Model.make_predict_function.<locals>."
    "predict_function at 0x7e4d6638aef0> triggered tf.function retracing. Tracing is "
    "expensive and the excessive number of tracings is likely due to passing python objects "
    "instead of tensors. Also, tf.function has experimental_relax_shapes=True option that "
    "relaxes argument shapes that can avoid unnecessary retracing."
)


def _block(batch: int, dtype: str = "float", state: int = 0, us: int = 0) -> list[str]:
    """The per-call signature block of ``device_compiler=3``."""
    p = ABSL.format(us=us, file="device_compiler.h:482")
    sig = f"{CLUSTER},{dtype} [{batch},784],int32 [{batch}],float [784,16]"
    out = [
        ABSL.format(us=us, file="device_compiler.h:477") + "DeviceCompiler::Compile DeviceCompiler",
        ABSL.format(us=us, file="device_compiler.h:480") + "num_inputs=3",
        p + f"0: kind=parameter type={dtype} shape=[{batch},784] is_same_data_across_replicas=0",
        p + f"1: kind=parameter type=int32 shape=[{batch}] is_same_data_across_replicas=0",
        p + "2: kind=resource name=w1/0 type=float shape=[784,16] is_same_data_across_replicas=0 "
        "resource_kind=variable initialized=1 is_fast_mem=0",
        ABSL.format(us=us, file="device_compiler.h:502")
        + f"DeviceCompilationClusterSignature: {sig}",
        ABSL.format(us=us, file="device_compiler.h:512")
        + f"Compilation cache entry hit: {state} signature: {sig} with request count 1",
    ]
    if state == 0:
        out.append(
            ABSL.format(us=us, file="device_compiler.h:551")
            + f"Instantly compiling for signature: {sig}"
        )
    else:
        out.append(
            ABSL.format(us=us, file="device_compiler.h:562")
            + f"Already Compiled for signature: {sig}"
        )
    return out


def _compile(k: int, us: int, prefix: str = ABSL) -> list[str]:
    return [
        prefix.format(us=us, file="xla_compiler.cc:820")
        + f"XlaCompiler::CompileFunction {CLUSTER}",
        prefix.format(us=us, file="cpu_compiler.cc:2060") + f"Compiling: {MODULE}",
        prefix.format(us=us, file="cpu_compiler.cc:2109") + "Compilation finished",
        prefix.format(us=us + 5, file="cpu_compiler.cc:2063")
        + f"Compiling [{MODULE}] for CPU using JIT time: 480 ms (480102 us) (cumulative: 480 ms, "
        "max: 480 ms, #called: 1)",
        prefix.format(us=us + 6, file="device_compilation_profiler.cc:113")
        + f"Compiled __inference_train_step_77 {k} times, compile time: 514782 us, "
        "cumulative: 514782 us (0 us / 515 ms)",
        prefix.format(us=us + 7, file="device_compiler.h:538")
        + "Compilation of XLA executable time: 516 ms (516229 us) (cumulative: 516 ms, max: "
        "516 ms, #called: 1)",
    ]


def _parse(
    tmp_path: Path, lines: list[str], eol: str = "\n"
) -> tuple[list[TypedEvent], ParseCounter]:
    p = tmp_path / "run.log"
    p.write_bytes((eol.join(lines) + eol).encode())
    c = ParseCounter(str(p))
    return list(parse_log(str(p), c, log_format="tensorflow")), c


def _of(events: list[TypedEvent], cls: type) -> list:  # type: ignore[type-arg]
    return [e for e in events if isinstance(e, cls)]


# -- names and rules ------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("name", "fn"),
    [
        ("__inference_train_step_67", "train_step"),
        (CLUSTER, "train_step"),
        (MODULE, "train_step"),
        ("a_inference_smooth_loss_82__XlaMustCompile_true_.2", "smooth_loss"),
        ("cluster_3", "cluster_3"),
    ],
)
def test_function_names(name: str, fn: str) -> None:
    assert tf_function_name(name) == fn


@pytest.mark.parametrize(
    ("changes", "rule"),
    [
        ([("f32[32,784]", "f32[8,784]"), ("s32[32]", "s32[8]")], "batch-size-changed"),
        ([("f32[32,784]", "f64[32,784]")], "dtype-changed"),
        ([("f32[32,784]", "f32[32,100]")], "shape-changed"),
        ([("f32[32]", "f32[32,1]")], "shape-changed"),
        ([("f32[]", "f32[1]")], "shape-changed"),
        ([], "retracing"),
    ],
)
def test_classify_argument_changes(changes: list[tuple[str, str]], rule: str) -> None:
    assert classify(changes) == rule


# -- message forms ----------------------------------------------------------------------------
def test_signature_change_is_a_reason_for_the_next_compilation(tmp_path: Path) -> None:
    # GIVEN a function compiled for batch 32, called again with 32 (a hit), then with 8
    lines = [*_block(32), *_compile(1, 100), *_block(32, state=2, us=200), *_block(8, us=300)]
    n_reason = len(lines)  # the "Instantly compiling" line (1-based)
    lines += _compile(2, 400)
    events, c = _parse(tmp_path, lines)
    assert c.malformed == 0
    # THEN two compilations, each with its duration, and one batch-size reason with both args
    starts = _of(events, CompileStarted)
    assert [s.key.compile_id for s in starts] == [
        "__inference_train_step_77#1",
        "__inference_train_step_77#2",
    ]
    assert all(s.duration_s == pytest.approx(0.514782) for s in starts)
    assert starts[1].arguments == "float [8,784],int32 [8],float [784,16]"
    assert starts[0].key.module == MODULE and starts[0].key.function == "train_step"
    assert len(_of(events, CompileFinished)) == 2
    [r] = _of(events, RecompileReason)
    assert r.rule == "batch-size-changed" and r.key.function == "train_step"
    assert [(ch.what, ch.old, ch.new) for ch in r.changes] == [
        ("argument 0", "f32[32,784]", "f32[8,784]"),
        ("argument 1", "s32[32]", "s32[8]"),
    ]
    assert r.changes[0].line == n_reason - 5  # the argument line that shows the new shape
    assert n_reason in r.lines
    lookups = _of(events, CacheLookup)
    assert [(lk.store, lk.outcome) for lk in lookups] == [
        ("tracing", "miss"),
        ("tracing", "hit"),
        ("tracing", "miss"),
    ]


def test_dtype_change(tmp_path: Path) -> None:
    lines = [*_block(32), *_compile(1, 100), *_block(32, dtype="double", us=300)]
    events, _ = _parse(tmp_path, [*lines, *_compile(1, 400)])
    [r] = _of(events, RecompileReason)
    assert (r.rule, r.changes[0].old, r.changes[0].new) == (
        "dtype-changed",
        "f32[32,784]",
        "f64[32,784]",
    )


@pytest.mark.parametrize("text", [RETRACE, RETRACE_RELAX, RETRACE_OLD])
@pytest.mark.parametrize(
    "prefix", ["WARNING:tensorflow:", "W0920 13:54:44.535000 3904 polymorphic_function.py:154] "]
)
def test_retracing_warning_wordings(tmp_path: Path, text: str, prefix: str) -> None:
    events, c = _parse(tmp_path, [prefix + text])
    assert c.recognized == 1 and c.malformed == 0
    [r] = _of(events, RecompileReason)
    [n] = _of(events, FrameworkNote)
    assert r.rule == "retracing" and r.reason == text
    assert r.key.function in ("train_step", "predict_function")
    assert n.note == "retracing-warning"
    assert (n.detail["count"], n.detail["calls"]) == tuple(int(x) for x in text.split()[:6:5])


def test_retracing_warning_explains_the_compilation_just_before(tmp_path: Path) -> None:
    lines = [*_compile(1, 100), "WARNING:tensorflow:" + RETRACE]
    events, _ = _parse(tmp_path, lines)
    [s] = _of(events, CompileStarted)
    [r] = _of(events, RecompileReason)
    assert r.key.compile_id == s.key.compile_id


def test_once_per_process_lines(tmp_path: Path) -> None:
    lines = [
        ABSL.format(us=1, file="service.cc:153") + "XLA service 0x55f initialized for platform "
        "Host (this does not guarantee that XLA will be used). Devices:",
        ABSL.format(us=2, file="dump.cc:441")
        + "HloModule dump enabled with path prefix: , suffix: before_optimizations",
        ABSL.format(us=3, file="device_compiler.h:208") + "Compiled cluster using XLA!  This "
        "line is logged at most once for the lifetime of the process.",
        ABSL.format(us=4, file="device_compilation_profiler.cc:140") + "Marking "
        "__inference_f_3 as megamorphic, compile_count=11 execution_count=12",
    ]
    events, c = _parse(tmp_path, lines)
    assert c.recognized == 4 and c.malformed == 0
    notes = {n.note: n for n in _of(events, FrameworkNote)}
    assert set(notes) == {
        "xla-service-initialized",
        "hlo-dump-enabled",
        "xla-cluster-compiled",
        "megamorphic",
    }
    assert notes["hlo-dump-enabled"].detail == {"prefix": "", "suffix": "before_optimizations"}
    assert notes["megamorphic"].detail == {"compile_count": 11, "execution_count": 12}
    assert all(not p.new and p.framework == "tensorflow" for p in _of(events, ProcessStarted))


def test_older_prefix_and_times(tmp_path: Path) -> None:
    # GIVEN the pre-absl TF prefix (xla_compilation_cache.cc era)
    lines = _compile(1, 100, prefix=OLD)
    events, c = _parse(tmp_path, lines)
    assert c.malformed == 0
    [s] = _of(events, CompileStarted)
    # THEN times are seconds since the first stamp of the input
    assert s.span.t == pytest.approx(0.000006)
    assert s.duration_s == pytest.approx(0.514782)


def test_time_is_relative_to_the_first_stamp_even_on_a_skipped_line(tmp_path: Path) -> None:
    first = "I0000 00:00:1795374900.000000   24077 port.cc:153] oneDNN custom operations are on."
    events, _ = _parse(tmp_path, [first, *_compile(1, 500000)])
    [s] = _of(events, CompileStarted)
    assert s.span.t == pytest.approx(21.500006)


def test_without_profiler_the_executable_timer_ends_the_compilation(tmp_path: Path) -> None:
    lines = [ln for ln in _compile(1, 100) if "times, compile time" not in ln]
    events, _ = _parse(tmp_path, lines)
    [s] = _of(events, CompileStarted)
    assert s.duration_s == pytest.approx(0.516229)
    assert s.key.function == "train_step"


def test_crlf(tmp_path: Path) -> None:
    lines = [*_block(32), *_compile(1, 100), *_block(8, us=300), *_compile(2, 400)]
    events, c = _parse(tmp_path, lines, eol="\r\n")
    assert c.malformed == 0
    assert len(_of(events, CompileStarted)) == 2
    [r] = _of(events, RecompileReason)
    assert r.rule == "batch-size-changed"
    assert all("\r" not in e.span.text for e in events)


def test_block_cut_at_end_of_file(tmp_path: Path) -> None:
    # GIVEN a recompilation request (cache state 0) and a backend compile cut by the end
    lines = [*_block(32), *_compile(1, 100), *_block(8, us=300)[:-1]]
    lines += [ABSL.format(us=400, file="cpu_compiler.cc:2060") + f"Compiling: {MODULE}"]
    lines += [
        ABSL.format(us=500, file="cpu_compiler.cc:2063") + f"Compiling [{MODULE}] for CPU "
        "using JIT time: 2.2 s (2203427 us) (cumulative: 2.2 s, max: 2.2 s, #called: 1)"
    ]
    events, c = _parse(tmp_path, lines)
    # THEN what is known is still reported: the reason and the compilation the backend timed
    assert c.malformed == 0
    [r] = _of(events, RecompileReason)
    assert r.rule == "batch-size-changed"
    starts = _of(events, CompileStarted)
    assert len(starts) == 2 and starts[1].duration_s == pytest.approx(2.203427)


@pytest.mark.parametrize(
    "line",
    [
        ABSL.format(us=1, file="device_compilation_profiler.cc:113")
        + "Compiled x lots times, compile time: 9 us",
        ABSL.format(us=1, file="device_compilation_profiler.cc:113")
        + "Compiled f 1 times, compile time: "
        + "9" * 40
        + " us, cumulative: 1 us",
        ABSL.format(us=1, file="device_compiler.h:512")
        + "Compilation cache entry hit: 7 signature: f",
        ABSL.format(us=1, file="device_compiler.h:512") + "Compilation cache entry hit: x",
        "WARNING:tensorflow:many out of the last calls to f triggered tf.function retracing.",
        ABSL.format(us=1, file="dump.cc:441") + "HloModule dump enabled with path prefix garbage",
    ],
)
def test_lines_that_do_not_fit_are_malformed(tmp_path: Path, line: str) -> None:
    events, c = _parse(tmp_path, [line])
    assert c.malformed == 1 and events == []
    d = TensorFlowDecoder("x")
    res = d.decode(1, line)
    assert res.status == "malformed" and res.problem and "\n" not in res.problem


@settings(max_examples=examples(300), suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.one_of(
            st.text(max_size=120),
            st.sampled_from(TENSORFLOW.anchors).flatmap(
                lambda a: st.tuples(st.text(max_size=40), st.text(max_size=60)).map(
                    lambda t: t[0] + a + t[1]
                )
            ),
            st.sampled_from([*_block(8), *_compile(2, 1)]).flatmap(
                lambda ln: st.integers(0, len(ln)).map(lambda i: ln[:i])
            ),
        ),
        max_size=30,
    )
)
def test_garbage_never_raises(lines: list[str]) -> None:
    d = TensorFlowDecoder("x")
    for i, ln in enumerate(lines, 1):
        res = d.decode(i, ln)
        assert res.status in ("recognized", "unrecognized", "malformed")
        d.skipped(i, ln)
    list(d.finish())


# -- detection --------------------------------------------------------------------------------
OTHER_LOGS = sorted(
    [
        *FIXTURES.glob("simulated/*/run.log"),
        *FIXTURES.glob("poplar/real/*.log"),
        *FIXTURES.glob("jax/*/run.log"),
        *FIXTURES.glob("torch/*/run.log"),
    ]
)


@pytest.mark.parametrize("path", OTHER_LOGS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_sniff_is_zero_on_other_frameworks_logs(path: Path) -> None:
    lines = path.read_text(errors="replace").splitlines()[:400]
    assert sniff(lines) == 0


@pytest.mark.parametrize(
    "path", sorted(FIXTURES.glob("tensorflow/*/run.log")), ids=lambda p: p.parent.name
)
def test_sniff_detects_tensorflow_logs(path: Path) -> None:
    lines = path.read_text().splitlines()[:400]
    assert sniff(lines) > 0
    fmt = detect_format(lines)
    assert fmt is not None and fmt.name == "tensorflow"


def test_recapture_with_tensorflow(tmp_path: Path) -> None:
    """Optional: a fresh capture with an installed TensorFlow still parses (skipped without)."""
    pytest.importorskip("tensorflow")
    import subprocess
    import sys

    case = FIXTURES / "tensorflow" / "capture.py"
    out = tmp_path / "out"
    subprocess.run(
        [sys.executable, str(case), str(out), "batch_size_signature_vlog"],
        cwd=tmp_path,
        check=True,
        timeout=600,
    )
    log = out / "batch_size_signature_vlog" / "run.log"
    c = ParseCounter(str(log))
    events = list(parse_log(str(log), c))
    assert c.format == "tensorflow"
    assert any(isinstance(e, RecompileReason) and e.rule == "batch-size-changed" for e in events)
    assert c.malformed == 0


#: the cache line's pattern as it was (a lazy signature before an optional request count
#: at the end): the reference cache_fields is held to
_CACHE_WHOLE = (
    r"Compilation cache entry hit: (?P<state>\d{1,3}) signature: (?P<sig>\S.*?)"
    r"(?: with request count (?P<n>\d{1,18}))?$"
)
_CACHE_MESSAGES = st.builds(
    "{}Compilation cache entry hit: {} signature: {}{}{}".format,
    st.sampled_from(["", "x ", "Compilation cache entry hit: 1 signature: "]),
    st.sampled_from(["0", "2", "1234", "", "\u0663"]),
    st.lists(
        st.sampled_from(["cluster_0", "[a=1]", ",float [32,784]", " ", " with request count ", "7"])
        | st.text(st.characters(blacklist_characters="\n"), max_size=3),
        max_size=5,
    ).map("".join),
    st.sampled_from(["", " with request count ", " with request count", " with request count  "]),
    st.sampled_from(["", "3", "1234567890123456789", "\u0663\u0664", "\u00b2", "x", "3 "]),
)


@settings(max_examples=examples(400))
@given(_CACHE_MESSAGES)
@example("Compilation cache entry hit: 0 signature: x with request count 3")
@example("Compilation cache entry hit: 0 signature:  with request count 3")
@example("Compilation cache entry hit: 0 signature: a with request count 1234567890123456789")
@example(
    "Compilation cache entry hit: 0 signature: a with request count \u00b2"
)  # (a digit, not a decimal)
def test_cache_fields_are_what_the_whole_pattern_reads(msg: str) -> None:
    # GIVEN any cache line built of its parts (no signature, a count too long, a count in
    # other digits, the count's words inside the signature, text around it)
    import re

    from recompile_doctor.parsers.tensorflow import cache_fields

    # WHEN its fields are read THEN they are what the pattern reads
    m = re.search(_CACHE_WHOLE, msg)
    assert cache_fields(msg) == (None if m is None else (m["state"], m["sig"], m["n"]))


#: the absl prefix's pattern as it was (one pattern, its four numbers read from its
#: groups): the reference _split is held to
_ABSL_WHOLE = (
    r"([IWEFV])(\d{4}) (\d\d):(\d\d):(\d{1,12}(?:\.\d{1,9})?) +\d{1,20} "
    r"([^\s:\]]+):\d{1,9}\] ?"
)
_DIGITS = st.sampled_from(["0", "1", "9", "\u0663", "\u00b2", "x", ""])
_ABSL_LINES = st.builds(
    "{}{}{} {}:{}:{}{}{}{}".format,
    st.sampled_from(["I", "W", "E", "F", "V", "X", "", "INFO:tensorflow:"]),
    st.lists(_DIGITS, max_size=5).map("".join),
    st.sampled_from(["", "0"]),
    st.lists(_DIGITS, max_size=3).map("".join),
    st.lists(_DIGITS, max_size=3).map("".join),
    st.lists(_DIGITS | st.just("."), max_size=24).map("".join),
    st.sampled_from([" ", "   ", "", "\t", "  x"]),
    st.sampled_from(["24077 ", "1 ", "", "123456789012345678901 ", "\u0663 ", "7  "]),
    st.lists(
        st.sampled_from(["device_compiler.h", ":208", "]", " ", "msg", ":", "\u0663"])
        | st.text(st.characters(blacklist_characters="\n"), max_size=3),
        max_size=6,
    ).map("".join),
)


@settings(max_examples=examples(500))
@given(_ABSL_LINES)
@example("I0000 00:00:1795374921.000002   24077 bfc_allocator.cc:1101] InUse")
@example("I0000 00:00:1795374921.   24077 x.cc:1] no fraction")
@example("I0000 00:00:1234567890123 1 x.cc:1] thirteen digits")
@example("I0000 00:00:1.1234567891 1 x.cc:1] ten decimals")
@example("I0000 00:00:\u0663.\u0663 \u0663 x.cc:\u0663] other digits")
@example("I0000 00:00:1\u00b2 1 x.cc:1] a digit that is no decimal")
@example("I0000 00:00:1.\u00b2 1 x.cc:1] one in the fraction")
@example("I0000 00:00:1.5")
@example("I0000 00:00:1.5 ")
@example("W0312 17:55:10.637117 7 x.cc:9]")
@example("INFO:tensorflow:I0000 00:00:1.5 1 x.cc:1] a Python line")
def test_an_absl_prefix_is_read_as_the_whole_pattern_reads_it(line: str) -> None:
    # GIVEN any line built of an absl prefix's parts (digits of other scripts, a digit
    # that is no decimal, numbers too long, parts missing, text around them)
    import math
    import re

    from recompile_doctor.parsers import tensorflow

    # WHEN its prefix is split off (twice: its head read, then remembered) THEN the time,
    # the source file and the message are what the whole pattern reads
    m = re.match(_ABSL_WHOLE, line)
    for _ in range(2):
        prefix, msg = tensorflow._split(line)
        if m is not None:
            s = int(m[3]) * 3600 + int(m[4]) * 60 + float(m[5])
            want = (s if math.isfinite(s) else None, m[6], line[m.end() :])
        else:  # (no older TensorFlow stamp here: a Python logger's prefix at most)
            py = re.match(r"(?:DEBUG|INFO|WARNING|ERROR|CRITICAL|FATAL):tensorflow:", line)
            want = (None, None, line if py is None else line[py.end() :])
        assert (prefix.seconds, prefix.source_file, msg) == want


@settings(max_examples=examples(1500))
@given(_ABSL_LINES)
@example("I0000 00:00:1795374921.000002   24077 bfc_allocator.cc:1101] InUse")
@example("I0000 00:00:1.5\t1 x.cc:1] a tab")
@example("I0000 00:00:1.2.3 1 x.cc:1] two dots")
@example("I0000 00:00:123456789012 1 x.cc:1] twelve digits")
@example("I0000 00:00:1234567890123 1 x.cc:1] thirteen digits")
@example("I0000 00:00:1.123456789 1 x.cc:1] nine decimals")
@example("I0000 00:00:1.1234567891 1 x.cc:1] ten decimals")
@example("I0000 00:00:1. 1 x.cc:1] a dot alone")
@example("I0000 00:00:1 1 x.cc:1]no space")
@example("I0000 00:00:1 1 x.cc:1]")
@example("I0000 00:00:1 123456789012345678901 x.cc:1] a long thread")
@example("I0000 00:00:1 1 x.cc:1234567890] a long line number")
@example("I0000 00:00:1 1 x].cc:1] a bracket in the file")
@example("I0000 00:00:.5 1 x.cc:1] no whole seconds")
@example("I0000 00:00:1a.5 1 x.cc:1] a letter")
@example("I0000 00:00:1 1 x.cc:1")
@example("I0000 00:00:")
@example("I0000 00:00:1")
@example("I0000 00:00:999999999999.999999999 1 x.cc:1] the largest")
@example("I0000 00:00:\u0663.\u0663 \u0663 x.cc:\u0663] other digits")
@example("I0000 00:00:1 1 x.cc:1] \u00e9 a message not ASCII")
def test_an_absl_prefix_s_rest_read_by_str_methods_or_in_c_is_the_pattern_s(line: str) -> None:
    # GIVEN any line built of an absl prefix's parts, THEN its rest read by str methods (as
    # the compiled build reads it) is what the rest's pattern reads (as the pure build does)
    from recompile_doctor.parsers import tensorflow
    from recompile_doctor.parsers._spans import native_module
    from recompile_doctor.parsers.tensorflow import _absl_rest_by_pattern, absl_rest

    for _ in range(2):  # (the second time, its source is remembered)
        assert absl_rest(line) == _absl_rest_by_pattern(line)
    # AND the C module's reading (seconds, source file, message start) is the Python one's,
    # its seconds the same float: with its source text new (left to the Python, which
    # remembers it) and known
    native = native_module()
    if native is None:
        return
    want = tensorflow._absl_tail_py(line)
    for sources in ({}, {}, tensorflow._ABSL_SOURCES):
        for _ in range(2):
            got = native.absl_tail(line, sources, tensorflow._absl_tail_py)
            assert got == want
            assert got is None or want is None or repr(got[0]) == repr(want[0])


@settings(max_examples=examples(3000))
@given(
    st.text("0123456789", min_size=1, max_size=12),
    st.none() | st.text("0123456789", min_size=1, max_size=9),
)
@example("1795374922", "823029")
@example("9007199254", "740993")  # (2^53 + 1: past the exact integers)
@example("9007199254", "740992")
@example("999999999999", "999999999")
@example("000000000000", "000000001")
@example("1", None)
def test_an_absl_time_stamp_s_seconds_in_c_are_float_s(whole: str, fraction: str | None) -> None:
    # GIVEN the seconds of a time stamp, any digits an absl prefix may hold, THEN the C
    # module reads them as the double float() reads (bit for bit)
    from recompile_doctor.parsers._spans import native_module

    native = native_module()
    if native is None:
        pytest.skip("the C module is not built")
    seconds = whole if fraction is None else f"{whole}.{fraction}"
    line = f"I0000 00:00:{seconds} 1 x.cc:1] m"
    got = native.absl_tail(line, {" 1 x.cc:1]": "x.cc"}, None)
    assert got is not None
    assert got[0].hex() == float(seconds).hex()


def test_an_absl_prefix_s_rest_in_c_leaves_a_new_source_to_the_python() -> None:
    from recompile_doctor.parsers._spans import native_module

    native = native_module()
    if native is None:
        pytest.skip("the C module is not built")
    line = "I0000 00:00:1795374921.5   24077 bfc_allocator.cc:1101] InUse"
    asked: list[str] = []

    def fallback(text: str) -> tuple[float, str, int] | None:
        asked.append(text)
        return None

    assert native.absl_tail(line, {}, fallback) is None and asked == [line]
    known = {"   24077 bfc_allocator.cc:1101]": "bfc_allocator.cc"}
    start = line.index("InUse")
    assert native.absl_tail(line, known, fallback) == (1795374921.5, "bfc_allocator.cc", start)
    assert asked == [line]
    # (a known text that is no source is no prefix)
    assert native.absl_tail(line, {"   24077 bfc_allocator.cc:1101]": ""}, fallback) is None
    with pytest.raises(TypeError):
        native.absl_tail(line, [], fallback)


def test_a_signature_is_read_the_same_whether_memoized_or_too_long_for_it() -> None:
    from recompile_doctor.parsers.tensorflow import _signature_of, _signature_parts

    head = "__inference_train_step_77[_XlaMustCompile=true,config_proto=1,executor_type=2]"
    short = head + ",float [32,784],int32 [32]"
    long = head + ",float [32,784]" * 500
    assert len(short) <= 4096 < len(long)
    assert (
        _signature_of(short)
        == _signature_parts(short)
        == (
            head,
            "float [32,784],int32 [32]",
            ("f32[32,784]", "s32[32]"),
        )
    )
    assert _signature_of(short)[2] is _signature_of(short)[2]  # (memoized)
    got = _signature_of(long)
    assert got == _signature_parts(long)
    assert got[2] is not None and len(got[2]) == 500
    assert _signature_of(long)[2] is not got[2]  # (too long to be kept)
    assert _signature_of(head) == (head, "", None)


@pytest.mark.parametrize(
    "case", sorted(p.parent.name for p in (FIXTURES / "tensorflow").glob("*/run.log"))
)
def test_a_message_s_remembered_branch_decodes_it_as_its_tests_do(
    tmp_path: Path, case: str
) -> None:
    # GIVEN a TensorFlow capture, read with no message's branch remembered, then again with
    # every one remembered, and once more with the table of branches too small to keep any
    from recompile_doctor.parsers import tensorflow

    lines = (FIXTURES / "tensorflow" / case / "run.log").read_text().splitlines()
    kept = tensorflow._BRANCHES_KEPT
    kept.clear()
    cold = _parse(tmp_path, lines)
    assert len(kept) > 0
    warm = _parse(tmp_path, lines)
    most = kept.most
    try:
        kept.most = 0
        kept.clear()
        none = _parse(tmp_path, lines)
        assert len(kept) <= 1
    finally:
        kept.most = most
    # THEN the events and counts are the same each time
    for got in (warm, none):
        assert got[0] == cold[0]
        assert (got[1].recognized, got[1].malformed) == (cold[1].recognized, cold[1].malformed)


def test_the_decoder_holds_long_function_names_by_their_digest() -> None:
    """GIVEN a run whose function has a generated name longer than HELD_CHARS, compiled
    again with new signatures and retraced WHEN the decoder reads it THEN its tables of
    each function's last signature and last compile id hold the name by its digest, never
    the name (a new function per compilation under 8,000-character names held two copies of
    each; and its last compile id, as long, by what it holds besides the name), and its
    events are those of the same run under a short name."""
    from recompile_doctor.name_digest import HELD_CHARS
    from recompile_doctor.parsers.tensorflow import TensorFlowDecoder

    lines = (FIXTURES / "tensorflow" / "frozen_weights" / "run.log").read_text().splitlines()
    long = "p" * HELD_CHARS + "predict"

    def read(text: list[str]) -> tuple[TensorFlowDecoder, list[TypedEvent]]:
        d = TensorFlowDecoder("run.log")
        out: list[TypedEvent] = []
        for n, line in enumerate(text, 1):
            out += d.decode(n, line).events
        return d, out

    _, short_events = read(lines)
    d, long_events = read([line.replace("predict", long) for line in lines])
    assert len(long_events) == len(short_events) > 0
    assert [repr(e).replace(long, "predict") for e in long_events] == [
        repr(e) for e in short_events
    ]
    assert any(isinstance(e, RecompileReason) and e.key.compile_id for e in long_events)
    held_keys = [*d._compiled_args, *d._last_id]
    assert held_keys and all(not isinstance(k, str) or len(k) <= HELD_CHARS for k in held_keys)
    # (and a long compile id by what it holds besides the function's name, made again whole
    # for the retracing warning: the events above are the short run's)
    ids = list(d._last_id.values())
    assert any(isinstance(v, tuple) for v in ids)
    assert all(len(v) <= HELD_CHARS if isinstance(v, str) else long not in "".join(v) for v in ids)
