"""A log whose framework lines start after a long preamble is still detected."""

from __future__ import annotations

from pathlib import Path

import pytest

from recompile_doctor import analyze

JAX = Path(__file__).resolve().parent.parent / "fixtures" / "jax" / "batch_size" / "run.log"


@pytest.mark.parametrize("plain", ["0", "1"])
def test_a_jax_log_after_3000_lines_of_preamble_is_jax(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, plain: str
) -> None:
    monkeypatch.setenv("RECOMPILE_DOCTOR_PLAIN", plain)
    # GIVEN 3,000 lines of installation output before the run's own log
    log = tmp_path / "run.log"
    preamble = "".join(f"Collecting package-{i} (from -r requirements.txt)\n" for i in range(3000))
    log.write_text(preamble + JAX.read_text())
    # WHEN analysed THEN it is read as JAX and the cause is found, on the right lines
    r = analyze([str(log)])
    assert r.inputs[0].format == "jax"
    assert "batch-size-changed" in {f.rule for f in r.findings}
    ref = analyze([str(JAX)])
    assert [e.line - 3000 for f in r.findings for e in f.evidence] == [
        e.line for f in ref.findings for e in f.evidence
    ]


@pytest.mark.parametrize("chunk", [256, 4096])
def test_late_detection_across_small_chunks_equals_the_plain_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int
) -> None:
    """GIVEN a preamble longer than the first detection window, read in small chunks, THEN
    the fast path gives exactly the plain path's events and counts."""
    from recompile_doctor.parsers import ParseCounter, _scan, parse_log

    log = tmp_path / "run.log"
    preamble = "".join(f"noise line {i}\n" for i in range(1500))
    log.write_text(preamble + JAX.read_text())
    monkeypatch.setattr(_scan, "CHUNK_BYTES", chunk)
    cf, cp = ParseCounter(str(log)), ParseCounter(str(log))
    fast = [(type(e).__name__, e.span.line) for e in parse_log(str(log), cf, fast=True)]
    plain = [(type(e).__name__, e.span.line) for e in parse_log(str(log), cp, fast=False)]
    assert fast == plain and fast
    assert (cf.format, cf.recognized, cf.unrecognized) == (
        cp.format,
        cp.recognized,
        cp.unrecognized,
    )
    assert cf.format == "jax"
