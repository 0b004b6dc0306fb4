"""A time in seconds to the microsecond, as ``round(x, 6)`` gives it, without its cost.

The decoders round every event's time, the timeline builder every compilation's start and
duration.  A module of its own, importing nothing of the package, so that both may use it;
compiled in a compiled build.
"""

from __future__ import annotations

from typing import Final

#: below 2**51 a float's halves (k + 0.5) are floats, and adding and taking away
#: :data:`_ROUND6_SHIFT` (1.5 * 2**52, whose floats are the integers) rounds a float to the
#: nearest integer: :func:`round6` multiplies there
_ROUND6_MAX: Final = float(1 << 51)
_ROUND6_SHIFT: Final = float(3 << 51)


def round6(x: float) -> float:
    """``round(x, 6)``, the same float, without its decimal conversion (which costs a
    decimal string of ``x`` and its reading back: 3 % of a Poplar log's decoding, once per
    event).  Below 2**51 the product ``y = x * 1e6`` is rounded from the exact one, and
    a half is a float: when ``y`` is less than a half from an integer ``r``, so is the
    exact product, which ``round`` rounds to the same ``r``; ``r / 1e6`` is then the float
    nearest to that decimal, as ``round`` gives.  A half itself, and a zero (its sign), are
    left to ``round``.  ``r`` is found by float arithmetic alone (``y + 1.5 * 2**52``
    rounds to an integer, and taking it away again is exact), with no call: ``round(y)``
    and ``abs`` were most of this function's instructions in the compiled build."""
    y = x * 1e6
    if -_ROUND6_MAX < y < _ROUND6_MAX:
        r = (y + _ROUND6_SHIFT) - _ROUND6_SHIFT
        if r != 0.0 and -0.5 < y - r < 0.5:
            return r / 1e6
    return round(x, 6)
