"""The recompilation analysis reads the framework's reasons where they are kept, instead of
holding them all.

A verdict names where its reasons are in the timeline (``ReasonsAt``) and reads them when
asked; the finding of each cause collects only the evidence lines, value changes and dump
changes it can show.  On a run of 100,000 recompilations the reasons, with their verbatim
lines, then stay packed.

GIVEN every framework log fixture, read into a timeline whose reasons are packed in chunks
of two (none kept plain), WHEN the recompilations are judged, THEN each verdict's reasons are
exactly the causes' reasons attached to its compilation, in log order, and the findings and
causes are those of the same timeline with its reasons unpacked.  GIVEN any evidence lines,
WHEN fed one at a time to ``Capped``, THEN it keeps what ``cap`` keeps of the whole list.
GIVEN every fixture run, WHEN each cause's finding is gathered one verdict at a time (the
verdicts themselves made when read, not held), THEN it is the finding made of every verdict
of the cause held in a list.
"""

from __future__ import annotations

import dataclasses
import pickle
from pathlib import Path
from typing import Any

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from recompile_doctor.analyses import Options, diagnose
from recompile_doctor.analyses.capped import MAX_EVIDENCE, Capped, cap
from recompile_doctor.analyses.recompile import (
    ReasonsAt,
    _ordered,
    recompilation_causes,
    recompilations,
    verdicts,
)
from recompile_doctor.model import Evidence, Finding, ValueChange
from recompile_doctor.rules import RULES, cause_rank
from recompile_doctor.timeline import column, packed
from recompile_doctor.timeline.reason_facts import NOTHING_GREW, ReasonFacts, grown_arguments
from recompile_doctor.timeline.types import Timeline
from tests.conftest import examples, timeline_of

ROOT = Path(__file__).resolve().parent.parent
LOGS = sorted(
    p
    for fw in ("jax", "tensorflow", "torch", "ptxla")
    for p in (ROOT / "fixtures" / fw).rglob("*.log")
    if p.is_file()
)


def _packed_timeline(path: Path, monkeypatch: pytest.MonkeyPatch) -> Timeline:
    with monkeypatch.context() as mp:
        mp.setattr(packed, "PACK_CHUNK", 2)
        mp.setattr(packed, "PLAIN_CHUNKS", 0)
        return timeline_of(path)


def test_the_fixtures_have_reasons_to_read_and_packed(monkeypatch: pytest.MonkeyPatch) -> None:
    n = sum(1 for p in LOGS for v in verdicts(timeline_of(p), Options()) if v.reasons)
    assert n >= 10
    shown = [repr(_packed_timeline(p, monkeypatch).reasons._items) for p in LOGS]  # type: ignore[attr-defined]
    assert any(" 0 chunks packed" not in s for s in shown)


@pytest.mark.parametrize("path", LOGS, ids=lambda p: str(p.relative_to(ROOT)))
def test_verdicts_read_the_reasons_of_their_compilation_where_they_are_kept(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tl = _packed_timeline(path, monkeypatch)
    attached: dict[int, list[object]] = {}
    for r, cid in tl.reasons:  # the plain reading: every reason, in log order
        if (
            cid is not None
            and r.rule
            and r.rule
            not in (
                "recompile-limit",
                "compile-failed",
                "graph-break",
                "rank-divergence",
            )
        ):
            attached.setdefault(cid, []).append(r)
    vs = verdicts(tl, Options())
    assert [v.compilation.id for v in vs] == [c.id for _, c in recompilations(tl)]
    for v in vs:
        expected = attached.get(v.compilation.id, [])
        assert list(v.reasons) == expected
        assert len(v.reasons) == len(expected)
        assert [v.reasons[i] for i in range(len(expected))] == expected
        if expected:
            assert isinstance(v.reasons, ReasonsAt)  # places, not the reasons themselves
            assert v.reasons == tuple(expected)
            assert list(v.reasons[1:]) == expected[1:]


@pytest.mark.parametrize("path", LOGS, ids=lambda p: str(p.relative_to(ROOT)))
def test_packed_reasons_give_the_same_findings_and_causes(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    packed_tl = _packed_timeline(path, monkeypatch)
    plain_tl = timeline_of(path)
    assert diagnose(packed_tl, Options()) == diagnose(plain_tl, Options())
    assert recompilation_causes(packed_tl, Options()) == recompilation_causes(plain_tl, Options())


@pytest.mark.parametrize("path", LOGS, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_facts_taken_as_reasons_came_are_those_of_the_reasons(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN a fixture log's timeline, its reasons packed, and the same with the builder's
    # numbers in a file from the first one on (column.SPILL_AFTER 1)
    tl = _packed_timeline(path, monkeypatch)
    with monkeypatch.context() as mp:
        mp.setattr(column, "SPILL_AFTER", 1)
        spilled = timeline_of(path)
    # THEN what the builder took of each reason as it came is what the reasons say
    assert tl.reason_facts is not None and spilled.reason_facts is not None
    read = ReasonFacts.of(r for r, _ in tl.reasons)
    assert tl.reason_facts == read == spilled.reason_facts
    assert [tl.reason_facts.fact(i) for i in range(len(read))] == [
        (r.rule, r.span.source, r.span.line, bool(r.changes), grown_arguments(r.changes))
        for r, _ in tl.reasons
    ]
    assert pickle.loads(pickle.dumps(spilled.reason_facts)) == read
    # AND the findings and causes made from them are those made from the reasons read back
    unkept = dataclasses.replace(tl, reason_facts=None)
    assert diagnose(tl, Options()) == diagnose(unkept, Options())
    assert recompilation_causes(tl, Options()) == recompilation_causes(unkept, Options())


def test_grown_arguments_are_those_no_dimension_of_which_shrank() -> None:
    # GIVEN changes of shapes, types and values WHEN the grown arguments are read THEN only
    # those whose dimensions all stayed or grew, one grew, in as many dimensions, count
    def ch(what: str, old: str | None, new: str | None) -> ValueChange:
        return ValueChange("f", what, old, new)

    assert grown_arguments(
        [
            ch("a", "f32[1,4]", "f32[2,4]"),
            ch("b", "f32[3,4]", "f32[2,4]"),
            ch("c", "f32[3]", "f32[3,1]"),
            ch("d", "f32[3]", "f32[3]"),
            ch("e", "0.1", "0.2"),
            ch("f", None, "f32[4]"),
            ch("g", "(4, 1)", "i8[5, 1]"),
        ]
    ) == frozenset({"a"})
    assert grown_arguments([]) is grown_arguments([ch("b", "f32[3]", "f32[2]")]) is NOTHING_GREW


def _shape_dims(text: str | None) -> tuple[int, ...] | None:
    """The dimensions of the first ``[...]`` of ``text`` holding only decimal digits, commas
    and blanks (the plain reading)."""
    m = regex.search(r"\[([\d,\s]*)\]", text or "")
    try:
        return None if m is None else tuple(int(x) for x in m.group(1).split(",") if x.strip())
    except ValueError:
        return None


shape_text = st.one_of(
    st.none(),
    st.builds(
        lambda dtype, ds, sep: f"{dtype}[{sep.join(str(d) for d in ds)}]",
        st.sampled_from(["f32", "i8", "bf16"]),
        st.lists(st.integers(0, 12), max_size=3),
        st.sampled_from([",", ", "]),
    ),
    st.text(alphabet="f32[],0123 ", max_size=10),
)


@given(st.lists(st.tuples(st.sampled_from("abc"), shape_text, shape_text), max_size=5))
def test_grown_arguments_are_the_plain_readings(
    changes: list[tuple[str, str | None, str | None]],
) -> None:
    # GIVEN changes of shapes, of texts with brackets, of no shape WHEN the grown arguments
    # are read THEN they are those the plain reading of each shape's dimensions finds
    want = set()
    for what, old_text, new_text in changes:
        old, new = _shape_dims(old_text), _shape_dims(new_text)
        if (
            old is not None
            and new is not None
            and len(old) == len(new)
            and new != old
            and all(n >= o for n, o in zip(new, old, strict=True))
        ):
            want.add(what)
    got = grown_arguments([ValueChange("f", w, o, n) for w, o, n in changes])
    assert got == frozenset(want)


evidence_line = st.builds(
    Evidence, st.sampled_from(["a.log", "b.log"]), st.integers(1, 40), st.text(max_size=3)
)


@given(st.lists(evidence_line, max_size=3 * MAX_EVIDENCE))
def test_capped_keeps_what_cap_keeps(lines: list[Evidence]) -> None:
    kept = Capped()
    for e in lines:
        kept.add(e)
    assert kept.lines() == cap(lines)
    assert len(kept.lines()) <= MAX_EVIDENCE


@given(st.lists(evidence_line, max_size=3 * MAX_EVIDENCE))
def test_capped_wants_exactly_the_lines_it_would_keep(lines: list[Evidence]) -> None:
    # GIVEN lines fed one at a time, THEN before each, wants() says whether adding it
    # changes what is kept (a caller skips making the evidence it does not want), and
    # feeding only the wanted lines keeps the same lines
    kept, only_wanted = Capped(), Capped()
    for e in lines:
        before = kept.lines()
        wanted = kept.wants(e.source, e.line)
        kept.add(e)
        assert wanted == (kept.lines() != before), e
        if only_wanted.wants(e.source, e.line):
            only_wanted.add(e)
    assert only_wanted.lines() == kept.lines() == cap(lines)


def test_reasons_at_reads_each_place_it_names() -> None:
    tl = timeline_of(ROOT / "fixtures" / "jax" / "growing_shape" / "run.log")
    everything = [r for r, _ in tl.reasons]
    assert len(everything) >= 4
    at = ReasonsAt(tl.reasons, (3, 0, 2))
    assert list(at) == [everything[3], everything[0], everything[2]]
    assert [at[0], at[1], at[2], at[-1]] == [
        everything[3],
        everything[0],
        everything[2],
        everything[2],
    ]
    assert at[1:] == (everything[0], everything[2])
    assert len(at) == 3
    assert at != (everything[3], everything[0])


def test_a_verdict_writes_its_note_when_read_in_each_case() -> None:
    from recompile_doctor.analyses._common import CompileDiff
    from recompile_doctor.analyses.recompile import Verdict

    tl = timeline_of(ROOT / "fixtures" / "jax" / "growing_shape" / "run.log")
    v = next(v for v in verdicts(tl, Options()) if v.reasons)
    prev, c, reasons = v.previous, v.compilation, v.reasons
    said = "history f32[1,4] → f32[2,4] at capture.py:164"
    assert v.note == said  # the log's words alone
    d = CompileDiff(("batch-size",), "x: f32[32,4] → f32[8,4]")
    same = CompileDiff((), "")

    def note(**kw: object) -> str:
        return Verdict(prev, c, ("x",), reasons=reasons, **kw).note  # type: ignore[arg-type]

    shape = ("batch-size",)
    assert note(diff=d, log_rules=shape, dump_rules=shape) == (
        f"{said}; the dumps agree: x: f32[32,4] → f32[8,4]"
    )
    assert note(diff=d, log_rules=("dtype-changed",), dump_rules=shape) == (
        f"the log and the dumps disagree: the log says dtype-changed ({said}); "
        "the dumps say batch-size (x: f32[32,4] → f32[8,4])"
    )
    assert note(diff=d, dump_rules=shape) == "x: f32[32,4] → f32[8,4]"
    assert note(diff=same, log_rules=shape) == (
        f"{said}; the dumps of the two compilations are identical (the HLO text cannot show "
        "this change)"
    )
    plain = Verdict(prev, c, ("x",), None).note
    assert plain.startswith("compiled again (line ")
    assert Verdict(prev, c, ("x",), same).note == (
        plain + "; the dumps of the two compilations are equivalent"
    )
    assert Verdict(prev, c, ("x",), None, dumps_given=True).note == (
        plain + "; no dump of this compilation was found in --dumps"
    )
    assert note(diff=None, log_rules=shape, consequence=True) == (
        f"{said} (constants computed from the shape changed with it)"
    )


@given(st.lists(st.integers(-1, 6), max_size=40), st.integers(-2, 9))
def test_reason_places_list_each_compilations_reasons_in_log_order(
    ids: list[int], cid: int
) -> None:
    from recompile_doctor.timeline.types import ReasonPlaces

    assert list(ReasonPlaces(ids).of(cid)) == [i for i, c in enumerate(ids) if c == cid != -1]


def _findings_holding_every_verdict(tl: Timeline, opts: Options) -> list[Finding]:
    """The recompilation findings made the plain way: every verdict of each cause held in a
    list, then each finding made of its list (what diagnose_recompilations gathers one
    verdict at a time)."""
    from collections import defaultdict

    from recompile_doctor.analyses._common import comp_evidence, make_finding, seconds
    from recompile_doctor.analyses.recompile import Verdict, _advice
    from recompile_doctor.rules import SHAPE_RULES
    from recompile_doctor.timeline import function_key
    from recompile_doctor.wording import plural

    groups: dict[str, list[Verdict]] = defaultdict(list)
    evidence: dict[str, list[Evidence]] = defaultdict(list)
    diffs: dict[str, list[Any]] = defaultdict(list)
    changes: dict[str, list[Any]] = defaultdict(list)
    for v in verdicts(tl, opts):
        for cause in v.rules:
            groups[cause].append(v)
            if v.diff is not None:
                diffs[cause].extend(v.diff.evidence)
            for r in v.reasons:
                if (
                    r.rule == cause
                    or (cause == "growing-shape" and r.rule in SHAPE_RULES)
                    or (r.rule == "retracing" and cause == v.rules[0])
                ):
                    evidence[cause].append(Evidence(r.span.source, r.span.line, r.span.text))
                    changes[cause].extend(r.changes)
    out = []
    for rule_id, items in groups.items():
        recs = [v.compilation for v in items]
        uniq = {(c.source, c.line): c for c in recs}
        by_fn: dict[str, list[Verdict]] = defaultdict(list)
        for v in items:
            fn = v.compilation.function or function_key(v.compilation.module)
            if not by_fn[fn] or by_fn[fn][-1].compilation is not v.compilation:
                by_fn[fn].append(v)
        parts = []
        for fn, lst in list(by_fn.items())[:4]:
            first, last = lst[0], lst[-1]
            parts.append(
                f"{fn} (line {first.compilation.line}): {first.note}"
                if len(lst) == 1
                else f"{fn}, {len(lst)} times (lines {first.compilation.line} to "
                f"{last.compilation.line}); first: {first.note}; last: {last.note}"
            )
        if len(by_fn) > 4:
            parts.append(f"and {plural(len(by_fn) - 4, 'more function')}")
        kept = [*evidence[rule_id]]
        for v in items:
            kept += [comp_evidence(v.previous), comp_evidence(v.compilation)]
        frameworks = {c.framework for c in recs}
        out.append(
            make_finding(
                rule_id,
                detail=f"{plural(len(uniq), 'recompilation')} after warm-up: {'; '.join(parts)}.",
                modules=(c.module for c in recs),
                count=len(uniq),
                wasted=sum(seconds(c.duration_s) for c in uniq.values())
                if rule_id != "constants-elided"
                else 0.0,
                evidence=kept,
                advice=_advice(rule_id, opts, frameworks.pop() if len(frameworks) == 1 else None),
                diff=diffs[rule_id][:20],
                changes=changes[rule_id][:20],
            )
        )
    return out


RUNS = sorted((ROOT / "fixtures").rglob("run.log")) + LOGS


@pytest.mark.parametrize("path", RUNS, ids=lambda p: str(p.relative_to(ROOT)))
def test_findings_gathered_one_verdict_at_a_time_are_those_of_every_verdict_held(
    path: Path,
) -> None:
    from recompile_doctor.analyses.recompile import diagnose_recompilations

    tl = timeline_of(path)
    assert diagnose_recompilations(tl, Options()) == _findings_holding_every_verdict(tl, Options())


def test_verdicts_are_made_when_read_and_not_held() -> None:
    import gc

    from recompile_doctor.analyses.recompile import Verdict

    tl = timeline_of(ROOT / "fixtures" / "jax" / "growing_shape" / "run.log")
    vs = verdicts(tl, Options())
    assert len(vs) >= 3
    every = list(vs)
    assert [vs[i] for i in range(len(vs))] == every == list(vs[:]) and vs[-1] == every[-1]
    assert vs[0] == vs[0] and vs[0] is not vs[0]  # (made again at each reading)
    with pytest.raises(IndexError):
        vs[len(vs)]
    assert vs.causes() == {v.compilation.id: v.rules[0] for v in every if v.rules}
    held = [x for r in gc.get_referents(vs) for x in gc.get_referents(r)]
    assert not any(isinstance(x, Verdict) for x in held)


def test_counted_gives_each_text_once_with_its_count() -> None:
    from recompile_doctor.wording import counted

    # GIVEN texts with repeats, THEN each distinct one comes once, in the order first given,
    # with its count; past the most asked for, how many others there were
    assert counted(["a", "b", "a", "a", "c"], 5, "other reason") == "a (3×); b; c"
    assert counted(["a", "b", "c", "b"], 2, "other reason") == "a; b (2×); and 1 other reason"
    assert counted(["x", "y", "y", "z", "z", "z"], 2, "break", by_count=True) == (
        "z (3×); y (2×); and 1 break"
    )
    assert counted([], 3, "other reason") == ""


def test_a_reason_repeated_by_hundreds_of_runs_is_one_short_paragraph(tmp_path: Path) -> None:
    # GIVEN a TensorFlow log of one run appended 200 times (each a new run: its clusters
    # compiled "1 times" again), each with its recompilation and the same reason
    run = (ROOT / "fixtures" / "tensorflow" / "batch_size_signature_vlog" / "run.log").read_text()
    log = tmp_path / "repeated.log"
    log.write_text(run * 200)
    # WHEN analysed
    from recompile_doctor import analyze

    with analyze([str(log)]) as report:
        (finding,) = [f for f in report.findings if f.rule == "batch-size-changed"]
    # THEN the finding counts the 200 recompilations and its note gives the change of the
    # first and the last, not of each (the detail of a 1 GB log of such runs was 8 MB long;
    # counted() joins equal reasons of one recompilation: see the test above)
    assert finding.count == 200
    assert "train_step, 200 times" in finding.detail
    assert finding.detail.count("s32[32] → s32[8]") == 2
    assert len(finding.detail) < 300


@given(
    st.lists(st.sampled_from(sorted(RULES)), max_size=6),
    st.lists(st.sampled_from(sorted(RULES)), max_size=6),
)
def test_rules_are_ordered_once_each_by_rank_whatever_was_ordered_before(
    rules: list[str], before: list[str]
) -> None:
    # GIVEN rules ordered after others (kept: a run orders the same few again and again)
    _ordered(before)
    _ordered(tuple(before))
    # WHEN they are ordered, given as a list, then as a tuple, then again
    got = [_ordered(rules), _ordered(tuple(rules)), _ordered(list(rules))]
    # THEN each time each rule comes once, by its rank, the first given first among equals
    expected = tuple(sorted(dict.fromkeys(rules), key=cause_rank))
    assert got == [expected] * 3
    assert set(expected) == set(rules) and len(expected) == len(set(rules))
    assert [cause_rank(r) for r in expected] == sorted(cause_rank(r) for r in expected)


def _functions_recompiled_log(folder: Path, names: list[str]) -> Path:
    """A JAX log in which each of ``names`` is traced and compiled, then each again for a
    changed batch size."""
    lines = []
    for fn in names:
        lines += [
            "TRACING CACHE MISS at /tmp/x/run.py:10:5 (main):",
            "  never seen function:",
            f"    {fn} id=1 defined at /tmp/x/run.py:3",
            f"Compiling jit({fn}) with global shapes and types (ShapedArray(float32[1,4]),). "
            "Argument mapping: (UnspecifiedValue,).",
            f"Finished XLA compilation of jit({fn}) in 0.01 sec",
        ]
    for fn in names:
        lines += [
            "TRACING CACHE MISS at /tmp/x/run.py:10:5 (main):",
            f"  for {fn} defined at /tmp/x/run.py:3",
            "  all previously seen cache keys differ. For the closest previous key:",
            "  different input types:",
            "  * at x, now f32[2,4] and before f32[1,4]",
            f"Compiling jit({fn}) with global shapes and types (ShapedArray(float32[2,4]),). "
            "Argument mapping: (UnspecifiedValue,).",
            f"Finished XLA compilation of jit({fn}) in 0.01 sec",
        ]
    path = folder / "run.log"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("names", "said"),
    [
        ([f"f{k}" for k in range(4)], None),
        ([f"f{k}" for k in range(5)], "; and 1 more function."),
        ([f"f{k}" for k in range(7)], "; and 3 more functions."),
        ([f"f{k}_" + "x" * 5000 for k in range(6)], "; and 2 more functions."),
    ],
    ids=["four", "five", "seven", "six-long"],
)
def test_a_finding_describes_its_first_functions_and_counts_the_others(
    tmp_path: Path, names: list[str], said: str | None
) -> None:
    # GIVEN a run that recompiles each of some functions once for a changed batch size
    tl = timeline_of(_functions_recompiled_log(tmp_path, names))
    # WHEN its recompilations are judged
    (finding,) = [f for f in diagnose(tl, Options()) if f.count == len(names)]
    # THEN the finding describes the first four functions, in the order first seen, and
    # counts the others (each of which is held as a fingerprint, not by its name)
    for fn in names[:4]:
        assert f"{fn} (line " in finding.detail
    for fn in names[4:]:
        assert fn not in finding.detail
    if said is None:
        assert "more function" not in finding.detail
    else:
        assert finding.detail.endswith(said)


@settings(max_examples=examples(300))
@given(
    st.lists(
        st.tuples(st.sampled_from(["a.log", "b.log", "ab.log"]), st.integers(0, 5)), max_size=8
    ),
    st.data(),
)
def test_log_order_is_each_compilation_after_the_one_before(
    rows: list[tuple[str, int]], data: st.DataObject
) -> None:
    # GIVEN compilations (input, line) and any choice of them in any order
    from itertools import pairwise

    from recompile_doctor.analyses.recompile import _in_log_order

    ids = data.draw(st.lists(st.integers(0, len(rows) - 1), max_size=8)) if rows else []
    source = [s for s, _ in rows]
    line = [n for _, n in rows]
    # THEN they are in log order when each is after the one before: input, then line
    expected = not any((source[a], line[a]) >= (source[b], line[b]) for a, b in pairwise(ids))
    assert _in_log_order(ids, source, line) == expected
