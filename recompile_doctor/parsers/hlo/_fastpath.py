"""The common instruction line in two regex matches: the fast path of the parser.

Most lines of a dump are plain: ``[ROOT] name = <array shape> opcode(<names>)`` followed by
simple attributes (``dimensions={1}``, ``calls=%f``, ``direction=LT``, quoted strings) and a
``metadata={...}`` block; constants print a number, ``{...}`` or a flat list of numbers.  Such a
line is matched whole and gives exactly the :class:`Instruction` the token-level parser would
give; anything else (tuple shapes, nested literals, nested attribute values, old-dialect operand
shapes, errors) stops the run and goes through the token-level parser in :mod:`._instruction`.

Speed tricks: the patterns use possessive quantifiers (``*+``, ``++``: no backtracking, half the
matching time) and ASCII classes (``\\w`` without Unicode lookups: a name or value with other
letters is left to the token parser); :func:`fast_run` parses a whole run of lines in one call;
the tail of a line (what follows its operands: attributes and the metadata block, most of its
text) repeats line after line, so it is matched and its attributes parsed once per distinct
text; an operand is its definition's string, looked up as it is read (those not defined yet are
checked when the computation ends); the metadata block is not parsed here, only its offset is
kept (see :attr:`Instruction.metadata`).
"""

from __future__ import annotations

import re
import sys
from typing import Final

from recompile_doctor.parsers.hlo._instruction import LITERAL_WORDS
from recompile_doctor.parsers.hlo._intern import (
    CALL_ATTRS,
    KEYS,
    LARGE_LITERAL,
    RESHAPED,
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
#: a plain line up to the ')' that closes its operands ...
_PREFIX: Final = re.compile(
    rf"""{_HEAD}
    ({_SHAPE})[ \t]++
    ([a-z][a-z0-9-]*+)\(
    ({_OPERAND}(?:,{_OPERAND})*+|[ \t]*+|\{{[^{{}}\n]*+\}})\)""",
    re.VERBOSE | re.ASCII,
)
#: ... and the rest of it, its tail: attributes, a metadata block, attributes
_TAIL: Final = re.compile(
    rf"""({_ATTRS})
    (?:,[ \t]*+metadata=({BLOCK}))?
    ({_ATTRS})
    [ \t]*+$""",
    re.VERBOSE | re.ASCII,
)
#: a shape token as _PREFIX takes it (a blank follows in a plain line)
_SHAPE_TOKEN: Final = re.compile(_SHAPE)
_SIGIL: Final = re.compile(r"[ \t]*+(?:ROOT[ \t]+)?%")
_ATTR: Final = re.compile(rf",[ \t]*([A-Za-z_][\w-]*)=({_VALUE})")
_INDEX: Final = re.compile(r"/\*index=\d+\*/")
_NUMBER = r"[-+]?\d[\w.]*+(?:(?<=[eE])[+-]\d++)?"  # the lexer's number token
_NUMBERS: Final = re.compile(rf"\{{[ \t]*+(?:{_NUMBER}[ \t]*+(?:,[ \t]*+{_NUMBER}[ \t]*+)*+)?\}}")
_number = re.compile(_NUMBER).findall
_ELIDED: Final = Literal((), elided=True)
_Attrs = tuple[tuple[tuple[str, str], ...], tuple[str, ...], tuple[tuple[str, str], ...]]
_ATTR_CACHE: Final[dict[str, _Attrs]] = {}
#: (attributes, called computations, attributes without calls, where the metadata block
#: opens in the tail or None)
_Tail = tuple[tuple[tuple[str, str], ...], tuple[str, ...], tuple[tuple[str, str], ...], int | None]
#: a plain tail's text -> what it holds: the tails of a dump repeat (the same metadata and
#: attributes line after line), so each is matched and parsed once
_TAILS: Final[dict[str, _Tail]] = {}
#: shape tokens that are whole ``_SHAPE`` tokens -> their shape (see :func:`_reshaped`)
_RESHAPES: Final[dict[str, Shape]] = {}
_CACHE_LIMIT: Final = 50_000


def _attributes(text: str) -> _Attrs:
    """(attrs, calls, attrs without calls) of the attribute text of a plain line (canonical
    as the token parser)."""
    got = _ATTR_CACHE.get(text)
    if got is not None:
        return got
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
    got = t, tuple(calls), without_calls(t) if calls else t
    if len(_ATTR_CACHE) > _CACHE_LIMIT:
        _ATTR_CACHE.clear()
    _ATTR_CACHE[text] = got
    return got


def _tail(text: str) -> _Tail | None:
    """What the tail ``text`` of a line holds (cached), or None when it is not plain."""
    m = _TAIL.match(text)
    if m is None:
        return None
    attrs1, md, attrs2 = m.groups()
    attrs: _Attrs = ((), (), ())
    if attrs1 or attrs2:
        attrs = _attributes(attrs1 + "\n" + attrs2 if attrs2 else attrs1)
    got = (*attrs, None if md is None else m.start(2))
    if len(_TAILS) > _CACHE_LIMIT:
        _TAILS.clear()
    _TAILS[text] = got
    return got


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


#: the lines of the other module, per line the instruction made of it there (or None), and
#: where the indices of the instructions parsed anew go
Like = tuple[list[str], list[Instruction | None], list[int]]


def fast_run(
    lines: list[str],
    i: int,
    comp: str,
    out: list[Instruction],
    defined: dict[str, str],
    unresolved: list[int],
    like: Like | None = None,
) -> tuple[int, str | None, bool]:
    """Parse the plain lines from ``lines[i]`` on into ``out`` (names into ``defined``: an
    operand is its definition's string; the index in ``out`` of an instruction with an
    operand not defined yet goes to ``unresolved``).

    ``like``: the lines of another module and, per line, the instruction this function made of
    it there (None where it made none): a line printed the same at the same place in the same
    computation is that same instruction (its fields are functions of the line's text, its
    number and the computation's name), so it is taken over instead of parsed again; a line
    printed the same but for its shape is that instruction with another shape (see
    :func:`_reshaped`).  The indices in ``out`` of the instructions parsed anew (not taken
    over) go to the third item of ``like``.

    Returns (index of the first line not parsed, name of the last ROOT, whether a name had a
    ``%`` sigil).  A run stops at a line that is not plain or redefines a name.

    A line is matched in two parts, ``_PREFIX`` (up to the operands' ``)``) and ``_TAIL``
    (the rest): together they are the one pattern of a plain line (each part matches in one
    way only, the prefix ending at the first ``)`` after the opcode's ``(``, or at the ``)``
    after a constant's braces), and the tail's match is cached by its text."""
    match = _PREFIX.match
    intern = sys.intern
    shapes = shape_cache()
    tails = _TAILS
    keys = KEYS
    append, canonical = out.append, defined.__getitem__
    root: str | None = None
    pct = False
    n = len(lines)
    k = len(out)  # (the index in ``out`` of the next instruction)
    ref_lines, ref_at, fresh = like if like is not None else ((), (), None)
    n_ref = len(ref_at)
    while i < n:
        line = lines[i]
        if i < n_ref:
            r = ref_at[i]
            if r is not None and r.computation == comp:
                ref = ref_lines[i]
                if ref != line:
                    r = _reshaped(r, ref, line)
            else:
                r = None
            if r is not None:
                name = r.name
                if name in defined:
                    break
                append(r)
                defined[name] = name
                k += 1
                if r.is_root:
                    root = name
                if not pct and _SIGIL.match(line) is not None:
                    pct = True
                i += 1
                continue
        m = match(line)
        if m is None:
            break
        is_root, sigil, name, shape_tok, opcode, ops = m.groups()
        end = m.end()
        tail = line[end:]
        got = tails.get(tail)
        if got is None:
            got = _tail(tail)
            if got is None:
                break
        if name in defined:
            break
        # one string object per distinct opcode (an operand is its definition's string)
        opcode = intern(opcode)
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
                parts = ops.split(",")
                try:
                    operands = tuple(map(canonical, parts))
                except KeyError:  # an operand printed later (or never): checked at the end
                    operands = tuple(map(intern, parts))
                    unresolved.append(k)
        attrs, calls, plain, md = got
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
                None if md is None else end + md,
                param,
                is_root is not None,
                ikey,
            )
        )
        defined[name] = name
        if fresh is not None:
            fresh.append(k)
        k += 1
        if is_root is not None:
            root = name
        if sigil:
            pct = True
        i += 1
    return i, root, pct


def _reshaped(r: Instruction, ref: str, line: str) -> Instruction | None:
    """The instruction of ``line`` when it is the line ``ref`` (which made ``r``) with only
    its shape printed otherwise (a batch size changed), else None.

    The rest of the line's pattern matches the same text at the same place (possessive
    quantifiers, no back-references), so every group but the shape is ``r``'s and the
    metadata block moved by the change in length; the key follows the shape.

    The shape of ``ref`` (a plain line) is found with ``str.find``: it follows the first
    ``=`` and its blanks, ends at the first ``]`` after it, or at the ``}`` of a layout that
    opens right there.  ``line`` has the same text before it and after it, so its shape is
    what lies between (as long as ``ref``'s and the lines' difference in length), and must
    be a whole shape token (a blank follows it): then it is what the pattern would take."""
    start = ref.find("=") + 1
    while ref[start] in " \t":
        start += 1
    end = ref.find("]", start) + 1
    if ref[end] == "{":
        end = ref.find("}", end) + 1
    stop = end + len(line) - len(ref)
    if stop <= start or line[stop:] != ref[end:] or line[:start] != ref[:start]:
        return None
    meta = r.meta
    if meta is not None and not isinstance(meta, int):
        return None
    shape_tok = line[start:stop]
    shape = _RESHAPES.get(shape_tok)
    if shape is None:
        if _SHAPE_TOKEN.fullmatch(shape_tok) is None:
            return None
        try:
            shape = array_shape(shape_tok)
        except (ShapeError, ValueError):
            return None
        if len(_RESHAPES) > _CACHE_LIMIT:
            _RESHAPES.clear()
        _RESHAPES[shape_tok] = shape
    literal, param = r.literal, r.parameter_number
    if literal is not None and len(literal.values) > LARGE_LITERAL:
        ikey = fresh_key()
    else:  # (r's key stands for its content: the same content with another shape)
        ikey = RESHAPED.get((r.key, shape.sig), -1)
        if ikey < 0:
            plain = without_calls(r.attrs) if r.calls else r.attrs
            if literal is None:
                ikey = KEYS[(r.opcode, shape.sig, param, plain)]
            else:
                ikey = KEYS[(r.opcode, shape.sig, param, plain, literal.values, literal.elided)]
            if len(RESHAPED) > _CACHE_LIMIT:
                RESHAPED.clear()
            RESHAPED[(r.key, shape.sig)] = ikey
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
    _, _, pct = fast_run([line], 0, comp, out, {}, [])
    if not out:
        return None
    out[0].line = lineno
    return out[0], pct
