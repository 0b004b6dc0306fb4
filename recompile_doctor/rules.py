"""The one cause vocabulary: every rule id of the SPEC, with its severity, the Graphcore
Consideration it belongs to, a title, why it recompiles and what to change (per framework
where the fix differs).

Analyses, the differ, the schemas and the README refer to rules by id; the words a user reads
live here once.  :data:`RuleId` lists the ids for the type checker, so a misspelt id in code
is a type error, and :func:`rule` raises on an id it does not know.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal, TypeVar, get_args

from recompile_doctor.bounded import Kept
from recompile_doctor.model import Severity
from recompile_doctor.slotted import remade_from_fields

RuleId = Literal[
    "cache-disabled",
    "cache-cold",
    "executable-switching",
    "batch-size-changed",
    "frozen-weights",
    "growing-shape",
    "constant-changed",
    "dtype-changed",
    "weak-type-changed",
    "shape-changed",
    "graph-changed",
    "recompile-after-warmup",
    "constants-elided",
    "slow-load",
    "precompile-unsupported",
    "retracing",
    "recompile-limit",
    "graph-break",
    "compile-failed",
    "object-recreated",
    "global-state-changed",
    "rank-divergence",
    "flags-changed",
    "compile-options-changed",
    "version-changed",
]

#: the causes a recompilation can have, most important first: when one compilation shows
#: several, the first of these is its cause (the differ orders its causes the same way)
CAUSE_ORDER: Final[tuple[RuleId, ...]] = (
    "object-recreated",
    "frozen-weights",
    "growing-shape",
    "batch-size-changed",
    "dtype-changed",
    "weak-type-changed",
    "shape-changed",
    "constant-changed",
    "global-state-changed",
    "graph-changed",
    "flags-changed",
    "compile-options-changed",
    "version-changed",
    "constants-elided",
    "retracing",
    "recompile-after-warmup",
)

#: the causes that are a change of an argument's shape
SHAPE_RULES: tuple[RuleId, ...] = ("batch-size-changed", "shape-changed")


@dataclass(frozen=True, slots=True)
class Rule:
    """One cause of the vocabulary: its id, severity, what it means and what to change."""

    id: RuleId
    severity: Severity
    consideration: int | None
    title: str
    why: str
    advice: str
    #: framework -> what to change there, where it differs from :attr:`advice`
    advice_by_framework: Mapping[str, str] = field(default_factory=dict)

    def advice_for(self, framework: str | None) -> str:
        """What to change, in the words of ``framework`` (the general advice otherwise)."""
        if framework is None:
            return self.advice
        return self.advice_by_framework.get(framework, self.advice)

    def __reduce__(self) -> tuple[Any, ...]:
        return remade_from_fields(self)  # (a copy in the compiled build: see there)


_RULES = (
    Rule(
        "cache-disabled",
        "warning",
        0,
        "Executable cache is disabled",
        "Compilations happen and no executable-cache activity appears in the log, so every new "
        "process compiles every graph again from scratch.",
        "Set TF_POPLAR_FLAGS='--executable_cache_path=/path/to/cache' so that later runs load "
        "the compiled executables (.poplar_exec) instead of compiling them.",
        {
            "jax": "Turn on JAX's persistent compilation cache: jax.config.update("
            "'jax_compilation_cache_dir', '/path/to/cache') (and lower "
            "jax_persistent_cache_min_compile_time_secs if your compiles are short).",
            "torch": "Keep torch.compile's FX-graph and AOT-autograd caches on "
            "(TORCHINDUCTOR_FX_GRAPH_CACHE=1, TORCHINDUCTOR_AUTOGRAD_CACHE=1) and point "
            "TORCHINDUCTOR_CACHE_DIR at a directory that survives between runs.",
        },
    ),
    Rule(
        "cache-cold",
        "info",
        0,
        "Executable cache was cold",
        "Compilations missed the executable cache: this is expected on the first run with a new "
        "cache directory or after the graph changed; the executables are now saved.",
        "Run again with the same --executable_cache_path: the next run should load these "
        "executables. If it does not, the graph or the configuration changes between runs.",
        {
            "jax": "Run again with the same jax_compilation_cache_dir: the next process should "
            "report 'Persistent compilation cache hit'. If it does not, a part of the cache key "
            "(flags, compile options, versions) changes between runs.",
        },
    ),
    Rule(
        "executable-switching",
        "warning",
        1,
        "Executables are switched on the device again and again",
        "Several graphs run alternately on the same device, so each switch loads the other "
        "executable onto the IPU again ('Loading executable'), costing time at every step.",
        "Put the workloads into one graph (one ipu_compiler.compile / one tf.function under "
        "IPUStrategy), or place the graphs on different IPUs; run evaluation less often.",
    ),
    Rule(
        "batch-size-changed",
        "warning",
        2,
        "Batch size changed",
        "The batch (leading) dimension of the inputs changed, so the static graph is different "
        "and needs a new executable: the number of loop iterations and the tile mapping depend "
        "on it.",
        "Keep the batch size constant: use drop_remainder=True in tf.data batch(), or pad the "
        "last batch to the full size.",
        {
            "jax": "Keep the batch size constant: drop or pad the last partial batch "
            "(drop_remainder=True, or pad and mask), or bucket batch sizes to a few fixed values.",
            "tensorflow": "Keep the batch size constant: dataset.batch(n, drop_remainder=True), "
            "or pad the last batch; under XLA an input_signature with a None batch dimension "
            "still compiles once per concrete batch size.",
            "torch": "Keep the batch size constant (DataLoader(drop_last=True)), or mark the "
            "batch dimension dynamic: torch._dynamo.mark_dynamic(x, 0) or "
            "torch.compile(dynamic=True).",
            "ptxla": "Keep the batch size constant (drop_last=True) or pad/bucket the shapes: "
            "every new shape is a new XLA graph.",
        },
    ),
    Rule(
        "frozen-weights",
        "warning",
        3,
        "Weights are frozen into the graph as constants",
        "The weights are baked into the graph as constants, so every new set of weight values "
        "is a new graph and a new executable.",
        "Keep weights and graph separate: pass weights as variables (resource inputs), do not "
        "freeze the graph between steps or epochs.",
        {
            "jax": "Pass the weights (params) as arguments of the jitted function instead of "
            "closing over them: captured arrays become constants of the compiled program.",
            "tensorflow": "Keep weights in tf.Variables read inside the tf.function (or pass "
            "them as tensor arguments); do not capture new tf.constant / NumPy weights.",
        },
    ),
    Rule(
        "growing-shape",
        "warning",
        4,
        "A shape grows from one compilation to the next",
        "A dimension grows each time the module is compiled, typical of tf.concat accumulating "
        "results inside a tf.function: every epoch sees a new shape and compiles again.",
        "Use tf.stack (with a reshape) or a fixed-size tf.TensorArray instead of growing a "
        "tensor with tf.concat.",
        {
            "jax": "Do not grow an array that is passed to a jitted function: preallocate a "
            "fixed-size buffer and update it with .at[i].set(...), or pad to buckets.",
            "torch": "Do not grow a tensor across calls: preallocate it, or mark the growing "
            "dimension dynamic (torch._dynamo.mark_dynamic).",
            "ptxla": "Do not grow a tensor across steps: preallocate it or pad to a few "
            "bucket sizes; every new size is a new XLA graph.",
        },
    ),
    Rule(
        "constant-changed",
        "warning",
        5,
        "A constant's value changed",
        "A value baked into the graph as a constant (a hyper-parameter such as a learning "
        "rate, or a loop limit) changed, so the graph and its executable changed.",
        "Pass values that change as inputs: a tf.Variable or a tensor argument (TF2), or a "
        "tf.placeholder (TF1), instead of a Python number; use tf.name_scope to find it.",
        {
            "jax": "Pass values that change as traced arguments (a jnp array), not as static "
            "arguments (static_argnums/static_argnames) or Python values closed over by the "
            "jitted function.",
            "tensorflow": "Pass values that change as tensors (tf.constant(x) or a "
            "tf.Variable) instead of Python numbers, which are baked into each trace.",
            "torch": "Pass values that change as tensors instead of Python scalars (Dynamo "
            "specialises on them), or let Dynamo treat ints as dynamic "
            "(torch._dynamo.config.specialize_int = False / mark_dynamic).",
            "ptxla": "Keep changing scalars on the device as tensors instead of Python "
            "numbers, which become graph constants.",
        },
    ),
    Rule(
        "dtype-changed",
        "warning",
        None,
        "An element type changed",
        "An input or an instruction has a different element type than in the previous "
        "compilation, so the graph is different.",
        "Cast inputs to one dtype before the compiled function (e.g. tf.cast in the input "
        "pipeline) and keep the model's dtype policy constant.",
        {
            "jax": "Cast inputs to one dtype before calling the jitted function "
            "(x.astype(jnp.float32)), and keep the dtype policy constant.",
            "torch": "Cast inputs to one dtype before the compiled function and keep autocast "
            "settings constant.",
        },
    ),
    Rule(
        "shape-changed",
        "warning",
        None,
        "A shape changed",
        "A tensor shape (other than the batch dimension) differs from the previous "
        "compilation, so the graph is different.",
        "Keep input shapes static: pad variable-length inputs to a few fixed buckets.",
        {
            "torch": "Keep input shapes static, or mark the changing dimension dynamic "
            "(torch._dynamo.mark_dynamic(x, dim)).",
        },
    ),
    Rule(
        "graph-changed",
        "warning",
        1,
        "The graph's structure changed",
        "Operations were added or removed between two compilations of the same function, so it "
        "is a different graph.",
        "Make sure each process runs the same graph; avoid Python control flow that changes "
        "the traced program between calls.",
        {
            "jax": "Make the traced program the same on every call: no Python control flow on "
            "values that change, the same pytree structure of arguments.",
            "ptxla": "Keep the traced graph the same every step: the same shapes (pad or bucket "
            "them), no Python values or .item() calls that change the graph, and call "
            "torch_xla.sync() / xm.mark_step() at the same place every step.",
            "torch": "Keep the traced program the same on every call (no Python control flow "
            "on changing values), or mark the changing dimension dynamic.",
        },
    ),
    Rule(
        "recompile-after-warmup",
        "warning",
        6,
        "Recompilation after warm-up",
        "A module was compiled again after warm-up, and the log alone cannot tell why.",
        "Re-run with XLA_FLAGS=--xla_dump_to=DIR and pass --dumps DIR: the HLO of the "
        "compilations will be compared and the change named.",
        {
            "torch": "Re-run with TORCH_LOGS=recompiles_verbose (every failed guard of every "
            "cache entry) and TORCH_TRACE=DIR, and pass the trace files too.",
            "jax": "Re-run with JAX_EXPLAIN_CACHE_MISSES=1 (what changed in the arguments) and "
            "XLA_FLAGS=--xla_dump_to=DIR, and pass --dumps DIR.",
        },
    ),
    Rule(
        "constants-elided",
        "info",
        6,
        "Large constants are elided in the dumps",
        "The dumps print large constants as {...}, so their values cannot be compared; if "
        "these modules were compiled twice, the values of those constants (frozen weights) "
        "are the likely cause.",
        "Dump with XLA_FLAGS='--xla_dump_to=DIR --xla_dump_large_constants' (newer XLA) to "
        "compare the values, or check whether weights are frozen into the graph.",
    ),
    Rule(
        "slow-load",
        "warning",
        1,
        "Slow executable loads recur after warm-up",
        "Loading an executable onto the device took 500 ms or more, again and again after warm-up.",
        "Avoid switching executables on the device: one graph per device, or fewer switches "
        "(e.g. evaluate less often).",
    ),
    Rule(
        "precompile-unsupported",
        "error",
        None,
        "The program cannot be pre-compiled",
        "Pre-compile mode met an operation that cannot be pre-compiled (a custom op without "
        "is_hashable, or outside_compilation_scope), or was used without a cache path.",
        "Set is_hashable=True in the custom op's metadata function if it is safe, remove "
        "outside_compilation_scope, and set --executable_cache_path in TF_POPLAR_FLAGS.",
    ),
    Rule(
        "retracing",
        "warning",
        None,
        "The framework reported retracing",
        "The framework reported retracing, guard failures or a cache-size limit.",
        "Keep argument shapes, dtypes and Python values stable between calls.",
        {
            "tensorflow": "Give the tf.function an input_signature (or "
            "reduce_retracing=True), pass tensors instead of Python numbers, and create "
            "the tf.function once, outside the loop.",
            "jax": "Keep argument shapes, dtypes and static values stable between calls, and "
            "create the jitted function once (not per call or per epoch).",
            "torch": "Keep input shapes, dtypes and Python values stable, or mark dimensions "
            "dynamic; TORCH_LOGS=recompiles_verbose lists every failed guard.",
        },
    ),
    Rule(
        "weak-type-changed",
        "warning",
        None,
        "An argument's weak type changed",
        "The same argument was passed once as a Python scalar (a weakly typed value) and once "
        "as a typed array or NumPy scalar: the dtype is the same, but the weak type is part "
        "of the trace, so JAX traces and compiles again. The HLO text of the two is identical; "
        "only the log shows it.",
        "Pass the value the same way every time: always jnp.asarray(x, dtype) (or always a "
        "Python scalar). See https://docs.jax.dev/en/latest/type_promotion.html#weak-types.",
    ),
    Rule(
        "recompile-limit",
        "error",
        None,
        "The framework hit its recompile limit",
        "A function was recompiled so often that the framework stopped compiling it and fell "
        "back (torch.compile runs it eagerly from then on; TensorFlow warns about retracing).",
        "Fix the cause of the recompilations shown with it; raise the limit only if the "
        "variants are legitimate.",
        {
            "torch": "Fix the guard that keeps failing (the last reason below); raise "
            "torch._dynamo.config.recompile_limit only if every variant is legitimate, or "
            "mark the changing dimension dynamic.",
        },
    ),
    Rule(
        "graph-break",
        "info",
        None,
        "torch.compile broke the graph",
        "torch.compile could not capture the whole function into one graph; it runs the part "
        "it cannot compile in Python and resumes in a new graph, which costs speed and adds "
        "compilations.",
        "Remove the construct named in the reason from the compiled region (print, .item(), "
        "data-dependent control flow), or use torch._dynamo.config.capture_scalar_outputs.",
    ),
    Rule(
        "compile-failed",
        "error",
        None,
        "A compilation failed",
        "The compiler raised an error while compiling a function; the framework fell back or "
        "the run stopped.",
        "Read the failure reason below; report it upstream with the minimal repro if it is a "
        "compiler bug, or exclude the function from compilation.",
    ),
    Rule(
        "object-recreated",
        "warning",
        1,
        "A compiled object is created anew on every call",
        "The cache is keyed on the identity of an object (a module, a closure, a jitted or "
        "compiled function) that the program creates again on every call or epoch, so no "
        "earlier compilation can ever match.",
        "Create the model, the closure and the compiled / jitted function once, outside the "
        "loop, and call that same object every time.",
        {
            "jax": "Create the jitted function once, outside the loop (jax.jit(f) at module "
            "level, functools.partial instead of a new lambda per call).",
            "torch": "Create the nn.Module and call torch.compile once, outside the loop; do "
            "not build modules or closures inside the compiled step.",
        },
    ),
    Rule(
        "global-state-changed",
        "warning",
        None,
        "Global state changed between calls",
        "A compiled function was called under different global settings (grad mode, default "
        "dtype, autocast, deterministic algorithms), which are part of its cache key.",
        "Call the compiled function under the same global settings every time (e.g. one "
        "torch.no_grad() scope for evaluation, one compiled function per mode).",
    ),
    Rule(
        "rank-divergence",
        "error",
        None,
        "Ranks compiled differently",
        "One rank of a distributed run compiled (or recompiled) where the others did not: the "
        "ranks now run different programs, which wastes time and can deadlock collectives "
        "inside compiled code.",
        "Give every rank the same shapes and settings (same batch size, drop_last=True, the "
        "same padding); look at the first compile id where the ranks part.",
    ),
    Rule(
        "flags-changed",
        "warning",
        0,
        "Compiler flags differ between the runs",
        "The compiler flags that are part of the cache key differ, so the later run cannot "
        "reuse what the earlier one compiled.",
        "Set the same flags in every run that shares a cache (pin XLA_FLAGS / TF_POPLAR_FLAGS "
        "in one place), or accept the miss when the change is intended.",
    ),
    Rule(
        "compile-options-changed",
        "warning",
        0,
        "Compile options differ between the runs",
        "The compile options in the cache key (device assignment, number of replicas or "
        "partitions) differ, so the later run cannot reuse what the earlier one compiled.",
        "Run with the same device count, mesh and sharding in every run that shares a cache, "
        "or accept the miss when the change is intended.",
    ),
    Rule(
        "version-changed",
        "warning",
        0,
        "Framework or compiler versions differ between the runs",
        "The framework, compiler or backend version is part of the cache key; entries written "
        "by one version are never read by another.",
        "Pin the framework and compiler versions of runs that share a cache (or give each "
        "version its own cache directory).",
    ),
)

RULES: Final[dict[str, Rule]] = {r.id: r for r in _RULES}
RULE_IDS: tuple[RuleId, ...] = get_args(RuleId)


def rule(rule_id: str) -> Rule:
    """The catalogue entry for ``rule_id``; an unknown id is a programming error."""
    try:
        return RULES[rule_id]
    except KeyError:
        raise ValueError(f"unknown rule id {rule_id!r}") from None


#: rule id -> its position in :data:`CAUSE_ORDER` (a dict: the tuple's ``index`` compared
#: the id with each cause before it, and every argument change of a log is ranked)
_CAUSE_RANKS: Final[dict[str, int]] = {r: i for i, r in enumerate(CAUSE_ORDER)}


def cause_rank(rule_id: str) -> int:
    """Position of ``rule_id`` in :data:`CAUSE_ORDER` (unknown causes last)."""
    return _CAUSE_RANKS.get(rule_id, len(CAUSE_ORDER))


def markdown_table() -> str:
    """The README's rule table (a test keeps the README equal to this)."""
    lines = [
        "| rule | severity | Consideration | title |",
        "| --- | --- | --- | --- |",
    ]
    for r in RULES.values():
        c = "—" if r.consideration is None else str(r.consideration)
        lines.append(f"| `{r.id}` | {r.severity} | {c} | {r.title} |")
    return "\n".join(lines) + "\n"


def type_parts(text: str) -> tuple[str, str, str] | None:
    """An argument's type in HLO notation as (element type, dimensions, the rest):
    ``f32[32,16]{1,0}`` -> ``("f32", "32,16", "{1,0}")``; None when ``text`` (blanks around
    it aside) is not of that form: an element type of lower-case letters, digits and ``_``
    that starts with a letter, the dimensions up to the first ``]``, and no line break after
    it.  (String methods, not a pattern: a log of growing shapes reads a new pair of types
    at each recompilation, and a pattern's match took most of the work.)"""
    text = text.strip()
    i = text.find("[")
    if i <= 0:
        return None
    j = text.find("]", i + 1)
    if j < 0:
        return None
    dt = text[:i]
    # (ASCII only; a letter first, and no upper case: islower() is true of a text with at
    # least one cased character, all of them lower case)
    if not (dt.isascii() and dt[0].isalpha() and dt.islower() and _word(dt)):
        return None
    rest = text[j + 1 :]
    if "\n" in rest:
        return None
    return dt, text[i + 1 : j], rest


def _word(dt: str) -> bool:
    """``dt`` is made of letters, digits and ``_`` alone (it is ASCII)."""
    return dt.isalnum() or dt.replace("_", "").isalnum()


def _dim_list(dims: str) -> list[str]:
    return [d.strip() for d in dims.split(",")] if dims.strip() else []


#: a type's text -> :func:`type_parts` of it and its dimensions (:func:`_dim_list`): a run
#: of growing shapes changes each argument's type from the one it changed to before
_SHAPES_KEPT: Final[Kept[str, tuple[str, str, str, tuple[str, ...]]]] = Kept()
_SHAPES: Final = _SHAPES_KEPT.table


def type_shape_py(text: str) -> tuple[str, str, str, tuple[str, ...]] | None:
    """:func:`type_parts` of ``text`` and its dimensions one by one (:func:`_dim_list`)."""
    parts = type_parts(text)
    return None if parts is None else (*parts, tuple(_dim_list(parts[1])))


_Shape = tuple[str, str, str, tuple[str, ...]]
_TypeShape = Callable[[str, Callable[[str], _Shape | None]], _Shape | None]
#: the C module's twin of :func:`type_shape_py` (``parsers/_native_fields.c``: a fifth of the
#: instructions; text that is not ASCII is left to the Python), None in it where it is not
#: in use; found at the first type read, not at import (the vocabulary's module loads no
#: parser's: ``diff`` and the reports import it)
_TYPE_SHAPE_C: Final[list[_TypeShape | None]] = []


def type_shape_c() -> _TypeShape | None:
    """The C module's ``type_shape``, or None: types are read in Python."""
    if not _TYPE_SHAPE_C:
        from recompile_doctor.parsers._spans import native_in_use

        _TYPE_SHAPE_C.append(getattr(native_in_use(), "type_shape", None))
    return _TYPE_SHAPE_C[0]


def _shape_of(text: str) -> tuple[str, str, str, tuple[str, ...]] | None:
    """:func:`type_shape_py` of ``text``, kept (a text that is no type is kept as an empty
    element type: a compiled build makes its own copy of a constant tuple, which an
    identity test would not know again)."""
    got = _SHAPES.get(text)
    if got is None:
        c = type_shape_c()
        made = c(text, type_shape_py) if c is not None else type_shape_py(text)
        got = _SHAPES_KEPT.put(text, ("", "", "", ()) if made is None else made)
    return got if got[0] else None


def type_change_rule(old: str, new: str) -> RuleId:
    """The cause of one argument's type change, in HLO notation (``f32[32,16]`` ->
    ``f32[8,16]``: ``batch-size-changed``; ``f32[4]`` -> ``bf16[4]``: ``dtype-changed``;
    ``f32[]{weak_type=True}`` -> ``f32[]``: ``weak-type-changed``; other dimensions:
    ``shape-changed``; anything unreadable: ``retracing``).  Every framework's parser maps
    argument changes through this one function."""
    po, pn = _shape_of(old), _shape_of(new)
    if po is None or pn is None:
        return "retracing"
    if po[1] != pn[1]:
        do, dn = po[3], pn[3]
        leading = len(do) == len(dn) and len(do) > 0 and do[1:] == dn[1:]
        shape: RuleId = "batch-size-changed" if leading else "shape-changed"
        if po[0] != pn[0] and cause_rank("dtype-changed") < cause_rank(shape):
            return "dtype-changed"
        return shape
    if po[0] != pn[0]:
        return "dtype-changed"
    if ("weak_type=True" in po[2]) != ("weak_type=True" in pn[2]):
        return "weak-type-changed"
    return "retracing"  # a sharding or layout change


#: a rule id, or a str that may be one
_S = TypeVar("_S", bound=str)


def types_change_rule(changes: Sequence[tuple[str, str]]) -> RuleId:
    """The cause of several arguments' type changes at once: the batch size only when every
    changed argument changed only its leading dimension, else the most important cause."""
    rules = [type_change_rule(o, n) for o, n in changes]
    if not rules:
        return "retracing"
    if "shape-changed" in rules and "batch-size-changed" in rules:
        rules = [r for r in rules if r != "batch-size-changed"]
    return first_cause(rules)


def first_cause(rule_ids: Sequence[_S]) -> _S:
    """The most important of ``rule_ids`` by :func:`cause_rank`, the first of equals
    (``min(rule_ids, key=cause_rank)``, a loop: compiled, ``min`` with a key went through
    the generic call; ``rule_ids`` must not be empty)."""
    rule = rule_ids[0]
    best = cause_rank(rule)
    for k in range(1, len(rule_ids)):
        r = rule_ids[k]
        rank = cause_rank(r)
        if rank < best:
            rule, best = r, rank
    return rule
