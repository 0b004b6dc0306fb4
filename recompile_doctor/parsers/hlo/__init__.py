"""HLO text (all three dialects) -> :class:`HloModule`.

``parse_hlo(text, path)`` and ``parse_hlo_file(path)`` raise
:class:`~recompile_doctor.errors.RecompileDoctorError` with ``path:line:col`` on malformed input.
Files may be gzip-compressed (detected by magic bytes).
"""

from __future__ import annotations

import gc
import gzip
import zlib
from pathlib import Path

from recompile_doctor.errors import RecompileDoctorError
from recompile_doctor.parsers.hlo._parser import Parser
from recompile_doctor.parsers.hlo.model import (
    Computation,
    HloModule,
    Instruction,
    Literal,
    Metadata,
    Shape,
    SourceLocation,
)

__all__ = [
    "Computation",
    "HloModule",
    "Instruction",
    "Literal",
    "Metadata",
    "Shape",
    "SourceLocation",
    "parse_hlo",
    "parse_hlo_file",
    "read_text",
]


def parse_hlo(text: str, path: str = "<string>") -> HloModule:
    """Parse one HLO module printed as text."""
    # The parser allocates many small objects and frees none: the cyclic GC would only rescan
    # them again and again (a third of the time on large modules).
    enabled = gc.isenabled()
    gc.disable()
    try:
        return Parser(text, path).parse()
    finally:
        if enabled:
            gc.enable()


def read_text(path: str | Path) -> str:
    """The text of a file (gzip by magic bytes), or a one-line error naming it."""
    p = str(path)
    try:
        data = Path(p).read_bytes()
    except FileNotFoundError:
        raise RecompileDoctorError("no such file", path=p) from None
    except IsADirectoryError:
        raise RecompileDoctorError("is a directory, expected an HLO text file", path=p) from None
    except OSError as e:
        raise RecompileDoctorError(f"cannot read: {e.strerror or e}", path=p) from None
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as e:
            raise RecompileDoctorError(f"bad gzip data: {e}", path=p) from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise RecompileDoctorError(
            f"not UTF-8 text (byte {e.start}): expected an HLO text file", path=p
        ) from None


def parse_hlo_file(path: str | Path) -> HloModule:
    """Parse an HLO text file (e.g. ``module_0001.jit_f.before_optimizations.txt``)."""
    return parse_hlo(read_text(path), str(path))
