"""HLO modules as Graphcore's TensorFlow 2.6 fork prints them (the OLD dialect).

``%`` sigils on names, computation program shapes without layouts, instruction result and
operand shapes with layouts (``add(f32[8]{0} %a, f32[8]{0} %b)``), ``metadata={op_type="…"
op_name="…"}``, and constants over ten elements printed as ``{...}`` unless large constants are
asked for.  :func:`canonical_text` is what the HLO hash is computed from: names, ids and
metadata removed, every constant's value kept, as ``HloHash`` sanitises the module proto.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

_LAYOUT_CACHE: dict[int, str] = {}


@dataclass(frozen=True, slots=True)
class Shape:
    """An array shape (``dims``) or a tuple shape (``elements``)."""

    dtype: str
    dims: tuple[int, ...] = ()
    elements: tuple[Shape, ...] | None = None

    @staticmethod
    def tuple_of(*elements: Shape) -> Shape:
        return Shape("tuple", (), tuple(elements))

    @property
    def is_tuple(self) -> bool:
        return self.elements is not None

    def size(self) -> int:
        if self.elements is not None:
            return sum(e.size() for e in self.elements)
        n = 1
        for d in self.dims:
            n *= d
        return n

    def text(self, layout: bool = True) -> str:
        if self.elements is not None:
            return (
                "(" + ", ".join(_idx(i) + e.text(layout) for i, e in enumerate(self.elements)) + ")"
            )
        if self.dtype == "token":
            return "token[]"
        dims = ",".join(str(d) for d in self.dims)
        if not layout or not self.dims:
            return f"{self.dtype}[{dims}]"
        return f"{self.dtype}[{dims}]{_layout(len(self.dims))}"

    def with_dims(self, dims: Sequence[int]) -> Shape:
        return Shape(self.dtype, tuple(dims))


def _idx(i: int) -> str:
    return f"/*index={i}*/" if i and i % 5 == 0 else ""


def _layout(rank: int) -> str:
    if rank not in _LAYOUT_CACHE:
        _LAYOUT_CACHE[rank] = "{" + ",".join(str(d) for d in range(rank - 1, -1, -1)) + "}"
    return _LAYOUT_CACHE[rank]


def fmt_float(value: float, dtype: str = "f32") -> str:
    """Shortest text that reads back to the same f32 (TF 2.6 prints shortest round-trip)."""
    if dtype in ("s32", "s64", "u32", "u8", "s8"):
        return str(int(value))
    if dtype == "pred":
        return "true" if value else "false"
    if value != value:
        return "nan"
    if value in (float("inf"), float("-inf")):
        return "inf" if value > 0 else "-inf"
    f32 = struct.unpack("f", struct.pack("f", value))[0]
    for digits in range(1, 10):
        text = f"{f32:.{digits}g}"
        if struct.unpack("f", struct.pack("f", float(text)))[0] == f32:
            return text
    return f"{f32:.9g}"


@dataclass(slots=True)
class Instr:
    """One instruction.  ``attrs`` is the attribute text after the operands (without metadata)."""

    name: str
    shape: Shape
    opcode: str
    operands: tuple[Instr, ...] = ()
    attrs: str = ""
    op_type: str = ""
    op_name: str = ""
    literal: str | None = None
    large_literal: Callable[[], str] | None = None
    value_key: str = ""
    root: bool = False

    def ref(self) -> str:
        return f"{self.shape.text()} %{self.name}"


@dataclass(slots=True)
class Computation:
    """One HLO computation being written: its parameters and instructions."""

    name: str
    params: list[Instr] = field(default_factory=list)
    instrs: list[Instr] = field(default_factory=list)
    entry: bool = False

    @property
    def root(self) -> Instr:
        return self.instrs[-1]


class ModuleBuilder:
    """Builds a module with one id counter across all computations, as TF numbers them."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.computations: list[Computation] = []
        self.next_id = 1

    def uid(self) -> int:
        n = self.next_id
        self.next_id += 1
        return n

    def computation(self, base: str, entry: bool = False) -> Computation:
        name = self.name if entry else f"{base}.{self.uid()}"
        comp = Computation(name, entry=entry)
        self.computations.append(comp)
        return comp

    def param(
        self, comp: Computation, index: int, shape: Shape, base: str = "arg", op_name: str = ""
    ) -> Instr:
        label = f"{base}{index}" if base == "arg" else base
        ins = Instr(
            f"{label}.{self.uid()}", shape, "parameter", attrs=f"({index})", op_name=op_name
        )
        comp.params.append(ins)
        comp.instrs.append(ins)
        return ins

    def op(
        self,
        comp: Computation,
        opcode: str,
        shape: Shape,
        operands: Sequence[Instr] = (),
        attrs: str = "",
        op_type: str = "",
        op_name: str = "",
    ) -> Instr:
        ins = Instr(
            f"{opcode}.{self.uid()}", shape, opcode, tuple(operands), attrs, op_type, op_name
        )
        comp.instrs.append(ins)
        return ins

    def constant(
        self,
        comp: Computation,
        shape: Shape,
        values: Callable[[], list[float]],
        value_key: str,
        op_type: str = "Const",
        op_name: str = "",
    ) -> Instr:
        """A constant; arrays over ten elements print as ``{...}`` unless asked otherwise."""
        ins = Instr(f"constant.{self.uid()}", shape, "constant", op_type=op_type, op_name=op_name)
        if shape.size() <= 10:
            ins.literal = _literal(shape, values())
        else:
            ins.large_literal = lambda: _literal(shape, values())
        ins.value_key = value_key
        comp.instrs.append(ins)
        return ins

    def scalar(self, comp: Computation, dtype: str, value: float, op_name: str = "") -> Instr:
        return self.constant(comp, Shape(dtype), lambda: [value], "", op_name=op_name)


def _literal(shape: Shape, values: list[float]) -> str:
    if not shape.dims:
        return fmt_float(values[0], shape.dtype)
    items = [fmt_float(v, shape.dtype) for v in values]
    return _nest(shape.dims, items)


def _nest(dims: tuple[int, ...], items: list[str]) -> str:
    if len(dims) == 1:
        return "{" + ", ".join(items) + "}"
    step = len(items) // dims[0]
    parts = [_nest(dims[1:], items[i * step : (i + 1) * step]) for i in range(dims[0])]
    if dims[0] > 1 or len(dims) > 1:
        return "{ " + ", ".join(parts) + " }"
    return "{" + ", ".join(parts) + "}"


def render(module: ModuleBuilder, *, metadata: bool = True, large_constants: bool = False) -> str:
    """The module's text in the OLD dialect (what ``--xla_dump_to`` writes)."""
    out: list[str] = [f"HloModule {module.name}", ""]
    for comp in module.computations:
        out.append(_signature(comp) + " {")
        for ins in comp.instrs:
            out.append("  " + _instr(ins, comp, metadata, large_constants))
        out.append("}")
        out.append("")
    return "\n".join(out) + "\n"


def _signature(comp: Computation) -> str:
    params = ", ".join(f"{p.name}: {p.shape.text(layout=False)}" for p in comp.params)
    head = f"ENTRY %{comp.name}" if comp.entry else f"%{comp.name}"
    return f"{head} ({params}) -> {comp.root.shape.text(layout=False)}"


def _instr(ins: Instr, comp: Computation, metadata: bool, large_constants: bool) -> str:
    root = "ROOT " if ins is comp.root else ""
    if ins.opcode == "parameter":
        body = f"parameter{ins.attrs}"
        attrs = ""
    elif ins.opcode == "constant":
        lit = ins.literal
        if lit is None:
            lit = ins.large_literal() if (large_constants and ins.large_literal) else "{...}"
        body = f"constant({lit})"
        attrs = ins.attrs
    else:
        body = (
            f"{ins.opcode}("
            + ", ".join(_idx(i) + o.ref() for i, o in enumerate(ins.operands))
            + ")"
        )
        attrs = ins.attrs
    text = f"{root}%{ins.name} = {ins.shape.text()} {body}"
    if attrs:
        text += ", " + attrs
    if metadata and (ins.op_type or ins.op_name):
        fields = []
        if ins.op_type:
            fields.append(f'op_type="{ins.op_type}"')
        if ins.op_name:
            fields.append(f'op_name="{ins.op_name}"')
        text += ", metadata={" + " ".join(fields) + "}"
    return text


_NAME = re.compile(r"%([A-Za-z_][\w.\-]*)")


def canonical_text(module: ModuleBuilder, extra: str = "") -> str:
    """The module as ``HloHash`` sees it: no names, ids or metadata; every constant's value."""
    mapping: dict[str, str] = {}
    for ci, comp in enumerate(module.computations):
        mapping[comp.name] = f"c{ci}"
        for ii, ins in enumerate(comp.instrs):
            mapping[ins.name] = f"{ci}.{ii}"
    lines: list[str] = []
    for comp in module.computations:
        params = ", ".join(p.shape.text(layout=False) for p in comp.params)
        lines.append(
            f"{mapping[comp.name]} {comp.entry} ({params}) -> {comp.root.shape.text(False)}"
        )
        for ins in comp.instrs:
            text = _instr(ins, comp, metadata=False, large_constants=False)
            if ins.value_key:
                text += f" value={ins.value_key}"
            lines.append(_NAME.sub(lambda m: "%" + mapping.get(m.group(1), m.group(1)), text))
    lines.append(extra)
    return "\n".join(lines)


def instruction_count(module: ModuleBuilder) -> int:
    return sum(len(c.instrs) for c in module.computations)


def element_count(module: ModuleBuilder) -> int:
    """Elements held by parameters and constants of the entry (the graph's 'size')."""
    n = 0
    for comp in module.computations:
        if comp.entry:
            for ins in comp.instrs:
                if ins.opcode in ("parameter", "constant"):
                    n += ins.shape.size()
    return n
