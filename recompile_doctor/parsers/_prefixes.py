"""Line prefixes of the TensorFlow/Poplar/PopLibs/PopART/PopTorch/poprun loggers.

:func:`split_prefix` finds a known prefix anywhere in a line (progress bars and MPI tags
glue text in front of it) and returns the time it carries, the severity and the message.

Formats (``reference/poplar_formats.md`` §0):

* TensorFlow C++: ``2023-04-26 14:42:34.517107: I[ tid] path/file.cc:1619] msg`` (local time)
* glog (newer TF/JAX/torch): ``I0920 13:54:44.535000 3904 path/file.py:4760] msg``
* Poplar/PopLibs new (SDK >= 2.3): ``2023-08-22T23:49:40.103248Z PO:ENGINE   pid.tid W: msg`` (UTC)
* Poplar/PopLibs old (SDK <= 2.2): ``09:38:52.878 15288 PO:ENGINE   [I] msg`` (time only)
* PopART: ``2023-04-27T04:30:36.928499Z popart:session pid.tid W: msg`` (UTC)
* PopTorch: ``[08:27:00.611] [poptorch:cpp] [warning] msg`` / ``[poptorch::python]``
* poprun: ``04:23:00.689 3905692 POPRUN [D] msg``
"""

from __future__ import annotations

import math
import re
from datetime import UTC, datetime
from typing import Final, NamedTuple, cast

from recompile_doctor.bounded import Kept
from recompile_doctor.microseconds import round6
from recompile_doctor.parsers._lazy_re import lazy_re
from recompile_doctor.parsers._tuples import tuple_new

ANSI_RE: Final = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")

#: the time stamps of the two absolute clocks at the start of a prefix: TensorFlow's local
#: time and Poplar's / PopART's UTC (both :data:`STAMP_LEN` characters)
_TF_STAMP = r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{6}"
_ISO_STAMP = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}"
STAMP_LEN: Final = 26
#: clock -> what a well-formed stamp of it looks like (matched at the start of a line)
STAMP_OF: Final = {"local": re.compile(_TF_STAMP), "utc": re.compile(_ISO_STAMP)}

# One alternation, each branch with its own named groups.  Ordered most specific first.
# (Compiled when first used: 1 ms, which a log without such prefixes never needs.)
_PREFIX_RE = lazy_re(
    rf"(?P<tf_ts>{_TF_STAMP}): (?P<tf_lvl>[IWEF])(?: +\d+)? "
    r"(?P<tf_file>[^\s:\]]+):\d+\] ?"
    rf"|(?P<iso_ts>{_ISO_STAMP})Z "
    r"(?P<iso_logger>(?:PO|PL):[A-Z]+|popart:[a-z]+) +\d+\.\d+ (?P<iso_lvl>[TDIWEC]):(?: |$)"
    r"|(?P<old_ts>\d\d:\d\d:\d\d\.\d{3}) \d+ (?P<old_logger>(?:PO|PL):[A-Z]+|POPRUN) +"
    r"\[(?P<old_lvl>[TDIWEC])\](?: |$)"
    r"|\[(?P<pt_ts>\d\d:\d\d:\d\d\.\d{3})\] \[(?P<pt_logger>poptorch[a-z:]*)\] "
    r"\[(?P<pt_lvl>[a-z]+)\] "
    r"|(?P<glog_lvl>[IWEFV])(?P<glog_md>\d{4}) (?P<glog_ts>\d\d:\d\d:\d\d\.\d{6}) +\d+ "
    r"(?P<glog_file>[^\s:\]]+):\d+\] ?"
)

#: a prefix that is not at column 0 contains one of these
_GLUE_TELLS: Final = ("] ", " PO:", " PL:", " popart:", "[poptorch", " POPRUN ")

_LEVELS: Final = {
    "I": "info",
    "W": "warning",
    "E": "error",
    "F": "fatal",
    "T": "trace",
    "D": "debug",
    "C": "critical",
    "V": "debug",
}


class Prefix(NamedTuple):
    """What a prefix says: when (seconds), which clock, which logger, which level.

    (A named tuple rather than a dataclass: one is built per decoded line, and a tuple is
    built several times faster.)"""

    seconds: float | None  # seconds since the epoch (absolute) or since midnight (time-only)
    clock: str  # "local" (TF), "utc" (Poplar new / PopART), "time-only", or "none"
    logger: str  # "tensorflow", "PO:ENGINE", "popart:session", "poptorch:cpp", ...
    level: str | None
    source_file: str | None = None
    #: why a prefix that looks right carries no usable time ("invalid time stamp ..."): the
    #: line is malformed; ``seconds`` is then None (the line inherits the time before it)
    problem: str | None = None


NO_PREFIX: Final = Prefix(None, "none", "", None)

#: the largest number a log field is believed to carry (a duration of 10**15 ms is 31,000
#: years); anything larger, or not finite, makes the line malformed
MAX_FIELD_NUMBER = 10**15
_INT_RE: Final = re.compile(r"[+-]?\d{1,30}", re.ASCII)
_FLOAT_RE: Final = re.compile(
    r"[+-]?(?:\d{1,30}(?:\.\d{0,30})?|\.\d{1,30})(?:[eE][+-]?\d{1,4})?", re.ASCII
)


def safe_int(text: str | None, limit: int = MAX_FIELD_NUMBER) -> int | None:
    """``int(text)`` when ``text`` is a plain integer no larger than ``limit`` in magnitude,
    else ``None`` (never an exception, whatever the line holds)."""
    if text is None:
        return None
    t = text.strip()
    if _INT_RE.fullmatch(t) is None:
        return None
    n = int(t)
    return n if abs(n) <= limit else None


def safe_float(text: str | None, limit: float = MAX_FIELD_NUMBER) -> float | None:
    """``float(text)`` when ``text`` is a finite decimal number no larger than ``limit`` in
    magnitude, else ``None`` (``inf``, ``nan``, 400 digits, garbage)."""
    if text is None:
        return None
    t = text.strip()
    if _FLOAT_RE.fullmatch(t) is None:
        return None
    try:
        x = float(t)
    except (ValueError, OverflowError):
        return None
    return x if math.isfinite(x) and abs(x) <= limit else None


#: ``YYYY-MM-DD?HH:MM`` -> (epoch seconds of that midnight, seconds of the minute into the
#: day), or None for a date or time that does not exist
_MINUTES_KEPT: Final[Kept[str, tuple[float, int] | None]] = Kept()
_MINUTES: Final = _MINUTES_KEPT.table


def epoch_seconds(ts: str) -> float | None:
    """``YYYY-MM-DD?HH:MM:SS.ffffff`` -> seconds since the epoch (the stamp read as UTC), or
    ``None`` for a date or time that does not exist (``2023-13-26``, ``04-31``, ``25:00``)."""
    # the date and the minute are read once per minute of the log; the sum is formed as
    # ``midnight + (minute + seconds)``, as a full reading forms it
    key = ts[:16]
    try:
        base = _MINUTES[key]
    except KeyError:
        base = _MINUTES_KEPT.put(key, _minute(key))
    if base is None:
        return None
    return _in_minute(base, ts[17:])


def _in_minute(base: tuple[float, int], seconds: str) -> float | None:
    """The epoch seconds of ``seconds`` (``SS.ffffff``) into the minute ``base`` (as
    :data:`_MINUTES` holds it), formed as ``midnight + (minute + seconds)``; None past a
    leap second."""
    s = float(seconds)
    if s >= 61.0:
        return None
    return base[0] + (base[1] + s)


#: clock -> ``YYYY-MM-DD?HH:MM:`` of the stamps of that clock read so far, each head seen in
#: a well-formed stamp (:data:`STAMP_OF`) -> what :func:`epoch_seconds` reads of it
_HEADS: Final[dict[str, Kept[str, tuple[float, int] | None]]] = {c: Kept() for c in STAMP_OF}
_HEAD_LEN: Final = 17
_UNSEEN: Final = object()


def stamp_seconds(line: str, clock: str) -> float | None:
    r"""The seconds :func:`epoch_seconds` reads of the stamp ``line`` starts with, when it is
    a well-formed stamp of ``clock`` (``STAMP_OF[clock]`` matches there), else None.

    The stamp's date and minute (its first 17 characters) are checked and read once per
    minute of the log; the rest, ``SS.ffffff``, by str methods (``isdecimal`` is the
    pattern's ``\d``): a pattern matched on every line of a log cost 2-4 % of its reading."""
    heads = _HEADS[clock]
    got = heads.table.get(line[:_HEAD_LEN], _UNSEEN)
    if got is _UNSEEN:
        if STAMP_OF[clock].match(line) is None:
            return None  # (a head is remembered only once a whole stamp was well-formed)
        got = heads.put(line[:_HEAD_LEN], _minute(line[:16]))
    if (
        len(line) < STAMP_LEN
        or line[19] != "."
        or not line[17:19].isdecimal()
        or not line[20:STAMP_LEN].isdecimal()
    ):
        return None
    if got is None:
        return None
    return _in_minute(cast("tuple[float, int]", got), line[17:STAMP_LEN])


def _minute(key: str) -> tuple[float, int] | None:
    date = key[:10]
    try:
        day = datetime(int(date[:4]), int(date[5:7]), int(date[8:10]), tzinfo=UTC)
    except ValueError:
        return None
    h, m = int(key[11:13]), int(key[14:16])
    if h > 23 or m > 59:
        return None
    return day.timestamp(), h * 3600 + m * 60


def _time_of_day(ts: str) -> float | None:
    """``HH:MM:SS.fff`` -> seconds since midnight, or ``None`` for a time that does not exist
    (a leap second, ``:60``, is allowed)."""
    h, m, s = int(ts[0:2]), int(ts[3:5]), float(ts[6:])
    if h > 23 or m > 59 or s >= 61.0:
        return None
    return h * 3600 + m * 60 + s


def _stamped(
    seconds: float | None, stamp: str, clock: str, logger: str, level: str | None,
    source_file: str | None = None,
) -> Prefix:  # fmt: skip
    if seconds is None:
        return Prefix(None, clock, logger, level, source_file, f"invalid time stamp {stamp!r}")
    return Prefix(seconds, clock, logger, level, source_file)


def strip_ansi(text: str) -> str:
    """Remove terminal escape sequences (colours, ``ESC[2K`` line clears)."""
    return ANSI_RE.sub("", text) if "\x1b" in text else text


def clock_of(segment: str) -> str | None:
    """The clock of the prefix at the start of ``segment`` ("local", "utc", "time-only"), or
    None when it has none there (it may still have one further on)."""
    m = _PREFIX_RE.match(segment)
    if m is None:
        return None
    return _BRANCH_CLOCKS[m.lastgroup or ""]


_BRANCH_CLOCKS: Final = {
    "tf_file": "local",
    "iso_lvl": "utc",
    "old_lvl": "time-only",
    "pt_lvl": "time-only",
    "glog_file": "time-only",
}


#: the text between an absolute stamp and the message (``: I path/file.cc:1109] ``,
#: ``Z PO:ENGINE   1.1 I: ``) of prefixes read so far -> their fields (clock, logger, level,
#: file): a line that starts with a well-formed stamp of that clock and goes on with one of
#: these has that prefix, the pattern's match (its branch and groups) being decided within
#: them (each ends with the space the pattern takes last).  At most
#: :data:`~recompile_doctor.bounded.KEPT_MAX` entries (:class:`~recompile_doctor.bounded.Kept`).
_RESTS_KEPT: Final[Kept[str, tuple[str, str, str | None, str | None]]] = Kept()
_RESTS: Final = _RESTS_KEPT.table
#: where each absolute clock's rest ends: the first of these after the stamp (its file and
#: logger hold no ``]`` or ``: ``)
_REST_ENDS: Final = {"local": "] ", "utc": ": "}
_new: Final = tuple_new


def split_prefix(segment: str) -> tuple[Prefix, str, str]:
    """Find a logger prefix in ``segment``; return it, the message after it, and the text
    glued in front of it (a progress bar, say).  Without a prefix, the whole segment is the
    message."""
    # (a prefix read before, with this line's stamp: the pattern is matched once per
    # logger, file and thread, not on each line that is not a repeat)
    sep = segment[10:11]
    clock = "utc" if sep == "T" else "local" if sep == " " else ""
    if clock:
        end = segment.find(_REST_ENDS[clock], STAMP_LEN) + 2
        if end > STAMP_LEN:
            fields = _RESTS.get(segment[STAMP_LEN:end])
            if fields is not None and fields[0] == clock:
                seconds = stamp_seconds(segment, clock)
                if seconds is not None:
                    p: Prefix = _new(
                        Prefix, (seconds, clock, fields[1], fields[2], fields[3], None)
                    )
                    return p, segment[end:], ""
    return _split_prefix(segment)


def _split_prefix(segment: str) -> tuple[Prefix, str, str]:
    """:func:`split_prefix` by the pattern."""
    m = _PREFIX_RE.match(segment)
    if m is None and any(t in segment for t in _GLUE_TELLS):
        m = _PREFIX_RE.search(segment)
    if m is None:
        return NO_PREFIX, segment, ""
    msg = segment[m.end() :]
    branch = m.lastgroup  # the last group of the branch that matched
    group = m.group
    if branch == "tf_file":
        ts = group("tf_ts")
        p = _stamped(
            epoch_seconds(ts), ts, "local", "tensorflow", _LEVELS[group("tf_lvl")], group("tf_file")
        )
    elif branch == "iso_lvl":
        ts = group("iso_ts")
        p = _stamped(epoch_seconds(ts), ts, "utc", group("iso_logger"), _LEVELS[group("iso_lvl")])
    elif branch == "old_lvl":
        ts = group("old_ts")
        p = _stamped(
            _time_of_day(ts), ts, "time-only", group("old_logger"), _LEVELS[group("old_lvl")]
        )
        return p, msg, segment[: m.start()]
    elif branch == "pt_lvl":
        ts = group("pt_ts")
        p = _stamped(_time_of_day(ts), ts, "time-only", group("pt_logger"), group("pt_lvl"))
        return p, msg, segment[: m.start()]
    else:
        ts = group("glog_ts")
        p = _stamped(
            _time_of_day(ts),
            ts,
            "time-only",
            "glog",
            _LEVELS[group("glog_lvl")],
            group("glog_file"),
        )
        return p, msg, segment[: m.start()]
    if m.start() == 0 and p.seconds is not None:
        rest = segment[STAMP_LEN : m.end()]
        if rest.endswith(_REST_ENDS[p.clock]):
            _RESTS_KEPT.put(rest, (p.clock, p.logger, p.level, p.source_file))
    return p, msg, segment[: m.start()]


class Clock:
    """Turns prefix times into one timeline for a source.

    * Absolute stamps (TF local time, Poplar/PopART UTC) are used as they are.  When a log mixes
      local and UTC stamps, the offset between the two clocks is estimated once (rounded to
      15 minutes) from the first neighbouring pair and applied to the clock seen second.
    * Time-only stamps (old Poplar, PopTorch, poprun) take the date of the last absolute stamp
      and roll over at midnight; before any absolute stamp they float on day 0 and are moved
      to the right day when the first absolute stamp appears.
    * Lines without a stamp inherit the last one.
    """

    __slots__ = ("_base", "_day", "_first", "_floating", "_last", "_last_tod", "_offset")

    def __init__(self) -> None:
        self._first: float | None = None
        self._last: float | None = None
        self._base: str | None = None  # the absolute clock seen first: "local" or "utc"
        self._offset: float | None = None  # seconds to add to the other absolute clock
        self._day: float | None = None  # epoch seconds of the current midnight
        self._last_tod: float | None = None
        self._floating = False

    def _absolute_seconds(self, s: float, clock: str) -> float:
        if self._base is None:
            self._base = clock
        elif clock != self._base:
            if self._offset is None:
                ref = self._last if self._last is not None else s
                self._offset = round((ref - s) / 900.0) * 900.0
            s += self._offset
        if self._floating and self._day is not None:
            shift = (s - s % 86400.0) - self._day
            if self._last is not None and self._last + shift > s + 3600.0:
                shift -= 86400.0
            self._first = None if self._first is None else self._first + shift
            self._last = None if self._last is None else self._last + shift
            self._floating = False
        self._day = s - s % 86400.0
        self._last_tod = s % 86400.0
        return s

    def _time_only_seconds(self, tod: float) -> float:
        if self._day is None:
            self._day = 0.0
            self._floating = True
        elif self._last_tod is not None and tod + 3600.0 < self._last_tod:
            self._day += 86400.0  # rolled over midnight
        self._last_tod = tod
        return self._day + tod

    def absolute(self, prefix: Prefix) -> float | None:
        """Absolute seconds for ``prefix`` (or the inherited time when it has none)."""
        s = prefix.seconds
        if s is None:
            return self._last
        clock = prefix.clock
        if clock == "time-only":
            s = self._time_only_seconds(s)
        elif clock == self._base and not self._floating:
            # (the common stamp, :meth:`_absolute_seconds` written out: a call less a line)
            tod = s % 86400.0
            self._day = s - tod
            self._last_tod = tod
        else:
            s = self._absolute_seconds(s, clock)
        if self._first is None:
            self._first = s
        self._last = s
        return s

    def overrides(self, cur: Prefix, before: str | None) -> bool:
        """Whether reading a stamp of clock ``before`` (None: of any clock, or none) just
        before the absolute stamp ``cur`` leaves this clock exactly as reading ``cur`` alone
        does: then that earlier stamp need not be read at all."""
        if cur.seconds is None or cur.clock == "time-only" or self._base is None:
            return False
        if self._floating:
            return False
        if self._offset is not None:
            return True
        # the offset between the two absolute clocks is not known yet: a stamp of the other
        # clock would set it (from the time before it), and ``cur`` on the other clock would
        # set it from the time of the earlier stamp
        return cur.clock == self._base and before in (self._base, "time-only")

    def relative(self, absolute: float | None) -> float | None:
        """Seconds since the first stamp of the source (``None`` before any stamp)."""
        if absolute is None or self._first is None:
            return None
        return round6(absolute - self._first)
