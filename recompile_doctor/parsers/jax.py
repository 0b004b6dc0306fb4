"""The JAX log format: ``jax_log_compiles`` / ``jax_explain_cache_misses`` lines and the
persistent compilation cache's DEBUG lines -> typed events.

What the words of JAX (0.4 - 0.10, ``fixtures/jax/README.md``) mean lives here:

* one compilation is ``Compiling jit(f) with global shapes and types ...`` (start) ...
  ``Finished XLA compilation of jit(f) in X sec`` (end; printed for persistent-cache hits
  too); ``Finished tracing f for jit`` comes before it and ``Finished jaxpr to MLIR module
  conversion`` inside it.  The XLA module (and persistent-cache entry) is ``jit_f``.
* ``TRACING CACHE MISS at <call site>:`` starts a multi-line explanation (the indented lines
  after it).  ``never seen function`` is a first trace, unless JAX adds ``but seen another
  function defined on the same line`` (a re-created function); ``for f ... all previously
  seen cache keys differ`` names what changed against the closest earlier key.
* An eager operation (``jnp.argmax`` on host data) compiles as ``jit(_argmax)``.  Rule: when
  the log explains cache misses (a ``TRACING CACHE MISS`` block was seen before), a
  compilation of a function that no block has named is eager, because JAX explains every
  user function's first trace and never its own internals; before any block (explanations
  off), a name with a leading underscore or the name of a ``lax`` primitive is eager.
* The persistent cache is counted from the compiler's lines (``PERSISTENT COMPILATION CACHE
  MISS``, ``Persistent compilation cache hit``, ``Writing ... to persistent compilation
  cache``); the ``lru_cache`` module's ``Cache hit/miss for key`` only when no compiler line
  follows for the same key.  With no cache configured JAX still logs a DEBUG miss; it is not
  a lookup when the compilation logged ``cache is disabled/not initialized`` or when the
  miss is at DEBUG level and nothing in the log shows the cache in use.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterator, MutableMapping, MutableSet, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Final

from recompile_doctor import bounded, rules
from recompile_doctor.events import (
    CacheLookup,
    CacheOutcomeKind,
    CompileActivity,
    CompileFinished,
    CompileKey,
    CompileStarted,
    FrameworkNote,
    ProcessConfig,
    ProcessStarted,
    RecompileReason,
    Span,
    TypedEvent,
)
from recompile_doctor.model import Event, ValueChange
from recompile_doctor.name_digest import held
from recompile_doctor.parsers._format import RECOGNIZED, UNRECOGNIZED, Decoded, SkipMode
from recompile_doctor.parsers._lazy_re import lazy_re
from recompile_doctor.parsers._literal_mask import literal_mask
from recompile_doctor.parsers._memo import memo
from recompile_doctor.parsers._names import function_name
from recompile_doctor.parsers._prefixes import Clock
from recompile_doctor.parsers._pylog import PyLog, split_pylog
from recompile_doctor.parsers._spans import native_in_use
from recompile_doctor.parsers._tuples import new_event, new_span, recognized

# detection's half of the format (the registry entry and sniff are this module's names too)
from recompile_doctor.parsers.jax_detect import ANCHORS, FRAMEWORK, JAX, sniff  # noqa: F401
from recompile_doctor.rules import first_cause

#: JAX-internal functions compiled by eager operations (the name rule, used while the log
#: shows no cache-miss explanations): ``lax`` primitives that run op by op
_PRIMITIVE_NAMES = (
    "abs add and argmax argmin atan2 broadcast_in_dim clamp concatenate cos "
    "convert_element_type cumsum cumprod cummax cummin device_put div dot_general "
    "dynamic_slice dynamic_update_slice eq exp expm1 floor ge gather gt integer_pow iota "
    "le log log1p lt max min mul ne neg not or pad pow reduce_and reduce_max reduce_min "
    "reduce_or reduce_prod reduce_sum rem reshape rev rsqrt scatter scatter-add "
    "scatter_add select_n sign sin slice sort sqrt square squeeze sub tan tanh transpose "
    "xor copy copy_p erf erf_inv logistic random_bits random_seed random_wrap "
    "random_unwrap threefry2x32 shift_left shift_right_logical split"
)
_PRIMITIVES: Final = frozenset(_PRIMITIVE_NAMES.split())

_WEAK_HINT_RE: Final = lazy_re(r"https?://\S*$")
_WRAPPED_RE: Final = lazy_re(r"^(?P<w>[A-Za-z_]\w*)\((?P<fn>.+)\)$")
_MODULE_CHARS_RE: Final = lazy_re(r"[^\w.\-]")

# -- messages --------------------------------------------------------------------------------
_TRACING_MISS_RE: Final = lazy_re(
    r"TRACING CACHE MISS at (?P<site>.*?)(?: costing (?P<ms>\S+) ms)?(?: because)?:\s*$"
)
#: a ``Compiling`` message up to its arguments (which end at ``. Argument mapping: `` or at
#: the message's trailing blanks: :func:`_compiling_fields` finds that end with ``str``
#: methods, where the pattern's lazy arguments took a step of the regex engine a character)
_COMPILING_RE: Final = lazy_re(
    r"Compiling (?P<name>\S+)(?: \(\d+\))?(?: for)? with global shapes and types "
)
_ARGUMENT_MAPPING: Final = ". Argument mapping: "
_WITH_GLOBAL: Final = " with global shapes and types "
_COMPILING_OLD_RE: Final = lazy_re(
    r"Compiling (?P<name>\S+) \(\d+\)? for (?:\d+ args|args (?P<args>.*?))\.?\s*$"
)
#: ``<prefix><name> in <seconds> sec``: the two patterns :func:`in_seconds` reads (the
#: tests hold it to them)
_LOWERED_RE: Final = lazy_re(
    r"Finished jaxpr to MLIR module conversion (?P<name>\S+) in (?P<s>\S+) sec\s*$"
)
_COMPILED_RE: Final = lazy_re(r"Finished XLA compilation of (?P<name>\S+) in (?P<s>\S+) sec\s*$")
_LOWERED_PREFIX: Final = "Finished jaxpr to MLIR module conversion "
_COMPILED_PREFIX: Final = "Finished XLA compilation of "
_COMPILED_NAME_RE: Final = lazy_re(r"Finished XLA compilation of (?P<name>\S+)")
_P_MISS_RE: Final = lazy_re(
    r"PERSISTENT COMPILATION CACHE MISS for '(?P<mod>[^']*)' with key '(?P<key>[^']*)'"
)
_P_HIT_RE: Final = lazy_re(
    r"Persistent compilation cache hit for '(?P<mod>[^']*)' with key '(?P<key>[^']*)'"
)
_P_WRITE_RE: Final = lazy_re(
    r"Writing (?P<mod>\S+) to persistent compilation cache with key '(?P<key>[^']*)'"
)
_P_INIT_RE: Final = lazy_re(r"Initialized persistent compilation cache at (?P<path>.+?)\s*$")
_LRU_RE: Final = lazy_re(r"Cache (?P<outcome>hit|miss) for key: '(?P<key>[^']*)'")
#: the literal each of the patterns above cannot match without (asked first: a persistent
#: cache line was searched with up to four patterns, 3,300 instructions each)
_P_INIT_AT: Final = "Initialized persistent compilation cache at "
_P_MISS_AT: Final = "PERSISTENT COMPILATION CACHE MISS for '"
_P_HIT_AT: Final = "Persistent compilation cache hit for '"
_P_WRITE_AT: Final = " to persistent compilation cache with key '"
_P_OFF: Final = "get_executable_and_time: cache is disabled"
#: the literals :meth:`JaxDecoder._message` tests a message for, bit k for the k-th
#: (:func:`~recompile_doctor.parsers._literal_mask.literal_mask`; of any length to the
#: compiler: one object, where a tuple of fixed length is made anew at each use); the
#: tests, in their order:
_TESTS: Final[tuple[str, ...]] = (
    "TRACING CACHE MISS",
    "Finished tracing ",
    "Compiling ",
    " with global shapes and types",
    "Finished jaxpr to MLIR",
    "Finished XLA compilation",
    "PERSISTENT COMPILATION CACHE MISS",
    "ersistent compilation cache",
    "Cache hit for key: ",
    "Cache miss for key: ",
    _P_OFF,
    "Not writing persistent cache entry",
    " seconds to compile (",
    "get_cache_key",
    "XLA flag in cache key",
    "get_compile_options: ",
)
_T_MISS: Final = 1 << 0
_T_TRACED: Final = 1 << 1  # (or a message that starts "Finished tracing")
_T_COMPILING: Final = 1 << 2
_T_GLOBAL: Final = 1 << 3
_T_LOWERED: Final = 1 << 4
_T_COMPILED: Final = 1 << 5
_T_PERSISTENT: Final = 1 << 6 | 1 << 7
_T_LRU: Final = 1 << 8 | 1 << 9
_T_OFF: Final = 1 << 10
_T_NOT_WRITTEN: Final = 1 << 11
_T_TOOK: Final = 1 << 12
_T_COMPONENT: Final = 1 << 13
_T_FLAG: Final = 1 << 14
_T_OPTIONS: Final = 1 << 15
_NOT_WRITTEN_RE: Final = lazy_re(
    r"Not writing persistent cache entry"
    r"(?: for '(?P<mod>[^']*)' because it took < (?P<min>\S+) seconds to compile "
    r"\((?P<took>[^)s]*)s\)"
    r"| with key '(?P<key>[^']*)' since its size \((?P<size>\d+) bytes\) is less than "
    r"threshold \((?P<thr>-?\d+) bytes\)"
    r"| since (?P<why>.+?))\s*$"
)
_TOOK_RE: Final = lazy_re(
    r"'(?P<mod>[^']*)' took at least (?P<min>\S+) seconds to compile \((?P<took>[^)s]*)s\)"
)
_COMPONENT_RE: Final = lazy_re(
    r"get_cache_key hash (?P<kind>of serialized|after serializing) (?P<c>.+?): "
    r"(?P<h>[0-9a-fA-F]+)\s*$"
)
_FLAG_RE: Final = lazy_re(r"(?:(?P<not>Not i)|I)ncluding XLA flag in cache key: (?P<flag>.+?)\s*$")
_OPTIONS_RE: Final = lazy_re(
    r"get_compile_options: num_replicas=(?P<r>\d+) num_partitions=(?P<p>\d+) "
    r"device_assignment=(?P<da>.*?)\s*$"
)

# -- explanation blocks ----------------------------------------------------------------------
_NEVER_SEEN_NAME_RE: Final = lazy_re(r"^(?P<fn>\S.*?) id=\d+(?: defined at (?P<defn>.+))?$")
#: ``for <fn>[ defined at <where>]`` and ``* at <what>, now <new> and before <old>``: read by
#: :func:`for_function` and :func:`type_difference` with string methods, these patterns where
#: a line breaks (never, in a line of a log)
_FOR_RE: Final = lazy_re(r"^for (?P<fn>.+?)(?: defined at (?P<defn>.+))?$")
_TYPE_DIFF_RE: Final = lazy_re(r"^\* at (?P<what>.+?), now (?P<new>.+?) and before (?P<old>.+)$")
_TREE_DIFF_RE: Final = lazy_re(
    r"^\* at (?:input path )?(?P<what>.+?), now (?P<new>.+?) and before (?P<old>.+?), "
    r"so (?P<why>.+)$"
)
_CTX_DIFF_RE: Final = lazy_re(
    r"^\* (?P<what>.+?) differs: now (?P<new>.+?) and before (?P<old>.+)$"
)
_CTX_OLD_RE: Final = lazy_re(
    r"^\[(?P<i>\d+)\]: now (?P<new>.+?) and before (?P<old>.+?)(?:, and)?$"
)
_NOW_BEFORE_RE: Final = lazy_re(r"^now (?P<new>.+?) and before (?P<old>.+)$")
_STATIC_RE: Final = lazy_re(r"Static\(val=(?P<v>.*)\)\s*$")
_PATH_KWARG_RE: Final = lazy_re(r"^(?:\[1\]|kwargs)\['(?P<k>[^']+)'\](?P<rest>.*)$")
_PATH_ARG_RE: Final = lazy_re(r"^(?:\[0\]|args)\[(?P<i>\d+)\](?P<rest>.*)$")

#: longest explanation block kept (a runaway indented stream is cut here)
MAX_BLOCK_LINES: Final = 2000


_INF: Final = float("inf")


def _seconds(text: str | None) -> float | None:
    """A duration as printed, or None when it is not a finite non-negative number."""
    if text is None:
        return None
    try:
        v = float(text)
    except ValueError:
        return None
    # (finite and not negative, in one native comparison: NaN fails it; math.isfinite was a
    # look-up on the module and a call, two thirds of this function's time)
    return v if 0.0 <= v < _INF else None


def _module_of(name: str) -> tuple[str, str]:
    m = _WRAPPED_RE.match(name)
    if m is None:
        return function_name(name), name
    fn = m["fn"]
    return _one_copy(fn), _one_copy(_MODULE_CHARS_RE.sub("_", f"{m['w']}_{fn}"))


def _one_copy(name: str) -> str:
    """``name``, the one copy of it when it is longer than a memo keeps (a log of long
    generated function names: each line that names one would keep a copy of its own, in
    the compilations and the decoder's tables; 100 MB of 8,000-character names peaked at
    190 MB, 156 with one copy each)."""
    return sys.intern(name) if len(name) > bounded.KEY_LONGEST else name


#: ``jit(train_step)`` -> (``train_step``, ``jit_train_step``): the function and the XLA
#: module name (JAX replaces characters other than ``[\\w.-]`` by ``_``)
module_of: Final = memo(_module_of)


def _compile_key(k: tuple[str | None, str | None, str | None, bool]) -> CompileKey:
    return CompileKey(FRAMEWORK, k[0], module=k[1], cache_key=k[2], eager=k[3])


#: (function, module, cache key, eager) -> its key (a frozen value, shared)
compile_key: Final = memo(_compile_key)


def traced_fields_py(msg: str) -> tuple[str, str | None, str] | None:
    """(function, wrapper or None, seconds as printed) of a message ``... Finished tracing[
    + transforming] <function>[ for <wrapper>] in <seconds> sec``; None when it is not of
    that form.  Read with ``str`` methods from its end (the seconds, then the wrapper), as
    the pattern in ``tests/test_jax_parser.py`` reads it, where that pattern's lazy function
    name took a step of the regex engine a character."""
    t = msg.rstrip()
    if not t.endswith(" sec"):
        return None
    u = t[:-4]
    if not u or u[-1].isspace():
        return None
    secs = u.rsplit(None, 1)[-1]
    k = len(u) - len(secs) - 4  # (where " in " is, before the seconds)
    if k < 0 or not u.startswith(" in ", k):
        return None
    # the first "Finished tracing" followed by a blank (or " + transforming ") and a name
    i = u.find("Finished tracing", 0, k)
    while i >= 0:
        a = i + len("Finished tracing")
        if u.startswith(" + transforming ", a) and k > a + len(" + transforming "):
            a += len(" + transforming ")
            break
        if u.startswith(" ", a) and k > a + 1:
            a += 1
            break
        i = u.find("Finished tracing", i + 1, k)
    else:
        return None
    name = u[a:k]  # (the function, then " for <wrapper>" when it ends so)
    p = name.rfind(" for ")
    wrapper = name[p + 5 :] if p >= 1 else ""
    if wrapper and wrapper.replace("_", "a").isalnum():  # (a \w+ word: alnum or "_")
        return name[:p], wrapper, secs
    return name, None, secs


def in_seconds_py(msg: str, prefix: str) -> tuple[str, str] | None:
    """(name, seconds as printed) of ``msg`` as ``search`` of ``<prefix>(?P<name>\\S+) in
    (?P<s>\\S+) sec\\s*$`` reads it (:data:`_LOWERED_RE`, :data:`_COMPILED_RE`), with ``str``
    methods: a search took some 3,000 instructions a line, two lines of each compilation.
    Each place ``prefix`` is found is tried in turn, as the search does: the name is the
    blank-free run after it up to `` in ``, the seconds the blank-free run from there to
    `` sec``, and nothing but blanks may follow (a blank: ``str.isspace``, as ``\\s`` is)."""
    p = msg.find(prefix)
    while p >= 0:
        a = p + len(prefix)
        k = msg.find(" in ", a)
        if k > a:
            name = msg[a:k]
            rest = msg[k + 4 :].rstrip()
            if _blank_free(name) and rest.endswith(" sec"):
                secs = rest[:-4]
                if secs and _blank_free(secs):
                    return name, secs
        p = msg.find(prefix, p + 1)
    return None


def _blank_free(s: str) -> bool:
    """``s`` is a run of ``\\S`` (no blank, not empty): the first run of ``split`` is all of
    it."""
    runs = s.split(None, 1)
    return bool(runs) and runs[0] == s


#: the C module's twins of :func:`traced_fields_py` and :func:`in_seconds_py`
#: (``parsers/_native_fields.c``: the same fields in a tenth of the instructions, no string
#: made but the fields) where it is built and in use, else those
_NATIVE: Final = native_in_use()
traced_fields: Final[Callable[[str], tuple[str, str | None, str] | None]] = getattr(
    _NATIVE, "traced_fields", traced_fields_py
)
in_seconds: Final[Callable[[str, str], tuple[str, str] | None]] = getattr(
    _NATIVE, "in_seconds", in_seconds_py
)


def _compiling_fields(msg: str) -> tuple[str, str | None] | None:
    if msg.startswith("Compiling "):
        # (the pattern's match at the start, read with str methods where the name is all
        # of what comes before " with global ...": no blank in it, so nothing of the
        # pattern's optional parts, whose reading is left to it)
        w = msg.find(_WITH_GLOBAL, 10)
        if w > 10:
            name = msg[10:w]
            if " " not in name and name.isprintable():  # (no blank: none is printable)
                rest = msg[w + len(_WITH_GLOBAL) :]
                cut = rest.find(_ARGUMENT_MAPPING)
                return name, rest[:cut] if cut >= 0 else rest.rstrip()
    m = _COMPILING_RE.search(msg)
    if m is not None:
        rest = msg[m.end() :]
        cut = rest.find(_ARGUMENT_MAPPING)
        return m["name"], rest[:cut] if cut >= 0 else rest.rstrip()
    m = _COMPILING_OLD_RE.search(msg)
    return None if m is None else (m["name"], m["args"])


#: a ``Compiling ...`` message -> (name, argument text), None when it is not of that form
#: (the same message recurs whenever a signature is compiled again)
compiling_fields: Final = memo(_compiling_fields)

_LRU_HIT: Final = "Cache hit for key: '"
_LRU_MISS: Final = "Cache miss for key: '"


def lru_fields(msg: str) -> tuple[str, str] | None:
    """(outcome, key) of a ``Cache hit|miss for key: '<key>'`` message, as :data:`_LRU_RE`
    reads them: at the first of the two literals, when a quote closes the key after it
    (else the pattern's search, which looks further on)."""
    h, m = msg.find(_LRU_HIT), msg.find(_LRU_MISS)
    at, outcome, head = (h, "hit", _LRU_HIT) if m < 0 or 0 <= h < m else (m, "miss", _LRU_MISS)
    if at >= 0:
        start = at + len(head)
        end = msg.find("'", start)
        if end >= 0:
            return outcome, msg[start:end]
    found = _LRU_RE.search(msg)
    return None if found is None else (found["outcome"], found["key"])


_OPTIONS_HEAD: Final = "get_compile_options: num_replicas="


def options_fields(msg: str) -> tuple[int, int, str] | None:
    """(replicas, partitions, device assignment) of a ``get_compile_options:`` message, as
    :data:`_OPTIONS_RE` reads them: with str methods where it begins with them and holds no
    line break (its lazy assignment stepped a character at a time, trying the end at each:
    10,000 instructions a message), else the pattern's search."""
    if msg.startswith(_OPTIONS_HEAD) and "\n" not in msg:
        a = len(_OPTIONS_HEAD)
        b = msg.find(" num_partitions=", a)
        if b > a and msg[a:b].isdecimal():
            c = b + len(" num_partitions=")
            d = msg.find(" device_assignment=", c)
            if d > c and msg[c:d].isdecimal():
                return int(msg[a:b]), int(msg[c:d]), msg[d + len(" device_assignment=") :].rstrip()
    m = _OPTIONS_RE.search(msg)
    return None if m is None else (int(m["r"]), int(m["p"]), m["da"])


def call_site(site: str) -> str | None:
    """``/tmp/x/capture.py:144:27 (case_batch_size)`` -> ``capture.py:144``."""
    site = site.strip()
    if not site:
        return None
    head = site.split(" (", 1)[0]
    parts = head.rsplit("/", 1)[-1].split(":")
    if len(parts) >= 2 and parts[1].isdigit():
        return f"{parts[0]}:{parts[1]}"
    return head or None


def strip_weak_hint(value: str) -> str:
    """Remove the weak-type URL that JAX glues to the end of a type (a type without "http"
    in it has none: no pattern is run over it)."""
    if "http" not in value:
        return value.strip()
    return _WEAK_HINT_RE.sub("", value).strip()


def type_change_rule(old: str, new: str) -> str:
    """The rule of one argument's type change: :func:`recompile_doctor.rules.type_change_rule`."""
    return rules.type_change_rule(old, new)


def _argument(path: str) -> str:
    """An input path (``[1]['lr']``, ``[0][2]``, ``kwargs['lr']``) as an argument name."""
    m = _PATH_KWARG_RE.match(path)
    if m is not None:
        return m["k"] + m["rest"]
    m = _PATH_ARG_RE.match(path)
    if m is not None:
        return f"args[{m['i']}]{m['rest']}"
    return path


def _static_value(thing: str) -> str | None:
    m = _STATIC_RE.search(thing)
    return m["v"] if m is not None else None


def _split_kwargs(text: str) -> dict[str, str] | None:
    """``{lr: 0.1, n: 3}`` -> {"lr": "0.1", "n": "3"} (naive; None when not of that form)."""
    if not (text.startswith("{") and text.endswith("}")):
        return None
    out: dict[str, str] = {}
    for part in text[1:-1].split(", "):
        k, sep, v = part.partition(": ")
        if not sep:
            return None
        out[k] = v
    return out


@dataclass(slots=True, init=False, repr=False, eq=False)  # read once, never shown
class Explanation:
    """What a ``TRACING CACHE MISS`` block says."""

    function: str | None
    call_site: str | None
    first: bool  # "never seen function"
    recreated: bool  # "... seen another function defined on the same line"
    rule: str | None  # None for a first trace
    changes: tuple[ValueChange, ...]
    cost_ms: float | None

    def __init__(
        self, function: str | None = None, call_site: str | None = None, first: bool = False,
        recreated: bool = False, rule: str | None = None,
        changes: tuple[ValueChange, ...] = (), cost_ms: float | None = None,
    ) -> None:  # fmt: skip
        # (written out: compiled, the frozen dataclass's own took 10,000 instructions, one
        # per explained recompilation; see torch._Line for the defaults)
        self.function = function
        self.call_site = call_site
        self.first = first
        self.recreated = recreated
        self.rule = rule
        self.changes = changes
        self.cost_ms = cost_ms


def for_function(s: str) -> str | None:
    """The function a stripped block line ``for <fn>[ defined at <where>]`` names, as
    :data:`_FOR_RE` reads it (its lazy pattern stepped a character at a time, trying the
    rest at each: most of the reading of a block): up to the first `` defined at ``."""
    if not s.startswith("for ") or "\n" in s or s != s.strip():
        m = _FOR_RE.match(s)
        return None if m is None else m["fn"]
    at = s.find(" defined at ", 5)
    # (s ends in no blank: something follows any " defined at " in it)
    return s[4:] if at < 0 else s[4:at]


def type_difference(s: str) -> tuple[str, str, str] | None:
    """(what, new, old) of a stripped block line ``* at <what>, now <new> and before <old>``,
    as :data:`_TYPE_DIFF_RE` reads it: what ends at the first ``, now `` and new at the first
    `` and before `` after it (one later would leave new less to read: none matches
    there either)."""
    if not s.startswith("* at ") or "\n" in s or s != s.strip():
        m = _TYPE_DIFF_RE.match(s)
        return None if m is None else (m["what"], m["new"], m["old"])
    now = s.find(", now ", 6)
    if now < 0:
        return None
    before = s.find(" and before ", now + 7)
    if before < 0:
        return None
    return s[5:now], s[now + 6 : before], s[before + 12 :]


def _read_miss_header(message: str) -> tuple[str | None, float | None] | None:
    """(call site, cost in ms) of a ``TRACING CACHE MISS at <site>:`` message, or None when
    the message is not of that form."""
    m = _TRACING_MISS_RE.search(message)
    return None if m is None else (call_site(m["site"]), _seconds(m["ms"]))


#: (a retraced function's block names the same call site each time: the header repeats)
miss_header: Final = memo(_read_miss_header)


#: a change a block names: (rule, line, what, old, new)
_Found = tuple[str, int, str, str | None, str | None]


def explain_block(lines: Sequence[tuple[int, str]], source: str, header: str) -> Explanation:
    """Read one explanation block: ``header`` is the first line's message, ``lines`` every
    line of the block (number, verbatim text)."""
    site, cost = miss_header(header) or (None, None)
    fn: str | None = None
    first = recreated = False
    section = ""
    # (rule, line, what, old, new) of each change, made a value once the block is read and
    # its function known (one read after the changes names them all)
    found: list[_Found] = []
    expect_name = False
    for lineno, raw in lines[1:]:
        s = raw.strip()
        if expect_name:
            expect_name = False
            nm = _NEVER_SEEN_NAME_RE.match(s)
            if nm is not None:
                fn = _one_copy(nm["fn"])
                continue
        if s.startswith("* key with "):
            s = s[len("* key with ") :]
        # (a line a header cannot be, a section's "* ..." line most often, is not asked for
        # each: each ask was a call)
        if s[:1] in _HEAD_LETTERS:
            if s.startswith("never seen function"):
                first = expect_name = True
                continue
            if s.startswith("but seen another function defined on the same line"):
                recreated = True
                continue
            if s.startswith("for "):
                named_fn = for_function(s)
                if named_fn is not None and fn is None:
                    fn = named_fn
                    continue
            head = _section_of(s)
            if head:
                section = head
                continue
        if section == "types":
            ym = type_difference(s)
            if ym is not None:
                old, new = strip_weak_hint(ym[2]), strip_weak_hint(ym[1])
                # (no memo of the pair: a run of growing shapes gives a new one each time)
                found.append((rules.type_change_rule(old, new), lineno, ym[0], old, new))
        elif section == "pytree":
            tm = _TREE_DIFF_RE.match(s)
            if tm is not None:
                what = _argument(tm["what"])
                sn, so = _static_value(tm["new"]), _static_value(tm["old"])
                if sn is not None and so is not None:
                    found.append(("constant-changed", lineno, what, so, sn))
                else:
                    found.append(("retracing", lineno, what, tm["old"], tm["new"]))
        elif section == "context":
            cm = _CTX_DIFF_RE.match(s)
            if cm is not None:
                found.append(("global-state-changed", lineno, cm["what"], cm["old"], cm["new"]))
            else:
                om = _CTX_OLD_RE.match(s)
                if om is not None:
                    what = f"tracing context [{om['i']}]"
                    found.append(("global-state-changed", lineno, what, om["old"], om["new"]))
        elif section.startswith("static"):
            nb = _NOW_BEFORE_RE.match(s)
            if nb is not None:
                kn, ko = _split_kwargs(nb["new"]), _split_kwargs(nb["old"])
                if section == "static-kwargs" and kn is not None and ko is not None:
                    for k in dict.fromkeys([*ko, *kn]):
                        if kn.get(k) != ko.get(k):
                            found.append(("constant-changed", lineno, k, ko.get(k), kn.get(k)))
                else:
                    what = "static kwargs" if section == "static-kwargs" else "static args"
                    found.append(("constant-changed", lineno, what, nb["old"], nb["new"]))
    rule: str | None
    if recreated:
        rule = "object-recreated"
    elif first:
        rule = None
    elif found:
        rule = first_cause([f[0] for f in found])
    else:
        rule = "retracing"
    named = fn if fn is not None else "?"
    return Explanation(
        fn,
        site,
        first,
        recreated,
        rule,
        tuple([ValueChange(named, w, o, n, site, source, ln) for _, ln, w, o, n in found]),
        cost,
    )


#: the first letters of the lines that head a block's parts (:func:`explain_block`)
_HEAD_LETTERS: Final = frozenset("nbfdTDc")


def _section_of(s: str) -> str:
    """The part of a block a stripped line heads ("" if none)."""
    if s.startswith("different input types"):
        return "types"
    if s.startswith("different input pytree"):
        return "pytree"
    if s.startswith(("Tracing context doesn't match", "different tracing context")):
        return "context"
    if s.startswith("different value of static kwargs"):
        return "static-kwargs"
    if s.startswith("different value of static args"):
        return "static-args"
    if s.startswith(("Debug info doesn't match", "cache miss explanation unavailable")):
        return "other"
    return ""


def _is_continuation(raw: str) -> bool:
    # (not all blank: what a stripped copy's truth said, without the copy)
    return raw[:1] in (" ", "\t") and not raw.isspace()


#: the line after which a log of bare JAX messages with no time stamp so far is taken to have none
_LOOK_FOR_STAMPS: Final = 1000


class JaxDecoder:
    """Decoder of one JAX log (see the module's docstring for what its lines mean)."""

    #: only looked up, never iterated: the order its entries came in makes no difference
    #: (a worker that read a later part of the log learns them in another order), and a
    #: worker that lacks some the parent learnt may take over (what it then looks up and
    #: misses is checked against the parent's: parsers._checkpoint.record_misses)
    UNORDERED_STATE: ClassVar[frozenset[str]] = frozenset(
        {"_function_of", "_user_functions", "_eager_modules"}
    )
    #: a part begins at an explanation's first line when one comes soon after its split
    #: (see :mod:`._parallel`): a worker begun between an explanation and the compilation
    #: it explains takes the function for an eager operation (it never saw it named), keeps
    #: the module among the eager ones, and never meets the parent (a log of a new
    #: 8,000-character function per compilation, 800 MB: the parent read the worker's part
    #: itself, 36 s where two processes take 13)
    PART_SEAMS: ClassVar[tuple[bytes, ...]] = (b"TRACING CACHE MISS",)
    #: the parent's share of the log with two processes (see :mod:`._parallel`): the parent
    #: builds the timeline of every event, and a JAX log's events cost it more than a
    #: worker's decoding of their lines, so it leaves the worker nearly all (the
    #: instructions of each process's reading, counted on 24 MB of the bench log: parent
    #: and worker 4.61 and 3.17 G at 0.3, 4.40 and 3.82 at 0.15, 4.27 and 4.26 at 0.05;
    #: once the parent made the events it takes back in C, 3.80 and 4.01 at 0.1, 3.84 and
    #: 3.92 at 0.12, 3.88 and 3.84 at 0.14; once a worker encoded its events in half the
    #: instructions, 3.65 and 3.44 at 0.14, 3.47 and 3.59 at 0.1, 3.51 and 3.51 at 0.12;
    #: once events were made by an __init__ in C, 3.41 and 3.23 at 0.12, 3.35 and 3.33 at
    #: 0.09; once named tuples were made in C and types read without a pattern, 3.28 and
    #: 3.19 at 0.09, 3.25 and 3.24 at 0.075; once a block's lines were read without
    #: patterns and handlers called directly, 3.21 and 3.13 at 0.075).  Counted since on
    #: 48 MB: a log is read by two processes from 32 MiB on, and the share that splits the
    #: work evenly grows with the size, the parent's fixed work weighing less (at 0.06,
    #: the worker had 2.91 G against 2.82 at 24 MB, 4.06 against 3.64 at 32 MB): at 48 MB,
    #: parent and worker 5.45 and 6.17 G at 0.08, 5.51 and 6.05 at 0.1, 5.64 and 5.80 at
    #: 0.14, 5.70 and 5.69 at 0.16, 5.76 and 5.54 at 0.18; once an unstamped prefix was read
    #: without a pattern and packed chunks were no longer compressed, 5.04 and 5.76 at 0.11,
    #: 5.19 and 5.44 at 0.16, 5.24 and 5.31 at 0.18, 5.27 and 5.25 at 0.19, 5.30 and 5.17
    #: at 0.2.  Instructions, not time: the parent's run slower, and its reading took 0.4-1.8
    #: s of CPU more than the worker's on 250 MB at 0.19, within 0.3 s at 0.14 (the whole
    #: run 6.5 % less wall, five rounds in turns; 48 MB: 5 % less; 2026-12-02).  Once a
    #: worker's batches were packed in C (the parent's taking of an event the cheaper), its
    #: reading of 250 MB took 2.12-2.27 s of CPU against the worker's 2.39-2.41 at 0.14, the
    #: same at 0.2 (2.17 and 2.19, 2.22 and 2.22; the reading's wall 2.42-2.45 -> 2.22-2.34
    #: s), more from 0.23 (2.24 against 2.12).  With the decoding cheaper (the late morning's
    #: round: the worker's part the more), the parent's 1.85-1.87 s against the worker's
    #: 1.72-1.74 at 0.2, 1.80-1.82 against 1.79-1.80 at 0.17 (the reading 1.85-1.87 -> 1.82-1.83
    #: s), the worker the longer at 0.16
    PARENT_SHARE: ClassVar[float] = 0.17

    def __init__(self, path: str) -> None:
        self.path = path
        self.continuing = False
        self._clock = Clock()
        self._t: float | None = None  # the clock's time of the last stamped line
        self._stamped = False
        self._started = False
        self._block: list[tuple[int, str]] = []
        self._block_t: float | None = None
        self._block_msg = ""
        self._explaining = False
        #: the functions an explanation named, and the modules compiled eagerly, each by
        #: :func:`held`; the function each module compiles, from Compiling lines ("" for a
        #: long module's where it is the one its name gives: function_name)
        self._user_functions: MutableSet[str | int] = set()
        self._function_of: MutableMapping[str | int, str] = {}
        self._eager_modules: MutableSet[str | int] = set()
        self._current: CompileKey | None = None
        self._cache_on = False
        self._cache_off_here = False
        self._flags_here: set[tuple[str, bool]] = set()
        self._lru: tuple[CacheLookup, str] | None = None  # pending lookup, its entry
        self._bare = False  # the JAX lines carry no logging prefix
        self._gave_up = False  # bare JAX lines and no stamp in many lines: stop looking

    # -- the driver's interface ----------------------------------------------------------
    @property
    def wants_skipped(self) -> SkipMode:
        return "none" if self._stamped or self._gave_up else "all"

    def skipped(self, lineno: int, raw: str) -> None:
        # the first time stamp of the log is t = 0; a log whose JAX lines carry no stamp
        # (bare messages) has no times to give, so its other lines are not looked at
        if self._stamped or self._gave_up:
            return
        # (by the line's number, not by a count of lines looked at: a worker that starts
        # in the middle of a log gives up at its first line, as the parent did, and their
        # states can meet)
        if self._bare and lineno > _LOOK_FOR_STAMPS:
            self._gave_up = True
            return
        if raw[:1].isalnum():
            pl = split_pylog(raw)
            if pl.seconds is not None:
                self._tick(pl)
                self._stamped = True

    def finish(self) -> Iterator[TypedEvent]:
        out: list[TypedEvent] = []
        if self.continuing:
            out.extend(self._close_block())
        out.extend(self._flush_lru())
        return iter(out)

    def decode(self, lineno: int, raw: str) -> Decoded:
        raw = raw.rstrip("\r\n")
        closed: list[TypedEvent] | None = None  # (a block's events, which come first)
        if self.continuing:
            if _is_continuation(raw) and len(self._block) < MAX_BLOCK_LINES:
                self._block.append((lineno, raw))
                return RECOGNIZED
            closed = self._close_block()
        pl = split_pylog(raw)
        if pl.seconds is not None:
            self._stamped = True
        elif not self._stamped and pl.level is None:
            self._bare = True  # JAX's own lines are bare: no clock to take from other lines
            if lineno > _LOOK_FOR_STAMPS:
                # (given up here as at the next skipped line, which would not be looked at:
                # a worker whose part holds no skipped line before its checkpoints gives up
                # as the reader before it did, and their states can meet)
                self._gave_up = True
        t = self._t if pl.seconds is None else self._tick(pl)
        sp = new_span(self.path, lineno, raw, t)
        status, events, problem = self._message(pl, sp)
        if status == "recognized" and not self._started:
            self._started = True
            events = [ProcessStarted(sp, None, FRAMEWORK, None, new=False), *events]
        # (the message's own list as it is, most often: no list made and extended per line)
        out = events
        if closed:
            closed.extend(events)
            out = closed
        if status == "recognized":
            return recognized(out)
        if status == "malformed":
            return Decoded("malformed", tuple(out), problem)
        return Decoded("unrecognized", tuple(out)) if out else UNRECOGNIZED

    # -- helpers -------------------------------------------------------------------------
    def _tick(self, pl: PyLog) -> float | None:
        """The time of a stamped line; a line without a stamp has the time of the last one
        (``self._t``, what the clock would say)."""
        clock = self._clock
        self._t = clock.relative(clock.absolute(pl.prefix()))
        return self._t

    def _record(
        self,
        kind: str,
        sp: Span,
        module: str | None = None,
        hash_: str | None = None,
        detail: dict[str, Any] | None = None,
    ) -> Event:
        """The record of ``sp``'s message; ``detail``, its fields in the order the report
        writes them, a new dict of the caller's (not keyword arguments: compiled code calls
        a function that takes ``**`` through the interpreter's generic call, about 8,000
        instructions)."""
        return new_event(
            kind, sp.source, sp.line, sp.t, sp.text, module, hash_, {} if detail is None else detail
        )

    def _key(
        self, fn: str | None, module: str | None, cache_key: str | None = None, eager: bool = False
    ) -> CompileKey:
        return compile_key((fn, module, cache_key, eager))

    def _key_of_module(self, module: str, cache_key: str | None = None) -> CompileKey:
        h = held(module)
        fn = self._function_of.get(h) or _one_copy(function_name(module))
        return compile_key((fn, module, cache_key, h in self._eager_modules))

    def _is_eager(self, fn: str) -> bool:
        if held(fn) in self._user_functions:
            return False
        if self._explaining:
            return True
        return fn.startswith("_") or fn in _PRIMITIVES

    def _flush_lru(self) -> list[TypedEvent]:
        if self._lru is None:
            return []
        ev, _ = self._lru
        self._lru = None
        return [ev]

    # -- messages -> events --------------------------------------------------------------
    def _message(self, pl: PyLog, sp: Span) -> tuple[str, list[TypedEvent], str | None]:
        """The events of a message, by the first of these tests that it passes (each
        handler called here: compiled code calls a method it names directly, where a bound
        method handed back was made and called as a Python object for every message)."""
        msg = pl.message
        tests = literal_mask(msg, _TESTS)  # (which of them it holds, in one pass)
        if tests & _T_MISS:
            return self._on_tracing_miss(pl, sp)
        if tests & _T_TRACED or msg.startswith("Finished tracing"):
            return self._on_traced(pl, sp)
        if tests & _T_COMPILING and (
            tests & _T_GLOBAL
            or re.search(r"Compiling \S+ \(\d+", msg)
            or re.search(r"Compiling \w+\(", msg)
        ):
            return self._on_compiling(pl, sp)
        if tests & _T_LOWERED:
            return self._on_lowered(pl, sp)
        if tests & _T_COMPILED:
            return self._on_compiled(pl, sp)
        if tests & _T_PERSISTENT:
            return self._on_persistent(pl, sp)
        if tests & _T_LRU:
            return self._on_lru(pl, sp)
        if tests & _T_OFF:
            return self._on_cache_off(pl, sp)
        if tests & _T_NOT_WRITTEN:
            return self._on_not_written(pl, sp)
        if tests & _T_TOOK:
            return self._on_took(pl, sp)
        if tests & _T_COMPONENT:
            return self._on_component(pl, sp)
        if tests & _T_FLAG:
            return self._on_flag(pl, sp)
        if tests & _T_OPTIONS:
            return self._on_options(pl, sp)
        return "unrecognized", [], None

    def _on_tracing_miss(self, pl: PyLog, sp: Span) -> tuple[str, list[TypedEvent], str | None]:
        out = self._flush_lru()
        if miss_header(pl.message) is None:
            return (
                "malformed",
                out,
                "malformed 'TRACING CACHE MISS' line (expected "
                "'TRACING CACHE MISS at <call site>:')",
            )
        self._explaining = True
        self._block = [(sp.line, sp.text)]
        self._block_t = sp.t
        self._block_msg = pl.message
        self.continuing = True
        return "recognized", out, None

    def _close_block(self) -> list[TypedEvent]:
        block, self._block = self._block, []
        self.continuing = False
        if not block:
            return []
        lineno, header = block[0]
        ex = explain_block(block, self.path, self._block_msg)
        sp = new_span(self.path, lineno, header, self._block_t)
        lines = tuple(n for n, _ in block)
        reason = "\n".join(r for _, r in block)
        fn = ex.function
        if fn == "<unknown>":
            # JAX's explanation of its own anonymous internals (inside jnp.argmax, say)
            rec = self._record(
                "tracing-cache-miss", sp, None, None, {"function": None, "lines": list(lines)}
            )
            return [FrameworkNote(sp, rec, "tracing-miss-unnamed", None, {"lines": lines})]
        if fn is not None:
            self._user_functions.add(held(fn))
        key = self._key(fn, module_of(f"jit({fn})")[1] if fn is not None else None)
        detail: dict[str, Any] = {
            "function": fn,
            "call_site": ex.call_site,
            "rule": ex.rule,
            "first": ex.first and not ex.recreated,
            "lines": list(lines),
        }
        if ex.cost_ms is not None:
            detail["cost_ms"] = ex.cost_ms
        rec = self._record("tracing-cache-miss", sp, key.module, None, detail)
        out: list[TypedEvent] = [CacheLookup(sp, rec, "tracing", "miss", key if fn else None)]
        if ex.rule is not None and fn is not None:
            out.append(
                RecompileReason(
                    sp,
                    rec,
                    key,
                    ex.rule,
                    reason,
                    ex.changes,
                    ex.call_site,
                    lines,
                    keep=False,
                )
            )
        return out

    def _on_traced(self, pl: PyLog, sp: Span) -> tuple[str, list[TypedEvent], str | None]:
        out = self._flush_lru()
        m = traced_fields(pl.message)
        if m is None:
            return (
                "malformed",
                out,
                "malformed 'Finished tracing' line (expected "
                "'Finished tracing <function> for jit in <seconds> sec')",
            )
        fn, wrapper, printed = m
        secs = _seconds(printed)
        _, module = module_of(f"{wrapper or 'jit'}({fn})")
        key = self._key(fn, module, eager=self._is_eager(fn))
        rec = self._record("trace-end", sp, module, None, {"function": fn, "duration_s": secs})
        out.append(FrameworkNote(sp, rec, "traced", key, {"duration_s": secs}))
        if secs is None:
            return "malformed", out, f"'Finished tracing' line with a bad duration {printed!r}"
        return "recognized", out, None

    def _on_compiling(self, pl: PyLog, sp: Span) -> tuple[str, list[TypedEvent], str | None]:
        out = self._flush_lru()
        m = compiling_fields(pl.message)
        if m is None:
            return (
                "malformed",
                out,
                "malformed 'Compiling' line (expected "
                "'Compiling jit(<function>) with global shapes and types (...)')",
            )
        name, args = m
        fn, module = module_of(name)
        eager = self._is_eager(fn)
        key = self._key(fn, module, eager=eager)
        h = held(module)
        # (a long one held by its digest: "" when its function is the one its name gives,
        # not held again; an entry all the same, so that the module is not looked up in
        # vain in a worker, which notes each such look-up)
        self._function_of[h] = "" if type(h) is int and fn == function_name(module) else fn
        if eager:
            self._eager_modules.add(h)
        else:
            self._eager_modules.discard(h)
        self._current = key
        self._cache_off_here = False
        self._flags_here = set()
        rec = self._record(
            "compile-begin", sp, module, None, {"function": fn, "arguments": args, "eager": eager}
        )
        out.append(CompileStarted(sp, rec, key, cache_visible=self._explaining, arguments=args))
        return "recognized", out, None

    def _on_lowered(self, pl: PyLog, sp: Span) -> tuple[str, list[TypedEvent], str | None]:
        m = in_seconds(pl.message, _LOWERED_PREFIX)
        if m is None:
            return (
                "malformed",
                [],
                "malformed 'Finished jaxpr to MLIR module conversion' "
                "line (expected '... <name> in <seconds> sec')",
            )
        _, module = module_of(m[0])
        secs = _seconds(m[1])
        rec = self._record("lowering-end", sp, module, None, {"duration_s": secs})
        out: list[TypedEvent] = [CompileActivity(sp, rec)]
        if secs is None:
            return "malformed", out, f"lowering line with a bad duration {m[1]!r}"
        return "recognized", out, None

    def _on_compiled(self, pl: PyLog, sp: Span) -> tuple[str, list[TypedEvent], str | None]:
        out = self._flush_lru()
        m = in_seconds(pl.message, _COMPILED_PREFIX)
        secs = _seconds(m[1]) if m is not None else None
        nm = _COMPILED_NAME_RE.search(pl.message) if m is None else None
        name = m[0] if m is not None else nm["name"] if nm is not None else None
        key: CompileKey | None = None
        if name is not None:
            _, module = module_of(name)
            cur = self._current
            if cur is not None and cur.module == module and cur.function and not cur.cache_key:
                # the key of the compilation its Compiling line began: the function and
                # whether it is eager are what that line put in the tables (read back, each
                # was a call, in a worker through the recording tables' Python)
                key = cur
            else:
                key = self._key_of_module(module)
            rec = self._record("compile-end", sp, module, None, {"duration_s": secs})
            out.append(CompileFinished(sp, rec, key, secs))
        self._current = None
        if m is None:
            return (
                "malformed",
                out,
                "malformed 'Finished XLA compilation' line (expected "
                "'Finished XLA compilation of <name> in <seconds> sec')",
            )
        if secs is None:
            return (
                "malformed",
                out,
                f"'Finished XLA compilation' line with a bad duration {m[1]!r}",
            )
        return "recognized", out, None

    def _on_persistent(self, pl: PyLog, sp: Span) -> tuple[str, list[TypedEvent], str | None]:
        msg = pl.message
        if _P_INIT_AT in msg and (im := _P_INIT_RE.search(msg)) is not None:
            self._cache_on = True
            path = im["path"]
            rec = self._record("persistent-cache-init", sp, None, None, {"path": path})
            return (
                "recognized",
                [ProcessConfig(sp, rec, f"jax_compilation_cache_dir={path}", True)],
                None,
            )
        outcome: CacheOutcomeKind
        if _P_MISS_AT in msg and (m := _P_MISS_RE.search(msg)) is not None:
            outcome = "miss"
        elif _P_HIT_AT in msg and (m := _P_HIT_RE.search(msg)) is not None:
            outcome = "hit"
        elif _P_WRITE_AT in msg and (m := _P_WRITE_RE.search(msg)) is not None:
            outcome = "write"
        else:
            if "PERSISTENT COMPILATION CACHE MISS" in msg or "compilation cache hit" in msg:
                return (
                    "malformed",
                    self._flush_lru(),
                    "malformed persistent-cache line "
                    "(expected \"... for '<module>' with key '<key>'\")",
                )
            return "unrecognized", [], None
        module, entry = m["mod"], m["key"]
        out: list[TypedEvent] = []
        if self._lru is not None:
            pending, pending_entry = self._lru
            self._lru = None
            if pending_entry != entry or pending.outcome != outcome:
                out.append(pending)
        key = self._key_of_module(module, entry)
        if outcome == "miss" and (
            self._cache_off_here or (pl.level == "debug" and not self._cache_on)
        ):
            # JAX logs this DEBUG miss even when no persistent cache is configured
            return "recognized", out, None
        self._cache_on = True
        rec = self._record(f"persistent-cache-{outcome}", sp, module, entry)
        out.append(CacheLookup(sp, rec, "persistent", outcome, key, entry))
        return "recognized", out, None

    def _on_lru(self, pl: PyLog, sp: Span) -> tuple[str, list[TypedEvent], str | None]:
        m = lru_fields(pl.message)
        if m is None:
            return "unrecognized", [], None
        out = self._flush_lru()
        entry = m[1]
        module = entry.rsplit("-", 1)[0] if "-" in entry else entry
        self._cache_on = True
        outcome: CacheOutcomeKind = "hit" if m[0] == "hit" else "miss"
        rec = self._record(f"persistent-cache-{outcome}", sp, module, entry)
        key = self._key_of_module(module, entry)
        self._lru = (CacheLookup(sp, rec, "persistent", outcome, key, entry), entry)
        return "recognized", out, None

    def _on_cache_off(self, pl: PyLog, sp: Span) -> tuple[str, list[TypedEvent], str | None]:
        self._cache_off_here = True
        rec = self._record("persistent-cache-off", sp)
        return "recognized", [CacheLookup(sp, rec, "persistent", "disabled", self._current)], None

    def _on_not_written(self, pl: PyLog, sp: Span) -> tuple[str, list[TypedEvent], str | None]:
        m = _NOT_WRITTEN_RE.search(pl.message)
        if m is None:
            return "malformed", [], "malformed 'Not writing persistent cache entry' line"
        detail: dict[str, Any]
        if m["mod"] is not None:
            detail = {
                "reason": "compile-time",
                "min_compile_time_s": _seconds(m["min"]),
                "compile_time_s": _seconds(m["took"]),
            }
            module: str | None = m["mod"]
        elif m["key"] is not None:
            detail = {"reason": "size", "size": int(m["size"]), "threshold": int(m["thr"])}
            module = m["key"].rsplit("-", 1)[0]
        else:
            detail = {"reason": m["why"]}
            module = self._current.module if self._current is not None else None
        rec = self._record("persistent-cache-not-written", sp, module, None, dict(detail))
        out: list[TypedEvent] = [CompileActivity(sp, rec)]
        if not self._cache_off_here:
            key = self._key_of_module(module) if module else self._current
            out.append(FrameworkNote(sp, None, "persistent-cache-not-written", key, detail))
        return "recognized", out, None

    def _on_took(self, pl: PyLog, sp: Span) -> tuple[str, list[TypedEvent], str | None]:
        m = _TOOK_RE.search(pl.message)
        if m is None:
            return "unrecognized", [], None
        rec = self._record(
            "compile-time", sp, m["mod"], None, {"compile_time_s": _seconds(m["took"])}
        )
        return "recognized", [CompileActivity(sp, rec, keep=False)], None

    def _on_component(self, pl: PyLog, sp: Span) -> tuple[str, list[TypedEvent], str | None]:
        m = _COMPONENT_RE.search(pl.message)
        if m is None:
            return (
                "malformed",
                [],
                "malformed 'get_cache_key' line (expected "
                "'get_cache_key hash of serialized <component>: <sha256>')",
            )
        component, h = m["c"], m["h"].lower()
        cumulative = m["kind"] == "after serializing"
        module = self._current.module if self._current is not None else None
        rec = self._record(
            "cache-key-component", sp, module, h, {"component": component, "cumulative": cumulative}
        )
        note = "cache-key-cumulative" if cumulative else "cache-key-component"
        ev = FrameworkNote(
            sp, rec, note, self._current, {"component": component, "hash": h}, keep=not cumulative
        )
        return "recognized", [ev], None

    def _on_flag(self, pl: PyLog, sp: Span) -> tuple[str, list[TypedEvent], str | None]:
        m = _FLAG_RE.search(pl.message)
        if m is None:
            return "malformed", [], "malformed 'XLA flag in cache key' line"
        flag, included = m["flag"], m["not"] is None
        if (flag, included) in self._flags_here:
            return "recognized", [], None  # JAX prints each flag twice per key
        self._flags_here.add((flag, included))
        module = self._current.module if self._current is not None else None
        rec = self._record("cache-key-flag", sp, module, None, {"flag": flag, "included": included})
        ev = FrameworkNote(
            sp, rec, "cache-key-flag", self._current, {"flag": flag, "included": included}
        )
        return "recognized", [ev], None

    def _on_options(self, pl: PyLog, sp: Span) -> tuple[str, list[TypedEvent], str | None]:
        m = options_fields(pl.message)
        if m is None:
            return "unrecognized", [], None
        detail = {"num_replicas": m[0], "num_partitions": m[1], "device_assignment": m[2]}
        module = self._current.module if self._current is not None else None
        rec = self._record("compile-options", sp, module, None, dict(detail))
        return (
            "recognized",
            [FrameworkNote(sp, rec, "compile-options", self._current, detail)],
            None,
        )
