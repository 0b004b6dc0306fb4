"""What the tool says about its own work when asked (``-v``; a library caller: logging of
``recompile_doctor`` at INFO): how a log was read and where the time went.

The ``logging`` module is not imported at start-up; until something imports it (``-v`` does,
and so does a host that configures logging) nothing is said and nothing is timed.
"""

from __future__ import annotations

import sys
import time

LOGGER = "recompile_doctor"


def telling() -> bool:
    """True when an INFO line of the package would be shown."""
    if "logging" not in sys.modules:
        return False
    import logging

    return logging.getLogger(LOGGER).isEnabledFor(logging.INFO)


def tell(message: str) -> None:
    """Say ``message`` (one line) at INFO, if :func:`telling`."""
    if telling():
        import logging

        logging.getLogger(LOGGER).info("%s", message)


class Stopwatch:
    """Seconds since it was made (or last read), when :func:`telling` (else never read)."""

    def __init__(self) -> None:
        self.on = telling()
        self._t = time.perf_counter() if self.on else 0.0

    def lap(self) -> float:
        """Seconds since the last lap (or the start)."""
        now = time.perf_counter()
        dt, self._t = now - self._t, now
        return dt
