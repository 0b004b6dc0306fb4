"""Log parsers: the registry of log formats, format detection and the streaming driver
(:mod:`recompile_doctor.parsers.logs`), and the XLA dump parsers (``parsers.hlo``,
``parsers.dumps``).

:data:`LOG_FORMATS` is a plain list of :class:`~recompile_doctor.parsers._format.LogFormat`;
``--log-format`` picks one of them by name, otherwise each input's format is detected from its
first lines.  ``parse_log(path)`` yields typed events (:mod:`recompile_doctor.events`) one at a
time and fills a :class:`ParseCounter` as it goes, so a caller can fold events into a timeline
without ever holding the whole log in memory.

The names below are loaded on first use: a command that reads only HLO dumps (``diff``) or
none (``--help``) does not pay for the log formats' modules.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from recompile_doctor.parsers.logs import (
        LOG_FORMATS,
        PLAIN_ENV,
        POPLAR,
        SNIFF_LINES,
        SNIFF_MAX_LINES,
        UNKNOWN_FORMAT,
        ParseCounter,
        detect_format,
        format_names,
        get_format,
        how_to_log,
        parse_log,
        records,
    )
    from recompile_doctor.parsers.logs import (
        _scan_literals as _scan_literals,
    )

__all__ = [
    "LOG_FORMATS",
    "PLAIN_ENV",
    "POPLAR",
    "SNIFF_LINES",
    "SNIFF_MAX_LINES",
    "UNKNOWN_FORMAT",
    "ParseCounter",
    "detect_format",
    "format_names",
    "get_format",
    "how_to_log",
    "parse_log",
    "records",
]


#: what is loaded from parsers.logs on first use: the public names and one the tests read
_FROM_LOGS = frozenset([*__all__, "_scan_literals"])


def __getattr__(name: str) -> Any:
    if name in _FROM_LOGS:
        from recompile_doctor.parsers import logs

        return getattr(logs, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
