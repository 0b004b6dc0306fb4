"""The torch.compile text log format as format detection sees it: anchors, sniff and registry
entry.  Its decoder (:mod:`recompile_doctor.parsers.torch`) is imported only when an input of
this format is read, so that detecting another format does not load it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from recompile_doctor.parsers._format import Decoder, LogFormat
from recompile_doctor.parsers._lazy_re import lazy_re

FRAMEWORK: Final = "torch"
ANCHORS = ("torch/_dynamo/", "torch/_inductor/", "torch/_functorch/", "torch/fx/")

# The pieces of a line, in order (the decoder's fast path checks each piece by its own
# pattern: :func:`recompile_doctor.parsers.torch.split_line`)
#: ``[default1]:`` (torchrun's ``--tee``) and ``[rank1]:`` (torch's formatter), each optional
LEAD = r"(?:\[default(?P<d>\d+)\]:)?(?:\[rank(?P<r>\d+)\]:)?"
#: the stamp's month, day and whole second: ``1122 19:11:45``
STAMP_HEAD = r"\d{4} \d\d:\d\d:\d\d"
#: after the stamp: the process id and the source (``  17328 torch/_dynamo/guards.py:5396]``)
SOURCE = r" +(?P<pid>\d+) (?P<file>torch/[^\s:\]]+):\d+\]"
#: the compile id (`` [0/1]``, `` [1/1_1]`` on a restart attempt) and the artifact tag
COMPILE_ID = r" \[(?P<frame>\d+)/(?P<comp>\d+)(?:_(?P<att>\d+))?\]"
ARTIFACT = r" \[__(?P<art>\w+)\]"

LINE_RE = lazy_re(
    rf"^{LEAD}(?P<lvl>[VIWEFC])(?P<md>\d{{4}}) (?P<ts>\d\d:\d\d:\d\d\.\d{{6}}){SOURCE}"
    rf"(?:{COMPILE_ID})?(?:{ARTIFACT})?(?: (?P<msg>.*))?$"
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
