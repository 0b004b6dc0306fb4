"""Protocol-buffer text format (``*.textproto``, XLA's ``*.debug_options``) as nested mappings.

XLA dumps what sits beside the HLO in this format: ``module_NNNN.<name>.debug_options`` (the
non-default ``DebugOptions``), ``module_NNNN.<name>/compile_options.textproto`` (the whole
``CompileOptionsProto``) and ``topology.textproto``.  No schema is known here, so the reader is
tolerant: ``field: value`` gives a scalar, ``field { ... }`` (or ``field: { ... }``,
``field < ... >``) a nested mapping, ``field: [a, b]`` a list, and a field given more than
once a list of its values in order.  Scalars are ``int``, ``float``, ``bool``
(``true``/``false``), enum names and strings (``str``, escapes kept as written; adjacent
strings are joined).  ``# comments`` are skipped; extension and ``Any`` names in brackets
(``[type.googleapis.com/xla.Foo]``) are field names.

Bad input raises :class:`~recompile_doctor.errors.RecompileDoctorError` naming
``path:line``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from recompile_doctor.errors import RecompileDoctorError
from recompile_doctor.parsers._lazy_re import lazy_re

Message = dict[str, Any]

_TOKEN = lazy_re(
    r"""
    (?P<ws>[ \t\r\f\v]+)
  | (?P<nl>\n)
  | (?P<comment>\#[^\n]*)
  | (?P<string>"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')
  | (?P<bracket>\[[A-Za-z0-9_./]+\])
  | (?P<word>[-+]?[A-Za-z0-9_.+-]+)
  | (?P<punct>[{}<>\[\]:,;])
    """,
    re.VERBOSE,
)
_INT = lazy_re(r"^[-+]?(?:0[xX][0-9a-fA-F]+|\d+)$")
_FLOAT = lazy_re(r"^[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?[fF]?$")
_IDENT = lazy_re(r"^[A-Za-z_][A-Za-z0-9_.]*$")
_CLOSE = {"{": "}", "<": ">"}


class _Tokens:
    def __init__(self, text: str, path: str) -> None:
        self.path = path
        self.items: list[tuple[str, str, int]] = []  # (kind, text, line)
        line, pos = 1, 0
        while pos < len(text):
            m = _TOKEN.match(text, pos)
            if m is None:
                raise RecompileDoctorError(
                    f"unexpected character {text[pos]!r} in a text proto", path, line
                )
            kind = m.lastgroup or ""
            if kind == "nl":
                line += 1
            elif kind not in ("ws", "comment"):
                self.items.append((kind, m.group(), line))
            pos = m.end()
        self.i = 0
        self.last_line = line

    def peek(self) -> tuple[str, str, int] | None:
        return self.items[self.i] if self.i < len(self.items) else None

    def take(self) -> tuple[str, str, int]:
        tok = self.peek()
        if tok is None:
            raise RecompileDoctorError(
                "unexpected end of the text proto", self.path, self.last_line
            )
        self.i += 1
        return tok

    def error(self, what: str, line: int) -> RecompileDoctorError:
        return RecompileDoctorError(what, self.path, line)


def _scalar(toks: _Tokens) -> Any:
    kind, text, line = toks.take()
    if kind == "string":
        parts = [text[1:-1]]
        while (nxt := toks.peek()) is not None and nxt[0] == "string":
            parts.append(toks.take()[1][1:-1])
        return "".join(parts)
    if kind != "word":
        raise toks.error(f"expected a value, found {text!r}", line)
    if text in ("true", "True", "t"):
        return True
    if text in ("false", "False", "f"):
        return False
    if _INT.match(text):
        return int(text, 16) if "x" in text.lower() else int(text, 10)
    if _FLOAT.match(text):
        return float(text.rstrip("fF"))
    low = text.lstrip("-+").lower()
    if low in ("inf", "infinity", "nan"):
        return float(text)
    if _IDENT.match(text):
        return text  # an enum value
    raise toks.error(f"expected a value, found {text!r}", line)


def _value(toks: _Tokens) -> Any:
    tok = toks.peek()
    if tok is not None and tok[1] in _CLOSE:
        toks.take()
        return _message(toks, _CLOSE[tok[1]], tok[2])
    if tok is not None and tok[1] == "[":
        toks.take()
        out: list[Any] = []
        while True:
            nxt = toks.peek()
            if nxt is not None and nxt[1] == "]":
                toks.take()
                return out
            out.append(_value(toks))
            nxt = toks.peek()
            if nxt is not None and nxt[1] == ",":
                toks.take()
    return _scalar(toks)


def _add(msg: Message, name: str, value: Any) -> None:
    if name not in msg:
        msg[name] = value
    elif isinstance(msg[name], _Repeated):
        msg[name].append(value)
    else:
        msg[name] = _Repeated([msg[name], value])


class _Repeated(list[Any]):
    """A field given more than once (told apart from a ``[a, b]`` list value while reading)."""


def _message(toks: _Tokens, close: str | None, open_line: int) -> Message:
    msg: Message = {}
    while True:
        tok = toks.peek()
        if tok is None:
            if close is None:
                return msg
            raise toks.error(
                f"'{close}' missing for the block opened on line {open_line}", open_line
            )
        kind, text, line = tok
        if close is not None and text == close:
            toks.take()
            return msg
        if text in (",", ";"):
            toks.take()
            continue
        if kind == "bracket" or (kind == "word" and _IDENT.match(text)):
            toks.take()
        else:
            raise toks.error(f"expected a field name, found {text!r}", line)
        nxt = toks.peek()
        if nxt is not None and nxt[1] == ":":
            toks.take()
            value = _value(toks)
        elif nxt is not None and nxt[1] in _CLOSE:
            value = _value(toks)
        else:
            found = "the end of the input" if nxt is None else repr(nxt[1])
            raise toks.error(f"expected ':' or '{{' after field {text!r}, found {found}", line)
        _add(msg, text, value)


def _plain(x: Any) -> Any:
    if isinstance(x, dict):
        return {k: _plain(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_plain(v) for v in x]
    return x


def parse_textproto(text: str, path: str = "-") -> Message:
    """``text`` (protobuf text format) as a nested mapping; ``path`` names it in errors."""
    toks = _Tokens(text, path)
    msg = _message(toks, None, 1)
    result: Message = _plain(msg)
    return result


def read_textproto(path: str | Path) -> Message:
    """The text proto at ``path`` (see :func:`parse_textproto`)."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8", errors="replace")
    except OSError as e:
        raise RecompileDoctorError(f"cannot read: {e.strerror or e}", str(p)) from None
    return parse_textproto(text, str(p))
