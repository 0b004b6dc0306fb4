"""One HLO instruction from its tokens: the token-level (slow, exact) path of the parser.

Errors are :class:`Fail` with the index of the offending token; :class:`More` means the tokens
ran out inside an open bracket, so the instruction continues on the next line.
"""

from __future__ import annotations

import re
from typing import Final

from recompile_doctor.parsers.hlo._intern import CALL_ATTRS, key_of
from recompile_doctor.parsers.hlo._lexer import tokenize, unquote
from recompile_doctor.parsers.hlo._metadata import make_metadata, metadata_token
from recompile_doctor.parsers.hlo._shapes import (
    ShapeError,
    array_shape,
    clip,
    int64,
    tuple_shape,
)
from recompile_doctor.parsers.hlo.model import Instruction, Literal, Metadata, Shape

_SECTIONS = frozenset(("FileNames", "FunctionNames", "FileLocations", "StackFrames"))
_OPEN: Final[dict[str, int]] = {"(": 1, "{": 1, "[": 1, ")": -1, "}": -1, "]": -1}
LITERAL_WORDS: Final = frozenset(("true", "false", "nan", "-nan", "inf", "-inf", "token"))
_INDEX_COMMENT: Final = re.compile(r"/\*.*?\*/")


class Fail(Exception):
    def __init__(self, message: str, index: int) -> None:
        super().__init__(message)
        self.message = message
        self.index = index


class More(Exception):
    """The tokens ran out inside an open construct: the construct continues on the next line."""


def is_shape(t: str) -> bool:
    return t[-1] == "]" or (t[-1] == "}" and len(t) > 1 and "[" in t)


def is_name(t: str) -> bool:
    c = t[0]
    return (c.isalpha() or c == "_" or c == "%") and t[-1] != "="


#: tuple shapes nest a few levels in real modules; deeper is a corrupt (or hostile) file
MAX_SHAPE_DEPTH: Final = 100


def got(toks: list[str], k: int) -> str:
    if k >= len(toks):
        return "got end of line"
    if toks[k] in ('"', "'"):
        return "got an unterminated string"
    return f"got '{clip(toks[k])}'"


class InstructionParser:
    """Token-level instruction parsing; remembers which dialect features it has seen."""

    def __init__(self) -> None:
        self.old_dialect = False
        self.percent = False

    def _instruction(self, toks: list[str], comp: str, line: int, text: str) -> Instruction:
        try:
            return self._instruction_unchecked(toks, comp, line, text)
        except IndexError:
            raise More() from None

    def _instruction_unchecked(
        self, toks: list[str], comp: str, line: int, text: str
    ) -> Instruction:
        k = 0
        is_root = toks[0] == "ROOT"
        if is_root:
            k = 1
        name = toks[k]
        if not is_name(name):
            raise Fail(f"expected an instruction name, {got(toks, k)}", k)
        if name[0] == "%":
            self.percent = True
            name = name[1:]
        if toks[k + 1] != "=":
            raise Fail(f"expected '=' after the instruction name, {got(toks, k + 1)}", k + 1)
        shape, k = self._shape(toks, k + 2)
        opcode = toks[k]
        if not is_name(opcode) or opcode[0] == "%":
            raise Fail(f"expected an opcode, {got(toks, k)}", k)
        literal: Literal | None = None
        param: int | None = None
        operands: list[str] = []
        t = toks[k + 1]
        if t[0] == "(" and len(t) > 1:  # a plain operand list, one token
            k += 2
            body = t[1:-1]
            if "/*" in body:
                body = _INDEX_COMMENT.sub("", body)
            for op in body.split(","):
                op = op.strip()
                operands.append(op[1:] if op[0] == "%" else op)
            if opcode == "constant":
                if len(operands) != 1 or operands[0] not in LITERAL_WORDS:
                    raise Fail(f"expected a literal value, got '{body.strip()}'", k - 1)
                literal = Literal((operands[0],))
                operands = []
            elif opcode == "parameter":
                raise Fail(f"expected a parameter number, got '{body.strip()}'", k - 1)
        elif t != "(":
            raise Fail(f"expected '(' after the opcode, {got(toks, k + 1)}", k + 1)
        else:
            k += 2
        if operands or literal is not None:
            pass
        elif opcode == "constant":
            literal, k = self._literal(toks, k)
        elif opcode == "parameter":
            t = toks[k]
            p = int64(t)
            if p is None:
                raise Fail(f"expected a parameter number (an int64), {got(toks, k)}", k)
            param = p
            if toks[k + 1] != ")":
                raise Fail(f"expected ')', {got(toks, k + 1)}", k + 1)
            k += 2
        elif toks[k] == ")":
            k += 1
        else:
            while True:
                t = toks[k]
                if t == "(" or is_shape(t) or (t == "b" and toks[k + 1] == "("):
                    self.old_dialect = True
                    _, k = self._shape(toks, k)
                    t = toks[k]
                if not is_name(t):
                    raise Fail(f"expected an operand name, {got(toks, k)}", k)
                operands.append(t[1:] if t[0] == "%" else t)
                k += 1
                t = toks[k]
                while t == "#":  # compact get-tuple-element form: name#index
                    k += 2
                    t = toks[k]
                if t == ",":
                    k += 1
                elif t == ")":
                    k += 1
                    break
                else:
                    raise Fail(f"expected ',' or ')' in the operand list, {got(toks, k)}", k)
        attrs: list[tuple[str, str]] = []
        calls: list[str] = []
        metadata: Metadata | None = None
        n = len(toks)
        while k < n:
            if toks[k] != ",":
                raise Fail(f"expected ',' before an attribute, {got(toks, k)}", k)
            key = toks[k + 1]
            if key[0] == "m" and key.startswith("metadata={"):
                metadata = metadata_token(key)
                k += 2
                continue
            if key[-1] != "=" or len(key) < 2:
                raise Fail(f"expected an attribute name, {got(toks, k + 1)}", k + 1)
            key = key[:-1]
            k += 2
            if key == "metadata":
                metadata, k = _metadata(toks, k)
                continue
            start = k
            k = skip_value(toks, k)
            if k == start:
                raise Fail(f"expected a value for '{key}', {got(toks, k)}", k)
            if key in CALL_ATTRS:
                names = [t.lstrip("%") if is_name(t) else t for t in toks[start:k]]
                calls.extend(t for t in names if is_name(t))
                value = "".join(names)
            else:
                value = toks[start] if k == start + 1 else "".join(toks[start:k])
            attrs.append((key, value))
        attrs_t = tuple(attrs)
        return Instruction(
            name,
            opcode,
            shape,
            tuple(operands),
            attrs_t,
            tuple(calls),
            comp,
            line,
            text,
            literal,
            metadata,
            param,
            is_root,
            key_of(opcode, shape, param, attrs_t, literal),
        )

    def _shape(self, toks: list[str], k: int, depth: int = 0) -> tuple[Shape, int]:
        t = toks[k]
        if depth > MAX_SHAPE_DEPTH:
            raise Fail(f"shape nested more than {MAX_SHAPE_DEPTH} levels deep", k)
        if t == "(":
            k += 1
            elements: list[Shape] = []
            if toks[k] == ")":
                return tuple_shape(elements), k + 1
            while True:
                s, k = self._shape(toks, k, depth + 1)
                elements.append(s)
                if toks[k] == ",":
                    k += 1
                elif toks[k] == ")":
                    return tuple_shape(elements), k + 1
                else:
                    raise Fail(f"expected ',' or ')' in a tuple shape, {got(toks, k)}", k)
        if is_shape(t):
            try:
                return array_shape(t), k + 1
            except (ShapeError, ValueError) as e:
                raise Fail(f"bad shape '{clip(t)}': {e}", k) from None
        if t == "b" and toks[k + 1] == "(":  # buffer type b(shape)
            s, k = self._shape(toks, k + 2, depth + 1)
            if toks[k] != ")":
                raise Fail(f"expected ')' closing a buffer shape, {got(toks, k)}", k)
            return s, k + 1
        raise Fail(f"expected a shape, {got(toks, k)}", k)

    def _literal(self, toks: list[str], k: int) -> tuple[Literal, int]:
        if is_shape(toks[k]):  # some printers put the shape before the literal
            k += 1
        values: list[str] = []
        depth = 0
        elided = False
        append = values.append
        while True:
            t = toks[k]
            if t == "{" or t == "(":
                depth += 1
            elif t == "}" or t == ")":
                if depth == 0:
                    break
                depth -= 1
            elif t == ",":
                pass
            elif t == "...":
                elided = True
            elif t[0] in "0123456789-+" or t in LITERAL_WORDS or t.startswith("nan("):
                append(t)
            else:
                raise Fail(f"expected a literal value, {got(toks, k)}", k)
            k += 1
        if toks[k] != ")":
            raise Fail(f"expected ')' closing the constant, {got(toks, k)}", k)
        if elided:
            return Literal((), elided=True), k + 1
        return Literal(tuple(values)), k + 1


def starts_statement(line: str) -> bool:
    """A line that cannot continue the previous one: ``}``, ``ROOT ...`` or ``name = ...``."""
    toks = tokenize(line)
    return bool(toks) and (
        toks[0] in ("}", "ROOT") or (len(toks) > 1 and toks[1] == "=" and is_name(toks[0]))
    )


def skip_value(toks: list[str], k: int) -> int:
    """Index after one attribute value: balanced brackets, up to a ',' at depth 0."""
    depth = 0
    n = len(toks)
    get = _OPEN.get
    while k < n:
        t = toks[k]
        d = get(t)
        if d is not None:
            depth += d
            if depth < 0:
                raise Fail(f"unbalanced '{t}'", k)
        elif t == "," and depth == 0:
            return k
        k += 1
    if depth:
        raise More()
    return k


def _metadata(toks: list[str], k: int) -> tuple[Metadata, int]:
    if k >= len(toks):
        raise More()
    if toks[k] != "{":
        raise Fail(f"expected '{{' after metadata=, {got(toks, k)}", k)
    k += 1
    fields: dict[str, str] = {}
    n = len(toks)
    while True:
        if k >= n:
            raise More()
        t = toks[k]
        if t == "}":
            k += 1
            break
        if t[-1] != "=" or len(t) < 2:
            raise Fail(f"expected a metadata field name, {got(toks, k)}", k)
        if k + 1 >= n:
            raise More()
        v = toks[k + 1]
        if v in ('"', "'"):
            raise Fail(f"expected a metadata value, {got(toks, k + 1)}", k + 1)
        if v == "{":
            end = skip_value(toks, k + 1)
            k = end
            continue
        fields[t[:-1]] = unquote(v) if v[0] in "\"'" else v
        k += 2
    return make_metadata(fields), k
