"""Log parsers: a registry of formats, format detection and the streaming driver.

``parse_log(path)`` yields :class:`~recompile_doctor.model.Event` objects one at a time and
fills a :class:`ParseCounter` as it goes, so a caller can fold events into a timeline without
ever holding the whole log in memory.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from recompile_doctor.errors import RecompileDoctorError
from recompile_doctor.model import Event, InputInfo, ParseStats
from recompile_doctor.parsers._prefixes import NO_PREFIX, Clock, split_prefix, strip_ansi
from recompile_doctor.parsers._reader import ReadStats, iter_lines
from recompile_doctor.parsers.poplar import ANCHOR_RE, Malformed, Message, match_message

#: formats with a parser; ``--log-format`` offers exactly these
LOG_FORMATS: tuple[str, ...] = ("poplar",)

_MPI_TAG = "]<std"
#: what a line that starts with a logger time stamp starts with
_STAMP_START = re.compile(
    r"\d{4}-\d\d-\d\d[ T]\d\d:|\d\d:\d\d:\d\d\.\d{3} |\[\d\d:\d\d:\d\d\.\d{3}\]|"
    r"[IWEFV]\d{4} \d\d:|\[\d+,\d+\]<"
)


@dataclass(slots=True)
class ParseCounter:
    """Per-source counters, filled while the events are consumed."""

    path: str
    format: str = "poplar"
    recognized: int = 0
    unrecognized: int = 0
    malformed: int = 0
    read: ReadStats = field(default_factory=ReadStats)

    def stats(self) -> ParseStats:
        return ParseStats(self.recognized, self.unrecognized, self.malformed)

    def input_info(self) -> InputInfo:
        return InputInfo(self.path, self.format, self.read.lines, self.read.bytes)


def _mpi_rank(seg: str) -> tuple[str, str | None]:
    """Split ``[1,0]<stderr>:`` off a line from an MPI rank: (the rest, "1,0")."""
    if seg.startswith("[") and _MPI_TAG in seg[:24]:
        end = seg.find(">:")
        close = seg.find("]")
        if end != -1 and 0 < close < end:
            return seg[end + 2 :], seg[1:close]
    return seg, None


def _strip_mpi_tag(seg: str) -> str:
    return _mpi_rank(seg)[0]


def parse_log(
    path: str,
    counter: ParseCounter | None = None,
    *,
    strict: bool = False,
    log_format: str | None = None,
    on_progress: Callable[[int], None] | None = None,
) -> Iterator[Event]:
    """Stream the events of one log.

    ``strict``: raise on the first line that names a known message but does not fit it.
    """
    if log_format is not None and log_format not in LOG_FORMATS:
        raise RecompileDoctorError(f"unknown log format {log_format!r}", path=path)
    c = counter if counter is not None else ParseCounter(path)
    clock = Clock()
    # Only lines that contain a message anchor are parsed in full.  The clock still sees the
    # time of the last stamped line before each of them (lines without a stamp inherit it),
    # and the first stamped line of the log (which is t = 0).
    last_stamped: str | None = None
    first_seen = False
    last_rank: str | None = None
    for lineno, raw in iter_lines(path, c.read, on_progress):
        if ANCHOR_RE.search(raw) is None:
            c.unrecognized += 1
            if _STAMP_START.match(raw) is not None:
                if not first_seen:
                    first_seen = clock.absolute(split_prefix(strip_ansi(raw))[0]) is not None
                else:
                    last_stamped = raw
            continue
        if last_stamped is not None:
            clock.absolute(split_prefix(_strip_mpi_tag(strip_ansi(last_stamped)))[0])
            last_stamped = None
        first_seen = True
        segments = raw.split("\r") if "\r" in raw else (raw,)
        found = False
        bad: Malformed | None = None
        for seg in segments:
            seg, tag = _mpi_rank(strip_ansi(seg))
            # a line without an MPI tag belongs to the rank of the tagged line before it
            rank = last_rank = tag if tag is not None else last_rank
            if not seg:
                continue
            prefix, msg, head = split_prefix(seg)
            if head.strip():
                # text glued in front of the prefix (a progress bar) is a message of its own,
                # at the time of the line before
                res = match_message(head)
                if isinstance(res, Message):
                    found = True
                    t = clock.relative(clock.absolute(NO_PREFIX))
                    yield _event(res, path, lineno, t, raw, rank)
            absolute = clock.absolute(prefix)
            res = match_message(msg)
            if isinstance(res, Message):
                found = True
                yield _event(res, path, lineno, clock.relative(absolute), raw, rank)
            elif isinstance(res, Malformed):
                bad = res
        if found:
            c.recognized += 1
        elif bad is not None:
            c.malformed += 1
            if strict:
                raise RecompileDoctorError(
                    f"malformed {bad.kind} line (expected the format of "
                    f"'{bad.expected.strip()}' messages)",
                    path=path,
                    line=lineno,
                )
        else:
            c.unrecognized += 1


def _event(
    msg: Message, path: str, lineno: int, t: float | None, raw: str, rank: str | None
) -> Event:
    return Event(
        kind=msg.kind,
        source=path,
        line=lineno,
        t=t,
        text=raw,
        module=msg.module,
        hash=msg.hash,
        detail=msg.detail if rank is None else {**msg.detail, "rank": rank},
    )
