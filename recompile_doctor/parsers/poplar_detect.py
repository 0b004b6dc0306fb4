"""The Poplar / TensorFlow-on-IPU log format as format detection sees it: anchors, sniff and
registry entry.  Its decoder (:mod:`recompile_doctor.parsers.poplar_decoder`, with the message
table of :mod:`recompile_doctor.parsers.poplar`) is imported only when an input of this
format is read, so that detecting another format does not load it."""

from __future__ import annotations

from collections.abc import Sequence

from recompile_doctor.parsers._format import Decoder, LogFormat, anchor_sniffer

_POPLAR_ANCHORS = (
    "Begin XLA compilation",
    "executable cache",
    "Poplar version:",
    "TF_POPLAR_FLAGS",
    "PopLibs",
    "POPLAR",
    "phase: ",
    "Compiling module ",
    ".poplar_exec",
    "poplar_compiler.cc",
    "PopART",
    "PopTorch",
    "Graph compilation: 100%",
)


def _poplar_sniff(lines: Sequence[str]) -> int:
    return anchor_sniffer(_POPLAR_ANCHORS)(lines)


def _poplar_decoder(path: str) -> Decoder:
    """A Poplar decoder: its modules are imported only when a Poplar log is read."""
    from recompile_doctor.parsers.poplar_decoder import PoplarDecoder

    return PoplarDecoder(path)


POPLAR = LogFormat(
    name="poplar",
    framework="poplar",
    anchors=_POPLAR_ANCHORS,
    sniff=_poplar_sniff,
    decoder=_poplar_decoder,
    how_to_log=(
        "For a Graphcore TensorFlow-on-IPU run, log with TF_POPLAR_VLOG_LEVEL=1 (or "
        "TF_CPP_VMODULE='poplar_compiler=1,poplar_executable=1') and POPLAR_LOG_LEVEL=INFO "
        "(python train.py 2> run.log)."
    ),
)
