"""Which of a decoder's message literals a message holds, all found in one call.

A decoder that tells its messages apart by the first of its tests that passes
(``"Compiling " in msg``, then the next) searched the whole message once per test: 5.5
searches a JAX message, 15 for one that no test names.  :func:`literal_mask` gives, in one
pass over the message, a bit for each literal it holds (bit ``k`` for ``literals[k]``), and
the decoder tests the bits in its order: the same answers, the tests' order kept.  The C
module's ``literal_mask`` (``parsers/_native.c``) where it is built, unless
``RECOMPILE_DOCTOR_NATIVE=0``; :func:`literal_mask_py` otherwise (the tests hold the two to
the same bits).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from recompile_doctor.parsers._spans import native_in_use


def literal_mask_py(text: str, literals: tuple[str, ...]) -> int:
    """Bit ``k`` set where ``literals[k] in text`` (each literal an ASCII string of two or
    more characters, at most 64 of them, as the C module asks: its masks are 64 bits)."""
    mask = 0
    bit = 1
    for lit in literals:
        if lit in text:
            mask |= bit
        bit <<= 1
    return mask


def chosen_literal_mask() -> Callable[[str, tuple[str, ...]], int]:
    """The C module's ``literal_mask`` where it is built (and has it), unless
    ``RECOMPILE_DOCTOR_NATIVE=0``; :func:`literal_mask_py` otherwise."""
    native = native_in_use()
    made: Callable[[str, tuple[str, ...]], int] | None = getattr(native, "literal_mask", None)
    return made if made is not None else literal_mask_py


#: the function chosen, named once (a decoder calls it for every message)
literal_mask: Final = chosen_literal_mask()
