"""Computations whose operands form cycles (hand-written or damaged text) are fingerprinted
in linear time: the depth-first visit opens each instruction once, and the operand that
closes a cycle on its path counts 0, as an operand never defined does.

(A visit that pushed a cycle's instructions again and again until its stack held a million
of them took about a second per cycle: a module of a few hundred cycles took minutes.)
"""

from __future__ import annotations

from typing import Any

from recompile_doctor.differ import diff_modules
from recompile_doctor.differ._unordered import general, hashes
from recompile_doctor.parsers.hlo import parse_hlo

CYCLE = """HloModule m

ENTRY %main {
  %p = f32[8] parameter(0)
  %a = f32[8] add(%p, %c)
  %b = f32[8] multiply(%a, %p)
  ROOT %c = f32[8] subtract(%b, %p)
}
"""


def _no_callee(_name: str) -> int:
    return 0


class _Counted(list[Any]):
    """A list that counts the items read from it by index."""

    reads = 0

    def __getitem__(self, i: Any) -> Any:
        _Counted.reads += 1
        return super().__getitem__(i)


def test_the_operand_closing_a_cycle_counts_zero() -> None:
    # GIVEN a -> c -> b -> a (each an operand of the one before), met at a in printed order
    comp = parse_hlo(CYCLE, "m.hlo").entry_computation
    p, a, b, c = comp.instructions
    # WHEN fingerprinted
    full, skel = general(comp, {}, _no_callee)
    # THEN the visit from a opens c, then b, whose operand a is on its path: that one is 0;
    # then b and c, in printed order after a, are fingerprinted again with a's (as any
    # instruction printed after the operands it uses)
    fp, sp = hashes(p, (), (), {}, _no_callee)
    fb0, sb0 = hashes(b, (0, fp), (0, sp), {}, _no_callee)
    fc0, sc0 = hashes(c, (fb0, fp), (sb0, sp), {}, _no_callee)
    fa, sa = hashes(a, (fp, fc0), (sp, sc0), {}, _no_callee)
    fb, sb = hashes(b, (fa, fp), (sa, sp), {}, _no_callee)
    fc, sc = hashes(c, (fb, fp), (sb, sp), {}, _no_callee)
    assert full == [fp, fa, fb, fc]
    assert skel == [sp, sa, sb, sc]


def test_many_cycles_are_fingerprinted_in_linear_time() -> None:
    # GIVEN a computation of 300 two-instruction cycles
    lines = ["HloModule m", "", "ENTRY %main {", "  %p = f32[8] parameter(0)"]
    for i in range(300):
        lines.append(f"  %x{i} = f32[8] add(%p, %y{i})")
        lines.append(f"  %y{i} = f32[8] multiply(%x{i}, %p)")
    lines += ["  ROOT %r = f32[8] negate(%p)", "}", ""]
    module = parse_hlo("\n".join(lines), "m.hlo")
    comp = module.entry_computation
    comp.instructions = _Counted(comp.instructions)
    # WHEN fingerprinted
    _Counted.reads = 0
    full, _ = general(comp, {}, _no_callee)
    # THEN each instruction is read a few times, not a million (the two of a cycle differ)
    assert _Counted.reads < 10 * len(comp.instructions)
    xs, ys = set(full[1:-1:2]), set(full[2:-1:2])
    assert len(xs) == len(ys) == 1 and xs != ys
    # AND a diff of the module with a copy of itself finds nothing to tell
    other = parse_hlo("\n".join(lines), "m2.hlo")
    assert not diff_modules(module, other).changes


def test_a_cycle_through_an_instruction_itself_counts_zero() -> None:
    # GIVEN an instruction that is its own operand
    text = CYCLE.replace("add(%p, %c)", "add(%p, %a)")
    comp = parse_hlo(text, "m.hlo").entry_computation
    full, skel = general(comp, {}, _no_callee)
    # THEN its own value counts 0 there, and the instructions after it take its fingerprint
    fp, sp = hashes(comp.instructions[0], (), (), {}, _no_callee)
    fa, sa = hashes(comp.instructions[1], (fp, 0), (sp, 0), {}, _no_callee)
    assert full[:2] == [fp, fa] and skel[:2] == [sp, sa]
