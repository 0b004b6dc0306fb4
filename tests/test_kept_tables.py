"""The decoders' tables of pieces read once each (a stamp's minute, a date's midnight, a
prefix's fields, the compile keys a worker hands over, Poplar's messages, torch's guard
comments), the JSON writer's and the timeline builder's keys stay within their bound
however many distinct pieces a log holds, and give the same answers once emptied."""

from __future__ import annotations

import sys
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from recompile_doctor import json_text
from recompile_doctor.bounded import KEPT_MAX
from recompile_doctor.events import CompileKey
from recompile_doctor.parsers import (
    _event_codec,
    _prefixes,
    _pylog,
    _torch_guards,
    poplar,
    tensorflow,
)
from recompile_doctor.timeline import TimelineBuilder

_START = datetime(2023, 4, 26, tzinfo=UTC)


def _minute(k: int) -> str:
    """``YYYY-MM-DD HH:MM`` of the ``k``th minute after the start."""
    return (_START + timedelta(minutes=k)).strftime("%Y-%m-%d %H:%M")


def _epoch_seconds(k: int) -> object:
    return _prefixes.epoch_seconds(f"{_minute(k)}:07.250000")


def _stamp_seconds(k: int) -> object:
    return _prefixes.stamp_seconds(f"{_minute(k)}:07.250000: I x.cc:1] m", "local")


def _rest(k: int) -> object:
    return _prefixes.split_prefix(f"2023-04-26 14:42:07.250000: I dir/file_{k}.cc:1109] m")[0]


def _midnight(k: int) -> object:
    day = (_START + timedelta(days=k)).strftime("%Y-%m-%d")
    return _pylog._epoch(f"{day} 01:02:03,500")


def _absl_head(k: int) -> object:
    return tensorflow._absl_head(f"I{k % 10000:04d} {k // 60 % 24:02d}:{k % 60:02d}:")


def _key_handed_over(k: int) -> object:
    return _event_codec._dec(_event_codec._enc(CompileKey("jax", f"step_{k}", graph_hash=str(k))))


def _guard_comment(k: int) -> object:
    return _torch_guards.comment_frame(f"| +- GUARD: L['x'] == {k}  # mp/t.py:{k} in step_{k}")


def _message(k: int) -> object:
    return poplar.match_message(f"Execute a_inference_step_{k}__XlaMustCompile")


def _object_pieces(k: int) -> object:
    return json_text.object_pieces((f"key_{k}", "t"), 1)


def _json_name(k: int) -> object:
    return json_text._name(f"module_{k}")


_BUILDER = TimelineBuilder(None)


def _builders_key(k: int) -> object:
    return _BUILDER._key(CompileKey("tensorflow", f"step_{k}", f"cluster_{k}"))


#: (name, a reader of the k-th distinct piece, its table, the table's bound)
CASES: list[tuple[str, Callable[[int], object], Callable[[], dict[Any, Any]], int]] = [
    ("minutes", _epoch_seconds, lambda: _prefixes._MINUTES, KEPT_MAX),
    ("stamp heads", _stamp_seconds, lambda: _prefixes._HEADS["local"], KEPT_MAX),
    ("prefix rests", _rest, lambda: _prefixes._RESTS, KEPT_MAX),
    ("midnights", _midnight, lambda: _pylog._MIDNIGHTS, KEPT_MAX),
    ("absl heads", _absl_head, lambda: tensorflow._ABSL_HEADS, KEPT_MAX),
    ("keys encoded", _key_handed_over, lambda: _event_codec._ENCODED, KEPT_MAX),
    ("keys decoded", _key_handed_over, lambda: _event_codec._MADE, KEPT_MAX),
    ("poplar messages", _message, lambda: poplar._MEMO, poplar._MEMO_ENTRIES),
    ("guard comments", _guard_comment, lambda: _torch_guards._FRAMES, KEPT_MAX),
    ("JSON object pieces", _object_pieces, lambda: json_text._PIECES, KEPT_MAX),
    ("JSON names", _json_name, lambda: json_text._NAMES, KEPT_MAX),
    ("compilation keys", _builders_key, lambda: _BUILDER._keys, KEPT_MAX),
]


@pytest.mark.parametrize(("name", "read", "table", "most"), CASES, ids=[c[0] for c in CASES])
def test_a_table_of_pieces_stays_bounded_and_answers_alike(
    name: str, read: Callable[[int], object], table: Callable[[], dict[Any, Any]], most: int
) -> None:
    """GIVEN more distinct pieces than a table holds, WHEN each is read (and read again
    after the table has been emptied on the way), THEN the table holds each piece read up
    to its bound and never more, and every answer is the one a first reading gives."""
    many = most + 50
    table().clear()
    first = []
    peak = 0
    for k in range(many):
        first.append(read(k))
        peak = max(peak, len(table()))
    assert peak == most, name  # (each piece kept, up to the bound: then emptied)
    table().clear()
    assert [read(k) for k in range(many)] == first
    assert first[0] is not None and first[0] != first[-1]


def test_the_builders_kept_key_is_an_equal_copy_with_its_names_interned() -> None:
    # GIVEN keys whose names are strings made at run time (not interned), one of each kind
    # of name: a module, a function alone, neither
    made = "".join(["jit_", "step"])
    keys = [
        CompileKey("jax", "".join(["st", "ep"]), made, "h", "k", "0/1", True),
        CompileKey("torch", "".join(["fo", "rward"])),
        CompileKey("".join(["pop", "lar"]), None),
    ]
    assert made is not sys.intern("jit_step")
    builder = TimelineBuilder()
    # (the literals below are interned: a name the builder interned is the literal itself)
    interned = [("jax", "step", "jit_step"), ("torch", "forward", None), ("poplar", None, None)]
    for key, names in zip(keys, interned, strict=True):
        kept = builder._key(key)
        # THEN the kept copy equals the key, its names are the interned strings, and the
        # builder gives the same copy again for an equal key
        assert kept == key and type(kept) is CompileKey
        for name, literal in zip(("framework", "function", "module"), names, strict=True):
            assert getattr(kept, name) is literal
        assert builder._key(CompileKey(*[getattr(key, f) for f in _FIELDS])) is kept
    # AND a key's name is its module, else its function, else "?"
    assert [k.name for k in keys] == ["jit_step", "forward", "?"]


_FIELDS = ("framework", "function", "module", "graph_hash", "cache_key", "compile_id", "eager")


def test_the_builder_asked_for_the_same_key_object_again_gives_the_same_copy() -> None:
    # GIVEN a builder asked for a key, then for another, then for the first object again,
    # and again once its table of keys was emptied
    builder = TimelineBuilder()
    a = CompileKey("jax", "".join(["st", "ep"]), "jit_step")
    b = CompileKey("jax", "other", "jit_other")
    kept_a = builder._key(a)
    assert builder._key(a) is kept_a  # (the last key asked: no fields read)
    kept_b = builder._key(b)
    assert kept_b == b and kept_b is not kept_a
    # THEN each ask gives the kept copy of the key asked, whichever was asked last
    assert builder._key(a) is kept_a and builder._key(b) is kept_b
    builder._keys.clear()
    again = builder._key(a)
    assert again == a and builder._key(a) is again and builder._key(b) == b
