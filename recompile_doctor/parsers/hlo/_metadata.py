"""``metadata={...}`` -> :class:`Metadata`, for both parser paths and lazy access."""

from __future__ import annotations

import re

from recompile_doctor.parsers.hlo._lexer import metadata_fields, unquote
from recompile_doctor.parsers.hlo._shapes import int64
from recompile_doctor.parsers.hlo.model import Metadata

_STR = r'"(?:[^"\\\n]++|\\.)*+"'
#: a metadata block ``{...}``: quoted strings may hold braces, nothing else nests
BLOCK = rf'\{{(?:[^{{}}"\n]++|{_STR})*+\}}'
_block = re.compile(BLOCK).match


def make_metadata(fields: dict[str, str]) -> Metadata:
    line = fields.get("source_line")
    frame = fields.get("stack_frame_id")
    return Metadata(
        fields.get("op_type"),
        fields.get("op_name"),
        fields.get("source_file"),
        int64(line) if line else None,
        int64(frame) if frame else None,
    )


def metadata_token(token: str, start: int = 10) -> Metadata:
    """The metadata of a ``metadata={...}`` token (``start``: after the ``{``)."""
    fields = {k: unquote(v) if v[0] == '"' else v for k, v in metadata_fields(token, start)}
    return make_metadata(fields)


def metadata_at(source: str, offset: int) -> Metadata:
    """The metadata block that opens with the ``{`` at ``source[offset]``."""
    m = _block(source, offset)
    assert m is not None, "the fast path only keeps offsets of well-formed blocks"
    return metadata_token(m.group(), 1)
