"""The cyclic garbage collector: paused while many objects are made and none freed, or
run less often in a process that keeps millions of them alive."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

#: the collector's thresholds for a process that analyses logs: an analysis keeps millions of
#: small objects alive (a compilation, its line, its key), few of them in cycles, and the
#: default thresholds scan them all again and again (a quarter of the time of a JAX log with
#: 47,000 explained recompilations)
LONG_LIVED_THRESHOLDS = (50_000, 20, 100)


def collect_less_often() -> None:
    """Set :data:`LONG_LIVED_THRESHOLDS` for the rest of the process (the command line's,
    and a log's forked workers': a library call leaves its host's collector alone)."""
    gc.set_threshold(*LONG_LIVED_THRESHOLDS)


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
