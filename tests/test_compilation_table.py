"""The timeline keeps its compilations as columns, and the analyses read the columns.

A run of 500,000 recompilations held one 20-field object per compilation, with its line
numbers and times as objects of their own (about 370 bytes each); the table holds 8-byte
numbers, flags and references to shared strings, and makes a compilation's object only
when it is read.

GIVEN any compilation's fields (None or not), WHEN appended to a table and read back, THEN
the object has those fields, and the table equals the sequence of those objects.  GIVEN
every log fixture, WHEN built into a timeline, THEN no compilation object is held by the
timeline nor by the report, and what the analyses now compute from the columns (the
recompilations and the one before each, the compilations after an earlier run's, the
owner of a line, the summary's counts) is what the same definitions give over the objects.
GIVEN compilations of several sources, out of name order, with lines that open two, WHEN
the recompilations are listed, THEN they are in the order the definition over objects
gives.
"""

from __future__ import annotations

import gc
import math
import pickle
from array import array
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from recompile_doctor import analyze
from recompile_doctor.analyses._common import comp_evidence
from recompile_doctor.analyses.crossrun import _Owners, after_earlier_runs
from recompile_doctor.analyses.recompile import (
    _growing,
    _Growth,
    recompilation_ids,
    recompilation_rows,
)
from recompile_doctor.api import summarize
from recompile_doctor.events import CompileKey
from recompile_doctor.model import Compilation
from recompile_doctor.name_digest import held
from recompile_doctor.reports import render
from recompile_doctor.timeline import column, function_key
from recompile_doctor.timeline.column import Spilled
from recompile_doctor.timeline.table import CODE_OF, Causes, CompilationTable, Lazy, key_chars
from recompile_doctor.timeline.types import Timeline
from tests.conftest import JAX_RUN, timeline_of

ROOT = Path(__file__).resolve().parent.parent
LOGS = sorted(
    p
    for fw in ("jax", "tensorflow", "torch", "ptxla", "poplar")
    for p in (ROOT / "fixtures" / fw).rglob("*.log")
    if p.is_file()
)


@contextmanager
def _spilling(
    after: int = 1, rows: int = 2, cached: int = 1, early_after: int | None = None
) -> Iterator[None]:
    """Tables go to their temporary file after ``after`` compilations (their text column
    and keys after ``early_after``, by default with the others), in chunks of ``rows``, ``cached``
    chunks read back at a time (a context manager: hypothesis tests take no
    function-scoped fixture)."""
    with (
        mock.patch.object(column, "SPILL_AFTER", after),
        mock.patch.object(
            column, "EARLY_SPILL_AFTER", after if early_after is None else early_after
        ),
        mock.patch.object(column, "CHUNK_ROWS", rows),
        mock.patch.object(column, "CACHED", cached),
    ):
        yield


def _held_compilations() -> int:
    """The Compilation objects alive that the collector tracks outside its frozen ones."""
    gc.collect()
    return sum(1 for o in gc.get_objects() if type(o) is Compilation)


@pytest.fixture
def _earlier_objects_frozen() -> Iterator[None]:
    """What the tests before this one left is frozen: the collector and
    :func:`_held_compilations` see only what this test makes (going over a whole worker's
    heap three times took a second a test)."""
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


_opt_int = st.none() | st.integers(0, 2**40)
_opt_float = st.none() | st.floats(allow_nan=False, allow_infinity=False, width=64)
_name = st.text(min_size=1, max_size=8)


@st.composite
def _rows(draw: Any) -> dict[str, Any]:
    key = draw(
        st.none()
        | st.builds(
            CompileKey,
            framework=st.sampled_from(["jax", "torch", "tensorflow"]),
            function=st.none() | _name,
            module=st.none() | _name,
            graph_hash=st.none() | _name,
            cache_key=st.none() | _name,
            compile_id=st.none() | _name,
            eager=st.booleans(),
        )
    )
    return {
        "module": draw(_name),
        "hash": draw(st.none() | _name),
        "source": draw(st.sampled_from(["a.log", "b.log"])),
        "line": draw(st.integers(1, 2**40)),
        "t": draw(_opt_float),
        "ordinal": draw(_opt_int),
        "text": draw(st.text(max_size=20)),
        "key": key,
        "rank": draw(st.none() | st.integers(0, 999_999)),
        "process": draw(st.integers(0, 50)),
        # set after the row is added
        "cache": draw(st.sampled_from(["hit", "miss", "disabled", "unknown"])),
        "warmup": draw(st.booleans()),
        "duration_s": draw(_opt_float),
        "end_line": draw(_opt_int),
        "cache_file": draw(st.none() | _name),
        "cause": draw(st.none() | _name),
    }


@given(
    st.lists(_rows(), max_size=12),
    st.none() | st.tuples(st.integers(1, 4), st.integers(1, 3)),
    st.none() | st.integers(1, 6),
)
def test_a_row_reads_back_as_the_compilation_of_its_fields(
    rows: list[dict[str, Any]], spill: tuple[int, int] | None, early_spill: int | None
) -> None:
    # (spill: the columns go to their file after the first compilations, in tiny chunks;
    # early_spill: the text and key columns alone go there after that many)
    after, chunk = spill or (10**9, 8)
    with _spilling(after, chunk, cached=1, early_after=early_spill or 10**9):
        _rows_read_back(
            rows,
            spilled=len(rows) >= after,
            early_spilled=len(rows) >= min(after, early_spill or 10**9),
        )


@given(
    st.lists(_rows(), min_size=1, max_size=12),
    st.integers(1, 60),
    st.integers(1, 40),
    st.none() | st.integers(1, 12),
)
def test_long_lines_send_the_text_to_the_file_sooner_in_smaller_chunks(
    rows: list[dict[str, Any]], chars: int, chunk_chars: int, after: int | None
) -> None:
    # GIVEN lines and key names that reach EARLY_SPILL_CHARS characters before
    # EARLY_SPILL_AFTER compilations (long ones), chunks of the text and key columns held to
    # TEXT_CHUNK_CHARS, and maybe every column going to the file later (its chunks of 8 rows
    # beside those)
    total = 0
    early = False
    for r in rows:
        total += len(r["text"]) + key_chars(r["key"])
        early = early or total >= chars
    spilled = after is not None and len(rows) >= after
    with (
        _spilling(after or 10**9, 8, cached=1, early_after=10**9),
        mock.patch.object(column, "EARLY_SPILL_CHARS", chars),
        mock.patch.object(column, "TEXT_CHUNK_CHARS", chunk_chars),
        mock.patch.object(column, "TEXT_ROWS_MIN", 1),
    ):
        # THEN those two columns go to the file once they hold that many characters, and
        # every row reads back as it was given
        _rows_read_back(rows, spilled=spilled, early_spilled=early or spilled)


def test_a_chunk_of_long_lines_holds_fewer_rows() -> None:
    assert column.text_rows(200 * 16_384, 16_384) == column.CHUNK_ROWS  # (lines of 200)
    assert column.text_rows(8_000 * 2_000, 2_000) == 512  # (lines of 8,000: 4 MB a chunk)
    assert column.text_rows(10**9, 1) == column.TEXT_ROWS_MIN
    assert column.text_rows(0, 0) == column.CHUNK_ROWS


def test_a_table_of_long_lines_holds_a_bounded_part_of_them() -> None:
    """GIVEN 3,000 compilations of 8,000-character lines (24 MB of text) WHEN they are
    added THEN the text and key columns went to the file past EARLY_SPILL_CHARS, in chunks
    of 512 rows, and read back whole."""
    table = CompilationTable()
    texts = [f"{k:08d}" * 1_000 for k in range(3_000)]
    try:
        for k, text in enumerate(texts):
            table.append(
                module="m", hash=None, source="a.log", line=k + 1, t=None, ordinal=None,
                text=text, key=None, rank=None, process=0,
            )  # fmt: skip
        assert isinstance(table.text, Spilled) and isinstance(table.key, Spilled)
        assert table.text._rows == 512
        assert len(table.text._tail) < 512
        assert list(table.text) == texts
        assert [table.evidence_of(k).text for k in (0, 1_500, 2_999)] == [
            texts[0], texts[1_500], texts[2_999]
        ]  # fmt: skip
    finally:
        table.close()


def _rows_read_back(rows: list[dict[str, Any]], spilled: bool, early_spilled: bool) -> None:
    table = CompilationTable()
    expected = []
    causes = {}
    for r in rows:
        i = table.append(
            **{
                k: r[k]
                for k in (
                    "module",
                    "hash",
                    "source",
                    "line",
                    "t",
                    "ordinal",
                    "text",
                    "key",
                    "rank",
                    "process",
                )
            }
        )
        table.cache[i] = CODE_OF[r["cache"]]
        table.warmup[i] = r["warmup"]
        table.duration_s[i] = math.nan if r["duration_s"] is None else r["duration_s"]
        if r["end_line"] is not None:
            table.end_line[i] = r["end_line"]
        table.cache_file[i] = r["cache_file"]
        if r["cause"] is not None:
            causes[i] = r["cause"]
        key: CompileKey | None = r["key"]
        expected.append(
            Compilation(
                id=i,
                module=r["module"],
                hash=r["hash"],
                source=r["source"],
                line=r["line"],
                t=r["t"],
                duration_s=r["duration_s"],
                cache=r["cache"],
                warmup=r["warmup"],
                cause=r["cause"],
                end_line=r["end_line"],
                cache_file=r["cache_file"],
                ordinal=r["ordinal"],
                text=r["text"],
                framework=key.framework if key else "poplar",
                function=key.function if key else None,
                compile_id=key.compile_id if key else None,
                rank=r["rank"],
                cache_key=key.cache_key if key else None,
                eager=key.eager if key else False,
            )
        )
    got = table.with_causes(causes)
    assert list(got) == expected
    assert got == tuple(expected) and tuple(expected) == got
    assert [got[i] for i in range(-len(rows), 0)] == expected
    assert list(got[1::2]) == expected[1::2]
    with pytest.raises(IndexError):
        got[len(rows)]
    for outcome in ("hit", "miss", "disabled", "unknown"):
        ids = [c.id for c in expected if c.cache == outcome]
        assert table.ids_with_cache(outcome) == ids  # type: ignore[arg-type]
        assert table.count_cache(outcome) == len(ids)  # type: ignore[arg-type]
    for c in expected:
        assert table.evidence_of(c.id) == comp_evidence(c)
        assert table.compiled_of(c.id) == c.compiled
        assert table.function_key_of(c.id) == function_key(c.module)
        assert table.seconds_of(c.id) == (c.duration_s or 0.0)
    assert (table._blobs is not None) == early_spilled
    assert isinstance(table.text, Spilled) == early_spilled
    assert isinstance(table.key, Spilled) == early_spilled  # (the keys go with the text)
    # AND a copy for another process reads the same (its columns plain)
    copy = pickle.loads(pickle.dumps(got))
    assert list(copy) == expected and copy._blobs is None
    table.close()


@pytest.mark.parametrize("path", LOGS, ids=lambda p: str(p.relative_to(ROOT)))
@pytest.mark.usefixtures("_earlier_objects_frozen")
def test_no_compilation_object_is_held(path: Path) -> None:
    tl = timeline_of(path)
    assert _held_compilations() == 0
    assert len(tl.compilations) == len(list(tl.compilations))
    with analyze(path) as report:
        assert _held_compilations() == 0
        assert isinstance(report.compilations, CompilationTable)


def _recompilations_by_objects(comps: list[Compilation]) -> list[tuple[int, int]]:
    """The definition over objects (what the analysis computed before the columns)."""
    by_fn: dict[str, list[Compilation]] = {}
    for c in comps:
        by_fn.setdefault(function_key(c.module), []).append(c)
    out = []
    for fn_comps in by_fn.values():
        for i, c in enumerate(fn_comps):
            if i > 0 and not c.warmup and not c.eager and c.cache != "hit":
                out.append((fn_comps[i - 1], c))
    out.sort(key=lambda t: (t[1].source, t[1].line))
    return [(a.id, b.id) for a, b in out]


def _after_earlier_by_objects(comps: list[Compilation], procs: list[int]) -> list[tuple[int, int]]:
    seen: dict[str, list[Compilation]] = defaultdict(list)
    out = []
    for c in comps:
        fn = function_key(c.module)
        earlier = [e for e in seen[fn] if procs[e.id] < procs[c.id]]
        seen[fn].append(c)
        if not earlier or c.eager:
            continue
        last = max(procs[e.id] for e in earlier)
        out.append((c.id, [e for e in earlier if procs[e.id] == last][-1].id))
    return out


def _owner_by_objects(
    comps: list[Compilation], source: str, line: int, module: str | None
) -> int | None:
    for c in comps:
        end = c.end_line if c.end_line is not None else c.line
        if c.source == source and c.line <= line <= end and (module is None or module == c.module):
            return c.id
    return None


def _check_columns_against_objects(tl: Timeline) -> None:
    table = tl.compilations
    comps = list(table)
    before, after = recompilation_ids(tl)
    assert list(zip(before, after, strict=True)) == _recompilations_by_objects(comps)
    # each recompilation's function, numbered in the order the functions were first seen
    numbered: dict[object, int] = {}
    for c in comps:
        numbered.setdefault(held(function_key(c.module)), len(numbered))
    _, _, functions = recompilation_rows(tl)
    assert list(functions) == [numbered[held(function_key(comps[b].module))] for b in after]
    procs = list(table.process)
    assert list(after_earlier_runs(table)) == _after_earlier_by_objects(comps, procs)
    owners = _Owners(table)
    for c in comps:
        for line in (c.line - 1, c.line, c.line + 1, c.end_line or c.line):
            for module in (None, c.module):
                assert owners.of(c.source, line, module) == _owner_by_objects(
                    comps, c.source, line, module
                )
    s = summarize(tl, ())
    assert s.distinct_graphs == len({c.hash or f"module:{c.module}" for c in comps})
    assert s.recompilations_after_warmup == sum(1 for c in comps if not c.warmup)
    assert s.compile_seconds == round(sum(c.duration_s or 0.0 for c in comps if c.compiled), 6)


@given(
    st.lists(
        st.tuples(
            st.none() | st.sampled_from(["0x1", "0x2", "module:a"]),
            st.sampled_from(["a", "b", "c", "0x1", "Ha"]),
        )
    ),
    st.booleans(),
)
def test_distinct_graphs_are_those_of_the_definition(
    rows: list[tuple[str | None, str]], spilled: bool
) -> None:
    # GIVEN compilations with and without a graph hash (one hash even spelt like a module's
    # stand-in, modules named like a hash), in memory or spilled to the table's file, THEN
    # the distinct graphs are the distinct "hash, else module:<name>"
    from recompile_doctor.api import _distinct_graphs
    from recompile_doctor.timeline.distinct import count_distinct

    with _spilling() if spilled else nullcontext():
        table = CompilationTable()
        for k, (h, m) in enumerate(rows):
            table.append(
                module=m, hash=h, source="a.log", line=k + 1, t=None, ordinal=None, text="",
                key=None, rank=None, process=0,
            )  # fmt: skip
        assert _distinct_graphs(table) == len({h or f"module:{m}" for h, m in rows})
        # (however few of the graphs given lately it remembers, each distinct one is given)
        for remembered in (0, 1, 2):
            got = set(table.graph_elements(remembered))
            assert count_distinct(table.graph_elements(remembered)) == len(got)
            assert len(got) == len({h or f"module:{m}" for h, m in rows})
        table.close()


def test_function_keys_are_remembered_for_recent_modules_only() -> None:
    # GIVEN 50 modules of two functions, WHEN a table remembers 8 modules' keys, THEN every
    # key is still function_key's, the memo stays bounded and equal keys are one string
    table = CompilationTable()
    table._fn_keys_kept.most = 8
    # (and TensorFlow's, a new module per compilation, which the memo does not take)
    modules = [f"jit_{'fg'[k % 2]}_{k}" for k in range(50)]
    modules += [f"a_inference_{'fg'[k % 2]}_{k}__XlaMustCompile_true.{k}" for k in range(20)]
    for k, m in enumerate(modules):
        table.append(
            module=m, hash=None, source="a.log", line=k + 1, t=None, ordinal=None, text="",
            key=None, rank=None, process=0,
        )  # fmt: skip
    keys = list(table.function_keys())
    assert keys == [function_key(m) for m in modules]
    assert [table.function_key_of(i) for i in range(70)] == keys
    assert len(table._fn_keys) <= 8
    assert not any(m.startswith("a_inference_") for m in table._fn_keys)
    assert len({id(k) for k in keys}) == len(set(keys))


@pytest.mark.parametrize("path", LOGS, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_columns_give_what_the_objects_give(path: Path) -> None:
    _check_columns_against_objects(timeline_of(path))
    with _spilling():
        _check_columns_against_objects(timeline_of(path))


@pytest.mark.parametrize("path", LOGS, ids=lambda p: str(p.relative_to(ROOT)))
def test_a_table_in_a_file_gives_the_same_reports(path: Path) -> None:
    # GIVEN a log fixture analyzed with its compilations kept in memory
    with analyze(path) as plain:
        expected = [plain.dumps(), *(str(render(plain, f)) for f in ("text", "markdown"))]
    # WHEN its table goes to its temporary file after the first compilation, in chunks of
    # two rows, one read back at a time (every read of another chunk reads the file)
    with _spilling(), analyze(path) as report:
        spilled = report.compilations._blobs is not None  # type: ignore[attr-defined]
        got = [report.dumps(), *(str(render(report, f)) for f in ("text", "markdown"))]
    # THEN the reports are byte for byte the same
    assert spilled == (len(plain.compilations) >= 1)
    assert got == expected


def test_the_columns_give_what_the_objects_give_across_runs() -> None:
    # two runs of each framework, read as one timeline (an earlier and a later process)
    by_fw: dict[str, list[Path]] = defaultdict(list)
    for p in LOGS:
        by_fw[p.relative_to(ROOT / "fixtures").parts[0]].append(p)
    for paths in by_fw.values():
        _check_columns_against_objects(timeline_of(*paths[:3]))
        _check_columns_against_objects(timeline_of(*reversed(paths[:3])))


@given(
    st.lists(
        st.tuples(
            st.sampled_from(["b.log", "a.log", "c.log"]),
            st.integers(1, 6),  # few lines: lines that open two compilations
            st.sampled_from(["f", "g", "h"]),
            st.booleans(),  # warm-up
            st.sampled_from(["hit", "miss", "unknown"]),
            st.integers(0, 3),  # process
            st.none() | st.integers(1, 8),  # end line offset
        ),
        max_size=30,
    ),
    st.integers(0, 6),
)
# one line recompiles g and then f, where f was compiled first: f's comes first
@example(
    [
        ("a.log", 1, "f", True, "miss", 0, None),
        ("a.log", 1, "g", True, "miss", 0, None),
        ("a.log", 2, "g", False, "miss", 0, None),
        ("a.log", 2, "f", False, "miss", 0, None),
    ],
    2,
)
def test_recompilations_and_owners_of_any_table(rows: list[Any], probe: int) -> None:
    table = CompilationTable()
    for source, line, fn, warm, cache, proc, end in rows:
        i = table.append(
            module=f"jit_{fn}",
            hash=None,
            source=source,
            line=line,
            t=None,
            ordinal=None,
            text="",
            key=None,
            rank=None,
            process=proc,
        )
        table.warmup[i] = warm
        table.cache[i] = CODE_OF[cache]  # type: ignore[index]
        if end is not None:
            table.end_line[i] = line + end
    comps = list(table)
    tl = Timeline(
        table, loads=(), events=(), processes=(), comp_process=(), uncacheable=frozenset()
    )
    before, after = recompilation_ids(tl)
    assert list(zip(before, after, strict=True)) == _recompilations_by_objects(comps)
    assert list(after_earlier_runs(table)) == _after_earlier_by_objects(comps, list(table.process))
    owners = _Owners(table)
    for source in ("a.log", "b.log", "c.log", "d.log"):
        for module in (None, "jit_f", "jit_g"):
            assert owners.of(source, probe, module) == _owner_by_objects(
                comps, source, probe, module
            )


@given(st.integers(0, 40), st.dictionaries(st.integers(0, 39), st.sampled_from(["a", "b", "c"])))
def test_causes_are_the_dictionary_they_were_given(n: int, given_causes: dict[int, str]) -> None:
    causes = Causes(n)
    expected = {i: r for i, r in given_causes.items() if i < n}
    for i, r in expected.items():
        causes.set(i, r)
    assert dict(causes) == expected and causes == expected
    assert len(causes) == len(expected)
    for i in range(-2, n + 2):
        assert causes.get(i) == expected.get(i)
        assert (i in causes) == (i in expected)


@given(
    st.lists(
        st.tuples(
            st.sampled_from(["append", "set", "get"]), st.integers(-12, 12), st.none() | _name
        ),
        max_size=40,
    )
)
def test_a_lazy_column_is_the_list_it_stands_for(ops: list[Any]) -> None:
    col: Lazy[str | None] = Lazy(None, list)
    ref: list[str | None] = []
    for op, i, v in ops:
        if op == "append":
            col.append(v)
            ref.append(v)
            continue
        try:
            want = ref[i] if op == "get" else ref.__setitem__(i, v)
        except IndexError:
            with pytest.raises(IndexError):
                col[i] if op == "get" else col.__setitem__(i, v)
            continue
        got = col[i] if op == "get" else col.__setitem__(i, v)
        assert got == want
    assert list(col) == ref and len(col) == len(ref)
    assert list(pickle.loads(pickle.dumps(col))) == ref  # (reports go to a fleet's pool)


def _growing_by_lists(grown_seq: list[frozenset[str]]) -> set[int]:
    """What the growing-shape marks were, with each run of growth held as a list."""
    grown: set[int] = set()
    runs: dict[str, list[int]] = {}
    for i, seen_here in enumerate(grown_seq):
        for what in list(runs):
            if what not in seen_here:
                runs.pop(what)
        for what in seen_here:
            runs.setdefault(what, []).append(i)
            if len(runs[what]) >= 2:
                grown.update(runs[what])
    return grown


@given(st.lists(st.frozensets(st.sampled_from(["x", "y", "z"])), max_size=30))
def test_growing_shapes_are_marked_without_holding_the_runs(seq: list[frozenset[str]]) -> None:
    assert set(_growing(iter(seq))) == _growing_by_lists(seq)


@given(
    st.lists(
        st.tuples(st.sampled_from(["f", "g", "h"]), st.frozensets(st.sampled_from(["x", "y"]))),
        max_size=40,
    )
)
def test_growth_of_interleaved_functions_is_each_function_s_own(
    seq: list[tuple[str, frozenset[str]]],
) -> None:
    """The recompilations of several functions, interleaved in log order, are marked as each
    function's own sequence marks them (by their places among all)."""
    growth = _Growth()
    got = {j for k, (fn, grown) in enumerate(seq) for j in growth.marks(fn, k, grown)}
    want: set[int] = set()
    for fn in {fn for fn, _ in seq}:
        places = [k for k, (f, _) in enumerate(seq) if f == fn]
        want |= {places[i] for i in _growing_by_lists([seq[k][1] for k in places])}
    assert got == want
    assert bool(growth) == any(
        seq[k][1]
        for k in [max(k for k, (f, _) in enumerate(seq) if f == fn) for fn in {f for f, _ in seq}]
    )


def test_a_long_run_keeps_its_numbers_in_files_too() -> None:
    from recompile_doctor.analyses import Options
    from recompile_doctor.analyses.recompile import verdicts as _verdicts
    from recompile_doctor.timeline.column import Spilled
    from recompile_doctor.timeline.types import Attributed

    # GIVEN a JAX run with reasons and recompilations, read with everything spilled at once
    with _spilling():
        tl = timeline_of(JAX_RUN)
        # THEN the reasons' compilations, the places of each rule and note, the
        # recompilations' ids and the verdicts' numbers are spilled columns
        assert isinstance(tl.reasons, Attributed) and isinstance(tl.reasons.ids, Spilled)
        assert tl.reason_index and all(isinstance(v, Spilled) for v in tl.reason_index.values())
        before, after = recompilation_ids(tl)
        assert isinstance(before, Spilled) and isinstance(after, Spilled) and len(after) > 1
        verdicts = _verdicts(tl, Options())
        assert isinstance(verdicts.reasons_end, Spilled)
        # AND they give what the plain ones give, iterated as indexed
        spilled = [v.rules for v in verdicts]
        assert list(verdicts) == [verdicts[k] for k in range(len(verdicts))]
    plain_verdicts = _verdicts(timeline_of(JAX_RUN), Options())
    assert isinstance(plain_verdicts.reasons_end, array)
    assert spilled == [v.rules for v in plain_verdicts]
    assert list(plain_verdicts) == [plain_verdicts[k] for k in range(len(plain_verdicts))]
    assert any(v.reasons for v in plain_verdicts)


def test_numbers_read_at_random_keep_more_chunks_and_read_each_back_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from recompile_doctor.timeline.blobs import Blobs

    # GIVEN spilled columns of numbers in chunks of two, four chunks kept, and up to ten
    # chunks' bytes kept for those read at random
    monkeypatch.setattr(column, "SPILL_AFTER", 1)
    monkeypatch.setattr(column, "CHUNK_ROWS", 2)
    monkeypatch.setattr(column, "CACHED", 4)
    monkeypatch.setattr(column, "RANDOM_CACHE", 10 * 2 * 8)
    reads: list[object] = []
    real_get = Blobs.get
    monkeypatch.setattr(Blobs, "get", staticmethod(lambda b: reads.append(b) or real_get(b)))
    for at_random, keep in ((False, 4), (True, 10)):
        sums = column.numbers("d", 20, at_random=at_random)
        assert isinstance(sums, Spilled)
        # WHEN eight chunks are written at random, then read again at random
        places = [11, 2, 15, 6, 0, 13, 4, 9, 8, 1, 12, 5, 14, 7, 3, 10]
        reads.clear()
        for k in places:
            sums[k] += k
        assert [sums[k] for k in reversed(places)] == [float(k) for k in reversed(places)]
        # THEN a column read at random reads each chunk back once; another, more often
        assert (len(reads) == 8) is at_random, (keep, len(reads))
        assert [sums[k] for k in range(20)] == [float(k) if k < 16 else 0.0 for k in range(20)]


@pytest.mark.parametrize("path", LOGS, ids=lambda p: str(p.relative_to(ROOT)))
def test_first_rules_are_those_of_the_verdicts(path: Path) -> None:
    # GIVEN every fixture log, THEN the (compilation, first rule) pairs read from the
    # verdicts' arrays are those of the verdicts made, and the function names (and module,
    # framework and function) read from the columns are the compilations' own
    from recompile_doctor.analyses import Options
    from recompile_doctor.analyses.recompile import verdicts
    from recompile_doctor.join import join_dumps

    tl = timeline_of(path)
    vs = verdicts(tl, Options(join_dumps(tl, [])))
    made = list(vs)
    assert list(vs.first_rules()) == [(v.compilation.id, v.rules[0]) for v in made if v.rules]
    table = tl.compilations
    for v in made:
        c = v.compilation
        assert (table.function_of(c.id) or table.module_of(c.id)) == c.function_name
        assert table.names_of(c.id) == (c.module, c.framework, c.function)
    # AND the verdicts read without their compilation objects are the verdicts' numbers,
    # rules, diffs and reasons, each made again by its place
    light = list(vs.light())
    assert [(x.previous, x.compilation) for x in light] == [
        (v.previous.id, v.compilation.id) for v in made
    ]
    assert [(x.rules, x.diff, [vs.reason(f[0]) for f in vs.reason_facts(x.at)]) for x in light] == [
        (v.rules, v.diff, list(v.reasons)) for v in made
    ]
    assert [vs[x.at] for x in light] == made
    # AND what the grouping by cause reads of each verdict's reasons without them is what
    # the reasons say
    for x, v in zip(light, made, strict=True):
        assert [f[1:] for f in vs.reason_facts(x.at)] == [
            (r.rule, r.span.source, r.span.line, bool(r.changes)) for r in v.reasons
        ]


@pytest.mark.parametrize("spilled", [False, True])
def test_the_plots_rows_from_the_columns_are_those_of_the_compilations(spilled: bool) -> None:
    # GIVEN every log fixture's compilations, in memory or spilled in chunks of 2 rows
    from recompile_doctor.reports.plot_data import TableRows, _row_of, plot_rows

    with _spilling() if spilled else nullcontext():
        for path in LOGS:
            table = timeline_of(path).compilations
            rows = plot_rows(table)
            # THEN the rows made from the columns on each pass are those of the objects,
            # by iteration, index and slice
            assert isinstance(rows, TableRows)
            expected = [_row_of(c) for c in table]
            assert list(rows) == expected == list(rows), path
            assert [rows[i] for i in range(len(rows))] == expected
            assert list(rows[1::2]) == expected[1::2]
            table.close()


def test_spilled_modules_numbered_by_sorting_are_those_numbered_by_table() -> None:
    # GIVEN every log fixture's compilations, spilled in chunks of 2 rows
    from recompile_doctor.reports.module_numbers import module_numbers

    with _spilling():
        for path in LOGS:
            table = timeline_of(path).compilations
            modules = [c.module for c in table]
            firsts = list(dict.fromkeys(modules))
            # WHEN numbered with one distinct module held (by sorting, the column read
            # twice) THEN each is its place in the order of first compilation, as by table
            for held in (1, 10**9):
                got = module_numbers(table, held=held)
                assert list(got.of) == [firsts.index(m) for m in modules], path
                assert got.count == len(firsts)
            table.close()


@given(
    st.lists(st.integers(0, 39), max_size=30),
    st.booleans(),
    st.lists(st.sampled_from([None, "other"]), min_size=40, max_size=40),
)
def test_names_in_order_are_names_of_whatever_the_order_asked(
    asked: list[int], spill: bool, others: list[str | None]
) -> None:
    # GIVEN a table of 40 compilations (keys of two frameworks, rows without a key, modules
    # of their own), spilled in small chunks or not
    with _spilling() if spill else nullcontext():
        table = CompilationTable()
        for k in range(40):
            key = (
                None
                if k % 7 == 3
                else CompileKey("jax" if k % 2 else "tensorflow", f"f{k % 3}", f"m{k % 5}")
            )
            other = others[k] if key is not None else f"poplar{k}"
            table.append(
                module=other or f"m{k % 5}", hash=None, source="a.log", line=k + 1, t=None,
                ordinal=None, text=f"line {k}", key=key, rank=None, process=0,
            )  # fmt: skip
        # WHEN their names are asked of one reader in order (repeats too), then out of order
        names = table.names_in_order()
        order = sorted(asked) + asked
        # THEN each is what names_of says
        assert [names(i) for i in order] == [table.names_of(i) for i in order]
        # and past the last row, every time, as names_of is
        for _ in range(2):
            with pytest.raises(IndexError):
                names(40)
        assert names(39) == table.names_of(39)
        table.close()
