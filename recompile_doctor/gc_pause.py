"""The cyclic garbage collector: paused while many objects are made and none freed, or
run less often in a process that keeps millions of them alive."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

#: the collector's thresholds for a process that analyses logs: an analysis keeps millions of
#: small objects alive (a compilation, its line, its key), few of them in cycles, and the
#: default thresholds scan them all again and again (a quarter of the time of a JAX log with
#: 47,000 explained recompilations)
LONG_LIVED_THRESHOLDS = (50_000, 20, 100)


def collect_less_often() -> None:
    """Set :data:`LONG_LIVED_THRESHOLDS` for the rest of the process (the command line's,
    and a log's forked workers': a library call's analysis raises them only while it runs,
    :func:`collecting_less_often`)."""
    gc.set_threshold(*LONG_LIVED_THRESHOLDS)


#: calls of :func:`collecting_less_often` under way in this process, and the thresholds
#: they found (threads of one host may analyse at once: the first in sets, the last out
#: puts back)
class _Raised:
    calls = 0
    found: tuple[int, ...] = ()


_less_often = _Raised()
_less_often_lock = threading.Lock()


@contextmanager
def collecting_less_often() -> Iterator[None]:
    """:data:`LONG_LIVED_THRESHOLDS` for the block (a library call's analysis: 7 % of a JAX
    log's time went to the default thresholds' collections), then the host's thresholds
    as they were found.  A host whose thresholds are already as high (the command line's)
    or higher is left as it is, and so is one that changed them during the block (its
    change stays)."""
    with _less_often_lock:
        if _less_often.calls == 0:
            found = gc.get_threshold()
            _less_often.found = found
            if found[0] < LONG_LIVED_THRESHOLDS[0]:
                gc.set_threshold(*LONG_LIVED_THRESHOLDS)
        _less_often.calls += 1
    try:
        yield
    finally:
        with _less_often_lock:
            _less_often.calls -= 1
            if _less_often.calls == 0 and gc.get_threshold() == LONG_LIVED_THRESHOLDS:
                gc.set_threshold(*_less_often.found)


def leave_the_rest_to_exit() -> None:
    """At the end of the command line's process: move every object still alive into the
    collector's permanent generation (``gc.freeze``), so that the collection the interpreter
    runs as it exits does not scan them all once more (a sixth of the instructions of
    ``analyze`` on a small log, its modules' objects mostly).  Objects are still freed as
    their modules are cleared; only garbage in reference cycles is left to the end of the
    process, as the interpreter itself leaves it when it exits."""
    gc.freeze()


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic GC for the block, and leave it as it was found (on or off).

    Parsing and diffing HLO allocate many small objects and free none until the modules go:
    the collector would only scan them again and again (a third of the time on big modules).
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
