"""The one report view and the reading items 16-20 of the trust issue (#11): what text,
Markdown and HTML say, and the Python ``render`` API."""

from __future__ import annotations

from pathlib import Path

import pytest

import recompile_doctor as rd
from recompile_doctor.cli.main import main
from recompile_doctor.differ.result import Cause, DiffResult, ModuleDiff, Note
from recompile_doctor.model import (
    Compilation,
    Evidence,
    Finding,
    InputInfo,
    ParseStats,
    Report,
    Summary,
    ValueChange,
)
from recompile_doctor.reports import html, markdown, text
from recompile_doctor.reports.durations import fmt_seconds
from recompile_doctor.reports.view import clip_pair, report_view

ROOT = Path(__file__).resolve().parent.parent
KITCHEN = ROOT / "fixtures" / "simulated" / "kitchen-sink" / "run.log"
JAX_BATCH = ROOT / "fixtures" / "jax" / "batch_size" / "run.log"
TF_LINE = (
    "2023-04-26 09:01:18.418987: I tensorflow/compiler/plugin/poplar/driver/"
    "poplar_compiler.cc:1487] Begin XLA compilation: a_inference_train_function_20382__"
    "XlaMustCompile_true_config_proto___n_007_n_003CPU_020_001_n_007_n_003GPU_020_0002_001_"
    "000__executor_type____.169 (Hash: 0x6c89964335fad8ba) for ordinal 0"
)


def _finding(
    rule: str,
    severity: str = "warning",
    wasted: float = 0.0,
    detail: str = "why",
    changes: tuple[ValueChange, ...] = (),
    evidence: tuple[Evidence, ...] = (),
) -> Finding:
    return Finding(
        rule=rule,
        severity=severity,  # type: ignore[arg-type]
        consideration=None,
        title=rule.replace("-", " ").capitalize(),
        detail=detail,
        advice="do this",
        modules=("jit_train_step",),
        count=1,
        wasted_seconds=wasted,
        evidence=evidence,
        changes=changes,
    )


def _report(
    *findings: Finding, wasted: float = 0.0, ranks: tuple[int | None, ...] = (None,)
) -> Report:
    comps = tuple(
        Compilation(
            i,
            "jit_train_step",
            f"0x{i}",
            "run.log",
            i + 1,
            float(i),
            1.0,
            "miss",
            i == 0,
            framework="jax",
            function="train_step",
            rank=r,
        )
        for i, r in enumerate(ranks * 2)
    )
    return Report(
        inputs=(InputInfo("run.log", "jax", 10, 100),),
        parse=ParseStats(5, 5, 0),
        summary=Summary(
            compilations=len(comps),
            recompilations_after_warmup=len(comps) - 1,
            wasted_seconds=wasted,
        ),
        compilations=comps,
        events=(),
        findings=findings,
    )


# --------------------------------------------------------------------------- item 16


def test_text_evidence_shows_the_whole_message_without_the_logger_prefix() -> None:
    # GIVEN a finding whose evidence is a long TensorFlow log line
    r = _report(_finding("recompile-after-warmup", evidence=(Evidence("run.log", 190, TF_LINE),)))
    # WHEN rendered as text 200 columns wide
    out = text.render(r, width=200)
    # THEN the time, level and source file are gone and the message is whole (hash, ordinal)
    ev = out[out.index("evidence:") :]
    assert "2023-04-26" not in ev and "poplar_compiler.cc" not in ev
    assert "run.log:190: Begin XLA compilation: a_inference_train_function_20382" in ev
    # (wrapped, not cut)
    assert "(Hash: 0x6c89964335fad8ba) for ordinal 0" in " ".join(ev.split())
    assert "…" not in ev


def test_text_fits_the_terminal_width_from_columns(monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN a real Poplar log
    report = rd.analyze([str(KITCHEN)])
    # WHEN rendered with COLUMNS=200 and with COLUMNS=80
    monkeypatch.setenv("COLUMNS", "200")
    wide = text.render(report)
    monkeypatch.setenv("COLUMNS", "80")
    narrow = text.render(report)
    # THEN the layout follows the width: evidence lines wrap within it, never cut
    assert wide != narrow
    ev = narrow[narrow.index("evidence:") : narrow.index("\n\n", narrow.index("evidence:"))]
    assert all(len(line) <= 80 for line in ev.splitlines())
    assert "for ordinal" in ev  # the end of the message is still there


@pytest.mark.parametrize("columns", [None, "200", "80", "30", "0", "-5", "wide", " 120 "])
@pytest.mark.parametrize("terminal", [None, 132, 0], ids=["no-tty", "tty-132", "tty-0"])
def test_the_terminal_width_is_the_standard_librarys(
    monkeypatch: pytest.MonkeyPatch, columns: str | None, terminal: int | None
) -> None:
    # GIVEN COLUMNS set (or not, or not a number) and standard output a terminal of some
    # width (or not one at all)
    import os
    import shutil

    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    monkeypatch.delenv("LINES", raising=False)

    def size(_fd: int = 1) -> os.terminal_size:
        if terminal is None:
            raise OSError("not a terminal")
        return os.terminal_size((terminal, 40))

    monkeypatch.setattr(os, "get_terminal_size", size)
    # THEN the report is as wide as shutil would say (100 without a terminal), never under
    # the narrowest layout
    want = max(shutil.get_terminal_size((100, 24)).columns, text.MIN_WIDTH)
    assert text.terminal_width() == want


# --------------------------------------------------------------------------- item 17


def test_one_duration_format_everywhere() -> None:
    # GIVEN a run that wasted 294397 s WHEN rendered in text and Markdown
    r = _report(_finding("shape-changed", wasted=294397.0), wasted=294397.0)
    # THEN both say hours and minutes, never 294397.0 s
    assert fmt_seconds(294397.0) == "81 h 46 min"
    for out in (text.render(r, width=100), markdown.render(r)):
        assert "81 h 46 min" in out
        assert "294397" not in out


def test_info_findings_are_one_line_in_text_unless_verbose() -> None:
    # GIVEN a healthy run with a cache-cold info finding
    r = _report(_finding("cache-cold", severity="info", detail="the cache was cold " * 10))
    # WHEN rendered as text
    out = text.render(r, width=100)
    # THEN the info finding is one line with no "why"/"fix" block
    assert "cache-cold: Cache cold" in out
    assert "why:" not in out and "fix:" not in out
    # AND -v (verbose) shows it in full
    assert "why:" in text.render(r, width=100, verbose=True)


def test_identical_first_and_last_clauses_are_collapsed_with_a_count() -> None:
    detail = (
        "3 recompilations after warm-up: repeat_mix, 3 times (lines 2 to 20); "
        "first: n 1 → None at capture.py:154; last: n 1 → None at capture.py:154."
    )
    out = text.render(_report(_finding("constant-changed", detail=detail)), width=80)
    assert "n 1 → None at capture.py:154 (×2)" in out
    assert out.count("n 1 → None at capture.py:154") == 1


def test_changes_read_old_to_new_with_the_call_site() -> None:
    change = ValueChange("train_step", "x", "f32[32,16]", "f32[8,16]", "capture.py:144")
    r = _report(_finding("batch-size-changed", changes=(change,)))
    assert "x: f32[32,16] → f32[8,16] at capture.py:144" in text.render(r, width=100)
    assert "x: f32[32,16] → f32[8,16] at capture.py:144" in markdown.render(r)
    page = html.render(r)
    assert (
        "<code>x</code>: <del>f32[32,16]</del> → <ins>f32[8,16]</ins> at <code>capture.py:144</code>"
        in page
    )


def test_a_long_tuple_shape_is_cut_after_the_part_that_changed() -> None:
    head = "(" + ", ".join(f"f32[{i},16]" for i in range(30))
    old, new = clip_pair(head + ", f32[32,16])", head + ", f32[8,16])", 40)
    assert "32,16" in old and "8,16" in new


# --------------------------------------------------------------------------- item 19


def test_render_accepts_a_diff_and_returns_text() -> None:
    res = DiffResult("a", "b", [ModuleDiff("jit_f", "a/x.txt", "b/x.txt", True)])
    for fmt in ("text", "markdown", "json", "html"):
        out = rd.render(res, fmt)
        assert isinstance(out, str) and "jit_f" in out


def test_render_of_an_unknown_format_is_a_value_error_that_lists_the_formats() -> None:
    with pytest.raises(ValueError, match="text, json, markdown, html"):
        rd.render(_report(), "htm")


def test_render_returns_str_for_every_format() -> None:
    for fmt in ("text", "json", "markdown", "html"):
        assert isinstance(rd.render(_report(), fmt), str)


# --------------------------------------------------------------------------- item 20


def test_top_cause_is_the_costliest_problem_and_no_time_is_not_zero_seconds() -> None:
    # GIVEN cache-disabled (no time) listed before a costly shape change
    r = _report(
        _finding("cache-disabled", severity="error"),
        _finding("shape-changed", wasted=12.0),
        wasted=12.0,
    )
    v = report_view(r)
    # THEN the top cause is the one that cost time
    assert v.headline.top is not None and v.headline.top.rule == "shape-changed"
    assert "top cause: shape-changed" in text.render(r, width=100)
    # AND a run whose problems measured no time says so, not "0.0 s wasted"
    r0 = _report(_finding("cache-disabled"))
    line = text.render(r0, width=100).splitlines()[0]
    assert "no time measured" in line and "0.0 s" not in line


def test_report_says_where_it_wrote_the_page(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["report", str(JAX_BATCH)]) == 0
    assert "wrote recompile-report.html" in capsys.readouterr().err


# --------------------------------------------------------------------------- one view


def test_text_markdown_and_html_show_function_names_and_ranks() -> None:
    # GIVEN a run of two ranks compiling jit_train_step (function train_step)
    r = _report(ranks=(0, 1))
    t, md, page = text.render(r, width=100), markdown.render(r), html.render(r)
    # THEN every renderer names the function, with its rank
    assert "train_step (rank 0)" in t and "train_step (rank 1)" in t
    assert "train_step (rank 1)" in md
    assert '<code title="jit_train_step">train_step</code>' in page
    assert ">Rank</th>" in page


# --------------------------------------------------------------------------- item 18 (HTML)


def test_diff_page_shows_notes_within_and_advice_and_no_timeline_glossary() -> None:
    m = ModuleDiff("jit_f", "a/x.txt", "b/x.txt", False, within="b")
    m.explanations.append(Cause("batch-size-changed", "leading dimension 32 → 8"))
    m.notes.append(Note("constants-elided", "constants printed as {...} were not compared"))
    page = html.render_diff(DiffResult("a", "b", [m])).decode("utf-8")
    assert "constants printed as {...} were not compared" in page
    assert "Extra compilation in B" in page
    assert "What to change" in page
    assert "Executable cache" not in page and "Warm-up" not in page


def test_six_alike_evidence_lines_show_the_first_then_five_more_like_it() -> None:
    # GIVEN a finding with six log lines that differ only in their numbers
    evs = tuple(
        Evidence(
            "run.log",
            10 * k,
            f"Ending phase: Loading executable (duration {500 + k} ms)",
            before=("ctx",),
            after=("ctx",),
        )
        for k in range(1, 7)
    )
    r = _report(_finding("executable-switching", evidence=evs))
    # WHEN rendered
    page, out = html.render(r), text.render(r, width=100)
    # THEN the HTML shows one context block, then "5 more like it"
    assert page.count('<figure class="excerpt">') == 1
    assert "5 more like it:" in page
    # AND the text lists the first line and the others by number
    assert "… 5 more like it (lines 20, 30, 40, 50, 60)" in out


def test_a_finding_lists_its_first_instruction_changes_and_counts_the_rest() -> None:
    from dataclasses import replace

    from recompile_doctor.model import DiffEvidence

    # GIVEN a batch-size finding behind which 21 instructions changed
    diffs = tuple(
        DiffEvidence(
            "shape", "jit_f", f"%p.{k}", f"%p.{k} = f32[32,{k}]", f"%p.{k}", f"%p.{k} = f32[8,{k}]"
        )
        for k in range(21)
    )
    f = replace(_finding("batch-size-changed"), diff=diffs)
    page = html.render(_report(f))
    # THEN the page shows 5 of them and says how many more there are
    assert page.count('<tr class="meta">') == 5
    assert "16 more changes" in page


def test_cache_stores_are_said_in_text_markdown_and_html() -> None:
    from dataclasses import replace

    r = _report()
    r = replace(r, summary=replace(r.summary, cache_by_store={"persistent": {"hit": 2, "miss": 0}}))
    for out in (text.render(r, width=100), markdown.render(r)):
        assert "caches: persistent 2 hits" in out and "0 misses" not in out
    assert "Caches: persistent 2 hits." in html.render(r)


def test_a_jax_page_explains_no_poplar_term_and_a_poplar_page_does() -> None:
    jax_page = html.render(_report())
    glossary = jax_page[jax_page.index('id="glossary"') :]
    assert "Executable load / switching" not in glossary
    assert "TF_POPLAR_FLAGS" not in glossary and "poplar_exec" not in glossary
    poplar = rd.analyze([str(KITCHEN)])
    assert "Executable load / switching" in html.render(poplar)


def test_analyze_v_details_info_findings(capsys: pytest.CaptureFixture[str]) -> None:
    import logging

    logger = logging.getLogger("recompile_doctor")
    level = logger.level
    try:
        # GIVEN a run with a cache-cold info finding WHEN analyzed without and with -v
        assert main(["analyze", str(KITCHEN)]) == 0
        plain = capsys.readouterr().out
        assert main(["analyze", str(KITCHEN), "-v"]) == 0
        verbose = capsys.readouterr().out
    finally:
        logger.setLevel(level)
    # THEN only -v shows why the cache was cold
    assert "missed the executable cache" not in plain
    assert "missed the executable cache" in verbose


def test_graphcore_considerations_only_label_poplar_runs() -> None:
    """GIVEN a JAX run and a Poplar run WHEN rendered THEN only the Poplar run's findings name
    the Graphcore note's Considerations."""
    from pathlib import Path

    from recompile_doctor import analyze, render

    root = Path(__file__).resolve().parent.parent / "fixtures"
    jax = render(analyze(str(root / "jax" / "batch_size" / "run.log")), "text")
    poplar = render(analyze(str(root / "simulated" / "partial-batch" / "run.log")), "text")
    assert "Consideration" not in jax
    assert "Consideration" in poplar
