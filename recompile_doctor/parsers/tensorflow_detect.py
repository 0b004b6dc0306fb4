"""The TensorFlow log format as format detection sees it: anchors, sniff and registry entry.
Its decoder (:mod:`recompile_doctor.parsers.tensorflow`) is imported only when an input of
this format is read, so that detecting another format does not load it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from recompile_doctor.parsers._format import Decoder, LogFormat

FRAMEWORK: Final = "tensorflow"

#: literal strings of the lines this decoder reads
ANCHORS: tuple[str, ...] = (
    "Compiled cluster using XLA!",
    " times, compile time: ",
    " as megamorphic",
    "DeviceCompilationClusterSignature: ",
    "Compilation cache entry hit: ",
    "Instantly compiling for signature: ",
    "Already Compiled for signature: ",
    "DeviceCompiler::Compile ",
    ": kind=",
    "num_inputs=",
    "XlaCompiler::CompileFunction ",
    "Compiling: ",
    " using JIT time: ",
    "Compilation of XLA executable time: ",
    "Compilation finished",
    "HloModule dump enabled with path prefix",
    "triggered tf.function retracing",
    " initialized for platform ",
)

#: what only a TensorFlow log contains.  ``Compiled cluster using XLA!`` alone does not
#: count: Graphcore's TensorFlow-on-IPU logs print it too; logs that name Poplar score 0.
_SNIFF_TELLS: tuple[str, ...] = (
    "device_compiler.h:",
    "device_compilation_profiler.cc:",
    "xla_compiler.cc:",
    "cpu_feature_guard.cc:",
    "oneDNN custom operations are on",
    "triggered tf.function retracing",
    "DeviceCompilationClusterSignature: ",
    "XlaCompiler::CompileFunction ",
    "tensorflow/compiler/jit/",
    "tensorflow/compiler/tf2xla/",
)
_OTHER_STACK_TELLS = ("poplar", "popart", "poptorch", "popvision")

HOW_TO_LOG = (
    "For a TensorFlow run, log the XLA compilations with "
    "TF_CPP_VMODULE='device_compiler=3,device_compilation_profiler=1' "
    "(TF_CPP_MIN_LOG_LEVEL unset or 0; python train.py > run.log 2>&1) and keep the HLO with "
    "XLA_FLAGS='--xla_dump_to=<dir> --xla_dump_hlo_as_text'."
)


def sniff(lines: Sequence[str]) -> int:
    """How many of ``lines`` only TensorFlow writes (0 on other stacks' logs)."""
    score = 0
    for ln in lines:
        if any(t in ln for t in _SNIFF_TELLS):
            score += 1
        low = ln.lower()
        if any(t in low for t in _OTHER_STACK_TELLS):
            return 0
    return score


def _decoder(path: str) -> Decoder:
    """A new decoder for the input at ``path`` (imports the decoder's module)."""
    from recompile_doctor.parsers.tensorflow import TensorFlowDecoder

    return TensorFlowDecoder(path)


TENSORFLOW = LogFormat(
    name="tensorflow",
    framework=FRAMEWORK,
    anchors=ANCHORS,
    sniff=sniff,
    decoder=_decoder,
    how_to_log=HOW_TO_LOG,
)
