"""Every Poplar / TF-on-IPU message kind, under every prefix it appears with."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from recompile_doctor.errors import RecompileDoctorError
from recompile_doctor.model import Event
from recompile_doctor.parsers import ParseCounter, parse_log, records
from recompile_doctor.parsers._prefixes import Clock, Prefix, split_prefix
from tests.conftest import examples

TF = "2023-04-26 14:42:40.123456: I tensorflow/compiler/plugin/poplar/driver/poplar_compiler.cc:1487] "
TF_TID = "2023-04-26 14:42:40.123456: I  181234 tensorflow/compiler/plugin/poplar/driver/poplar_compiler.cc:1487] "
PO_NEW = "2023-04-26T14:42:40.123456Z PO:ENGINE   3556102.3556102 I: "
PO_OLD = "14:42:40.123 15288 PO:ENGINE   [I] "
MPI = "[1,0]<stderr>:"
BAR = "Graph compilation:  40%|████      | 40/100 [00:12<00:18]"

# (message, kind, module, hash, detail subset)
TF_MESSAGES = [
    (
        "Begin XLA compilation: cluster_1234  (Hash: 0x9a3c5e21d04b7f11) for ordinal  0",
        "compile-begin",
        "cluster_1234",
        "0x9a3c5e21d04b7f11",
        {"ordinal": 0},
    ),
    ("Begin XLA compilation: m.1 (Hash 0xABC)", "compile-begin", "m.1", "0xabc", {}),
    ("End XLA compilation: cluster_1234 (Hash: 0x1f)", "compile-end", "cluster_1234", "0x1f", {}),
    (
        "Loaded cluster_1234 from /tmp/cache/277a08fe4c20b50.poplar_exec",
        "cache-hit",
        "cluster_1234",
        None,
        {"file_hash": "277a08fe4c20b50"},
    ),
    (
        "Couldn't find /tmp/cache/277a08fe4c20b50.poplar_exec in executable cache",
        "cache-miss",
        None,
        None,
        {"path": "/tmp/cache/277a08fe4c20b50.poplar_exec"},
    ),
    (
        "Couldn't find /cache/1a2b.xla_engine in executable cache",
        "cache-miss",
        None,
        None,
        {"file_hash": "1a2b"},
    ),
    (
        "A pre-compiled Poplar program has been saved to /tmp/executables/277a08fe4c20b50.poplar_exec",
        "precompile-saved",
        None,
        None,
        {"file_hash": "277a08fe4c20b50"},
    ),
    (
        "Acquiring lock for /tmp/cache/277a08fe4c20b50.compile_lock",
        "cache-lock",
        None,
        None,
        {"action": "acquiring"},
    ),
    (
        "Releasing lock for /tmp/cache/277a08fe4c20b50.compile_lock",
        "cache-lock",
        None,
        None,
        {"action": "releasing"},
    ),
    (
        "Trying to deserialize cached file: /tmp/cache/277a08fe4c20b50.poplar_exec",
        "cache-deserialize",
        None,
        None,
        {},
    ),
    (
        "Module cluster_9 has not been compiled yet (Hash: 0x277a08fe4c20b50).",
        "cache-new-entry",
        "cluster_9",
        None,
        {"executable_hash": "277a08fe4c20b50"},
    ),
    (
        "Compiled cluster using XLA!  This line is logged at most once for the lifetime of the process.",
        "cluster-compiled",
        None,
        None,
        {},
    ),
    (
        "TensorFlow device /device:IPU:0 attached to 1 IPU with Poplar device ID: 0",
        "attach",
        None,
        None,
        {"ordinal": 0, "ipus": 1, "device_ids": [0], "sdk_style": "sdk>=2.5"},
    ),
    (
        "TensorFlow device /device:IPU:1 attached to 4 IPUs with Poplar device IDs: 4,5,6,7",
        "attach",
        None,
        None,
        {"ordinal": 1, "ipus": 4, "device_ids": [4, 5, 6, 7]},
    ),
    (
        "Device /device:IPU:0 attached to IPU: 0",
        "attach",
        None,
        None,
        {"sdk_style": "sdk<=2.4", "device_ids": [0]},
    ),
    (
        "Poplar version: 3.1.0 (e12d5f9f01) Poplar package: 9c103dc348",
        "poplar-version",
        None,
        None,
        {"version": "3.1.0", "package": "9c103dc348"},
    ),
    (
        "TF_POPLAR_FLAGS is set to '--executable_cache_path=/tmp/c --show_progress_bar=false'",
        "poplar-flags",
        None,
        None,
        {"flags": "--executable_cache_path=/tmp/c --show_progress_bar=false"},
    ),
    ("Execute cluster_1234", "execute", "cluster_1234", None, {}),
    (
        "IPU devices have been configured for pre-compilation, however 'executable_cache_path' in "
        "'TF_POPLAR_FLAGS' has not been set.",
        "precompile-no-cache-path",
        None,
        None,
        {},
    ),
    (
        "Executable caching has been enabled, however the program being compiled contains custom "
        "user operations which cannot be safely serialized.",
        "custom-op-unhashable",
        None,
        None,
        {},
    ),
    (
        "Trying to run an executable on a device that was configured for compilation only.",
        "compilation-only",
        None,
        None,
        {},
    ),
    ("End compiling Poplar engine.", "compile-step", None, None, {}),
    (
        "Automatically replicating the TensorFlow model by a factor of 2.",
        "replication",
        None,
        None,
        {"factor": "2"},
    ),
]

PHASES = [
    ("Starting phase: graphConstruction", "phase-start", {"name": "graphConstruction", "depth": 0}),
    (
        "Ending phase: Loading executable (duration 607 ms; diff RSS: 0.586426 MB)",
        "phase-end",
        {
            "name": "Loading executable",
            "duration_ms": 607,
            "diff_rss_mb": 0.586426,
            "total_rss_mb": None,
        },
    ),
    (
        "    Ending phase: Create adjacencies (duration 30 ms; diff RSS: 16.4961 MB; total RSS: 2440.24 MB)",
        "phase-end",
        {"name": "Create adjacencies", "depth": 2, "duration_ms": 30, "total_rss_mb": 2440.24},
    ),
]


def _events(
    tmp_path: Path, lines: list[str], strict: bool = False
) -> tuple[list[Event], ParseCounter]:
    p = tmp_path / "run.log"
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    c = ParseCounter(str(p))
    return list(records(parse_log(str(p), c, strict=strict))), c


@pytest.mark.parametrize(
    "prefix", [TF, TF_TID, MPI + TF, BAR + TF, ""], ids=["tf", "tf-tid", "mpi", "glued", "bare"]
)
@pytest.mark.parametrize(
    ("msg", "kind", "module", "hash_", "detail"),
    TF_MESSAGES,
    ids=[m[1] + str(i) for i, m in enumerate(TF_MESSAGES)],
)
def test_tf_message_kinds(
    tmp_path: Path,
    prefix: str,
    msg: str,
    kind: str,
    module: str | None,
    hash_: str | None,
    detail: dict[str, object],
) -> None:
    # GIVEN one message line under a prefix WHEN parsed THEN exactly one event with its fields
    events, counter = _events(tmp_path, [prefix + msg])
    assert [e.kind for e in events] == [kind]
    ev = events[0]
    assert (ev.module, ev.hash, ev.line) == (module, hash_, 1)
    for k, v in detail.items():
        assert ev.detail[k] == v
    assert ev.text == prefix + msg  # evidence stays verbatim
    assert (counter.recognized, counter.unrecognized, counter.malformed) == (1, 0, 0)
    if prefix.endswith("] "):
        assert ev.t == 0.0


@pytest.mark.parametrize(
    "prefix", [PO_NEW, PO_OLD, MPI + PO_NEW, ""], ids=["sdk3", "sdk2.2", "mpi", "bare"]
)
@pytest.mark.parametrize(("msg", "kind", "detail"), PHASES)
def test_phase_lines_in_both_poplar_prefix_styles(
    tmp_path: Path, prefix: str, msg: str, kind: str, detail: dict[str, object]
) -> None:
    events, _ = _events(tmp_path, [prefix + msg])
    assert [e.kind for e in events] == [kind]
    for k, v in detail.items():
        assert events[0].detail[k] == v


def test_progress_bar_start_and_end(tmp_path: Path) -> None:
    name = "a_inference_train_function_806__XlaMustCompile_true_config_proto___n_007_n_0...02_001_000__executor_type____.626"
    events, _ = _events(
        tmp_path,
        [
            f"Compiling module {name}:",
            "\x1b[2K[####      ] 18% Step: Graph Construction\r\x1b[2K[##################################################] 100% Compilation Finished [Elapsed: 00:01:28.8]",
        ],
    )
    assert [(e.kind, e.module) for e in events] == [
        ("progress-start", name),
        ("progress-end", None),
    ]
    assert events[1].detail["elapsed_s"] == 88.8


def test_poptorch_progress_bar_is_a_compilation(tmp_path: Path) -> None:
    events, _ = _events(tmp_path, ["Graph compilation: 100%|██████████| 100/100 [06:26<00:00]"])
    assert [(e.kind, e.detail["elapsed_s"]) for e in events] == [("graph-compiled", 386.0)]


def test_popart_cache_lines(tmp_path: Path) -> None:
    pre = "2023-04-27T04:30:36.928499Z popart:session 3906481.3906481 I: "
    events, _ = _events(
        tmp_path,
        [
            pre + "PopART cache file has been found: /c/123.popef",
            pre + "Loading serialized PopART executable from /c/123.popef",
        ],
    )
    assert [e.kind for e in events] == ["popart-cache-found", "popart-cache-load"]


def test_malformed_known_message_is_counted_and_strict_fails(tmp_path: Path) -> None:
    lines = [
        TF + "Begin XLA compilation: cluster_1  (Hash: 0xZZ",
        'Then look for "Starting phase: graphConstruction".',
    ]
    events, counter = _events(tmp_path, lines)
    assert events == []
    assert (counter.malformed, counter.unrecognized) == (
        1,
        1,
    )  # prose quoting a phase is not malformed
    with pytest.raises(RecompileDoctorError) as e:
        _events(tmp_path, lines, strict=True)
    assert str(e.value).startswith(str(tmp_path / "run.log") + ":1: malformed compile-begin line")


def test_loaded_without_executable_path_is_not_a_cache_hit(tmp_path: Path) -> None:
    events, counter = _events(tmp_path, ["Loaded cuDNN version 8902", TF + "Loaded libcudart.so"])
    assert events == [] and counter.malformed == 0


def test_time_only_prefixes_roll_over_at_midnight() -> None:
    clock = Clock()
    ts = [
        clock.relative(clock.absolute(split_prefix(line)[0]))
        for line in [
            "23:59:59.500 1 PO:ENGINE   [I] a",
            "00:00:00.250 1 PO:ENGINE   [I] b",
            "no prefix here",
        ]
    ]
    assert ts == [0.0, 0.75, 0.75]  # the last line inherits the time before it


def test_time_only_lines_move_to_the_date_of_the_first_absolute_stamp() -> None:
    clock = Clock()
    a = clock.absolute(split_prefix("04:23:00.689 3905692 POPRUN [D] Attached to device 6")[0])
    b = clock.absolute(split_prefix("2023-04-27T04:30:33.475912Z PO:ENGINE   1.1 W: x")[0])
    assert a is not None and b is not None
    assert clock.relative(b) == pytest.approx(452.786912)


def test_mixed_local_and_utc_clocks_are_aligned() -> None:
    # GIVEN a TF line in local time (UTC+2) and a Poplar line 1 s later in UTC
    clock = Clock()
    clock.absolute(split_prefix(TF + "x")[0])
    b = clock.absolute(split_prefix("2023-04-26T12:42:41.123456Z PO:ENGINE   1.1 I: y")[0])
    assert clock.relative(b) == pytest.approx(1.0)


def test_prefix_without_message_part_is_still_a_prefix() -> None:
    p, msg, head = split_prefix("junk" + PO_OLD + "hello")
    assert isinstance(p, Prefix) and p.logger == "PO:ENGINE" and msg == "hello" and head == "junk"


# -- the phase end read by str methods is the pattern's --------------------------------------

_NUMBER_CHARS = "0123456789.-+e\u0663"  # (an Arabic-Indic three: a digit to \\d, not to int checks)
_PLAIN_MB = st.builds(
    lambda i, f, neg: f"{'-' * neg}{i}.{f}",
    st.integers(0, 10**9),
    st.integers(0, 10**7),
    st.booleans(),
)
# (each piece most often as the commonest line prints it, so that the shortcut is taken often)
_PHASE_PIECES = {
    "indent": st.sampled_from(["", "", "", " ", "  ", "    ", "\t", " \t"]),
    "kind": st.sampled_from(["Ending"] * 9 + ["Starting", "ending", "Ending "]),
    "name": st.one_of(
        st.sampled_from(
            [
                "Loading executable",
                "Loading executable ",
                "a (duration",
                "x (dur",
                "",
                "\u00e9t\u00e9",
            ]
        ),
        st.text(alphabet=" ()adinortu;:MBS\n\r.", max_size=14),
    ),
    "ms": st.one_of(
        st.integers(0, 10**6).map(str),
        st.sampled_from(["0", "007", "9" * 15, "1" + "0" * 15, "9" * 16]),
        st.text(alphabet=_NUMBER_CHARS, max_size=17),
    ),
    "diff": st.one_of(
        _PLAIN_MB,
        st.text(alphabet=_NUMBER_CHARS, max_size=17),
        st.sampled_from(["0.586426", "-0.5", ".5", "5.", "-.", ".", "1234567890123.5", "5"]),
    ),
    "total": st.sampled_from([""] * 9 + ["; total RSS: 812.5 MB", "; total RSS: x MB"]),
    "end": st.sampled_from([" MB)"] * 15 + [" MB) ", " MB)\n", " MB)x", "MB)", " MB) MB)"]),
    "before": st.sampled_from(
        [""] * 9 + ["Begin XLA compilation: ", "x  (duration 1 ms; diff RSS: 1.0 MB) "]
    ),
}


@settings(max_examples=examples(600))
@given(**_PHASE_PIECES)
def test_a_phase_end_read_by_str_methods_is_the_one_the_pattern_reads(
    indent: str, kind: str, name: str, ms: str, diff: str, total: str, end: str, before: str
) -> None:
    # GIVEN a phase line's message, well formed or nearly (other digits, signs, exponents,
    # a total, text after it, a name holding " (duration", another message's words first)
    msg = f"{before}{indent}{kind} phase: {name} (duration {ms} ms; diff RSS: {diff}{total}{end}"
    # WHEN it is read with the str shortcut and by the patterns alone
    import dataclasses

    from recompile_doctor.parsers import poplar

    got = poplar._match(msg)
    plain = tuple(dataclasses.replace(s, fast=None) for s in poplar._SPECS)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(poplar, "_SPECS", plain)
        want = poplar._match(msg)
    # THEN the two give the same message (its fields in the same order) or the same fault
    assert got == want, msg
    if isinstance(want, poplar.Message):
        assert isinstance(got, poplar.Message)
        assert list(got.detail.items()) == list(want.detail.items()), msg


def test_the_str_shortcut_reads_the_commonest_phase_end() -> None:
    # (else the test above would compare the patterns with themselves)
    from recompile_doctor.parsers import poplar

    msg = "Ending phase: Loading executable (duration 607 ms; diff RSS: 0.586426 MB)"
    got = poplar._phase_end_fast(msg)
    assert got is not None and got.detail["duration_ms"] == 607
    assert got.detail["diff_rss_mb"] == 0.586426
    assert poplar._phase_end_fast("  " + msg) == poplar._match("  " + msg)
