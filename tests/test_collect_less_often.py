"""A library call's analysis runs the cyclic collector at the thresholds for long-lived
objects, and gives the host its own thresholds back, whatever the threads."""

from __future__ import annotations

import gc
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

import recompile_doctor as rd
from recompile_doctor.gc_pause import LONG_LIVED_THRESHOLDS

LOG = Path(__file__).resolve().parent.parent / "fixtures" / "jax" / "growing_shape" / "run.log"


@pytest.fixture(autouse=True)
def host_thresholds() -> Iterator[None]:
    found = gc.get_threshold()
    yield
    gc.set_threshold(*found)


def _noting(seen: list[tuple[int, ...]]) -> Callable[[str, int], None]:
    return lambda path, n: seen.append(gc.get_threshold())


def test_an_analysis_collects_less_often_and_the_host_gets_its_thresholds_back() -> None:
    # GIVEN a host with the default-like thresholds of its own, WHEN it analyses a log,
    # THEN the reading runs at the long-lived thresholds, and the host's are back after
    gc.set_threshold(701, 11, 12)
    seen: list[tuple[int, ...]] = []
    rd.analyze(LOG, on_progress=_noting(seen))
    assert seen and set(seen) == {LONG_LIVED_THRESHOLDS}
    assert gc.get_threshold() == (701, 11, 12)


def test_a_failing_analysis_gives_the_thresholds_back_too() -> None:
    gc.set_threshold(701, 11, 12)
    with pytest.raises(rd.RecompileDoctorError):
        rd.analyze(LOG.parent / "no-such.log")
    assert gc.get_threshold() == (701, 11, 12)


def test_a_host_collecting_less_often_already_is_left_alone() -> None:
    gc.set_threshold(200_000, 30, 40)
    seen: list[tuple[int, ...]] = []
    rd.analyze(LOG, on_progress=_noting(seen))
    assert set(seen) == {(200_000, 30, 40)}
    assert gc.get_threshold() == (200_000, 30, 40)


def test_thresholds_the_host_sets_during_the_analysis_stay() -> None:
    gc.set_threshold(701, 11, 12)
    rd.analyze(LOG, on_progress=lambda path, n: gc.set_threshold(900, 9, 9))
    assert gc.get_threshold() == (900, 9, 9)


def test_threads_analysing_at_once_give_the_host_its_thresholds_back() -> None:
    # GIVEN two threads of one host inside an analysis at once, the first to start being
    # the first to end, THEN the second goes on at the raised thresholds after the first
    # ended, and the host's thresholds are back once both have ended (the second did not
    # put back the raised thresholds it found when it began)
    gc.set_threshold(701, 11, 12)
    both_in = threading.Barrier(2, timeout=60)
    first_done = threading.Event()
    errors: list[BaseException] = []
    after_first: list[tuple[int, ...]] = []

    def first_cb(path: str, n: int) -> None:
        both_in.wait()

    def second_cb(path: str, n: int) -> None:
        both_in.wait()
        assert first_done.wait(60)
        after_first.append(gc.get_threshold())

    def run(cb: Callable[[str, int], None], done: threading.Event | None) -> None:
        try:
            rd.analyze(LOG, on_progress=cb)
        except BaseException as e:  # (reported by the test's thread)
            errors.append(e)
        finally:
            if done is not None:
                done.set()

    first = threading.Thread(target=run, args=(first_cb, first_done))
    first.start()
    while gc.get_threshold() != LONG_LIVED_THRESHOLDS and first.is_alive():
        first.join(0.001)  # (the first is in: the second finds the raised thresholds)
    second = threading.Thread(target=run, args=(second_cb, None))
    second.start()
    first.join(60)
    second.join(60)
    assert not errors
    assert after_first == [LONG_LIVED_THRESHOLDS]
    assert gc.get_threshold() == (701, 11, 12)
