"""The torch.compile text log format as format detection sees it: anchors, sniff and registry
entry.  Its decoder (:mod:`recompile_doctor.parsers.torch`) is imported only when an input of
this format is read, so that detecting another format does not load it."""

from __future__ import annotations

from collections.abc import Sequence

from recompile_doctor.parsers._format import Decoder, LogFormat
from recompile_doctor.parsers._lazy_re import lazy_re

FRAMEWORK = "torch"
ANCHORS = ("torch/_dynamo/", "torch/_inductor/", "torch/_functorch/", "torch/fx/")

LINE_RE = lazy_re(
    r"^(?:\[default(?P<d>\d+)\]:)?(?:\[rank(?P<r>\d+)\]:)?"
    r"(?P<lvl>[VIWEFC])(?P<md>\d{4}) (?P<ts>\d\d:\d\d:\d\d\.\d{6}) +(?P<pid>\d+) "
    r"(?P<file>torch/[^\s:\]]+):\d+\]"
    r"(?: \[(?P<frame>\d+)/(?P<comp>\d+)(?:_(?P<att>\d+))?\])?"
    r"(?: \[__(?P<art>\w+)\])?(?: (?P<msg>.*))?$"
)

#: LINE_RE's groups in order (the decoder takes them all at once)
LINE_GROUPS = ("d", "r", "lvl", "md", "ts", "pid", "file", "frame", "comp", "att", "art", "msg")


def sniff(lines: Sequence[str]) -> int:
    """Torch text-log lines score 2 each; a structured trace (JSON envelopes) scores 0."""
    score = 0
    for ln in lines:
        if "torch/" not in ln or '] {"' in ln:
            continue
        if LINE_RE.match(ln.rstrip("\r\n")) is not None:
            score += 2
    return score


def _decoder(path: str) -> Decoder:
    """A new decoder for the input at ``path`` (imports the decoder's module)."""
    from recompile_doctor.parsers.torch import TorchLogDecoder

    return TorchLogDecoder(path)


TORCH = LogFormat(
    name="torch",
    framework=FRAMEWORK,
    anchors=ANCHORS,
    sniff=sniff,
    decoder=_decoder,
    how_to_log=(
        "For torch.compile, log with TORCH_LOGS=recompiles,graph_breaks (or "
        "recompiles_verbose) python train.py 2> run.log, or write structured traces with "
        "TORCH_TRACE=/path/to/dir (one file per rank)."
    ),
)
