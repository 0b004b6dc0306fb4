"""Format fidelity: the simulator's lines have the shape of the real stack's lines.

The expected shapes are written here from the verbatim excerpts and source texts of the
reference notes (poplar_formats.md §0-§8), not imported from the simulator or the parser.
Also: Graphcore's test_connection_type.py, ported, and XLA's own parser on the dumps.
"""

from __future__ import annotations

import re
from itertools import count
from pathlib import Path

import pytest

from recompile_doctor.simulate import run_scenario, scenarios

# §0.1 TF prefix; §0.2 Poplar new and old prefixes (regexes from the reference, verbatim)
TF = re.compile(
    r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{6}): ([IWEF])(?: +(\d+))? ([^:\]]+):(\d+)\] (.*)$"
)
PO_NEW = re.compile(
    r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6})Z (PO|PL):([A-Z]+) +(\d+)\.(\d+) ([TDIWEC]): (.*)$"
)
PO_OLD = re.compile(r"^(\d\d:\d\d:\d\d\.\d{3}) (\d+) (PO|PL):([A-Z]+) +\[([TDIWE])\] (.*)$")
# Messages, from §1-§6
MESSAGES = {
    "begin": re.compile(
        r"^Begin XLA compilation: \S+  \(Hash: 0x[0-9a-f]{1,16}\) for ordinal  \d+$"
    ),
    "end": re.compile(r"^End XLA compilation: \S+ \(Hash: 0x[0-9a-f]{1,16}\)$"),
    "loaded": re.compile(r"^Loaded \S+ from \S+/[0-9a-f]{1,16}\.poplar_exec$"),
    "notfound": re.compile(r"^Couldn't find \S+/[0-9a-f]{1,16}\.poplar_exec in executable cache$"),
    "saved": re.compile(
        r"^A pre-compiled Poplar program has been saved to \S+/[0-9a-f]{1,16}\.poplar_exec$"
    ),
    "phase": re.compile(
        r"^(?P<indent> *)(Starting|Ending) phase: (.+?)(?: \(duration \d+ ms; diff RSS: -?[\d.e+-]+ MB(?:; total RSS: [\d.e+-]+ MB)?\))?$"
    ),
    "lock": re.compile(
        r"^(Acquiring|Acquired|Releasing) lock for \S+/[0-9a-f]{1,16}\.compile_lock$"
    ),
    "attach": re.compile(
        r"^TensorFlow device /device:IPU:\d+ attached to \d+ IPUs? with Poplar device IDs?: [\d,]+$"
    ),
    "version": re.compile(
        r"^Poplar version: \d+\.\d+\.\d+ \([0-9a-f]{10}\) Poplar package: [0-9a-f]{10}$"
    ),
    "compiled": re.compile(
        r"^Compiled cluster using XLA!  This line is logged at most once for the lifetime of the process\.$"
    ),
}
# Verbatim lines of §8 / the tech note, with the parts that vary per run.
VERBATIM = {
    "Ending phase: Loading executable (duration 607 ms; diff RSS: 0.586426 MB)": re.compile(
        r"Ending phase: Loading executable \(duration \d+ ms; diff RSS: [\d.]+ MB\)"
    ),
    "TensorFlow device /device:IPU:0 attached to 1 IPU with Poplar device ID: 0": re.compile(
        r"TensorFlow device /device:IPU:0 attached to 1 IPU with Poplar device ID: 0"
    ),
}


def _messages(log: Path) -> list[str]:
    out = []
    for line in log.read_text().splitlines():
        if m := TF.match(line):
            out.append(m.group(6))
        elif m := PO_NEW.match(line):
            out.append(m.group(7))
    return out


@pytest.mark.parametrize("name", [i.name for i in scenarios()])
def test_prefixed_lines_have_real_prefixes_and_texts(name: str, tmp_path: Path) -> None:
    # GIVEN a simulated run
    r = run_scenario(name, tmp_path / "run", steps=12, env={})
    for line in r.log_path.read_text().splitlines():
        # THEN a line that looks like a TF or Poplar line matches the real prefix exactly
        if re.match(r"^\d{4}-\d\d-\d\d", line):
            assert TF.match(line) or PO_NEW.match(line), line
    for msg in _messages(r.log_path):
        # AND a message of a known kind matches its real text exactly
        for key, word in (("begin", "Begin XLA"), ("end", "End XLA"), ("loaded", "Loaded "),
                          ("notfound", "Couldn't find"), ("saved", "pre-compiled Poplar"),
                          ("phase", " phase: "), ("lock", " lock for "), ("attach", "attached to"),
                          ("version", "Poplar version"), ("compiled", "Compiled cluster")):  # fmt: skip
            if word in msg:
                assert MESSAGES[key].match(msg), msg


def test_tech_note_lines_match_field_for_field(tmp_path: Path) -> None:
    r = run_scenario("alternating-graphs", tmp_path / "run", steps=100, env={})
    msgs = _messages(r.log_path)
    for real, shape in VERBATIM.items():
        assert shape.fullmatch(real)  # the shape accepts the real line
        assert any(shape.fullmatch(m.strip()) for m in msgs), real


def test_phase_nesting_indents_two_spaces_per_level(tmp_path: Path) -> None:
    r = run_scenario("healthy", tmp_path / "run", steps=4, env={})
    msgs = _messages(r.log_path)
    depth = 0
    for m in msgs:
        if (p := MESSAGES["phase"].match(m)) is None:
            continue
        indent = len(p.group("indent"))
        if p.group(2) == "Starting":
            assert indent == 2 * depth
            depth += 1
        else:
            depth -= 1
            assert indent == 2 * depth
    assert depth == 0


def test_old_style_poplar_prefix(tmp_path: Path) -> None:
    r = run_scenario("healthy", tmp_path / "run", steps=4, env={}, log_style="sdk2.2")
    po = [x for x in r.log_path.read_text().splitlines() if "PO:ENGINE" in x]
    assert po and all(PO_OLD.match(x) for x in po)


def test_every_prefixed_line_is_recognized_by_the_parser(tmp_path: Path) -> None:
    # GIVEN the kitchen sink WHEN parsed by the project's parser
    from recompile_doctor.parsers import ParseCounter, parse_log

    r = run_scenario("kitchen-sink", tmp_path / "run", steps=60, env={})
    counter = ParseCounter(str(r.log_path))
    list(parse_log(str(r.log_path), counter))
    stats = counter.stats()
    known = [m for m in _messages(r.log_path) if any(p.match(m) for p in MESSAGES.values())]
    # THEN nothing is malformed, and every line of a kind the diagnosis needs is recognized
    assert stats.malformed == 0
    assert stats.recognized >= len(known)


@pytest.mark.parametrize("scenario", ["kitchen-sink", "precompile-unhashable", "connection-type"])
def test_every_poplar_backend_line_is_recognized_at_full_verbosity(
    tmp_path: Path, scenario: str
) -> None:
    # GIVEN a run at VLOG 2 with Poplar INFO logging: every backend line the stack prints
    from recompile_doctor.parsers import parse_log, records

    env = {"TF_POPLAR_VLOG_LEVEL": "2", "POPLAR_LOG_LEVEL": "INFO"}
    r = run_scenario(scenario, tmp_path / "run", steps=8, env=env)
    recognized = {e.line for e in records(parse_log(str(r.log_path)))}
    lines = r.log_path.read_text().splitlines()
    backend = [
        (n, line)
        for n, line in enumerate(lines, 1)
        if "compiler/plugin/poplar" in line or " PO:" in line
    ]
    # THEN the parser recognizes each one
    assert backend
    assert [x for x in backend if x[0] not in recognized] == []


# -- Graphcore's test_connection_type.py, ported -----------------------------------------
COMPILE_STRING = "Compiled "
ATTACH_STRING = "attached to "


def _locate(lines: list[str], needle: str) -> list[int]:
    return [i for i, line in zip(count(), lines, strict=False) if needle in line]


def _parse_output(out: str) -> dict[str, object]:
    lines = out.splitlines()
    return {
        "result": lines[-1],
        "compile": _locate(lines, COMPILE_STRING),
        "attach": _locate(lines, ATTACH_STRING),
    }


def _run(tmp_path: Path, ctype: str) -> dict[str, object]:
    cache = tmp_path / "cache" if ctype == "PRE_COMPILE" else None
    r = run_scenario(
        "connection-type", tmp_path / ctype, connection_type=ctype, cache=cache, env={}
    )
    return _parse_output(r.log_path.read_text())  # run.log is stdout and stderr merged


def test_connection_type_always(tmp_path: Path) -> None:
    o = _run(tmp_path, "ALWAYS")
    assert o["result"] == "[3. 8.]"
    attach, comp = o["attach"], o["compile"]
    assert isinstance(attach, list) and isinstance(comp, list)
    assert len(attach) == 1, "Missing attach"
    assert len(comp) == 1, "Missing compile"
    assert attach[0] < comp[0], "Compile before attach"


def test_connection_type_on_demand(tmp_path: Path) -> None:
    o = _run(tmp_path, "ON_DEMAND")
    attach, comp = o["attach"], o["compile"]
    assert isinstance(attach, list) and isinstance(comp, list)
    assert o["result"] == "[3. 8.]"
    assert len(attach) == 1, "Missing attach"
    assert len(comp) == 1, "Missing compile"
    assert attach[0] > comp[0], "Compile after attach"


def test_connection_type_never(tmp_path: Path) -> None:
    o = _run(tmp_path, "NEVER")
    assert o["result"] == "Compiled"
    assert o["attach"] == [], "Unexpected attach"
    assert isinstance(o["compile"], list) and len(o["compile"]) == 1, "Missing compile"


def test_connection_type_pre_compile(tmp_path: Path) -> None:
    o = _run(tmp_path, "PRE_COMPILE")
    assert o["result"] == "[0. 0.]"
    assert o["attach"] == []
    assert isinstance(o["compile"], list) and len(o["compile"]) == 1
    assert list((tmp_path / "cache").glob("*.poplar_exec"))


def test_pre_compile_without_cache_path_fails_with_real_text(tmp_path: Path) -> None:
    r = run_scenario("connection-type", tmp_path / "x", connection_type="PRE_COMPILE", env={})
    assert r.error is not None
    assert "'executable_cache_path' in 'TF_POPLAR_FLAGS' has not been set" in r.log_path.read_text()


# -- XLA's own parser on every dump ------------------------------------------------------
@pytest.mark.parametrize("name", ["kitchen-sink", "concat-growth", "stack-fix", "frozen-weights",
                                  "precompile-unhashable"])  # fmt: skip
def test_dumps_parse_with_xla(name: str, tmp_path: Path) -> None:
    hlo = pytest.importorskip("jaxlib._hlo")
    r = run_scenario(name, tmp_path / "run", steps=6, env={})
    assert r.dumps_dir is not None
    for p in sorted(r.dumps_dir.iterdir()):
        hlo.hlo_module_from_text(p.read_text())


def test_dumps_parse_with_our_parser(tmp_path: Path) -> None:
    from recompile_doctor.parsers.hlo import parse_hlo

    r = run_scenario("kitchen-sink", tmp_path / "run", steps=6, env={})
    assert r.dumps_dir is not None
    for p in sorted(r.dumps_dir.iterdir()):
        module = parse_hlo(p.read_text(), str(p))
        assert module is not None
