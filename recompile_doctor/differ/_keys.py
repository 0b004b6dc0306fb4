"""What an instruction contributes to its fingerprints by itself: its "local key".

``(opcode, shape without layout, parameter number, semantic attributes, literal key)``; the
attribute split and the literal key are cached (dict subclasses with ``__missing__``: a hit is
one C-level lookup, no Python call), because equal attribute tuples and literals repeat.
"""

from __future__ import annotations

from recompile_doctor.parsers.hlo import Instruction, Literal
from recompile_doctor.parsers.hlo._intern import CALL_ATTRS

#: attributes that never change the compiled executable
IGNORED_ATTRS = frozenset(
    ("control-predecessors", "channel_id", "statistics", "origin", "result_accuracy")
)
#: attributes whose value is part of the skeleton (they do not depend on shapes)
SKELETON_ATTRS = frozenset(
    ("index", "direction", "kind", "custom_call_target", "fusion_kind", "comparison_type")
)
_Attrs = tuple[tuple[str, str], ...]


def literal_key(ins: Instruction) -> object:
    lit = ins.literal
    if lit is None:
        return None
    if lit.elided and len(lit.values) != 1:
        return ("elided",)
    return LITERALS[lit.values]


class _SplitCache(dict[_Attrs, tuple[_Attrs, _Attrs]]):
    """``attrs`` -> (semantic attributes, skeleton attributes)."""

    def __missing__(self, attrs: _Attrs) -> tuple[_Attrs, _Attrs]:
        sem = tuple([(k, v) for k, v in attrs if k not in IGNORED_ATTRS and k not in CALL_ATTRS])
        got = (sem, tuple([(k, v) for k, v in attrs if k in SKELETON_ATTRS]))
        if len(self) > 100_000:
            self.clear()
        self[attrs] = got
        return got


_SPLIT = _SplitCache()
split = _SPLIT.__getitem__


class _LiteralCache(dict[tuple[str, ...], object]):
    """A known literal's values -> :func:`literal_key` (numbers() is slow, values repeat)."""

    def __missing__(self, values: tuple[str, ...]) -> object:
        got = _literal_key(Literal(values))
        if len(self) > 10_000:
            self.clear()
        self[values] = got
        return got


def _literal_key(lit: Literal) -> object:
    if len(lit.values) == 1:
        return lit.numbers()
    if lit.elided:
        return ("elided",)
    if len(lit.values) <= 16:
        return lit.numbers()
    return hash(lit.numbers())


LITERALS = _LiteralCache()


def semantic_attrs(ins: Instruction) -> _Attrs:
    """The attributes that can change the executable, computation references left out."""
    if not ins.attrs:
        return ()
    return split(ins.attrs)[0]


def local_key(ins: Instruction) -> tuple[object, ...]:
    lit = literal_key(ins) if ins.literal is not None else None
    return (ins.opcode, ins.shape.sig, ins.parameter_number, semantic_attrs(ins), lit)


def _skeleton_key(ins: Instruction) -> tuple[object, ...]:
    sk = split(ins.attrs)[1] if ins.attrs else ()
    return (ins.opcode, ins.parameter_number, sk)


#: the parser's :attr:`Instruction.key` -> ``hash(local_key(ins))``, and the same for the
#: skeleton.  Valid across modules: the parser never gives a key to two different contents,
#: and the local keys are functions of that content.
LOCAL_FULL: dict[int, int] = {}
LOCAL_SKELETON: dict[int, int] = {}


def local_hashes(ins: Instruction) -> tuple[int, int]:
    """``(hash(local_key(ins)), hash of the skeleton's local part)``, cached by ``ins.key``."""
    k = ins.key
    f = LOCAL_FULL.get(k)
    if f is not None:
        return f, LOCAL_SKELETON[k]
    f, s = hash(local_key(ins)), hash(_skeleton_key(ins))
    if k >= 0:  # -1: not from the parser, no key
        if len(LOCAL_FULL) > 100_000:
            LOCAL_FULL.clear()
            LOCAL_SKELETON.clear()
        LOCAL_SKELETON[k] = s
        LOCAL_FULL[k] = f
    return f, s
