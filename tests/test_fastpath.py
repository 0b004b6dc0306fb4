"""The fast path of the log driver gives the plain path's events, statuses and line numbers.

GIVEN a log (every fixture log, and generated logs with anchors across chunk boundaries,
CRLF, invalid UTF-8, very long lines, gzip, broken gzip), WHEN it is parsed line by line and
by the chunked fast path (with hyperscan when installed and with the ``bytes.find``
matcher), THEN both give the same events and the same counters.
"""

from __future__ import annotations

import gzip
import io
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from recompile_doctor.errors import RecompileDoctorError
from recompile_doctor.matcher_choice import has_hyperscan, has_native_scan
from recompile_doctor.parsers import LOG_FORMATS, ParseCounter, _scan, parse_log
from recompile_doctor.parsers import logs as logs_module
from recompile_doctor.parsers._scan import FindMatcher, regex_literals
from recompile_doctor.parsers.poplar import ANCHOR_RE
from recompile_doctor.parsers.ptxla_detect import _PREFIXES as _PTXLA_PREFIXES
from tests.conftest import examples, limit_line_bytes

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"


def _fixture_logs() -> list[Path]:
    found = set(FIXTURES.glob("**/run.log")) | set(FIXTURES.glob("torch/*/trace/*"))
    found |= {p for p in FIXTURES.glob("poplar/**/*") if p.suffix in (".log", ".gz", ".txt")}
    return sorted(p for p in found if p.is_file())


ENGINES = (
    ["find"]
    + (["hyperscan"] if has_hyperscan() else [])
    + (["native"] if has_native_scan() else [])
    + (["density"] if has_native_scan() and has_hyperscan() else [])
)


def _run(path: Path, fast: bool, engine: str | None = None, fmt: str | None = None) -> Any:
    c = ParseCounter(str(path))
    try:
        events = list(parse_log(str(path), c, fast=fast, engine=engine, log_format=fmt))
    except RecompileDoctorError as e:
        return ("error", str(e), c.read.lines)
    r = c.read
    return (
        [repr(e) for e in events],
        (c.format, c.recognized, c.unrecognized, c.malformed),
        (r.lines, r.bytes, r.compressed, r.encoding, r.truncated),
    )


def test_there_are_fixture_logs_to_compare() -> None:
    logs = _fixture_logs()
    assert len(logs) > 50
    assert any(p.suffix == ".gz" for p in logs)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("path", _fixture_logs(), ids=lambda p: str(p.relative_to(FIXTURES)))
def test_fast_path_matches_plain_path_on_fixture(path: Path, engine: str) -> None:
    plain = _run(path, fast=False)
    assert _run(path, fast=True, engine=engine) == plain


@pytest.mark.parametrize("fmt", [f.name for f in LOG_FORMATS])
def test_fast_path_matches_plain_path_with_each_forced_format(fmt: str) -> None:
    # every decoder meets every kind of log: its own skip mode on foreign lines
    for path in _fixture_logs():
        assert _run(path, True, "find", fmt) == _run(path, False, None, fmt), path


def test_fixture_comparison_sees_events() -> None:
    # the comparison is not vacuous: fixture logs give events and skipped lines
    runs = [_run(p, fast=True, engine="find") for p in _fixture_logs()[:20]]
    assert sum(len(r[0]) for r in runs if r[0] != "error") > 20
    assert sum(r[1][2] for r in runs if r[0] != "error") > 100


def test_poplar_anchor_regex_is_a_literal_alternation() -> None:
    lits = regex_literals(ANCHOR_RE)
    assert lits is not None and len(lits) > 5
    assert all(ANCHOR_RE.search(lit) for lit in lits)


def test_find_matcher_reports_every_line_holding_a_literal() -> None:
    data = bytearray(b"a foo\nbar\nxx baz foo\nnone\nfoo")
    m = FindMatcher([b"foo", b"baz"])
    lines = {data.count(b"\n", 0, p) for p in m.positions(data, len(data))}
    assert lines == {0, 2, 4}


# -- generated logs ---------------------------------------------------------------------


def _fixture_lines() -> list[bytes]:
    out: list[bytes] = []
    for p in _fixture_logs():
        if p.suffix == ".gz":
            continue
        lines = p.read_bytes().splitlines()
        out.extend(lines[:: max(1, len(lines) // 15)])
    return out


FIXTURE_LINES = _fixture_lines()
PIECES = [
    b"\xff\xfe",
    b"\xe2\x82",
    b"\r",
    b"\t",
    b"  ",
    b"I1122 10:00:01.000000 12 x.cc:1] ",
    b"2024-01-01 10:00:00.123: ",
    b"W1122 10:00:02.500000 12 y.cc:2] ",
    b"Compiling module ",
    b"Begin XLA compilation",
    b"Poplar ",
    b"Finished tracing + transforming ",
    b"Compiling ",
    b"Recompiling",
    b"] {",
]

line_st = st.one_of(
    st.sampled_from(FIXTURE_LINES),
    st.lists(st.sampled_from(PIECES + FIXTURE_LINES[:40]), max_size=6).map(b"".join),
    st.binary(max_size=30),
    st.integers(60, 400).map(lambda n: b"x" * n + b"Compiling module jit_f " + b"y" * n),
)


@st.composite
def logs(draw: st.DrawFn) -> bytes:
    lines = draw(st.lists(line_st, min_size=1, max_size=120))
    crlf = draw(st.booleans())
    end = b"\r\n" if crlf else b"\n"
    body = end.join(line.replace(b"\n", b"") for line in lines)
    if draw(st.booleans()):
        body += end
    return body


@settings(
    max_examples=examples(int(os.environ.get("FASTPATH_EXAMPLES", "150"))),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(
    data=logs(),
    chunk=st.integers(64, 2048),
    fmt=st.sampled_from([None] + [f.name for f in LOG_FORMATS]),
    packing=st.sampled_from(["plain", "gzip", "broken-gzip"]),
    cut=st.floats(0.1, 0.95),
    first=st.sampled_from([None, 1, 16, 100]),
)
def test_fast_path_matches_plain_path_on_generated_logs(
    tmp_path_factory: pytest.TempPathFactory,
    data: bytes,
    chunk: int,
    fmt: str | None,
    packing: str,
    cut: float,
    first: int | None,
) -> None:
    path = tmp_path_factory.mktemp("log") / "run.log"
    if packing != "plain":
        buf = io.BytesIO()
        with gzip.GzipFile(fileobj=buf, mode="wb", mtime=0) as z:
            z.write(data)
        packed = buf.getvalue()
        if packing == "broken-gzip":
            packed = packed[: max(12, int(len(packed) * cut))]
        path.write_bytes(packed)
    else:
        path.write_bytes(data)
    with pytest.MonkeyPatch.context() as mp:
        # small buffers and a small line limit: anchors and lines cross chunk boundaries,
        # long lines take both the in-buffer cut and the over-long-line path
        mp.setattr(_scan, "CHUNK_BYTES", chunk)
        limit_line_bytes(mp, 50)
        if first is not None:
            # a file that says it is smaller than it is (a log still being written, a file
            # of /proc): a small first buffer, grown when it fills
            mp.setattr(_scan, "FIRST_MIN_BYTES", first)
            mp.setattr(logs_module, "_left", lambda f, st: 0)
        plain = _run(path, fast=False, fmt=fmt)
        for engine in ENGINES:
            assert _run(path, fast=True, engine=engine, fmt=fmt) == plain


#: PyTorch/XLA's analysis blocks: their prefixes, what their lines hold (rules, a line cut
#: at the limit, invalid UTF-8, CRs), and the lines between them
_BLOCK_HEADS = [b"Compilation Analysis: ", b"Execution Analysis: ", b"Post Compilation Analysis: "]
_BLOCK_BODIES = [
    b"=" * 80,
    b"=====",
    b"====",
    b"Compilation Cause",
    b"  user torch_xla.sync",
    b"Graph Info: ",
    b"  Graph Hash: 6c1d8f0b",
    b"  Number of Graph Inputs: 6",
    b"Python Frame Triggered Execution: ",
    b"  train_loop (/tmp/train.py:24)",
    b"-" * 20,
    b"  \xff\xfe bad",
    b"  \xe2\x82",
    b"\r",
    b"  " + b"w" * 60,
    b"",
]
_BETWEEN = [
    b"step 1 loss 0.3",
    b"",
    b"Computation hash: 1f3b",
    b"Counter: CachedCompile",
    b"  Value: 3",
]


@st.composite
def block_logs(draw: st.DrawFn) -> bytes:
    lines: list[bytes] = []
    for _ in range(draw(st.integers(1, 10))):
        head = draw(st.sampled_from(_BLOCK_HEADS))
        if draw(st.booleans()):
            lines.append(head + b"=" * 80)
        for body in draw(st.lists(st.sampled_from(_BLOCK_BODIES), max_size=14)):
            # (now and then a line of another block's prefix: it ends the one under way)
            other = draw(st.integers(0, 9)) == 0
            lines.append((draw(st.sampled_from(_BLOCK_HEADS)) if other else head) + body)
        lines.extend(draw(st.lists(st.sampled_from(_BETWEEN), max_size=3)))
    end = draw(st.sampled_from([b"\n", b"\r\n", b"\r\r\n"]))
    return end.join(lines) + draw(st.sampled_from([b"", end]))


@settings(
    max_examples=examples(int(os.environ.get("FASTPATH_EXAMPLES", "150"))),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(data=block_logs(), chunk=st.integers(64, 2048), fmt=st.sampled_from([None, "ptxla"]))
def test_a_blocks_lines_taken_a_run_at_a_time_are_those_decoded_one_by_one(
    tmp_path_factory: pytest.TempPathFactory, data: bytes, chunk: int, fmt: str | None
) -> None:
    # GIVEN a log of analysis blocks (broken off, interrupted, their lines cut, CRs, bad
    # bytes), whose lines the fast path hands to the decoder a run at a time
    path = tmp_path_factory.mktemp("log") / "run.log"
    path.write_bytes(data)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_scan, "CHUNK_BYTES", chunk)
        limit_line_bytes(mp, 50)
        # WHEN it is read line by line and by the fast path
        plain = _run(path, fast=False, fmt=fmt)
        # THEN the events and counters are the same
        for engine in ENGINES:
            assert _run(path, fast=True, engine=engine, fmt=fmt) == plain


def test_a_blocks_lines_are_taken_a_run_at_a_time(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # GIVEN a PyTorch/XLA fixture log whose decoder counts the lines it is given one by one
    from recompile_doctor.parsers import ptxla

    decoded: list[str] = []
    taken: list[int] = []
    monkeypatch.setattr(ptxla, "PtxlaDecoder", counting(ptxla.PtxlaDecoder, decoded, taken))
    fixtures = sorted(FIXTURES.glob("ptxla/**/run.log"))
    assert fixtures
    for k, fixture in enumerate(fixtures):
        # (repeated: past the first lines, which are read to detect the format)
        path = tmp_path / f"run{k}.log"
        path.write_bytes(fixture.read_bytes() * 10)
        # WHEN it is read by the fast path and line by line
        decoded.clear()
        taken.clear()
        fast = _run(path, fast=True, engine="find")
        fast_calls, fast_taken = len(decoded), sum(taken)
        decoded.clear()
        plain = _run(path, fast=False)
        # THEN both give the same, and the fast path took most of the blocks' lines in
        # runs, decoding them one by one no more
        assert fast == plain, fixture
        block_lines = sum(raw.startswith(_PTXLA_PREFIXES) for raw in decoded)
        assert fast_taken > block_lines / 2, fixture
        assert fast_calls + fast_taken <= len(decoded), fixture


def counting(real: type, decoded: list[str], taken: list[int] | None = None) -> type:
    """A wrapper of the decoder class ``real`` (a compiled class cannot be patched) that
    notes the text of each line it decodes, and the length of each run of lines it is
    handed to ``collect`` (see Decoder) in ``taken``."""

    class Counting:
        def __init__(self, path: str) -> None:
            object.__setattr__(self, "inner", real(path))

        def __getattr__(self, name: str) -> Any:
            return getattr(self.inner, name)

        def __setattr__(self, name: str, value: Any) -> None:
            setattr(self.inner, name, value)

        def decode(self, lineno: int, raw: str) -> Any:
            decoded.append(raw)
            return self.inner.decode(lineno, raw)

        def collect(self, lineno: int, bodies: list[str]) -> None:
            if taken is not None:
                taken.append(len(bodies))
            self.inner.collect(lineno, bodies)

    return Counting


def _blocks_read(path: Path, size: int | None) -> tuple[list[bytes], int, int]:
    """What :class:`Blocks` gives of ``path`` when told it holds ``size`` bytes: the text of
    each block, and the bytes read and lost."""
    out: list[bytes] = []
    with open(path, "rb") as f:
        b = _scan.Blocks(f, str(path), size)
        while b.next(b.end):
            out.append(bytes(b.data[: b.end]))
    return out, b.consumed, b.lost


def test_an_input_bigger_than_it_said_is_read_whole(tmp_path: Path) -> None:
    # GIVEN a log of long lines (one over the first buffer, one over the full buffer), WHEN
    # it is read by blocks told that it is 10 bytes (a log still growing, a file of /proc),
    # THEN the small first buffer grows and the lines are those of a buffer of full size
    lines = [b"a" * 10, b"b" * 70_000, b"c", b"d" * (_scan.CHUNK_BYTES + 5), b"e" * 300_000]
    lines += [b"f%d" % i for i in range(50_000)]
    path = tmp_path / "run.log"
    path.write_bytes(b"\n".join(lines))
    told, full = _blocks_read(path, 10), _blocks_read(path, None)
    assert told == full
    assert b"".join(full[0]).count(b"\n") == len(lines) - 1  # (the longest cut, not lost)


def test_a_small_input_gets_a_small_buffer(tmp_path: Path) -> None:
    # GIVEN a small log and a big one, WHEN they are read, THEN the small one's buffer is
    # small (4 MB zeroed would be 3 ms of a small log's start-up) and the big one's full
    path = tmp_path / "run.log"
    path.write_bytes(b"Compiling module jit_f\n" * 100)
    with open(path, "rb") as f:
        assert len(_scan.Blocks(f, str(path), path.stat().st_size).data) == _scan.FIRST_MIN_BYTES
        assert len(_scan.Blocks(f, str(path), 5 << 20).data) == _scan.CHUNK_BYTES
        assert len(_scan.Blocks(f, str(path)).data) == _scan.CHUNK_BYTES


# -- start-up -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args", [["--help"], ["analyze", str(FIXTURES / "poplar" / "real" / "B_technote_lines.log")]]
)
def test_help_and_analyze_do_not_import_the_heavy_libraries(args: list[str]) -> None:
    # GIVEN the CLI run in a fresh interpreter, WHEN it shows help or analyzes a small log,
    # THEN pandas, matplotlib and jinja2 (the frames and the HTML report) stay unimported
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from recompile_doctor.cli.main import main\n"
        "try:\n"
        f"    main({args!r})\n"
        "except SystemExit:\n"
        "    pass\n"
        "heavy = sorted(m for m in ('pandas', 'matplotlib', 'jinja2') if m in sys.modules)\n"
        "print('HEAVY', heavy, file=sys.stderr)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert "HEAVY []" in out.stderr, out.stderr[-2000:]


def test_a_trace_payload_no_event_reads_is_counted_undecoded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # GIVEN the structured traces of the fixtures, whose payloads are read only for guards,
    # cache artifacts, recompile reasons and graph breaks (a chromium event's, an AOT
    # graph's are not)
    from recompile_doctor.parsers import torch_trace

    decoded: list[str] = []
    # (the format's decoder is looked up in its module when an input is read)
    real = torch_trace.TorchTraceDecoder
    monkeypatch.setattr(torch_trace, "TorchTraceDecoder", counting(real, decoded))
    traces = sorted(FIXTURES.glob("torch/*/trace/*"))
    assert traces
    totals = (0, 0)  # (payload lines decoded by the fast path, all payload lines)
    for path in traces:
        # WHEN each is read by the fast path and line by line
        decoded.clear()
        fast = _run(path, fast=True, engine="find")
        fast_calls = list(decoded)
        decoded.clear()
        plain = _run(path, fast=False)
        # THEN the events and counters are the same, every line recognized, and the fast
        # path decoded the payload lines that are read and no line of the others
        assert fast == plain, path
        data = path.read_bytes()
        lines = (gzip.decompress(data) if path.suffix == ".gz" else data).decode().splitlines()
        assert fast[1][1] == len(lines)
        read = sum(raw.startswith("\t") for raw in fast_calls)
        payload = sum(line.startswith("\t") for line in lines)
        # (the first lines, read to detect the format, are decoded one by one)
        head = logs_module.SNIFF_LINES
        in_head = sum(line.startswith("\t") for line in lines[:head])
        assert read == in_head + _payload_lines_read(lines, head), path
        assert len(decoded) == len(lines)
        totals = (totals[0] + read, totals[1] + payload)
    assert 0 < totals[0] < totals[1] / 2, totals


#: the artifacts whose payload gives an event (the cache's key, a reason, a graph break)
_READ_ARTIFACTS = ("_cache_hit", "_cache_miss", "_cache_bypass", "recompile_reasons")


def _payload_lines_read(lines: list[str], after: int) -> int:
    """The payload lines, from line ``after`` on, of the envelopes whose payload the trace
    decoder reads: guards, cache artifacts, recompile reasons and graph breaks (and no
    envelope that is read as a string, a compilation's start or its metrics first)."""
    import json

    read = 0
    reading = False
    for i, line in enumerate(lines):
        if line.startswith("\t"):
            read += reading and i >= after
            continue
        at = line.find("] {")
        obj = json.loads(line[at + 2 :]) if at >= 0 else {}
        name = str(obj.get("artifact", {}).get("name", ""))
        reading = not {"str", "dynamo_start", "compilation_metrics"} & set(obj) and (
            "dynamo_cpp_guards_str" in obj
            or name.endswith(_READ_ARTIFACTS)
            or name == "dynamo_graph_break_reason"
        )
    return read
