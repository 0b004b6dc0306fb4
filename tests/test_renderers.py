"""Every renderer over every fixture, the empty report included."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from recompile_doctor import analyze
from recompile_doctor.model import ParseStats, Report, Summary
from recompile_doctor.reports import RENDERERS, render
from tests.conftest import CASES, REAL, validate_report_json

LOGS = sorted(CASES.glob("*.log")) + sorted(REAL.glob("*.log"))
EMPTY = Report(
    inputs=(), parse=ParseStats(), summary=Summary(), compilations=(), events=(), findings=()
)


def _reports() -> list[tuple[str, Report]]:
    return [("empty", EMPTY)] + [(p.name, analyze([str(p)])) for p in LOGS]


REPORTS = _reports()


@pytest.mark.parametrize("fmt", sorted(RENDERERS))
@pytest.mark.parametrize(("name", "report"), REPORTS, ids=[n for n, _ in REPORTS])
def test_every_renderer_names_every_finding(fmt: str, name: str, report: Report) -> None:
    out = render(report, fmt)
    text = out.decode("utf-8") if isinstance(out, bytes) else out
    assert text
    for f in report.findings:
        assert f.rule in text
    if fmt == "json":
        data = json.loads(text)
        validate_report_json(data)
        assert Report.from_json(data) == report  # the saved form round-trips


def test_markdown_and_text_agree_on_the_headline() -> None:
    report = analyze([str(CASES / "alternating_graphs.log")])
    text = render(report, "text")
    md = render(report, "markdown")
    assert isinstance(text, str) and isinstance(md, str)
    headline = text.splitlines()[0].removeprefix("recompile-doctor: ")
    assert f"**{headline}**" in md


def test_hostile_strings_do_not_break_markdown(tmp_path: Path) -> None:
    log = tmp_path / "x.log"
    name = "cluster_|</script><b>`x`"
    log.write_text(
        "".join(
            f"2023-04-26 14:42:{s:02d}.000000: I tensorflow/compiler/plugin/poplar/driver/poplar_compiler.cc:1487] "
            f"Begin XLA compilation: {name}  (Hash: 0x{h}) for ordinal  0\n"
            f"2023-04-26 14:42:{s + 1:02d}.000000: I tensorflow/compiler/plugin/poplar/driver/poplar_executable.cc:1] Execute {name}\n"
            for s, h in ((1, "a1"), (10, "b2"))
        )
    )
    md = render(analyze([str(log)]), "markdown")
    assert isinstance(md, str) and "\\|" in md  # table cells escape the pipe


def test_saved_json_is_built_piecewise_but_equals_one_dump() -> None:
    """GIVEN real reports WHEN saved THEN the piecewise writer gives exactly json.dumps of the
    whole document (so memory need not hold every event's dictionary at once)."""
    import json
    from pathlib import Path

    from recompile_doctor import analyze

    root = Path(__file__).resolve().parent.parent / "fixtures"
    for log in ("simulated/kitchen-sink/run.log", "jax/batch_size/run.log", "torch/ranks/run.log"):
        r = analyze(str(root / log))
        whole = json.dumps(r.to_json(), indent=2, ensure_ascii=False) + "\n"
        assert r.dumps() == whole
        assert "".join(r.iter_json()) + "\n" == whole
