"""Trust item 20: a log whose lines end with a lone CR (old Mac style) is read line by line,
not as one line of progress-bar redraws."""

from __future__ import annotations

from pathlib import Path

import pytest

from recompile_doctor import analyze

LOG = Path(__file__).resolve().parent.parent / "fixtures" / "simulated" / "kitchen-sink" / "run.log"


@pytest.mark.parametrize("fast", ["1", "0"])
def test_a_cr_only_log_reads_as_its_lf_twin(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fast: str
) -> None:
    # GIVEN the same log with CR line endings
    cr = tmp_path / "cr.log"
    cr.write_bytes(LOG.read_bytes().replace(b"\n", b"\r"))
    monkeypatch.setenv("RECOMPILE_DOCTOR_PLAIN", "0" if fast == "1" else "1")
    # WHEN both are analysed
    a, b = analyze([str(LOG)]), analyze([str(cr)])
    # THEN lines, compilations, findings, wasted time and evidence lines are the same
    assert b.inputs[0].lines == a.inputs[0].lines > 100
    assert b.summary.wasted_seconds == a.summary.wasted_seconds > 0
    assert [f.rule for f in b.findings] == [f.rule for f in a.findings]
    ev_a = [(e.line, e.text, e.before, e.after) for f in a.findings for e in f.evidence]
    ev_b = [(e.line, e.text, e.before, e.after) for f in b.findings for e in f.evidence]
    assert ev_b == ev_a


def test_progress_bar_redraws_with_lf_lines_are_not_split(tmp_path: Path) -> None:
    # GIVEN a log with LF lines, one of which redraws a progress bar with CRs
    log = tmp_path / "bar.log"
    data = LOG.read_bytes()
    log.write_bytes(data)
    r = analyze([str(log)])
    # THEN the file keeps its own line count (CRs inside LF lines are not line ends)
    assert r.inputs[0].lines == data.count(b"\n")
