"""The decoders' tables of pieces read once each (a stamp's minute, a date's midnight, a
prefix's fields, the compile keys a worker hands over) stay within :data:`~recompile_doctor.parsers._memo.KEPT_MAX` entries
however many distinct pieces a log holds, and give the same answers once emptied."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from recompile_doctor.events import CompileKey
from recompile_doctor.parsers import _event_codec, _prefixes, _pylog, tensorflow
from recompile_doctor.parsers._memo import KEPT_MAX

_START = datetime(2023, 4, 26, tzinfo=UTC)
#: more distinct pieces than a table holds
_MANY = KEPT_MAX + 50


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


CASES: list[tuple[str, Callable[[int], object], Callable[[], dict[str, Any]]]] = [
    ("minutes", _epoch_seconds, lambda: _prefixes._MINUTES),
    ("stamp heads", _stamp_seconds, lambda: _prefixes._HEADS["local"]),
    ("prefix rests", _rest, lambda: _prefixes._RESTS),
    ("midnights", _midnight, lambda: _pylog._MIDNIGHTS),
    ("absl heads", _absl_head, lambda: tensorflow._ABSL_HEADS),
    ("keys encoded", _key_handed_over, lambda: _event_codec._ENCODED),
    ("keys decoded", _key_handed_over, lambda: _event_codec._MADE),
]


@pytest.mark.parametrize(("name", "read", "table"), CASES, ids=[c[0] for c in CASES])
def test_a_table_of_pieces_stays_bounded_and_answers_alike(
    name: str, read: Callable[[int], object], table: Callable[[], dict[str, Any]]
) -> None:
    """GIVEN more distinct pieces than a table holds, WHEN each is read (and read again
    after the table has been emptied on the way), THEN the table never holds more than
    KEPT_MAX entries, holds some, and every answer is the one a first reading gives."""
    table().clear()
    first = [read(k) for k in range(_MANY)]
    assert 0 < len(table()) <= KEPT_MAX, name
    table().clear()
    assert [read(k) for k in range(_MANY)] == first
    assert first[0] is not None and first[0] != first[-1]
