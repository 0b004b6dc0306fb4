"""What a Dynamo guard failure says changed, and which earlier cache entry really differs.

Shared by the torch text-log decoder and the structured-trace decoder.  Dynamo lists one
failure (or one group of failures) per earlier cache entry, newest first; the first listed
is often not what changed, so :func:`closest_entry` picks the entry the new call differs
least from.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any, Final, TypeVar

from recompile_doctor.bounded import Kept
from recompile_doctor.events import RecompileReason
from recompile_doctor.model import ValueChange
from recompile_doctor.parsers._lazy_re import lazy_re
from recompile_doctor.slotted import remade_from_fields

_ENTRY_RE: Final = lazy_re(r"^(?P<cid>\d+/\d+): (?P<text>.*)$", re.S)
_SIZE_RE: Final = lazy_re(
    r"tensor '(?P<name>[^']*)' (?P<kind>size|stride) mismatch at index (?P<i>\d+)\. "
    r"expected (?P<old>\S+), actual (?P<new>\S+)"
)
_DTYPE_RE: Final = lazy_re(
    r"tensor '(?P<name>[^']*)' dtype mismatch\. expected (?P<old>\w+), actual (?P<new>\w+)"
)
_RANK_RE: Final = lazy_re(
    r"tensor '(?P<name>[^']*)' rank mismatch\. expected (?P<old>\d+), actual (?P<new>\d+)"
)
_VALUE_RE: Final = lazy_re(r"^(?P<what>[^=!<>#]+?) == (?P<old>[^#]+?)\s*(?:#.*)?$")
_GLOBAL_RE: Final = lazy_re(r"GLOBAL_STATE changed: (?P<what>.*)$|___check_global_state\(\)")
_USER_FRAME_RE: Final = lazy_re(
    r"# (?:\S+/)?(?P<file>[^/\s]+):(?P<line>\d+) in (?P<fn>\w+)\s*(?:\(HINT: [^)]*\)\s*)?$"
)


@dataclass(frozen=True, slots=True)
class GuardFailure:
    """One failing guard of one earlier cache entry."""

    entry: str  # the compile id of the cache entry ("0/1")
    text: str  # the guard text after "N/M: ", first line only

    def __reduce__(self) -> tuple[Any, ...]:
        return remade_from_fields(self)  # (a copy in the compiled build: see there)


def split_entry(reason: str) -> GuardFailure | None:
    """``"0/1: n == 2 ..."`` -> GuardFailure("0/1", "n == 2 ...")."""
    m = _ENTRY_RE.match(reason.strip())
    if m is None:
        return None
    return GuardFailure(m["cid"], m["text"].split("\n", 1)[0].rstrip())


def guard_text(text: str) -> str:
    """The guard without its padded ``# source`` comment."""
    head = text.split("  #", 1)[0] if "  #" in text else text
    return head.strip()


def user_frame(text: str) -> str | None:
    """``capture.py:138`` from a guard's source comment (``# mp/x/capture.py:138 in f``)."""
    m = _USER_FRAME_RE.search(text)
    return f"{m['file']}:{m['line']}" if m is not None else None


def classify(function: str, failure: GuardFailure) -> tuple[str, ValueChange | None]:
    """The rule id a failing guard stands for and what changed (old -> new)."""
    text = failure.text
    m = _SIZE_RE.search(text)
    if m is not None:
        what = f"{m['name']} {m['kind']}[{m['i']}]"
        rule = "batch-size-changed" if m["kind"] == "size" and m["i"] == "0" else "shape-changed"
        return rule, ValueChange(function, what, m["old"], m["new"])
    m = _DTYPE_RE.search(text)
    if m is not None:
        return "dtype-changed", ValueChange(function, f"{m['name']} dtype", m["old"], m["new"])
    m = _RANK_RE.search(text)
    if m is not None:
        return "shape-changed", ValueChange(function, f"{m['name']} rank", m["old"], m["new"])
    if "___check_type_id" in text or "___check_obj_id" in text:
        im = re.search(r"___check_(?:type|obj)_id\((?P<obj>.*?), (?P<id>\d+)\)", text)
        if im is not None:
            return "object-recreated", ValueChange(function, im["obj"], im["id"], None)
        return "object-recreated", ValueChange(function, guard_text(text), None, None)
    m = _GLOBAL_RE.search(text)
    if m is not None:
        what = (m["what"] or "global state").strip() or "global state"
        return "global-state-changed", ValueChange(function, what, None, None)
    if "BACKEND_MATCH" in text:
        return "retracing", None
    m = _VALUE_RE.match(guard_text(text))
    if m is not None:
        return "constant-changed", ValueChange(function, m["what"].strip(), m["old"].strip(), None)
    return "retracing", None


def closest_entry(failures: list[GuardFailure]) -> list[GuardFailure]:
    """The failures of the earlier entry the new call differs least from: fewest failures;
    on a tie an entry whose failure is a tensor mismatch (exact old and new) over a value
    guard whose new value is unknown; then the first listed (newest)."""
    groups: dict[str, list[GuardFailure]] = {}
    for f in failures:
        groups.setdefault(f.entry, []).append(f)
    if not groups:
        return []

    def score(item: tuple[int, tuple[str, list[GuardFailure]]]) -> tuple[int, int, int]:
        order, (_, fs) = item
        exact = all("mismatch" in f.text for f in fs)
        return (len(fs), 0 if exact else 1, order)

    return min(enumerate(groups.items()), key=score)[1][1]


def new_value(
    failures: list[GuardFailure], chosen: GuardFailure, known: dict[str, dict[str, str]]
) -> str | None:
    """The new value of a constant guard's expression: an earlier entry whose guard on the
    same expression held (it fails on something else) had that value."""
    m = _VALUE_RE.match(guard_text(chosen.text))
    if m is None:
        return None
    what = m["what"].strip()
    failing_on = {
        f.entry
        for f in failures
        if (v := _VALUE_RE.match(guard_text(f.text))) and v["what"].strip() == what
    }
    for entry, values in known.items():
        if entry not in failing_on and what in values and entry in {f.entry for f in failures}:
            return values[what]
    return None


def value_guards(failures: list[GuardFailure]) -> dict[str, dict[str, str]]:
    """entry -> {expression: value} of the constant guards that ``failures`` show."""
    out: dict[str, dict[str, str]] = {}
    for f in failures:
        m = _VALUE_RE.match(guard_text(f.text))
        if m is not None:
            out.setdefault(f.entry, {})[m["what"].strip()] = m["old"].strip()
    return out


def explain(
    function: str, failures: list[GuardFailure], known: dict[str, dict[str, str]]
) -> tuple[str, tuple[ValueChange, ...], GuardFailure | None]:
    """(rule, changes, the failure that really changed) for a recompilation whose guard
    failures are ``failures`` (as listed); ``known``: constant guards seen before per entry."""
    if not failures:
        return "retracing", (), None
    chosen = closest_entry(failures)
    first = failures[0]
    rule, change = classify(function, chosen[0])
    changes: list[ValueChange] = []
    if change is not None:
        if rule == "constant-changed" and change.new is None:
            nv = new_value(failures, chosen[0], known)
            if nv is not None:
                change = ValueChange(change.function, change.what, change.old, nv)
        changes.append(change)
    for extra in chosen[1:]:
        _, ch = classify(function, extra)
        if ch is not None:
            changes.append(ch)
    if first is not chosen[0]:
        changes.append(
            ValueChange(
                function, f"torch listed first: {first.entry}: {guard_text(first.text)}", None, None
            )
        )
    return rule, tuple(changes), chosen[0]


_TREE_GUARD_RE: Final = lazy_re(r"^[\s|]*\+- (?P<kind>[A-Z_]+): (?P<guard>.*)$")
_LOCAL_RE: Final = lazy_re(r"\b[LG]\['(?P<name>[^'\]]+)'\]")
_ID_GUARD_RE: Final = lazy_re(r"___check_(?P<kind>type|obj)_id\((?P<obj>.*?), (?P<id>\d+)\)")


def source_name(expr: str) -> str:
    """A guard's source as recompile reasons print it: ``L['self'].scale`` -> ``self.scale``."""
    return _LOCAL_RE.sub(lambda m: m["name"], expr.strip())


def tree_guard_value(line: str) -> tuple[str, str] | None:
    """(key, value) of one line of a ``TREE_GUARD_MANAGER`` dump that pins a value, keyed
    as :func:`value_key` keys a change: ``| | +- EQUALS_MATCH: L['n'] == 4  # ...`` ->
    ``("n", "4")``; ``+- TYPE_MATCH: ___check_type_id(L['model'], 9419...), type=...`` ->
    ``("id model", "9419...")``.
    """
    m = _TREE_GUARD_RE.match(line)
    if m is None:
        return None
    guard = guard_text(m["guard"])
    if m["kind"] in ("TYPE_MATCH", "ID_MATCH"):
        im = _ID_GUARD_RE.match(guard)
        return (f"id {source_name(im['obj'])}", im["id"]) if im is not None else None
    vm = _VALUE_RE.match(guard)
    if vm is None or m["kind"] not in ("EQUALS_MATCH", "CONSTANT_MATCH"):
        return None
    return source_name(vm["what"]), vm["old"].strip()


def value_key(rule: str | None, change: ValueChange) -> str:
    """How a guard pinning ``change.what`` is keyed: object ids apart from values."""
    return f"id {change.what}" if rule == "object-recreated" else change.what


def with_new_values(
    rule: str | None, changes: tuple[ValueChange, ...], values: dict[str, str]
) -> tuple[ValueChange, ...]:
    """``changes`` with the new value filled where a guard of the new compilation pins the
    same expression (``values``: key -> value) to something else than the old."""
    out: list[ValueChange] = []
    for c in changes:
        new = values.get(value_key(rule, c)) if c.new is None and c.old is not None else None
        out.append(replace(c, new=new) if new is not None and new != c.old else c)
    return tuple(out)


def missing_new(changes: tuple[ValueChange, ...]) -> bool:
    """Whether a change with an old value still lacks its new one."""
    return any(c.old is not None and c.new is None for c in changes)


def failure_values(failures: list[GuardFailure], entry: str) -> dict[str, str]:
    """What the failing guards of cache entry ``entry`` pin, keyed as :func:`value_key` keys a
    change: a later recompilation that lists ``0/1: n == 4`` says entry 0/1 was made for
    ``n`` = 4, the new value of the change that made 0/1."""
    out: dict[str, str] = {}
    for f in failures:
        if f.entry != entry:
            continue
        text = guard_text(f.text)
        im = _ID_GUARD_RE.search(text)
        if im is not None:
            out.setdefault(f"id {source_name(im['obj'])}", im["id"])
            continue
        vm = _VALUE_RE.match(text)
        if vm is not None:
            out.setdefault(source_name(vm["what"]), vm["old"].strip())
    return out


_COMMENT_FRAME_RE: Final = lazy_re(r"# (?P<file>\S+\.py):(?P<line>\d+) in (?P<fn>[\w<>]+)")
#: leading folders of torch's own files in a guard's (left-truncated) source comment
_TORCH_DIRS: Final = (
    "nn/",
    "_dynamo/",
    "_functorch/",
    "_inductor/",
    "fx/",
    "utils/",
    "optim/",
    "autograd/",
    "distributed/",
    "_refs/",
    "_prims/",
)


K = TypeVar("K")


def in_line_order(held: Iterable[tuple[K, RecompileReason]]) -> list[RecompileReason]:
    """Held reasons (the items of a decoder's table of them) in the order of their lines,
    whatever the order they were held in (its ``finish``: see ``RESIDUAL_STATE`` in
    :mod:`._checkpoint`)."""
    return [r for _k, r in sorted(held, key=lambda kv: (kv[1].span.line, repr(kv[0])))]


#: the text of a guard line from its last "# " -> whether a frame's comment starts there,
#: and what :func:`comment_frame` reads of it: the comments repeat at every compilation of
#: a frame (their guards' values change, not their sources), at most
#: :data:`_FRAME_TEXT_CHARS` characters of them
_FRAMES_KEPT: Final[Kept[str, tuple[bool, tuple[str, bool] | None]]] = Kept()
_FRAMES: Final = _FRAMES_KEPT.table
_FRAME_TEXT_CHARS: Final = 240


def comment_frame(text: str) -> tuple[str, bool] | None:
    """(function, in the user's file) of a guard's source comment
    (``# return x * n  # mp/capture-torch/capture.py:211 in scaled_sum``): the last one of
    the line, as the last of the pattern's matches left to right."""
    # (looked for from the end, at each "# " back from there: the pattern starts with one,
    # and no match holds another (its file has no space, the rest none next to a "#"), so
    # the first match from the end is the last of ``finditer``'s, found without reading the
    # guard's whole text; the text from the last "# " is read once per distinct text)
    at = text.rfind("# ")
    if at < 0:
        return None
    if len(text) - at <= _FRAME_TEXT_CHARS:
        tail = text[at:]
        got = _FRAMES.get(tail)
        if got is None:
            m = _COMMENT_FRAME_RE.match(tail)
            got = _FRAMES_KEPT.put(tail, (False, None) if m is None else (True, _frame_of(m)))
        if got[0]:
            return got[1]
        at = text.rfind("# ", 0, at)
    match = _COMMENT_FRAME_RE.match
    while at >= 0:
        m = match(text, at)
        if m is not None:
            return _frame_of(m)
        at = text.rfind("# ", 0, at)
    return None


def _frame_of(m: re.Match[str]) -> tuple[str, bool] | None:
    """What :func:`comment_frame` reads of a match of the comment's pattern."""
    file, _line, fn = m.groups()
    if file.startswith("_dynamo/"):
        return None  # a guard Dynamo installs itself (init_ambient_guards), not the code's
    return fn, not file.startswith(_TORCH_DIRS) and "/torch/" not in file
