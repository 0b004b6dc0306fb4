"""The HLO tokenizer: a port of ``hlo_lexer.cc``'s rules as one compiled master pattern.

A line is split into token *strings* by a single ``findall`` (C speed); the parser classifies a
token by its first and last characters.  For speed, two constructs that make up most of a dump's
bytes are single tokens: a whole ``metadata={...}`` block (fields read by :func:`metadata_fields`)
and a plain operand list ``(%a, %b)``; anything less plain falls back to fine-grained tokens.  Comments (``/*index=5*/``, ``// ...``) and whitespace
are skipped.  Array shapes with their layout (``f32[8,<=4]{1,0:T(8,128)}``) are one token, as are
quoted strings with escapes, ``attr=`` names, ``->``, ``<=`` and ``...``.  Anything the rules do
not know becomes a one-character token so the parser can name it in an error.

Positions are only needed for errors: :func:`column_of` re-scans a line to find a token's column.
"""

from __future__ import annotations

import re
from typing import Final

_SKIP = r"\s*"
_TOKEN = r"""(
    "(?:[^"\\]|\\.)*"                              # double-quoted string (CEscaped)
  | metadata=\{(?:[^{}"]|"(?:[^"\\]|\\.)*")*\}        # a whole metadata={...} block
  | nan\(0x[0-9a-fA-F]+\)                          # NaN with payload
  | %?[A-Za-z_][\w.-]*                             # identifier / %name / keyword, then:
      (?:=(?!=)                                    #   attribute name 'attr='
      | \[[^\]\n]*\](?:\{[^{}\n]*\})?               #   array shape with layout 'f32[8]{0}'
      | >[0-9bf?]{2,} )?                           #   dim_labels 'b01f_01io->b01f'
  | \((?:\s*(?:/\*index=\d+\*/)?%?[A-Za-z_][\w.-]*\s*,)*    # a plain operand list
      \s*(?:/\*index=\d+\*/)?%?[A-Za-z_][\w.-]*\s*\)
  | [(){},=\[\]:]                                   # punctuation
  | [-+]?\d[\w.]*(?:(?<=[eE])[+-]\d+)?              # number, 3x3, 1_1x0_0, 0x1F
  | -(?:nan|inf)(?:\(0x[0-9a-fA-F]+\))?             # negative special floats
  | '(?:[^'\\]|\\.)*'                              # single-quoted string
  | \.\.\. | -> | <=
  | /\*.*?\*/ | //.*                               # comments (dropped after the scan)
  | \S                                             # anything else, one character
)"""

_MASTER: Final = re.compile(_SKIP + _TOKEN, re.VERBOSE)
_findall = _MASTER.findall


def _is_comment(t: str) -> bool:
    return t[:2] == "/*" or t[:2] == "//"


def tokenize(line: str) -> list[str]:
    """The tokens of one line (or several lines joined with newlines), comments dropped."""
    toks: list[str] = _findall(line)
    if "/*" in line or "//" in line:
        toks = [t for t in toks if t[:2] != "/*" and t[:2] != "//"]  # (_is_comment, inline)
    return toks


def column_of(text: str, index: int) -> tuple[int, int]:
    """0-based (line offset, 1-based column) of token ``index`` in ``text``; end if beyond."""
    pos = len(text.rstrip("\n"))
    k = 0
    for m in _MASTER.finditer(text):
        if _is_comment(m.group(1)):
            continue
        if k == index:
            pos = m.start(1)
            break
        k += 1
    before = text[:pos]
    nl = before.count("\n")
    col = pos - (before.rfind("\n") + 1) + 1
    return nl, col


_MD_FIELD: Final = re.compile(r'([A-Za-z_]\w*)=("(?:[^"\\]|\\.)*"|\{[^{}]*\}|[^\s}]+)')


def metadata_fields(token: str, start: int = 10) -> list[tuple[str, str]]:
    """``(key, raw value)`` pairs of a ``metadata={...}`` token (``start``: after the ``{``)."""
    found: list[tuple[str, str]] = _MD_FIELD.findall(token, start)
    return found


_UNESCAPES: Final = {
    "n": "\n",
    "t": "\t",
    "r": "\r",
    '"': '"',
    "'": "'",
    "\\": "\\",
    "?": "?",
    "a": "\a",
    "b": "\b",
    "f": "\f",
    "v": "\v",
}
_ESCAPE: Final = re.compile(r"\\(x[0-9a-fA-F]{1,2}|[0-7]{1,3}|.)", re.S)


def _unescape_one(m: re.Match[str]) -> str:
    s = m.group(1)
    if s in _UNESCAPES:
        return _UNESCAPES[s]
    if s[0] == "x" and len(s) > 1:
        return chr(int(s[1:], 16))
    if s[0].isdigit():
        return chr(int(s, 8))
    return s


def unquote(tok: str) -> str:
    """The value of a quoted string token, CUnescaped."""
    body = tok[1:-1]
    if "\\" not in body:
        return body
    return _ESCAPE.sub(_unescape_one, body)
