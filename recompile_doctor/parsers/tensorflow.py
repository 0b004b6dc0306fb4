"""The TensorFlow log format: tf.function / XLA lines -> typed events.

What TensorFlow (2.x, ``jit_compile=True`` or auto-clustering on CPU/GPU) writes about its
compilations, and what it means:

* ``Compiled <cluster> <k> times, compile time: <us> us, cumulative: ...``
  (``device_compilation_profiler.cc``, ``TF_CPP_VMODULE=device_compilation_profiler=1``): one
  XLA compilation of a cluster, with its duration.  Without that module, the device
  compiler's timer ``Compilation of XLA executable time: ... (<us> us)`` ends the
  compilation, and without both, the CPU backend's ``Compiling [<module>] for CPU using JIT
  time`` does.
* The per-call cluster signature (``device_compiler=3``): ``DeviceCompiler::Compile``,
  ``num_inputs=``, one ``<i>: kind=... type=... shape=[...]`` line per argument,
  ``DeviceCompilationClusterSignature: <cluster>,<dtype> [<shape>],...``,
  ``Compilation cache entry hit: <0|1|2>`` (the in-memory cluster cache:
  uncompiled / compiling / compiled), then ``Instantly compiling`` or ``Already Compiled``.
  A compiled signature that differs from the one of the function's previous compilation
  gives a :class:`RecompileReason` with the old and new argument types.
* ``N out of the last M calls to <function ...> triggered tf.function retracing``
  (Python ``WARNING:tensorflow:``): TF's retracing warning, printed after the call that
  traced.
* ``Compiled cluster using XLA!`` (once per process), ``HloModule dump enabled ...``.

Function names: TF's cluster ``__inference_<fn>_<n>[attrs]`` and XLA's module
``a_inference_<fn>_<n>__...`` are both ``<fn>``; ``<n>`` changes on every retrace.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, MutableMapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any, ClassVar, Final

from recompile_doctor.bounded import Kept
from recompile_doctor.compiled_modules import runs_compiled
from recompile_doctor.events import (
    CacheLookup,
    CompileFinished,
    CompileKey,
    CompileStarted,
    FrameworkNote,
    ProcessStarted,
    RecompileReason,
    Span,
    TypedEvent,
)
from recompile_doctor.microseconds import round6
from recompile_doctor.model import Event, ValueChange
from recompile_doctor.name_digest import HELD_CHARS, held, name_number
from recompile_doctor.parsers._digest_table import DigestTable
from recompile_doctor.parsers._format import (
    UNRECOGNIZED,
    Decoded,
    SkipMode,
    new_run,
)
from recompile_doctor.parsers._lazy_re import lazy_re
from recompile_doctor.parsers._memo import memo
from recompile_doctor.parsers._names import function_name
from recompile_doctor.parsers._spans import native_in_use
from recompile_doctor.parsers._tuples import new_event, new_span, recognized

# detection's half of the format (the registry entry and sniff are this module's names too)
from recompile_doctor.parsers.tensorflow_detect import (  # noqa: F401
    ANCHORS,
    FRAMEWORK,
    HOW_TO_LOG,
    TENSORFLOW,
    sniff,
)
from recompile_doctor.rules import types_change_rule

#: (a float tested finite by comparisons, natively: no call of math.isfinite)
_INF: Final = float("inf")

# -- line prefixes ------------------------------------------------------------------------
_NUM = r"\d{1,20}"
#: absl/glog: ``I0000 00:00:1795374604.570608   14320 device_compiler.h:208] ``, read as
#: its head (level, month and day, hours and minutes: :data:`_ABSL_HEAD`) and the rest
#: (seconds, thread, source file and line: :data:`_ABSL_TAIL`)
_ABSL_HEAD: Final = lazy_re(r"[IWEFV]\d{4} (\d\d):(\d\d):")
_ABSL_HEAD_LEN: Final = 12
#: the rest's source: thread and file and line (``   14320 device_compiler.h:208]``)
_ABSL_SOURCE = rf" +{_NUM} ([^\s:\]]+):\d{{1,9}}\]"
_ABSL_TAIL: Final = lazy_re(rf"(\d{{1,12}}(?:\.\d{{1,9}})?){_ABSL_SOURCE} ?")
_ABSL_SOURCE_RE: Final = lazy_re(_ABSL_SOURCE)
#: TF before absl logging: ``2024-03-12 17:55:10.637117: I tensorflow/.../file.cc:186] ``
_TF_OLD_RE: Final = lazy_re(
    r"(\d{4})-(\d\d)-(\d\d) (\d\d):(\d\d):(\d\d(?:\.\d{1,9})?): ([IWEF])(?: +\d{1,20})? "
    r"([^\s:\]]+):\d{1,9}\] ?"
)
#: Python logging through TF's handler: ``WARNING:tensorflow:``
_PY_RE: Final = lazy_re(r"(?:DEBUG|INFO|WARNING|ERROR|CRITICAL|FATAL):tensorflow:")
_STAMP_START: Final = lazy_re(r"[IWEFV]\d{4} |\d{4}-\d\d-\d\d ")


class _Prefix:
    """A line's time and source file (a plain class: a native object in the compiled
    build, where a named tuple's ``__new__`` ran in Python for every line)."""

    __slots__ = ("seconds", "source_file")

    def __init__(self, seconds: float | None, source_file: str | None) -> None:
        self.seconds = seconds
        self.source_file = source_file


_NO_PREFIX: Final = _Prefix(None, None)


#: absl heads read so far (:data:`_ABSL_HEAD`, ``I0000 00:00:``) -> the seconds of their
#: hours and minutes, or None for a text that is no head
_ABSL_HEADS_KEPT: Final[Kept[str, int | None]] = Kept()
_ABSL_HEADS: Final = _ABSL_HEADS_KEPT.table


def _absl_head(head: str) -> int | None:
    """The seconds of the hours and minutes of absl head ``head`` (None: not a head), read
    once per head (TensorFlow writes ``I0000 00:00:`` and the seconds since the epoch)."""
    got = _ABSL_HEADS.get(head, -1)
    if got == -1:
        m = _ABSL_HEAD.fullmatch(head)
        got = _ABSL_HEADS_KEPT.put(head, None if m is None else int(m[1]) * 3600 + int(m[2]) * 60)
    return got


#: absl sources read so far (:data:`_ABSL_SOURCE`) -> their file, "" for a text that is
#: none (a table of :class:`~recompile_doctor.bounded.Kept`)
_ABSL_SOURCES_KEPT: Final[Kept[str, str]] = Kept()
_ABSL_SOURCES: Final = _ABSL_SOURCES_KEPT.table


def _absl_source(text: str) -> str:
    m = _ABSL_SOURCE_RE.fullmatch(text)
    return _ABSL_SOURCES_KEPT.put(text, "" if m is None else m[1])


def absl_rest(line: str) -> tuple[str, str, int] | None:
    """What :data:`_ABSL_TAIL` reads of ``line`` from its 13th character (the seconds, the
    source file, where the message starts), or None where it does not match; read by str
    methods, the source checked by its own pattern once per distinct source (a test holds
    the two to each other).  The seconds end at the first space (the pattern's digits and
    dot cannot be one), the source at the first ``]`` after them (nothing in it can be)."""
    sp = line.find(" ", _ABSL_HEAD_LEN)
    if sp < 0:
        return None
    seconds = line[_ABSL_HEAD_LEN:sp]
    dot = seconds.find(".")
    whole = seconds if dot < 0 else seconds[:dot]
    if not (0 < len(whole) <= 12 and whole.isdecimal()):
        return None
    if dot >= 0 and not (0 < len(seconds) - dot - 1 <= 9 and seconds[dot + 1 :].isdecimal()):
        return None
    e = line.find("]", sp) + 1
    if e == 0:
        return None
    source = line[sp:e]
    file = _ABSL_SOURCES.get(source)
    if file is None:
        file = _absl_source(source)
    if not file:
        return None
    return seconds, file, (e + 1 if line[e : e + 1] == " " else e)


def _absl_rest_by_pattern(line: str) -> tuple[str, str, int] | None:
    tail = _ABSL_TAIL.match(line, _ABSL_HEAD_LEN)
    return None if tail is None else (tail[1], tail[2], tail.end())


#: compiled (mypyc), an absl prefix's rest is read by :func:`absl_rest`, in less than half
#: the instructions its pattern's match and groups take; interpreted, by the pattern, the
#: quicker there
_BY_STR: Final = runs_compiled(__file__)


def _absl_tail_py(line: str) -> tuple[float, str, int] | None:
    """The seconds (as ``float`` reads them), source file and message start of an absl
    prefix's rest (:func:`absl_rest`, or its pattern where that is quicker), or None."""
    rest = absl_rest(line) if _BY_STR else _absl_rest_by_pattern(line)
    return None if rest is None else (float(rest[0]), rest[1], rest[2])


#: the C module's twin of :func:`_absl_tail_py` (``parsers/_native.c``: a line's seconds,
#: source and message start in one call, in a fifth of the instructions; a line that is not
#: ASCII, or whose source text is new, is left to :func:`_absl_tail_py`), or None where the
#: module is not built
_NATIVE: Final = native_in_use()
_ABSL_TAIL_C: Final[
    Callable[
        [str, dict[str, str], Callable[[str], tuple[float, str, int] | None]],
        tuple[float, str, int] | None,
    ]
    | None
] = None if _NATIVE is None else _NATIVE.absl_tail


def _split(line: str) -> tuple[_Prefix, str]:
    """The line's prefix (time, source file) and its message.

    An absl prefix is read in two parts: its head once per head (:func:`_absl_head`), the
    rest by :data:`_ABSL_TAIL` (one pattern over the whole prefix, its hours and minutes
    read from its groups on every line, took a fifth of the reading of a TensorFlow log;
    this, four fifths of that; in C, where the C module is built: :data:`_ABSL_TAIL_C`)."""
    c = line[:1]
    if c in "IWEFV" and (base := _absl_head(line[:_ABSL_HEAD_LEN])) is not None:
        rest = (
            _absl_tail_py(line)
            if _ABSL_TAIL_C is None
            else _ABSL_TAIL_C(line, _ABSL_SOURCES, _absl_tail_py)
        )
        if rest is not None:
            seconds, file, end = rest
            s = base + seconds
            # (finite: one native comparison, NaN fails it; math.isfinite was a call)
            return _Prefix(s if -_INF < s < _INF else None, file), line[end:]
    m = _TF_OLD_RE.match(line) if c.isdigit() else None
    if m is not None:
        try:
            day = datetime(int(m.group(1)), int(m.group(2)), int(m.group(3)), tzinfo=UTC)
            s = day.timestamp() + int(m.group(4)) * 3600 + int(m.group(5)) * 60
            s += float(m.group(6))
        except ValueError:
            return _Prefix(None, m.group(8)), line[m.end() :]
        return _Prefix(s, m.group(8)), line[m.end() :]
    m = _PY_RE.match(line)
    if m is not None:
        return _NO_PREFIX, line[m.end() :]
    return _NO_PREFIX, line


# -- messages -----------------------------------------------------------------------------
_PROFILER_RE: Final = lazy_re(
    r"Compiled (?P<cluster>\S+) (?P<count>\d{1,18}) times, compile time: "
    r"(?P<us>\d{1,18}) us, cumulative: (?P<cum>\d{1,18}) us"
)
_MEGAMORPHIC_RE: Final = lazy_re(
    r"Marking (?P<cluster>\S+) as megamorphic, compile_count=(?P<c>\d{1,18}) "
    r"execution_count=(?P<e>\d{1,18})"
)
_SIGNATURE_RE: Final = lazy_re(r"DeviceCompilationClusterSignature: (?P<sig>\S.*)$")
#: a cache line up to its signature, which runs to the end or to `` with request count
#: <n>`` at the end (:func:`cache_fields`)
_CACHE_HIT_RE: Final = lazy_re(r"Compilation cache entry hit: (?P<state>\d{1,3}) signature: (?=\S)")
_REQUEST_COUNT: Final = " with request count "
_INSTANT_RE: Final = lazy_re(r"Instantly compiling for signature: (?P<sig>\S.*)$")
_ALREADY_RE: Final = lazy_re(r"Already Compiled for signature: (?P<sig>\S.*)$")
_ARG_RE: Final = lazy_re(
    r"^(?P<i>\d{1,9}): kind=(?P<kind>\w+)(?: name=(?P<name>\S+))? type=(?P<type>\w+) "
    r"shape=\[(?P<shape>[-\d?, ]*)\]"
)
_NUM_INPUTS_RE: Final = lazy_re(r"^num_inputs=\d{1,9}$")
_XLA_FN_RE: Final = lazy_re(r"XlaCompiler::CompileFunction (?P<cluster>\S+)")
_CPU_START_RE: Final = lazy_re(r"^Compiling: (?P<module>\S+)$")
_CPU_JIT_RE: Final = lazy_re(
    r"^Compiling \[(?P<module>[^\]]+)\] for (?P<backend>\w+) using JIT time: .*?\((?P<us>[\d.]{1,24}) us\)"
)
_EXEC_TIMER_RE: Final = lazy_re(
    r"Compilation of XLA executable time: .*?\((?P<us>[\d.]{1,24}) us\)"
)
_RETRACE_RE: Final = lazy_re(
    r"(?P<n>\d{1,18}) out of the last (?P<m>\d{1,18}) calls to (?P<fn><.*?>) triggered "
    r"tf\.function retracing"
)
_PYFN_RE: Final = lazy_re(r"^<(?:function|bound method) (?P<qual>\S+?)(?: at 0x| of |>$)")
_DUMP_RE: Final = lazy_re(
    r"HloModule dump enabled with path prefix: (?P<prefix>.*?), suffix: (?P<suffix>.*)$"
)
_SERVICE_RE: Final = lazy_re(r"XLA service \S+ initialized for platform (?P<platform>[^(]+?) \(")
_SIG_ARG_RE: Final = lazy_re(r"(?P<type>[A-Za-z][\w]*) \[(?P<shape>[-\d?,]*)\]")

#: TF dtype names -> HLO element types
_HLO_TYPES: Final[dict[str, str]] = {
    "float": "f32",
    "double": "f64",
    "half": "f16",
    "bfloat16": "bf16",
    "int8": "s8",
    "int16": "s16",
    "int32": "s32",
    "int64": "s64",
    "uint8": "u8",
    "uint16": "u16",
    "uint32": "u32",
    "uint64": "u64",
    "bool": "pred",
    "complex64": "c64",
    "complex128": "c128",
}


def hlo_type(tf_dtype: str, shape: str) -> str:
    """``float`` + ``32,784`` -> ``f32[32,784]`` (unknown dtypes keep TF's name)."""
    return f"{_HLO_TYPES.get(tf_dtype, tf_dtype)}[{shape.replace(' ', '')}]"


def cluster_base(cluster: str) -> str:
    """``__inference_f_67[_XlaMustCompile=true,...]`` -> ``__inference_f_67``."""
    cut = cluster.find("[")
    return cluster[:cut] if cut > 0 else cluster


def id_held(cid: str, fn: str) -> str | tuple[str, str]:
    """Compile id ``cid`` of a compilation of function ``fn`` as the decoder keeps it for the
    function's next retracing warning: itself, or, longer than :data:`HELD_CHARS`, what it
    holds before and after the function's name (a cluster is named after its function: a
    log of a new function per compilation under 8,000-character names kept 8 kB a
    function).  :func:`id_of_held` makes the id again."""
    if len(cid) <= HELD_CHARS:
        return cid
    i = cid.find(fn)
    return cid if i < 0 else (cid[:i], cid[i + len(fn) :])


def id_of_held(kept: str | tuple[str, str] | None, fn: str) -> str | None:
    """The compile id :func:`id_held` kept of a compilation of ``fn`` (``fn``: the name the
    function is held by, so the one it was kept with)."""
    if kept is None or isinstance(kept, str):
        return kept
    return kept[0] + fn + kept[1]


def tf_function_name(name: str) -> str:
    """The user's function of a TF cluster or XLA module name: ``__inference_train_step_67``,
    ``__inference_train_step_67[...]`` and ``a_inference_train_step_67__...`` are
    ``train_step``; other names (auto-clustering's ``cluster_3``) stay as they are."""
    base = cluster_base(name)
    if base.startswith("__inference_"):
        base = "a" + base[1:]
    return function_name(base)


def cache_fields(msg: str) -> tuple[str, str, str | None] | None:
    """(state, signature, request count or None) of a ``Compilation cache entry hit: <state>
    signature: <signature>[ with request count <n>]`` message; None when it is not of that
    form.  The signature is cut with ``str`` methods: a lazy pattern took a step of the
    regex engine for each of its characters (signatures run to hundreds)."""
    m = _CACHE_HIT_RE.search(msg)
    if m is None:
        return None
    rest = msg[m.end() :]
    i = rest.rfind(_REQUEST_COUNT)
    n = rest[i + len(_REQUEST_COUNT) :] if i > 0 else ""
    if 0 < len(n) <= 18 and n.isdecimal():
        return m["state"], rest[:i], n
    return m["state"], rest, None


def _split_signature(sig: str) -> tuple[str, str]:
    """``<cluster>[attrs],float [32,784],...`` -> (cluster, ``float [32,784],...``)."""
    depth = 0
    for i, ch in enumerate(sig):
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        elif ch == "," and depth == 0:
            return sig[:i], sig[i + 1 :]
    return sig, ""


def _signature_args(args: str) -> tuple[str, ...]:
    return tuple([hlo_type(m.group("type"), m.group("shape")) for m in _SIG_ARG_RE.finditer(args)])


def _signature_parts(sig: str) -> tuple[str, str, tuple[str, ...] | None]:
    """(cluster, its arguments as TF writes them, their HLO types or None) of a signature:
    :func:`_split_signature`, then :func:`_signature_args` of the arguments."""
    cluster, args = _split_signature(sig)
    return cluster, args, (_signature_args(args) if args else None)


# (a function's signature is logged again at every call: read once while it is among the
# last ones; the signature and cache lines of one call name the same one)
_signature_of: Final = memo(_signature_parts, 1024)


def _read_argument(msg: str) -> tuple[int, str, str] | None:
    """(index, HLO type, name) of a ``<i>: kind=<kind>[ name=<name>] type=<dtype>
    shape=[<dims>]`` message (an unnamed argument is ``argument <i>``); None when it is not
    of that form."""
    m = _ARG_RE.match(msg)
    if m is None:
        return None
    i = int(m.group("i"))
    name = m.group("name") or f"argument {i}"
    return i, hlo_type(m.group("type"), m.group("shape")), name


# (a cluster's arguments are logged again, word for word, at each of its compilations)
_argument_of: Final = memo(_read_argument)


def classify(changes: Sequence[tuple[str, str]]) -> str:
    """The rule of a set of argument changes (old, new in HLO notation):
    :func:`recompile_doctor.rules.types_change_rule`."""
    return types_change_rule(changes)


def _us(text: str) -> float | None:
    try:
        v = float(text) / 1e6
    except ValueError:
        return None
    return v if -_INF < v < _INF else None


class _Bad(Exception):
    """A line that names a known message but does not fit it."""


@dataclass(slots=True, repr=False, eq=False)  # working state: never compared or shown
class _Block:
    """The per-call signature block of the device compiler."""

    args: dict[int, tuple[str, int, str]] = field(default_factory=dict)  # i -> hlo, line, name
    cluster: str | None = None
    arguments: str | None = None
    hlo_args: list[str] | None = None
    lines: list[int] = field(default_factory=list)
    requested: bool = False  # cache state 0: a compilation is requested


@dataclass(slots=True, repr=False, eq=False)  # working state: never compared or shown
class _Compile:
    """What the log said so far about the compilation under way."""

    cluster: str | None = None
    module: str | None = None
    arguments: str | None = None
    backend_us: float | None = None
    backend_span: Span | None = None
    line: int = 0


#: the branch of a message that is none of :meth:`TensorFlowDecoder._message`'s
_NO_BRANCH: Final = 18


def _branch_of(msg: str) -> int:
    """Which of :meth:`TensorFlowDecoder._message`'s branches ``msg`` takes: the number of
    the first of these tests it passes, in this order (:data:`_NO_BRANCH`: none)."""
    if "Compiled cluster using XLA!" in msg:
        return 0
    if " times, compile time: " in msg:
        return 1
    if " as megamorphic" in msg:
        return 2
    if "triggered tf.function retracing" in msg:
        return 3
    if msg.startswith("DeviceCompiler::Compile ") or msg == "DeviceCompiler::Compile":
        return 4
    if "num_inputs=" in msg:
        return 5
    if ": kind=" in msg:
        return 6
    if "DeviceCompilationClusterSignature: " in msg:
        return 7
    if "Compilation cache entry hit: " in msg:
        return 8
    if "Instantly compiling for signature: " in msg:
        return 9
    if "Already Compiled for signature: " in msg:
        return 10
    if "XlaCompiler::CompileFunction " in msg:
        return 11
    if " using JIT time: " in msg:
        return 12
    if msg.startswith("Compiling: "):
        return 13
    if "Compilation of XLA executable time: " in msg:
        return 14
    if msg == "Compilation finished":
        return 15
    if "HloModule dump enabled with path prefix" in msg:
        return 16
    if " initialized for platform " in msg:
        return 17
    return _NO_BRANCH


#: the branch of each message text met (:func:`_branch_of`): a TensorFlow log repeats most
#: of its messages word for word (an argument's, a signature's, "Compilation finished"), and
#: a text is looked up in one step where its tests took ten ``in`` searches on average, 6 %
#: of the reading of a TensorFlow log
_BRANCHES_KEPT: Final[Kept[str, int]] = Kept()
_BRANCHES: Final = _BRANCHES_KEPT.table


class TensorFlowDecoder:
    """Decoder of one TensorFlow log."""

    #: only looked up, never iterated: the order their entries came in makes no difference
    #: (a worker that read a later part of the log learns them in another order)
    UNORDERED_STATE: ClassVar[frozenset[str]] = frozenset({"_compiled_args", "_counts", "_last_id"})
    #: the method that ends a run (a cluster compiled again fewer times than before: see
    #: _emit_compile): the one place besides finish() that empties the tables above (only a
    #: reader from the start runs it: a worker fails first, ReadAlone)
    RUN_END: ClassVar[str] = "_end_run"
    #: the parent's share of the log with two processes (see :mod:`._parallel`; the
    #: instructions of each process's reading and the parent's after it, counted on 24 MB of
    #: the bench log by ``bench_instructions.py --processes 2``: parent and worker 1.87 and
    #: 1.80 G at 0.39, the module's default; 1.73 and 1.80 at 0.38; 1.71 and 1.82 at 0.37;
    #: once a worker's events were encoded and made faster, 1.62 and 1.69 at 0.38, 1.65
    #: and 1.65 at 0.4; once named tuples were made in C, 1.625 and 1.661 at 0.4, 1.640
    #: and 1.615 at 0.41; once a worker's checkpoints read its table of clusters for a
    #: third of what they did, 1.613 and 1.330 at 0.405, 1.581 and 1.377 at 0.38, 1.565
    #: and 1.406 at 0.37, 1.552 and 1.424 at 0.36, 1.596 and 1.441 at 0.35; on 48 MB, once
    #: the compact table of clusters was compiled: 2.52 and 2.82 at 0.35, 2.61 and 2.72 at
    #: 0.37, 2.65 and 2.66 at 0.39, 2.74 and 2.58 at 0.41, 2.77 and 2.50 at 0.43, with 0.82
    #: after them; instructions, not time: the parent's run slower, and on 250 MB its
    #: reading took 0.57 s of CPU more than the worker's on average at 0.39, 0.35 at 0.31,
    #: six rounds in turns each, the wall the same within this VM's spread; 2026-12-02)
    PARENT_SHARE: ClassVar[float] = 0.31

    def __init__(self, path: str) -> None:
        self.path = path
        self.continuing = False
        self._first: float | None = None
        self._last: float | None = None
        self._block: _Block | None = None
        self._compile: _Compile | None = None
        #: function (by :func:`held`: a log of a new function per compilation under
        #: 8,000-character names held two copies of each name here) -> its last compiled
        #: signature, its last compile id (a long one by what it holds besides the
        #: function's name: :func:`id_held`)
        self._compiled_args: MutableMapping[str | int, list[str]] = {}
        self._last_id: MutableMapping[str | int, str | tuple[str, str]] = {}
        #: cluster (its name_number: a log of a new cluster per compilation held 80 bytes
        #: a name in each process, then 90 bytes a digest in a dict) -> compilations seen
        self._counts = DigestTable()
        self._pending_reason: RecompileReason | None = None
        #: the fast path's put-off search for the last stamped line skipped (see Decoder)
        self.pending_last: Callable[[], None] | None = None

    # -- time -----------------------------------------------------------------------------
    def _clock(self, prefix: _Prefix) -> float | None:
        if prefix.seconds is not None:
            if self._first is None:
                self._first = prefix.seconds
            self._last = prefix.seconds
        if self._last is None or self._first is None:
            return None
        return round6(self._last - self._first)

    # -- the driver's interface -----------------------------------------------------------
    @property
    def wants_skipped(self) -> SkipMode:
        return "all" if self._first is None else "last"

    def skipped(self, lineno: int, raw: str) -> bool:
        if _STAMP_START.match(raw) is not None:
            prefix = _split(raw)[0]
            self._clock(prefix)
            return prefix.seconds is not None
        return False

    def finish(self) -> Iterator[TypedEvent]:
        out: list[TypedEvent] = []
        if self._pending_reason is not None:
            out.append(self._pending_reason)
            self._pending_reason = None
        c = self._compile
        if c is not None and c.backend_span is not None:
            out.extend(self._emit_compile(c.backend_span, None, c.backend_us))
        self._compile = None
        return iter(out)

    def decode(self, lineno: int, raw: str) -> Decoded:
        line = raw.rstrip("\r\n")
        if "\r" in line:
            line = line.rsplit("\r", 1)[-1] or line.replace("\r", "")
        prefix, msg = _split(line)
        walk_back = self.pending_last
        if walk_back is not None:
            if prefix.seconds is None:
                walk_back()  # this line takes the time of the last stamped line before it
            else:
                self.pending_last = None  # its own stamp replaces that one: no need to find it
        t = self._clock(prefix)
        sp = new_span(self.path, lineno, raw.rstrip("\n"), t)
        try:
            events = self._message(prefix, msg.rstrip(), sp)
        except _Bad as e:
            return Decoded("malformed", problem=str(e))
        if events is None:
            return UNRECOGNIZED
        return recognized(events)

    # -- helpers --------------------------------------------------------------------------
    def _record(
        self,
        kind: str,
        sp: Span,
        module: str | None = None,
        detail: dict[str, Any] | None = None,
    ) -> Event:
        """The record of the message; ``detail``, its fields in the order the report writes
        them, a new dict of the caller's (see ``JaxDecoder._record`` in ``jax``)."""
        d = {} if detail is None else detail
        return new_event(kind, sp.source, sp.line, sp.t, sp.text, module, None, d)

    def _key(self, name: str, compile_id: str | None = None, of: str | None = None) -> CompileKey:
        """The key of module ``name``, its function named after ``of`` (else after it)."""
        fn = tf_function_name(name if of is None else of)
        return CompileKey(FRAMEWORK, fn, module=name, compile_id=compile_id)

    def _new_run(self, sp: Span, c: _Compile) -> list[TypedEvent]:
        """A new run of the process begins with compilation ``c``, ending at ``sp``."""
        started = new_run(sp, FRAMEWORK)
        # (its own signature, read before its count told that it is a new run, stays: the
        # next compilation of its function is compared with it)
        self._end_run(tf_function_name(c.cluster) if c.arguments and c.cluster else None)
        return [started]

    def _end_run(self, keep: str | None) -> None:
        """Forget what the run before compiled (its clusters' counts, its functions'
        signatures but ``keep``'s), and a reason its signatures gave."""
        kept = held(keep) if keep else None
        signature = self._compiled_args.get(kept) if kept is not None else None
        for table in (self._counts, self._compiled_args, self._last_id):
            table.clear()
        self._pending_reason = None
        if kept is not None and signature is not None:
            self._compiled_args[kept] = signature

    def _open(self) -> _Compile:
        if self._compile is None:
            self._compile = _Compile()
        return self._compile

    def _emit_compile(
        self, sp: Span, rec: Event | None, duration: float | None, count: int | None = None
    ) -> list[TypedEvent]:
        """The compilation under way finished at ``sp``: its start and end events."""
        c = self._compile or _Compile()
        self._compile = None
        name = c.module or (cluster_base(c.cluster) if c.cluster else None) or "?"
        fn_source = c.cluster or c.module or name
        cluster = cluster_base(c.cluster) if c.cluster else name
        counted = name_number(cluster)
        before = self._counts.get(counted, 0)
        out: list[TypedEvent] = []
        if count is not None and count <= before:
            # the profiler counts a cluster's compilations up in one process: compiled "1
            # times" again, it is another process's log (runs appended with 2>>)
            out.extend(self._new_run(sp, c))
            before = 0
        n = count if count is not None else before + 1
        self._counts[counted] = n
        cid = f"{cluster}#{n}"
        key = self._key(name, cid, of=fn_source)
        if key.function is not None:
            self._last_id[held(key.function)] = id_held(cid, key.function)
        if self._pending_reason is not None:
            out.append(self._pending_reason)
            self._pending_reason = None
        out.append(
            CompileStarted(sp, rec, key, ordinal=n, duration_s=duration, arguments=c.arguments)
        )
        out.append(CompileFinished(sp, None, key, duration, keep=False))
        return out

    # -- messages -> events ---------------------------------------------------------------
    def _message(self, prefix: _Prefix, msg: str, sp: Span) -> list[TypedEvent] | None:
        """The events of a message, by its branch (:func:`_branch_of`: the first of the
        tests there it passes, remembered per message text)."""
        b = _BRANCHES.get(msg, -1)
        if b < 0:
            b = _BRANCHES_KEPT.put(msg, _branch_of(msg))
        if b == 0:  # 'Compiled cluster using XLA!'
            rec = self._record("tf-xla-cluster-compiled", sp)
            return [
                ProcessStarted(sp, rec, FRAMEWORK, None, new=False),
                FrameworkNote(sp, None, "xla-cluster-compiled"),
            ]
        if b == 1:  # 'times, compile time:'
            return self._profiler(msg, sp)
        if b == 2:  # 'as megamorphic'
            m = _MEGAMORPHIC_RE.search(msg)
            if m is None:
                raise _Bad(
                    "malformed megamorphic line (expected 'Marking <cluster> as megamorphic, compile_count=<n> execution_count=<m>')"
                )
            cl = cluster_base(m.group("cluster"))
            detail: dict[str, Any] = {
                "compile_count": int(m.group("c")),
                "execution_count": int(m.group("e")),
            }
            rec = self._record("tf-megamorphic", sp, cl, detail=dict(detail))
            return [FrameworkNote(sp, rec, "megamorphic", self._key(cl), detail)]
        if b == 3:  # 'triggered tf.function retracing'
            return self._retracing(msg, sp)
        if b == 4:  # 'DeviceCompiler::Compile'
            self._block = _Block()
            self._pending_reason = None
            return []
        if b == 5:  # 'num_inputs='
            if _NUM_INPUTS_RE.match(msg) is None:
                return self._only_tf(prefix, "num_inputs=<n>")
            return []
        if b == 6:  # ': kind='
            return self._argument(prefix, msg, sp)
        if b == 7:  # 'DeviceCompilationClusterSignature:'
            return self._signature(msg, sp)
        if b == 8:  # 'Compilation cache entry hit:'
            return self._cache(msg, sp)
        if b == 9:  # 'Instantly compiling for signature:'
            if _INSTANT_RE.search(msg) is None:
                raise _Bad("malformed 'Instantly compiling for signature: <signature>' line")
            return self._requested(msg, sp)
        if b == 10:  # 'Already Compiled for signature:'
            if _ALREADY_RE.search(msg) is None:
                raise _Bad("malformed 'Already Compiled for signature: <signature>' line")
            self._block = None
            return []
        if b == 11:  # 'XlaCompiler::CompileFunction'
            m = _XLA_FN_RE.search(msg)
            if m is None:
                raise _Bad("malformed 'XlaCompiler::CompileFunction <cluster>' line")
            c = self._open()
            c.cluster = c.cluster or m.group("cluster")
            c.line = c.line or sp.line
            return []
        if b == 12:  # 'using JIT time:'
            m = _CPU_JIT_RE.match(msg)
            if m is None:
                return self._only_tf(
                    prefix, "Compiling [<module>] for <backend> using JIT time: ... (<us> us)"
                )
            c = self._open()
            c.module = c.module or m.group("module")
            c.backend_us = _us(m.group("us"))
            c.backend_span = sp
            return []
        if b == 13:  # 'Compiling:'
            m = _CPU_START_RE.match(msg)
            if m is None:
                return self._only_tf(prefix, "Compiling: <module>")
            c = self._open()
            c.module = c.module or m.group("module")
            c.line = c.line or sp.line
            return []
        if b == 14:  # 'Compilation of XLA executable time:'
            m = _EXEC_TIMER_RE.search(msg)
            if m is None:
                raise _Bad("malformed 'Compilation of XLA executable time: ... (<us> us)' line")
            if self._compile is None:
                return []  # the profiler line reported this compilation already
            return self._emit_compile(sp, self._record("tf-compiled", sp), _us(m.group("us")))
        if b == 15:  # 'Compilation finished'
            return []
        if b == 16:  # 'HloModule dump enabled with path prefix'
            m = _DUMP_RE.search(msg)
            if m is None:
                raise _Bad(
                    "malformed 'HloModule dump enabled with path prefix: <p>, suffix: <s>' line"
                )
            detail = {"prefix": m.group("prefix"), "suffix": m.group("suffix")}
            rec = self._record("tf-hlo-dump-enabled", sp, detail=dict(detail))
            return [FrameworkNote(sp, rec, "hlo-dump-enabled", None, detail)]
        if b == 17:  # 'initialized for platform'
            m = _SERVICE_RE.search(msg)
            if m is None:
                return None
            detail = {"platform": m.group("platform")}
            rec = self._record("tf-xla-service", sp, detail=dict(detail))
            return [
                ProcessStarted(sp, rec, FRAMEWORK, None, new=False),
                FrameworkNote(sp, None, "xla-service-initialized", None, detail, keep=False),
            ]
        return None

    def _only_tf(self, prefix: _Prefix, expected: str) -> list[TypedEvent] | None:
        """A generic anchor in a line that may not be TensorFlow's: malformed only when the
        line carries a TF logger prefix."""
        if prefix.source_file is not None:
            raise _Bad(f"malformed line (expected '{expected}')")
        return None

    def _profiler(self, msg: str, sp: Span) -> list[TypedEvent]:
        m = _PROFILER_RE.search(msg)
        if m is None:
            raise _Bad(
                "malformed profiler line (expected 'Compiled <cluster> <k> times, compile "
                "time: <us> us, cumulative: <us> us')"
            )
        cluster = m.group("cluster")
        c = self._open()
        if c.cluster is None or cluster_base(c.cluster) != cluster:
            c.cluster = cluster
            if c.module is not None and tf_function_name(c.module) != tf_function_name(cluster):
                c.module = None
        count = int(m.group("count"))
        dur = _us(m.group("us"))
        rec = self._record(
            "tf-compiled",
            sp,
            c.module or cluster,
            detail={
                "cluster": cluster,
                "count": count,
                "compile_time_us": int(m.group("us")),
                "cumulative_us": int(m.group("cum")),
            },
        )
        return self._emit_compile(sp, rec, dur, count)

    def _argument(self, prefix: _Prefix, msg: str, sp: Span) -> list[TypedEvent] | None:
        got = _argument_of(msg)
        if got is None:
            return self._only_tf(prefix, "<i>: kind=<kind> type=<dtype> shape=[<dims>]")
        if self._block is None:
            self._block = _Block()
        i, hlo, name = got
        self._block.args[i] = (hlo, sp.line, name)
        return []

    def _signature(self, msg: str, sp: Span) -> list[TypedEvent]:
        m = _SIGNATURE_RE.search(msg)
        if m is None:
            raise _Bad("malformed 'DeviceCompilationClusterSignature: <cluster>,<args>' line")
        b = self._block if self._block is not None else _Block()
        self._block = b
        cluster, args, hlo = _signature_of(m.group("sig"))
        b.cluster = cluster
        b.arguments = args or None
        b.hlo_args = list(hlo) if hlo is not None else None
        b.lines.append(sp.line)
        return []

    def _cache(self, msg: str, sp: Span) -> list[TypedEvent]:
        m = cache_fields(msg)
        if m is None:
            raise _Bad(
                "malformed 'Compilation cache entry hit: <state> signature: <signature>' line"
            )
        state = int(m[0])
        cluster = _signature_of(m[1])[0]
        outcome = {0: "miss", 1: "active", 2: "hit"}.get(state)
        if outcome is None:
            raise _Bad(f"unknown compile state {state} (expected 0, 1 or 2)")
        base = cluster_base(cluster)
        rec = self._record(
            "tf-cluster-cache", sp, base, detail={"state": state, "outcome": outcome}
        )
        # the device compiler's in-memory cache is consulted on every call: a hit is a
        # call served by a compiled cluster, not a compilation
        ev = CacheLookup(
            sp,
            rec,
            "tracing",
            "hit" if outcome == "hit" else "miss" if outcome == "miss" else "active",
            self._key(base),
            keep=outcome == "miss",
        )
        if outcome == "miss" and self._block is not None:
            self._block.requested = True
            self._block.cluster = self._block.cluster or cluster
            self._pending_reason = self._reason(sp)
        return [ev]

    def _requested(self, msg: str, sp: Span) -> list[TypedEvent]:
        b = self._block
        self._block = None
        reason = self._pending_reason
        if reason is None and b is not None:
            reason = self._reason(sp)
        elif reason is not None:
            reason = replace(reason, lines=(*reason.lines, sp.line))
        self._pending_reason = None
        c = self._open()
        c.line = c.line or sp.line
        if b is not None:
            c.cluster = b.cluster
            c.arguments = b.arguments
            self._remember(b)
        return [reason] if reason is not None else []

    def _remember(self, b: _Block) -> None:
        if b.cluster is None:
            return
        fn = tf_function_name(b.cluster)
        args = b.hlo_args
        if args is None and b.args:
            args = [b.args[i][0] for i in sorted(b.args)]
        if args is not None:
            self._compiled_args[held(fn)] = args

    def _reason(self, sp: Span) -> RecompileReason | None:
        """The signature change that makes this call compile, against the function's
        previous compilation (None on its first compilation or when nothing is known)."""
        b = self._block
        if b is None or b.cluster is None:
            return None
        fn = tf_function_name(b.cluster)
        old = self._compiled_args.get(held(fn))
        new = b.hlo_args
        if new is None and b.args:
            new = [b.args[i][0] for i in sorted(b.args)]
        if old is None or new is None:
            return None
        names = [b.args[i][2] for i in sorted(b.args)] if b.args else []
        pairs: list[tuple[int, str, str]] = [
            (i, o, n) for i, (o, n) in enumerate(zip(old, new, strict=False)) if o != n
        ]
        arg_lines = [b.args[i][1] for i in sorted(b.args)] if b.args else []
        changes = tuple(
            ValueChange(
                fn,
                names[i] if i < len(names) else f"argument {i}",
                o,
                n,
                None,
                self.path,
                arg_lines[i] if i < len(arg_lines) else (b.lines[-1] if b.lines else sp.line),
            )
            for i, o, n in pairs
        )
        if len(old) != len(new):
            changes += (
                ValueChange(
                    fn,
                    "number of arguments",
                    str(len(old)),
                    str(len(new)),
                    None,
                    self.path,
                    b.lines[-1] if b.lines else sp.line,
                ),
            )
        if not changes:
            return None
        rule = classify([(o, n) for _, o, n in pairs]) if len(old) == len(new) else "shape-changed"
        first = changes[0]
        text = f"the arguments of {fn} changed: {first.what} {first.old} -> {first.new}" + (
            f" (and {len(changes) - 1} more)" if len(changes) > 1 else ""
        )
        lines = sorted({c.line for c in changes if c.line is not None} | set(b.lines) | {sp.line})
        rec = self._record(
            "tf-signature-changed",
            sp,
            cluster_base(b.cluster),
            detail={"old": first.old, "new": first.new, "rule": rule},
        )
        return RecompileReason(
            sp,
            rec,
            self._key(cluster_base(b.cluster)),
            rule,
            text,
            changes,
            None,
            tuple(lines),
        )

    def _retracing(self, msg: str, sp: Span) -> list[TypedEvent]:
        m = _RETRACE_RE.search(msg)
        if m is None:
            raise _Bad(
                "malformed retracing warning (expected '<n> out of the last <m> calls to "
                "<function ...> triggered tf.function retracing')"
            )
        fm = _PYFN_RE.match(m.group("fn"))
        qual = fm.group("qual") if fm else m.group("fn")
        fn = qual.rsplit(".", 1)[-1]
        detail: dict[str, Any] = {
            "count": int(m.group("n")),
            "calls": int(m.group("m")),
            "function": qual,
        }
        key = CompileKey(FRAMEWORK, fn, compile_id=id_of_held(self._last_id.get(held(fn)), fn))
        rec = self._record("tf-retracing-warning", sp, None, detail=dict(detail))
        reason = msg[m.start() :]
        return [
            RecompileReason(sp, rec, key, "retracing", reason, (), None, (sp.line,)),
            FrameworkNote(sp, None, "retracing-warning", key, detail),
        ]
