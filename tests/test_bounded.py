"""The package's one bounded table (:class:`recompile_doctor.bounded.Kept`): what every
decoder's table, memo, the codec's tables, the JSON writer's and the builder's keep to."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from recompile_doctor import bounded
from recompile_doctor.bounded import Kept, chars_of

_TEXT = st.text(alphabet="ab", max_size=12)
#: keys as the tables hold them: strings, numbers, tuples of strings (nested too), bytes
_KEYS = st.one_of(
    _TEXT,
    st.integers(),
    st.tuples(_TEXT, st.booleans(), st.none()),
    st.tuples(_TEXT, st.tuples(_TEXT, _TEXT)),
    st.binary(max_size=12),
)


def test_chars_of_counts_the_strings_a_key_holds() -> None:
    assert chars_of("abc") == 3 and chars_of("") == 0
    assert chars_of(("ab", None, 7, True, "c")) == 3
    assert chars_of(("ab", ("cd", ["efg", ("h",)]))) == 8
    assert chars_of(b"bytes") == 0 and chars_of(12345) == 0 and chars_of(None) == 0
    assert chars_of(frozenset({"abc"})) == 0  # (only tuples and lists are looked into)


@given(st.lists(_KEYS, max_size=60), st.integers(1, 8), st.integers(0, 30), st.integers(0, 12))
def test_a_kept_table_holds_its_bound_and_the_last_short_key(
    keys: list[object], most: int, key_chars: int, longest: int
) -> None:
    """GIVEN any keys put in turn into a table of any bound WHEN each is put THEN its value
    comes back, the table never holds more than its entries, nor keys of more characters
    than it is told, nor one longer than it is told; it counts the characters it holds; and
    the key just put is there unless it is too long."""
    kept: Kept[object, int] = Kept(most)
    kept.key_chars = key_chars
    kept.longest = longest
    for i, key in enumerate(keys):
        assert kept.put(key, i) == i
        held = list(kept.table)
        assert len(held) <= most and len(kept) == len(held)
        assert kept.chars == sum(map(chars_of, held)) <= key_chars
        assert all(chars_of(k) <= longest for k in held)
        n = chars_of(key)
        assert (key in kept.table) == (n <= longest and n <= key_chars)
        if key in kept.table:
            assert kept.table[key] == i


def test_a_kept_table_counts_a_measure_given_instead_of_the_key() -> None:
    # GIVEN a table of values by identity: the value's strings are what it holds
    kept: Kept[int, tuple[str, ...]] = Kept()
    value = ("x" * 10, "y" * 5)
    kept.put(id(value), value, value)
    assert kept.chars == 15
    long = ("z" * (bounded.KEY_LONGEST + 1),)
    assert kept.put(id(long), long, long) is long and id(long) not in kept.table
    kept.clear()
    assert not kept.table and kept.chars == 0 and len(kept) == 0


def test_a_full_table_is_emptied_before_the_next_key() -> None:
    kept: Kept[str, int] = Kept(3)
    table = kept.table
    for i, k in enumerate("abc"):
        kept.put(k, i)
    assert table == {"a": 0, "b": 1, "c": 2}
    kept.put("d", 3)
    assert table == {"d": 3} and kept.table is table  # (emptied, never replaced)


def test_a_long_name_is_held_by_its_digest() -> None:
    from recompile_doctor.name_digest import HELD_CHARS, held, name_number

    short = "f" * HELD_CHARS
    assert held(short) is short
    longs = ["f" * (HELD_CHARS + 1), "g" * (HELD_CHARS + 1), "f" * (HELD_CHARS + 2)]
    got = [held(n) for n in longs]
    assert got == [name_number(n) for n in longs] and len(set(got)) == 3
    assert all(type(x) is int for x in got)
