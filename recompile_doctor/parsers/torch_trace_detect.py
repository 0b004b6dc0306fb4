"""The torch.compile structured-trace (TORCH_TRACE) log format as format detection sees it:
anchors, sniff and registry entry.  Its decoder (:mod:`recompile_doctor.parsers.torch_trace`)
is imported only when an input of this format is read, so that detecting another format does
not load it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from recompile_doctor.parsers._format import Decoder, LogFormat
from recompile_doctor.parsers._lazy_re import lazy_re

FRAMEWORK: Final = "torch"
ANCHORS = ('] {"',)
_ENV_RE = lazy_re(
    r"^(?P<lvl>[VIWEFC])(?P<md>\d{4}) (?P<ts>\d\d:\d\d:\d\d\.\d{6}) +\d+ [^\s\]]+:\d+\] (?P<json>\{.*)$"
)

_KINDS = ("dynamo_start", "compilation_metrics", "str", "artifact", "chromium_event")


def sniff(lines: Sequence[str]) -> int:
    """Envelopes of a known kind score 3 each (more than a text log's lines)."""
    score = 0
    for ln in lines:
        if '] {"' in ln and any(f'{{"{k}"' in ln for k in _KINDS) and _ENV_RE.match(ln) is not None:
            score += 3
    return score


def _decoder(path: str) -> Decoder:
    """A new decoder for the input at ``path`` (imports the decoder's module)."""
    from recompile_doctor.parsers.torch_trace import TorchTraceDecoder

    return TorchTraceDecoder(path)


TORCH_TRACE = LogFormat(
    name="torch-trace",
    framework=FRAMEWORK,
    anchors=ANCHORS,
    sniff=sniff,
    decoder=_decoder,
    how_to_log=(
        "For torch.compile structured traces, set TORCH_TRACE=/path/to/dir (one "
        "dedicated_log_torch_trace_*.log per rank) and pass the files."
    ),
)
