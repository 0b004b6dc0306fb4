"""The timeline builder: events in, one at a time; a :class:`Timeline` out."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from recompile_doctor.model import CacheOutcome, Compilation, Event
from recompile_doctor.timeline.names import elided_match, function_key
from recompile_doctor.timeline.types import Load, ProcessInfo, Timeline

_KEEP_KINDS = frozenset(
    {
        "compile-begin",
        "compile-end",
        "cache-hit",
        "cache-miss",
        "cache-new-entry",
        "precompile-saved",
        "precompile-no-cache-path",
        "precompile-zeros",
        "custom-op-unhashable",
        "compilation-only",
        "cluster-compiled",
        "attach",
        "progress-start",
        "progress-end",
        "poplar-version",
        "poplar-flags",
        "popart-cache-found",
        "popart-cache-load",
        "on-demand-override",
        "replication",
        "graph-compiled",
    }
)
_CACHE_KINDS = frozenset(
    {
        "cache-hit",
        "cache-miss",
        "cache-lock",
        "cache-deserialize",
        "cache-new-entry",
        "precompile-saved",
    }
)
GRAPH_PHASE = "graphConstruction"
LOAD_PHASE = "Loading executable"


@dataclass(slots=True)
class _Pending:
    id: int
    module: str
    hash: str | None
    source: str
    line: int
    t: float | None
    ordinal: int | None
    text: str
    process: int
    cache: CacheOutcome | None = None
    cache_file: str | None = None
    end_line: int | None = None
    last_t: float | None = None
    elapsed: float | None = None
    graph: bool = False
    progress: bool = False
    synthetic: bool = False  # opened without a Begin line
    uncacheable: bool = False  # custom ops without is_hashable: never cached


@dataclass(frozen=True, slots=True)
class _PendingLoad:
    """A load whose module is known only when the next ``Execute`` line comes."""

    ev: Event
    duration_s: float | None
    switch_back: bool
    before_first_step: bool


@dataclass(slots=True)
class _Process:
    """One process of the run, and what is under way in it.  Lines of several processes can
    interleave in one log (MPI ranks tagged ``[1,0]<stderr>:``): each rank is its own stream
    of processes."""

    index: int
    source: str
    open: dict[str, _Pending] = field(default_factory=dict)  # module -> its open compilation
    current: _Pending | None = None  # the compilation later lines belong to
    last: _Pending | None = None  # the last compilation opened
    unattributed: list[_PendingLoad] = field(default_factory=list)  # loads before Execute
    load_start: float | None = None
    first_execute_line: int | None = None
    first_load_line: int | None = None
    loaded: set[str] = field(default_factory=set)
    last_loaded: str | None = None
    compiled_since_load: bool = True
    loads_seen: int = 0
    flags: str | None = None
    verbose: bool = False  # Begin XLA compilation lines are printed (VLOG 1 on)
    cache_activity: bool = False


class TimelineBuilder:
    """Fold events, one at a time, into a :class:`Timeline`."""

    def __init__(self, warmup: int | None = None) -> None:
        self.warmup = warmup
        self._pending: list[_Pending] = []
        self._loads: list[Load] = []
        self._events: list[Event] = []
        self._procs: list[_Process] = []
        self._streams: dict[tuple[str, Any], _Process] = {}  # (source, MPI rank) -> process
        self._executed_in_proc: set[tuple[int, str]] = set()

    # -- processes -----------------------------------------------------------------------
    def _new_process(self, ev: Event) -> _Process:
        stream = (ev.source, ev.detail.get("rank"))
        old = self._streams.get(stream)
        if old is not None:
            self._flush_loads(old, None)
        p = _Process(len(self._procs), ev.source)
        self._procs.append(p)
        self._streams[stream] = p
        return p

    def _process(self, ev: Event) -> _Process:
        p = self._streams.get((ev.source, ev.detail.get("rank")))
        return p if p is not None else self._new_process(ev)

    # -- compilations --------------------------------------------------------------------
    def _open_compilation(self, ev: Event, module: str, synthetic: bool) -> _Pending:
        proc = self._process(ev)
        c = _Pending(
            id=len(self._pending),
            module=module,
            hash=ev.hash if not synthetic else None,
            source=ev.source,
            line=ev.line,
            t=ev.t,
            ordinal=ev.detail.get("ordinal") if not synthetic else None,
            text=ev.text,
            process=proc.index,
            synthetic=synthetic,
            last_t=ev.t,
        )
        self._pending.append(c)
        proc.open[module] = c
        proc.current = proc.last = c
        proc.compiled_since_load = True
        return c

    def _touch(self, c: _Pending | None, ev: Event) -> None:
        """``ev`` is part of compilation ``c``: it lasts at least until then."""
        if c is not None and ev.t is not None and (c.last_t is None or ev.t > c.last_t):
            c.last_t = ev.t

    def feed(self, ev: Event) -> None:
        """Take the next event (events of one source must come in line order)."""
        proc = self._process(ev)
        k = ev.kind
        if k in _CACHE_KINDS:
            proc.cache_activity = True
        if k == "poplar-version" and (proc.flags is not None or proc.last is not None):
            proc = self._new_process(ev)
        handler = getattr(self, "_on_" + k.replace("-", "_"), None)
        if handler is not None:
            handler(ev, proc)
        if k in _KEEP_KINDS:
            self._events.append(ev)

    def _on_compile_begin(self, ev: Event, proc: _Process) -> None:
        proc.verbose = True
        self._open_compilation(ev, ev.module or "?", synthetic=False)

    def _on_compile_end(self, ev: Event, proc: _Process) -> None:
        c = proc.open.get(ev.module or "") or proc.current
        if c is not None:
            c.end_line = ev.line
            self._touch(c, ev)

    def _on_cache_hit(self, ev: Event, proc: _Process) -> None:
        c = proc.open.get(ev.module or "")
        if c is None or c.cache is not None:
            c = self._open_compilation(ev, ev.module or "?", synthetic=True)
        c.cache = "hit"
        c.cache_file = ev.detail.get("path")
        self._touch(c, ev)

    def _on_cache_miss(self, ev: Event, proc: _Process) -> None:
        c = proc.current
        if c is None or c.cache is not None:
            fh = ev.detail.get("file_hash") or "?"
            c = self._open_compilation(ev, f"<executable {fh}>", synthetic=True)
        c.cache = "miss"
        c.cache_file = ev.detail.get("path")
        self._touch(c, ev)

    def _on_precompile_saved(self, ev: Event, proc: _Process) -> None:
        path = ev.detail.get("path")
        c = next((p for p in proc.open.values() if p.cache_file == path), proc.current)
        self._touch(c, ev)

    def _on_progress_start(self, ev: Event, proc: _Process) -> None:
        name = ev.module or "?"
        c = proc.current
        if c is not None and not c.progress and c.cache != "hit" and elided_match(name, c.module):
            c.progress = True
            return
        self._open_compilation(ev, name, synthetic=True).progress = True

    def _on_progress_end(self, ev: Event, proc: _Process) -> None:
        c = proc.current
        if c is not None:
            c.elapsed = ev.detail.get("elapsed_s")
            self._touch(c, ev)

    def _on_graph_compiled(self, ev: Event, proc: _Process) -> None:
        # PopTorch's "Graph compilation: 100%|...| [06:26<00:00]" bar: one whole compilation
        # that ended at this line
        elapsed = ev.detail.get("elapsed_s")
        c = self._open_compilation(ev, "<poptorch graph>", synthetic=True)
        c.elapsed = elapsed
        if ev.t is not None and elapsed is not None:
            c.t = round(ev.t - elapsed, 6)

    def _on_compile_step(self, ev: Event, proc: _Process) -> None:
        self._touch(proc.current, ev)

    def _on_phase_start(self, ev: Event, proc: _Process) -> None:
        name = ev.detail.get("name")
        if name == LOAD_PHASE:
            proc.load_start = ev.t
            return
        c = proc.current
        if name == GRAPH_PHASE:
            if c is None or c.cache == "hit" or c.graph:
                c = self._open_compilation(ev, "<poplar graph>", synthetic=True)
            c.graph = True
        self._touch(c, ev)

    def _on_phase_end(self, ev: Event, proc: _Process) -> None:
        name = ev.detail.get("name")
        if name == LOAD_PHASE:
            ms = ev.detail.get("duration_ms")
            start, proc.load_start = proc.load_start, None
            dur = ms / 1000.0 if ms is not None else None
            if dur is None and start is not None and ev.t is not None:
                dur = ev.t - start
            proc.unattributed.append(
                _PendingLoad(
                    ev,
                    dur,
                    # a load with no compilation since the previous load is a switch back
                    switch_back=not proc.compiled_since_load and proc.loads_seen > 0,
                    before_first_step=proc.first_execute_line is None,
                )
            )
            proc.loads_seen += 1
            proc.compiled_since_load = False
            return
        self._touch(proc.current, ev)

    def _on_execute(self, ev: Event, proc: _Process) -> None:
        module = ev.module or "?"
        if proc.first_execute_line is None:
            proc.first_execute_line = ev.line
        self._flush_loads(proc, module)
        proc.current = None
        key = (proc.index, module)
        if key not in self._executed_in_proc:
            self._executed_in_proc.add(key)
            self._events.append(ev)

    def _on_custom_op_unhashable(self, ev: Event, proc: _Process) -> None:
        if proc.current is not None:
            proc.current.uncacheable = True

    def _on_poplar_flags(self, ev: Event, proc: _Process) -> None:
        proc.flags = ev.detail.get("flags")

    # -- loads ---------------------------------------------------------------------------
    def _flush_loads(self, proc: _Process, module: str | None) -> None:
        """Attribute the loads seen since the last Execute line to ``module`` (the module
        that executed next), or, without one, to the last compilation of the process."""
        for item in proc.unattributed:
            ev = item.ev
            m = module
            attributed = m is not None
            if m is None:
                m = proc.last.module if proc.last is not None else None
            # the stack loads an engine only when another one is on the device
            reload = (
                (m in proc.loaded and proc.last_loaded != m) if attributed else item.switch_back
            )
            warmup = not reload and (
                item.before_first_step or (m is not None and m not in proc.loaded)
            )
            if proc.first_load_line is None:
                proc.first_load_line = ev.line
            if m is not None:
                proc.loaded.add(m)
            proc.last_loaded = m
            self._loads.append(
                Load(
                    ev.source,
                    ev.line,
                    ev.t,
                    item.duration_s,
                    m,
                    proc.index,
                    warmup,
                    reload,
                    ev.text,
                    attributed,
                    ev.detail.get("rank"),
                )
            )
        proc.unattributed.clear()

    # -- result --------------------------------------------------------------------------
    def finish(self) -> Timeline:
        for p in self._procs:
            self._flush_loads(p, None)
        procs = tuple(
            ProcessInfo(
                p.index, p.source, p.flags, p.verbose, p.cache_activity, p.first_execute_line
            )
            for p in self._procs
        )
        comps = self._finish_compilations()
        loads = tuple(self._loads)
        load_events = tuple(_load_event(ld) for ld in loads)
        events = tuple(sorted(self._events + list(load_events), key=_event_order(self._procs)))
        return Timeline(
            compilations=tuple(c for c, _ in comps),
            loads=loads,
            events=events,
            processes=procs,
            comp_process=tuple(p for _, p in comps),
            uncacheable=frozenset(p.id for p in self._pending if p.uncacheable),
        )

    def _finish_compilations(self) -> list[tuple[Compilation, int]]:
        seen: dict[tuple[int, str], int] = {}
        out: list[tuple[Compilation, int]] = []
        for p in self._pending:
            proc = self._procs[p.process]
            cache: CacheOutcome
            if p.cache is not None:
                cache = p.cache
            elif p.uncacheable:
                cache = "disabled"  # the cache is on, but this executable cannot be cached
            elif (
                proc.verbose
                and not p.synthetic
                and not proc.cache_activity
                and "executable_cache_path" not in (proc.flags or "")
            ):
                cache = "disabled"
            else:
                cache = "unknown"
            key = (p.process, function_key(p.module))
            n = seen.get(key, 0)
            seen[key] = n + 1
            if self.warmup is not None:
                warm = n < self.warmup
            else:
                # the first executed step: an Execute line, else the first executable load
                first_step = proc.first_execute_line or proc.first_load_line
                warm = n == 0 or (first_step is not None and p.line < first_step)
            duration: float | None
            if p.elapsed is not None:
                duration = p.elapsed
            elif p.t is not None and p.last_t is not None:
                duration = round(p.last_t - p.t, 6)
            else:
                duration = None
            out.append(
                (
                    Compilation(
                        id=p.id,
                        module=p.module,
                        hash=p.hash,
                        source=p.source,
                        line=p.line,
                        t=p.t,
                        duration_s=duration,
                        cache=cache,
                        warmup=warm,
                        cause=None,
                        end_line=p.end_line,
                        cache_file=p.cache_file,
                        ordinal=p.ordinal,
                        text=p.text,
                    ),
                    p.process,
                )
            )
        return out


def _load_event(ld: Load) -> Event:
    return Event(
        kind="load",
        source=ld.source,
        line=ld.line,
        t=ld.t,
        text=ld.text,
        module=ld.module,
        detail={
            "duration_s": ld.duration_s,
            "warmup": ld.warmup,
            "reload": ld.reload,
            "attributed": ld.attributed,
            **({"rank": ld.rank} if ld.rank is not None else {}),
        },
    )


def _event_order(procs: list[_Process]) -> Any:
    order: dict[str, int] = {}
    for p in procs:
        order.setdefault(p.source, len(order))

    def key(e: Event) -> tuple[int, int]:
        return (order.get(e.source, 0), e.line)

    return key


def build_timeline(events: Iterable[Event], warmup: int | None = None) -> Timeline:
    """Fold ``events`` (in order, source by source) into a :class:`Timeline`."""
    b = TimelineBuilder(warmup)
    for ev in events:
        b.feed(ev)
    return b.finish()
