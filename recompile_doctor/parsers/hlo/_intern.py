"""Intern an instruction's own content as a small int: :attr:`Instruction.key`.

Two instructions with the same key have the same opcode, shape without layout, parameter
number, attributes and literal; names, operands, called computations (and the attributes that
name them), layout, metadata and position are left out.  A module repeats a few thousand such
contents at most, so consumers (the differ's fingerprints) can do per-key work once instead of
once per instruction.

Keys are never reused for another content, even when the table is cleared to bound memory
(the counter keeps going): a key handed out once means the same content for the life of the
process.  The same content may get another key (after a clear, or a large literal: those are
not kept in the table, each gets a key of its own); that only costs consumers a cache miss.
"""

from __future__ import annotations

from itertools import count

from recompile_doctor.parsers.hlo.model import Literal, Shape

#: attributes that name called computations (their values are in ``Instruction.calls``)
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
_Attrs = tuple[tuple[str, str], ...]

_LIMIT = 200_000
#: literals with more values get a key of their own: the table would keep them alive
LARGE_LITERAL = 64


class _Keys(dict[tuple[object, ...], int]):
    """content tuple -> key; a hit is one C-level lookup (``__missing__`` runs on a miss)."""

    def __missing__(self, content: tuple[object, ...]) -> int:
        if len(self) >= _LIMIT:
            self.clear()
            RESHAPED.clear()
        key = self[content] = next(_NEXT)
        return key


_NEXT = count()
KEYS = _Keys()
fresh_key = _NEXT.__next__
#: (a key, a shape without layout) -> the key of that key's content with that shape instead
#: (not for large literals): what :data:`KEYS` gives that content, cleared with it
RESHAPED: dict[tuple[int, str], int] = {}


def without_calls(attrs: _Attrs) -> _Attrs:
    return tuple([kv for kv in attrs if kv[0] not in CALL_ATTRS])


def content(
    opcode: str,
    shape: Shape,
    parameter_number: int | None,
    attrs: _Attrs,
    literal: Literal | None,
) -> tuple[object, ...]:
    """What :data:`KEYS` interns (the fast path builds the same tuple inline)."""
    plain = without_calls(attrs)
    if literal is None:
        return (opcode, shape.sig, parameter_number, plain)
    return (opcode, shape.sig, parameter_number, plain, literal.values, literal.elided)


def key_of(
    opcode: str,
    shape: Shape,
    parameter_number: int | None,
    attrs: _Attrs,
    literal: Literal | None,
) -> int:
    if literal is not None and len(literal.values) > LARGE_LITERAL:
        return fresh_key()
    return KEYS[content(opcode, shape, parameter_number, attrs, literal)]
