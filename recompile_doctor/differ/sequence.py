"""``growing-shape``: a dimension that grows from one compilation of a module to the next.

Seen across a sequence (three or more compilations): an entry parameter's dimension increases
at every step, the signature of an accumulator that is concatenated to and fed back.
"""

from __future__ import annotations

from dataclasses import replace
from itertools import pairwise

from recompile_doctor.differ.result import ModuleDiff
from recompile_doctor.parsers.hlo import HloModule, Instruction
from recompile_doctor.rules import SHAPE_RULES


def _params(m: HloModule) -> dict[int, Instruction]:
    return {
        p.parameter_number: p
        for p in m.entry_computation.parameters()
        if p.parameter_number is not None
    }


def _growth(modules: list[HloModule]) -> list[tuple[int, int, list[int], Instruction]]:
    """(parameter number, dim, sizes, parameter) for every dim that grows at every step."""
    per = [_params(m) for m in modules]
    out = []
    for num, first in per[0].items():
        chain = [p.get(num) for p in per]
        if any(c is None for c in chain):
            continue
        shapes = [c.shape for c in chain if c is not None]
        if any(s.rank != shapes[0].rank or s.dtype != shapes[0].dtype for s in shapes):
            continue
        for d in range(shapes[0].rank):
            sizes = [s.dims[d] for s in shapes]
            if all(x < y for x, y in pairwise(sizes)):
                out.append((num, d, sizes, first))
    return out


def _concat_hint(m: HloModule) -> str:
    for c in m.computations.values():
        for i in c.instructions:
            if i.opcode == "concatenate" and i.op_name:
                return f" (concatenate at {i.op_name})"
    return ""


def mark_growth(modules: list[HloModule], diffs: list[ModuleDiff]) -> None:
    """Turn shape causes into ``growing-shape`` where a dimension grows at every step."""
    if len(modules) < 3:
        return
    growth = _growth(modules)
    if not growth:
        return
    _, d, sizes, p = growth[0]
    chain = " → ".join(str(s) for s in sizes)
    message = (
        f"dimension {d} of parameter {p.name} grows at every compilation: {chain} "
        f"over {len(modules)} compilations{_concat_hint(modules[0])}"
    )
    for md in diffs:
        md.explanations = [c for c in md.explanations if c.rule not in SHAPE_RULES]
        md.add_cause("growing-shape", message)
        md.changes = [
            replace(c, rule="growing-shape") if c.rule in SHAPE_RULES else c for c in md.changes
        ]
        md.sort_causes()
        md.equivalent = False
