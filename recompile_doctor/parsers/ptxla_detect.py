"""The PyTorch/XLA log format as format detection sees it: anchors, sniff and registry entry.
Its decoder (:mod:`recompile_doctor.parsers.ptxla`) is imported only when an input of this
format is read, so that detecting another format does not load it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from recompile_doctor.parsers._format import Decoder, LogFormat

FRAMEWORK: Final = "ptxla"
_COMPILE = "Compilation Analysis: "
_EXECUTE = ("Execution Analysis: ", "Unexpected Execution Analysis: ")
_POST = "Post Compilation Analysis: "
_PREFIXES = (_COMPILE, *_EXECUTE, _POST)
ANCHORS = (
    "Analysis: ",
    "Computation hash: ",
    "Metric: ",
    "Counter: ",
    "pt-xla-profiler: ",
)

#: metrics-report headers that only PyTorch/XLA's compile metrics print
_METRIC_HEADS = (
    "Metric: CompileTime",
    "Metric: ExecuteTime",
    "Counter: UncachedCompile",
    "Counter: CachedCompile",
)


def sniff(lines: Sequence[str]) -> int:
    """Analysis-block lines score 3, metrics-report headers of compile metrics 2."""
    score = 0
    for ln in lines:
        if ln.startswith(_PREFIXES):
            score += 3
        elif ln.startswith(_METRIC_HEADS) or "pt-xla-profiler: " in ln:
            score += 2
    return score


def _decoder(path: str) -> Decoder:
    """A new decoder for the input at ``path`` (imports the decoder's module)."""
    from recompile_doctor.parsers.ptxla import PtxlaDecoder

    return PtxlaDecoder(path)


PTXLA = LogFormat(
    name="ptxla",
    framework=FRAMEWORK,
    anchors=ANCHORS,
    sniff=sniff,
    decoder=_decoder,
    how_to_log=(
        "For PyTorch/XLA, log with PT_XLA_DEBUG_LEVEL=2 python train.py > run.log 2>&1 and "
        "print(torch_xla.debug.metrics.metrics_report()) at the end of the run."
    ),
)
