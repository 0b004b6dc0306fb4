"""Which modules used which executable-cache file, according to logs.

Cache files are matched by the hash in their name (``<hex>.poplar_exec``), never by path: a log
may name the cache by an absolute path of another machine, or by a relative one.  The lines
that link a module to a file:

* ``Module M has not been compiled yet (Hash: 0x<hex>).`` (VLOG 2): the hash *is* the file's;
* ``Loaded M from <dir>/<hex>.poplar_exec`` (VLOG 1): a load from the cache;
* ``Couldn't find <dir>/<hex>.poplar_exec in executable cache`` (VLOG 1), which follows the
  ``Begin XLA compilation: M`` of the module that is then compiled and saved;
* ``A pre-compiled Poplar program has been saved to <path>`` (PRE_COMPILE mode).

Lines of one request for an executable (announce, look-up, save) count as one use.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from recompile_doctor.events import CacheLookup, CompileStarted, ProcessStarted, TypedEvent
from recompile_doctor.parsers import parse_log

_CACHE_KINDS = frozenset({"cache-new-entry", "cache-hit", "cache-miss", "precompile-saved"})


@dataclass(slots=True)
class Usage:
    """What the logs say about one cache file (keyed by its hash)."""

    modules: list[str] = field(default_factory=list)  # in order of first use
    uses: int = 0
    logs: list[str] = field(default_factory=list)  # in the order they were given

    def add(self, module: str | None, log: str, new_use: bool) -> None:
        if new_use:
            self.uses += 1
        if module and module not in self.modules:
            self.modules.append(module)
        if log not in self.logs:
            self.logs.append(log)


@dataclass(slots=True)
class _Stream:
    """One process's lines in one log (an MPI rank is a stream of its own)."""

    module: str | None = None  # the module being compiled, from the last Begin line
    open_hash: str | None = None  # the request under way
    stage: str = ""  # its last step: announced | hit | miss | saved


@dataclass(slots=True)
class LogUsage:
    """Usage per file hash, and which logs had any executable-cache line at all."""

    by_hash: dict[str, Usage] = field(default_factory=dict)
    logs: list[str] = field(default_factory=list)
    logs_with_cache_lines: list[str] = field(default_factory=list)


def _joins(stream: _Stream, kind: str, h: str) -> bool:
    """Is this line part of the request already under way (not a new use)?"""
    if stream.open_hash != h:
        return False
    if kind in ("cache-hit", "cache-miss"):
        return stream.stage == "announced"
    if kind == "precompile-saved":
        return stream.stage in ("announced", "miss")
    return False


def fold_events(events: Iterable[TypedEvent], usage: LogUsage, log: str) -> None:
    """Fold one log's executable-cache events into ``usage``."""
    streams: dict[Any, _Stream] = {}
    seen_cache = False
    for typed in events:
        key = typed.span.rank
        st = streams.setdefault(key, _Stream())
        if isinstance(typed, ProcessStarted):  # a new process starts
            streams[key] = _Stream()
            continue
        if isinstance(typed, CompileStarted) and typed.key.graph_hash is not None:
            st.module = typed.key.module  # Begin XLA compilation: M
            continue
        if isinstance(typed, CompileStarted) and typed.joins_named:
            name = typed.key.module
            if name and "..." not in name:
                st.module = name  # "Compiling module M" (names with "..." are elided)
            continue
        ev = typed.record
        if not isinstance(typed, CacheLookup) or typed.store != "executable" or ev is None:
            continue
        if ev.kind in _CACHE_KINDS:
            h = ev.detail.get("file_hash")
            if not h:
                continue
            seen_cache = True
            module = ev.module or (st.module if ev.kind != "cache-new-entry" else None)
            new_use = not _joins(st, ev.kind, h)
            usage.by_hash.setdefault(h, Usage()).add(module, log, new_use)
            st.open_hash = h
            st.stage = {
                "cache-new-entry": "announced",
                "cache-hit": "hit",
                "cache-miss": "miss",
                "precompile-saved": "saved",
            }[ev.kind]
    usage.logs.append(log)
    if seen_cache:
        usage.logs_with_cache_lines.append(log)


def read_usage(logs: Iterable[str]) -> LogUsage:
    """Stream each log (any error is the reader's one-line error) and fold its cache lines."""
    usage = LogUsage()
    for log in logs:
        fold_events(parse_log(log), usage, log)
    return usage
