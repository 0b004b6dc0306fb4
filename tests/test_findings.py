"""Each finding: a log that raises it (with the right evidence) and logs that must not."""

from __future__ import annotations

import pytest

from recompile_doctor import analyze
from recompile_doctor.model import Report
from tests.conftest import CASES

# case -> exactly the rules it raises
EXPECTED: dict[str, set[str]] = {
    "healthy_first_run.log": {"cache-cold"},
    "healthy_second_run.log": set(),
    "cache_disabled_two_processes.log": {"cache-disabled"},
    "alternating_graphs.log": {"executable-switching", "cache-cold"},
    "alternating_graphs_sdk22.log": {"executable-switching", "cache-cold"},
    "slow_loads_poplar_only.log": {"slow-load", "recompile-after-warmup"},
    "fast_loads_poplar_only.log": set(),
    "final_results_load.log": {"cache-cold"},
    "partial_batch_no_dumps.log": {"recompile-after-warmup", "cache-cold"},
    "same_hash_cache_miss.log": {"recompile-after-warmup", "cache-cold"},
    "recompile_before_first_step.log": {"cache-cold"},
    "precompile_unhashable.log": {"precompile-unsupported", "cache-cold"},
    "precompile_no_cache_path.log": {"precompile-unsupported"},
    "precompile_ok.log": {"cache-cold"},
    "glued_progress_crlf.log": {"cache-cold"},
    "two_ranks_interleaved.log": {"cache-cold"},
}


def _report(name: str) -> Report:
    return analyze([str(CASES / name)])


def _finding(report: Report, rule: str):  # type: ignore[no-untyped-def]
    (f,) = [f for f in report.findings if f.rule == rule]
    return f


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_case_raises_exactly_its_rules(name: str) -> None:
    report = _report(name)
    assert {f.rule for f in report.findings} == EXPECTED[name]
    for f in report.findings:  # every finding points at verbatim input lines
        assert f.evidence
        lines = (CASES / name).read_bytes().decode().splitlines()
        for e in f.evidence:
            assert lines[e.line - 1] == e.text


def test_healthy_second_run_loads_everything_from_the_cache() -> None:
    r = _report("healthy_second_run.log")
    assert (r.summary.compilations, r.summary.cache_hits, r.summary.cache_misses) == (1, 1, 0)
    assert r.compilations[0].cache_file == "/tmp/cache/277a08fe4c20b50.poplar_exec"
    assert not r.compilations[0].compiled


def test_cache_disabled_names_the_flags_and_the_repeated_compile() -> None:
    f = _finding(_report("cache_disabled_two_processes.log"), "cache-disabled")
    assert f.count == 2 and f.wasted_seconds == pytest.approx(31.5)
    assert "--max_compilation_threads=8" in f.detail and "same HLO hash" in f.detail
    assert [e.line for e in f.evidence] == [2, 4, 20]
    assert f.consideration == 0


def test_executable_switching_counts_the_switches_and_their_cost() -> None:
    f = _finding(_report("alternating_graphs.log"), "executable-switching")
    assert f.count == 6
    assert f.wasted_seconds == pytest.approx(3 * (0.610 + 0.560))
    assert len(f.modules) == 2 and all("Loading executable" in e.text for e in f.evidence)


def test_slow_loads_without_module_names_say_how_to_get_them() -> None:
    r = _report("slow_loads_poplar_only.log")
    f = _finding(r, "slow-load")
    assert f.count == 4 and f.wasted_seconds == pytest.approx(4 * 0.607)
    assert "TF_POPLAR_VLOG_LEVEL=1" in f.detail
    rec = _finding(r, "recompile-after-warmup")
    assert "does not name the module" in rec.detail


def test_graph_change_is_told_from_a_cache_miss() -> None:
    changed = _finding(_report("partial_batch_no_dumps.log"), "recompile-after-warmup")
    assert "0x9a3c5e21d04b7f11 → 0x77e1f00dcafe1234: the graph changed" in changed.detail
    assert "--dumps" in changed.advice
    assert changed.wasted_seconds == pytest.approx(28.0 + 1.5 + 1.0, abs=1.5)
    same = _finding(_report("same_hash_cache_miss.log"), "recompile-after-warmup")
    assert "same HLO hash 0x9a3c5e21d04b7f11" in same.detail
    assert "executable cache was missed (/tmp/cache/5d4c3b2a1908f7e.poplar_exec)" in same.detail


def test_recompilation_cause_is_set_on_the_compilation() -> None:
    r = _report("partial_batch_no_dumps.log")
    assert [(c.warmup, c.cause) for c in r.compilations] == [
        (True, None),
        (False, "recompile-after-warmup"),
    ]
    assert r.summary.recompilations_after_warmup == 1


def test_warmup_option_overrides_auto() -> None:
    r = analyze([str(CASES / "partial_batch_no_dumps.log")], warmup=2)
    assert not [f for f in r.findings if f.rule == "recompile-after-warmup"]
    r = analyze([str(CASES / "recompile_before_first_step.log")], warmup=1)
    assert {f.rule for f in r.findings} >= {"recompile-after-warmup"}


def test_precompile_problems_are_errors() -> None:
    f = _finding(_report("precompile_unhashable.log"), "precompile-unsupported")
    assert f.severity == "error" and "is_hashable" in f.detail
    g = _finding(_report("precompile_no_cache_path.log"), "precompile-unsupported")
    assert "no --executable_cache_path" in g.detail


def test_glued_progress_bar_gives_the_compile_time() -> None:
    r = _report("glued_progress_crlf.log")
    (c,) = r.compilations
    assert (c.duration_s, c.cache, c.line) == (28.8, "miss", 4)


def test_evidence_carries_context_lines() -> None:
    f = _finding(_report("partial_batch_no_dumps.log"), "recompile-after-warmup")
    e = f.evidence[-1]
    assert len(e.before) == 3 and len(e.after) == 3
    assert "Execute" in e.before[-1]


def test_empty_timeline_gives_no_findings(tmp_path) -> None:  # type: ignore[no-untyped-def]
    p = tmp_path / "noise.log"
    p.write_text("Epoch 1/4\n2000/2000 [====] - 13s 7ms/step - loss: 0.6238\n")
    r = analyze([str(p)])
    assert r.findings == () and r.summary.compilations == 0
    assert (r.parse.recognized, r.parse.unrecognized) == (0, 2)


def test_interleaved_mpi_ranks_are_separate_processes() -> None:
    # GIVEN two ranks whose lines interleave WHEN analyzed THEN each rank's compile is its
    # own warm-up with its own cache file, and nothing recompiles
    r = _report("two_ranks_interleaved.log")
    assert [(c.warmup, c.cache_file) for c in r.compilations] == [
        (True, "/tmp/cache/1f0e2d3c4b5a697.poplar_exec"),
        (True, "/tmp/cache/6e5d4c3b2a19087.poplar_exec"),
    ]
    assert r.summary.recompilations_after_warmup == 0
    assert {e.detail.get("rank") for e in r.events} == {"1,0", "1,1"}


def test_every_recompilation_gets_its_cause_even_beyond_the_evidence_cap(tmp_path) -> None:  # type: ignore[no-untyped-def]
    # GIVEN a function compiled 20 times with a new hash each time, executed in between
    pre = "2023-04-26 14:{m:02d}:{s:02d}.000000: I tensorflow/compiler/plugin/poplar/driver/"
    lines = []
    for i in range(20):
        m, s = divmod(i * 3, 60)
        lines.append(
            pre.format(m=m, s=s)
            + f"poplar_compiler.cc:1487] Begin XLA compilation: cluster_7  (Hash: 0x{i + 1:x}) for ordinal  0"
        )
        lines.append(pre.format(m=m, s=s + 1) + "poplar_executable.cc:1109] Execute cluster_7")
    log = tmp_path / "run.log"
    log.write_text("\n".join(lines) + "\n")
    # WHEN analyzed THEN all 19 recompilations have a cause; the evidence stays capped
    r = analyze([str(log)])
    assert [c.cause for c in r.compilations] == [None] + ["recompile-after-warmup"] * 19
    f = _finding(r, "recompile-after-warmup")
    assert f.count == 19 and len(f.evidence) == 12


def test_an_unexplained_recompilation_says_once_how_to_learn_why() -> None:
    # GIVEN a TensorFlow log that does not say why a function compiled again, THEN the
    # finding's advice says how to make TensorFlow say it (once), the detail names each
    # recompilation without repeating it, and the text report shows one bullet per
    # recompilation (no clause cut in two)
    from pathlib import Path

    from recompile_doctor.analyses.recompile import _how_to_log
    from recompile_doctor.reports.text import why_lines

    log = Path(__file__).resolve().parent.parent / "fixtures/tensorflow/growing_shape/run.log"
    f = _finding(analyze([str(log)]), "recompile-after-warmup")
    how = _how_to_log("tensorflow")
    assert how and f.advice.count(how) == 1
    assert how not in f.detail
    assert f.detail.count("and the log does not say what changed") == 2  # (first and last)
    lines = why_lines(f.detail, 100)
    bullets = [x.strip() for x in lines if x.strip().startswith("- ")]
    assert len(bullets) == 3 and bullets[0].startswith("- smooth_loss, 5 times"), lines
    assert bullets[1].startswith("- first: compiled again"), lines
    assert bullets[2].startswith("- last: compiled again"), lines


@pytest.mark.parametrize("framework", ["tensorflow", "ptxla", "jax", "torch", "poplar", None])
def test_the_advice_for_an_unexplained_recompilation_fits_the_framework(
    framework: str | None,
) -> None:
    # the rule's own words for a framework where it has them; else its general advice and
    # the framework's way to log why it compiles; the general advice for several frameworks
    from recompile_doctor.analyses import Options
    from recompile_doctor.analyses.recompile import _advice, _how_to_log
    from recompile_doctor.rules import rule

    r = rule("recompile-after-warmup")
    got = _advice(r.id, Options(), framework)
    if framework in r.advice_by_framework or framework in (None, "poplar"):
        assert got == r.advice_for(framework)
    else:
        assert framework is not None
        assert got == f"{r.advice} {_how_to_log(framework)}"
