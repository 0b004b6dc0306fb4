"""Which of a decoder's message literals a message holds, in one call (``literal_mask``: the
C module's, and the Python it stands for): the same bits as an ``in`` test per literal,
whatever the text (overlapping literals, a literal at either end, characters of one, two or
four bytes); bad literals are refused; and the JAX decoder, which tests its messages so,
takes the same branch with either."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from recompile_doctor.parsers import _literal_mask, jax
from recompile_doctor.parsers._literal_mask import literal_mask_py
from recompile_doctor.parsers._spans import native_in_use
from tests.conftest import examples

NATIVE: Any = native_in_use()
_JAX: Any = jax  # (its imported names set by a test)
needs_native = pytest.mark.skipif(
    NATIVE is None, reason="the C module is not built here, or turned off"
)

#: a small alphabet: literals and text share their characters, so matches and near misses
#: abound; "é" (one byte), "ł" (two) and "😀" (four) make texts of every kind
_text = st.text(alphabet="ab c_éł😀", max_size=120)
_literal = st.text(alphabet="ab c_", min_size=2, max_size=6)


def _bits(text: str, literals: tuple[str, ...]) -> int:
    return sum(1 << k for k, lit in enumerate(literals) if lit in text)


@given(_text, st.lists(_literal, max_size=8))
def test_the_python_is_an_in_test_per_literal(text: str, lits: list[str]) -> None:
    assert literal_mask_py(text, tuple(lits)) == _bits(text, tuple(lits))


@needs_native
@settings(max_examples=examples(500), deadline=None)
@given(_text, st.lists(_literal, max_size=8), st.lists(_literal, max_size=3))
def test_the_c_module_gives_the_same_bits(text: str, lits: list[str], other: list[str]) -> None:
    literals = tuple(lits)
    assert NATIVE.literal_mask(text, literals) == _bits(text, literals)
    # another tuple, then the first again (the C module keeps the tables of the last one)
    assert NATIVE.literal_mask(text, tuple(other)) == _bits(text, tuple(other))
    assert NATIVE.literal_mask(text, literals) == _bits(text, literals)


@needs_native
def test_literals_at_the_edges_and_overlapping() -> None:
    lits = ("abc", "bcd", "cd", "ab", "dab")
    for text in ["abcd", "dabc", "xxabcdab", "ab", "cd", "a", "", "abcdabcd", "é😀abcd", "ł cd"]:
        assert NATIVE.literal_mask(text, lits) == _bits(text, lits), text
    # 64 literals, the last bit included; no literals: no bits
    many = tuple(f"{k:02d}x" for k in range(64))
    text = "".join(many[::-1])
    assert NATIVE.literal_mask(text, many) == (1 << 64) - 1 == _bits(text, many)
    assert NATIVE.literal_mask("anything", ()) == 0
    # the same tuple's strings, equal but other objects
    assert NATIVE.literal_mask("xx cd", tuple(s + "" for s in lits)) == _bits("xx cd", lits)


@needs_native
@pytest.mark.parametrize(
    ("text", "literals", "error"),
    [
        ("abc", ["ab"], TypeError),  # a list
        ("abc", tuple(f"{k:02d}x" for k in range(65)), TypeError),  # more than 64
        ("abc", ("a",), ValueError),  # one character
        ("abc", ("é!",), ValueError),  # not ASCII
        ("abc", (b"ab",), ValueError),  # bytes
        (b"abc", ("ab",), TypeError),  # text of bytes
    ],
)
def test_bad_arguments_are_refused(text: Any, literals: Any, error: type[Exception]) -> None:
    with pytest.raises(error):
        NATIVE.literal_mask(text, literals)
    # and the tables of the last good call are not left half made
    assert NATIVE.literal_mask("xx ab", ("ab", "cd")) == 1


def test_the_function_chosen_is_the_c_modules_where_it_is_built() -> None:
    want = NATIVE.literal_mask if NATIVE is not None else literal_mask_py
    assert _literal_mask.chosen_literal_mask() is want


#: JAX messages of one of the decoder's tests, or of several (the first in the decoder's
#: order decides), or of none
_PIECES = [*jax._TESTS, "Finished tracing", "jit(f)", "(3", "f(", " in 0.01 sec", " ", "x"]


@settings(max_examples=examples(300), deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=6))
def test_the_jax_decoder_takes_the_same_branch_with_either(pieces: list[str]) -> None:
    msg = "".join(pieces)
    line = f"DEBUG:jax._src.dispatch:{msg}"
    got = []
    chosen = _literal_mask.literal_mask  # (the function the decoder was given)
    try:
        for mask in (chosen, literal_mask_py):
            _JAX.literal_mask = mask  # (the name it imported)
            dec = jax.JaxDecoder("run.log")
            got.append((dec.decode(1, line), list(dec.finish())))
    finally:
        _JAX.literal_mask = chosen
    assert got[0] == got[1]


@pytest.mark.parametrize(
    ("msg", "problem"),
    [
        # the first test the message passes decides, as when each was an ``in`` test (the
        # answers of the decoder before its tests were one call)
        ("TRACING CACHE MISS Finished tracing f in 0.1 sec", "malformed 'TRACING CACHE MISS'"),
        (
            "Finished tracing f for jit in 0.01 sec Finished XLA compilation",
            "malformed 'Finished tracing'",
        ),
        (
            "Finished XLA compilation of jit(f) in 0.01 sec Finished jaxpr to MLIR",
            "malformed 'Finished jaxpr to MLIR",
        ),
        ("Cache hit for key: abc Finished XLA compilation of jit(f) in 0.01 sec", None),
        ("Compiling x", None),  # "Compiling " alone is not a compilation
    ],
)
def test_the_first_test_a_message_passes_decides(msg: str, problem: str | None) -> None:
    got = jax.JaxDecoder("run.log").decode(1, f"DEBUG:jax._src.dispatch:{msg}")
    if problem is None:
        assert got.problem is None
    else:
        assert got.status == "malformed" and (got.problem or "").startswith(problem)
