"""The simulated backend behaves like the real one: hashes, caches, determinism, flags."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from recompile_doctor.cli.main import main
from recompile_doctor.errors import RecompileDoctorError
from recompile_doctor.simulate import run_scenario
from recompile_doctor.simulate.compiler import hash64_combine, hlo_hash
from recompile_doctor.simulate.graph import Dense, Graph, Hyper, lower
from recompile_doctor.simulate.hlo_emit import render

BEGIN = re.compile(
    r"Begin XLA compilation: (\S+)  \(Hash: 0x([0-9a-f]{1,16})\) for ordinal  (\d+)$"
)


def _graph(**kw: object) -> Graph:
    return Graph("train_function", (Dense("dense", 16, "relu"), Dense("dense_1", 10)), **kw)  # type: ignore[arg-type]


def test_renaming_a_layer_keeps_the_hash_changing_a_constant_does_not() -> None:
    # GIVEN a graph, the same graph with renamed layers, and one with another baked-in rate
    base = _graph(learning_rate=Hyper(0.01, as_constant=True))
    renamed = Graph("train_function", (Dense("hidden", 16, "relu"), Dense("out", 10)),
                    learning_rate=Hyper(0.01, as_constant=True))  # fmt: skip
    other_lr = _graph(learning_rate=Hyper(0.005, as_constant=True))
    # THEN names and metadata do not change the HLO hash, a constant's value does
    assert render(lower(base)) != render(lower(renamed))
    assert hlo_hash(lower(base)) == hlo_hash(lower(renamed))
    assert hlo_hash(lower(base)) != hlo_hash(lower(other_lr))


def test_frozen_weights_are_elided_in_dumps_but_hashed() -> None:
    # GIVEN the same graph frozen with two versions of its weights
    a, b = (_graph(weights="frozen", weights_version=v, train=False) for v in (0, 1))
    # THEN the dumps print {...} for them and read the same, but the hashes differ
    elided_a = [x for x in render(lower(a)).splitlines() if "constant({...})" in x]
    elided_b = [x for x in render(lower(b)).splitlines() if "constant({...})" in x]
    assert elided_a and elided_a == elided_b
    assert hlo_hash(lower(a)) != hlo_hash(lower(b))


def test_hash64_combine_matches_tensorflow() -> None:
    # a ^ (b + 0x9e3779b97f4a7800 + (a << 10) + (a >> 4)), modulo 2**64
    assert hash64_combine(0, 0) == 0x9E3779B97F4A7800
    assert hash64_combine(1, 2) == 1 ^ (2 + 0x9E3779B97F4A7800 + 1024 + 0)


def test_same_seed_is_byte_identical_other_seed_is_not(tmp_path: Path) -> None:
    # GIVEN the same scenario simulated twice with one seed and once with another
    a = run_scenario("kitchen-sink", tmp_path / "a", seed=3, steps=40, env={})
    b = run_scenario("kitchen-sink", tmp_path / "b", seed=3, steps=40, env={})
    c = run_scenario("kitchen-sink", tmp_path / "c", seed=4, steps=40, env={})
    # THEN the logs and the dumps are byte-identical for the same seed
    assert a.log_path.read_bytes() == b.log_path.read_bytes()
    assert a.log_path.read_bytes() != c.log_path.read_bytes()
    assert a.dumps_dir is not None and b.dumps_dir is not None
    names = sorted(p.name for p in a.dumps_dir.iterdir())
    assert names == sorted(p.name for p in b.dumps_dir.iterdir())
    for n in names:
        assert (a.dumps_dir / n).read_bytes() == (b.dumps_dir / n).read_bytes()


def test_cache_file_is_executable_hash_not_hlo_hash(tmp_path: Path) -> None:
    # GIVEN a run with a cache
    r = run_scenario("healthy", tmp_path / "run", steps=4, env={})
    text = r.log_path.read_text()
    begin = next(m for line in text.splitlines() if (m := BEGIN.search(line)))
    files = [p.name for p in (r.cache_dir or tmp_path).glob("*.poplar_exec")]
    # THEN one %llx-named file exists, named by another hash than Begin's, and no locks remain
    assert len(files) == 1 and re.fullmatch(r"[0-9a-f]{1,16}\.poplar_exec", files[0])
    assert files[0].split(".")[0] != begin.group(2)
    assert f"Couldn't find cache/{files[0]} in executable cache" in text
    assert not list((r.cache_dir or tmp_path).glob("*_lock"))


def test_in_process_cache_compiles_each_executable_once(tmp_path: Path) -> None:
    # GIVEN train and eval alternating for several epochs in one process
    r = run_scenario("alternating-graphs", tmp_path / "run", steps=200, env={})
    text = r.log_path.read_text()
    # THEN each graph is compiled once, but loaded onto the device at every switch
    assert text.count("Begin XLA compilation") == 2
    assert text.count("Ending phase: Loading executable") > 4


def test_precompile_then_hardware_loads_what_was_saved(tmp_path: Path) -> None:
    # GIVEN the precompile scenario (a PRE_COMPILE process, then a hardware process)
    r = run_scenario("precompile", tmp_path / "run", steps=10, env={})
    pre = (tmp_path / "run" / "precompile.log").read_text()
    hw = r.log_path.read_text()
    saved = re.findall(r"A pre-compiled Poplar program has been saved to (\S+)", pre)
    # THEN the pre-compile run saved the executable and never attached; the hardware run loads it
    assert saved and "attached to" not in pre and "Loading executable" not in pre
    assert f"from {saved[0]}" in hw and "attached to 1 IPU" in hw


def test_log_levels_remove_lines_as_the_real_stack(tmp_path: Path) -> None:
    # GIVEN the Poplar logger off and TensorFlow INFO suppressed
    env = {"POPLAR_LOG_LEVEL": "OFF", "TF_CPP_MIN_LOG_LEVEL": "1"}
    r = run_scenario("healthy", tmp_path / "run", steps=4, env=env)
    text = r.log_path.read_text()
    # THEN no PO:ENGINE line and no I line remains, only the script's stdout
    assert "PO:ENGINE" not in text
    assert not re.search(r"^\d{4}-\d\d-\d\d .*: I ", text, re.M)
    assert "Epoch 1/" in text


def test_vmodule_controls_vlog_lines(tmp_path: Path) -> None:
    # GIVEN VLOG off (no TF_CPP_VMODULE) WHEN simulated
    r = run_scenario("healthy", tmp_path / "quiet", steps=4, env={"TF_CPP_VMODULE": ""})
    loud = run_scenario("healthy", tmp_path / "loud", steps=4, env={}, verbose_xla=True)
    # THEN Begin lines vanish; with --verbose-xla the executor's VLOG(1) lines appear too
    assert "Begin XLA compilation" not in r.log_path.read_text()
    assert "Executing on Poplar stream ordinal 0" in loud.log_path.read_text()


def test_old_prefix_style(tmp_path: Path) -> None:
    r = run_scenario("healthy", tmp_path / "run", steps=4, env={}, log_style="sdk2.2")
    text = r.log_path.read_text()
    assert re.search(
        r"^\d\d:\d\d:\d\d\.\d{3} \d+ PO:ENGINE   \[I\] Starting phase: graphConstruction$",
        text,
        re.M,
    )
    assert "Device /device:IPU:0 attached to IPU: 0" in text


def test_progress_bar_on_stdout_when_asked(tmp_path: Path) -> None:
    env = {"TF_POPLAR_FLAGS": "--executable_cache_path=cache --show_progress_bar=true"}
    text = run_scenario("healthy", tmp_path / "run", steps=4, env=env).log_path.read_text()
    assert re.search(r"^Compiling module a_inference_train_function_\S+:$", text, re.M)
    assert re.search(
        r"^\[#{50}\] 100% Compilation Finished \[Elapsed: \d\d:\d\d:\d\d\.\d\]$", text, re.M
    )


def test_unknown_poplar_flag_is_the_real_error(tmp_path: Path) -> None:
    with pytest.raises(
        RecompileDoctorError, match=r"Unknown flag in TF_POPLAR_FLAGS: --no_such_flag"
    ):
        run_scenario("healthy", tmp_path / "x", env={"TF_POPLAR_FLAGS": "--no_such_flag=1"})
    assert not (tmp_path / "x").exists()


def test_dump_naming_and_pass_dumps(tmp_path: Path) -> None:
    env = {"XLA_FLAGS": "--xla_dump_to=dumps --xla_dump_hlo_pass_re=forward-allocation"}
    r = run_scenario("healthy", tmp_path / "run", steps=4, env=env)
    assert r.dumps_dir is not None
    names = [p.name for p in r.dumps_dir.iterdir()]
    assert any(
        re.fullmatch(r"module_\d{4}\.a_inference_train_function_\S+\.before_optimizations\.txt", n)
        for n in names
    )
    assert any(
        ".after_forward-allocation.before_" in n or ".before_forward-allocation" in n for n in names
    )


def test_large_constants_flag_prints_values(tmp_path: Path) -> None:
    env = {"XLA_FLAGS": "--xla_dump_to=dumps --xla_dump_large_constants"}
    r = run_scenario("frozen-weights", tmp_path / "run", steps=3, env=env)
    assert r.dumps_dir is not None
    text = next(r.dumps_dir.iterdir()).read_text()
    assert "constant({...})" not in text and "constant({ {" in text


def test_cli_errors_are_one_line_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("x")
    assert main(["simulate", "no-such-scenario", "--out", str(tmp_path / "o")]) == 2
    assert main(["simulate", "healthy", "--out", str(tmp_path / "full")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and all(e.startswith("recompile-doctor: error: ") for e in err)


def test_scenario_file(tmp_path: Path) -> None:
    # GIVEN a user's scenario file modelling their own script
    script = tmp_path / "mine.py"
    script.write_text(
        "from recompile_doctor.simulate.api import Dense, Graph\n"
        "RULES = ()\n"
        "def run(sim):\n"
        "    with sim.process() as proc:\n"
        "        proc.configure(connection_type='ALWAYS')\n"
        "        proc.run(Graph('train_function', (Dense('d', 4),), input_shape=(3,)), 5)\n"
    )
    r = run_scenario(str(script), tmp_path / "out", env={})
    assert r.scenario == "mine" and "Begin XLA compilation" in r.log_path.read_text()


def test_a_failing_scenario_file_is_a_one_line_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN a user's scenario file whose run() raises
    script = tmp_path / "broken.py"
    script.write_text("def run(sim):\n    raise ValueError('boom')\n")
    # WHEN simulated THEN one line naming the file and the error, exit 2, no traceback
    assert main(["simulate", str(script), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert err == f"recompile-doctor: error: {script}: scenario failed: ValueError: boom\n"


def test_stdout_and_stderr_are_split_as_the_real_stack_splits_them(tmp_path: Path) -> None:
    # GIVEN a run with the compilation progress bar on
    env = {"TF_POPLAR_FLAGS": "--show_progress_bar=true"}
    r = run_scenario("healthy", tmp_path / "run", steps=4, env=env)
    merged = r.log_path.read_text().splitlines()
    out = (tmp_path / "run" / "run.stdout.log").read_text().splitlines()
    err = (tmp_path / "run" / "run.stderr.log").read_text().splitlines()
    # THEN run.log is exactly the two streams merged
    assert sorted(merged) == sorted(out + err)
    # AND the loggers write to stderr, the progress bar and Keras progress to stdout
    assert all("] " in x or " PO:" in x for x in err if x[:4].isdigit())
    assert any(x.startswith("Compiling module ") for x in out)
    assert not any("tensorflow/compiler" in x for x in out)
    assert any("Begin XLA compilation" in x for x in err)
