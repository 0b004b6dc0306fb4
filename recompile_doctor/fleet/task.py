"""The map step: one run in, its four tables out.

:func:`analyze_run` is a plain top-level function of a picklable :class:`RunTask`, so any
:class:`concurrent.futures.Executor` can run it: a local process pool, a Dask cluster's
``client.get_executor()``, or none.  It calls :func:`recompile_doctor.api.analyze` (the same
call as ``analyze``) and only turns the :class:`~recompile_doctor.model.Report` into rows; it
never parses.  A file the analysis rejects is left out, recorded with its one-line error, and
the rest of the run analysed again.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from recompile_doctor._version import __version__
from recompile_doctor.api import analyze
from recompile_doctor.errors import RecompileDoctorError
from recompile_doctor.fleet.discover import FileStat, RunTask
from recompile_doctor.fleet.remote import is_url, local_copy
from recompile_doctor.fleet.tables import SCHEMAS
from recompile_doctor.model import Compilation, Event, Finding, Report
from recompile_doctor.parsers import LOG_FORMATS
from recompile_doctor.parsers._reader import collect_notes

#: the version of the parsers behind every row (the tool's version)
PARSER_VERSION = __version__
_FRAMEWORK_OF = {f.name: f.framework for f in LOG_FORMATS}
_COMPILE_ID = re.compile(r"^\[?(\d+)/(\d+)(?:_(\d+))?\]?$")

Row = dict[str, Any]


@dataclass(frozen=True, slots=True)
class RunOutput:
    """What one run produced: its tables (Arrow) and how many files failed."""

    task: RunTask
    tables: Mapping[str, pa.Table]
    failed: int


def one_line(e: BaseException) -> str:
    if isinstance(e, RecompileDoctorError):
        return str(e)
    text = " ".join(str(e).split()) or "(no message)"
    return f"internal error: {type(e).__name__}: {text}"


def _analyze_robustly(
    task: RunTask,
) -> tuple[Report | None, dict[str, str], dict[str, str], bool]:
    """The report of the run's readable files; the errors of the others and the read
    warnings (a gzip stream that ends early), both by absolute path ("" for the run);
    whether the dumps were used."""
    remaining = [task.path(f) for f in task.files]
    dumps = list(task.dumps)
    errors: dict[str, str] = {}
    warnings: dict[str, str] = {}
    while remaining:
        try:
            with collect_notes() as notes:
                report = analyze(remaining, dumps=dumps, context=0)
            for n in notes:
                warnings[n.path] = n.message()
            return report, errors, warnings, bool(dumps)
        except Exception as e:  # one bad file must not stop the run, nor the fleet
            bad = getattr(e, "path", None)
            if isinstance(bad, str) and dumps and any(bad.startswith(d) for d in dumps):
                warnings[""] = f"dumps not used: {one_line(e)}"
                dumps = []
                continue
            if isinstance(bad, str) and bad in remaining:
                errors[bad] = one_line(e)
                remaining.remove(bad)
                continue
            if len(remaining) > 1:
                # the error does not name its file: find the files that fail alone
                alone = _failing_alone(remaining)
                if alone:
                    errors.update(alone)
                    remaining = [p for p in remaining if p not in alone]
                    continue
            for p in remaining:
                errors[p] = one_line(e)
            remaining = []
    return None, errors, warnings, False


def _failing_alone(paths: Sequence[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for p in paths:
        try:
            analyze([p], context=0).close()
        except Exception as e:
            out[p] = one_line(e)
    return out


def _ids(compile_id: str | None) -> tuple[int | None, int | None, int | None]:
    m = _COMPILE_ID.match(compile_id or "")
    if not m:
        return None, None, None
    return int(m.group(1)), int(m.group(2)), int(m.group(3)) if m.group(3) else None


def _store_of(kind: str, framework: str | None) -> str | None:
    """The cache store an event is about, from its kind (the parsers name it there)."""
    if kind.startswith("persistent-cache"):
        return "persistent"
    if kind.startswith("tracing-cache"):
        return "tracing"
    if "cache" in kind and framework == "poplar":
        return "executable"
    if kind.startswith("cache-") and framework == "jax":
        return "persistent"
    return None


def _str(v: Any) -> str | None:
    return None if v is None else str(v)


def _float(v: Any) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


class _Rows:
    """Turns report objects into rows; knows the run's files, ranks and formats."""

    def __init__(self, task: RunTask, report: Report) -> None:
        self.task = task
        self.rel: dict[str, FileStat] = {task.path(f): f for f in task.files}
        self.function_of = {c.module: c.function for c in report.compilations if c.function}
        self.framework = {
            i.path: _FRAMEWORK_OF.get(i.format) for i in report.inputs if i.format != "unknown"
        }

    def where(self, source: str | None, line: int | None, seq: int, rank: int | None) -> Row:
        f = self.rel.get(source or "")
        return {
            "run_id": self.task.run_id,
            "host": self.task.host,
            "rank": rank if rank is not None else (f.rank if f else None),
            "file": f.rel if f else source,
            "line": line,
            "byte_offset": None,
            "seq": seq,
            "parser_version": PARSER_VERSION,
        }

    def event(self, seq: int, e: Event) -> Row:
        d = e.detail
        cid = _str(d.get("compile_id"))
        frame, fcid, attempt = _ids(cid)
        rank = d.get("rank") if isinstance(d.get("rank"), int) else None
        reason = d.get("guard") or d.get("torch_reason") or d.get("reason") or d.get("rule")
        return {
            **self.where(e.source, e.line, seq, rank),
            "ts": None,
            "t_s": e.t,
            "framework": self.framework.get(e.source),
            "kind": e.kind,
            "store": _str(d.get("store")) or _store_of(e.kind, self.framework.get(e.source)),
            "function": _str(d.get("function")),
            "module": e.module,
            "compile_id": cid,
            "frame_id": frame,
            "frame_compile_id": fcid,
            "attempt": attempt,
            "cache_key": _str(d.get("cache_key") or d.get("file_hash")),
            "graph_hash": e.hash,
            "duration_s": _float(d.get("duration_s")),
            "reason": _str(reason),
            "detail": json.dumps(dict(d), sort_keys=True, default=str),
            "text": e.text,
        }

    def compilation(self, c: Compilation) -> Row:
        frame, fcid, attempt = _ids(c.compile_id)
        return {
            **self.where(c.source, c.line, c.id, c.rank),
            "end_line": c.end_line,
            "ts": None,
            "t_s": c.t,
            "framework": c.framework,
            "function": c.function,
            "module": c.module,
            "compile_id": c.compile_id,
            "frame_id": frame,
            "frame_compile_id": fcid,
            "attempt": attempt,
            "cache": c.cache,
            "cache_key": c.cache_key,
            "cache_file": c.cache_file,
            "graph_hash": c.hash,
            "duration_s": c.duration_s,
            "warmup": c.warmup,
            "eager": c.eager,
            "cause": c.cause,
        }

    def finding(self, seq: int, f: Finding) -> Row:
        ev = f.evidence[0] if f.evidence else None
        ch = f.changes[0] if f.changes else None
        module = f.modules[0] if f.modules else None
        return {
            **self.where(ev.source if ev else None, ev.line if ev else None, seq, None),
            "rule": f.rule,
            "severity": f.severity,
            "title": f.title,
            "function": ch.function
            if ch and ch.function
            else self.function_of.get(module or "", module),
            "module": module,
            "count": f.count,
            "wasted_seconds": f.wasted_seconds,
            "what": ch.what if ch else None,
            "expected": ch.old if ch else None,
            "actual": ch.new if ch else None,
            "reason": f.detail,
            "advice": f.advice,
            "changes": [
                {
                    "function": c.function,
                    "what": c.what,
                    "old": c.old,
                    "new": c.new,
                    "call_site": c.call_site,
                    "file": self.rel[c.source].rel if c.source in self.rel else c.source,
                    "line": c.line,
                }
                for c in f.changes
            ],
        }


def _table(name: str, rows: Sequence[Row]) -> pa.Table:
    return pa.Table.from_pylist(list(rows), schema=SCHEMAS[name])


def analyze_run(task: RunTask) -> RunOutput:
    """Analyse one run (all its files together) and return its four tables.  A run behind a
    URL is first copied to a temporary local folder on this worker."""
    if is_url(task.run_dir):
        return _analyze_remote(task)
    return _analyze_local(task)


def _analyze_remote(task: RunTask) -> RunOutput:
    try:
        with local_copy(task.run_dir, [f.rel for f in task.files], task.dumps) as d:
            local = dataclasses.replace(task, run_dir=d, dumps=())
            res = _analyze_local(local)
    except Exception as e:  # the copy failed: every file of the run did
        return lost_run(task, e)
    runs = res.tables["runs"].to_pylist()
    for r in runs:
        r["run_path"] = task.run_dir
        for key in ("error", "warning"):
            if r[key]:
                r[key] = r[key].replace(d + os.sep, task.run_dir.rstrip("/") + "/")
    return RunOutput(task, {**res.tables, "runs": _table("runs", runs)}, res.failed)


def lost_run(task: RunTask, e: BaseException) -> RunOutput:
    """A run whose task itself failed (a copy, a lost worker): every file failed with the
    same one-line error."""
    msg = one_line(e)
    rows = [
        {
            "run_id": task.run_id,
            "run_path": task.run_dir,
            "host": task.host,
            "rank": f.rank,
            "file": f.rel,
            "status": "failed",
            "error": msg,
            "size": f.size,
            "mtime_ns": f.mtime_ns,
            "parser_version": PARSER_VERSION,
        }
        for f in task.files
    ]
    tables = {name: _table(name, rows if name == "runs" else []) for name in SCHEMAS}
    return RunOutput(task, tables, len(task.files))


def _analyze_local(task: RunTask) -> RunOutput:
    report, errors, warnings, used_dumps = _analyze_robustly(task)
    inputs = {i.path: i for i in report.inputs} if report is not None else {}
    runs: list[Row] = []
    for f in task.files:
        p = task.path(f)
        info = inputs.get(p)
        err = errors.get(p)
        runs.append(
            {
                "run_id": task.run_id,
                "run_path": task.run_dir,
                "host": task.host,
                "rank": f.rank,
                "file": f.rel,
                "format": info.format if info else None,
                "status": "failed" if err is not None else "partial" if p in warnings else "ok",
                "error": err,
                "warning": None if err is not None else warnings.get(p) or warnings.get(""),
                "size": f.size,
                "mtime_ns": f.mtime_ns,
                "lines": info.lines if info else None,
                "bytes": info.bytes if info else None,
                "dumps": os.path.relpath(task.dumps[0], task.run_dir) if used_dumps else None,
                "parser_version": PARSER_VERSION,
            }
        )
    if report is None:
        events: list[Row] = []
        comps: list[Row] = []
        finds: list[Row] = []
    else:
        with report:  # a long run's spooled events go now, not when the report is dropped
            rows = _Rows(task, report)
            events = [rows.event(i, e) for i, e in enumerate(report.events)]
            comps = [rows.compilation(c) for c in report.compilations]
            finds = [rows.finding(i, f) for i, f in enumerate(report.findings)]
    tables = {
        "runs": _table("runs", runs),
        "events": _table("events", events),
        "compilations": _table("compilations", comps),
        "findings": _table("findings", finds),
    }
    return RunOutput(task, tables, len(errors))
