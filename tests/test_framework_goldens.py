"""``analyze --format json`` of real framework logs, byte for byte: every record a decoder
makes (its kind, its fields and their order) and every finding, as the report writes them.
A change to a decoder that should not change what it reports is held to these."""

from __future__ import annotations

import pytest

from tests.conftest import GOLDENS, golden, run_cli

#: one or more captures of each stack, together giving a record of every kind with fields
CAPTURES = (
    "jax/growing_shape/run.log",
    "jax/persistent_warm/run.log",
    "tensorflow/batch_size_signature_vlog/run.log",
    "tensorflow/retracing_python_scalar/run.log",
    "torch/recompile_limit/run.log",
    "torch/graph_break/run.log",
    "torch/value_guard/run.log",
    "torch/batch_size/trace/dedicated_log_torch_trace_mph5qh48.log",
    "ptxla/partial_last_batch/run.log",
)


@pytest.mark.parametrize("capture", CAPTURES)
def test_a_captures_json_report_is_its_golden(
    capture: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN a real capture WHEN analysed to JSON (paths relative to the repository) THEN
    # the report is the one kept
    monkeypatch.chdir(GOLDENS.parent.parent)
    code, out, _ = run_cli("analyze", f"fixtures/{capture}", "--format", "json", capsys=capsys)
    assert code in (0, 1)
    golden(f"analyze/frameworks/{capture.replace('/', '__')}.json", out)
