"""Fingerprints of a computation printed out of order (hand-written text) or in a call cycle.

Printed order, with a depth-first visit of operands printed later; an operand never defined
(or closing a cycle of operands on the visit's path) counts 0.  Computes full fingerprints and
skeletons together, with the same hashes as :mod:`.fingerprint`.
"""

from __future__ import annotations

from collections.abc import Callable

from recompile_doctor.differ._keys import local_hashes
from recompile_doctor.parsers.hlo import Computation, Instruction


def general(
    comp: Computation, cfull: dict[str, int], cskel: Callable[[str], int]
) -> tuple[list[int], list[int]]:
    """Printed order with a depth-first visit of operands printed later (or never: 0)."""
    instrs = comp.instructions
    index = {ins.name: k for k, ins in enumerate(instrs)}
    n = len(instrs)
    full: list[int | None] = [None] * n
    skel: list[int] = [0] * n
    f_of: dict[str, int] = {}
    s_of: dict[str, int] = {}
    for k, cur in enumerate(instrs):
        try:
            ofull = tuple([f_of[o] for o in cur.operands])
            oskel = tuple([s_of[o] for o in cur.operands])
        except KeyError:
            visit(k, instrs, index, full, skel, cfull, cskel)
        else:
            full[k], skel[k] = hashes(cur, ofull, oskel, cfull, cskel)
        f = full[k]
        assert f is not None
        f_of[cur.name] = f
        s_of[cur.name] = skel[k]
    return [f or 0 for f in full], skel


def hashes(
    ins: Instruction,
    ofull: tuple[int, ...],
    oskel: tuple[int, ...],
    cfull: dict[str, int],
    cskel: Callable[[str], int],
) -> tuple[int, int]:
    """The same hashes as the loops of :func:`.fingerprint._linear` and ``._skeletons``."""
    if ins.calls:
        callees_full = tuple([cfull.get(c, 0) for c in ins.calls])
        callees_skel = tuple([cskel(c) for c in ins.calls])
    else:
        callees_full = callees_skel = ()
    lf, ls = local_hashes(ins)
    return hash((lf, callees_full, ofull)), hash((ls, callees_skel, oskel))


def visit(
    start: int,
    instrs: list[Instruction],
    index: dict[str, int],
    full: list[int | None],
    skel: list[int],
    cfull: dict[str, int],
    cskel: Callable[[str], int],
) -> None:
    """Fingerprint ``instrs[start]`` (iteratively, operands first; an operand never defined,
    or one that closes a cycle of operands -- on the path of this depth-first visit --
    counts 0).  Each instruction is opened once: the work is linear in the operands."""
    stack = [start]
    opened: set[int] = set()  # on the path: operands taken, not fingerprinted yet
    while stack:
        cur = stack[-1]
        if full[cur] is not None:
            stack.pop()
            continue
        ops = [index.get(n) for n in instrs[cur].operands]
        if cur not in opened:
            opened.add(cur)
            pending = [o for o in ops if o is not None and full[o] is None and o not in opened]
            if pending:
                stack.extend(pending)
                continue
        stack.pop()
        opened.discard(cur)
        ofull = tuple([(full[o] or 0) if o is not None else 0 for o in ops])
        oskel = tuple([skel[o] if o is not None else 0 for o in ops])
        full[cur], skel[cur] = hashes(instrs[cur], ofull, oskel, cfull, cskel)
