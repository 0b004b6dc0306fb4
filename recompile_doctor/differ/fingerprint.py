"""Structural fingerprints of instructions, computed bottom-up (operands, callees first).

Two fingerprints per instruction, in the spirit of XLA's ``HloPrintOptions::Fingerprint()``:

* ``full``: opcode, shape without layout, the attributes that can change the executable, the
  constant's value as numbers (elided constants count as "unknown of this shape"), the operands'
  and callees' fingerprints.  Names, ids, metadata, layouts, control edges and channel ids are
  left out: they cannot cause a recompile.
* ``skeleton``: opcode and operand/callee structure only, no shapes or values, so the same
  program at another batch size (or with other constants) has the same skeleton.

For speed, fingerprints are plain ``int`` tuples parallel to ``Computation.instructions`` (no
per-instruction objects or ``id()`` keyed dicts); an instruction's own part is hashed once per
parser :attr:`Instruction.key` (``_keys.LOCAL_FULL``), and computations with the same signature
(``_signature``) share one result (see :func:`compute`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from operator import itemgetter

from recompile_doctor.differ._keys import (
    IGNORED_ATTRS,
    LOCAL_FULL,
    LOCAL_SKELETON,
    SKELETON_ATTRS,
    literal_key,
    local_hashes,
    semantic_attrs,
)
from recompile_doctor.differ._signature import Memo
from recompile_doctor.differ._unordered import general
from recompile_doctor.parsers.hlo import Computation, HloModule
from recompile_doctor.parsers.hlo._intern import CALL_ATTRS


@dataclass(slots=True)
class CompFingerprints:
    """One computation's fingerprints, in printed order (index = position in the computation)."""

    full: tuple[int, ...]  # a tuple: the aligner uses it as a dict key
    skeleton: list[int] | None  # None until asked for: see Fingerprints.skeleton
    params: list[int]  # indices of the parameters, in printed order
    callers: list[int]  # indices of the instructions that call computations
    root: int  # index of the root instruction, -1 for an empty computation


class Fingerprints:
    """Per-computation instruction fingerprints and one fingerprint per computation.

    Skeletons are computed on demand (the aligner needs them only where full fingerprints
    differ, and once per distinct computation): a skeleton is a function of the full
    fingerprint, so a computation's skeleton is memoized by its full fingerprint."""

    __slots__ = ("_cskel", "_cskel_by_full", "computation_full", "computations", "eager", "module")

    def __init__(self, module: HloModule, eager: bool = False) -> None:
        self.module = module
        self.eager = eager  # skeletons computed with the full fingerprints (_unordered.general)
        self.computations: dict[str, CompFingerprints] = {}
        self.computation_full: dict[str, int] = {}
        self._cskel: dict[str, int] = {}
        self._cskel_by_full: dict[int, int] = {}

    def skeleton(self, name: str, known: dict[int, int] | None = None) -> list[int]:
        """The skeletons of computation ``name``'s instructions; ``known``: skeletons by
        full fingerprint (another module's) to take instead of computing them."""
        cf = self.computations[name]
        if cf.skeleton is None:
            comp = self.module.computations[name]
            by_full = self._cskel_by_full
            if known:
                cf.skeleton = _skeletons(comp, self.computation_full, by_full, self, known, cf.full)
            else:
                cf.skeleton = _skeletons(comp, self.computation_full, by_full, self)
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


def skeleton_pair(
    ca: Computation, cb: Computation, fa: Fingerprints, fb: Fingerprints
) -> tuple[list[int], list[int]]:
    """The skeletons of ``ca`` (in ``fa``'s module) and ``cb`` (in ``fb``'s).  When ``cb`` is
    ``ca``'s twin (:attr:`Computation.twin`: the same instructions but for their shapes
    and literals, which skeletons leave out) and the computations they call have the same skeletons on
    both sides, ``cb``'s skeletons are ``ca``'s, computed once.  Otherwise an instruction
    of ``cb`` with the full fingerprint of one of ``ca`` has its skeleton (a function of the
    full fingerprint): only the others are computed (an edit changes what is below it)."""
    sa = fa.skeleton(ca.name)
    cfb = fb.computations[cb.name]
    if cfb.skeleton is None and not fa.eager and not fb.eager:
        if cb.twin is ca:
            ins = cb.instructions
            cs_a, cs_b = fa.computation_skeleton, fb.computation_skeleton
            if all(cs_a(c) == cs_b(c) for k in cfb.callers for c in ins[k].calls):
                cfb.skeleton = sa
                return sa, sa
        known = dict(zip(fa.computations[ca.name].full, sa, strict=True))
        return sa, fb.skeleton(cb.name, known)
    return sa, fb.skeleton(cb.name)


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


#: full fingerprints, indices of parameters, indices of callers, parameters' local hashes
_Linear = tuple[tuple[int, ...], list[int], list[int], tuple[int, ...]]


def compute(module: HloModule, like: Fingerprints | None = None) -> Fingerprints:
    """Full fingerprints of every instruction; computations in printed order (XLA prints
    callees first), else (a callee printed after its caller, a call cycle) in callee order
    with every skeleton computed at once, as the general algorithm does.

    Computations with the same signature (``_signature.signature``: a model repeats its
    fusions layer after layer) share one result: a signature is only given to computations
    that call nothing and print operands before users, and it fixes each instruction's key
    and operand positions, so :func:`_linear` would compute the same lists for them.

    ``like``: the fingerprints of another module (the other side of a diff).  A computation
    that is that module's very object (see :func:`~recompile_doctor.parsers.hlo.parse_hlo_files`)
    and whose callees have the same fingerprints here as there has the same fingerprints: they
    are taken over (they are functions of the computation and its callees' fingerprints)."""
    fp = Fingerprints(module)
    memo: Memo[_Linear] = Memo()
    theirs = like.module.computations if like is not None and not like.eager else None
    for comp in module.computations.values():
        if theirs is not None and theirs.get(comp.name) is comp:
            assert like is not None
            if _take_over(fp, like, comp):
                continue
        if not _add(fp, comp, memo):
            return _eager(module)
    return fp


def _take_over(fp: Fingerprints, like: Fingerprints, comp: Computation) -> bool:
    """Give ``comp`` ``like``'s fingerprints of it if its callees have the same full
    fingerprints in ``fp`` (computed already) as in ``like``."""
    mine, theirs = fp.computation_full, like.computation_full
    name = comp.name
    cf = like.computations[name]
    instrs = comp.instructions
    for k in cf.callers:
        for c in instrs[k].calls:
            got = mine.get(c)
            if got is None or got != theirs.get(c):
                return False
    fp.computations[name] = cf
    mine[name] = theirs[name]
    return True


def _eager(module: HloModule) -> Fingerprints:
    fp = Fingerprints(module, eager=True)
    for comp in _callee_order(module):
        _add(fp, comp, None)
    return fp


def _add(fp: Fingerprints, comp: Computation, memo: Memo[_Linear] | None) -> bool:
    """Fingerprint ``comp`` into ``fp``; False if a callee has no fingerprint yet.  ``memo``
    (by signature) for the lazy path, None for the eager path (skeletons computed too)."""
    cfull = fp.computation_full
    lazy = memo is not None
    got: _Linear | None = None
    if memo is not None:
        got = memo.get(comp)
        if got is None:
            got = _linear(comp, cfull)
            if got is not None:
                memo.put(comp, got)
    if got is None:
        if lazy and any(c not in cfull for ins in comp.instructions for c in ins.calls):
            return False
        cskel = fp.computation_skeleton if lazy else _known(fp._cskel)
        full_list, skel = general(comp, cfull, cskel)
        instrs = comp.instructions
        params = [k for k, ins in enumerate(instrs) if ins.parameter_number is not None]
        callers = [k for k, ins in enumerate(instrs) if ins.calls]
        plocs = [(instrs[k].parameter_number or 0, local_hashes(instrs[k])[0]) for k in params]
        full, locs = tuple(full_list), _param_locs(plocs)
    else:
        full, params, callers, locs = got
        skel = None
    root = root_index(comp)
    fp.computations[comp.name] = CompFingerprints(full, skel, params, callers, root)
    cfull[comp.name] = hash(locs) if root < 0 else hash((full[root], locs))
    if not lazy:
        assert skel is not None
        fp._cskel[comp.name] = hash(len(locs)) if root < 0 else hash((skel[root], len(locs)))
    return True


def _param_locs(plocs: list[tuple[int, int]]) -> tuple[int, ...]:
    """The parameters' local hashes by number (stable: printed order among equal numbers)."""
    if len(plocs) > 1:
        plocs = sorted(plocs, key=_NUMBER)
    return tuple(map(_LOC, plocs))


_NUMBER, _LOC = itemgetter(0), itemgetter(1)


def _known(cskel: dict[str, int]) -> Callable[[str], int]:
    def get(name: str) -> int:
        return cskel.get(name, 0)

    return get


def _linear(comp: Computation, cfull: dict[str, int]) -> _Linear | None:
    """Full fingerprints in one pass in printed order (XLA prints operands first), with the
    indices of parameters and callers and the parameters' local hashes; None when an operand
    or callee is printed later (hand-written text): then :func:`._unordered.general` does
    it.  The instruction's own part is looked up by its parser key (see ``_keys``)."""
    f_of: dict[str, int] = {}
    fget, cget, lget = f_of.__getitem__, cfull.__getitem__, LOCAL_FULL.get
    params: list[int] = []
    callers: list[int] = []
    plocs: list[tuple[int, int]] = []
    try:
        for ins in comp.instructions:
            loc = lget(ins.key)
            if loc is None:
                loc = local_hashes(ins)[0]
            # map() with a bound __getitem__ runs in C; a KeyError: an operand or callee is
            # printed later.  The three branches build the same tuple (loc, callees, operands).
            ops = ins.operands
            if ins.calls:
                callers.append(len(f_of))
                f = hash((loc, tuple(map(cget, ins.calls)), tuple(map(fget, ops))))
            elif ops:
                f = hash((loc, (), tuple(map(fget, ops))))
            else:
                f = hash((loc, (), ()))
            if ins.parameter_number is not None:
                params.append(len(f_of))
                plocs.append((ins.parameter_number, loc))
            f_of[ins.name] = f
    except KeyError:
        return None
    if len(f_of) != len(comp.instructions):  # a name defined twice (not from the parser)
        return None
    # names are unique: the values are in printed order
    return tuple(f_of.values()), params, callers, _param_locs(plocs)


def _skeletons(
    comp: Computation,
    cfull: dict[str, int],
    by_full: dict[int, int],
    fp: Fingerprints,
    known: dict[int, int] | None = None,
    full: tuple[int, ...] = (),
) -> list[int]:
    """Skeletons of a computation whose operands are all printed before their users; a
    callee's skeleton comes from ``by_full`` (C lookups), else from ``fp``.  ``known``:
    skeletons by full fingerprint, taken for the instructions whose fingerprint (``full``,
    in printed order) is there."""
    s_of: dict[str, int] = {}
    sget, lget = s_of.__getitem__, LOCAL_SKELETON.get
    kget = known.get if known is not None else None
    for k, ins in enumerate(comp.instructions):
        if kget is not None:
            got = kget(full[k])
            if got is not None:
                s_of[ins.name] = got
                continue
        loc = lget(ins.key)
        if loc is None:
            loc = local_hashes(ins)[1]
        ops = ins.operands
        if ins.calls:  # (the branches build the same tuple, as in _linear)
            try:
                callees = tuple(map(by_full.__getitem__, map(cfull.__getitem__, ins.calls)))
            except KeyError:
                callees = tuple([fp.computation_skeleton(c) for c in ins.calls])
            s_of[ins.name] = hash((loc, callees, tuple(map(sget, ops))))
        elif ops:
            s_of[ins.name] = hash((loc, (), tuple(map(sget, ops))))
        else:
            s_of[ins.name] = hash((loc, (), ()))
    return list(s_of.values())  # in printed order: names are unique in a computation


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
