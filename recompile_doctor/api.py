"""The library entry point: logs (and dumps) in, a :class:`~recompile_doctor.model.Report` out.

Nothing here prints; progress is reported through an optional callback.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Callable, Sequence

from recompile_doctor.analyses import Options, diagnose
from recompile_doctor.analyses.recompile import recompilation_causes
from recompile_doctor.errors import RecompileDoctorError
from recompile_doctor.events import EXECUTABLE_STORES
from recompile_doctor.gc_pause import collecting_less_often
from recompile_doctor.heap_trim import give_back
from recompile_doctor.join import Joined, join_dumps
from recompile_doctor.model import (
    Evidence,
    Finding,
    ParseStats,
    Report,
    Summary,
)
from recompile_doctor.parsers import ParseCounter
from recompile_doctor.parsers._reader import read_lines_around, release_spool
from recompile_doctor.parsers.logs import parse_log_runs
from recompile_doctor.report_check import check_report_json
from recompile_doctor.timeline import Timeline, TimelineBuilder
from recompile_doctor.timeline.distinct import count_distinct
from recompile_doctor.timeline.table import CompilationTable
from recompile_doctor.told import Stopwatch, tell
from recompile_doctor.wording import plural

PathLike = str | os.PathLike[str]
#: lines of context kept around each evidence line
CONTEXT_LINES = 3


def analyze(
    logs: PathLike | Sequence[PathLike],
    *,
    dumps: PathLike | Sequence[PathLike] = (),
    warmup: int | None = None,
    strict: bool = False,
    log_format: str | None = None,
    on_progress: Callable[[str, int], None] | None = None,
    context: int = CONTEXT_LINES,
    events_json: bool = False,
) -> Report:
    """Parse ``logs`` (paths, ``-`` for stdin, plain or gzip), build the timeline, run every
    diagnosis and return the report.  ``dumps`` are XLA dump folders of the same run: the
    compilations of every recompiled module are diffed and the cause attached.
    ``events_json``: the report will be written as JSON; a second process may write the
    events' JSON text while the analyses run (:mod:`recompile_doctor.events_json`; close
    the report, or use it as a context manager, to stop that process early).

    Raises :class:`~recompile_doctor.errors.RecompileDoctorError` for unreadable or (with
    ``strict``) malformed input.
    """
    if isinstance(logs, (str, os.PathLike)):
        logs = [logs]  # one path, not a sequence of one-character paths
    if not logs:
        raise RecompileDoctorError("no log given")
    if warmup is not None and warmup < 0:
        raise RecompileDoctorError(f"--warmup must be >= 0, not {warmup}")
    try:
        with collecting_less_often():  # (millions of long-lived objects, few cycles)
            return _analyze(
                logs, dumps, warmup, strict, log_format, on_progress, context, events_json
            )
    finally:
        # the private copies of inputs that cannot be read twice (stdin, pipes) served
        # the second pass for evidence context, which is done: they go now, not at exit
        for log in logs:
            release_spool(os.fspath(log))


def _analyze(
    logs: Sequence[PathLike],
    dumps: PathLike | Sequence[PathLike],
    warmup: int | None,
    strict: bool,
    log_format: str | None,
    on_progress: Callable[[str, int], None] | None,
    context: int,
    events_json: bool,
) -> Report:
    builder = TimelineBuilder(warmup)
    counters: list[ParseCounter] = []
    watch = Stopwatch()
    try:
        for log in logs:
            path = os.fspath(log)
            counter = ParseCounter(path)
            counters.append(counter)
            cb = (lambda n, p=path: on_progress(p, n)) if on_progress is not None else None
            told = False
            for run in parse_log_runs(
                path, counter, strict=strict, log_format=log_format, on_progress=cb, fold=True
            ):
                if not told:  # (the format is known once the first event comes)
                    builder.tell_format(run[0].span.source, counter.format)
                    told = True
                builder.feed_run(run)
            if watch.on:
                _tell_read(counter, watch.lap())
        tl = builder.finish()
    except BaseException:
        builder.close()  # the spooled events' temporary file goes now, not when collected
        raise
    del builder  # what was under way is no longer needed
    give_back()  # (what the reading freed: see heap_trim; a library call's host is left alone)
    ahead = None
    if events_json:  # the events are final: their JSON text may be written meanwhile
        from recompile_doctor.events_json import EventsText

        ahead = EventsText.start(tl.events, tl.compilations)
    try:
        if isinstance(dumps, (str, os.PathLike)):
            dumps = [dumps]
        opts = Options(join_dumps(tl, [os.fspath(d) for d in dumps]))
        findings = diagnose(tl, opts)
        if context > 0:
            findings = _with_context(findings, context)
        give_back()  # (what the analyses freed, before the distinct-graph count's table)
        summary = summarize(tl, findings, opts.joined)
        causes = recompilation_causes(tl, opts)
        if watch.on:
            what = os.fspath(logs[0]) if logs else "no log"
            if len(logs) > 1:
                what += f" and {plural(len(logs) - 1, 'more log')}"
            tell(
                f"{what}: timeline and analyses: {plural(len(tl.compilations), 'compilation')}, "
                f"{plural(len(findings), 'finding')} in {watch.lap():.2f} s"
            )
    except BaseException:
        if ahead is not None:
            ahead.close()
        raise
    # the timeline's compilations become the report's, with their causes (columns, shared)
    comps = tl.compilations.with_causes(causes)
    events = tl.events
    del tl, opts
    return Report(
        inputs=tuple(c.input_info() for c in counters),
        parse=sum((c.stats() for c in counters), ParseStats()),
        summary=summary,
        compilations=comps,
        events=events,
        findings=findings,
        events_text=ahead,
    )


def _tell_read(counter: ParseCounter, seconds: float) -> None:
    """Say (``-v``) how long one log took to read and parse, and how fast."""
    st = counter.read
    mb = st.bytes / 1e6
    rate = f", {mb / seconds:.0f} MB/s" if seconds > 0 else ""
    tell(
        f"{counter.path}: read in {seconds:.2f} s: {st.lines:,} lines, {mb:.1f} MB{rate}; "
        f"{counter.recognized:,} recognized, {counter.malformed:,} malformed"
    )


def cache_by_store(tl: Timeline) -> dict[str, dict[str, int]]:
    """Per cache store: how many hits, misses and writes the logs show."""
    return tl.store_tally().by_store()


def _dump_only_compilations(tl: Timeline, joined: Joined | None) -> int:
    """Compilations only the dumps show: a function's dumps beyond the compilations the log
    has of it (TensorFlow logs only the first)."""
    if joined is None or not joined.sequences:
        return 0
    table = tl.compilations
    if any(table.function_of(i) is None for i in range(len(table))):
        return 0  # unnamed compilations (a Poplar progress bar) cannot be matched to dumps
    by_fn = tl.ids_by_function()
    extra = 0
    for key, seq in joined.sequences.items():
        logged = sum(1 for i in by_fn.get(key, []) if table.compiled_of(i))
        extra += max(0, seq.count - logged) if logged <= 1 else 0
    return extra


def summarize(tl: Timeline, findings: Sequence[Finding], joined: Joined | None = None) -> Summary:
    table = tl.compilations
    loads = tl.load_tally()
    stores = cache_by_store(tl)
    exec_hits = sum(d["hits"] for k, d in stores.items() if k in EXECUTABLE_STORES)
    exec_misses = sum(d["misses"] for k, d in stores.items() if k in EXECUTABLE_STORES)
    return Summary(
        compilations=len(table) + _dump_only_compilations(tl, joined),
        cache_hits=exec_hits,
        cache_misses=exec_misses,
        loads=len(tl.loads),
        distinct_graphs=_distinct_graphs(table),
        recompilations_after_warmup=table.warmup.count(0),
        compile_seconds=round(
            sum(table.seconds_of(i) for i in range(len(table)) if table.compiled_of(i)), 6
        ),
        load_seconds=round(loads.seconds, 6),
        wasted_seconds=round(sum(f.wasted_seconds for f in findings), 6),
        cache_by_store=stores,
    )


def _distinct_graphs(table: CompilationTable) -> int:
    """Distinct graphs compiled: by graph hash, else by module name
    (:func:`~recompile_doctor.timeline.names.graph_element`).  Counted by fingerprint, in
    bounded memory (:func:`~recompile_doctor.timeline.distinct.count_distinct`): a set of
    the names read back from a spilled table held 40 MB for a moment."""
    return count_distinct(table.graph_elements())


def _with_context(findings: Sequence[Finding], radius: int) -> tuple[Finding, ...]:
    """Add the lines around every evidence line (a second, streamed pass over each file)."""
    wanted: dict[str, dict[int, int]] = {}
    for f in findings:
        for e in f.evidence:
            wanted.setdefault(e.source, {})[e.line] = radius
    ctx = {src: read_lines_around(src, lines) for src, lines in wanted.items()}

    def enrich(e: Evidence) -> Evidence:
        got = ctx.get(e.source, {}).get(e.line)
        if got is None:
            return e
        before, _line, after = got
        return dataclasses.replace(e, before=tuple(before), after=tuple(after))

    return tuple(
        dataclasses.replace(f, evidence=tuple(enrich(e) for e in f.evidence)) for f in findings
    )


def load_report(path: PathLike) -> Report:
    """Read a report saved with ``analyze --format json``."""
    from pathlib import Path  # only here: not at every start

    p = os.fspath(path)
    try:
        text = Path(p).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise RecompileDoctorError("no such file", path=p) from None
    except IsADirectoryError:
        raise RecompileDoctorError("is a directory, expected a JSON report", path=p) from None
    except (OSError, UnicodeDecodeError) as e:
        raise RecompileDoctorError(f"cannot read: {e}", path=p) from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise RecompileDoctorError(
            f"not valid JSON: {e.msg}", path=p, line=e.lineno, col=e.colno
        ) from None
    except (ValueError, RecursionError) as e:
        # an integer of more than 4300 digits, or nesting thousands of levels deep
        raise RecompileDoctorError(f"not a usable JSON report: {str(e)[:80]}", path=p) from None
    check_report_json(data, p)
    try:
        return Report.from_json(data)
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise RecompileDoctorError(f"not a recompile-doctor report: {e}", path=p) from None


def looks_like_json_report(path: PathLike) -> bool:
    """True when ``path`` starts like a saved JSON report (used by ``report``)."""
    p = os.fspath(path)
    if p == "-" or not os.path.isfile(p):
        return False
    try:
        with open(p, "rb") as f:
            head = f.read(256).lstrip()
    except OSError:
        return False
    return head.startswith(b"{") and b"recompile-doctor/report/" in head
