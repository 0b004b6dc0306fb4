"""Hand-off from the HLO differ to the analyses.

For the dump folders of one run, the compilations of every function (modules whose names differ
only by TensorFlow's per-trace ids count as one function, see
:func:`~recompile_doctor.timeline.function_key`) are put in order (folder order, then the
``module_NNNN`` id, which grows within a process) and diffed pairwise; ``growing-shape`` is found
across the whole sequence.
"""

from __future__ import annotations

from collections.abc import Sequence

from recompile_doctor.analyses._common import CompileDiff, DumpSequence
from recompile_doctor.differ import diff_sequence
from recompile_doctor.differ.result import ModuleDiff
from recompile_doctor.parsers.dumps import DumpFile, group_by_module, scan_folder
from recompile_doctor.parsers.hlo import parse_hlo_file
from recompile_doctor.timeline import function_key

#: instruction-level changes kept per compilation pair
MAX_DIFF_EVIDENCE = 20


def _condense(md: ModuleDiff) -> CompileDiff:
    return CompileDiff(
        causes=tuple(md.causes),
        summary="; ".join(c.message for c in md.explanations) or "no difference",
        evidence=md.to_evidence()[:MAX_DIFF_EVIDENCE],
        a_path=md.a_path,
        b_path=md.b_path,
    )


def dump_diffs(folders: Sequence[str]) -> dict[str, DumpSequence]:
    """Per function key: how many dumps it has and the diffs of its consecutive ones."""
    seqs: dict[str, list[DumpFile]] = {}
    for folder in folders:
        for name, files in group_by_module(scan_folder(folder)).items():
            seqs.setdefault(function_key(name), []).extend(files)
    out: dict[str, DumpSequence] = {}
    for key, files in seqs.items():
        if len(files) < 2:
            out[key] = DumpSequence(len(files), ())
            continue
        modules = [parse_hlo_file(f.path) for f in files]
        out[key] = DumpSequence(len(files), tuple(_condense(d) for d in diff_sequence(modules)))
    return out
