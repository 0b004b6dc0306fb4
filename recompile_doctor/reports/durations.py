"""The one way every renderer says a duration or a size."""

from __future__ import annotations

__all__ = ["fmt_bytes", "fmt_seconds", "fmt_wasted"]


def fmt_seconds(v: float | None) -> str:
    """``610 ms``, ``41.0 s``, ``12 min 5 s``, ``81 h 46 min`` (``–`` when unknown)."""
    if v is None:
        return "–"
    if v < 1:
        return f"{v * 1000:.0f} ms" if v > 0 else "0 s"
    if v < 60:
        return f"{v:.1f} s"
    m, sec = divmod(round(v), 60)
    if m < 60:
        return f"{m} min {sec} s"
    h, m = divmod(m, 60)
    return f"{h} h {m:02d} min"


def fmt_wasted(v: float) -> str:
    """``12 min 5 s wasted``, or ``no time measured`` (never ``0.0 s wasted``)."""
    return f"{fmt_seconds(v)} wasted" if v > 0 else "no time measured"


def fmt_bytes(n: int) -> str:
    """``512 B``, ``1.5 KiB``, ``2.0 GiB``: the one byte-size format of every report."""
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024:
            return f"{n} B" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} TiB"
