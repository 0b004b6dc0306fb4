"""Shape tokens -> :class:`Shape`, cached: a module repeats a few hundred distinct shapes."""

from __future__ import annotations

from recompile_doctor.parsers.hlo.model import Shape

DTYPES = frozenset(
    [
        "pred",
        "s1",
        "s2",
        "s4",
        "s8",
        "s16",
        "s32",
        "s64",
        "u1",
        "u2",
        "u4",
        "u8",
        "u16",
        "u32",
        "u64",
        "f16",
        "f32",
        "bf16",
        "f64",
        "f8e5m2",
        "f8e4m3",
        "f8e4m3fn",
        "f8e4m3b11fnuz",
        "f8e3m4",
        "f8e5m2fnuz",
        "f8e4m3fnuz",
        "f4e2m1fn",
        "f8e8m0fnu",
        "f6e3m2fn",
        "f6e2m3fn",
        "c64",
        "c128",
        "token",
        "opaque",
        "opaque_type",
        "buffer",
    ]
)

_CACHE: dict[str, Shape] = {}


INT64_MAX = 2**63 - 1


def int64(text: str) -> int | None:
    """A non-negative decimal that fits XLA's int64 (dimension sizes, parameter numbers,
    indices), or ``None`` -- never a 400-digit integer, never an exception."""
    if not (0 < len(text) <= 19) or not text.isascii() or not text.isdigit():
        return None
    n = int(text)
    return n if n <= INT64_MAX else None


def clip(text: str, limit: int = 60) -> str:
    """``text`` cut for an error message (a token may be megabytes long)."""
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


class ShapeError(ValueError):
    """A shape token that is not a valid shape; the message says what was expected."""


def array_shape(tok: str) -> Shape:
    """Parse ``f32[8,<=4,?]{1,0:T(8,128)}`` (the layout is kept as text)."""
    s = _CACHE.get(tok)
    if s is not None:
        return s
    lb = tok.index("[")
    rb = tok.index("]", lb)
    dtype = tok[:lb]
    if dtype not in DTYPES:
        raise ShapeError(f"expected an element type, got '{dtype}'")
    if dtype == "opaque_type":
        dtype = "opaque"
    inner = tok[lb + 1 : rb].strip()
    dims: list[int] = []
    dyn: list[bool] = []
    if inner:
        for part in inner.split(","):
            p = part.strip()
            bounded = p.startswith("<=")
            if bounded:
                p = p[2:].strip()
            if p == "?":
                dims.append(-1)
                dyn.append(True)
                continue
            d = int64(p)
            if d is None:
                what = "an int64 dimension size" if p.isdigit() else "a dimension size"
                raise ShapeError(f"expected {what}, got '{clip(part.strip())}'")
            dims.append(d)
            dyn.append(bounded)
    rest = tok[rb + 1 :]
    layout: str | None = None
    if rest:
        if not (rest.startswith("{") and rest.endswith("}")):
            raise ShapeError(f"expected a layout in braces, got '{rest}'")
        layout = rest[1:-1]
    s = Shape(dtype, tuple(dims), tuple(dyn) if any(dyn) else (), layout)
    if len(_CACHE) < 100_000:
        _CACHE[tok] = s
    return s


def shape_cache() -> dict[str, Shape]:
    """Shape token -> :class:`Shape` for the tokens seen so far (read-only for callers)."""
    return _CACHE


def tuple_shape(elements: list[Shape]) -> Shape:
    return Shape("tuple", elements=tuple(elements))


TOKEN_SHAPE = Shape("token")
