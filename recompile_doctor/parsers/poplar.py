"""Poplar and TensorFlow-on-IPU messages (``reference/poplar_formats.md`` §1-§6).

One table: each entry names an event kind, a literal that must occur in the message (a cheap
prefilter) and the pattern that extracts its fields.  A message that contains an entry's
literal but does not fit its pattern is *malformed* (counted; an error under ``--strict``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final, cast

from recompile_doctor.bounded import Kept
from recompile_doctor.parsers._lazy_re import LazyRe, lazy_re
from recompile_doctor.parsers._prefixes import safe_float, safe_int
from recompile_doctor.slotted import remade_from_fields


def _int(text: str) -> int:
    """A number field of a message: a ValueError (-> malformed line) when it is not a sane
    integer (400 digits, garbage)."""
    v = safe_int(text)
    if v is None:
        raise ValueError(f"not a usable number: {text[:40]!r}")
    return v


def _float(text: str) -> float:
    v = safe_float(text)
    if v is None:
        raise ValueError(f"not a usable number: {text[:40]!r}")
    return v


@dataclass(frozen=True, slots=True)
class Malformed:
    """A message that names a known kind but does not fit its format."""

    kind: str
    expected: str

    def __reduce__(self) -> tuple[Any, ...]:
        return remade_from_fields(self)  # (a copy in the compiled build: see there)


_HEX = r"[0-9a-fA-F]{1,16}"
_EXEC_PATH = r"\S+?\.(?:poplar_exec|xla_engine(?:\.poplar_exec)?)"


@dataclass(frozen=True, slots=True)
class Message:
    """A recognized message: its kind, module and hash (when it names them), other fields."""

    kind: str
    module: str | None
    hash: str | None
    detail: dict[str, Any]

    def __reduce__(self) -> tuple[Any, ...]:
        return remade_from_fields(self)  # (a copy in the compiled build: see there)


Builder = Callable[["re.Match[str]"], Message]


@dataclass(frozen=True, slots=True)
class _Spec:
    """How one Poplar message is recognized and read into a :class:`Message`."""

    kind: str
    key: str
    pattern: LazyRe  # compiled on first use: importing the format costs nothing
    build: Builder
    strict: bool = True  # key present but no match -> malformed
    #: the commonest shape read by str methods first: what the pattern and ``build`` would
    #: give (a ValueError as there), or None to let them read it
    fast: Callable[[str], Message | None] | None = None

    def __reduce__(self) -> tuple[Any, ...]:
        return remade_from_fields(self)  # (a copy in the compiled build: see there)


def _file_hash(path: str) -> str | None:
    m = re.search(r"([0-9a-fA-F]{1,16})\.(?:poplar_exec|xla_engine)", path)
    return m.group(1).lower() if m else None


def _hexnorm(h: str) -> str:
    return "0x" + h.lower()


def _b_begin(m: re.Match[str]) -> Message:
    ordinal = m.group("ordinal")
    return Message(
        "compile-begin",
        m.group("module"),
        _hexnorm(m.group("hash")),
        {"ordinal": _int(ordinal) if ordinal is not None else None},
    )


def _b_end(m: re.Match[str]) -> Message:
    return Message("compile-end", m.group("module"), _hexnorm(m.group("hash")), {})


def _b_path(kind: str) -> Builder:
    def build(m: re.Match[str]) -> Message:
        path = m.group("path")
        gd = m.groupdict()
        return Message(kind, gd.get("module"), None, {"path": path, "file_hash": _file_hash(path)})

    return build


def _b_lock(m: re.Match[str]) -> Message:
    path = m.group("path")
    return Message(
        "cache-lock",
        None,
        None,
        {"action": m.group("action").lower(), "path": path, "file_hash": _file_hash(path)},
    )


def _b_not_compiled(m: re.Match[str]) -> Message:
    h = m.group("hash").lower()
    return Message(
        "cache-new-entry", m.group("module"), None, {"executable_hash": h, "file_hash": h}
    )


def _ms_field(text: str) -> int:
    """:func:`_int` of the digits the phase pattern reads: its checks skipped where they
    cannot fail (15 ASCII digits or fewer: under the limit)."""
    return int(text) if len(text) <= 15 and text.isascii() else _int(text)


def _mb_field(text: str) -> float:
    """:func:`_float` of an amount the phase pattern reads (``-?[\\d.]+(?:e[+-]?\\d+)?``):
    its checks skipped where they cannot fail (15 ASCII characters or fewer, one point, no
    exponent: a finite number under the limit, or a ValueError as there)."""
    if len(text) <= 15 and text.isascii() and "e" not in text and text.count(".") == 1:
        return float(text)
    return _float(text)


def _b_phase(m: re.Match[str]) -> Message:
    # (each phase's end prints other numbers: this runs for every one of them)
    indent, kind, name, ms, diff, total = m.group("indent", "kind", "name", "ms", "diff", "total")
    if kind == "Starting":
        return Message("phase-start", None, None, {"name": name, "depth": len(indent) // 2})
    detail: dict[str, Any] = {
        "name": name,
        "depth": len(indent) // 2,
        "duration_ms": _ms_field(ms) if ms is not None else None,
        "diff_rss_mb": _mb_field(diff) if diff else None,
        "total_rss_mb": _mb_field(total) if total else None,
    }
    return Message("phase-end", None, None, detail)


_DURATION: Final = " (duration "
_DIFF_RSS: Final = " ms; diff RSS: "


def _phase_end_fast(msg: str) -> Message | None:
    """The commonest phase end, ``Ending phase: NAME (duration N ms; diff RSS: X MB)``
    (every one prints other numbers, so no memo helps), read by str methods: the message
    the pattern and :func:`_b_phase` give (its numbers read as there), or None for any
    other shape (a total, an exponent, a malformed line: the pattern reads those).
    ``test_poplar_messages`` compares the two."""
    if not msg.endswith(" MB)"):
        return None
    at = msg.find(_DURATION)  # (the first: the name holds none, as the pattern's)
    if at < 0:
        return None
    head = msg[:at]
    body = head.lstrip(" ")
    if not body.startswith("Ending phase: ") or "\n" in body or len(body) < 15:
        return None
    ms, sep, diff = msg[at + 11 : -4].partition(_DIFF_RSS)
    digits = diff[1:] if diff[:1] == "-" else diff
    # (the pattern's shapes, in ASCII: its \d+ and -?[\d.]+)
    if not (
        sep
        and ms.isdigit()
        and ms.isascii()
        and digits.isascii()
        and digits.replace(".", "").isdigit()
    ):
        return None
    detail: dict[str, Any] = {
        "name": body[14:],
        "depth": (len(head) - len(body)) // 2,
        "duration_ms": _ms_field(ms),
        "diff_rss_mb": _mb_field(diff),
        "total_rss_mb": None,
    }
    return Message("phase-end", None, None, detail)


def _b_attach(m: re.Match[str]) -> Message:
    ids = [_int(x) for x in m.group("ids").split(",") if x]
    n = m.group("n")
    return Message(
        "attach",
        None,
        None,
        {
            "ordinal": _int(m.group("ordinal")),
            "ipus": _int(n) if n else len(ids),
            "device_ids": ids,
            "sdk_style": "sdk>=2.5" if m.group("tfdev") else "sdk<=2.4",
        },
    )


def _b_progress_start(m: re.Match[str]) -> Message:
    return Message("progress-start", m.group("module"), None, {})


def _b_progress_end(m: re.Match[str]) -> Message:
    secs = (
        _int(m.group("h")) * 3600
        + _int(m.group("m")) * 60
        + _int(m.group("s"))
        + _int(m.group("ds")[:9]) / (10 ** len(m.group("ds")[:9]))
    )
    return Message("progress-end", None, None, {"elapsed_s": round(secs, 3)})


def _b_simple(kind: str, **fields: str) -> Builder:
    def build(m: re.Match[str]) -> Message:
        detail = {k: m.group(g) for k, g in fields.items()}
        gd = m.groupdict()
        return Message(kind, gd.get("module"), None, detail)

    return build


def _b_graph_compiled(m: re.Match[str]) -> Message:
    parts = [_int(x) for x in m.group("elapsed").split(":")]
    secs = 0
    for x in parts:
        secs = secs * 60 + x
    return Message("graph-compiled", None, None, {"elapsed_s": float(secs), "tool": "poptorch"})


def _b_execute(m: re.Match[str]) -> Message:
    return Message("execute", m.group("module"), None, {})


def _b_step(m: re.Match[str]) -> Message:
    return Message("compile-step", None, None, {"step": m.group(0).strip()})


_SPECS: tuple[_Spec, ...] = (
    _Spec(
        "compile-begin",
        "Begin XLA compilation",
        lazy_re(
            rf"Begin XLA compilation:\s*(?P<module>\S+)\s+\(Hash:?\s*0x(?P<hash>{_HEX})\)"
            r"(?:\s+for\s+ordinal\s+(?P<ordinal>\d+))?"
        ),
        _b_begin,
    ),
    _Spec(
        "compile-end",
        "End XLA compilation",
        lazy_re(rf"End XLA compilation:\s*(?P<module>\S+)\s+\(Hash:?\s*0x(?P<hash>{_HEX})\)"),
        _b_end,
    ),
    _Spec(
        "cache-hit",
        "Loaded ",
        lazy_re(rf"\bLoaded (?P<module>\S+) from (?P<path>{_EXEC_PATH})(?:\s|$)"),
        _b_path("cache-hit"),
        strict=False,  # "Loaded" is a common word; only executable paths count
    ),
    _Spec(
        "cache-miss",
        "Couldn't find ",
        lazy_re(r"Couldn't find (?P<path>\S+) in executable cache"),
        _b_path("cache-miss"),
    ),
    _Spec(
        "precompile-saved",
        "pre-compiled Poplar program has been saved to",
        lazy_re(r"A pre-compiled Poplar program has been saved to (?P<path>\S+)"),
        _b_path("precompile-saved"),
    ),
    _Spec(
        "cache-lock",
        " lock for ",
        lazy_re(r"\b(?P<action>Acquiring|Acquired|Releasing) lock for (?P<path>\S+)"),
        _b_lock,
        strict=False,
    ),
    _Spec(
        "cache-deserialize",
        "Trying to deserialize cached file",
        lazy_re(r"Trying to deserialize cached file: (?P<path>\S+)"),
        _b_path("cache-deserialize"),
    ),
    _Spec(
        "cache-new-entry",
        "has not been compiled yet",
        lazy_re(
            r"Module (?P<module>\S+) has not been compiled yet \(Hash: 0x(?P<hash>[0-9a-fA-F]{1,16})\)"
        ),
        _b_not_compiled,
    ),
    _Spec(
        "phase",
        " phase: ",
        lazy_re(
            r"^(?P<indent> *)(?P<kind>Starting|Ending) phase: (?P<name>(?:(?! \(duration).)+?)"
            r"(?: \(duration (?P<ms>\d+) ms; diff RSS: (?P<diff>-?[\d.]+(?:e[+-]?\d+)?) MB"
            r"(?:; total RSS: (?P<total>-?[\d.]+(?:e[+-]?\d+)?) MB)?\))?\s*$"
        ),
        _b_phase,
        fast=_phase_end_fast,
    ),
    _Spec(
        "cluster-compiled",
        "Compiled cluster using XLA!",
        lazy_re(r"Compiled cluster using XLA!"),
        _b_simple("cluster-compiled"),
    ),
    _Spec(
        "attach",
        "attached to ",
        lazy_re(
            r"(?:(?P<tfdev>TensorFlow device)|Device) /device:IPU:(?P<ordinal>\d+) attached to "
            r"(?:(?P<n>\d+) IPUs? with Poplar device IDs?|IPUs?): (?P<ids>\d+(?:,\d+)*)"
        ),
        _b_attach,
        strict=False,
    ),
    _Spec(
        "progress-start",
        "Compiling module ",
        lazy_re(r"Compiling module (?P<module>\S+?):?\s*$"),
        _b_progress_start,
        strict=False,
    ),
    _Spec(
        "progress-end",
        "Compilation Finished",
        lazy_re(
            r"Compilation Finished \[Elapsed: (?P<h>\d+):(?P<m>\d\d):(?P<s>\d\d)\.(?P<ds>\d+)\]"
        ),
        _b_progress_end,
    ),
    _Spec(
        "graph-compiled",
        "Graph compilation: 100%",
        lazy_re(
            r"Graph compilation: 100%\|[^|]*\| *(?P<n>\d+)/(?P=n) \[(?P<elapsed>\d+(?::\d\d)+)<"
        ),
        _b_graph_compiled,
        strict=False,
    ),
    _Spec(
        "replication",
        "Automatically replicating the TensorFlow model",
        lazy_re(r"Automatically replicating the TensorFlow model by a factor of (?P<factor>\d+)"),
        _b_simple("replication", factor="factor"),
    ),
    _Spec(
        "poplar-version",
        "Poplar version:",
        lazy_re(
            r"Poplar version: (?P<version>\S+)(?: \((?P<build>[^)]*)\))?(?: Poplar package: (?P<package>\S+))?"
        ),
        _b_simple("poplar-version", version="version", package="package"),
    ),
    _Spec(
        "poplar-flags",
        "TF_POPLAR_FLAGS is set to",
        lazy_re(r"TF_POPLAR_FLAGS is set to '(?P<flags>.*)'"),
        _b_simple("poplar-flags", flags="flags"),
    ),
    _Spec(
        "execute-stream",
        "Executing on Poplar stream ordinal",
        lazy_re(r"Executing on Poplar stream ordinal (?P<ordinal>\d+) of type (?P<type>\S+)"),
        _b_simple("execute-stream", ordinal="ordinal", type="type"),
        strict=False,
    ),
    _Spec(
        "execute",
        "Execute ",
        lazy_re(r"^\s*Execute (?P<module>\S+)\s*$"),
        _b_execute,
        strict=False,
    ),
    _Spec(
        "precompile-no-cache-path",
        "configured for pre-compilation",
        lazy_re(
            r"IPU devices have been configured for pre-compilation, however 'executable_cache_path'"
        ),
        _b_simple("precompile-no-cache-path"),
    ),
    _Spec(
        "custom-op-unhashable",
        "custom user operations which cannot be safely serialized",
        lazy_re(r"contains custom user operations which cannot be safely serialized"),
        _b_simple("custom-op-unhashable"),
    ),
    _Spec(
        "compilation-only",
        "configured for compilation only",
        lazy_re(r"configured for compilation only"),
        _b_simple("compilation-only"),
    ),
    _Spec(
        "precompile-zeros",
        "No device attached for pre compilation",
        lazy_re(r"No device attached for pre compilation of Poplar programs"),
        _b_simple("precompile-zeros"),
    ),
    _Spec(
        "popart-cache-found",
        "PopART cache file has been found",
        lazy_re(r"PopART cache file has been found: (?P<path>\S+)"),
        _b_path("popart-cache-found"),
    ),
    _Spec(
        "popart-cache-load",
        "Loading serialized PopART executable from",
        lazy_re(r"Loading serialized PopART executable from (?P<path>\S+)"),
        _b_path("popart-cache-load"),
    ),
    _Spec(
        "compile-step",
        " ",
        lazy_re(
            r"^\s*(?:Begin|End) Poplar (?:graph construction|Pipeline)\.|"
            r"^\s*Begin compiling Poplar engine|^\s*End compiling Poplar engine\.|"
            r"^\s*Poplar compilation \d+% complete|^\s*Skip engine compilation|"
            r"^\s*Compiling main computation \S+|^\s*Local replication factor \d+|"
            r"^\s*Created \d+ replica IPU graph|^\s*Sub-graph optimisation begins|"
            r"^\s*Creating a new cache entry\."
        ),
        _b_step,
        strict=False,
    ),
    _Spec(
        "on-demand-override",
        "Overriding device connection type to ON_DEMAND",
        lazy_re(r"Overriding device connection type to ON_DEMAND"),
        _b_simple("on-demand-override"),
    ),
)

#: every event kind the Poplar parser can produce (phase lines give phase-start/phase-end)
EVENT_KINDS: tuple[str, ...] = tuple(
    sorted({s.kind for s in _SPECS if s.kind != "phase"} | {"phase-start", "phase-end"})
)


def _claims(spec: _Spec, msg: str) -> bool:
    """Whether ``msg`` is meant to be this kind of message (prose that quotes a phase line,
    like the Graphcore note's 'look for "Starting phase: ..."', is not)."""
    if spec.kind == "phase":
        return msg.lstrip().startswith(("Starting phase:", "Ending phase:"))
    return True


#: messages repeat (the same ``Execute`` or phase line thousands of times, only the time
#: stamp differs): the match of each short message is remembered.  A Message is shared by
#: every line that says the same; nothing may change its ``detail``.
_MEMO_ENTRIES: Final = 8192
_MEMO_KEPT: Final[Kept[str, Message | Malformed | None]] = Kept(_MEMO_ENTRIES)
_MEMO: Final = _MEMO_KEPT.table
_MEMO_CHARS = 400
_UNSEEN: Final = object()


def match_message(msg: str) -> Message | Malformed | None:
    """The :class:`Message` in ``msg``, a :class:`Malformed`, or ``None`` when not known."""
    if len(msg) > _MEMO_CHARS:
        return _match(msg)
    # (looked up, not caught: every load's end is a miss, and in the compiled build a caught
    # KeyError costs a traceback built and dropped, 2 % of a 20 % log's decoding)
    got = _MEMO.get(msg, _UNSEEN)
    if got is not _UNSEEN:
        return cast("Message | Malformed | None", got)
    return _MEMO_KEPT.put(msg, _match(msg))


def _match(msg: str) -> Message | Malformed | None:
    malformed: Malformed | None = None
    for spec in _SPECS:
        if spec.key in msg:
            try:
                if spec.fast is not None and (got := spec.fast(msg)) is not None:
                    return got
                m = spec.pattern.search(msg)
                if m is not None:
                    return spec.build(m)
            except ValueError:  # (a number field that is not a usable number)
                return Malformed(spec.kind, spec.key)
            if spec.strict and malformed is None and _claims(spec, msg):
                malformed = Malformed(spec.kind, spec.key)
    return malformed


#: literals that compile-step messages start with (the spec's key is only " ")
_STEP_ANCHORS = (
    "Poplar ",
    "Begin compiling Poplar engine",
    "Compiling main computation",
    "Local replication factor",
    "replica IPU graph",
    "Skip engine compilation",
    "Sub-graph optimisation begins",
    "Creating a new cache entry",
)

#: one scan per line: a line without any of these cannot hold a known message
ANCHOR_RE = re.compile(
    "|".join(
        re.escape(k)
        for k in sorted({s.key for s in _SPECS if s.kind != "compile-step"} | set(_STEP_ANCHORS))
    )
)
