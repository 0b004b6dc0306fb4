"""The rule catalogue: every rule id of the SPEC, with its severity, the Graphcore
Consideration it belongs to, a title, why it recompiles and what to change.

Analyses and the differ refer to rules by id; the words a user reads live here once.
"""

from __future__ import annotations

from dataclasses import dataclass

from recompile_doctor.model import Severity


@dataclass(frozen=True, slots=True)
class Rule:
    id: str
    severity: Severity
    consideration: int | None
    title: str
    why: str
    advice: str


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
    ),
    Rule(
        "shape-changed",
        "warning",
        None,
        "A shape changed",
        "A tensor shape (other than the batch dimension) differs from the previous "
        "compilation, so the graph is different.",
        "Keep input shapes static: pad variable-length inputs to a few fixed buckets.",
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
    ),
    Rule(
        "recompile-after-warmup",
        "warning",
        6,
        "Recompilation after warm-up",
        "A module was compiled again after warm-up, and the log alone cannot tell why.",
        "Re-run with XLA_FLAGS=--xla_dump_to=DIR and pass --dumps DIR: the HLO of the "
        "compilations will be compared and the change named.",
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
    ),
)

RULES: dict[str, Rule] = {r.id: r for r in _RULES}


def rule(rule_id: str) -> Rule:
    """The catalogue entry for ``rule_id`` (KeyError for an unknown id)."""
    return RULES[rule_id]
