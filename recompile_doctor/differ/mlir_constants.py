"""Constants of a JAX ``module.mlir`` dump, with their values, and what changed between two.

The HLO text prints large constants as ``constant({...})``, so two programs that differ only in
the values of a captured weight matrix look identical there.  JAX's dump folder also holds
``module_NNNN.<name>/module.mlir`` (StableHLO), where every constant's value is printed:

* ``stablehlo.constant dense<"0x6CBF003E...">`` : tensor<16x32xf32>`` — the raw little-endian
  bytes of the elements (a single element's bytes when all elements are equal, a splat);
* ``dense<[[1.0, 2.0], [3.0, 4.0]]>``, ``dense<0.000000e+00>``, ``dense<true>`` — literals.

:func:`read_constants` lists the constants of a file in order; :func:`compare_constants` pairs
those of two files (by name, then by order) and counts the elements that differ.
"""

from __future__ import annotations

import math
import re
import struct
from dataclasses import dataclass
from pathlib import Path

from recompile_doctor.errors import RecompileDoctorError

_CONSTANT = re.compile(
    r"(?P<name>%[\w.#$-]+)\s*=\s*(?:\"?[\w.]+\"?\.)?constant\s+dense<(?P<value>.*?)>\s*:\s*"
    r"tensor<(?P<type>[^>]*)>"
)
#: element type -> (struct code, bytes per element); bf16 is decoded separately
_CODES: dict[str, tuple[str, int]] = {
    "f16": ("e", 2),
    "f32": ("f", 4),
    "f64": ("d", 8),
    "i1": ("B", 1),
    "i8": ("b", 1),
    "i16": ("h", 2),
    "i32": ("i", 4),
    "i64": ("q", 8),
    "ui8": ("B", 1),
    "ui16": ("H", 2),
    "ui32": ("I", 4),
    "ui64": ("Q", 8),
    "si8": ("b", 1),
    "si16": ("h", 2),
    "si32": ("i", 4),
    "si64": ("q", 8),
    "bf16": ("H", 2),
}
_NUMBER = re.compile(r"[-+]?(?:0x[0-9A-Fa-f]+|\d+\.?\d*(?:[eE][-+]?\d+)?|\.\d+|inf|nan)|true|false")


@dataclass(frozen=True, slots=True)
class Constant:
    """One ``constant dense<...>`` of a module: its SSA name, type, shape and element values."""

    name: str
    line: int
    dtype: str
    shape: tuple[int, ...]
    values: tuple[float, ...]  # one value for a splat
    text: str  # the value as printed, abbreviated

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def type_text(self) -> str:
        return f"{self.dtype}[{','.join(str(d) for d in self.shape)}]"

    def element(self, k: int) -> float:
        return self.values[0] if len(self.values) == 1 else self.values[k]


@dataclass(frozen=True, slots=True)
class ConstantChange:
    """A constant whose values differ between two modules."""

    a: Constant
    b: Constant
    changed: int  # elements that differ
    max_abs_diff: float  # the largest difference (nan when not a number)


def _bfloat16(bits: int) -> float:
    value: float = struct.unpack("<f", struct.pack("<I", bits << 16))[0]
    return value


def decode_hex(blob: str, dtype: str, size: int) -> tuple[float, ...]:
    """The elements in MLIR's hex form of a dense attribute (``0x`` + little-endian bytes).

    A blob of one element's bytes is a splat (all ``size`` elements equal).
    """
    if dtype not in _CODES:
        raise ValueError(f"unsupported element type {dtype}")
    code, width = _CODES[dtype]
    raw = bytes.fromhex(blob[2:] if blob[:2].lower() == "0x" else blob)
    if len(raw) % width:
        raise ValueError(f"{len(raw)} bytes is not a whole number of {dtype} elements")
    n = len(raw) // width
    if n not in (1, size):
        raise ValueError(f"{n} elements for a tensor of {size}")
    values = [v for (v,) in struct.iter_unpack("<" + code, raw)]
    if dtype == "bf16":
        return tuple(_bfloat16(int(v)) for v in values)
    if dtype == "i1":
        return tuple(float(v != 0) for v in values)
    return tuple(float(v) for v in values)


def _literal(text: str) -> tuple[float, ...]:
    out: list[float] = []
    for tok in _NUMBER.findall(text):
        if tok == "true":
            out.append(1.0)
        elif tok == "false":
            out.append(0.0)
        elif tok.lower().lstrip("-+").startswith("0x"):
            out.append(float(int(tok, 16)))
        else:
            out.append(float(tok))
    return tuple(out)


def _type(text: str) -> tuple[tuple[int, ...], str] | None:
    parts = text.strip().split("x")
    dims, dtype = parts[:-1], parts[-1]
    if not all(d.isdigit() for d in dims):
        return None  # dynamic or complex shapes are not compared
    return tuple(int(d) for d in dims), dtype


def _abbrev(value: str) -> str:
    return value if len(value) <= 24 else value[:21] + "..." + ('"' if value[0] == '"' else "")


def parse_constants(text: str, path: str = "-") -> list[Constant]:
    """Every ``constant dense<...>`` of an MLIR module text, in order."""
    out: list[Constant] = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        if "dense<" not in line:
            continue
        for m in _CONSTANT.finditer(line):
            parsed = _type(m["type"])
            if parsed is None:
                continue
            shape, dtype = parsed
            value = m["value"].strip()
            size = math.prod(shape)
            try:
                if value.startswith('"'):
                    values = decode_hex(value.strip('"'), dtype, size)
                else:
                    values = _literal(value)
                    if len(values) not in (1, size):
                        raise ValueError(f"{len(values)} elements for a tensor of {size}")
            except ValueError as e:
                raise RecompileDoctorError(
                    f"cannot read constant {m['name']}: {e}", path, lineno
                ) from None
            out.append(Constant(m["name"], lineno, dtype, shape, values, _abbrev(value)))
    return out


def read_constants(path: str | Path) -> list[Constant]:
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8", errors="replace")
    except OSError as e:
        raise RecompileDoctorError(f"cannot read: {e.strerror or e}", str(p)) from None
    return parse_constants(text, str(p))


def _pair(a: list[Constant], b: list[Constant]) -> list[tuple[Constant, Constant]]:
    by_name = {c.name: c for c in b}
    if len(by_name) == len(b) and {c.name for c in a} == set(by_name):
        return [(c, by_name[c.name]) for c in a]
    return list(zip(a, b, strict=False))


def _changed(a: Constant, b: Constant) -> ConstantChange | None:
    if a.shape != b.shape or a.dtype != b.dtype:
        return None  # a different program: the HLO text shows that
    changed, biggest = 0, 0.0
    for k in range(a.size if len(a.values) > 1 or len(b.values) > 1 else 1):
        x, y = a.element(k), b.element(k)
        if x == y or (math.isnan(x) and math.isnan(y)):
            continue
        changed += 1
        d = abs(x - y)
        biggest = d if math.isnan(d) or d > biggest else biggest
    if changed == 0:
        return None
    if len(a.values) == 1 and len(b.values) == 1:
        changed = a.size  # a splat changed: every element did
    return ConstantChange(a, b, changed, biggest)


def compare_constants(a: list[Constant], b: list[Constant]) -> list[ConstantChange]:
    """The constants whose values differ (same name, or same position, and same type)."""
    out = []
    for x, y in _pair(a, b):
        ch = _changed(x, y)
        if ch is not None:
            out.append(ch)
    return out
