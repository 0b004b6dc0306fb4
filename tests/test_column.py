"""A compilation table's column kept in a temporary file answers as the plain column.

GIVEN any sequence of appends and sets on an array, a byte array or a list, WHEN the same
are done on a spilled column of it (tiny chunks, one or two read back at a time), THEN
every read (index, negative index, slice, iteration, ``count``, ``find``, length) gives
what the plain column gives, whenever it is asked; a copy for another process is the plain
column; and nothing is left in the temporary folder.
"""

from __future__ import annotations

import os
import pickle
from array import array
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from hypothesis import given
from hypothesis import strategies as st

from recompile_doctor.timeline import column
from recompile_doctor.timeline.blobs import Blobs
from recompile_doctor.timeline.column import Spilled, codec_of

_OPS = st.lists(
    st.one_of(
        st.tuples(st.just("append"), st.integers(0, 3)),
        st.tuples(st.just("set"), st.integers(-40, 40), st.integers(0, 3)),
        st.tuples(st.just("read"), st.integers(-40, 40)),
    ),
    max_size=60,
)
_KINDS = {
    "q": lambda: array("q"),
    "d": lambda: array("d"),
    "bytes": bytearray,
    "objects": list,
}


def _value(kind: str, v: int) -> Any:
    return {"q": v - 1, "d": v / 4, "bytes": v, "objects": (f"s{v}", v) if v else None}[kind]


@given(
    st.sampled_from(sorted(_KINDS)),
    st.integers(0, 5),
    _OPS,
    st.integers(1, 4),
    st.integers(1, 2),
)
def test_a_spilled_column_answers_as_the_plain_one(
    kind: str, first: int, ops: list[tuple[Any, ...]], rows: int, cached: int
) -> None:
    with mock.patch.object(column, "CHUNK_ROWS", rows), mock.patch.object(column, "CACHED", cached):
        plain = _KINDS[kind]()
        plain.extend(_value(kind, v % 4) for v in range(first))
        blobs = Blobs("rd-test-column-")
        col = Spilled.of(plain, codec_of(plain), blobs)
        for op in ops:
            if op[0] == "append":
                plain.append(_value(kind, op[1]))
                col.append(_value(kind, op[1]))
            elif op[0] == "set":
                if -len(plain) <= op[1] < len(plain):
                    plain[op[1]] = col[op[1]] = _value(kind, op[2])
                else:
                    with pytest.raises(IndexError):
                        col[op[1]] = _value(kind, op[2])
            elif -len(plain) <= op[1] < len(plain):
                assert col[op[1]] == plain[op[1]]
            else:
                with pytest.raises(IndexError):
                    col[op[1]]
        assert len(col) == len(plain) and list(col) == list(plain)
        assert list(col[1::2]) == list(plain[1::2]) and list(col[::-1]) == list(plain[::-1])
        for v in range(4):
            assert col.count(_value(kind, v)) == plain.count(_value(kind, v))
        if kind == "bytes":
            for v in range(4):
                for start in range(-len(plain) - 2, len(plain) + 2):
                    assert col.find(v, start) == plain.find(v, start), (v, start)
        copy = pickle.loads(pickle.dumps(col))
        assert type(copy) is type(plain) and list(copy) == list(plain)
        blobs.close()


def test_a_spilled_column_leaves_nothing_behind(own_tempdir: Path) -> None:
    # GIVEN a column of 100 rows in chunks of 8
    with mock.patch.object(column, "CHUNK_ROWS", 8), mock.patch.object(column, "CACHED", 2):
        col = Spilled.of(array("q", range(100)), codec_of(array("q")), Blobs("rd-test-"))
        col[3] = -3  # (a row set in a chunk in the file: written back when it leaves)
        assert [col[k] for k in (90, 50, 10, 3, 60, 3)] == [90, 50, 10, -3, 60, -3]
    # THEN its file has no name, and closing it leaves nothing open
    assert os.listdir(own_tempdir) == []
    col.close()
    with pytest.raises(ValueError):
        col[40]


def test_a_pass_over_a_spilled_column_holds_one_chunk_read_back_at_a_time() -> None:
    # GIVEN a column of objects in chunks of 8, each chunk read back as an object whose
    # life can be watched
    import weakref

    class Rows(list):  # type: ignore[type-arg]
        pass

    alive: list[weakref.ref[Rows]] = []
    objects = column.OBJECTS

    held: list[int] = []  # chunks still alive as each is read back

    def decode(data: bytes) -> Rows:
        held.append(sum(r() is not None for r in alive))
        rows = Rows(objects.decode(data))
        alive.append(weakref.ref(rows))
        return rows

    codec = column.Codec(list, objects.encode, decode, fixed=False)
    with mock.patch.object(column, "CHUNK_ROWS", 8):
        col = Spilled.of([(f"m{k}", k) for k in range(100)], codec, Blobs("rd-test-"))
        # WHEN it is read from start to end
        assert list(col) == [(f"m{k}", k) for k in range(100)]
        col.close()
    # THEN every chunk in the file was read back once, each after the one before was let go
    assert len(alive) == 100 // 8
    assert held == [0] * len(alive)


_KEY_FIELDS = st.tuples(
    st.sampled_from(["jax", "tensorflow", "torch"]),
    st.none() | st.text(max_size=8),
    st.none() | st.text(max_size=30),
    st.none() | st.text("0123456789abcdef", max_size=16),
    st.none() | st.text(max_size=5),
    st.none() | st.text(max_size=6),
    st.booleans(),
)


@given(st.lists(st.none() | st.integers(0, 7), max_size=40), st.lists(_KEY_FIELDS, min_size=8))
def test_a_spilled_key_column_reads_back_its_keys_one_object_per_shared_key(
    rows: list[int | None], fields: list[tuple[Any, ...]]
) -> None:
    from recompile_doctor.events import CompileKey

    # GIVEN a column of compile keys and Nones, rows sharing keys (one object each)
    keys = [CompileKey(*f) for f in fields]
    plain = [None if k is None else keys[k] for k in rows]
    codec = column.slotted_codec(CompileKey)
    # WHEN a chunk of it is written and read back
    data = codec.encode(plain)
    got = codec.decode(data)
    # THEN the keys are equal, their values of the same types, and the rows that shared an
    # object share one again (a chunk holds each key once)
    assert data[:1] == b"V"
    assert got == plain
    assert [None if k is None else tuple(map(type, vars_of(k))) for k in got] == [
        None if k is None else tuple(map(type, vars_of(k))) for k in plain
    ]
    pairs = [(i, j) for i in range(len(rows)) for j in range(i) if rows[i] is not None]
    assert all((got[i] is got[j]) == (plain[i] is plain[j]) for i, j in pairs)


def test_a_spilled_key_column_reads_its_names_back_uninterned_and_shared_in_a_chunk() -> None:
    import sys

    from recompile_doctor.events import CompileKey

    # GIVEN keys whose names are interned (as the timeline keeps them), two sharing names
    fn, module = sys.intern("train_step_" + "x" * 40), sys.intern("jit_train_step_" + "y" * 40)
    keys = [CompileKey("jax", fn, module, compile_id="c#1"), CompileKey("jax", fn, module)]
    codec = column.slotted_codec(CompileKey)
    # WHEN a chunk of them is written and read back
    got = codec.decode(codec.encode(keys))
    # THEN the names are equal but not interned again (interning a chunk's names anew was
    # two fifths of reading it back), and the keys of the chunk share one copy of each
    assert got == keys
    assert got[0].function is not sys.intern(got[0].function)
    assert got[0].module is not sys.intern(got[0].module)
    assert got[0].function is got[1].function and got[0].module is got[1].module


def vars_of(key: Any) -> tuple[Any, ...]:
    import dataclasses

    return tuple(getattr(key, f.name) for f in dataclasses.fields(key))


class Text(str):
    """A string of a class of its own (marshal does not write it)."""


def test_a_key_column_holding_anything_else_is_pickled_whole() -> None:
    from recompile_doctor.events import CompileKey

    codec = column.slotted_codec(CompileKey)
    key = CompileKey("jax", "f", "jit_f")
    for odd in ([key, "not a key"], [CompileKey("jax", Text("f"), "jit_f"), key]):
        data = codec.encode(odd)
        assert data[:1] == b"P"
        assert codec.decode(data) == odd
    assert codec.decode(codec.encode([])) == []
    with pytest.raises(TypeError):
        column.slotted_codec(dict)


def test_a_spilled_table_s_keys_read_back_as_they_were_given(tmp_path: Path) -> None:
    from recompile_doctor.events import CompileKey
    from recompile_doctor.timeline.table import CompilationTable

    # GIVEN a table whose key column goes to the file early (its keys shared in runs)
    keys = [
        CompileKey("tensorflow", f"f{k % 3}", f"m{k % 5}", compile_id=f"c#{k}") for k in range(50)
    ]
    shared = CompileKey("jax", "g", "jit_g")
    with (
        mock.patch.object(column, "EARLY_SPILL_AFTER", 16),
        mock.patch.object(column, "CHUNK_ROWS", 8),
    ):
        table = CompilationTable()
        for k in range(120):
            key = keys[k] if k < 50 else shared if k % 2 else None
            table.append(
                module=f"m{k}",
                hash=None,
                source="a.log",
                line=k + 1,
                t=None,
                ordinal=None,
                text=f"line {k}",
                key=key,
                rank=None,
                process=0,
            )
        # THEN the column is spilled, and reads back every key (the shared one shared)
        assert isinstance(table.key, Spilled)
        got = list(table.key)
        assert got == [keys[k] if k < 50 else shared if k % 2 else None for k in range(120)]
        assert got[51] is got[53]
