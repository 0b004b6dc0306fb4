"""Line prefixes of Python ``logging``, absl and glog, as JAX, TensorFlow and torch print them.

:func:`split_pylog` takes one line and returns what its prefix says (time, level, logger)
and the message after it.  A line without a known prefix is all message.

Formats, most specific first:

* ``logging.basicConfig(format='%(asctime)s %(levelname)s %(name)s: %(message)s')``:
  ``2026-11-22 19:10:38,361 WARNING jax._src.dispatch: msg`` (also ``%(asctime)s -
  %(name)s - %(levelname)s - %(message)s``: ``2026-11-22 19:10:38,361 - jax - WARNING - msg``)
* JAX's own handler (``JAX_LOGGING_LEVEL``, ``{levelname}:{asctime}:{name}:{lineno}:``):
  ``WARNING:2026-11-22 19:10:47,731:jax._src.interpreters.partial_eval:2167: msg``
* ``logging.basicConfig()`` default (``%(levelname)s:%(name)s:%(message)s``):
  ``WARNING:jax._src.dispatch:msg``
* absl / glog (Python absl, C++): ``W0610 23:50:26.227175 dispatch.py:205] msg`` and
  ``I1122 19:10:47.728875   15526 pjrt_client.cc:579] msg`` (with a thread id)
* TensorFlow C++: ``2023-04-26 14:42:34.517107: I tensorflow/core/x.cc:1619] msg``

The time is read as it is printed (local time, taken as UTC): only differences matter.
glog stamps carry no year; they are times of day (``clock="time-only"``) that
:class:`recompile_doctor.parsers._prefixes.Clock` puts on the date of the last dated stamp.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Final

from recompile_doctor.bounded import Kept
from recompile_doctor.parsers._lazy_re import lazy_re
from recompile_doctor.parsers._memo import memo
from recompile_doctor.parsers._prefixes import Prefix
from recompile_doctor.parsers._spans import native_in_use

_LEVEL_NAMES = "DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL|FATAL"
_ASCTIME = r"\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[,.]\d{1,9})?"
_LOGGER = r"[A-Za-z_][\w.\-]*"

_ASCTIME_RE: Final = lazy_re(
    rf"(?P<ts>{_ASCTIME})"
    rf"(?: (?P<lvl>{_LEVEL_NAMES}) (?P<name>{_LOGGER}): "
    rf"| - (?P<name2>{_LOGGER}) - (?P<lvl2>{_LEVEL_NAMES}) - "
    rf"|: (?P<tflvl>[IWEF]) (?P<tffile>[^\s:\]]+):\d+\] ?)"
)
_LEVEL_FIRST_RE: Final = lazy_re(
    rf"(?P<lvl>{_LEVEL_NAMES}):(?:(?P<ts>{_ASCTIME}):)?(?P<name>{_LOGGER}):(?:\d+: ?)?"
)
_GLOG_RE: Final = lazy_re(
    r"(?P<lvl>[IWEFDV])(?P<md>\d{4}) (?P<tod>\d\d:\d\d:\d\d\.\d{1,9})(?: +\d+)? "
    r"(?P<file>[^\s:\]]+):\d+\] ?"
)

_LEVELS: Final = {
    "DEBUG": "debug",
    "INFO": "info",
    "WARNING": "warning",
    "WARN": "warning",
    "ERROR": "error",
    "CRITICAL": "critical",
    "FATAL": "fatal",
    "I": "info",
    "W": "warning",
    "E": "error",
    "F": "fatal",
    "D": "debug",
    "V": "debug",
}

#: what a line read by _LEVEL_FIRST_RE starts with
_LEVEL_FIRST_STARTS: Final = tuple(f"{name}:" for name in _LEVEL_NAMES.split("|"))
#: those of them by their first character (one or two to try, where all seven were)
_LEVEL_FIRST_BY_CHAR: Final[dict[str, tuple[str, ...]]] = {
    c: tuple(s for s in _LEVEL_FIRST_STARTS if s[0] == c)
    for c in {s[0] for s in _LEVEL_FIRST_STARTS}
}

#: a date (``YYYY-MM-DD``) -> the epoch seconds of its midnight, read once per date
_MIDNIGHTS_KEPT: Final[Kept[str, float]] = Kept()
_MIDNIGHTS: Final = _MIDNIGHTS_KEPT.table


class PyLog:
    """What a line's prefix says, and the message after it (a plain class, not a named
    tuple: the compiled build makes one per decoded line as a native object, without the
    named tuple's ``__new__`` in Python)."""

    __slots__ = ("clock", "level", "logger", "message", "seconds")

    def __init__(
        self,
        seconds: float | None,
        clock: str,
        level: str | None,
        logger: str | None,
        message: str,
    ) -> None:
        #: seconds since the epoch (dated stamps) or since midnight (``clock="time-only"``)
        self.seconds = seconds
        #: ``"local"`` (a dated stamp), ``"time-only"`` (glog), ``"none"`` (no stamp)
        self.clock = clock
        self.level = level  # "debug", "info", "warning", "error", "critical", "fatal"
        self.logger = logger  # "jax._src.dispatch", or the source file of a glog line
        self.message = message

    def __repr__(self) -> str:
        return (
            f"PyLog(seconds={self.seconds!r}, clock={self.clock!r}, level={self.level!r}, "
            f"logger={self.logger!r}, message={self.message!r})"
        )

    def prefix(self) -> Prefix:
        """The same facts as a :class:`~recompile_doctor.parsers._prefixes.Prefix` (for
        :class:`~recompile_doctor.parsers._prefixes.Clock`)."""
        return Prefix(self.seconds, self.clock, self.logger or "", self.level)


def _time_of_day(ts: str) -> float:
    """``HH:MM:SS[.,]fff`` -> seconds since midnight."""
    return int(ts[0:2]) * 3600 + int(ts[3:5]) * 60 + float(ts[6:].replace(",", "."))


def _epoch(ts: str) -> float | None:
    """``YYYY-MM-DD HH:MM:SS,fff`` -> seconds since the epoch (read as UTC); None when the
    date does not exist."""
    date = ts[:10]
    midnight = _MIDNIGHTS.get(date)
    if midnight is None:
        try:
            midnight = datetime(
                int(date[:4]), int(date[5:7]), int(date[8:10]), tzinfo=UTC
            ).timestamp()
        except ValueError:
            return None
        _MIDNIGHTS_KEPT.put(date, midnight)
    return midnight + _time_of_day(ts[11:])


def _glog_second(stamp: str) -> float | None:
    """``MMDD HH:MM:SS`` -> seconds of that whole second in the year 2000 (None when no
    such time)."""
    try:
        return datetime(
            2000,
            int(stamp[0:2]),
            int(stamp[2:4]),
            int(stamp[5:7]),
            int(stamp[8:10]),
            int(stamp[11:13]),
        ).timestamp()
    except ValueError:
        return None


#: a glog stamp's whole second as ``%Y%m%d %H:%M:%S`` reads it (ASCII digits, two each)
_GLOG_SECOND_RE: Final = lazy_re(r"[0-9]{4} [0-9]{2}:[0-9]{2}:[0-9]{2}")
#: what :func:`_glog_head` gives for a second of another shape (never a second's value)
_NOT_PLAIN: Final = float("-inf")


def _glog_head(head: str) -> float | None:
    """:func:`_glog_second` of ``MMDD HH:MM:SS`` in ASCII digits, else :data:`_NOT_PLAIN`."""
    if _GLOG_SECOND_RE.fullmatch(head) is None:
        return _NOT_PLAIN
    return _glog_second(head)


#: many lines share a second: its seconds are read once
_glog_head_memo: Final = memo(_glog_head)


def glog_stamp(month_day: str, time: str) -> float | None:
    """Seconds of a glog stamp (``1122`` + ``19:11:45.043000``), on a fixed year (glog prints
    none): differences between stamps of one log are right; None for an impossible date.

    The same value as ``datetime.strptime(f"2000{month_day} {time}", "%Y%m%d
    %H:%M:%S.%f").timestamp()`` (local time, as a naive datetime's ``timestamp``), without
    ``strptime`` for the stamps glog prints (ASCII digits, two each, 1-6 decimals): the
    whole second is memoized and the microseconds added as ``timestamp`` adds them."""
    frac = time[9:]
    if time[8:9] == "." and 0 < len(frac) <= 6 and frac.isascii() and frac.isdigit():
        whole = _glog_head_memo(f"{month_day} {time[:8]}")
        if whole is None:
            return None
        if whole != _NOT_PLAIN:
            return whole + int(frac.ljust(6, "0")) / 1e6
    return _glog_stamp_slow(month_day, time)


def _glog_stamp_slow(month_day: str, time: str) -> float | None:
    try:
        return datetime.strptime(f"2000{month_day} {time}", "%Y%m%d %H:%M:%S.%f").timestamp()
    except ValueError:
        return None


#: the first character of a logger's name in :data:`_LEVEL_FIRST_RE` (``[A-Za-z_]``)
_NAME_FIRST: Final = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_")


def _level_and_logger(head: str) -> tuple[str, str] | None:
    """(level, logger) of ``LEVEL:logger`` (a line's text up to its second colon), as
    :data:`_LEVEL_FIRST_RE` reads them with no time stamp between; None when the logger's
    name is not of its form (``[A-Za-z_][\\w.\\-]*``: word characters are what
    ``str.isalnum`` says, and "_")."""
    k = head.find(":")
    name = head[k + 1 :]
    if not name or name[0] not in _NAME_FIRST:
        return None
    rest = name[1:].replace(".", "").replace("-", "").replace("_", "")
    if rest and not rest.isalnum():
        return None
    return _LEVELS[head[:k]], name


#: a log's few ``LEVEL:logger`` heads, read once each
_level_and_logger_memo: Final = memo(_level_and_logger)


def level_first_py(line: str) -> tuple[str, str, str] | None:
    """(level, logger, message) of a line ``LEVEL:logger:[lineno:[ ]]message`` with no time
    stamp after the level, as :data:`_LEVEL_FIRST_RE` reads it, with ``str`` methods, its
    head (level and logger) remembered: a third of the pattern's time, its groups included;
    None for a line of any other form, the pattern's to read (a digit after the level may
    begin a stamp).  ``line`` begins with one of :data:`_LEVEL_FIRST_STARTS`."""
    j = line.find(":", line.find(":") + 1)
    if j < 0:
        return None
    head = _level_and_logger_memo(line[:j])
    if head is None:
        return None
    e = j + 1
    # ``(?:\d+: ?)?``: the line number JAX's own handler prints (decimal digits, as \d)
    d = e
    n = len(line)
    while d < n and line[d].isdecimal():
        d += 1
    if d > e and line.startswith(":", d):
        e = d + 2 if line.startswith(" ", d + 1) else d + 1
    return head[0], head[1], line[e:]


#: the C module's twin of :func:`level_first_py` (``parsers/_native_fields.c``: a third of
#: the instructions, most of a JAX DEBUG line's prefix), None where it is not in use
_LEVEL_FIRST_C: Final[Callable[[str, dict[str, str]], tuple[str, str, str] | None] | None] = (
    getattr(native_in_use(), "level_first", None)
)


def level_first_unstamped(line: str) -> PyLog | None:
    """:func:`level_first_py` of ``line`` as what its prefix says (``logging.basicConfig()``'s
    default, most of a JAX DEBUG log)."""
    parts = _LEVEL_FIRST_C(line, _LEVELS) if _LEVEL_FIRST_C is not None else level_first_py(line)
    if parts is None:
        return None
    return PyLog(None, "none", parts[0], parts[1], parts[2])


def split_pylog(line: str) -> PyLog:
    """The prefix of ``line`` (Python logging, JAX's handler, absl/glog, TF C++) and the
    message after it; a line without a known prefix is all message."""
    c = line[:1]
    if c.isdigit():
        m = _ASCTIME_RE.match(line)
        if m is not None:
            secs = _epoch(m["ts"])
            if m["tflvl"]:
                return PyLog(secs, "local", _LEVELS[m["tflvl"]], m["tffile"], line[m.end() :])
            lvl = m["lvl"] or m["lvl2"]
            name = m["name"] or m["name2"]
            return PyLog(secs, "local", _LEVELS[lvl], name, line[m.end() :])
    elif (starts := _LEVEL_FIRST_BY_CHAR.get(c)) is not None and line.startswith(starts):
        plain = level_first_unstamped(line)
        if plain is not None:
            return plain
        m = _LEVEL_FIRST_RE.match(line)
        if m is not None:
            ts = m["ts"]
            secs = _epoch(ts) if ts else None
            return PyLog(
                secs,
                "local" if secs is not None else "none",
                _LEVELS[m["lvl"]],
                m["name"],
                line[m.end() :],
            )
    if c in "IWEFDV" and line[1:5].isdigit():
        m = _GLOG_RE.match(line)
        if m is not None:
            return PyLog(
                _time_of_day(m["tod"]),
                "time-only",
                _LEVELS[m["lvl"]],
                m["file"],
                line[m.end() :],
            )
    return PyLog(None, "none", None, None, line)
