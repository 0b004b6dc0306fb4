"""Events -> a timeline: compilations (with cache outcome and warm-up), executable loads,
processes, and the events worth keeping in a report.

The builder is fed one event at a time (it never needs the whole log) and keeps only what a
report shows: per-step events such as ``Execute`` are folded into counts.

How compilations are assembled (``reference/poplar_formats.md`` §1, §3, §7):

* ``Begin XLA compilation`` opens a compilation.  The next ``Loaded <module> from <file>`` for
  that module makes it a cache *hit* (no real compile); ``Couldn't find <file>`` makes it a
  *miss*.  With neither, the executable cache was *disabled* (both kinds of line are printed at
  the same verbosity as ``Begin``).
* The cache file's hash is not the HLO hash, so they are linked by module name and order.
* Without ``Begin`` lines (default verbosity), the progress bar (``Compiling module <name>:``)
  or a Poplar ``graphConstruction`` phase opens a compilation whose cache outcome is unknown.
* ``Loading executable`` phases are loads of an engine onto the device; each is attributed to
  the module that executes next (``Execute <module>``), else to the last compiled module.
"""

from recompile_doctor.timeline.builder import TimelineBuilder, build_timeline
from recompile_doctor.timeline.names import function_key
from recompile_doctor.timeline.types import Load, ProcessInfo, Switch, Timeline

__all__ = [
    "Load",
    "ProcessInfo",
    "Switch",
    "Timeline",
    "TimelineBuilder",
    "build_timeline",
    "function_key",
]
