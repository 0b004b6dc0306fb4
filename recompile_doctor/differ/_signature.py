"""Computations that are the same but for names and metadata: one fingerprint pass for all.

A model repeats its fusions and reductions layer after layer; :func:`signature` tells such
computations apart from the others, and :class:`Memo` keeps one result of
``fingerprint._linear`` per signature.  A signature costs a pass over the instructions, so
it is computed only for computations that have another of the same length: the entry and
the one-off computations (most of the instructions of a module) are never signed.
"""

from __future__ import annotations

from typing import Generic, TypeVar

from recompile_doctor.parsers.hlo import Computation

_R = TypeVar("_R")


def signature(comp: Computation) -> int | None:
    """Equal for computations whose instructions have, position by position, the same
    :attr:`~recompile_doctor.parsers.hlo.Instruction.key` and the same operands by position
    (names, metadata and layouts left out); None when an instruction calls a computation,
    prints an operand before its definition or has no key (not from the parser).  A hash:
    two different computations may share it with the odds of a 64-bit collision."""
    index: dict[str, int] = {}
    get = index.__getitem__
    sig = 0
    try:
        for k, ins in enumerate(comp.instructions):
            key = ins.key
            if ins.calls or key < 0:
                return None
            ops = ins.operands
            sig = hash((sig, key, tuple(map(get, ops)))) if ops else hash((sig, key))
            index[ins.name] = k
    except KeyError:  # an operand printed later (or never)
        return None
    return sig


class Memo(Generic[_R]):
    """Results by computation signature (:func:`signature`), within one module.

    :meth:`get` before computing a computation's result, :meth:`put` after: a computation
    is signed only once another of its length comes, and then the first of that length too
    (its result goes in then), so two computations with the same signature share the result
    of the first as if every one had been signed."""

    __slots__ = ("_by_sig", "_first", "_sig")

    def __init__(self) -> None:
        self._by_sig: dict[int, _R] = {}
        #: length -> the first computation of that length and its result, until signed
        self._first: dict[int, tuple[Computation, _R] | None] = {}
        self._sig: int | None = None  # the signature :meth:`get` computed last

    def get(self, comp: Computation) -> _R | None:
        """The result of an earlier computation with ``comp``'s signature, or None."""
        n = len(comp.instructions)
        self._sig = None
        if n not in self._first:
            return None
        first = self._first[n]
        if first is not None:  # a second of its length: sign the first
            self._first[n] = None
            sig = signature(first[0])
            if sig is not None:
                self._by_sig.setdefault(sig, first[1])
        self._sig = sig = signature(comp)
        return None if sig is None else self._by_sig.get(sig)

    def put(self, comp: Computation, result: _R) -> None:
        """Keep ``result``, just computed for ``comp`` (after :meth:`get` on it)."""
        n = len(comp.instructions)
        if n not in self._first:
            self._first[n] = (comp, result)
        elif self._sig is not None:
            self._by_sig[self._sig] = result
