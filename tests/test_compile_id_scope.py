"""A framework's compile ids name one compilation within one run only.

A torch.compile text log and the structured trace of the same run name each compilation by
the same id ("0/1"): the two inputs give one compilation.  Two logs of one format are two
runs (or two processes), each numbering its compilations from the start: the same id in the
second names another compilation.

GIVEN a captured run's log, WHEN it is analysed with its trace, THEN it has the
compilations it has alone; WHEN it is analysed beside a copy of itself (a second run of the
same program), THEN it has twice as many, each input its own, and the same id in both.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from recompile_doctor import analyze

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
TORCH_WITH_TRACE = sorted(p.parent for p in (FIXTURES / "torch").glob("*/trace"))
TF = sorted(p.parent for p in (FIXTURES / "tensorflow").glob("*/run.log"))


def _count(*logs: str) -> int:
    with analyze(list(logs)) as report:
        return len(report.compilations)


def _ids(*logs: str) -> set[tuple[int | None, str | None]]:
    with analyze(list(logs)) as report:
        return {(c.rank, c.compile_id) for c in report.compilations}


@pytest.mark.parametrize("case", TORCH_WITH_TRACE, ids=lambda p: p.name)
def test_a_trace_joins_the_text_log_of_its_run(case: Path) -> None:
    # (a trace may show compilations the text log does not: another rank's, a failed one)
    traces = [str(p) for p in sorted((case / "trace").iterdir())]
    text, trace = _ids(str(case / "run.log")), _ids(*traces)
    assert text & trace or not text
    assert _count(str(case / "run.log"), *traces) == len(text | trace)


@pytest.mark.parametrize(
    "case",
    [*TORCH_WITH_TRACE[:3], *TF],
    ids=lambda p: f"{p.parent.name}/{p.name}",
)
def test_two_runs_of_one_program_are_two_sets_of_compilations(case: Path, tmp_path: Path) -> None:
    first = tmp_path / "first.log"
    second = tmp_path / "second.log"
    shutil.copy(case / "run.log", first)
    shutil.copy(case / "run.log", second)
    alone = _count(str(first))
    with analyze([str(first), str(second)]) as report:
        comps = list(report.compilations)
    assert len(comps) == 2 * alone
    by_source = {
        src: [c.compile_id for c in comps if c.source == src] for src in (str(first), str(second))
    }
    assert by_source[str(first)] == by_source[str(second)]
    assert len(by_source[str(first)]) == alone
