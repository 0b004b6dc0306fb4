"""What the timeline builder produces: frozen values the analyses work on."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

from recompile_doctor.events import CacheLookup, FrameworkNote, RecompileReason, Span
from recompile_doctor.model import Compilation, Event
from recompile_doctor.timeline.names import function_key


class Load(NamedTuple):
    """An executable loaded onto the device (the ``Loading executable`` phase).  (A named
    tuple: a switching run has one per few steps, kept packed and read back on every pass
    of an analysis, and a tuple is rebuilt fastest.)"""

    source: str
    line: int
    t: float | None
    duration_s: float | None
    module: str | None
    process: int
    warmup: bool
    reload: bool  # the device had another executable loaded in between
    text: str
    attributed: bool = True  # module known from the next Execute line (else a best guess)
    rank: str | None = None  # the MPI rank tag of the line, if any


class Switch(NamedTuple):
    """The device ran another executable than the step before (``Execute B`` after
    ``Execute A``): the stack must load B again unless both fit.  ``back``: B had run on
    this device before (a switch back, not a first run).  (A named tuple, as :class:`Load`.)"""

    source: str
    line: int
    t: float | None
    text: str
    process: int
    from_module: str
    to_module: str
    back: bool
    rank: str | None = None


@dataclass(frozen=True, slots=True)
class Timeline:
    """What the analyses work on."""

    compilations: tuple[Compilation, ...]
    loads: Sequence[Load]
    events: Sequence[Event]  # in log order; long lists are read back from a spool
    processes: tuple[ProcessInfo, ...]
    comp_process: tuple[int, ...]  # process index of each compilation
    uncacheable: frozenset[int]  # ids of compilations that cannot be cached (custom ops)
    #: every cache lookup, with the id of the compilation it belongs to (None: none)
    lookups: Sequence[tuple[CacheLookup, int | None]] = ()
    notes: Sequence[FrameworkNote] = ()
    #: every reason a framework gave, with the id of the compilation it explains
    reasons: Sequence[tuple[RecompileReason, int | None]] = ()
    #: every change of the executing module on a device (from the ``Execute`` lines)
    switches: Sequence[Switch] = ()

    def reasons_by_compilation(self) -> dict[int, list[RecompileReason]]:
        """The reasons attached to each compilation (by id), in log order: one pass over
        the reasons (asking per compilation would pass over them once per compilation)."""
        out: dict[int, list[RecompileReason]] = {}
        for r, cid in self.reasons:
            if cid is not None:
                out.setdefault(cid, []).append(r)
        return out

    def by_function(self) -> dict[str, list[Compilation]]:
        out: dict[str, list[Compilation]] = {}
        for c in self.compilations:
            out.setdefault(function_key(c.module), []).append(c)
        return out


@dataclass(frozen=True, slots=True)
class ProcessInfo:
    """One process of the run (a new ``Poplar version`` line or a new log starts one)."""

    index: int
    source: str
    flags: str | None
    verbose: bool
    cache_activity: bool
    first_execute_line: int | None
    framework: str | None = None
    version: str | None = None
    cache_configured: bool = False
    config_span: Span | None = None  # the line that set the flags
