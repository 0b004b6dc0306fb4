"""Structural fingerprints of instructions, computed bottom-up (operands, callees first).

Two fingerprints per instruction, in the spirit of XLA's ``HloPrintOptions::Fingerprint()``:

* ``full``: opcode, shape without layout, the attributes that can change the executable, the
  constant's value as numbers (elided constants count as "unknown of this shape"), the operands'
  and callees' fingerprints.  Names, ids, metadata, layouts, control edges and channel ids are
  left out: they cannot cause a recompile.
* ``skeleton``: opcode and operand/callee structure only, no shapes or values, so the same
  program at another batch size (or with other constants) has the same skeleton.
"""

from __future__ import annotations

from dataclasses import dataclass

from recompile_doctor.parsers.hlo import Computation, HloModule, Instruction

#: attributes that never change the compiled executable
IGNORED_ATTRS = frozenset(
    ("control-predecessors", "channel_id", "statistics", "origin", "result_accuracy")
)
#: attributes whose value is part of the skeleton (they do not depend on shapes)
SKELETON_ATTRS = frozenset(
    ("index", "direction", "kind", "custom_call_target", "fusion_kind", "comparison_type")
)
CALL_ATTRS = frozenset(
    [
        "calls",
        "to_apply",
        "body",
        "condition",
        "branch_computations",
        "called_computations",
        "true_computation",
        "false_computation",
        "select",
        "scatter",
    ]
)


@dataclass(slots=True)
class Fingerprints:
    """Per-instruction fingerprints of one module, keyed by (computation, instruction name)."""

    full: dict[int, int]
    skeleton: dict[int, int]
    local: dict[int, tuple[object, ...]]
    computation_full: dict[str, int]
    computation_skeleton: dict[str, int]


def literal_key(ins: Instruction) -> object:
    lit = ins.literal
    if lit is None:
        return None
    if len(lit.values) == 1:
        return lit.numbers()
    if lit.elided:
        return ("elided",)
    if len(lit.values) <= 16:
        return lit.numbers()
    return hash(lit.numbers())


def semantic_attrs(ins: Instruction) -> tuple[tuple[str, str], ...]:
    """The attributes that can change the executable, computation references left out."""
    if not ins.attrs:
        return ()
    return tuple((k, v) for k, v in ins.attrs if k not in IGNORED_ATTRS and k not in CALL_ATTRS)


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
    fp = Fingerprints({}, {}, {}, {}, {})
    full, skel, local = fp.full, fp.skeleton, fp.local
    for comp in _callee_order(module):
        by_name = {i.name: i for i in comp.instructions}
        _linear(comp, by_name, fp)
        root = comp.root_instruction()
        params = tuple(local[id(p)] for p in comp.parameters())
        if root is None:
            fp.computation_full[comp.name] = hash(params)
            fp.computation_skeleton[comp.name] = hash(len(params))
        else:
            fp.computation_full[comp.name] = hash((full[id(root)], params))
            fp.computation_skeleton[comp.name] = hash((skel[id(root)], len(params)))
    del full, skel, local
    return fp


def _linear(comp: Computation, by_name: dict[str, Instruction], fp: Fingerprints) -> None:
    """One pass in printed order (operands come first when printed by XLA); an operand not
    seen yet (hand-written text) sends that instruction through :func:`_visit`."""
    full, skel, local = fp.full, fp.skeleton, fp.local
    cfull, cskel = fp.computation_full, fp.computation_skeleton
    f_by_name: dict[str, int] = {}
    s_by_name: dict[str, int] = {}
    for cur in comp.instructions:
        try:
            ofull = tuple([f_by_name[n] for n in cur.operands])
            oskel = tuple([s_by_name[n] for n in cur.operands])
        except KeyError:
            _visit(cur, by_name, fp)
        else:
            loc = (
                cur.opcode,
                cur.shape.sig,
                cur.parameter_number,
                semantic_attrs(cur),
                literal_key(cur),
            )
            local[id(cur)] = loc
            if cur.calls:
                callees_full = tuple([cfull.get(c, 0) for c in cur.calls])
                callees_skel = tuple([cskel.get(c, 0) for c in cur.calls])
            else:
                callees_full = callees_skel = ()
            full[id(cur)] = hash((loc, callees_full, ofull))
            sk_attrs = tuple([(k, v) for k, v in cur.attrs if k in SKELETON_ATTRS])
            skel[id(cur)] = hash((cur.opcode, cur.parameter_number, sk_attrs, callees_skel, oskel))
        f_by_name[cur.name] = full[id(cur)]
        s_by_name[cur.name] = skel[id(cur)]


def _visit(ins: Instruction, by_name: dict[str, Instruction], fp: Fingerprints) -> None:
    """Fingerprint ``ins`` (iteratively, operands first; printed order is usually enough)."""
    full, skel = fp.full, fp.skeleton
    stack = [ins]
    while stack:
        cur = stack[-1]
        if id(cur) in full:
            stack.pop()
            continue
        pending = [
            op
            for op in (by_name.get(n) for n in cur.operands)
            if op is not None and id(op) not in full and op is not cur
        ]
        if pending and len(stack) < 1_000_000:
            stack.extend(pending)
            continue
        stack.pop()
        ops = [by_name.get(n) for n in cur.operands]
        callees_full = tuple(fp.computation_full.get(c, 0) for c in cur.calls)
        callees_skel = tuple(fp.computation_skeleton.get(c, 0) for c in cur.calls)
        loc = (
            cur.opcode,
            cur.shape.sig,
            cur.parameter_number,
            semantic_attrs(cur),
            literal_key(cur),
        )
        fp.local[id(cur)] = loc
        full[id(cur)] = hash(
            (loc, callees_full, tuple(full.get(id(o), 0) if o else 0 for o in ops))
        )
        sk_attrs = tuple((k, v) for k, v in cur.attrs if k in SKELETON_ATTRS)
        skel[id(cur)] = hash(
            (
                cur.opcode,
                cur.parameter_number,
                sk_attrs,
                callees_skel,
                tuple(skel.get(id(o), 0) if o else 0 for o in ops),
            )
        )
