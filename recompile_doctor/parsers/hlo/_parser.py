"""Recursive-descent HLO text parser over the token strings of :mod:`._lexer`.

One instruction is one printed line; a construct left open at the end of a line (a multi-line
header attribute, a wrapped literal) continues on the next lines.  Errors carry the exact line
and column of the offending token and say what was expected.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from itertools import chain
from operator import attrgetter
from typing import Final, TypeVar

from recompile_doctor.errors import RecompileDoctorError
from recompile_doctor.parsers.hlo._fastpath import fast_run
from recompile_doctor.parsers.hlo._instruction import (
    _OPEN,
    Fail,
    InstructionParser,
    More,
    got,
    is_name,
    skip_value,
    starts_statement,
)
from recompile_doctor.parsers.hlo._lexer import column_of, tokenize, unquote
from recompile_doctor.parsers.hlo._shapes import int64
from recompile_doctor.parsers.hlo.model import Computation, HloModule, Instruction, SourceLocation

_SECTIONS: Final = frozenset(("FileNames", "FunctionNames", "FileLocations", "StackFrames"))
#: a construct may wrap over this many lines at most (a bound on memory, not on time: a
#: continuation is found in linear time)
_MAX_CONTINUATION: Final = 1_000_000
_R = TypeVar("_R")


@dataclass(slots=True)
class Reference:
    """What parsing one module leaves for parsing another like it (see :func:`Parser.parse`):
    its lines, per line the instruction the fast path made of it (else None), per first
    line of a computation: the computation, its last line and the dialect features seen in it,
    and per computation name: the computation and the names it defines.
    """

    lines: list[str]
    at: list[Instruction | None]
    computations: dict[int, tuple[Computation, int, bool, bool]]
    by_name: dict[str, Computation]
    defined: dict[str, dict[str, str]]


class Parser(InstructionParser):
    """``like``: the :class:`Reference` of another module (the other side of a diff).  A
    computation printed the same, at the same lines, is that module's :class:`Computation`
    (the same object), and within others a line printed the same at the same place is the
    same :class:`Instruction`: both are functions of the text, its line numbers and the
    computation's name, so the result equals a parse from scratch.  A line printed the same
    but for its shape is that instruction with its own shape (``_fastpath._reshaped``), and
    a computation whose instructions are the reference's but for shapes and literals gets
    it as :attr:`Computation.twin`.  ``record``: keep what :meth:`reference` needs."""

    def __init__(
        self, text: str, path: str, like: Reference | None = None, record: bool = False
    ) -> None:
        super().__init__()
        self.lines = text.split("\n")
        self.path = path
        self.old_dialect = False
        self.percent = False
        self.like = like
        self.made: list[Instruction] | None = [] if record else None
        self.spans: dict[int, tuple[Computation, int, bool, bool]] = {}
        self.defined: dict[str, dict[str, str]] = {}  # (with ``record``: per computation)

    def reference(self) -> Reference:
        """After :meth:`parse` with ``record``: what parsing a module like this one reuses."""
        at: list[Instruction | None] = [None] * len(self.lines)
        for ins in self.made or ():
            at[ins.line - 1] = ins
        by_name = {c.name: c for c, _, _, _ in self.spans.values()}
        return Reference(self.lines, at, self.spans, by_name, self.defined)

    # -- errors -----------------------------------------------------------------------------
    def _error(self, first: int, last: int, fail: Fail) -> RecompileDoctorError:
        text = "\n".join(self.lines[first : last + 1])
        nl, col = column_of(text, fail.index)
        return RecompileDoctorError(fail.message, path=self.path, line=first + nl + 1, col=col)

    # -- module -----------------------------------------------------------------------------
    def parse(self) -> HloModule:
        lines = self.lines
        n = len(lines)
        i = 0
        name: str | None = None
        attrs: dict[str, str] = {}
        sections: dict[str, dict[int, object]] = {}
        section: str | None = None
        comps: dict[str, Computation] = {}
        entry: str | None = None
        like = self.like
        while i < n:
            start, percent, old = i, self.percent, self.old_dialect
            # (a line A parsed as a computation's first is one here too once the module
            # header is read: the section branches below never take such a line)
            same = self._same_computation(i) if like is not None and name is not None else None
            if same is not None:
                comp, i = same
            else:
                line = lines[i]
                if not line or line.isspace():  # (no tokens)
                    i += 1
                    continue
                short = _header_tokens(line)
                toks = short or tokenize(line)
                if not toks:
                    i += 1
                    continue
                t0 = toks[0]
                if name is None:
                    if t0 != "HloModule":
                        raise self._error(i, i, Fail(f"expected 'HloModule', {got(toks, 0)}", 0))
                    (name, attrs), i = self._with_continuation(
                        i, self._header, None if short else toks
                    )
                    continue
                if t0 in _SECTIONS and len(toks) == 1 and not comps:
                    section = t0
                    sections[t0] = {}
                    i += 1
                    continue
                if section is not None and t0.isdigit() and not comps:
                    (key, value), i = self._with_continuation(
                        i, self._frame_entry, None if short else toks
                    )
                    sections[section][key] = value
                    continue
                self.percent = self.old_dialect = False
                comp, i = self._computation(i, toks)
            section = None
            if self.made is not None:
                self.spans[start] = (comp, i - 1, self.percent, self.old_dialect)
            self.percent |= percent
            self.old_dialect |= old
            if comp.name in comps:
                raise RecompileDoctorError(
                    f"computation '{comp.name}' is defined twice", self.path, comp.line
                )
            comps[comp.name] = comp
            if comp.is_entry:
                entry = comp.name
        if name is None:
            raise RecompileDoctorError("expected 'HloModule', got end of file", self.path, 1, 1)
        if not comps:
            raise RecompileDoctorError("expected a computation, got end of file", self.path, n)
        if entry is None:
            entry = next(reversed(comps))
        self._check_calls(comps)
        dialect = "old" if self.old_dialect else ("long" if self.percent else "short")
        return HloModule(name, self.path, attrs, comps, entry, dialect, _stack_frames(sections))

    def _same_computation(self, i: int) -> tuple[Computation, int] | None:
        """The reference's computation printed at the same lines as the one from line ``i``
        on (and the line after it), or None."""
        like = self.like
        if like is None:
            return None
        known = like.computations.get(i)
        if known is None or like.lines[i] != self.lines[i]:
            return None
        comp, last, percent, old = known
        if like.lines[i : last + 1] != self.lines[i : last + 1]:
            return None
        self.percent, self.old_dialect = percent, old
        return comp, last + 1

    def _close(
        self, comp: Computation, defined: dict[str, str], unresolved: list[int], fresh: list[int]
    ) -> None:
        """At a computation's ``}``: its operands checked, and (with ``record``) the names it
        defines kept for a module parsed like this one."""
        self._check_operands(comp, defined, unresolved, fresh)
        if self.made is not None:
            self.defined[comp.name] = defined

    def _check_operands(
        self, comp: Computation, defined: dict[str, str], unresolved: list[int], fresh: list[int]
    ) -> None:
        """Raise on the first operand of ``comp`` (in printed order) that it does not define.

        Only the instructions parsed with an operand not defined yet (``unresolved``, in
        order) can have one, and those taken over from the reference's computation of the
        same name (all but ``fresh``) when ``comp`` does not define every name that one
        does (it defines their operands)."""
        instrs = comp.instructions
        if self.like is not None and len(fresh) < len(instrs):
            if not fresh and self._all_taken_over(comp):
                return
            theirs = self.like.defined.get(comp.name)
            if theirs is None or not defined.keys() >= theirs.keys():
                _check_operands(comp, instrs, defined, self.path)
                return
        if unresolved:
            _check_operands(comp, [instrs[k] for k in unresolved], defined, self.path)

    def _all_taken_over(self, comp: Computation) -> bool:
        """Whether ``comp``, none of whose instructions was parsed anew, has as many as the
        reference's computation of the same name: then they are that computation's (each
        taken over from one of its lines, or that line's instruction with another shape:
        the same names and operands), whose operands are all defined."""
        other = self.like.by_name.get(comp.name) if self.like is not None else None
        return other is not None and len(other.instructions) == len(comp.instructions)

    def _twin(self, comp: Computation, fresh: list[int]) -> None:
        """Set ``comp.twin`` to the reference's computation of the same name if their
        instructions are the same position by position but for shapes and literals.

        The instructions taken over are the reference's of the same line (the same, or the
        same but for the shape): with the same line numbers at every position they are at
        the same positions; the ones parsed anew (``fresh``) are compared field by field."""
        assert self.like is not None
        other = self.like.by_name.get(comp.name)
        a, b = (other.instructions, comp.instructions) if other is not None else ([], [])
        if other is None or len(a) != len(b) or other.root != comp.root:
            return
        if len(fresh) > len(b) // 4 or list(map(_LINE_OF, a)) != list(map(_LINE_OF, b)):
            return
        for k in fresh:
            x, y = a[k], b[k]
            if (
                x.name != y.name
                or x.opcode != y.opcode
                or x.operands != y.operands
                or x.calls != y.calls
                or x.attrs != y.attrs
                or x.parameter_number != y.parameter_number
                or x.is_root != y.is_root
            ):
                return
        comp.twin = other

    def _extend(
        self, i: int, j: int, depth: int, stop: Callable[[str], bool] | None
    ) -> tuple[int, int] | None:
        """From the construct that starts on line ``i`` and so far ends on line ``j`` with
        ``depth`` brackets open: the next line where they are all closed (at least one line
        further) and the depth there, or ``None`` when the input ends first or ``stop`` says
        a line cannot continue it.  Each line is tokenized once: linear in the lines."""
        n = len(self.lines)
        while True:
            j += 1
            if j >= n or j - i > _MAX_CONTINUATION or (stop is not None and stop(self.lines[j])):
                return None
            depth += _depth(tokenize(self.lines[j]))
            if depth <= 0:
                return j, depth

    def _continued(
        self,
        i: int,
        toks: list[str],
        fn: Callable[[list[str], int], _R],
        stop: Callable[[str], bool] | None,
        eof: str,
    ) -> tuple[_R, int]:
        """``fn`` over the tokens of line ``i`` (``toks``) and of the lines its open brackets
        wrap onto; the result and the last line used.  ``fn`` is tried again only where the
        brackets close, on the whole span tokenized once."""
        j = i
        depth = _depth(toks)
        while True:
            try:
                return fn(toks, j), j
            except More:
                nxt = self._extend(i, j, depth, stop)
                if nxt is None:
                    fail = Fail(eof, len(toks))
                    raise self._error(i, j, fail) from None
                j, depth = nxt
                toks = tokenize("\n".join(self.lines[i : j + 1]))
            except Fail as f:
                raise self._error(i, j, f) from None

    def _with_continuation(
        self, i: int, fn: Callable[[list[str]], _R], toks: list[str] | None
    ) -> tuple[_R, int]:
        """``fn`` over line ``i`` and the lines its open brackets wrap onto; the result and
        the next line.  ``toks``: the line's tokens, if it was tokenized whole (not read
        short by :func:`_header_tokens`: then None, and it is tokenized here)."""
        if toks is None:
            toks = tokenize(self.lines[i])
        eof = "unexpected end of input inside an open bracket"
        out, j = self._continued(i, toks, lambda t, _j: fn(t), None, eof)
        return out, j + 1

    def _header(self, toks: list[str]) -> tuple[str, dict[str, str]]:
        if len(toks) < 2 or not is_name(toks[1]):
            raise Fail(f"expected a module name, {got(toks, 1)}", 1)
        attrs: dict[str, str] = {}
        k = 2
        while k < len(toks):
            if toks[k] != ",":
                raise Fail(f"expected ',' before a module attribute, {got(toks, k)}", k)
            k += 1
            if k >= len(toks) or toks[k][-1] != "=":
                raise Fail(f"expected a module attribute name, {got(toks, k)}", k)
            key = toks[k][:-1]
            start = k + 1
            k = skip_value(toks, start)
            attrs[key] = "".join(toks[start:k])
        return toks[1].lstrip("%"), attrs

    def _frame_entry(self, toks: list[str]) -> tuple[int, object]:
        key = int64(toks[0])
        if key is None:
            raise Fail(f"expected an index (an int64), {got(toks, 0)}", 0)
        if len(toks) < 2:
            raise Fail(f"expected a string or '{{' after the index, {got(toks, 1)}", 1)
        t = toks[1]
        if t[0] in "\"'":
            return key, unquote(t)
        if t != "{":
            raise Fail(f"expected a string or '{{' after the index, {got(toks, 1)}", 1)
        fields: dict[str, int] = {}
        k = 2
        while True:
            if k >= len(toks):
                raise More()
            if toks[k] == "}":
                break
            if toks[k][-1] != "=" or k + 1 >= len(toks):
                raise Fail(f"expected 'field=value', {got(toks, k)}", k)
            v = int64(toks[k + 1].removeprefix("-"))
            if v is None:
                raise Fail(f"expected an integer, {got(toks, k + 1)}", k + 1)
            fields[toks[k][:-1]] = -v if toks[k + 1].startswith("-") else v
            k += 2
        return key, fields

    # -- computations -----------------------------------------------------------------------
    def _computation(self, i: int, toks: list[str]) -> tuple[Computation, int]:
        """The computation whose first line, ``i``, has the tokens ``toks``."""
        k = 0
        is_entry = toks[0] == "ENTRY"
        if is_entry:
            k = 1
        if k >= len(toks) or not is_name(toks[k]) or toks[-1] != "{":
            what = "a computation name" if k >= len(toks) or not is_name(toks[k]) else "'{'"
            idx = k if what != "'{'" else len(toks) - 1
            raise self._error(i, i, Fail(f"expected {what}, {got(toks, idx)}", idx))
        if toks[k][0] == "%":
            self.percent = True
        comp = Computation(toks[k].lstrip("%"), is_entry, i + 1)
        defined: dict[str, str] = {}  # name -> its string (its operands' too)
        unresolved: list[int] = []  # (indices of those with an operand not defined yet)
        i += 1
        n = len(self.lines)
        lines = self.lines
        name = comp.name
        instrs = comp.instructions
        fresh: list[int] = []  # (indices of the instructions not taken over from self.like)
        like = (self.like.lines, self.like.at, fresh) if self.like is not None else None
        made = self.made
        while i < n:
            n0 = len(instrs)
            i, root, pct = fast_run(lines, i, name, instrs, defined, unresolved, like)
            if made is not None:
                made.extend(instrs[n0:])
            if root is not None:
                comp.root = root
            self.percent |= pct
            if i >= n:
                break
            line = lines[i]
            if line.lstrip()[:1] == "}":  # (the '}' token: no other token starts with it)
                self._close(comp, defined, unresolved, fresh)
                if like is not None:
                    self._twin(comp, fresh)
                return comp, i + 1
            toks = tokenize(line)
            if not toks:
                i += 1
                continue
            if toks[0] == "}":
                self._close(comp, defined, unresolved, fresh)
                return comp, i + 1
            ins, j = self._slow_instruction(toks, name, i, line)
            if ins.name in defined:
                raise RecompileDoctorError(
                    f"instruction '{ins.name}' is defined twice in '{name}'", self.path, i + 1
                )
            defined[ins.name] = ins.name
            if ins.operands:
                unresolved.append(len(instrs))
            if like is not None:
                fresh.append(len(instrs))
            instrs.append(ins)
            if ins.is_root:
                comp.root = ins.name
            i = j + 1
        raise RecompileDoctorError(
            f"expected '}}' closing computation '{comp.name}', got end of file", self.path, n
        )

    # -- instructions -----------------------------------------------------------------------

    def _slow_instruction(
        self, toks: list[str], comp: str, i: int, line: str
    ) -> tuple[Instruction, int]:
        """The token-level path; an open bracket at the end of a line continues on the next."""
        lines = self.lines

        def parse(t: list[str], j: int) -> Instruction:
            text = line if j == i else "\n".join(lines[i : j + 1])
            return self._instruction(t, comp, i + 1, text)

        eof = "unexpected end of line inside an open bracket"
        return self._continued(i, toks, parse, starts_statement, eof)

    def _check_calls(self, comps: dict[str, Computation]) -> None:
        for c in comps.values():
            for ins in c.instructions:
                for callee in ins.calls:
                    if callee not in comps:
                        raise RecompileDoctorError(
                            f"instruction '{ins.name}' calls unknown computation '{callee}'",
                            self.path,
                            ins.line,
                        )


#: a computation's first line whose tokens the lexer would end with '{' and start with
#: ['ENTRY'], name: no quotes, no comments but ``/*index=N*/``, no braces but closed layouts
#: ``{1,0}`` and the last (a name followed by a blank is one token: see ``_lexer._TOKEN``)
_PLAIN_HEADER: Final = re.compile(
    r"""[ \t]*+(?:(ENTRY)[ \t]++)?(%?[A-Za-z_][\w.-]*+)(?=[ \t])
    [^"'/{}\n]*+(?:(?:/\*index=\d++\*/|\{[^{}"'/\n]*+\})[^"'/{}\n]*+)*+
    \{[ \t]*+$""",
    re.VERBOSE,
)


def _header_tokens(line: str) -> list[str] | None:
    """The tokens of a plain computation's first line that the parser reads (the first
    one or two and the last), else None."""
    m = _PLAIN_HEADER.match(line)
    if m is None:
        return None
    entry, name = m.groups()
    if entry:
        return ["ENTRY", name, "{"]
    return None if name == "ENTRY" else [name, "{"]  # ('ENTRY ENTRY{': the lexer's 2nd token)


def _depth(toks: list[str]) -> int:
    """Brackets opened minus brackets closed."""
    get = _OPEN.get
    return sum(get(t, 0) for t in toks)


def _check_operands(
    comp: Computation, instrs: list[Instruction], defined: dict[str, str], path: str
) -> None:
    """Raise on the first operand of ``instrs`` (of ``comp``) not in ``defined``."""
    if defined.keys() >= set(chain.from_iterable(map(_OPERANDS, instrs))):
        return  # (C iterators; the loop below names the first operand not defined)
    for ins in instrs:
        for op in ins.operands:
            if op not in defined:
                col = ins.text.find(op) + 1 or None
                raise RecompileDoctorError(
                    f"operand '{op}' of '{ins.name}' is not defined in '{comp.name}'",
                    path,
                    ins.line,
                    col,
                )


_OPERANDS: Final = attrgetter("operands")
_LINE_OF: Final = attrgetter("line")


def _stack_frames(sections: dict[str, dict[int, object]]) -> dict[int, SourceLocation]:
    files = sections.get("FileNames", {})
    funcs = sections.get("FunctionNames", {})
    locs = sections.get("FileLocations", {})
    out: dict[int, SourceLocation] = {}
    for fid, frame in sections.get("StackFrames", {}).items():
        if not isinstance(frame, dict):
            continue
        loc = locs.get(int(frame.get("file_location_id", 0)))
        if not isinstance(loc, dict):
            continue
        out[fid] = SourceLocation(
            str(files.get(int(loc.get("file_name_id", 0)), "")),
            str(funcs.get(int(loc.get("function_name_id", 0)), "")),
            int(loc.get("line", 0)),
        )
    return out
