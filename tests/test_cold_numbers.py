"""Numbers kept in a temporary file (the TensorFlow decoder's counts past a size)."""

from __future__ import annotations

import os
import pickle
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from recompile_doctor.timeline import cold_keys
from recompile_doctor.timeline.cold_keys import ColdNumbers

_OPS = st.lists(
    st.one_of(
        st.tuples(st.just("append"), st.integers(0, 2**32 - 1)),
        st.tuples(st.just("set"), st.integers(0, 50), st.integers(0, 2**32 - 1)),
        st.tuples(st.just("freeze")),
    ),
    max_size=60,
)


@settings(deadline=None)  # (a freeze writes a temporary file)
@given(_OPS, st.integers(1, 4), st.integers(1, 3))
def test_numbers_in_a_file_answer_as_a_list_does(
    ops: list[tuple[object, ...]], changed_max: int, copy: int
) -> None:
    # GIVEN numbers appended, set anew (in the file or after it) and frozen into the file
    # at any point, the file written anew after 1-4 numbers of it are set, and copied 1-3
    # numbers at a time
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(cold_keys, "CHANGED_MAX", changed_max)
        mp.setattr(cold_keys, "_COPY", copy * 4)
        numbers, plain = ColdNumbers("I"), []
        for op in ops:
            if op[0] == "append":
                numbers.append(op[1])  # type: ignore[arg-type]
                plain.append(op[1])
            elif op[0] == "set" and plain:
                i = int(op[1]) % len(plain)  # type: ignore[call-overload]
                numbers[i] = op[2]  # type: ignore[assignment]
                plain[i] = op[2]
            elif op[0] == "freeze":
                numbers.freeze()
            # THEN after each they hold the same numbers
            assert len(numbers) == len(plain)
            assert [numbers[i] for i in range(len(plain))] == plain
        # AND a copy made by pickling holds them all, in memory
        again = pickle.loads(pickle.dumps(numbers))
        assert list(again) == plain
        numbers.close()


def test_a_number_out_of_range_or_type_is_refused() -> None:
    numbers = ColdNumbers("I", [1, 2, 3])
    numbers.freeze()
    with pytest.raises(OverflowError):
        numbers[0] = -1
    with pytest.raises(OverflowError):
        numbers[0] = 2**32
    with pytest.raises(IndexError):
        numbers[-1]
    with pytest.raises(IndexError):
        numbers[3]
    assert [numbers[i] for i in range(3)] == [1, 2, 3]
    numbers.close()


# (beside the test runner's IO thread, which Python 3.12 and later warn about)
@pytest.mark.filterwarnings("ignore:This process:DeprecationWarning")
@pytest.mark.skipif(not hasattr(os, "fork") or sys.platform == "darwin", reason="fork")
def test_a_forked_process_changing_numbers_in_the_file_leaves_its_parents_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # GIVEN numbers in the file, the file written anew at each number set
    monkeypatch.setattr(cold_keys, "CHANGED_MAX", 1)
    numbers = ColdNumbers("I", range(100))
    numbers.freeze()
    # WHEN a forked process sets some of them anew and freezes more
    pid = os.fork()
    if pid == 0:  # (the child: its own answers checked here, its exit status says)
        ok = False
        try:
            numbers[5] = 500
            numbers.append(7)
            numbers.freeze()
            numbers[99] = 9
            ok = numbers[5] == 500 and numbers[99] == 9 and numbers[100] == 7
        finally:
            os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    # THEN the child saw its own changes, and the parent's numbers are as they were
    assert os.waitstatus_to_exitcode(status) == 0
    assert [numbers[i] for i in range(len(numbers))] == list(range(100))
    numbers[5] = 6
    assert numbers[5] == 6 and numbers[4] == 4
    numbers.close()
