"""The parser's fast path reads a plain line in two matches (a prefix and a cached tail),
finds a reshaped line's shapes without patterns (``str.find`` and lengths), and checks only
the operands it could not resolve while reading: each gives exactly what the one-pattern
reading, the patterns' shapes and the check of every operand gave."""

from __future__ import annotations

import functools
import re
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from recompile_doctor.differ import diff_paths
from recompile_doctor.errors import RecompileDoctorError
from recompile_doctor.parsers.hlo import _fastpath, _parser, parse_hlo
from recompile_doctor.parsers.hlo._fastpath import (
    _HEAD,
    _PREFIX,
    _SHAPE,
    _TAIL,
    _TAILS,
    _reshaped,
    fast_instruction,
)
from recompile_doctor.parsers.hlo._intern import LARGE_LITERAL
from recompile_doctor.parsers.hlo.model import Instruction
from recompile_doctor.reports.diff import render
from tests.conftest import examples

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "hlo"
#: the one pattern of a plain line the two parts were cut from
LINE = re.compile(_PREFIX.pattern + _TAIL.pattern, _PREFIX.flags)
_SHAPE_SPAN = re.compile(rf"{_HEAD}({_SHAPE})")
_SHAPE_AT = re.compile(_SHAPE)


def _real_lines() -> list[str]:
    return [
        line
        for f in sorted(FIXTURES.rglob("*"))
        if f.suffix in (".hlo", ".txt")
        for line in f.read_text().split("\n")
        if " = " in line
    ]


_REAL = _real_lines()


def _in_two(line: str) -> tuple[tuple[str | None, ...], int | None] | None:
    """The groups and metadata offset of ``line`` read as the fast path does, or None."""
    m = _PREFIX.match(line)
    if m is None:
        return None
    t = _TAIL.match(line, m.end())
    if t is None:
        return None
    return m.groups() + t.groups(), None if t.group(2) is None else t.start(2)


def _in_one(line: str) -> tuple[tuple[str | None, ...], int | None] | None:
    m = LINE.match(line)
    if m is None:
        return None
    return m.groups(), None if m.group(8) is None else m.start(8)


_PIECES = [
    "  ",
    "\t",
    "ROOT ",
    "ROOT",
    "%",
    "a.1",
    "x_2-y",
    " = ",
    "=",
    "f32[8,4]",
    "f32[8, 4]",
    "{1,0}",
    "{1,0:T(8,128)}",
    "{",
    "}",
    "[",
    "]",
    " ",
    "add(",
    "constant(",
    "parameter(",
    "(",
    ")",
    "%a.1",
    ", ",
    ",",
    "/*index=5*/",
    "{...}",
    "{1, 2}",
    "0",
    ", dimensions={1}",
    ", calls=%f.1",
    ', backend_config="x\\"y)"',
    ", metadata={",
    'op_name="a(b)"',
    "}",
    ' source_line=3}"',
    "metadata=",
    "\n",
]


@settings(max_examples=examples(600), deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=16))
def test_prefix_and_tail_read_a_line_as_the_one_pattern(pieces: list[str]) -> None:
    # GIVEN a line made of pieces of instruction lines
    line = "".join(pieces)
    # THEN the two matches read it as the one pattern: the same groups and metadata offset
    assert _in_two(line) == _in_one(line)


def test_prefix_and_tail_read_real_lines_as_the_one_pattern() -> None:
    lines = _REAL
    read = [line for line in lines if _in_one(line) is not None]
    assert len(read) > 1000
    for line in lines:
        assert _in_two(line) == _in_one(line), line


def _fields(ins: Instruction) -> tuple[object, ...]:
    large = ins.literal is not None and len(ins.literal.values) > LARGE_LITERAL
    return (
        ins.name,
        ins.opcode,
        ins.shape,
        ins.operands,
        ins.attrs,
        ins.calls,
        ins.computation,
        ins.source,
        ins.literal,
        ins.meta,
        ins.parameter_number,
        ins.is_root,
        None if large else ins.key,  # (a large literal gets a key of its own each time)
    )


def test_cached_tails_read_a_line_as_a_fresh_match() -> None:
    # GIVEN every real line read with an empty tail cache, then again from the cache
    lines = _REAL
    _TAILS.clear()
    first = [fast_instruction(line, "c", 1) for line in lines]
    again = [fast_instruction(line, "c", 1) for line in lines]
    # THEN the instructions are the same
    assert len(_TAILS) > 50
    for x, y in zip(first, again, strict=True):
        assert (x is None) == (y is None)
        if x is not None and y is not None:
            assert (_fields(x[0]), x[1]) == (_fields(y[0]), y[1])


def _reshaped_by_regex(ref: str, line: str) -> tuple[int, int, int] | None:
    """(where the shape starts, where ``ref``'s ends, where ``line``'s ends) when ``line`` is
    ``ref`` with another shape token, as the patterns find them (the reference)."""
    m = _SHAPE_SPAN.match(ref)
    assert m is not None
    start, end = m.span(4)
    mb = _SHAPE_AT.match(line, start)
    if mb is None or ref[end:] != line[mb.end() :] or ref[:start] != line[:start]:
        return None
    return start, end, mb.end()


_SHAPE_PIECES = ["f32", "bf16", "s32", "F32", "[", "]", "8", ",", " ", "<=", "?", "{", "}"]
_SHAPE_PIECES += ["1,0", ":T(8,128)", "(", ")", "\t", "=", "q", "{{", "opaque_type"]


_SHAPES = ["f32[8]", "f32[8,4]{1,0}", "s32[]", "f32[2]{0:T(8)}", "pred[1,2]{0,1}", "opaque_type[]"]
_TOKENS = st.lists(st.sampled_from(_SHAPE_PIECES), max_size=10).map("".join)
#: a shape followed by more text, or any text
_TOKENS = st.one_of(
    _TOKENS,
    st.tuples(st.sampled_from(_SHAPES), st.sampled_from(["", " ", "\t", "  "]), _TOKENS).map(
        "".join
    ),
)


@functools.cache
def _plain_real() -> list[str]:
    """The real lines the fast path reads."""
    return [line for line in _REAL if fast_instruction(line, "c", 1) is not None]


@settings(max_examples=examples(800), deadline=None)
@given(st.integers(0, 10**6), _TOKENS, st.booleans())
def test_reshaped_lines_are_the_lines_parsed_anew(pick: int, token: str, keep: bool) -> None:
    # GIVEN a plain real line and the same line with its shape printed otherwise (any text)
    lines = _plain_real()
    ref = lines[pick % len(lines)]
    got = fast_instruction(ref, "c", 1)
    assert got is not None
    r = got[0]
    m = _SHAPE_SPAN.match(ref)
    assert m is not None
    start, end = m.span(4)
    if keep:  # (a real shape, its dimensions changed)
        token = re.sub(r"\d+", lambda d: str(int(d.group()) + 1), ref[start:end], count=1)
    line = ref[:start] + token + ref[end:]
    # WHEN the fast path reshapes ref's instruction
    new = _reshaped(r, ref, line)
    # THEN it finds the shapes the patterns find, and gives the line's instruction
    spans = _reshaped_by_regex(ref, line)
    fresh = fast_instruction(line, "c", 1)
    if new is None:
        assert spans is None or fresh is None
        return
    assert spans is not None and fresh is not None
    assert _fields(new) == _fields(fresh[0])


# -- operands not defined -------------------------------------------------------------------


def _module(names: list[str], uses: list[tuple[int, int]], region: bool) -> str:
    """A module whose entry defines ``names`` in order, instruction k using the names at
    the indices ``uses[k]`` (any: later ones, or past the end: names never defined)."""
    lines = ["HloModule m", ""]
    if region:
        lines += [
            "%add.1 (x.1: f32[], y.1: f32[]) -> f32[] {",
            "  %x.1 = f32[] parameter(0)",
            "  %y.1 = f32[] parameter(1)",
            "  ROOT %s.1 = f32[] add(%x.1, %y.1)",
            "}",
            "",
        ]
    lines.append("ENTRY %main {")
    lines.append(f"  %{names[0]} = f32[8] parameter(0)")
    for k in range(1, len(names)):
        a, b = uses[k - 1]
        x = names[a] if a < len(names) else f"gone.{a}"
        y = names[b] if b < len(names) else f"gone.{b}"
        root = "ROOT " if k == len(names) - 1 else ""
        lines.append(f'  {root}%{names[k]} = f32[8]{{0}} add(%{x}, %{y}), metadata={{op_name="o"}}')
    lines.append("}")
    return "\n".join(lines) + "\n"


@st.composite
def _modules(draw: st.DrawFn) -> tuple[list[str], list[tuple[int, int]]]:
    n = draw(st.integers(2, 8))
    names = [f"v.{k}" for k in range(n)]
    pair = st.tuples(st.integers(0, n + 1), st.integers(0, n + 1))
    return names, draw(st.lists(pair, min_size=n - 1, max_size=n - 1))


def _error(text: str) -> tuple[str, int | None, int | None] | None:
    try:
        parse_hlo(text, "m.hlo")
    except RecompileDoctorError as e:
        return e.message, e.line, e.col
    return None


@settings(max_examples=examples(300), deadline=None)
@given(_modules(), st.booleans())
def test_operands_not_defined_are_found_as_when_every_operand_is_checked(
    module: tuple[list[str], list[tuple[int, int]]], region: bool
) -> None:
    # GIVEN a module whose operands are defined before, after or nowhere
    text = _module(*module, region)
    fast = _error(text)
    # WHEN every operand of every computation is checked instead
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_parser.Parser, "_check_operands", _check_all)
        full = _error(text)
    # THEN the same error (or none)
    assert fast == full


def _check_all(  # type: ignore[no-untyped-def]
    self, comp, defined, unresolved, fresh
) -> None:
    """What the parser checked before: every operand of every instruction."""
    _parser._check_operands(comp, comp.instructions, defined, self.path)


def _json_or_error(a: str, b: str) -> tuple[str, str]:
    """The JSON diff (or the error) of A and B taking over A's lines, and from scratch."""
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        pa, pb = Path(tmp) / "a.hlo", Path(tmp) / "b.hlo"
        pa.write_text(a)
        pb.write_text(b)
        for plain in (False, True):
            try:
                out.append(str(render(diff_paths(pa, pb, plain=plain), "json")))
            except RecompileDoctorError as e:
                out.append(f"error: {e}")
    return out[0], out[1]


@settings(max_examples=examples(200), deadline=None)
@given(_modules(), st.integers(0, 7), st.sampled_from(["rename", "use", "shape"]), st.booleans())
def test_pairs_with_operands_not_defined_diff_as_from_scratch(
    module: tuple[list[str], list[tuple[int, int]]], pick: int, how: str, region: bool
) -> None:
    # GIVEN a module and a copy with one name defined otherwise (its users printed as in
    # A, taken over), one operand changed, or one shape changed
    a = _module(*module, region)
    lines = a.split("\n")
    body = [k for k, line in enumerate(lines) if line.startswith("  ") and "%v." in line]
    k = body[pick % len(body)]
    if how == "rename":
        lines[k] = re.sub(r"%(v\.\d+) =", r"%\1_b =", lines[k], count=1)
    elif how == "use":
        lines[k] = re.sub(r"\(%[\w.]+", "(%nowhere", lines[k], count=1)
    else:
        lines[k] = lines[k].replace("f32[8]", "f32[9]", 1)
    b = "\n".join(lines)
    # WHEN diffed taking over A's lines and from scratch, THEN the same JSON or error
    for x, y in ((a, b), (b, a)):
        fast, plain = _json_or_error(x, y)
        assert fast == plain


def test_a_taken_over_user_of_a_renamed_definition_is_an_error() -> None:
    # GIVEN B: A with one definition renamed, its user printed as in A
    a = _module(["v.0", "v.1", "v.2"], [(0, 0), (1, 1)], False)
    b = a.replace("%v.1 =", "%w.1 =")
    # THEN B is an error when parsed against A, as from scratch
    fast, plain = _json_or_error(a, b)
    assert fast.startswith("error:") and "operand 'v.1'" in fast
    assert fast == plain


def test_generated_lines_take_the_fast_path() -> None:
    # (the fast path reads the generated lines: the properties above are not vacuous)
    line = _module(["v.0", "v.1"], [(0, 0)], False).split("\n")[3]
    assert fast_instruction(line, "main", 4) is not None
    assert _fastpath._PREFIX.match(line) is not None


def test_names_with_other_letters_are_left_to_the_token_parser() -> None:
    # GIVEN lines whose names and values have letters beyond ASCII (\w takes them)
    text = _module(["v.0", "vé.1", "v.2"], [(0, 0), (1, 0)], True)
    text = text.replace('op_name="o"}', 'op_name="o"}, x=ü')
    # THEN the fast path declines them, and the module is the token parser's
    lines = text.split("\n")
    assert [fast_instruction(line, "main", 1) is None for line in lines[9:12]] == [
        False,
        True,
        True,
    ]
    m = parse_hlo(text, "m.hlo")
    ins = m.entry_computation.by_name()
    assert ins["v.2"].operands == ("vé.1", "v.0") and ins["vé.1"].attr("x") == "ü"
