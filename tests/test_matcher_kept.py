"""A hyperscan matcher is compiled once per thread for the same literals, and gives what a
new one gives."""

from __future__ import annotations

import threading

import pytest

from recompile_doctor.matcher_choice import has_hyperscan
from recompile_doctor.parsers import _scan

pytestmark = pytest.mark.skipif(not has_hyperscan(), reason="hyperscan is not installed")

LITERALS = ["Compiling", "cache miss", "Finished tracing"]
DATA = bytearray(
    b"x\nCompiling f for args\nnothing\ncache miss for g\nFinished tracing h\nCompiling\n" * 50
)


def _in_thread(run: object) -> object:
    got: list[object] = []
    t = threading.Thread(target=lambda: got.append(run()))  # type: ignore[operator]
    t.start()
    t.join()
    return got[0]


def test_the_same_literals_give_this_threads_matcher_and_another_thread_its_own() -> None:
    # GIVEN a matcher made for some literals
    first = _scan.make_matcher(LITERALS, "hyperscan")
    # THEN the same literals give it again in this thread, other literals another one
    assert _scan.make_matcher(list(LITERALS), "hyperscan") is first
    assert _scan.make_matcher([*LITERALS, "Tracing"], "hyperscan") is not first
    # AND another thread gets a matcher of its own (a database's scratch space serves one
    # scan at a time), finding the same
    other = _in_thread(lambda: _scan.make_matcher(LITERALS, "hyperscan"))
    assert other is not first
    assert other.positions(DATA, len(DATA)) == first.positions(DATA, len(DATA))  # type: ignore[attr-defined]
    # AND what they find is what a matcher made anew finds
    assert first.positions(DATA, len(DATA)) == _scan.HyperscanMatcher(
        [s.encode() for s in LITERALS]
    ).positions(DATA, len(DATA))


def test_threads_scanning_at_once_each_find_what_one_finds() -> None:
    want = _scan.make_matcher(LITERALS, "hyperscan").positions(DATA, len(DATA))
    wrong: list[int] = []

    def scan() -> None:
        m = _scan.make_matcher(LITERALS, "hyperscan")
        for _ in range(200):
            if m.positions(DATA, len(DATA)) != want:
                wrong.append(1)

    threads = [threading.Thread(target=scan) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not wrong


def test_a_thread_keeps_a_bounded_number_of_matchers() -> None:
    def make_many() -> int:
        most = 0
        for i in range(_scan.MATCHERS_KEPT * 2 + 3):
            _scan.make_matcher([f"literal {i}"], "hyperscan")
            most = max(most, len(_scan._MADE.matchers))
        return most

    assert _in_thread(make_many) == _scan.MATCHERS_KEPT
