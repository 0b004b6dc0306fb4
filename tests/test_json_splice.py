"""The compilations' text the events' writer writes ahead of their causes
(``json_text.apart_pieces``) and the causes put in (``json_text.spliced``): the C module's
ways (``json_rows_apart``, a batch of rows at a time; ``json_splice``, a piece at a time)
give the bytes the Python's do, whatever the values, the text, the cuts, the causes and
the sizes read at once; and the C functions refuse what they cannot write."""

from __future__ import annotations

import tempfile
from array import array
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO, Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from recompile_doctor import json_text
from recompile_doctor.parsers._spans import native_in_use
from recompile_doctor.timeline.table import Causes
from tests.conftest import examples

NATIVE: Any = native_in_use()
pytestmark = pytest.mark.skipif(
    NATIVE is None, reason="the C module is not built here, or turned off"
)

_RULES = st.sampled_from(["batch-size-changed", "growing-shape", "x\u0142\U0001f600", 'a"b'])


@contextmanager
def _file(data: bytes) -> Iterator[IO[bytes]]:
    with tempfile.TemporaryFile() as f:
        f.write(data)
        f.flush()
        yield f


@st.composite
def _runs(draw: st.DrawFn) -> tuple[bytes, list[int], dict[int, str], int]:
    """A text, its cuts (in order, the ends included), the causes of some of them (and of
    ids past them), the compilations counted."""
    text = draw(st.binary(max_size=300))
    cuts = sorted(draw(st.lists(st.integers(0, len(text)), max_size=40)))
    count = len(cuts)
    causes = draw(st.dictionaries(st.integers(0, count + 3), _RULES, max_size=count + 2))
    return text, cuts, causes, count


@settings(max_examples=examples(500), deadline=None)
@given(_runs(), st.integers(1, 70), st.integers(1, 9))
@example((b"", [], {}, 0), 64, 4)
@example((b"abc", [0, 0, 3, 3], {0: "growing-shape", 3: "batch-size-changed"}, 4), 1, 1)
@example((b"x" * 200, [150], {0: "growing-shape"}, 1), 7, 2)  # (a gap of many pieces)
def test_the_c_splice_gives_the_python_bytes(
    run: tuple[bytes, list[int], dict[int, str], int], piece: int, cuts_read: int
) -> None:
    text, cuts, given_causes, count = run
    causes = Causes(count + 2)
    for cid, rule in sorted(given_causes.items()):
        if cid < count + 2:
            causes.set(cid, rule)
    as_dict = {cid: causes[cid] for cid in causes}
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(json_text, "CUTS_READ", cuts_read)
        with _file(text) as f, _file(array("q", cuts).tobytes()) as cuts_f:
            by_c = list(json_text.spliced(f, cuts_f, causes, piece))
            by_py = list(json_text.spliced(f, cuts_f, as_dict, piece))
    assert b"".join(by_c) == b"".join(by_py)
    # (the pieces about a piece's bytes: none of the text read at once much longer)
    longest_cause = max((len(json_text._cause_text(r)) for r in causes.names()), default=4)
    assert all(len(p) <= piece + (len(cuts) + 1) * (longest_cause + 4) for p in by_c)


def test_a_text_cut_short_is_an_os_error_both_ways() -> None:
    with _file(b"abc") as f, _file(array("q", [1, 9]).tobytes()) as cuts_f:
        for given_causes in (Causes(2), {}):
            with pytest.raises(OSError, match=r"cut short|out of order"):
                b"".join(json_text.spliced(f, cuts_f, given_causes, 64))


def test_cuts_out_of_order_are_an_os_error() -> None:
    # (the files are the writer's: not as it wrote them, they fail as a file would)
    with (
        _file(b"abc") as f,
        _file(array("q", [2, 1, 3]).tobytes()) as cuts_f,
        pytest.raises(OSError, match="out of order"),
    ):
        b"".join(json_text.spliced(f, cuts_f, Causes(3), 64))


@pytest.mark.parametrize(
    ("args", "error"),
    [
        ((b"ab", 0, array("q", [1, 0]), 0, 2, 0, 2, array("H"), (b"null",)), ValueError),
        ((b"ab", 0, array("q", [3]), 0, 1, 0, 1, array("H"), (b"null",)), ValueError),
        ((b"ab", 5, array("q", [1]), 0, 1, 0, 1, array("H"), (b"null",)), ValueError),
        ((b"ab", 0, array("q", [1]), 0, 2, 0, 1, array("H"), (b"null",)), ValueError),
        ((b"ab", 0, array("q", [1]), 0, 1, 0, 1, array("H", [1]), (b"null",)), ValueError),
        ((b"ab", 0, array("i", [1]), 0, 1, 0, 1, array("H"), (b"null",)), TypeError),
        ((b"ab", 0, array("q", [1]), 0, 1, 0, 1, array("h"), (b"null",)), TypeError),
        ((b"ab", 0, array("q", [1]), 0, 1, 0, 1, array("H"), ("null",)), TypeError),
        (("ab", 0, array("q", [1]), 0, 1, 0, 1, array("H"), (b"null",)), TypeError),
        ((b"ab", 0, array("q", [1]), 0, 1, 0, 1, array("H")), TypeError),
    ],
)
def test_the_c_splice_refuses_what_it_cannot_splice(args: tuple[Any, ...], error: type) -> None:
    with pytest.raises(error):
        NATIVE.json_splice(*args)


def test_the_c_splice_puts_each_cause_after_its_cut() -> None:
    # compilations 0 and 2 of 3 have causes; the last cut is the text's end (no cause)
    got = NATIVE.json_splice(
        b"ABCD", 10, array("q", [11, 12, 13, 14]), 0, 4, 0, 3, array("H", [1, 0, 2]),
        (b"null", b'"x"', b'"y"'),
    )  # fmt: skip
    assert got == b'A"x"BnullC"y"D'


_VALUE = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    # (any character: quotes, controls, lone surrogates, wide ones)
    st.text(st.characters(codec=None, exclude_categories=()), max_size=12),
    st.dictionaries(st.text(max_size=4), st.integers(), max_size=3),
    st.lists(st.text(max_size=3), max_size=3),
)


@settings(max_examples=examples(300), deadline=None)
@given(
    st.integers(1, 6).flatmap(
        lambda width: st.tuples(
            st.lists(st.tuples(*[_VALUE] * width), max_size=12), st.integers(0, width - 1)
        )
    ),
    st.integers(1, 400),
    st.integers(1, 5),
    st.integers(1, 4),
)
def test_rows_apart_in_c_are_the_python_s(
    rows_at: tuple[list[tuple[Any, ...]], int], piece: int, most_cuts: int, at_once: int
) -> None:
    rows, at = rows_at
    keys = tuple(f"k{i}" for i in range(len(rows[0]) if rows else at + 1))
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(json_text, "ROWS_AT_ONCE", at_once)
        by_c = list(json_text.apart_pieces(iter(rows), keys, at, piece, most_cuts))
    by_py = list(json_text._apart_pieces_py(iter(rows), keys, at, piece, most_cuts))
    # the same text and the same places, in pieces of at most most_cuts places
    assert b"".join(t for t, _ in by_c) == b"".join(t for t, _ in by_py)
    assert b"".join(c for _, c in by_c) == b"".join(c for _, c in by_py)
    assert all(len(c) <= 8 * most_cuts for _, c in by_c)


def test_rows_apart_refuse_a_row_of_another_width() -> None:
    with pytest.raises(ValueError):
        list(json_text.apart_pieces(iter([(1, 2), (1,)]), ("a", "b"), 0, 64, 4))
    with pytest.raises(TypeError):
        NATIVE.json_rows_apart((), ("a",), ("b",), 0, 2, "  ", None, ("", ","), True, 0, 64)
