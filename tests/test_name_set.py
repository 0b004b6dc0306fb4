"""NameSet: a finding's modules, sorted and each once, kept out of memory when there are
many; and their JSON, written in pieces from that sequence."""

from __future__ import annotations

import heapq
import json
from collections.abc import Iterator
from unittest import mock

from hypothesis import given
from hypothesis import strategies as st

from recompile_doctor.analyses._common import make_finding
from recompile_doctor.json_text import dumps_indented, pieces_indented
from recompile_doctor.model import Evidence, list_items_json
from recompile_doctor.timeline import name_set
from recompile_doctor.timeline.name_set import NameSet
from recompile_doctor.timeline.packed import Packed


@given(st.lists(st.text(max_size=3)), st.integers(1, 5), st.integers(2, 4))
def test_sorted_as_a_sorted_set(names: list[str], run: int, fan_in: int) -> None:
    # GIVEN names, repeated or not, written as sorted runs of at most `run` names, merged
    # `fan_in` runs at a time as they come and at the end
    with (
        mock.patch.object(name_set, "RUN_NAMES", run),
        mock.patch.object(name_set, "FAN_IN", fan_in),
    ):
        got = NameSet(names).sorted()
    # THEN they are sorted, each once (the runs merged), as a sorted set gives them
    assert list(got) == sorted(set(names))
    assert got == tuple(sorted(set(names)))


@given(st.lists(st.text(min_size=1, max_size=12)), st.integers(1, 30))
def test_a_set_of_long_names_is_written_by_their_characters(names: list[str], chars: int) -> None:
    # GIVEN names held up to `chars` characters in all before a run is written
    with mock.patch.object(name_set, "RUN_CHARS", chars):
        ns = NameSet()
        for n in names:
            ns.add(n)
            # THEN the set in memory never holds more (but for the name just given)
            assert sum(map(len, ns._names)) == ns._chars < chars + len(n)
            assert ns._chars < chars or not ns._names
        got = ns.sorted()
    # AND the names come back sorted, each once
    assert list(got) == sorted(set(names))


def test_many_names_are_kept_packed() -> None:
    # GIVEN 40,000 names given twice (more than RUN_NAMES: runs in temporary files)
    names = [f"a_inference_train_step_{k}__XlaMustCompile_true_.7" for k in range(40_000)]
    got = NameSet([*names, *reversed(names)]).sorted()
    # THEN one packed sequence, sorted, each once: indexable as a tuple is
    assert isinstance(got, Packed)
    expected = sorted(names)
    assert len(got) == 40_000 and got[0] == expected[0] and got[-1] == expected[-1]
    assert got[12_345] == expected[12_345]
    assert list(got) == expected


def test_no_merge_reads_more_than_fan_in_runs() -> None:
    # GIVEN 1,000 distinct names in runs of 3 (334 runs), merged 4 at a time
    # (counted where a merge reads its runs, heapq.merge: a compiled build calls the
    # module's own functions directly, not through its namespace)
    merges: list[int] = []
    real = heapq.merge

    def counted(*runs: Packed[str]) -> Iterator[str]:
        merges.append(len(runs))
        return real(*runs)

    names = [f"n{k:04d}" for k in range(1000)]
    with (
        mock.patch.object(name_set, "RUN_NAMES", 3),
        mock.patch.object(name_set, "FAN_IN", 4),
        mock.patch.object(heapq, "merge", counted),
    ):
        s = NameSet(reversed(names))
        assert len(s._runs) < 4 * 5  # (at most 3 a level as they come: 334 < 4 ** 5)
        got = s.sorted()
    # THEN no merge took more than 4 runs, and the names are all there, sorted
    assert merges and max(merges) <= 4
    assert list(got) == names


def test_a_finding_with_many_modules_writes_the_same_json() -> None:
    # GIVEN a finding of 40,000 modules
    names = [f"m{k:05d}" for k in range(40_000)]
    f = make_finding(
        "retracing",
        detail="d",
        modules=reversed(names),
        count=1,
        wasted=0.0,
        evidence=[Evidence("a.log", 1, "x")],
    )
    assert isinstance(f.modules, Packed)
    # THEN its JSON, written in pieces from the packed sequence, is the JSON of its lists
    plain = f.to_json()
    assert plain["modules"] == names
    assert "".join(pieces_indented(f.to_json(streamed=True), 2)) == dumps_indented(plain, 2)
    text = "[" + "".join(list_items_json([f])) + "\n  ]"
    assert json.loads(text)[0]["modules"] == names
    # AND the text of a short tuple or any sequence is a JSON array
    assert dumps_indented({"m": Packed()}) == json.dumps({"m": []}, indent=2)
