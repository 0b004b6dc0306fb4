"""A guard's source comment (``# file.py:211 in fn``) is read from the end of its line: the
same frame as the last of the pattern's matches read left to right, on every guard line of
the torch captures and on generated lines of comments, quotes and near-misses."""

from __future__ import annotations

from pathlib import Path

from hypothesis import example, given
from hypothesis import strategies as st

from recompile_doctor.parsers._torch_guards import _COMMENT_FRAME_RE, _TORCH_DIRS, comment_frame

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "torch"


def _left_to_right(text: str) -> tuple[str, bool] | None:
    """The reading by every match left to right, the last one kept."""
    found = list(_COMMENT_FRAME_RE.finditer(text))
    if not found:
        return None
    m = found[-1]
    if m["file"].startswith("_dynamo/"):
        return None
    return m["fn"], not m["file"].startswith(_TORCH_DIRS) and "/torch/" not in m["file"]


def test_every_guard_line_of_the_captures_gives_the_left_to_right_frame() -> None:
    # GIVEN every line of the torch text captures that holds a "# "
    lines = [
        ln
        for p in sorted(FIXTURES.glob("*/run.log"))
        for ln in p.read_text(encoding="utf-8").splitlines()
        if "# " in ln
    ]
    assert len(lines) > 100
    # THEN each is read as the left-to-right reading reads it, and some name a frame
    got = [comment_frame(ln) for ln in lines]
    assert got == [_left_to_right(ln) for ln in lines]
    assert sum(g is not None for g in got) > 50


_PIECES = st.sampled_from(
    [
        "# ",
        "#",
        " ",
        "  # ",
        "capture.py",
        "mp/capture-torch/capture.py",
        "_dynamo/output_graph.py",
        "nn/modules/linear.py",
        "x/torch/y.py",
        ".py",
        ":",
        "211",
        "٣",
        " in ",
        "scaled_sum",
        "<module>",
        "return x * n",
        "L['n'] == 4",
        "é",
    ]
)


@given(st.lists(_PIECES | st.text(max_size=4), max_size=14).map("".join))
@example("# a.py:1 in f # b.py:2 in g")
@example("# a.py:1 in f #  b.py:2 in g")
@example("# a# b.py:2 in g")
@example("x # _dynamo/output_graph.py:1122 in init  # mp/c.py:3 in user")
@example("# mp/c.py:3 in user # _dynamo/output_graph.py:1122 in init")
@example("# a.py:1 in f # " + "x" * 300)  # (a long text after the last "# ")
@example("# a.py:1 in f # " + "y" * 250 + ".py:3 in g")
@example("# a.py:1 in f # " + "y" * 235 + ".py:3 in g")  # (at the length remembered)
def test_a_line_s_last_frame_is_the_left_to_right_reading_s(text: str) -> None:
    # (read twice: the second time from what the first remembered)
    assert comment_frame(text) == _left_to_right(text)
    assert comment_frame(text) == _left_to_right(text)
