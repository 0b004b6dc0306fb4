"""The HTML report's view model: highlights, anchors, diffs, module rows, numbers."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from recompile_doctor.model import Compilation, DiffEvidence, Evidence
from recompile_doctor.reports import anchors, durations, excerpts, highlight, hlo_changes
from recompile_doctor.reports import view as report_view
from recompile_doctor.timeline.names import graph_element


def _marked(spans: tuple[highlight.Span, ...]) -> list[str]:
    return [s.text for s in spans if s.mark]


def test_evidence_line_marks_the_message_module_and_hash() -> None:
    # GIVEN a "Begin XLA compilation" line of module cluster_7
    line = (
        "2023-04-26 14:42:40.123456: I tensorflow/compiler/plugin/poplar/driver/"
        "poplar_compiler.cc:1487] Begin XLA compilation: cluster_7  (Hash: 0x9a3c) for ordinal  0"
    )
    # WHEN it is highlighted for a finding about cluster_7
    spans = highlight.highlight(line, ["cluster_7"])
    # THEN the message, the module and the hash are marked, the prefix is not
    marked = _marked(spans)
    assert "Begin XLA compilation" in marked
    assert "cluster_7" in marked
    assert any("0x9a3c" in m for m in marked)
    assert not spans[0].mark and spans[0].text.startswith("2023-04-26")
    # AND nothing is lost or duplicated
    assert "".join(s.text for s in spans) == line


def test_load_line_marks_phase_and_duration() -> None:
    # GIVEN the tech note's executable-load line
    line = "Ending phase: Loading executable (duration 607 ms; diff RSS: 0.586426 MB)"
    # WHEN highlighted
    marked = _marked(highlight.highlight(line))
    # THEN the phase and its duration are the matched parts
    assert "Ending phase: Loading executable" in marked
    assert "duration 607 ms" in marked


def test_anchor_ids_are_unique_and_follow_the_ev_source_line_pattern() -> None:
    # GIVEN two sources with the same base name and a line cited twice
    ids = anchors.Anchors(["a/run.log", "b/run.log"])
    # WHEN ids are taken
    first = ids.evidence("a/run.log", 10)
    again = ids.evidence("a/run.log", 10)
    other = ids.evidence("b/run.log", 10)
    # THEN they are ev-<source-slug>-<line>, never repeated
    assert first == "ev-run-log-10"
    assert again == "ev-run-log-10-2"
    assert other == "ev-run-log2-10"


def test_slug_of_hostile_text_is_letters_digits_and_dashes() -> None:
    assert anchors.slug('</script><b>"x"</b>.log') == "script-b-x-b-log"
    assert anchors.slug("") == "x"


def test_excerpt_numbers_context_lines_around_the_evidence_line() -> None:
    # GIVEN evidence at line 22 with two lines before and one after
    ev = Evidence("run.log", 22, "the line", before=("l20", "l21"), after=("l23",))
    # WHEN made into an excerpt
    x = excerpts.excerpt(ev, "ev-run-log-22", (), context=True)
    # THEN rows are numbered 20..23 and only line 22 is the match
    assert [r.number for r in x.rows] == [20, 21, 22, 23]
    assert [r.match for r in x.rows] == [False, False, True, False]


def test_constant_change_marks_only_the_changed_value() -> None:
    # GIVEN a learning-rate constant that changed from 0.001 to 0.0005
    d = DiffEvidence(
        "constant",
        "m",
        "%constant.12",
        '%constant.12 = f32[] constant(0.001), metadata={op_name="SGD/lr"}',
        "%constant.12",
        '%constant.12 = f32[] constant(0.0005), metadata={op_name="SGD/lr"}',
    )
    # WHEN shown as a change
    c = hlo_changes.change(d)
    # THEN the old and new values are the only marked tokens
    assert c.a is not None and c.b is not None
    assert _marked(c.a) == ["0.001"]
    assert _marked(c.b) == ["0.0005"]


def test_long_constant_list_is_abbreviated_and_says_a_hidden_value_changed() -> None:
    # GIVEN a 300-value constant whose middle values differ
    vals_a = [f"{k}.0" for k in range(300)]
    vals_b = list(vals_a)
    vals_b[150] = "999.0"
    a = "%c = f32[300]{0} constant({" + ", ".join(vals_a) + "})"
    b = "%c = f32[300]{0} constant({" + ", ".join(vals_b) + "})"
    # WHEN shown as a change
    c = hlo_changes.change(DiffEvidence("constant", "m", "%c", a, "%c", b))
    assert c.a is not None and c.b is not None
    text_b = "".join(s.text for s in c.b)
    # THEN only a few values are shown, with the number left out
    assert "0.0, 1.0, 2.0, 3.0," in text_b
    assert "294 more values" in text_b
    assert "150.0" not in text_b and len(text_b) < 120
    # AND the elided part is flagged as changed, since value 150 differs
    elided = [s for s in c.b if s.elided]
    assert len(elided) == 1 and elided[0].mark
    # AND the layout {0} (a short brace list) is kept as it is
    assert "f32[300]{0}" in text_b


def test_added_instruction_has_no_old_side() -> None:
    c = hlo_changes.change(
        DiffEvidence("added", "m", None, None, "%add.3", "%add.3 = f32[] add(%a, %b)")
    )
    assert c.a is None
    assert c.b is not None and "".join(s.text for s in c.b).startswith("%add.3")


def test_function_rows_put_functions_recompiled_after_warmup_first() -> None:
    # GIVEN module "quiet" compiled once and "busy" compiled three times
    def comp(i: int, mod: str, h: str, cache: str, warm: bool) -> Compilation:
        return Compilation(i, mod, h, "run.log", i + 1, float(i), 2.0, cache, warm)  # type: ignore[arg-type]

    rows = report_view.function_rows(
        [
            comp(0, "quiet", "0x1", "miss", True),
            comp(1, "busy", "0x2", "miss", True),
            comp(2, "busy", "0x3", "miss", False),
            comp(3, "busy", "0x3", "hit", False),
        ]
    )
    # THEN busy comes first with its counts, distinct graphs and cache outcomes
    assert [r.function for r in rows] == ["busy", "quiet"]
    busy = rows[0]
    assert (busy.compilations, busy.after_warmup, busy.graphs) == (3, 2, 2)
    assert busy.cache == (("miss", 2), ("hit", 1))
    # AND compile time counts the compilations only; the cache hit's time is loading
    assert (busy.compile_seconds, busy.load_seconds) == (4.0, 2.0)


def test_a_function_retraced_many_times_names_ten_modules_in_its_tooltip() -> None:
    # GIVEN one function compiled as 50 modules (a new TF function number each time)
    comps = [
        Compilation(i, f"a_inference_step_{i}__", None, "run.log", i + 1, None, 1.0, "miss", i == 0)
        for i in range(50)
    ]
    (row,) = report_view.function_rows(comps)
    assert row.module_count == 50 and len(row.modules) == 10
    # THEN the tooltip lists the first ten and how many others
    title = row.modules_title
    assert title.startswith("a_inference_step_0__; a_inference_step_1__; ")
    assert "a_inference_step_9__" in title and "a_inference_step_10__" not in title
    assert title.endswith("and 40 other modules")
    # AND the same modules compiled again count once
    again = [*comps, *(c for c in comps[::-1] for _ in range(2))]
    (row_again,) = report_view.function_rows(again)
    assert row_again.module_count == 50 and row_again.modules_title == title


def test_seconds_are_written_for_people() -> None:
    assert durations.fmt_seconds(0.607) == "607 ms"
    assert durations.fmt_seconds(41.04) == "41.0 s"
    assert durations.fmt_seconds(83.2) == "1 min 23 s"
    assert durations.fmt_seconds(3725) == "1 h 02 min"
    assert durations.fmt_seconds(None) == "–"


def test_overlapping_excerpts_are_shown_once_with_every_evidence_line_anchored() -> None:
    # GIVEN evidence at lines 37 and 39 of one log, each with two lines of context
    def ev(n: int) -> Evidence:
        return Evidence(
            "run.log", n, f"load {n}", (f"c{n - 2}", f"c{n - 1}"), (f"c{n + 1}", f"c{n + 2}")
        )

    xs = [excerpts.excerpt(ev(n), f"ev-run-log-{n}", (), True) for n in (37, 39, 80)]
    # WHEN merged
    merged = excerpts.merge_excerpts(xs)
    # THEN 37 and 39 share one block of lines 35..41, 80 stays apart
    assert [[r.number for r in x.rows] for x in merged] == [
        list(range(35, 42)),
        list(range(78, 83)),
    ]
    first = merged[0]
    assert [(r.number, r.id) for r in first.matches] == [
        (37, "ev-run-log-37"),
        (39, "ev-run-log-39"),
    ]
    assert [r.spans[0].text for r in first.rows if r.number == 39] == ["load 39"]


@given(
    st.lists(
        st.tuples(
            st.sampled_from(["f", "g"]),
            st.sampled_from([None, "0x1", "0x2", "module:f_1", "module:f_9"]),
            st.sampled_from(["f_1", "f_2", "g_1"]),
        ),
        max_size=40,
    )
)
def test_a_rows_distinct_graphs_are_counted_as_the_summary_counts_them(
    compiled: list[tuple[str, str | None, str]],
) -> None:
    # GIVEN compilations of two functions, with a graph hash, without one, or with a hash
    # that names a module, in any order
    comps = [
        Compilation(i, m, h, "run.log", i + 1, None, 1.0, "miss", i == 0, function=fn)
        for i, (fn, h, m) in enumerate(compiled)
    ]
    rows = {r.function: r for r in report_view.function_rows(comps)}
    # THEN each row counts its distinct graphs by hash, else by module, as a set of the
    # elements does (the summary's rule), and its distinct modules apart from them
    for fn, row in rows.items():
        mine = [c for c in comps if c.function == fn]
        assert row.graphs == len({graph_element(c.hash, c.module) for c in mine})
        assert row.module_count == len({c.module for c in mine})
    assert set(rows) == {c.function for c in comps}


def test_rows_without_graph_hashes_count_their_modules_as_graphs() -> None:
    # GIVEN a function compiled as 50 modules, no graph hash known (a TensorFlow log)
    comps = [
        Compilation(i, f"a_inference_step_{k}__", None, "run.log", i + 1, None, 1.0, "miss", k == 0)
        for i, k in enumerate([*range(20), *range(20), *range(10)])
    ]
    (row,) = report_view.function_rows(comps)
    # THEN its graphs are its 20 distinct modules, as the summary counts them (not 0)
    assert row.graphs == row.module_count == 20


@given(
    st.lists(
        st.tuples(
            st.sampled_from(["f", "g", "h"]),
            st.sampled_from([None, None, "0x1", "0x2", "0x3"]),
            st.sampled_from(["f_1", "f_2", "g_1", "m_3", "m_4"]),
            st.sampled_from([None, 0, 1]),
        ),
        max_size=60,
    ),
    st.sampled_from([1, 2, 10]),
)
def test_function_rows_counted_by_module_number_are_those_counted_by_name(
    compiled: list[tuple[str, str | None, str, int | None]], in_title: int
) -> None:
    # GIVEN compilations of a few functions and ranks, with a graph hash or without one,
    # modules shared by functions, any number of modules named in a row's title
    import pytest

    from recompile_doctor.reports.module_numbers import module_numbers

    comps = [
        Compilation(i, m, h, "run.log", i + 1, None, 1.0, "miss", i == 0, function=fn, rank=rk)
        for i, (fn, h, m, rk) in enumerate(compiled)
    ]
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(report_view, "MODULES_IN_TITLE", in_title)
        by_name = report_view.function_rows(comps)
        # WHEN their distinct modules and graphs are counted by the modules' numbers
        # (the numbered path itself: it would raise, not fall back, on a graph it cannot
        # count so)
        by_number = report_view._function_rows(comps, module_numbers(comps))
    # THEN every row is the same
    assert by_number == by_name


def test_function_rows_fall_back_to_names_for_a_graph_named_apart_from_its_module() -> None:
    # GIVEN a compilation whose hash names another module's graph ("module:<name>")
    from recompile_doctor.reports.module_numbers import module_numbers

    comps = [
        Compilation(0, "f_1", None, "run.log", 1, None, 1.0, "miss", True, function="f"),
        Compilation(1, "f_2", "module:f_1", "run.log", 2, None, 1.0, "miss", False, function="f"),
    ]
    # WHEN counted with module numbers, THEN the rows are those counted by name (one graph)
    rows = report_view.function_rows(comps, module_numbers(comps))
    assert rows == report_view.function_rows(comps)
    assert (rows[0].graphs, rows[0].module_count) == (1, 2)
