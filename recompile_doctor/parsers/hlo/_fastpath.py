"""The common instruction line in one regex match: the fast path of the parser.

Most lines of a dump are plain: ``[ROOT] name = <array shape> opcode(<names>)`` followed by
simple attributes (``dimensions={1}``, ``calls=%f``, ``direction=LT``, quoted strings) and a
``metadata={...}`` block; constants print a number, ``{...}`` or a flat list of numbers.  Such a
line is matched whole (one C call) and gives exactly the :class:`Instruction` the token-level
parser would give; anything else (tuple shapes, nested literals, nested attribute values,
old-dialect operand shapes, errors) stops the run and goes through the token-level parser in
:mod:`._instruction`.

Speed tricks: the pattern uses possessive quantifiers (``*+``, ``++``: no backtracking, half the
matching time); :func:`fast_run` parses a whole run of lines in one call; attribute texts repeat
(``dimensions={1}``), so their parsed tuples are cached and shared; the metadata block is not
parsed here, only its offset is kept (see :attr:`Instruction.metadata`).
"""

from __future__ import annotations

import re
import sys

from recompile_doctor.parsers.hlo._instruction import LITERAL_WORDS
from recompile_doctor.parsers.hlo._intern import (
    CALL_ATTRS,
    KEYS,
    LARGE_LITERAL,
    fresh_key,
    without_calls,
)
from recompile_doctor.parsers.hlo._metadata import BLOCK
from recompile_doctor.parsers.hlo._shapes import ShapeError, array_shape, shape_cache
from recompile_doctor.parsers.hlo.model import Instruction, Literal, Shape

_STR = r'"(?:[^"\\\n]++|\\.)*+"'
_VALUE = rf"(?:\{{[^{{}}\"\n]*+\}}|{_STR}|%?[\w.-]++)"
_OPERAND = r"[ \t]*+(?:/\*index=\d++\*/)?%?[\w.-]++[ \t]*+"
_ATTRS = rf"(?:,[ \t]*+(?!metadata=)[A-Za-z_][\w-]*+={_VALUE})*+"
_HEAD = r"[ \t]*+(ROOT[ \t]+)?(%?)([A-Za-z_][\w.-]*+)[ \t]*+=[ \t]*+"
_SHAPE = r"[a-z][a-z0-9]*+\[[^\]\n]*+\](?:\{[^{}\n]*+\})?"
_LINE = re.compile(
    rf"""{_HEAD}
    ({_SHAPE})[ \t]++
    ([a-z][a-z0-9-]*+)\(
    ({_OPERAND}(?:,{_OPERAND})*+|[ \t]*+|\{{[^{{}}\n]*+\}})\)
    ({_ATTRS})
    (?:,[ \t]*+metadata=({BLOCK}))?
    ({_ATTRS})
    [ \t]*+$""",
    re.VERBOSE,
)
#: where the shape of a line the fast path took starts and ends (group 4 of _LINE)
_SHAPE_SPAN = re.compile(rf"{_HEAD}({_SHAPE})")
#: a shape at a position, as _LINE takes it there (a blank follows in a plain line)
_SHAPE_AT = re.compile(_SHAPE)
_SIGIL = re.compile(r"[ \t]*+(?:ROOT[ \t]+)?%")
_ATTR = re.compile(rf",[ \t]*([A-Za-z_][\w-]*)=({_VALUE})")
_INDEX = re.compile(r"/\*index=\d+\*/")
_NUMBER = r"[-+]?\d[\w.]*+(?:(?<=[eE])[+-]\d++)?"  # the lexer's number token
_NUMBERS = re.compile(rf"\{{[ \t]*+(?:{_NUMBER}[ \t]*+(?:,[ \t]*+{_NUMBER}[ \t]*+)*+)?\}}")
_number = re.compile(_NUMBER).findall
_ELIDED = Literal((), elided=True)
_Attrs = tuple[tuple[tuple[str, str], ...], tuple[str, ...], tuple[tuple[str, str], ...]]
_ATTR_CACHE: dict[str, _Attrs] = {}


def _attributes(text: str) -> _Attrs:
    """(attrs, calls, attrs without calls) of the attribute text of a plain line (canonical
    as the token parser)."""
    attrs: list[tuple[str, str]] = []
    calls: list[str] = []
    for key, value in _ATTR.findall(text):
        if value[0] == "{":
            value = value.replace(" ", "").replace("\t", "")
        if key in CALL_ATTRS:
            value = value.replace("%", "")
            calls.extend(v for v in value.strip("{}").split(",") if v)
        attrs.append((key, value))
    t = tuple(attrs)
    return t, tuple(calls), without_calls(t) if calls else t


def _constant(ops: str) -> Literal | None:
    """The literal of ``constant(ops)`` when it is plain, else None (the token parser)."""
    if ops[:1] == "{":
        if ops == "{...}":
            return _ELIDED
        if _NUMBERS.fullmatch(ops) is None:
            return None
        return Literal(tuple(_number(ops)))
    if "/*" in ops:
        ops = _INDEX.sub("", ops)
    ops = ops.strip()
    if not ops or not (ops[0] in "0123456789-+" or ops in LITERAL_WORDS) or "," in ops:
        return None
    return Literal((ops,))


def fast_run(
    lines: list[str],
    i: int,
    comp: str,
    out: list[Instruction],
    defined: dict[str, int],
    sig: int | None,
    like: tuple[list[str], list[Instruction | None], list[int]] | None = None,
) -> tuple[int, str | None, bool, int | None]:
    """Parse the plain lines from ``lines[i]`` on into ``out`` (names into ``defined``, with
    their index in ``out``), continuing the computation's signature ``sig``.

    ``like``: the lines of another module and, per line, the instruction this function made of
    it there (None where it made none): a line printed the same at the same place in the same
    computation is that same instruction (its fields are functions of the line's text, its
    number and the computation's name), so it is taken over instead of parsed again; a line
    printed the same but for its shape is that instruction with another shape (see
    :func:`_reshaped`).  The indices in ``out`` of the instructions parsed anew (not taken
    over) go to the third item of ``like``.

    Returns (index of the first line not parsed, name of the last ROOT, whether a name had a
    ``%`` sigil, the signature).  A run stops at a line that is not plain or redefines a
    name.  See :attr:`Computation.signature`: it chains each instruction's key and operand
    indices; None once an operand is not defined yet or an instruction calls a computation."""
    match = _LINE.match
    intern = sys.intern
    shapes = shape_cache()
    attr_cache = _ATTR_CACHE
    keys = KEYS
    append, index = out.append, defined.__getitem__
    root: str | None = None
    pct = False
    n = len(lines)
    ref_lines, ref_at, fresh = like if like is not None else ((), (), None)
    n_ref = len(ref_at)
    while i < n:
        line = lines[i]
        if i < n_ref:
            r = ref_at[i]
            if r is not None and r.computation == comp:
                ref = ref_lines[i]
                if ref != line:
                    r = _reshaped(r, ref, line, shapes)
            else:
                r = None
            if r is not None:
                name = r.name
                if name in defined:
                    break
                append(r)
                rops, rkey = r.operands, r.key
                if sig is not None:
                    if r.calls:
                        sig = None
                    elif rops:
                        try:
                            sig = hash((sig, rkey, tuple(map(index, rops))))
                        except KeyError:
                            sig = None
                    else:
                        sig = hash((sig, rkey))
                defined[name] = len(out) - 1
                if r.is_root:
                    root = name
                if not pct and _SIGIL.match(line) is not None:
                    pct = True
                i += 1
                continue
        m = match(line)
        if m is None:
            break
        is_root, sigil, name, shape_tok, opcode, ops, attrs1, md, attrs2 = m.groups()
        if name in defined:
            break
        # one string object per distinct name and opcode: an operand (and the same name in
        # the other module of a diff) shares its definition's string, a fifth of the memory
        name, opcode = intern(name), intern(opcode)
        shape = shapes.get(shape_tok)
        if shape is None:
            try:
                shape = array_shape(shape_tok)
            except (ShapeError, ValueError):
                break
        literal: Literal | None = None
        param: int | None = None
        operands: tuple[str, ...] = ()
        if opcode == "constant":
            literal = _constant(ops)
            # 'name=' (no space) is an attribute-name token for the token parser: an error
            if literal is None or (ops[:1] == "{" and line[m.end(3)] == "="):
                break
        elif opcode == "parameter":
            ops = ops.strip()
            if not ops.isdigit() or len(ops) > 18:  # the token parser says what is wrong
                break
            param = int(ops)
        elif ops:
            if ops[0] == "{":
                break
            ops = ops.replace("%", "").replace(" ", "")
            if "/" in ops or "\t" in ops:
                ops = _INDEX.sub("", ops).replace("\t", "")
            if ops:
                operands = tuple(map(intern, ops.split(",")))
        attrs: tuple[tuple[str, str], ...] = ()
        calls: tuple[str, ...] = ()
        plain = attrs
        if attrs1 or attrs2:
            key = attrs1 + "\n" + attrs2 if attrs2 else attrs1
            got = attr_cache.get(key)
            if got is None:
                got = _attributes(key)
                if len(attr_cache) > 50_000:
                    attr_cache.clear()
                attr_cache[key] = got
            attrs, calls, plain = got
        # _intern.key_of(), inline
        if literal is None:
            ikey = keys[(opcode, shape.sig, param, plain)]
        elif len(literal.values) > LARGE_LITERAL:
            ikey = fresh_key()
        else:
            ikey = keys[(opcode, shape.sig, param, plain, literal.values, literal.elided)]
        append(
            Instruction(
                name,
                opcode,
                shape,
                operands,
                attrs,
                calls,
                comp,
                i + 1,
                line,
                literal,
                None if md is None else m.start(8),
                param,
                is_root is not None,
                ikey,
            )
        )
        if sig is not None:
            if calls:
                sig = None
            elif operands:
                try:
                    sig = hash((sig, ikey, tuple(map(index, operands))))
                except KeyError:  # an operand printed later (or never)
                    sig = None
            else:
                sig = hash((sig, ikey))
        defined[name] = len(out) - 1
        if is_root is not None:
            root = name
        if sigil:
            pct = True
        if fresh is not None:
            fresh.append(len(out) - 1)
        i += 1
    return i, root, pct, sig


def _reshaped(r: Instruction, ref: str, line: str, shapes: dict[str, Shape]) -> Instruction | None:
    """The instruction of ``line`` when it is the line ``ref`` (which made ``r``) with only
    its shape printed otherwise (a batch size changed), else None.

    The rest of ``_LINE`` matches the same text at the same place in the pattern (possessive
    quantifiers, no back-references), so every group but the shape is ``r``'s and the
    metadata block moved by the change in length; the key follows the shape."""
    m = _SHAPE_SPAN.match(ref)
    if m is None:
        return None
    start, end = m.span(4)
    mb = _SHAPE_AT.match(line, start)
    if mb is None:
        return None
    stop = mb.end()
    if ref[end:] != line[stop:] or ref[:start] != line[:start]:
        return None
    meta = r.meta
    if meta is not None and not isinstance(meta, int):
        return None
    shape_tok = line[start:stop]
    shape = shapes.get(shape_tok)
    if shape is None:
        try:
            shape = array_shape(shape_tok)
        except (ShapeError, ValueError):
            return None
    plain = without_calls(r.attrs) if r.calls else r.attrs
    literal, param = r.literal, r.parameter_number
    if literal is None:
        ikey = KEYS[(r.opcode, shape.sig, param, plain)]
    elif len(literal.values) > LARGE_LITERAL:
        ikey = fresh_key()
    else:
        ikey = KEYS[(r.opcode, shape.sig, param, plain, literal.values, literal.elided)]
    return Instruction(
        r.name,
        r.opcode,
        shape,
        r.operands,
        r.attrs,
        r.calls,
        r.computation,
        r.line,
        line,
        literal,
        None if meta is None else meta + stop - end,
        param,
        r.is_root,
        ikey,
    )


def fast_instruction(line: str, comp: str, lineno: int) -> tuple[Instruction, bool] | None:
    """(instruction, had a ``%`` sigil) for one plain line, else None (use the token parser)."""
    out: list[Instruction] = []
    _, _, pct, _ = fast_run([line], 0, comp, out, {}, None)
    if not out:
        return None
    out[0].line = lineno
    return out[0], pct
