"""The cyclic garbage collector paused while many objects are made and none freed."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


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
