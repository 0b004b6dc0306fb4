"""The parser's and the differ's fast paths give exactly what their general paths give."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest
from conftest import assert_same_fingerprints

from recompile_doctor.differ import _signature, diff_modules
from recompile_doctor.differ._signature import signature
from recompile_doctor.differ.align import align
from recompile_doctor.differ.causes import explain
from recompile_doctor.differ.fingerprint import _eager, compute
from recompile_doctor.parsers.hlo import HloModule, _parser, parse_hlo, parse_hlo_file
from recompile_doctor.parsers.hlo._intern import LARGE_LITERAL

align_mod = importlib.import_module("recompile_doctor.differ.align")  # (the package's align
# attribute is the function)
ROOT = Path(__file__).resolve().parent.parent
SAMPLES = sorted((ROOT / "fixtures" / "hlo").rglob("*.txt")) + sorted(
    (ROOT / "fixtures" / "hlo").rglob("*.hlo")
)

LAYERS = """HloModule jit_step, entry_computation_layout={{(f32[{b},4]{{1,0}})->f32[{b},4]{{1,0}}}}

%fused.1 (p0.1: f32[{b},4], p1.1: f32[4]) -> f32[{b},4] {{
  %p0.{n}1 = f32[{b},4]{{1,0}} parameter(0)
  %p1.{n}1 = f32[4]{{0}} parameter(1)
  %bc.{n}1 = f32[{b},4]{{1,0}} broadcast(%p1.{n}1), dimensions={{1}}, metadata={{op_name="l1/add"}}
  ROOT %add.{n}1 = f32[{b},4]{{1,0}} add(%p0.{n}1, %bc.{n}1), metadata={{op_type="add" op_name="l1/add"}}
}}

%fused.2 (p0.2: f32[{b},4], p1.2: f32[4]) -> f32[{b},4] {{
  %p0.{n}2 = f32[{b},4]{{1,0}} parameter(0)
  %p1.{n}2 = f32[4]{{0}} parameter(1)
  %bc.{n}2 = f32[{b},4]{{1,0}} broadcast(%p1.{n}2), dimensions={{1}}, metadata={{op_name="l2/add"}}
  ROOT %add.{n}2 = f32[{b},4]{{1,0}} add(%p0.{n}2, %bc.{n}2), metadata={{op_name="l2/add"}}
}}

ENTRY %main.{n} (x.{n}: f32[{b},4]) -> f32[{b},4] {{
  %x.{n} = f32[{b},4]{{1,0}} parameter(0), metadata={{op_name="x"}}
  %w.{n} = f32[4,4]{{1,0}} constant({{...}})
  %d.{n} = f32[{b},4]{{1,0}} dot(%x.{n}, %w.{n}), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}
  %c.{n}1 = f32[4]{{0}} constant({{0.5, -1e-05, 2, {c}}})
  %f.{n}1 = f32[{b},4]{{1,0}} fusion(%d.{n}, %c.{n}1), kind=kLoop, calls=%fused.1
  %c.{n}2 = f32[4]{{0}} constant({{...}})
  ROOT %f.{n}2 = f32[{b},4]{{1,0}} fusion(%f.{n}1, %c.{n}2), kind=kLoop, calls=%fused.2
}}
"""


def layers(batch: int, number: int, c: str = "3") -> str:
    return LAYERS.format(b=batch, n=number, c=c)


def _fields(m: HloModule) -> list[object]:
    out: list[object] = [m.name, m.attrs, m.entry, m.dialect, m.stack_frames]
    for c in m.computations.values():
        out.append((c.name, c.is_entry, c.line, c.root))
        for i in c.instructions:
            out.append((i.name, i.opcode, i.shape, i.operands, i.attrs, i.calls, i.computation))
            out.append((i.line, i.source, i.literal, i.metadata, i.parameter_number, i.is_root))
            # the same content gets the same key on both paths (large literals: a key each)
            large = i.literal is not None and len(i.literal.values) > LARGE_LITERAL
            out.append(None if large else i.key)
    return out


def _token_parser_only(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_fast_run(
        lines: list[str],
        i: int,
        comp: str,
        out: list[object],
        defined: dict[str, str],
        unresolved: list[int],
        like: object = None,
    ) -> tuple[int, None, bool]:
        return i, None, False

    monkeypatch.setattr(_parser, "fast_run", no_fast_run)


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
def test_fast_path_parses_real_dumps_like_the_token_parser(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN a real dump  WHEN parsed with the fast path, then with the token parser only
    fast = _fields(parse_hlo_file(path))
    _token_parser_only(monkeypatch)
    slow = _fields(parse_hlo_file(path))
    # THEN every computation and instruction is the same, metadata included
    assert fast == slow


def test_fast_path_parses_elided_and_listed_constants_like_the_token_parser(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # GIVEN fusions, {...} and listed constants, attributes after metadata
    text = layers(8, 1)
    fast = parse_hlo(text)
    lits = [i.literal for i in fast.entry_computation.instructions if i.literal is not None]
    _token_parser_only(monkeypatch)
    # THEN the token parser gives the same module
    assert _fields(fast) == _fields(parse_hlo(text))
    assert lits[0] is not None and lits[0].elided
    assert lits[1] is not None and lits[1].values == ("0.5", "-1e-05", "2", "3")


def _general_diff(a: HloModule, b: HloModule, monkeypatch: pytest.MonkeyPatch) -> object:
    """The differ without its shortcuts: eager fingerprints in callee order (no signature
    memo), every computation pair through the matcher, no memo of matched pairs, equal keys
    always matched through per-key groups."""
    match_pair = align_mod._match_pair
    monkeypatch.setattr(align_mod, "_identical", lambda *args: False)
    monkeypatch.setattr(align_mod, "_distinct", lambda *args: False)
    monkeypatch.setattr(
        align_mod,
        "_match_pair",
        lambda ca, cb, pa, pb, fa, fb, memo: match_pair(ca, cb, pa, pb, fa, fb, {}),
    )
    d = explain(a, b, align(a, b, _eager(a), _eager(b)))
    monkeypatch.undo()
    return (d.to_json(), d.stats)


PAIRS = [
    ("batch", layers(8, 1), layers(4, 7)),
    ("same", layers(8, 1), layers(8, 9)),
    ("constant", layers(8, 1), layers(8, 1, c="4")),
]


@pytest.mark.parametrize(("name", "ta", "tb"), PAIRS, ids=[p[0] for p in PAIRS])
def test_differ_shortcuts_give_the_general_result(
    name: str, ta: str, tb: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN two compilations with repeated fusions (memo), identical parts (identity) and
    # lazily computed skeletons
    a, b = parse_hlo(ta), parse_hlo(tb)
    # WHEN diffed with the shortcuts and without
    d = diff_modules(a, b)
    # THEN the causes, changes and statistics are the same
    assert (d.to_json(), d.stats) == _general_diff(a, b, monkeypatch)


def test_differ_shortcuts_give_the_general_result_on_real_dumps(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # GIVEN every pair of real dumps of one stage
    mods = [parse_hlo_file(p) for p in SAMPLES if "before_optimizations" in p.name]
    for a in mods:
        for b in mods:
            # THEN the shortcuts change nothing
            d = diff_modules(a, b)
            assert (d.to_json(), d.stats) == _general_diff(a, b, monkeypatch)


def test_signature_ignores_names_and_metadata_but_not_shapes() -> None:
    # GIVEN two fusions that differ only in instruction names and metadata
    m = parse_hlo(layers(8, 1))
    other = parse_hlo(layers(4, 1))
    fused1, fused2 = m.computations["fused.1"], m.computations["fused.2"]
    # THEN they have the same signature, the same fusion at another batch size another one,
    # and the entry (it calls computations) none
    assert signature(fused1) is not None
    assert signature(fused1) == signature(fused2)
    assert signature(other.computations["fused.1"]) != signature(fused1)
    assert signature(m.entry_computation) is None


def _unsigned(monkeypatch: pytest.MonkeyPatch) -> None:
    """No computation has a signature: the memo never shares a result."""
    monkeypatch.setattr(_signature, "signature", lambda comp: None)


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
def test_signature_memo_gives_every_computation_its_own_fingerprints(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN a real dump fingerprinted with the memo (computations with equal signatures
    # share their fingerprints) and without it (each computation fingerprinted alone)
    m = parse_hlo_file(path)
    fast = compute(m)
    _unsigned(monkeypatch)
    slow = compute(m)
    # THEN every computation has the same fingerprints
    assert_same_fingerprints(fast, slow)


def test_signature_memo_shares_only_between_equal_signatures(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # GIVEN fusions of one length, two alike but for names (the first and the third) and
    # one other in between, fingerprinted with the memo
    text = layers(8, 1)
    first = text.index("%fused.2 ")
    other = text[first : text.index("ENTRY")].replace("fused.2", "fused.3")
    other = other.replace("broadcast(", "negate(").replace(", dimensions={1}", "")
    text = text.replace("%fused.2 ", other + "%fused.2 ", 1)
    m = parse_hlo(text)
    fast = compute(m)
    full = {name: fast.computations[name].full for name in ("fused.1", "fused.2", "fused.3")}
    # THEN the third took the first's result, the other has its own: those computed alone
    assert full["fused.2"] is full["fused.1"]
    assert full["fused.3"] != full["fused.1"]
    _unsigned(monkeypatch)
    assert_same_fingerprints(fast, compute(m))


def test_parser_key_is_the_instruction_without_names_operands_callees_and_layout() -> None:
    # GIVEN the same broadcast with other names, metadata, layout and callee, and variants
    m = parse_hlo(layers(8, 1))
    other = parse_hlo(layers(8, 9))
    bc1 = m.computations["fused.1"].instructions[2]
    bc2 = m.computations["fused.2"].instructions[2]
    fusions = [i for i in m.entry_computation.instructions if i.opcode == "fusion"]
    consts = [i for i in m.entry_computation.instructions if i.opcode == "constant"]
    # THEN equal instructions share a key (across modules too) and different ones do not
    assert bc1.name != bc2.name and bc1.key == bc2.key
    assert fusions[0].calls != fusions[1].calls and fusions[0].key == fusions[1].key
    assert [i.key for i in m.entry_computation.instructions] == [
        i.key for i in other.entry_computation.instructions
    ]
    assert consts[0].key != consts[1].key  # {...} and {0.5, -1e-05, 2, 3}
    assert bc1.key != m.computations["fused.1"].instructions[3].key
