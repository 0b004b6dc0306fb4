"""The lines of a ``TRACING CACHE MISS`` block that name the function and an argument's type
change are read with string methods: what the block's patterns read, on any line."""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

from recompile_doctor.parsers.jax import (
    _FOR_RE,
    _TYPE_DIFF_RE,
    for_function,
    type_difference,
)
from tests.conftest import examples

_PIECES = st.sampled_from(
    ["for ", "* at ", ", now ", " and before ", " defined at ", "defined at", ",", " ", "\n",
     "\t", "x", "f32[2,4]", "now", "*", "at", "é"]
)  # fmt: skip
_LINES = st.lists(_PIECES, max_size=10).map("".join)


@settings(max_examples=examples(800))
@given(_LINES, st.booleans())
@example("for summarize defined at /tmp/capture.py:155", True)
@example("for  defined at x", True)
@example("for f defined at ", False)
@example("for f defined at x\n", False)
@example("for f defined at x\ny", True)
def test_for_function_is_what_the_pattern_reads(line: str, stripped: bool) -> None:
    s = line.strip() if stripped else line
    m = _FOR_RE.match(s)
    assert for_function(s) == (None if m is None else m["fn"])


@settings(max_examples=examples(800))
@given(_LINES, st.booleans())
@example("* at history, now f32[2,4] and before f32[1,4]", True)
@example("* at a, now , now b and before c", True)
@example("* at a, now b and before", True)
@example("* at , now b and before c", True)
@example("* at a, now  and before c", True)
@example(" * at a, now b and before c ", False)
@example("* at a, now b and before c\n", False)
@example("* at a, now b and before c\nd", True)
@example("* at a, now b and before ", False)
def test_type_difference_is_what_the_pattern_reads(line: str, stripped: bool) -> None:
    s = line.strip() if stripped else line
    m = _TYPE_DIFF_RE.match(s)
    assert type_difference(s) == (None if m is None else (m["what"], m["new"], m["old"]))


@settings(max_examples=examples(300))
@given(
    st.lists(
        st.sampled_from(["f32[]", "http", "https://", "s://", "x", " ", "\t", "/a"]), max_size=6
    ).map("".join)
)
@example("f32[]{weak_type=True} https://docs.jax.dev/en/latest/type_promotion.html")
@example("f32[] htt")
def test_a_type_loses_its_weak_type_link_as_the_pattern_takes_it(value: str) -> None:
    # GIVEN any type text, with or without a link in it WHEN its link is taken off
    # THEN it is what the pattern's substitution gives (only values with "http" run it)
    from recompile_doctor.parsers.jax import _WEAK_HINT_RE, strip_weak_hint

    assert strip_weak_hint(value) == _WEAK_HINT_RE.sub("", value).strip()
