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

from recompile_doctor.events import CacheLookup
from recompile_doctor.parsers import parse_log
from recompile_doctor.timeline import Timeline, build_timeline


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
class LogUsage:
    """Usage per file hash, and which logs had any executable-cache line at all."""

    by_hash: dict[str, Usage] = field(default_factory=dict)
    logs: list[str] = field(default_factory=list)
    logs_with_cache_lines: list[str] = field(default_factory=list)


def _file_hash(lk: CacheLookup) -> str | None:
    """The cache file's hash, as the Poplar parser read it from the line (the file name
    ``<hex>.poplar_exec``, or the hash of ``Module M has not been compiled yet``)."""
    h = lk.record.detail.get("file_hash") if lk.record is not None else None
    return str(h).lower() if h else None


def fold_timeline(tl: Timeline, usage: LogUsage, log: str) -> None:
    """Fold one log's executable-cache lookups into ``usage``: the lookups of one
    compilation request (announce, look-up, save) are one use of their file."""
    comps = {c.id: c for c in tl.compilations}
    used: set[tuple[str, int]] = set()
    announced: set[str] = set()  # files announced ("not compiled yet") before their request
    seen_cache = False
    for lk, cid in tl.lookups:
        if lk.store != "executable" or lk.outcome == "active":
            continue
        h = _file_hash(lk)
        if not h:
            continue
        seen_cache = True
        c = comps.get(cid) if cid is not None else None
        module = lk.key.module if lk.key is not None and lk.key.function else None
        if module is None and c is not None and c.function is not None:
            module = c.module
        if cid is None:
            new_use = True
            announced.add(h)
        else:
            new_use = (h, cid) not in used and h not in announced
            announced.discard(h)
            used.add((h, cid))
        usage.by_hash.setdefault(h, Usage()).add(module, log, new_use)
    usage.logs.append(log)
    if seen_cache:
        usage.logs_with_cache_lines.append(log)


def read_usage(logs: Iterable[str]) -> LogUsage:
    """Stream each log (any error is the reader's one-line error) and fold its cache lines."""
    usage = LogUsage()
    for log in logs:
        fold_timeline(build_timeline(parse_log(log, fold=True)), usage, log)
    return usage
