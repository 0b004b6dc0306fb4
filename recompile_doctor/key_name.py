"""The name a compilation goes by: its key's module, else its function, else ``?``.

The rule of :attr:`recompile_doctor.events.CompileKey.name`, which calls this.  A module of
its own, importing nothing of the package, so that the timeline's compiled code calls it
directly (the interpreted property cost about 700 instructions a call from compiled code,
and the timeline asks it five times per compilation while reading and six after: 122,792
calls on the 24 MB JAX bench log); compiled in a compiled build.
"""

from __future__ import annotations

from typing import Protocol


class Keyed(Protocol):
    """What the rule reads of a key."""

    @property
    def module(self) -> str | None: ...
    @property
    def function(self) -> str | None: ...


def key_name(key: Keyed) -> str:
    """``key``'s module, else its function, else ``?``."""
    return key.module or key.function or "?"
