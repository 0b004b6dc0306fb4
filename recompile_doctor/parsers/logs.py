"""The registry of log formats, format detection and the streaming driver.

:data:`LOG_FORMATS` is a plain list of :class:`~recompile_doctor.parsers._format.LogFormat`;
``--log-format`` picks one of them by name, otherwise each input's format is detected from its
first lines.  ``parse_log(path)`` yields typed events (:mod:`recompile_doctor.events`) one at a
time and fills a :class:`ParseCounter` as it goes, so a caller can fold events into a timeline
without ever holding the whole log in memory.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import chain
from typing import TYPE_CHECKING, BinaryIO

from recompile_doctor.errors import RecompileDoctorError
from recompile_doctor.events import TypedEvent
from recompile_doctor.model import Event, InputInfo, ParseStats
from recompile_doctor.parsers import _reader
from recompile_doctor.parsers._decoding import UNKNOWN_FORMAT as UNKNOWN_FORMAT
from recompile_doctor.parsers._decoding import decoded_runs, runs_after, runs_of
from recompile_doctor.parsers._format import Counted, Decoder, LogFormat
from recompile_doctor.parsers._reader import (
    BROKEN_STREAM,
    ReadStats,
    bom_encoding,
    decompressed,
    gzip_text_size,
    iter_lines,
    open_input,
    reader_lines,
    record_truncation,
    skip_bom,
)
from recompile_doctor.parsers._scan import (
    Blocks,
    FastLines,
    Matcher,
    make_matcher,
    read_head,
    read_more,
    regex_literals,
)
from recompile_doctor.parsers.jax_detect import JAX
from recompile_doctor.parsers.poplar_detect import POPLAR as POPLAR
from recompile_doctor.parsers.ptxla_detect import PTXLA
from recompile_doctor.parsers.tensorflow_detect import TENSORFLOW
from recompile_doctor.parsers.torch_detect import TORCH
from recompile_doctor.parsers.torch_trace_detect import TORCH_TRACE
from recompile_doctor.told import tell, telling

if TYPE_CHECKING:
    # (imported where several processes read an input: see _processes_for)
    from recompile_doctor.parsers import _parallel

#: lines of an input that detection looks at
SNIFF_LINES = 400
#: lines detection reads at most when the first SNIFF_LINES show no known format
SNIFF_MAX_LINES = 20_000

#: the registry: every log format, in the order detection prefers them on a tie
LOG_FORMATS: list[LogFormat] = [POPLAR, JAX, TENSORFLOW, TORCH, TORCH_TRACE, PTXLA]


def format_names() -> tuple[str, ...]:
    """The names ``--log-format`` accepts."""
    return tuple(f.name for f in LOG_FORMATS)


def get_format(name: str) -> LogFormat:
    for f in LOG_FORMATS:
        if f.name == name:
            return f
    raise RecompileDoctorError(f"unknown log format {name!r} (known: {', '.join(format_names())})")


def detect_format(lines: Sequence[str]) -> LogFormat | None:
    """The format whose sniff scores the first lines of an input highest (None: none)."""
    best: LogFormat | None = None
    best_score = 0
    for f in LOG_FORMATS:
        score = f.sniff(lines)
        if score > best_score:
            best, best_score = f, score
    return best


def how_to_log(formats: Iterable[str]) -> str:
    """What to set so that the frameworks of ``formats`` log their compilations (every
    known framework when the formats are unknown)."""
    names = [n for n in dict.fromkeys(formats) if n != UNKNOWN_FORMAT]
    chosen = [f for f in LOG_FORMATS if f.name in names] or LOG_FORMATS
    return " ".join(f.how_to_log for f in chosen)


@dataclass(slots=True)
class ParseCounter:
    """Per-source counters, filled while the events are consumed."""

    path: str
    format: str = UNKNOWN_FORMAT
    recognized: int = 0
    unrecognized: int = 0
    malformed: int = 0
    read: ReadStats = field(default_factory=ReadStats)

    def stats(self) -> ParseStats:
        return ParseStats(self.recognized, self.unrecognized, self.malformed)

    def input_info(self) -> InputInfo:
        return InputInfo(self.path, self.format, self.read.lines, self.read.bytes)


def _anchor_test(fmt: LogFormat) -> Callable[[str], bool]:
    if fmt is POPLAR:
        from recompile_doctor.parsers.poplar import ANCHOR_RE

        search = ANCHOR_RE.search
        return lambda line: search(line) is not None
    anchors = fmt.anchors
    return lambda line: any(a in line for a in anchors)


def _scan_literals(fmt: LogFormat) -> list[str] | None:
    """Literals such that a line passing the format's anchor test contains one of them."""
    if fmt is POPLAR:
        from recompile_doctor.parsers.poplar import ANCHOR_RE

        return regex_literals(ANCHOR_RE)
    return list(fmt.anchors)


#: set (to anything but "0" or "") to read every line the plain way
PLAIN_ENV = "RECOMPILE_DOCTOR_PLAIN"


def parse_log(
    path: str,
    counter: ParseCounter | None = None,
    *,
    strict: bool = False,
    log_format: str | None = None,
    on_progress: Callable[[int], None] | None = None,
    fast: bool | None = None,
    engine: str | None = None,
    fold: bool = False,
) -> Iterator[TypedEvent]:
    """Stream the typed events of one log.

    The format is ``log_format`` when given, else detected from the first lines.
    ``strict``: raise on the first line that names a known message but does not fit it.
    ``fast`` (default: unless ``$RECOMPILE_DOCTOR_PLAIN`` is set) reads in big chunks and
    decodes only the lines holding an anchor (:mod:`recompile_doctor.parsers._scan`);
    the events and counts are those of the plain line-by-line path.  ``engine``: the
    fast path's matcher ("hyperscan" or "find"; default: the fastest installed).
    ``fold``: leave out the events a timeline ignores (a step repeating the step just before
    it, the start of a load), where the format's decoder knows them (``fold_repeats``):
    the timeline built from the events is the same, and the lines are still counted.
    """
    runs = parse_log_runs(
        path,
        counter,
        strict=strict,
        log_format=log_format,
        on_progress=on_progress,
        fast=fast,
        engine=engine,
        fold=fold,
    )
    try:
        for run in runs:
            yield from run
    finally:
        runs.close()  # (the input closed now, when the events are not all taken)


def parse_log_runs(
    path: str,
    counter: ParseCounter | None = None,
    *,
    strict: bool = False,
    log_format: str | None = None,
    on_progress: Callable[[int], None] | None = None,
    fast: bool | None = None,
    engine: str | None = None,
    fold: bool = False,
) -> Generator[list[TypedEvent], None, None]:
    """:func:`parse_log`'s events in runs (of at most ``_decoding.RUN_MAX``, none empty, in
    order): what the analysis reads, the loop that feeds its timeline running once per run,
    not once per event."""
    forced = get_format(log_format) if log_format is not None else None
    c = counter if counter is not None else ParseCounter(path)
    if fast is None:
        fast = os.environ.get(PLAIN_ENV, "") in ("", "0")
    if not fast:
        lines = iter_lines(path, c.read, on_progress)
        yield from _drive(path, c, forced, lines, None, strict, fold)
        return
    st = c.read
    with open_input(path, st) as f:
        try:
            enc = bom_encoding(f)
        except BROKEN_STREAM:
            enc = "utf-8"
        if enc != "utf-8":  # UTF-16: the plain way
            src = reader_lines(f, path, st, on_progress, strict)
            yield from _drive(path, c, forced, src, None, strict, fold)
            return
        skip_bom(f, st)
        fastpart = _FastPart(path, Blocks(f, path, _left(f, st)), st, engine, on_progress, strict)
        if st.compressed:
            fastpart.gzip_text = gzip_text_size(f)
        if not strict:
            fastpart.processes = _processes_for(f, st)
            fastpart.f = f
        try:
            yield from _drive(path, c, forced, fastpart.head(forced), fastpart, strict, fold)
        finally:
            fastpart.close()


def _left(f: BinaryIO, st: ReadStats) -> int | None:
    """The bytes of a plain file left to read (None when not known)."""
    if st.compressed or st.size is None:
        return None
    try:
        return st.size - f.tell()
    except OSError:
        return None


def _processes_for(f: BinaryIO, st: ReadStats) -> int:
    """How many processes read ``f`` (:func:`._parallel.processes_for`), without importing
    the workers' machinery for a plain file too small to be split (its own first test,
    asked here: 4 ms of a small log's start-up)."""
    if not st.compressed and st.size is not None and st.size < _reader.PARALLEL_MIN_BYTES:
        return 1
    from recompile_doctor.parsers import _parallel

    return _parallel.processes_for(f, st)


class _FastPart:
    """The fast path's share of :func:`_drive`: the head lines for detection, then the
    decoded lines of the rest, then the checks at the end of the input."""

    def __init__(
        self,
        path: str,
        blocks: Blocks,
        st: ReadStats,
        engine: str | None,
        on_progress: Callable[[int], None] | None,
        strict: bool,
    ) -> None:
        self.path = path
        self.blocks = blocks
        self.st = st
        self.bom = st.bytes
        self.engine = engine
        self.on_progress = on_progress
        self.strict = strict
        self._head = 0
        self._pos = 0
        self._loaded = False
        self._detected = False
        #: the input, and how many processes may read it (:mod:`._parallel`)
        self.f: BinaryIO | None = None
        self.processes = 1
        self._team: _parallel.Team | None = None
        #: the workers' events from the line where this process handed over to them
        self.stream: _parallel.Stream | None = None
        self._onward: Iterator[tuple[int, str] | _parallel.Match] = iter(())
        self._reading: _parallel.Reading | None = None
        self._decoder: Decoder | None = None  # (the reading decoder, once the workers read)
        #: while workers read the later parts: the size of the first (see _progress)
        self._first_part: int | None = None
        #: a gzip input's text size (its trailer's): the bar counts the file's bytes
        self.gzip_text: int | None = None
        self._shown = 0  # the bytes reported so far
        #: (worker, line) where a stream stopped at a name its worker missed, in order
        self.missed: list[tuple[int, int]] = []

    def close(self) -> None:
        if self._team is not None:
            self._team.close()
            self._team = None

    def head(self, forced: LogFormat | None) -> Iterator[tuple[int, str]]:
        """The lines read one by one before the rest: those detection reads, or the first
        SNIFF_LINES when the format is given.  (Given or not, the decoder has seen them
        before any worker is forked with a copy of it: a worker's clock then counts from
        the log's first stamp, as the parent's does; without it their states never met, and
        the parent read every part again itself.)"""
        if forced is not None:
            self._detected = True
        return self._head_lines()

    def _head_lines(self) -> Iterator[tuple[int, str]]:
        """The first SNIFF_LINES lines; up to SNIFF_MAX_LINES only while detection asks
        for more (:meth:`detected` ends the head)."""
        head, self._pos, self._loaded = read_head(self.blocks, SNIFF_LINES)
        self._head = len(head)
        yield from head
        if self._detected or len(head) < SNIFF_LINES:
            return
        more, self._pos, self._loaded = read_more(
            self.blocks, self._pos, self._loaded, len(head) + 1, SNIFF_MAX_LINES - len(head)
        )
        self._head += len(more)
        yield from more

    def detected(self) -> None:
        """Detection is done: the head ends with the lines read so far."""
        self._detected = True

    def rest(
        self, fmt: LogFormat, decoder: Decoder, is_anchor: Callable[[str], bool], c: ParseCounter
    ) -> Iterator[tuple[int, str]]:
        literals = _scan_literals(fmt)
        exact = literals is not None
        if literals is None:  # not a literal alternation: every line is a candidate
            literals = ["\n"]
        blocks = self.blocks
        matcher = _MatcherOnFirstUse(literals, self.engine)

        def lines_from(
            blocks: Blocks,
            counts: Counted,
            lineno: int,
            start: int = -1,
            progress: bool = True,
        ) -> FastLines:
            return FastLines(
                blocks,
                matcher,
                decoder,
                is_anchor,
                counts,
                self._progress if progress and self.on_progress is not None else None,
                start=start,
                loaded=start >= 0,
                lineno=lineno,
                literal_anchors=exact,
            )

        team = self._fork(decoder, lines_from) if self.processes > 1 else None
        fl = lines_from(blocks, c, self._head, self._pos if self._loaded else -1)
        yield from fl.lines()
        self._first_part = None
        if team is None:
            self._end(fl)
            return
        # the first part is done: on to the seams
        from recompile_doctor.parsers import _parallel

        self._reading = _parallel.Reading(fl)
        self._decoder = decoder
        self._onward = _parallel.read_onward(
            team, blocks, 0, 1, lambda b, n: lines_from(b, c, n), decoder, self._reading, True
        )
        yield from self.read_on()

    def read_on(self, stopped: _parallel.Stream | None = None) -> Iterator[tuple[int, str]]:
        """The lines after the first part up to the first line where a worker's state is
        this process's (then :attr:`stream` holds the workers' events from there on), or to
        the end.  After the stream ``stopped`` before its end, the lines after the line where
        it began: to the end when a worker of it failed; when its worker missed a name this
        process knew, up to the first of that worker's later checkpoints (after that line)
        where their states meet again (then :attr:`stream` is the new one)."""
        adopt = stopped is None or self._retry(stopped)
        # (after a stream that stopped at a missed name, a match before that line would give
        # again events the stream gave: a part after the worker's, which it read on into)
        since = (stopped.missed_at or 0) if stopped is not None else 0
        self.stream = None
        from recompile_doctor.parsers import _parallel

        for got in self._onward:
            if isinstance(got, _parallel.Match):
                if not adopt or got.line < since:
                    continue
                assert self._team is not None
                self.stream = _parallel.Stream(self._team, got, self._decoder)
                return
            yield got  # (decoded when read_onward resumes)
        assert self._reading is not None
        self._end(self._reading.lines)

    def _retry(self, stopped: _parallel.Stream) -> bool:
        """Whether to look for the worker of the stream ``stopped`` again: it stopped at a
        name the worker missed (not a failure), in the part it began in (the worker's own:
        its late checkpoints are of that part)."""
        w = stopped.failed
        if stopped.missed_at is None or w != stopped.match.worker or self._reading is None:
            return False
        team = self._team
        assert team is not None
        cps = team.checkpoints(w)  # (the first ones: published; the late ones when needed)
        if cps is None:
            return False
        self._reading.retry = (cps, stopped.missed_at, lambda: team.all_checkpoints(w))
        self.missed.append((w, stopped.missed_at))
        return True

    def _end(self, fl: FastLines) -> None:
        """This process read the input to its end (its last lines: ``fl``)."""
        st, blocks = self.st, self.blocks
        st.lines = fl.lineno
        st.bytes = self.bom + blocks.consumed - blocks.lost
        if blocks.broken is not None:
            record_truncation(self.path, st, st.lines, blocks.broken, self.strict)
        if st.lines == 0 and st.truncated is None:
            raise RecompileDoctorError("empty input", path=self.path)
        self._progress(st.bytes)

    def _progress(self, n: int) -> None:
        """Report ``n`` bytes read, never fewer than before.  While workers read the later
        parts, the share of the first part read stands for the whole (all parts are read at
        about the same pace).  A gzip input's text bytes are shown as that share of the
        file's bytes (the bar's size is the file's)."""
        if self.on_progress is None:
            return
        first = self._first_part
        text = self.gzip_text
        if first:
            n = n * max(0, (text or self.st.size or 0) - self.bom) // first
        if text:  # (text bytes read, shown as the share of the file's size)
            n = n * (self.st.size or 0) // text
        if n > self._shown:
            self._shown = n
            self.on_progress(n)

    def _fork(
        self, decoder: Decoder, lines_from: Callable[..., FastLines]
    ) -> _parallel.Team | None:
        """Start the workers on the later parts of the input, if it is big enough."""
        from recompile_doctor.parsers import _parallel

        f, blocks, st = self.f, self.blocks, self.st
        assert f is not None
        size = _parallel.text_size(f, st) or 0
        share = _parallel.share_for(decoder)
        seams = _parallel.seams_for(decoder)
        if st.compressed:  # the text to each split, decompressed once more, here
            try:
                file = open(self.path, "rb")  # noqa: SIM115 - closed below
            except OSError:
                return None
            with file:
                try:
                    text = _parallel.StreamLineStart(decompressed(file, self.path), seams)
                    splits = _parallel.splits_for(
                        text, self.bom, blocks.consumed, size, self.processes, share
                    )
                except (OSError, RecompileDoctorError):
                    return None  # (no second reading: this process reads it all)
        else:
            line_start = _parallel.file_line_start(f.fileno(), size, seams)
            splits = _parallel.splits_for(
                line_start, self.bom, blocks.consumed, size, self.processes, share
            )
        if not splits:
            return None

        def worker_lines(blocks: Blocks, counts: Counted, lineno: int) -> FastLines:
            return lines_from(blocks, counts, lineno, progress=False)  # (no bar from a worker)

        try:
            self._team = _parallel.Team(
                self.path, f, self.bom, splits, decoder, worker_lines, st.compressed
            )
        except OSError:
            return None  # no temporary folder: this process reads it all
        blocks.limit = self._first_part = splits[0]
        return self._team

    def tell_how_read(self, stream: _parallel.Stream | None) -> None:
        """Log (with ``-v``) how the parts of the input were read, when several processes
        read it (``stream``: the workers' events taken, if any): a part read twice is
        otherwise silent."""
        if self._team is not None and telling():
            from recompile_doctor.parsers import _parallel

            tell(_parallel.how_read(self._team, stream, self.missed))

    def _adopt(
        self, chain: list[tuple[int, _parallel.Part, int]], c: ParseCounter, fmt: LogFormat
    ) -> None:
        """Take the counts of a chain of workers' parts (their events are given), each
        from the checkpoint where the reader before it handed over."""
        for _k, part, i in chain:
            _line, _state, recognized, unrecognized, malformed, _events = part.checkpoints[i]
            total = part.totals
            c.recognized += total.recognized - recognized
            c.unrecognized += total.unrecognized - unrecognized
            c.malformed += total.malformed - malformed
            if c.format == UNKNOWN_FORMAT and total.recognized > recognized:
                c.format = fmt.name
        k, last, _i = chain[-1]
        team = self._team
        assert team is not None
        st = self.st
        st.lines = last.lines
        st.bytes = self.bom + team.splits[k - 1] + last.nbytes
        self._progress(st.bytes)


class _MatcherOnFirstUse:
    """:func:`make_matcher`'s matcher, made when first asked: an input whose head lines
    hold all of it never needs one (nor the start-up cost of hyperscan and its database)."""

    def __init__(self, literals: list[str], engine: str | None) -> None:
        self._literals = literals
        self._engine = engine
        self._made: Matcher | None = None

    def positions(self, data: bytearray, end: int) -> list[int]:
        made = self._made
        if made is None:
            made = self._made = make_matcher(self._literals, self._engine)
        return made.positions(data, end)


def _drive(
    path: str,
    c: ParseCounter,
    forced: LogFormat | None,
    lines: Iterator[tuple[int, str]],
    fastpart: _FastPart | None,
    strict: bool,
    fold: bool = False,
) -> Iterator[list[TypedEvent]]:
    """Detect the format from the first lines (unless ``forced``) and decode: the events in
    runs, none empty."""
    head: list[tuple[int, str]] = []
    fmt = forced
    if fmt is None:
        # the first lines usually tell; a log with a long preamble (installation output, a
        # config dump) gets up to SNIFF_MAX_LINES before it is taken as of no known format
        for limit in (SNIFF_LINES, SNIFF_MAX_LINES):
            for item in lines:
                head.append(item)
                if len(head) >= limit:
                    break
            fmt = detect_format([raw for _, raw in head])
            if fmt is not None or len(head) < limit:
                break
        if fastpart is not None:
            fastpart.detected()
    c.format = fmt.name if fmt is not None else UNKNOWN_FORMAT
    if fmt is None:
        # nothing in the first lines: count the rest, but a later compile line still counts
        fmt = POPLAR
    decoder: Decoder = fmt.decoder(path)
    fold_repeats: Callable[[], None] | None = getattr(decoder, "fold_repeats", None)
    if fold and fold_repeats is not None:
        fold_repeats()
    is_anchor = _anchor_test(fmt)
    todo = _plain_lines(chain(head, lines), decoder, is_anchor, c)
    if fastpart is not None:
        todo = chain(todo, fastpart.rest(fmt, decoder, is_anchor, c))
    yield from decoded_runs(todo, decoder, c, fmt.name, path, strict)
    stream = fastpart.stream if fastpart is not None else None
    last = stream
    while fastpart is not None and stream is not None:  # the workers' events from there on
        yield from stream.events()
        if stream.chain is not None:  # (the last worker's decoder finished)
            fastpart._adopt(stream.chain, c, fmt)
            fastpart.tell_how_read(stream)
            return
        # a worker failed on the way, or missed a name this process knew: this process
        # decodes on from where it handed over and leaves out the events the workers gave
        # already; to the end, or (a name missed) up to where that worker's state is this
        # one's again, and takes its events from there
        yield from runs_after(
            decoded_runs(fastpart.read_on(stream), decoder, c, fmt.name, path, strict),
            stream.taken,
        )
        last, stream = stream, fastpart.stream
    if fastpart is not None:
        fastpart.tell_how_read(last)
    yield from runs_of(decoder.finish())


def _plain_lines(
    lines: Iterator[tuple[int, str]],
    decoder: Decoder,
    is_anchor: Callable[[str], bool],
    c: ParseCounter,
) -> Iterator[tuple[int, str]]:
    """The lines to decode; the others go to ``decoder.skipped``, counted unrecognized."""
    for lineno, raw in lines:
        if not decoder.continuing and not is_anchor(raw):
            c.unrecognized += 1
            decoder.skipped(lineno, raw)
            continue
        yield lineno, raw


def records(events: Iterable[TypedEvent]) -> Iterator[Event]:
    """The recognized messages behind ``events``, once each, in order."""
    last: Event | None = None
    for ev in events:
        rec = ev.record
        if rec is not None and rec is not last:
            last = rec
            yield rec
