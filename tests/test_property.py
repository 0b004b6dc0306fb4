"""Properties: no input makes the parser raise anything but the tool's own error, and the
recognized count never exceeds the line count."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from recompile_doctor import analyze
from recompile_doctor.errors import RecompileDoctorError
from tests.conftest import CASES, examples

# real lines from the committed cases, to interleave in any order
_LINES = sorted(
    {
        line
        for p in CASES.glob("*.log")
        for line in p.read_bytes().decode("utf-8", "replace").splitlines()
        if line.strip()
    }
)

_settings = settings(
    max_examples=examples(60),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)


def _analyze_bytes(data: bytes) -> None:
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "run.log"
        p.write_bytes(data)
        try:
            report = analyze([str(p)])
        except RecompileDoctorError as e:
            assert "\n" not in str(e)
            return
        total = sum(i.lines for i in report.inputs)
        parse = report.parse
        assert parse.recognized <= total
        assert parse.recognized + parse.unrecognized + parse.malformed == total
        for f in report.findings:
            assert f.evidence


@_settings
@given(st.binary(max_size=4000))
def test_arbitrary_bytes_never_crash(data: bytes) -> None:
    _analyze_bytes(data)


@_settings
@given(
    st.lists(st.sampled_from(_LINES), max_size=80),
    st.sampled_from(["\n", "\r\n", "\r"]),
    st.booleans(),
)
def test_any_interleaving_of_valid_lines(lines: list[str], sep: str, cut: bool) -> None:
    data = sep.join(lines).encode()
    if cut and data:
        data = data[: len(data) // 2]  # a truncated log
    _analyze_bytes(data)


@_settings
@given(st.lists(st.sampled_from(_LINES), min_size=1, max_size=30), st.data())
def test_garbage_glued_in_front_of_valid_lines(lines: list[str], data: st.DataObject) -> None:
    junk = data.draw(st.text(max_size=20))
    _analyze_bytes("\n".join(junk + line for line in lines).encode("utf-8", "surrogatepass"))
