"""An argument's type change -> its cause (``rules.type_change_rule``), read without a
pattern: the same answers as the HLO type pattern it replaced, on any text."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from recompile_doctor import rules
from recompile_doctor.timeline.reason_facts import bracketed_dims
from tests.conftest import examples

#: the form of a type, as a pattern: what ``type_parts`` reads by hand
_TYPE_RE = re.compile(r"^(?P<dt>[a-z][a-z0-9_]*)\[(?P<dims>[^\]]*)\](?P<rest>.*)$")

_PIECES = st.sampled_from(
    [*"abfz09_[] ,\n\t{}=-AZé\u2028\x85", "weak_type=True", "f32", "bf16", "[2,4]", "[1, 4]", "]{"]
)
_TEXTS = st.lists(_PIECES, max_size=12).map("".join)


@settings(max_examples=examples(600))
@given(_TEXTS)
def test_type_parts_reads_what_the_pattern_matches(text: str) -> None:
    m = _TYPE_RE.match(text.strip())
    expected = None if m is None else (m["dt"], m["dims"], m["rest"])
    assert rules.type_parts(text) == expected


def _by_pattern(old: str, new: str) -> str:
    """The rule as the pattern's fields and the cause order give it (each cause found, the
    most important one kept)."""
    mo, mn = _TYPE_RE.match(old.strip()), _TYPE_RE.match(new.strip())
    if mo is None or mn is None:
        return "retracing"
    found = []
    if mo["dt"] != mn["dt"]:
        found.append("dtype-changed")
    if mo["dims"] != mn["dims"]:
        do = [d.strip() for d in mo["dims"].split(",")] if mo["dims"].strip() else []
        dn = [d.strip() for d in mn["dims"].split(",")] if mn["dims"].strip() else []
        leading = len(do) == len(dn) and len(do) > 0 and do[1:] == dn[1:]
        found.append("batch-size-changed" if leading else "shape-changed")
    if not found and ("weak_type=True" in mo["rest"]) != ("weak_type=True" in mn["rest"]):
        found.append("weak-type-changed")
    return min(found, key=rules.CAUSE_ORDER.index) if found else "retracing"


@settings(max_examples=examples(600))
@given(_TEXTS, _TEXTS)
def test_type_change_rule_is_the_most_important_cause_found(old: str, new: str) -> None:
    assert rules.type_change_rule(old, new) == _by_pattern(old, new)


@pytest.mark.parametrize(
    ("old", "new", "rule"),
    [
        ("f32[8,16]", "bf16[8,17]", "dtype-changed"),  # before a shape
        ("f32[8,16]", "bf16[4,16]", "batch-size-changed"),  # after a batch size
        (" f32[2,4] ", "f32[3,4]\n", "batch-size-changed"),
        ("f32[2, 4]", "f32[3,4]", "batch-size-changed"),
        ("F32[4]", "f32[5]", "retracing"),
        ("f32[4]{x\ny}", "f32[5]", "retracing"),
        ("_f[4]", "f32[5]", "retracing"),
        ("f-32[4]", "f32[5]", "retracing"),
        ("fé[4]", "f[5]", "retracing"),
        ("f32[4", "f32[5]", "retracing"),
        ("f32[]", "f32[]", "retracing"),
        ("f32[]", "f32[ ]", "shape-changed"),  # no dimension either side
        ("f32[]{weak_type=True}", "f32[]", "weak-type-changed"),
    ],
)
def test_type_change_rule_cases(old: str, new: str, rule: str) -> None:
    assert rules.type_change_rule(old, new) == rule


def test_cause_rank_is_the_cause_order() -> None:
    assert [rules.cause_rank(r) for r in rules.CAUSE_ORDER] == list(range(len(rules.CAUSE_ORDER)))
    assert rules.cause_rank("no-such-rule") == len(rules.CAUSE_ORDER)


_SHAPE_PIECES = st.sampled_from([*"[]0912,  \t\n\u00a0\u0663x_-", "f32", "[4]", "[1,2]", "[]"])


@settings(max_examples=examples(600))
@given(st.lists(_SHAPE_PIECES, max_size=14).map("".join))
def test_bracketed_dims_are_what_the_pattern_finds(text: str) -> None:
    # (the first [...] of decimal digits, commas and blanks alone: the dimensions a growing
    # shape is read by)
    m = re.search(r"\[([\d,\s]*)\]", text)
    assert bracketed_dims(text) == (None if m is None else m.group(1))


def test_a_type_read_again_gives_the_same_rule() -> None:
    # GIVEN a run of growing shapes (each change's old type was the change before's new
    # one: read again, not anew) and texts that are no types, each asked twice
    growing = [(f"f32[{n},4]", f"f32[{n + 1},4]") for n in range(1, 6)]
    for _ in range(2):
        # THEN each gives the rule it gave the first time
        assert [rules.type_change_rule(o, n) for o, n in growing] == ["batch-size-changed"] * 5
        assert rules.type_change_rule("not a type", "f32[1]") == "retracing"
        assert rules.type_change_rule("f32[1]", "not a type") == "retracing"
        assert rules.type_change_rule("f32[2,4]", "bf16[2,4]") == "dtype-changed"
        assert rules.type_change_rule("f32[2,4]", "f32[2,5]") == "shape-changed"
