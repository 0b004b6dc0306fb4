"""A log line's message without the logger's prefix, and printable text for a terminal."""

from __future__ import annotations

import textwrap

from recompile_doctor.parsers._prefixes import split_prefix
from recompile_doctor.parsers._pylog import split_pylog

__all__ = ["clip", "log_message", "printable", "wrap"]


def printable(text: str) -> str:
    """``text`` with every control or unprintable character shown as ``·``."""
    return "".join(ch if ch.isprintable() else "·" for ch in text)


def log_message(line: str) -> str:
    """The message of a log line: the time, level and source file of the logger's prefix
    (TensorFlow, absl/glog, Python logging, Poplar) dropped.  A line without a known prefix
    is all message."""
    text = line.strip()
    msg = split_pylog(text).message
    if msg == text:
        _prefix, msg, _glue = split_prefix(text)
    return msg.strip() or text


def clip(text: str, width: int) -> str:
    """Printable, one line, at most ``width`` characters (``…`` marks a cut)."""
    clean = printable(text)
    return clean if len(clean) <= width else clean[: max(width - 1, 1)] + "…"


def wrap(text: str, width: int, indent: str, max_lines: int = 6) -> list[str]:
    """``text`` wrapped to ``width`` columns, continuation lines indented by ``indent``; at
    most ``max_lines`` lines, the last one ending in ``…`` when the text goes on."""
    room = max(width - len(indent), 20)
    lines = textwrap.wrap(printable(text), room, break_long_words=True, break_on_hyphens=False) or [
        ""
    ]
    if len(lines) > max_lines:
        lines = lines[:max_lines]
        lines[-1] = clip(lines[-1], room - 1) + "…" if len(lines[-1]) >= room else lines[-1] + " …"
    return lines
