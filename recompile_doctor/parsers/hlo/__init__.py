"""HLO text (all three dialects) -> :class:`HloModule`.

``parse_hlo(text, path)`` and ``parse_hlo_file(path)`` raise
:class:`~recompile_doctor.errors.RecompileDoctorError` with ``path:line:col`` on malformed input.
Files may be gzip-compressed (detected by magic bytes).
"""

from __future__ import annotations

import gzip
import os
import zlib
from pathlib import Path

from recompile_doctor.errors import RecompileDoctorError
from recompile_doctor.gc_pause import gc_paused
from recompile_doctor.parsers.hlo._parser import Parser, Reference
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
    "parse_hlo_file_like",
    "parse_hlo_file_recorded",
    "parse_hlo_files",
    "read_text",
]


#: set (to anything but "0" or "") to parse each module of a pair from scratch
PLAIN_ENV = "RECOMPILE_DOCTOR_PLAIN"


def parse_hlo(text: str, path: str = "<string>") -> HloModule:
    """Parse one HLO module printed as text."""
    return _parse(Parser(text, path))


def _parse(parser: Parser) -> HloModule:
    with gc_paused():
        return parser.parse()


def plain_requested() -> bool:
    """Whether ``$RECOMPILE_DOCTOR_PLAIN`` asks for the plain (from scratch) path."""
    return os.environ.get(PLAIN_ENV, "") not in ("", "0")


def parse_hlo_files(
    a: str | Path, b: str | Path, *, plain: bool | None = None
) -> tuple[HloModule, HloModule]:
    """Parse two compilations of a module (the two sides of a diff).

    B's computations printed exactly as in A, at the same lines, are A's :class:`Computation`
    objects, and B's other lines printed as A's at the same place are A's
    :class:`Instruction` objects: two dumps of one program differ in few lines, which are
    then the only ones parsed twice.  The modules equal those of two :func:`parse_hlo_file`
    calls, which ``plain`` (default: ``$RECOMPILE_DOCTOR_PLAIN``) makes.  The objects so
    shared are never modified by the differ."""
    if plain is None:
        plain = plain_requested()
    if plain:
        return parse_hlo_file(a), parse_hlo_file(b)
    ma, like = parse_hlo_file_recorded(a)
    return ma, parse_hlo_file_like(b, like)


def parse_hlo_file_recorded(path: str | Path) -> tuple[HloModule, Reference]:
    """:func:`parse_hlo_file`, and what :func:`parse_hlo_file_like` takes over from it."""
    parser = Parser(read_text(path), str(path), record=True)
    return _parse(parser), parser.reference()


def parse_hlo_file_like(path: str | Path, like: Reference | None) -> HloModule:
    """:func:`parse_hlo_file`, taking over ``like``'s lines printed the same (see
    :func:`parse_hlo_files`); ``like=None``: from scratch."""
    return _parse(Parser(read_text(path), str(path), like=like))


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
