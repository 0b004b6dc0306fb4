"""Roll instruction-level differences up into causes (SPEC rule ids), each with its evidence."""

from __future__ import annotations

import posixpath
from collections import Counter
from collections.abc import Callable, Iterable
from itertools import chain, compress, count, islice, repeat
from operator import attrgetter, contains
from typing import Final

from recompile_doctor.differ.align import Alignment
from recompile_doctor.differ.fingerprint import semantic_attrs
from recompile_doctor.differ.result import Change, ModuleDiff, Note, Side
from recompile_doctor.parsers.hlo import Computation, HloModule, Instruction

#: ops that come and go with a shape change (e.g. batch 1 drops a broadcast)
PLUMBING: Final = frozenset(
    [
        "broadcast",
        "reshape",
        "bitcast",
        "copy",
        "transpose",
        "convert",
        "slice",
        "constant",
        "get-tuple-element",
        "tuple",
        "bitcast-convert",
    ]
)
#: module attributes that cannot change the executable's behaviour for a recompile diagnosis
IGNORED_MODULE_ATTRS: Final = frozenset(
    (
        "entry_computation_layout",
        "is_scheduled",
        "allow_spmd_sharding_propagation_to_parameters",
        "allow_spmd_sharding_propagation_to_output",
        "frontend_attributes",
        "origin_recovery_table",
        "debug_attributes",
    )
)
LARGE_CONSTANT: Final = 10  # XLA prints constants with more elements as {...}
MAX_CHANGES_PER_KIND: Final = 50
SAME_HLO: Final = (
    "the HLO is the same: if this module was compiled again, the cause is "
    "outside the HLO text; look in the log for a changed weak type, static argument, cache "
    "key or compiler flag"
)


def side(module: HloModule, ins: Instruction) -> Side:
    text = ins.text
    lit = ins.literal
    if (lit is not None and lit.count > LARGE_CONSTANT) or len(text) > 400:
        text = f"{ins.name} = {ins.shape.text(True)} {ins.opcode}("
        text += lit.short() if lit is not None else ", ".join(ins.operands[:8])
        text += ")"
    return Side("%" + ins.name, ins.computation, text, ins.line)


class _FirstUsers:
    """Operand name -> its first user in printed order.

    A name is looked for with a scan in C from the first instruction not indexed (a changed
    instruction's user is usually printed near it), five times cheaper an instruction than
    indexing; once the scans have gone over the computation :data:`SCANS` times, the
    instructions are indexed instead, a chunk at a time as far as the names asked for need
    (the first chunk that uses a name holds its first user).  Answers are kept."""

    __slots__ = ("chunks", "done", "found", "instrs", "scanned")
    CHUNK = 2048
    SCANS = 4

    def __init__(self, instrs: list[Instruction]) -> None:
        self.instrs = instrs
        self.chunks: list[dict[str, Instruction]] = []
        self.done = 0  # instructions indexed
        self.scanned = 0  # instructions scanned
        self.found: dict[str, Instruction | None] = {}

    def get(self, name: str) -> Instruction | None:
        if name in self.found:
            return self.found[name]
        got = self._get(name)
        self.found[name] = got
        return got

    def _get(self, name: str) -> Instruction | None:
        for chunk in self.chunks:
            got = chunk.get(name)
            if got is not None:
                return got
        instrs = self.instrs
        if self.scanned < self.SCANS * len(instrs):
            rest = map(_OPERANDS, islice(instrs, self.done, None))
            k = next(compress(count(self.done), map(contains, rest, repeat(name))), -1)
            self.scanned += (k + 1 if k >= 0 else len(instrs)) - self.done
            return instrs[k] if k >= 0 else None
        while self.done < len(instrs):
            chunk = _first_users(instrs[self.done : self.done + self.CHUNK])
            self.done += self.CHUNK
            self.chunks.append(chunk)
            got = chunk.get(name)
            if got is not None:
                return got
        return None


#: id(computation) -> (the computation, its first user of each name), during one
#: :func:`explain`.  The computation is kept with its entry so that its id cannot be reused
#: by another while the entry exists (an ``id(module)`` key alone went stale when a freed
#: module's id was reused).
_USERS: Final[dict[int, tuple[Computation, _FirstUsers]]] = {}


def _described(module: HloModule, ins: Instruction) -> Instruction:
    """``ins`` if it has an ``op_name``, else the nearest user that has one (constants are
    printed without metadata; their broadcast often too)."""
    comp = module.computations.get(ins.computation) if ins.op_name is None else None
    if comp is None:
        return ins
    got = _USERS.get(id(comp))
    if got is not None and got[0] is comp:
        users = got[1]
    else:
        if len(_USERS) > 64:
            _USERS.clear()
        users = _FirstUsers(comp.instructions)
        _USERS[id(comp)] = (comp, users)
    cur = ins
    for _ in range(6):
        nxt = users.get(cur.name)
        if nxt is None:
            break
        if nxt.op_name is not None:
            return nxt
        cur = nxt
    return ins


def _first_users(instrs: list[Instruction]) -> dict[str, Instruction]:
    """Operand name -> its first user in printed order (C iterators: later entries of a
    dict built from pairs win, so the pairs go in reverse printed order)."""
    rev = instrs[::-1]
    ops = list(map(_OPERANDS, rev))
    names = chain.from_iterable(ops)
    return dict(zip(names, chain.from_iterable(map(repeat, rev, map(len, ops))), strict=True))


_OPERANDS: Final = attrgetter("operands")


def where(module: HloModule, ins: Instruction) -> str:
    """``at jit(f)/mul (script.py:12)`` from metadata (or a user's), or an empty string."""
    ins = _described(module, ins)
    parts = []
    if ins.op_name:
        parts.append(f"at {ins.op_name}")
    file, line = module.source_of(ins)
    if file:
        parts.append(f"({posixpath.basename(file)}:{line})" if line else f"({file})")
    return " ".join(parts)


class _Builder:
    def __init__(self, a: HloModule, b: HloModule, md: ModuleDiff) -> None:
        self.a, self.b, self.md = a, b, md
        self.per_kind: Counter[str] = Counter()

    def full(self, kind: str) -> bool:
        """True once ``kind`` has its share of changes: later ones are only counted."""
        return self.per_kind[kind] >= MAX_CHANGES_PER_KIND

    def change(
        self, kind: str, x: Instruction | None, y: Instruction | None, detail: str, rule: str
    ) -> None:
        self.per_kind[kind] += 1
        if self.per_kind[kind] > MAX_CHANGES_PER_KIND:
            return
        op_name = _described(self.b, y).op_name if y is not None else None
        if op_name is None and x is not None:
            op_name = _described(self.a, x).op_name
        self.md.changes.append(
            Change(
                kind,
                side(self.a, x) if x is not None else None,
                side(self.b, y) if y is not None else None,
                op_name,
                detail,
                rule,
            )
        )


def _weight_shaped(module: HloModule, ins: Instruction) -> bool:
    """A constant that looks like weights: large, a float array, or read from a variable
    (TF's frozen ``.../ReadVariableOp``); scalars and integer arrays are hyper-parameters."""
    lit = ins.literal
    if lit is None:
        return False
    if lit.count > LARGE_CONSTANT or "ReadVariableOp" in (ins.op_name or ""):
        return True
    dtype = ins.shape.dtype
    return lit.count > 1 and (dtype.startswith(("f", "bf")) or dtype in ("c64", "c128"))


def _names(items: Iterable[Instruction], limit: int = 3) -> str:
    names = [i.name for i in items]
    more = f" and {len(names) - limit} more" if len(names) > limit else ""
    return ", ".join(names[:limit]) + more


def explain(
    a: HloModule,
    b: HloModule,
    al: Alignment,
    same_computation: Callable[[str, str], bool] | None = None,
) -> ModuleDiff:
    """The causes of the differences between ``a`` and ``b`` as aligned by ``al``.
    ``same_computation(ca, cb)``: whether A's computation ``ca`` and B's ``cb`` compute the
    same (their fingerprints); without it, only the computations ``al`` paired count as the
    same."""
    try:
        return _explain(a, b, al, same_computation)
    finally:
        _USERS.clear()  # (it holds computations: they go with their modules)


def _explain(
    a: HloModule,
    b: HloModule,
    al: Alignment,
    same_computation: Callable[[str, str], bool] | None,
) -> ModuleDiff:
    paired = set(al.computations)

    def same_callees(x: Instruction, y: Instruction) -> bool:
        """Whether ``x`` and ``y`` call the same computations: ones the alignment paired
        (their differences are the pairs' own), or ones computing the same."""
        if len(x.calls) != len(y.calls):
            return False
        if all(map(paired.__contains__, zip(x.calls, y.calls, strict=True))):  # (usual, in C)
            return True
        return all(
            (cx, cy) in paired or (same_computation is not None and same_computation(cx, cy))
            for cx, cy in zip(x.calls, y.calls, strict=True)
        )

    md = ModuleDiff(a.name if a.name == b.name else f"{a.name} / {b.name}", a.path, b.path, False)
    bld = _Builder(a, b, md)
    params: list[tuple[Instruction, Instruction]] = []
    followers: list[tuple[Instruction, Instruction]] = []
    small: list[tuple[Instruction, Instruction]] = []
    large: list[tuple[Instruction, Instruction]] = []
    elided: list[tuple[Instruction, Instruction]] = []
    frozen: list[tuple[Instruction, Instruction]] = []
    other: list[tuple[Instruction, Instruction, str]] = []
    for x, y in al.iter_pairs():
        if x.opcode != y.opcode:
            if {x.opcode, y.opcode} == {"parameter", "constant"}:
                frozen.append((x, y))
            else:
                other.append((x, y, f"opcode {x.opcode} → {y.opcode}"))
            continue
        if x.shape is not y.shape and x.shape.sig != y.shape.sig:
            if x.parameter_number is not None and x.computation == a.entry:
                params.append((x, y))
            else:
                followers.append((x, y))
        if x.literal is not None and y.literal is not None:
            same = x.literal.same_value(y.literal)
            if same is None:
                elided.append((x, y))
            elif not same and x.shape.sig == y.shape.sig:
                (large if _weight_shaped(a, x) else small).append((x, y))
        if (x.calls or y.calls) and not same_callees(x, y):
            # another computation called (a sum's reduce now applying a max): the pairs of
            # computations the alignment made do not show it
            was = ", ".join(f"%{c}" for c in x.calls) or "none"
            now = ", ".join(f"%{c}" for c in y.calls) or "none"
            other.append((x, y, f"calls {was} → {now}"))
        if x.attrs == y.attrs:  # the parser shares equal tuples: usually an identity check
            continue
        ax, ay = semantic_attrs(x), semantic_attrs(y)
        if ax != ay:
            keys = sorted({k for k, _ in set(ax) ^ set(ay)})
            other.append((x, y, "attribute " + ", ".join(keys) + " changed"))

    shape_cause = _shapes(a, md, bld, params, followers)
    _frozen(a, b, md, bld, frozen, large)
    _constants(a, b, md, bld, small)
    _graph(a, b, md, bld, al, other, shape_cause)
    if elided:
        _elided(md, elided)
    md.sort_causes()
    md.equivalent = not md.explanations
    if md.equivalent:
        md.notes.append(Note(None, SAME_HLO))
    md.stats = {
        "matched": al.matched,
        "only_a": len(al.only_a),
        "only_b": len(al.only_b),
        "instructions_a": a.instruction_count(),
        "instructions_b": b.instruction_count(),
        **{f"changes.{k}": v for k, v in sorted(bld.per_kind.items())},
    }
    return md


def _shapes(
    a: HloModule,
    md: ModuleDiff,
    bld: _Builder,
    params: list[tuple[Instruction, Instruction]],
    followers: list[tuple[Instruction, Instruction]],
) -> bool:
    if not params and not followers:
        return False
    dtype = [(x, y) for x, y in params if x.shape.dtype != y.shape.dtype]
    leading = [
        (x, y)
        for x, y in params
        if x.shape.dtype == y.shape.dtype
        and x.shape.rank == y.shape.rank > 0
        and x.shape.dims[1:] == y.shape.dims[1:]
    ]
    rest = [(x, y) for x, y in params if (x, y) not in dtype and (x, y) not in leading]
    n = len(followers)
    followed = f"; {n} instruction{'s' if n != 1 else ''} followed" if n else ""
    for x, y in dtype:
        bld.change("parameter-dtype", x, y, f"{x.shape} → {y.shape}", "dtype-changed")
    if dtype:
        what = "; ".join(f"parameter {x.name}: {x.shape} → {y.shape}" for x, y in dtype[:3])
        md.add_cause("dtype-changed", f"element type changed: {what}{followed}")
    sizes = {(x.shape.dims[0], y.shape.dims[0]) for x, y in leading}
    if leading and len(sizes) == 1 and not rest:
        old, new = next(iter(sizes))
        for x, y in leading:
            bld.change("parameter-shape", x, y, f"{x.shape} → {y.shape}", "batch-size-changed")
        md.add_cause(
            "batch-size-changed",
            f"batch size {old} → {new}: leading dimension of "
            f"{'parameter' if len(leading) == 1 else 'parameters'} {_names(x for x, _ in leading)}"
            f" ({leading[0][0].shape} → {leading[0][1].shape}){followed}",
        )
        rule = "batch-size-changed"
    else:
        rest = rest + leading
        rule = "dtype-changed" if dtype and not rest else "shape-changed"
    for x, y in rest:
        bld.change("parameter-shape", x, y, f"{x.shape} → {y.shape}", "shape-changed")
    if rest:
        what = "; ".join(f"parameter {x.name}: {x.shape} → {y.shape}" for x, y in rest[:3])
        md.add_cause("shape-changed", f"shape changed: {what}{followed}")
    if not params:
        x, y = followers[0]
        md.add_cause(
            "shape-changed",
            f"{n} instruction{'s' if n != 1 else ''} changed shape, first {x.name}: "
            f"{x.shape} → {y.shape} {where(a, x)}".rstrip(),
        )
    for k, (x, y) in enumerate(followers):
        if bld.full("shape"):  # after a shape change most instructions follow: count the rest
            bld.per_kind["shape"] += len(followers) - k
            break
        bld.change("shape", x, y, f"{x.shape} → {y.shape}", rule)
    return True


def _frozen(
    a: HloModule,
    b: HloModule,
    md: ModuleDiff,
    bld: _Builder,
    frozen: list[tuple[Instruction, Instruction]],
    large: list[tuple[Instruction, Instruction]],
) -> None:
    for x, y in frozen:
        kind = "parameter-to-constant" if x.opcode == "parameter" else "constant-to-parameter"
        bld.change(kind, x, y, f"{x.opcode} {x.shape} → {y.opcode} {y.shape}", "frozen-weights")
    if frozen:
        x, y = frozen[0]
        p, c = (x, y) if x.opcode == "parameter" else (y, x)
        side_p, side_c = ("A", "B") if p is x else ("B", "A")
        n = len(frozen)
        what = "an input passed as a parameter" if n == 1 else f"{n} inputs passed as parameters"
        verb = "is baked in as a constant" if n == 1 else "are baked in as constants"
        loc = where(b if c is y else a, c)
        md.add_cause(
            "frozen-weights",
            f"{what} in {side_p} {verb} in {side_c}: parameter {p.name} {p.shape} ↔ "
            f"constant {c.name}" + (f" {loc}" if loc else ""),
        )
    for x, y in large:
        assert x.literal is not None and y.literal is not None
        d = x.literal.differing(y.literal)
        bld.change(
            "constant",
            x,
            y,
            f"{x.literal.short()} → {y.literal.short()}: {d} of {x.literal.count} elements differ",
            "frozen-weights",
        )
    if large:
        x, y = large[0]
        n = len(large)
        md.add_cause(
            "frozen-weights",
            f"{n} weight-shaped constant{'s differ' if n != 1 else ' differs'} in value "
            f"({_names(x for x, _ in large)}; {x.shape}: "
            f"{x.literal.differing(y.literal) if x.literal and y.literal else 0} of "
            f"{x.literal.count if x.literal else 0} elements differ {where(a, x)})".replace(
                " )", ")"
            ),
        )


def _constants(
    a: HloModule,
    b: HloModule,
    md: ModuleDiff,
    bld: _Builder,
    small: list[tuple[Instruction, Instruction]],
) -> None:
    for x, y in small:
        assert x.literal is not None and y.literal is not None
        bld.change(
            "constant", x, y, f"{x.literal.short()} → {y.literal.short()}", "constant-changed"
        )
    if small:
        what = "; ".join(
            f"{x.name} {x.literal.short() if x.literal else ''} → "
            f"{y.literal.short() if y.literal else ''} {where(a, x)}".rstrip()
            for x, y in small[:3]
        )
        more = f" and {len(small) - 3} more" if len(small) > 3 else ""
        md.add_cause("constant-changed", f"constant value changed: {what}{more}")


def _graph(
    a: HloModule,
    b: HloModule,
    md: ModuleDiff,
    bld: _Builder,
    al: Alignment,
    other: list[tuple[Instruction, Instruction, str]],
    shape_cause: bool,
) -> None:
    summary: Counter[tuple[str, str, str]] = Counter()
    only_a = [i for i in al.only_a if not (shape_cause and i.opcode in PLUMBING)]
    only_b = [i for i in al.only_b if not (shape_cause and i.opcode in PLUMBING)]
    for i in only_a:
        bld.change("removed", i, None, f"- {i.opcode} {i.shape}", "graph-changed")
        summary[("-", i.opcode, i.op_name or "")] += 1
    for i in only_b:
        bld.change("added", None, i, f"+ {i.opcode} {i.shape}", "graph-changed")
        summary[("+", i.opcode, i.op_name or "")] += 1
    kept = [(x, y, d) for x, y, d in other if not (shape_cause and d.startswith("attribute"))]
    for x, y, d in kept:
        bld.change("opcode" if d.startswith("opcode") else "attribute", x, y, d, "graph-changed")
    mods = []
    for key in sorted(set(a.attrs) | set(b.attrs)):
        if key in IGNORED_MODULE_ATTRS or a.attrs.get(key) == b.attrs.get(key):
            continue
        mods.append(f"module attribute {key} changed")
    if not (summary or kept or mods):
        return
    parts = [
        f"{sign}{n} {op}" + (f" at {name}" if name else "")
        for (sign, op, name), n in sorted(summary.items(), key=lambda kv: (-kv[1], kv[0]))[:4]
    ]
    if len(summary) > 4:
        parts.append(f"{len(summary) - 4} more kinds")
    parts += [f"{x.name}: {d}" for x, _, d in kept[:2]] + mods
    md.add_cause("graph-changed", "graph changed: " + ", ".join(parts))


def _elided(md: ModuleDiff, elided: list[tuple[Instruction, Instruction]]) -> None:
    """A note, never a cause: the values of constants printed as ``{...}`` are unknown."""
    n = len(elided)
    what = (
        f"{n} large constant{'s' if n != 1 else ''} printed as {{...}} "
        f"({_names(x for x, _ in elided)}): values not compared"
    )
    if md.explanations:
        tail = "dump with XLA_FLAGS=--xla_dump_large_constants to compare them"
    else:
        tail = (
            "the HLO text cannot show whether they differ: if these modules were compiled "
            "twice, their values (frozen weights) are the likely cause; dump with "
            "XLA_FLAGS=--xla_dump_large_constants to compare them"
        )
    md.notes.append(Note("constants-elided", f"{what}; {tail}"))
