"""Log parsers: the registry of log formats, format detection and the streaming driver.

:data:`LOG_FORMATS` is a plain list of :class:`~recompile_doctor.parsers._format.LogFormat`;
``--log-format`` picks one of them by name, otherwise each input's format is detected from its
first lines.  ``parse_log(path)`` yields typed events (:mod:`recompile_doctor.events`) one at a
time and fills a :class:`ParseCounter` as it goes, so a caller can fold events into a timeline
without ever holding the whole log in memory.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import chain

from recompile_doctor.errors import RecompileDoctorError
from recompile_doctor.events import TypedEvent
from recompile_doctor.model import Event, InputInfo, ParseStats
from recompile_doctor.parsers._format import Decoded, Decoder, LogFormat, anchor_sniffer
from recompile_doctor.parsers._reader import ReadStats, iter_lines
from recompile_doctor.parsers.jax import JAX
from recompile_doctor.parsers.poplar import ANCHOR_RE
from recompile_doctor.parsers.poplar_decoder import PoplarDecoder
from recompile_doctor.parsers.ptxla import PTXLA
from recompile_doctor.parsers.tensorflow import TENSORFLOW
from recompile_doctor.parsers.torch import TORCH
from recompile_doctor.parsers.torch_trace import TORCH_TRACE

#: lines of an input that detection looks at
SNIFF_LINES = 400
UNKNOWN_FORMAT = "unknown"

_POPLAR_ANCHORS = (
    "Begin XLA compilation",
    "executable cache",
    "Poplar version:",
    "TF_POPLAR_FLAGS",
    "PopLibs",
    "POPLAR",
    "phase: ",
    "Compiling module ",
    ".poplar_exec",
    "poplar_compiler.cc",
    "PopART",
    "PopTorch",
    "Graph compilation: 100%",
)


def _poplar_sniff(lines: Sequence[str]) -> int:
    return anchor_sniffer(_POPLAR_ANCHORS)(lines)


POPLAR = LogFormat(
    name="poplar",
    framework="poplar",
    anchors=_POPLAR_ANCHORS,
    sniff=_poplar_sniff,
    decoder=PoplarDecoder,
    how_to_log=(
        "For a Graphcore TensorFlow-on-IPU run, log with TF_POPLAR_VLOG_LEVEL=1 (or "
        "TF_CPP_VMODULE='poplar_compiler=1,poplar_executable=1') and POPLAR_LOG_LEVEL=INFO "
        "(python train.py 2> run.log)."
    ),
)

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
        search = ANCHOR_RE.search
        return lambda line: search(line) is not None
    anchors = fmt.anchors
    return lambda line: any(a in line for a in anchors)


def parse_log(
    path: str,
    counter: ParseCounter | None = None,
    *,
    strict: bool = False,
    log_format: str | None = None,
    on_progress: Callable[[int], None] | None = None,
) -> Iterator[TypedEvent]:
    """Stream the typed events of one log.

    The format is ``log_format`` when given, else detected from the first lines.
    ``strict``: raise on the first line that names a known message but does not fit it.
    """
    forced = get_format(log_format) if log_format is not None else None
    c = counter if counter is not None else ParseCounter(path)
    lines = iter_lines(path, c.read, on_progress)
    head: list[tuple[int, str]] = []
    fmt = forced
    if fmt is None:
        for item in lines:
            head.append(item)
            if len(head) >= SNIFF_LINES:
                break
        fmt = detect_format([raw for _, raw in head])
    c.format = fmt.name if fmt is not None else UNKNOWN_FORMAT
    if fmt is None:
        # nothing in the first lines: count the rest, but a later compile line still counts
        fmt = POPLAR
    decoder: Decoder = fmt.decoder(path)
    is_anchor = _anchor_test(fmt)
    for lineno, raw in chain(head, lines):
        if not decoder.continuing and not is_anchor(raw):
            c.unrecognized += 1
            decoder.skipped(lineno, raw)
            continue
        res: Decoded = decoder.decode(lineno, raw)
        if res.status == "recognized":
            c.recognized += 1
            if c.format == UNKNOWN_FORMAT:
                c.format = fmt.name
        elif res.status == "malformed":
            c.malformed += 1
            if strict:
                raise RecompileDoctorError(res.problem or "malformed line", path=path, line=lineno)
        else:
            c.unrecognized += 1
        yield from res.events
    yield from decoder.finish()


def records(events: Iterable[TypedEvent]) -> Iterator[Event]:
    """The recognized messages behind ``events``, once each, in order."""
    last: Event | None = None
    for ev in events:
        rec = ev.record
        if rec is not None and rec is not last:
            last = rec
            yield rec
