"""Structural fingerprints of instructions, computed bottom-up (operands, callees first).

Two fingerprints per instruction, in the spirit of XLA's ``HloPrintOptions::Fingerprint()``:

* ``full``: opcode, shape without layout, the attributes that can change the executable, the
  constant's value as numbers (elided constants count as "unknown of this shape"), the operands'
  and callees' fingerprints.  Names, ids, metadata, layouts, control edges and channel ids are
  left out: they cannot cause a recompile.
* ``skeleton``: opcode and operand/callee structure only, no shapes or values, so the same
  program at another batch size (or with other constants) has the same skeleton.

For speed, fingerprints are plain ``int`` lists parallel to ``Computation.instructions`` (no
per-instruction objects or ``id()`` keyed dicts), and the attribute filtering is cached per
distinct ``attrs`` tuple (the parser shares equal tuples, so most lookups hit).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from recompile_doctor.differ._keys import (
    CALL_ATTRS,
    IGNORED_ATTRS,
    LITERALS,
    SKELETON_ATTRS,
    literal_key,
    local_key,
    semantic_attrs,
    split,
)
from recompile_doctor.differ._unordered import general
from recompile_doctor.parsers.hlo import Computation, HloModule


@dataclass(slots=True)
class CompFingerprints:
    """One computation's fingerprints, in printed order (index = position in the computation)."""

    full: list[int]
    skeleton: list[int] | None  # None until asked for: see Fingerprints.skeleton
    params: list[int]  # indices of the parameters, in printed order
    callers: list[int]  # indices of the instructions that call computations
    root: int  # index of the root instruction, -1 for an empty computation


class Fingerprints:
    """Per-computation instruction fingerprints and one fingerprint per computation.

    Skeletons are computed on demand (the aligner needs them only where full fingerprints
    differ, and once per distinct computation): a skeleton is a function of the full
    fingerprint, so a computation's skeleton is memoized by its full fingerprint."""

    __slots__ = ("_cskel", "_cskel_by_full", "computation_full", "computations", "module")

    def __init__(self, module: HloModule) -> None:
        self.module = module
        self.computations: dict[str, CompFingerprints] = {}
        self.computation_full: dict[str, int] = {}
        self._cskel: dict[str, int] = {}
        self._cskel_by_full: dict[int, int] = {}

    def skeleton(self, name: str) -> list[int]:
        cf = self.computations[name]
        if cf.skeleton is None:
            cf.skeleton = _skeletons(self.module.computations[name], self.computation_skeleton)
        return cf.skeleton

    def computation_skeleton(self, name: str) -> int:
        got = self._cskel.get(name)
        if got is None:
            key = self.computation_full[name]
            got = self._cskel_by_full.get(key)
            if got is None:
                cf = self.computations[name]
                n = len(cf.params)
                got = hash(n) if cf.root < 0 else hash((self.skeleton(name)[cf.root], n))
                self._cskel_by_full[key] = got
            self._cskel[name] = got
        return got


def root_index(comp: Computation) -> int:
    """Index of :meth:`Computation.root_instruction` (-1 when empty)."""
    instrs = comp.instructions
    if not instrs:
        return -1
    if comp.root is None or instrs[-1].name == comp.root:
        return len(instrs) - 1
    for k, ins in enumerate(instrs):
        if ins.name == comp.root:
            return k
    return len(instrs) - 1


def _callee_order(module: HloModule) -> list[Computation]:
    """Computations with every callee before its callers."""
    comps = module.computations
    seen: set[str] = set()
    order: list[Computation] = []
    for start in comps:
        if start in seen:
            continue
        stack: list[tuple[str, bool]] = [(start, False)]
        while stack:
            name, done = stack.pop()
            if done:
                order.append(comps[name])
                continue
            if name in seen:
                continue
            seen.add(name)
            stack.append((name, True))
            for ins in comps[name].instructions:
                for c in ins.calls:
                    if c not in seen and c in comps:
                        stack.append((c, False))
    return order


def compute(module: HloModule) -> Fingerprints:
    """Full fingerprints of every instruction; computations in printed order (XLA prints
    callees first), else (a callee printed after its caller, a call cycle) in callee order
    with every skeleton computed at once, as the general algorithm does."""
    fp = Fingerprints(module)
    for comp in module.computations.values():
        if not _add(fp, comp, lazy=True):
            return _eager(module)
    return fp


def _eager(module: HloModule) -> Fingerprints:
    fp = Fingerprints(module)
    for comp in _callee_order(module):
        _add(fp, comp, lazy=False)
    return fp


def _add(fp: Fingerprints, comp: Computation, lazy: bool) -> bool:
    """Fingerprint ``comp`` into ``fp``; False if a callee has no fingerprint yet (lazy)."""
    cfull = fp.computation_full
    got = _linear(comp, cfull) if lazy else None
    if got is None:
        if lazy and any(c not in cfull for ins in comp.instructions for c in ins.calls):
            return False
        cskel = fp.computation_skeleton if lazy else _known(fp._cskel)
        full, skel = general(comp, cfull, cskel)
        params = [k for k, ins in enumerate(comp.instructions) if ins.parameter_number is not None]
        callers = [k for k, ins in enumerate(comp.instructions) if ins.calls]
        plocs = [
            (comp.instructions[k].parameter_number, local_key(comp.instructions[k])) for k in params
        ]
    else:
        full, params, callers, plocs = got
        skel = None
    root = root_index(comp)
    fp.computations[comp.name] = CompFingerprints(full, skel, params, callers, root)
    plocs.sort(key=_number)  # stable: printed order among equal numbers
    locs = tuple([loc for _, loc in plocs])
    cfull[comp.name] = hash(locs) if root < 0 else hash((full[root], locs))
    if not lazy:
        assert skel is not None
        fp._cskel[comp.name] = hash(len(locs)) if root < 0 else hash((skel[root], len(locs)))
    return True


def _number(p: tuple[int | None, tuple[object, ...]]) -> int:
    return p[0] or 0


def _known(cskel: dict[str, int]) -> Callable[[str], int]:
    def get(name: str) -> int:
        return cskel.get(name, 0)

    return get


_Linear = tuple[list[int], list[int], list[int], list[tuple[int | None, tuple[object, ...]]]]


def _linear(comp: Computation, cfull: dict[str, int]) -> _Linear | None:
    """Full fingerprints in one pass in printed order (XLA prints operands first), with the
    indices of parameters and callers and the parameters' local keys; None when an operand or
    callee is printed later (hand-written text): then :func:`._unordered.general` does it."""
    f_of: dict[str, int] = {}
    fget = f_of.__getitem__
    full: list[int] = []
    params: list[int] = []
    callers: list[int] = []
    plocs: list[tuple[int | None, tuple[object, ...]]] = []
    literals = LITERALS
    for ins in comp.instructions:
        try:
            # map() with a bound __getitem__ runs in C; a KeyError means an operand comes later
            ofull = tuple(map(fget, ins.operands))
        except KeyError:
            return None
        attrs = ins.attrs
        sem = split(attrs)[0] if attrs else ()
        lit = ins.literal
        key: object = None
        if lit is not None:
            key = ("elided",) if lit.elided and len(lit.values) != 1 else literals[lit.values]
        loc = (ins.opcode, ins.shape.sig, ins.parameter_number, sem, key)
        calls = ins.calls
        if calls:
            callers.append(len(full))
            try:
                callees_full = tuple(map(cfull.__getitem__, calls))
            except KeyError:
                return None
        else:
            callees_full = ()
        if loc[2] is not None:
            params.append(len(full))
            plocs.append((loc[2], loc))
        f = hash((loc, callees_full, ofull))
        full.append(f)
        f_of[ins.name] = f
    return full, params, callers, plocs


def _skeletons(comp: Computation, cskel: Callable[[str], int]) -> list[int]:
    """Skeletons of a computation whose operands are all printed before their users."""
    s_of: dict[str, int] = {}
    sget = s_of.__getitem__
    out: list[int] = []
    for ins in comp.instructions:
        oskel = tuple(map(sget, ins.operands))
        sk = split(ins.attrs)[1] if ins.attrs else ()
        callees = tuple([cskel(c) for c in ins.calls]) if ins.calls else ()
        s = hash((ins.opcode, ins.parameter_number, sk, callees, oskel))
        out.append(s)
        s_of[ins.name] = s
    return out


__all__ = [
    "CALL_ATTRS",
    "IGNORED_ATTRS",
    "SKELETON_ATTRS",
    "CompFingerprints",
    "Fingerprints",
    "compute",
    "literal_key",
    "root_index",
    "semantic_attrs",
]
