"""Typed, framework-neutral events: what a log says happened, in one vocabulary.

Every log format's decoder (``recompile_doctor.parsers``) turns its lines into these; the
timeline folds them into compilations, cache lookups and loads per process and rank.  What is
specific to a framework stays in its decoder: the events only say *what* happened (a
compilation of this function started, the persistent cache missed this key, the framework
gave this reason for recompiling), never how that framework phrases it.

Each event carries the :class:`Span` it came from (input, 1-based line, verbatim text, time)
and the :class:`~recompile_doctor.model.Event` record that the report keeps of the line.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple

from recompile_doctor.key_name import key_name
from recompile_doctor.model import Event, ValueChange
from recompile_doctor.slotted import faster_init

#: where compiled programs or traces are cached.  ``executable``: the Poplar executable
#: cache; ``persistent``: JAX's persistent compilation cache; ``tracing``: a framework's
#: in-memory trace cache (jit / tf.function / Dynamo); ``fx-graph`` and ``aot-autograd``:
#: torch's compiled-graph caches; ``xla``: PyTorch/XLA's compilation cache.
CacheStore = Literal["executable", "persistent", "tracing", "fx-graph", "aot-autograd", "xla"]
#: the stores whose hit means no backend compilation happened
EXECUTABLE_STORES: frozenset[str] = frozenset(
    {"executable", "persistent", "fx-graph", "aot-autograd", "xla"}
)
#: ``active``: the cache is in use (a lock taken, an entry read) without a lookup outcome
CacheOutcomeKind = Literal["hit", "miss", "write", "disabled", "active"]


class Span(NamedTuple):
    """Where an event came from: input, 1-based line, verbatim text, seconds since the
    log's first time stamp (None where the log has none), and the rank or stream tag.
    (A named tuple: one is built per decoded line, and a tuple is built fastest.)"""

    source: str
    line: int
    text: str
    t: float | None = None
    rank: str | None = None


@faster_init  # (made per line by the decoders that do not keep them: see slotted.faster_init)
@dataclass(frozen=True, slots=True)
class CompileKey:
    """Which compilation: the framework's name for the function and whatever identifies
    this compilation of it (graph hash, cache key, the framework's own compile id).

    ``function`` is the user's function (``train_step``); ``module`` the compiled module's
    full name (``jit_train_step``, ``a_inference_train_step_42__...``), None when the log
    does not name it; ``eager`` marks an operation compiled outside any user function
    (JAX's ``jit(argmax)`` on host data).
    """

    framework: str
    function: str | None
    module: str | None = None
    graph_hash: str | None = None
    cache_key: str | None = None
    compile_id: str | None = None
    eager: bool = False

    @property
    def name(self) -> str:
        return key_name(self)


# a base only, never made itself: each event class generates its own methods
@dataclass(frozen=True, slots=True, init=False, repr=False, eq=False)
class _Base:
    """What every event holds: the line it came from and the record the report keeps of it."""

    span: Span
    #: the line as a recognized message (kind, module, hash, fields), or None
    record: Event | None
    #: whether the report's ``events`` list keeps the record (per-step lines are folded)
    keep: bool = field(default=True, kw_only=True)


@faster_init  # (one per log line: see slotted.faster_init)
@dataclass(frozen=True, slots=True)
class ProcessStarted(_Base):
    """A process of the run announced itself (``Poplar version``, a framework banner).
    ``new`` starts a new process when the current one has already done something."""

    framework: str
    version: str | None = None
    new: bool = True


@faster_init  # (one per log line: see slotted.faster_init)
@dataclass(frozen=True, slots=True)
class ProcessConfig(_Base):
    """The process's compiler flags or settings (``TF_POPLAR_FLAGS``, ``XLA_FLAGS``);
    ``cache_configured``: the settings turn an executable cache on."""

    flags: str
    cache_configured: bool


@faster_init  # (one per log line: see slotted.faster_init)
@dataclass(frozen=True, slots=True)
class CompileStarted(_Base):
    """A compilation began.

    ``synthetic``: the log only implies it (a progress bar, a compile phase) and does not
    give the graph hash.  ``phase``: when set, the event is a phase of a compilation that
    joins the open compilation of the process if that one has not had this phase yet (and
    was not served from a cache), else starts a new one.  ``joins_named``: a start that
    continues the open compilation when the module names match (``...``-elided names too).
    ``cache_visible``: the framework logs a cache lookup next to every compilation at this
    verbosity, so no lookup means no cache.
    """

    key: CompileKey
    ordinal: int | None = None
    synthetic: bool = False
    phase: str | None = None
    joins_named: bool = False
    cache_visible: bool = False
    duration_s: float | None = None  # known at once (a finished progress bar)
    arguments: str | None = None  # the argument shapes and types, as the log prints them


@faster_init  # (one per log line: see slotted.faster_init)
@dataclass(frozen=True, slots=True)
class CompileActivity(_Base):
    """A line that belongs to the compilation under way: it lasts at least until here.
    ``uncacheable``: the line says this compilation's executable cannot be cached."""

    uncacheable: bool = False


@faster_init  # (one per log line: see slotted.faster_init)
@dataclass(frozen=True, slots=True)
class CompileFinished(_Base):
    """A compilation ended; ``duration_s`` when the log says how long it took.  ``key``
    names the compilation when the line does (else the one under way)."""

    key: CompileKey | None = None
    duration_s: float | None = None


@faster_init  # (one per log line: see slotted.faster_init)
@dataclass(frozen=True, slots=True)
class CacheLookup(_Base):
    """A cache was consulted (hit / miss), written, or found to be off, for ``key``.

    ``entry``: the cache entry (a file, a key) when the log names it.  A hit or miss of an
    executable store with no compilation open is itself a compilation request, named by
    ``key``.
    """

    store: CacheStore
    outcome: CacheOutcomeKind
    key: CompileKey | None = None
    entry: str | None = None


@faster_init  # (one per log line: see slotted.faster_init)
@dataclass(frozen=True, slots=True)
class ExecutableLoaded(_Base):
    """An executable was loaded onto the device (``Loading executable``)."""

    duration_s: float | None = None


@faster_init  # (one per log line: see slotted.faster_init)
@dataclass(frozen=True, slots=True)
class Executed(_Base):
    """A compiled program ran (``Execute <module>``): the first one ends warm-up."""

    module: str


@faster_init  # (one per log line: see slotted.faster_init)
@dataclass(frozen=True, slots=True)
class RecompileReason(_Base):
    """The framework said why it traces or compiles again (JAX's ``TRACING CACHE MISS``,
    torch's guard failures, TF's retracing warning), in its own words (``reason``, kept
    verbatim), mapped to a rule id by the decoder where the words allow it, with what
    changed (old -> new) and the user's call site."""

    key: CompileKey
    rule: str | None
    reason: str
    changes: tuple[ValueChange, ...] = ()
    call_site: str | None = None
    lines: tuple[int, ...] = ()  # every line of a multi-line reason


@faster_init  # (one per log line: see slotted.faster_init)
@dataclass(frozen=True, slots=True)
class FrameworkNote(_Base):
    """A fact specific to one framework that an analysis of that framework reads
    (Poplar's pre-compile messages, a retracing warning's counts, a recompile limit)."""

    note: str
    key: CompileKey | None = None
    detail: Mapping[str, Any] = field(default_factory=dict)


#: notes of one line per compilation or load that no analysis reads once the line is in the
#: report's events (JAX's ``Finished tracing ... in S sec``, Poplar's ``Loading
#: executable``): the timeline does not keep them, and a decoder folding what the timeline
#: ignores may leave them out
UNREAD_NOTES: frozenset[str] = frozenset({"traced", "load-start"})

TypedEvent = (
    ProcessStarted
    | ProcessConfig
    | CompileStarted
    | CompileActivity
    | CompileFinished
    | CacheLookup
    | ExecutableLoaded
    | Executed
    | RecompileReason
    | FrameworkNote
)
