"""The typed HLO module model: module -> computations -> instructions.

Values are kept as printed (names without the ``%`` sigil); numbers in constants are compared as
numbers (:meth:`Literal.numbers`), never as strings, because old and new XLA print the same
float with different digits.  An elided constant (``{...}``) has an *unknown* value.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from operator import attrgetter

Number = int | float | str  # str only for the canonical "nan"


@dataclass(frozen=True, slots=True)
class Shape:
    """An array, tuple or token shape.  ``dims`` uses -1 for an unbounded dynamic dim ``?``."""

    dtype: str
    dims: tuple[int, ...] = ()
    dynamic: tuple[bool, ...] = ()
    layout: str | None = None
    elements: tuple[Shape, ...] = ()
    sig: str = field(init=False, compare=False, repr=False, default="")

    def __post_init__(self) -> None:
        # The shape without layout: what decides compatibility of a compiled executable.
        object.__setattr__(self, "sig", self.text(layout=False))

    @property
    def is_tuple(self) -> bool:
        return self.dtype == "tuple"

    @property
    def rank(self) -> int:
        return len(self.dims)

    def size(self) -> int:
        """Number of elements of an array shape (tuples: the sum over elements)."""
        if self.is_tuple:
            return sum(e.size() for e in self.elements)
        n = 1
        for d in self.dims:
            n *= max(d, 0)
        return n

    def text(self, layout: bool = False) -> str:
        """``f32[8,<=4]`` (with ``{1,0}`` when ``layout``); tuples as ``(a, b)``."""
        if self.is_tuple:
            return "(" + ", ".join(e.text(layout) for e in self.elements) + ")"
        dims = ",".join(
            "?" if d < 0 else (f"<={d}" if dyn else str(d))
            for d, dyn in zip(self.dims, self.dynamic or (False,) * len(self.dims), strict=True)
        )
        lay = "{" + self.layout + "}" if layout and self.layout is not None else ""
        return f"{self.dtype}[{dims}]{lay}"

    def __str__(self) -> str:
        return self.sig


@dataclass(frozen=True, slots=True)
class Literal:
    """A constant's value as printed: flat element tokens, or elided (``{...}``)."""

    values: tuple[str, ...]
    elided: bool = False

    @property
    def count(self) -> int:
        return len(self.values)

    def numbers(self) -> tuple[Number, ...]:
        """Element values as numbers (``true`` -> 1, every NaN -> ``"nan"``)."""
        return tuple(_number(v) for v in self.values)

    def same_value(self, other: Literal) -> bool | None:
        """True/False when both values are known, None when either is elided."""
        if self.elided or other.elided:
            return None
        if self.values == other.values:
            return True
        return len(self.values) == len(other.values) and self.numbers() == other.numbers()

    def differing(self, other: Literal) -> int:
        """How many elements differ (both known, same length)."""
        a, b = self.numbers(), other.numbers()
        return sum(1 for x, y in zip(a, b, strict=False) if x != y) + abs(len(a) - len(b))

    def short(self, limit: int = 4) -> str:
        """An abbreviated rendering: ``{...}``, ``0.1``, or ``{1, 2, 3, 4, … 256 values}``."""
        if self.elided:
            return "{...}"
        if len(self.values) == 1:
            return self.values[0]
        head = ", ".join(self.values[:limit])
        more = f", … {len(self.values)} values" if len(self.values) > limit else ""
        return "{" + head + more + "}"


_KEYWORDS: dict[str, Number] = {"true": 1, "false": 0, "inf": float("inf"), "-inf": float("-inf")}


def _number(v: str) -> Number:
    k = _KEYWORDS.get(v)
    if k is not None:
        return k
    if "nan" in v:
        return "nan"
    try:
        return int(v)
    except ValueError:
        pass
    try:
        f = float(v)
    except ValueError:
        return v
    return f if f == f else "nan"


@dataclass(frozen=True, slots=True)
class Metadata:
    """``metadata={...}``: never affects compilation, used for matching and explanation."""

    op_type: str | None = None
    op_name: str | None = None
    source_file: str | None = None
    source_line: int | None = None
    stack_frame_id: int | None = None


@dataclass(slots=True, eq=False)
class Instruction:
    """One HLO instruction.  ``attrs`` keeps every attribute as canonical token text;
    ``source`` is the printed line as read (see :attr:`text`).

    ``meta`` is the :class:`Metadata`, or (from the parser's fast path) the offset in
    ``source`` of its ``metadata={...}`` block, parsed on first access of :attr:`metadata`:
    most instructions' metadata is never read, and parsing it is a fifth of the parse time.

    ``key`` is set by the parser: an int equal for instructions with the same opcode, shape
    without layout, parameter number, attributes and literal (see :mod:`._intern`); -1 when
    not parsed.  It describes the fields as parsed.
    """

    name: str
    opcode: str
    shape: Shape
    operands: tuple[str, ...]
    attrs: tuple[tuple[str, str], ...]
    calls: tuple[str, ...]
    computation: str
    line: int
    source: str
    literal: Literal | None = None
    meta: Metadata | int | None = field(default=None, repr=False)
    parameter_number: int | None = None
    is_root: bool = False
    key: int = field(default=-1, repr=False)

    @property
    def metadata(self) -> Metadata | None:
        """``metadata={...}``, or None when the instruction has none."""
        m = self.meta
        if m is None or isinstance(m, Metadata):
            return m
        from recompile_doctor.parsers.hlo._metadata import metadata_at

        md = self.meta = metadata_at(self.source, m)
        return md

    @property
    def text(self) -> str:
        """The instruction as printed, without indentation."""
        return self.source.strip()

    def attr(self, key: str) -> str | None:
        for k, v in self.attrs:
            if k == key:
                return v
        return None

    @property
    def op_name(self) -> str | None:
        md = self.metadata
        return md.op_name if md else None


@dataclass(slots=True, eq=False)
class Computation:
    """``twin`` is set by :func:`~recompile_doctor.parsers.hlo.parse_hlo_files` on the second
    module's computations: the first module's computation of the same name when their
    instructions are, position by position, the same but for their shapes and literals
    (names, opcodes, operands, attributes, calls, parameter numbers, root), else None."""

    name: str
    is_entry: bool
    line: int
    instructions: list[Instruction] = field(default_factory=list)
    root: str | None = None
    twin: Computation | None = field(default=None, repr=False)

    def by_name(self) -> dict[str, Instruction]:
        return {i.name: i for i in self.instructions}

    def parameters(self) -> list[Instruction]:
        ps = [i for i in self.instructions if i.parameter_number is not None]
        return sorted(ps, key=lambda i: i.parameter_number or 0)

    def root_instruction(self) -> Instruction | None:
        if not self.instructions:
            return None
        last = self.instructions[-1]
        if last.name == self.root:  # names are unique: the usual place of the root
            return last
        for i in self.instructions:
            if i.name == self.root:
                return i
        return last


@dataclass(frozen=True, slots=True)
class SourceLocation:
    """Where in the user's code an instruction came from (its ``source_file``/``source_line``)."""

    file: str
    function: str
    line: int


@dataclass(slots=True, eq=False)
class HloModule:
    """A parsed HLO text module (any of the three dialects)."""

    name: str
    path: str
    attrs: dict[str, str]
    computations: dict[str, Computation]
    entry: str
    dialect: str  # "old" (operand shapes), "long" (% and signatures) or "short"
    stack_frames: dict[int, SourceLocation] = field(default_factory=dict)

    @property
    def entry_computation(self) -> Computation:
        return self.computations[self.entry]

    def instruction_count(self) -> int:
        return sum(map(len, map(_INSTRUCTIONS, self.computations.values())))

    def source_of(self, ins: Instruction) -> tuple[str | None, int | None]:
        """The Python source file and line behind ``ins`` (metadata or the stack-frame index)."""
        md = ins.metadata
        if md is None:
            return None, None
        if md.source_file is not None:
            return md.source_file, md.source_line
        if md.stack_frame_id is not None and md.stack_frame_id in self.stack_frames:
            loc = self.stack_frames[md.stack_frame_id]
            return loc.file, loc.line
        return None, None


_INSTRUCTIONS = attrgetter("instructions")
