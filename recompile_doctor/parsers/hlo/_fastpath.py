"""The common instruction line in one regex match: the fast path of the parser.

Most lines of a dump are plain: ``[ROOT] name = <array shape> opcode(<names>)`` followed by
simple attributes (``dimensions={1}``, ``calls=%f``, ``direction=LT``, quoted strings) and a
``metadata={...}`` block.  Such a line is matched whole (one C call) and gives exactly the
:class:`Instruction` the token-level parser would give; anything else (tuple shapes, literals
in braces, nested attribute values, old-dialect operand shapes, errors) returns None and goes
through the token-level parser in :mod:`._instruction`.
"""

from __future__ import annotations

import re

from recompile_doctor.parsers.hlo._instruction import (
    CALL_ATTRS,
    LITERAL_WORDS,
    make_metadata,
)
from recompile_doctor.parsers.hlo._lexer import metadata_fields, unquote
from recompile_doctor.parsers.hlo._shapes import ShapeError, array_shape
from recompile_doctor.parsers.hlo.model import Instruction, Literal, Metadata

_STR = r'"(?:[^"\\\n]|\\.)*"'
_VALUE = rf"(?:\{{[^{{}}\"\n]*\}}|{_STR}|%?[\w.-]+)"
_LINE = re.compile(
    rf"""[ \t]*(ROOT[ \t]+)?(%?)([A-Za-z_][\w.-]*)[ \t]*=[ \t]*
    ([a-z][a-z0-9]*\[[^\]\n]*\](?:\{{[^{{}}\n]*\}})?)[ \t]+
    ([a-z][a-z0-9-]*)\(
    ((?:[ \t]*(?:/\*index=\d+\*/)?%?[\w.-]+[ \t]*,)*[ \t]*(?:/\*index=\d+\*/)?%?[\w.-]*[ \t]*)\)
    ((?:,[ \t]*[A-Za-z_][\w-]*={_VALUE})*)
    (?:,[ \t]*metadata=(\{{(?:[^{{}}"\n]|{_STR})*\}}))?
    ((?:,[ \t]*[A-Za-z_][\w-]*={_VALUE})*)
    [ \t]*$""",
    re.VERBOSE,
)
_ATTR = re.compile(rf",[ \t]*([A-Za-z_][\w-]*)=({_VALUE})")
_INDEX = re.compile(r"/\*index=\d+\*/")
_match = _LINE.match
_MD_CACHE: dict[str, Metadata] = {}


def fast_instruction(line: str, comp: str, lineno: int) -> tuple[Instruction, bool] | None:
    """(instruction, had a ``%`` sigil) for a plain line, else None (use the token parser)."""
    if not line or line[-1] == "{" or line.lstrip()[:1] == "}":
        return None
    m = _match(line)
    if m is None:
        return None
    root, pct, name, shape_tok, opcode, ops, attrs1, md, attrs2 = m.groups()
    try:
        shape = array_shape(shape_tok)
    except (ShapeError, ValueError):
        return None
    literal: Literal | None = None
    param: int | None = None
    operands: tuple[str, ...] = ()
    if "/*" in ops:
        ops = _INDEX.sub("", ops)
    ops = ops.strip()
    if opcode == "constant":
        if not ops or not (ops[0] in "0123456789-+" or ops in LITERAL_WORDS) or "," in ops:
            return None
        literal = Literal((ops,))
    elif opcode == "parameter":
        if not ops.isdigit():
            return None
        param = int(ops)
    elif ops:
        # names only (the pattern guarantees it); a bad name fails the operand check later
        operands = tuple(ops.replace("%", "").replace(" ", "").replace("\t", "").split(","))
    attrs: list[tuple[str, str]] = []
    calls: list[str] = []
    for text in (attrs1, attrs2):
        if not text:
            continue
        for key, value in _ATTR.findall(text):
            if value[0] == "{":
                value = value.replace(" ", "").replace("\t", "")
            if key in CALL_ATTRS:
                value = value.replace("%", "")
                calls.extend(v for v in value.strip("{}").split(",") if v)
            attrs.append((key, value))
    metadata: Metadata | None = None
    if md:
        metadata = _MD_CACHE.get(md)
        if metadata is None:
            fields = {k: unquote(v) if v[0] == '"' else v for k, v in metadata_fields(md, 1)}
            metadata = make_metadata(fields)
            if len(_MD_CACHE) > 50_000:
                _MD_CACHE.clear()
            _MD_CACHE[md] = metadata
    ins = Instruction(
        name,
        opcode,
        shape,
        operands,
        tuple(attrs),
        tuple(calls),
        comp,
        lineno,
        line,
        literal,
        metadata,
        param,
        root is not None,
    )
    return ins, bool(pct)
