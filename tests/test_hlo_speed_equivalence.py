"""The fast paths of ``diff A B`` give exactly what the plain paths give.

* Parsing a pair (:func:`parse_hlo_files`: B's lines printed as A's are A's objects) gives the
  modules of two separate parses, and the same JSON diff, on every pair of real dumps and on
  real dumps with one instruction's shape, constant or opcode changed.
* The aligner's fast propagation matches exactly what the plain fixpoint matches.
* A computation pair the aligner matches by position without running its steps
  (``align._positional``) is one the steps match by position.

The plain algorithm (kept here as the reference) visits every matched pair top-down and every
instruction bottom-up in each round; the product visits only pairs with an unmatched operand
and B's unmatched users.  Both must give the same ``a2b`` on real dumps and on generated
modules where a batch size, a constant or an opcode changed.
"""

from __future__ import annotations

import itertools
import re
import tempfile
from pathlib import Path

import pytest
from conftest import assert_same_fingerprints
from hypothesis import given, settings
from hypothesis import strategies as st

from recompile_doctor.differ import diff_paths
from recompile_doctor.differ.align import _all_used, _Matcher, _positional
from recompile_doctor.differ.causes import _first_users, _FirstUsers
from recompile_doctor.differ.fingerprint import Fingerprints, compute, skeleton_pair
from recompile_doctor.differ.propagate import _operand_indices, same_kind
from recompile_doctor.errors import RecompileDoctorError
from recompile_doctor.parsers.hlo import (
    HloModule,
    parse_hlo,
    parse_hlo_file,
    parse_hlo_files,
)
from recompile_doctor.parsers.hlo._lexer import tokenize
from recompile_doctor.parsers.hlo._parser import _header_tokens
from recompile_doctor.reports.diff import render
from tests.conftest import examples

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "hlo"


class _Reference(_Matcher):
    """The matcher with the plain propagation: every pair, every round (and, returning
    False, always propagating again after the ``op_name`` hints, as the product did before
    it skipped a second propagation that could match nothing)."""

    def propagate(self) -> bool:
        ia, ib, a2b, b2a = self.ia, self.ib, self.a2b, self.b2a
        ops_a, ops_b = _operand_indices(ia), _operand_indices(ib)
        users_b: dict[int, list[tuple[int, int]]] = {}
        for j, ops in enumerate(ops_b):
            for k, o in enumerate(ops):
                if o >= 0:
                    users_b.setdefault(o, []).append((k, j))
        changed, rounds = True, 0
        while changed and rounds < 50:
            changed = False
            rounds += 1
            for i in range(len(ia) - 1, -1, -1):
                j = a2b[i]
                if j < 0 or len(ops_a[i]) != len(ops_b[j]):
                    continue
                for oa, ob in zip(ops_a[i], ops_b[j], strict=True):
                    if oa >= 0 and ob >= 0 and same_kind(ia[oa], ib[ob]):
                        changed |= self.match(oa, ob)
            for i, a in enumerate(ia):
                if a2b[i] >= 0:
                    continue
                best = -1
                for k, oa in enumerate(ops_a[i]):
                    ob = a2b[oa] if oa >= 0 else -1
                    if ob < 0:
                        continue
                    for kb, u in users_b.get(ob, ()):
                        if kb != k or b2a[u] >= 0 or not same_kind(a, ib[u]):
                            continue
                        if best < 0 or (ib[u].op_name == a.op_name != ib[best].op_name):
                            best = u
                    if best >= 0:
                        break
                if best >= 0:
                    changed |= self.match(i, best)
        return False


def _alignments(a: HloModule, b: HloModule) -> list[tuple[list[int], list[int], list[int]]]:
    """(product a2b, reference a2b, product b2a) for every pair of same-named computations
    and the two entries, with propagation forced to run (the matches of the steps alone,
    where the reference always propagates again after the hints, are asserted equal)."""
    fa, fb = compute(a), compute(b)
    pairs = [(a.entry, b.entry)] + [(n, n) for n in a.computations if n in b.computations]
    out = []
    for na, nb in pairs:
        res, steps = [], []
        for cls in (_Matcher, _Reference):
            m = cls(a.computations[na], b.computations[nb])
            m.run(fa.computations[na], fb.computations[nb], _skeletons(fa, fb, na, nb))
            steps.append(list(m.a2b))
            m.propagate()  # also when steps 1-2 matched everything: nothing may change
            res.append((list(m.a2b), list(m.b2a)))
        out.append((res[0][0], res[1][0], res[0][1]))
        assert steps[0] == steps[1]
        assert res[0][1] == res[1][1]
    return out


def _skeletons(fa: Fingerprints, fb: Fingerprints, na: str, nb: str):  # type: ignore[no-untyped-def]
    return lambda: (fa.skeleton(na), fb.skeleton(nb))


def test_real_dumps_align_the_same_with_fast_and_plain_propagation() -> None:
    # GIVEN every pair of dumps of one stage of one captured JAX scenario
    folders = sorted({p.parent for p in (FIXTURES / "jax").rglob("*.txt")})
    checked = 0
    for folder in folders:
        for stage in ("before_optimizations", "cpu_after_optimizations"):
            files = sorted(folder.glob(f"*.{stage}.txt"))
            for fa, fb in itertools.permutations(files, 2):
                # WHEN both propagations align them
                for fast, plain, _ in _alignments(parse_hlo_file(fa), parse_hlo_file(fb)):
                    # THEN they match the same instructions
                    assert fast == plain, (fa.name, fb.name)
                    checked += 1
    assert checked > 20


_OPS = ["add", "multiply", "subtract", "maximum"]


@st.composite
def _programs(draw: st.DrawFn) -> tuple[str, str]:
    """Two versions of one chain of binary ops over parameters and constants: B has another
    batch size, some constants changed and some opcodes changed, and is printed renumbered."""
    n = draw(st.integers(2, 25))
    ops = draw(st.lists(st.sampled_from(_OPS), min_size=n, max_size=n))
    consts = draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))
    picks = draw(st.lists(st.integers(0, 10**6), min_size=2 * n, max_size=2 * n))
    changed_c = draw(st.sets(st.integers(0, n - 1)))
    changed_op = draw(st.sets(st.integers(0, n - 1), max_size=2))
    batch_b = draw(st.sampled_from([8, 16]))
    shift_b = draw(st.sampled_from([0, 7]))  # B printed renumbered, or with A's names
    dead = draw(st.sets(st.integers(0, n - 1), max_size=2))  # constants nothing uses

    def text(batch: int, shift: int, side_b: bool) -> str:
        s = f"f32[{batch},4]{{1,0}}"
        lines = [f"HloModule m, entry_computation_layout={{({s})->{s}}}", "", "ENTRY %main {"]
        names = [f"p.{shift}"]
        lines.append(f"  %p.{shift} = {s} parameter(0)")
        for k in range(n):
            c = consts[k] + (10 if side_b and k in changed_c else 0)
            op = _OPS[(_OPS.index(ops[k]) + 1) % 4] if side_b and k in changed_op else ops[k]
            lines.append(f"  %c.{k + shift} = f32[] constant({c})")
            if k in dead:
                lines.append(f"  %d.{k + shift} = {s} constant({{...}})")
            lines.append(f"  %b.{k + shift} = {s} broadcast(%c.{k + shift}), dimensions={{}}")
            x = names[picks[2 * k] % len(names)]
            y = names[picks[2 * k + 1] % len(names)]
            lines.append(f"  %o.{k + shift} = {s} {op}(%{x}, %{y})")
            lines.append(f"  %u.{k + shift} = {s} {ops[k]}(%o.{k + shift}, %b.{k + shift})")
            names += [f"o.{k + shift}", f"u.{k + shift}"]
        lines.append(f"  ROOT %r.{shift} = {s} copy(%{names[-1]})")
        lines.append("}")
        return "\n".join(lines) + "\n"

    return text(32, 0, False), text(batch_b, shift_b, True)


@settings(max_examples=examples(150), deadline=None)
@given(_programs())
def test_generated_changes_align_the_same_with_fast_and_plain_propagation(
    pair: tuple[str, str],
) -> None:
    # GIVEN two versions of a program (batch size, constants and opcodes changed)
    a, b = parse_hlo(pair[0], "a.hlo"), parse_hlo(pair[1], "b.hlo")
    # WHEN both propagations align them, THEN they match the same instructions
    for fast, plain, b2a in _alignments(a, b):
        assert fast == plain
        # and the matching is one-to-one
        assert all(b2a[j] == i for i, j in enumerate(fast) if j >= 0)


def _positional_checked(a: HloModule, b: HloModule) -> int:
    """For every pair of same-named computations and the two entries that ``_positional``
    matches by position: assert that the steps (with propagation) match them by position
    too.  How many such pairs there were."""
    fa, fb = compute(a), compute(b)
    pairs = dict.fromkeys(
        [(a.entry, b.entry)] + [(n, n) for n in a.computations if n in b.computations]
    )
    found = 0
    for na, nb in pairs:
        ca, cb = a.computations[na], b.computations[nb]
        pa, pb = fa.computations[na], fb.computations[nb]
        if not _positional(ca, cb, pa, pb, fa, fb):
            continue
        found += 1
        m = _Matcher(ca, cb)
        if not m.run(pa, pb, _skeletons(fa, fb, na, nb)):
            m.propagate()
        assert m.a2b == list(range(len(ca.instructions))), (a.path, b.path, na)
    return found


@settings(max_examples=examples(150), deadline=None)
@given(_programs())
def test_generated_changes_matched_by_position_are_what_the_steps_match(
    pair: tuple[str, str],
) -> None:
    # GIVEN two versions of a program (batch size, constants, opcodes, dead constants)
    a, b = parse_hlo(pair[0], "a.hlo"), parse_hlo(pair[1], "b.hlo")
    # WHEN the aligner would match a computation pair by position without its steps,
    # THEN its steps match them by position
    _positional_checked(a, b)


def test_real_dumps_matched_by_position_are_what_the_steps_match() -> None:
    # GIVEN every pair of real dumps of one scenario and stage, each parsed alone and as a
    # pair (B's computations that differ only in shapes are then twins of A's)
    found = 0
    for fa, fb in _fixture_pairs():
        for plain in (True, False):
            # WHEN/THEN: see _positional_checked
            found += _positional_checked(*parse_hlo_files(fa, fb, plain=plain))
    assert found > 100  # (the shortcut applies to real dumps)


def test_batch_change_is_matched_by_position_without_the_steps() -> None:
    # GIVEN a program and the same program at another batch size, printed with the same names
    def text(batch: int, unused: str = "") -> str:
        s = f"f32[{batch},4]{{1,0}}"
        return (
            "HloModule m\n\nENTRY %main {\n"
            f"  %p.0 = {s} parameter(0)\n"
            "  %c.1 = f32[] constant(2)\n"
            f"{unused}"
            f"  %b.2 = {s} broadcast(%c.1), dimensions={{}}\n"
            f"  ROOT %m.3 = {s} multiply(%p.0, %b.2)\n"
            "}\n"
        )

    a, b = parse_hlo(text(32), "a.hlo"), parse_hlo(text(8), "b.hlo")
    # WHEN the aligner looks at the entries, THEN it matches them by position at once
    assert _positional_checked(a, b) == 1
    # AND a changed constant nobody uses (the steps leave it to the op_name hints) makes
    # it say no
    a = parse_hlo(text(32, "  %d.9 = f32[] constant(5)\n"), "a.hlo")
    b = parse_hlo(text(8, "  %d.9 = f32[] constant(6)\n"), "b.hlo")
    assert _positional_checked(a, b) == 0
    # (unchanged, the full fingerprints match it by position: then it says yes)
    b = parse_hlo(text(8, "  %d.9 = f32[] constant(5)\n"), "b.hlo")
    assert _positional_checked(a, b) == 1


def test_batch_change_with_a_callee_printed_last_is_matched_by_position() -> None:
    # GIVEN a program whose entry is printed before the computation it calls (fingerprinted
    # the general way, skeletons with it), at two batch sizes
    def text(batch: int) -> str:
        return (
            "HloModule m\n\nENTRY %main {\n"
            f"  %p.0 = f32[{batch},4] parameter(0)\n"
            "  %c.1 = f32[] constant(0)\n"
            f"  ROOT %r.2 = f32[{batch}] reduce(%p.0, %c.1), dimensions={{1}}, to_apply=%add.9\n"
            "}\n\n%add.9 {\n"
            "  %x.3 = f32[] parameter(0)\n"
            "  %y.4 = f32[] parameter(1)\n"
            "  ROOT %s.5 = f32[] add(%x.3, %y.4)\n"
            "}\n"
        )

    a, b = parse_hlo(text(32), "a.hlo"), parse_hlo(text(8), "b.hlo")
    assert compute(a).eager
    # WHEN the aligner looks at the entries, THEN it matches them by position at once, as
    # its steps do (and the callee, the same on both sides, by position too)
    assert _positional_checked(a, b) == 2


class _SmallChunks(_FirstUsers):
    CHUNK = 3


class _ChunksOnly(_FirstUsers):
    SCANS = 0


class _SmallChunksSoon(_FirstUsers):
    CHUNK = 3
    SCANS = 1


def _first_users_agree(m: HloModule) -> int:
    """Assert that the lazy first-user index gives the full map's user for every name of
    every computation (and for a name nobody uses), found by scans, in chunks or both, each
    name asked twice; how many names were asked."""
    asked = 0
    for comp in m.computations.values():
        instrs = comp.instructions
        full = _first_users(instrs)
        for cls in (_FirstUsers, _SmallChunks, _ChunksOnly, _SmallChunksSoon):
            lazy = cls(instrs)
            names = [i.name for i in reversed(instrs)] + ["no such name"]
            for name in names + names[::3]:
                assert lazy.get(name) is full.get(name), (m.path, comp.name, name)
                asked += 1
    return asked


@pytest.mark.pure_only  # (it subclasses a compiled class: _SmallChunks...)
def test_first_users_found_lazily_are_those_of_the_whole_computation() -> None:
    # GIVEN every real dump, WHEN the first user of each name is looked up chunk by chunk,
    # THEN it is the first user in the whole computation
    asked = sum(_first_users_agree(parse_hlo_file(a)) for a, _ in _fixture_pairs()[::7])
    assert asked > 1000


@pytest.mark.pure_only  # (it subclasses a compiled class: _SmallChunks...)
@settings(max_examples=examples(60), deadline=None)
@given(_programs())
def test_generated_first_users_found_lazily_are_those_of_the_whole_computation(
    pair: tuple[str, str],
) -> None:
    # GIVEN generated programs (names used by several users, unused constants)
    for text in pair:
        # WHEN/THEN: see _first_users_agree
        assert _first_users_agree(parse_hlo(text, "m.hlo")) > 0


# -- parsing a pair: B's lines printed as A's are taken over ------------------------------------


def _fixture_pairs() -> list[tuple[Path, Path]]:
    """Every pair of real dumps of one scenario and stage (both orders, and each file with
    itself), and the samples against each other."""
    pairs: list[tuple[Path, Path]] = []
    for folder in sorted((FIXTURES / "jax").glob("*/dumps")):
        stages: dict[str, list[Path]] = {}
        for f in sorted(folder.glob("*.txt")):
            stages.setdefault(f.name.split(".", 2)[2], []).append(f)
        for files in stages.values():
            pairs += list(itertools.product(files, repeat=2))
    samples = sorted(p for p in (FIXTURES / "samples").iterdir() if p.suffix != ".md")
    pairs += list(itertools.product(samples, repeat=2))
    return pairs


def _snapshot(m: HloModule) -> object:
    """Everything the parser gives, but the interning keys (a large literal parsed again gets
    a key of its own; the signature is made of keys)."""
    return (
        m.name,
        m.path,
        m.attrs,
        m.entry,
        m.dialect,
        m.stack_frames,
        [
            (
                c.name,
                c.is_entry,
                c.line,
                c.root,
                [
                    (
                        i.name,
                        i.opcode,
                        i.shape,
                        i.operands,
                        i.attrs,
                        i.calls,
                        i.computation,
                        i.line,
                        i.source,
                        i.literal,
                        i.metadata,
                        i.parameter_number,
                        i.is_root,
                    )
                    for i in c.instructions
                ],
            )
            for c in m.computations.values()
        ],
    )


def test_fingerprints_taken_over_are_those_computed() -> None:
    taken = 0
    for a, b in _fixture_pairs():
        # GIVEN two real dumps parsed as a pair (B's computations printed as A's are A's)
        ma, mb = parse_hlo_files(a, b, plain=False)
        fa = compute(ma)
        # WHEN B's fingerprints take over A's for those computations
        fast, plain = compute(mb, like=fa), compute(mb)
        # THEN they are the fingerprints computed from scratch
        assert_same_fingerprints(fast, plain)
        for name in plain.computations:
            assert fast.skeleton(name) == plain.skeleton(name)
            taken += fast.computations[name] is fa.computations.get(name)
    assert taken > 100  # (the fast path did take fingerprints over)


def _skeletons_of_pairs(a: HloModule, b: HloModule) -> int:
    """For the entries and every pair of same-named computations: assert that the skeletons
    ``skeleton_pair`` gives B (some taken from A by full fingerprint) are those computed from
    scratch.  How many of B's were taken from A."""
    fa, fb = compute(a), compute(b)
    fresh = compute(b)
    pairs = dict.fromkeys(
        [(a.entry, b.entry)] + [(n, n) for n in a.computations if n in b.computations]
    )
    taken = 0
    for na, nb in pairs:
        if fb.computations[nb].skeleton is not None:
            continue  # (given by the eager path, or with B's entry named as one of A's)
        sa, sb = skeleton_pair(a.computations[na], b.computations[nb], fa, fb)
        assert sa == fa.skeleton(na)
        assert sb == fresh.skeleton(nb), (a.path, b.path, na, nb)
        known = set(fa.computations[na].full)
        taken += sum(f in known for f in fb.computations[nb].full)
    return taken


def test_skeletons_taken_by_full_fingerprint_are_those_computed() -> None:
    taken = 0
    for a, b in _fixture_pairs():
        # GIVEN two real dumps (WHEN B's skeletons are taken from A's where their full
        # fingerprints are equal), THEN they are the skeletons computed from scratch
        taken += _skeletons_of_pairs(parse_hlo_file(a), parse_hlo_file(b))
    assert taken > 1000


@settings(max_examples=examples(150), deadline=None)
@given(_programs())
def test_generated_skeletons_taken_by_full_fingerprint_are_those_computed(
    pair: tuple[str, str],
) -> None:
    # GIVEN two versions of a program (batch size, constants, opcodes, dead constants),
    # THEN B's skeletons taken from A's are the skeletons computed from scratch
    _skeletons_of_pairs(parse_hlo(pair[0], "a.hlo"), parse_hlo(pair[1], "b.hlo"))


def _json(a: Path, b: Path, plain: bool) -> str:
    return str(render(diff_paths(a, b, plain=plain), "json"))


def test_every_fixture_pair_parses_and_diffs_the_same_taking_over_equal_lines() -> None:
    pairs = _fixture_pairs()
    assert len(pairs) > 40
    shared = twins = 0
    for a, b in pairs:
        # GIVEN two real dumps, WHEN B is parsed taking over A's equal lines
        fast_a, fast_b = parse_hlo_files(a, b, plain=False)
        plain_a, plain_b = parse_hlo_files(a, b, plain=True)
        # THEN both modules are those of two separate parses
        assert _snapshot(fast_a) == _snapshot(plain_a), (a, b)
        assert _snapshot(fast_b) == _snapshot(plain_b), (a, b)
        ids = {id(i) for c in fast_a.computations.values() for i in c.instructions}
        shared += sum(id(i) in ids for c in fast_b.computations.values() for i in c.instructions)
        twins += sum(c.twin is not None for c in fast_b.computations.values())
        # AND the JSON diff is the same
        assert _json(a, b, plain=False) == _json(a, b, plain=True), (a, b)
    assert shared > 1000  # (the fast path did take lines over)
    assert twins > 10  # (and found computations that differ only in shapes)


def test_dump_folders_diff_the_same_taking_over_equal_lines() -> None:
    # GIVEN the real dump folders of every scenario, each against each (same functions in
    # some, other functions in others)
    folders = sorted((FIXTURES / "jax").glob("*/dumps"))
    assert len(folders) > 5
    for a, b in itertools.product(folders, repeat=2):
        # WHEN diffed taking over equal lines and from scratch, THEN the JSON is the same
        assert _json(a, b, plain=False) == _json(a, b, plain=True), (a, b)


def test_plain_env_parses_both_from_scratch(monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN a dump diffed with itself and RECOMPILE_DOCTOR_PLAIN=1
    f = FIXTURES / "samples" / "01_jax_long_text_stackframes.hlo"
    monkeypatch.setenv("RECOMPILE_DOCTOR_PLAIN", "1")
    a, b = parse_hlo_files(f, f)
    # THEN B shares nothing with A
    assert not any(b.computations[n] is c for n, c in a.computations.items())
    monkeypatch.setenv("RECOMPILE_DOCTOR_PLAIN", "0")
    a, b = parse_hlo_files(f, f)
    assert all(b.computations[n] is c for n, c in a.computations.items())


_MUTATED = [
    FIXTURES / "jax" / "batch_size" / "dumps" / "module_0000.jit_mlp.before_optimizations.txt",
    FIXTURES / "samples" / "01_jax_long_text_stackframes.hlo",
    FIXTURES / "samples" / "02_jax_short_parsable_while.hlo",
]
_SWAP = {"add": "multiply", "multiply": "add", "subtract": "maximum", "maximum": "subtract"}


def _mutate(line: str, kind: int) -> str | None:
    """One instruction line with its shape (a dimension), constant or opcode changed."""
    if kind == 0:
        m = re.search(r"= \w+\[(\d+)", line)
        if m is None:
            return None
        return line[: m.start(1)] + str(int(m.group(1)) + 3) + line[m.end(1) :]
    if kind == 1:
        m = re.search(r"constant\((-?\d+)", line)
        if m is None:
            return None
        return line[: m.start(1)] + str(int(m.group(1)) + 7) + line[m.end(1) :]
    m = re.search(r" (add|multiply|subtract|maximum)\(", line)
    if m is None:
        return None
    return line[: m.start(1)] + _SWAP[m.group(1)] + line[m.end(1) :]


@settings(max_examples=examples(60), deadline=None)
@given(st.sampled_from(_MUTATED), st.integers(0, 2), st.integers(0, 10**6), st.booleans())
def test_one_changed_instruction_diffs_the_same_taking_over_equal_lines(
    source: Path, kind: int, pick: int, swap: bool
) -> None:
    # GIVEN a real dump and a copy with one instruction's shape, constant or opcode changed
    text = source.read_text()
    lines = text.split("\n")
    candidates = [
        (k, new)
        for k, line in enumerate(lines)
        if " = " in line and (new := _mutate(line, kind)) is not None
    ]
    if not candidates:
        return
    k, new = candidates[pick % len(candidates)]
    changed = "\n".join([*lines[:k], new, *lines[k + 1 :]])
    # WHEN diffed taking over equal lines and from scratch, THEN the same
    _assert_fast_is_plain(changed if swap else text, text if swap else changed)


def _assert_fast_is_plain(text_a: str, text_b: str) -> None:
    """The diff of A and B (as files) taking over what they share is the one from scratch:
    the same JSON, or, when the change made the text invalid, the same error."""
    with tempfile.TemporaryDirectory() as tmp:
        a, b = Path(tmp) / "a.hlo", Path(tmp) / "b.hlo"
        a.write_text(text_a)
        b.write_text(text_b)
        try:
            plain = _json(a, b, plain=True)
        except RecompileDoctorError as e:
            with pytest.raises(RecompileDoctorError) as fast_err:
                _json(a, b, plain=False)
            assert str(fast_err.value) == str(e)
            return
        assert _json(a, b, plain=False) == plain


def _computations(lines: list[str]) -> list[tuple[int, int, str]]:
    """(first line, closing line, name) of each called (non-entry) computation."""
    out = []
    for k, line in enumerate(lines):
        toks = _header_tokens(line)
        if toks is None or toks[0] == "ENTRY":
            continue
        end = next(j for j in range(k + 1, len(lines)) if lines[j].lstrip().startswith("}"))
        out.append((k, end, toks[0].lstrip("%")))
    return out


def _named(name: str) -> re.Pattern[str]:
    """``name`` as a whole name (with or without its sigil)."""
    return re.compile(rf"(?<![\w.%-])(%?){re.escape(name)}(?![\w.-])")


def _mutate_computation(lines: list[str], kind: int, pick: int) -> list[str] | None:
    """A called computation changed: an instruction in it (shape, constant or opcode), its
    name (everywhere), a copy of it under another name that nothing calls (a computation on
    one side only), or a caller made to call another computation (same text, other
    callers)."""
    comps = _computations(lines)
    if not comps:
        return None
    first, end, name = comps[pick % len(comps)]
    if kind < 3:
        inside = [
            (k, new)
            for k in range(first + 1, end)
            if " = " in lines[k] and (new := _mutate(lines[k], kind)) is not None
        ]
        if not inside:
            return None
        k, new = inside[(pick // len(comps)) % len(inside)]
        return [*lines[:k], new, *lines[k + 1 :]]
    if kind == 3:
        pattern = _named(name)
        return [pattern.sub(rf"\g<1>{name}_renamed", line) for line in lines]
    if kind == 4:
        copy = [_named(name).sub(rf"\g<1>{name}_extra", line) for line in lines[first : end + 1]]
        return [*lines[:first], *copy, "", *lines[first:]]
    calls = [
        (k, m)
        for k, line in enumerate(lines)
        for m in re.finditer(r"(?:to_apply|calls|body|condition)=%?([\w.-]+)", line)
    ]
    others = [c for _, _, c in comps]
    if not calls or len(others) < 2:
        return None
    k, m = calls[pick % len(calls)]
    callee = next(c for c in others[pick % len(others) :] + others if c != m.group(1))
    line = lines[k]
    return [*lines[:k], line[: m.start(1)] + callee + line[m.end(1) :], *lines[k + 1 :]]


@settings(max_examples=examples(80), deadline=None)
@given(st.sampled_from(_MUTATED), st.integers(0, 5), st.integers(0, 10**6), st.booleans())
def test_changed_called_computations_diff_the_same_taking_over_equal_lines(
    source: Path, kind: int, pick: int, swap: bool
) -> None:
    # GIVEN a real dump and a copy with a called computation changed (an instruction in it,
    # its name, a copy of it on one side only, or a caller calling another computation)
    lines = source.read_text().split("\n")
    changed = _mutate_computation(lines, kind, pick)
    if changed is None:
        return
    # WHEN diffed taking over equal lines, computations and fingerprints, and from scratch,
    # THEN the same
    _assert_fast_is_plain(
        "\n".join(changed if swap else lines), "\n".join(lines if swap else changed)
    )


def test_each_called_computation_change_is_made() -> None:
    # GIVEN the while-loop sample, WHEN each kind of change is made to its first called
    # computation, THEN the text changes (the property above is not vacuous)
    lines = (FIXTURES / "samples" / "02_jax_short_parsable_while.hlo").read_text().split("\n")
    for kind in range(6):
        changed = _mutate_computation(lines, kind, 0)
        assert changed is not None and changed != lines, kind


def test_diff_leaves_the_cyclic_gc_as_it_found_it(tmp_path: Path) -> None:
    import gc

    f = FIXTURES / "samples" / "01_jax_long_text_stackframes.hlo"
    for enabled in (True, False):
        (gc.enable if enabled else gc.disable)()
        try:
            # GIVEN the cyclic GC on (off), WHEN two files are diffed, and a missing file
            diff_paths(f, f)
            with pytest.raises(RecompileDoctorError):
                diff_paths(f, tmp_path / "missing.hlo")
            # THEN it is still on (off)
            assert gc.isenabled() is enabled
        finally:
            gc.enable()


# -- a computation's first line without the lexer ------------------------------------------------

_HEADER_PIECES = [
    "ENTRY ",
    "ENTRY",
    "%",
    "main.3",
    "nan",
    " ",
    "\t",
    "(",
    ")",
    "p: f32[8,4]",
    "{1,0}",
    "{",
    "}",
    " -> ",
    "/*index=5*/",
    "/* x */",
    "//",
    '"',
    "'",
    ",",
    "=",
    "(0x1F)",
    "[",
    "]",
    ">01",
    "metadata={a=1}",
]


@settings(max_examples=examples(400), deadline=None)
@given(st.lists(st.sampled_from(_HEADER_PIECES), max_size=12))
def test_plain_header_tokens_are_the_lexers(pieces: list[str]) -> None:
    # GIVEN a line made of pieces of computation headers and tricky tokens
    line = "".join(pieces)
    # WHEN the plain-header pattern takes it
    got = _header_tokens(line)
    if got is None:
        return
    # THEN they are what the parser reads of the lexer's tokens: ['ENTRY'], name, '{'
    toks = tokenize(line)
    assert toks[-1] == "{"
    assert got == ([*toks[:2], "{"] if toks[0] == "ENTRY" else [toks[0], "{"])


def test_plain_header_tokens_on_real_first_lines() -> None:
    # GIVEN every computation's first line of the real dumps
    n = 0
    for f in sorted(FIXTURES.rglob("*")):
        if f.suffix not in (".hlo", ".txt"):
            continue
        for line in f.read_text().split("\n"):
            got = _header_tokens(line)
            if got is None:
                continue
            n += 1
            toks = tokenize(line)
            # THEN the pattern reads the lexer's tokens
            assert toks[-1] == "{"
            assert got == ([*toks[:2], "{"] if toks[0] == "ENTRY" else [toks[0], "{"])
    assert n > 100


def _dead_chain(direction: str, first: int) -> str:
    return (
        "HloModule m\n\nENTRY %e {\n"
        "  %p = f32[4] parameter(0)\n"
        f"  %x = f32[4] constant({{{first}, 2, 3, 4}})\n"
        f"  %y = f32[4] constant({{{first}, 3, 2, 1}})\n"
        f"  %c = pred[4] compare(%x, %y), direction={direction}\n"
        '  %n = pred[4] not(%c), metadata={op_name="jit(f)/not"}\n'
        "  ROOT %r = f32[4] add(%p, %p)\n}\n"
    )


def test_propagation_runs_again_after_a_hint_matched_something() -> None:
    # GIVEN an unused chain whose comparison changed direction and constants their values:
    # its fingerprints and skeletons differ, nothing matched reaches it, only its op_name
    # matches its end
    a, b = parse_hlo(_dead_chain("LT", 1), "a.hlo"), parse_hlo(_dead_chain("GT", 7), "b.hlo")
    fa, fb = compute(a), compute(b)
    m = _Matcher(a.computations["e"], b.computations["e"])
    # WHEN the aligner's steps run
    m.run(fa.computations["e"], fb.computations["e"], _skeletons(fa, fb, "e", "e"))
    # THEN the hint matched the chain's end and the propagation after it the rest
    assert m.a2b == [0, 1, 2, 3, 4, 5]


@settings(max_examples=examples(150), deadline=None)
@given(_programs(), st.lists(st.integers(0, 10**6), max_size=9), st.booleans())
def test_names_used_are_found_by_scans_as_in_the_set_of_operands(
    pair: tuple[str, str], picks: list[int], unused: bool
) -> None:
    # GIVEN a computation and a few or many of its names (and one nobody uses)
    instrs = parse_hlo(pair[0], "a.hlo").entry_computation.instructions
    names = [instrs[k % len(instrs)].name for k in picks] + ["no such name"] * unused
    # THEN each is used or not as the set of all operands says
    used = {op for ins in instrs for op in ins.operands}
    assert _all_used(names, instrs) == all(n in used for n in names)
