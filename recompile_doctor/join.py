"""Timeline + dump folders -> per-compilation HLO diffs, before any analysis runs.

For the dump folders of one run, the compilations of every function (modules whose names
differ only by a framework's per-trace decoration count as one function, see
:func:`~recompile_doctor.parsers._names.function_name`) are put in order (folder order, then
the ``module_NNNN`` id, which grows within a process) and diffed pairwise.  Each diff is then
matched to the compilation of the log it explains:

* when a function has one dump per compilation in the log, the k-th dump is the k-th
  compilation;
* otherwise (a compilation served from an in-process cache wrote no line, dumps are missing),
  the k-th distinct HLO hash is explained by the k-th diff that found a difference.

When the log shows a single compilation of a function but its dumps show several (TensorFlow
logs only the first), the dumps' extra compilations are reported as :class:`DumpOnly` so the
analyses can count and explain them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from recompile_doctor.analyses._common import CompileDiff
from recompile_doctor.model import Compilation

if TYPE_CHECKING:
    from recompile_doctor.differ.result import ModuleDiff
    from recompile_doctor.parsers.dumps import DumpFile
from recompile_doctor.timeline import Timeline, function_key

#: instruction-level changes kept per compilation pair
MAX_DIFF_EVIDENCE = 20


@dataclass(frozen=True, slots=True)
class DumpSequence:
    """The dumps of one function in a run: the files, and the diffs of consecutive ones."""

    files: tuple[str, ...]
    diffs: tuple[CompileDiff, ...]  # diffs[i] compares dump i+1 with dump i

    @property
    def count(self) -> int:
        return len(self.files)


@dataclass(frozen=True, slots=True)
class Joined:
    """What the dumps add to a timeline."""

    given: bool = False
    #: per function key: its dump sequence
    sequences: Mapping[str, DumpSequence] = field(default_factory=dict)
    #: compilation id -> the diff that explains it (against the previous compilation)
    by_compilation: Mapping[int, CompileDiff] = field(default_factory=dict)
    #: per function key: diffs of compilations that only the dumps show
    dump_only: Mapping[str, tuple[CompileDiff, ...]] = field(default_factory=dict)


def _condense(md: ModuleDiff) -> CompileDiff:
    notes = tuple(n.rule for n in md.notes if n.rule)
    return CompileDiff(
        causes=tuple(md.causes),
        summary="; ".join([c.message for c in md.explanations] + [n.message for n in md.notes])
        or "no difference",
        evidence=md.to_evidence()[:MAX_DIFF_EVIDENCE],
        a_path=md.a_path,
        b_path=md.b_path,
        notes=notes,
    )


def dump_sequences(folders: Sequence[str]) -> dict[str, DumpSequence]:
    """Per function key: its dumps in order and the diffs of consecutive ones."""
    from recompile_doctor.parsers.dumps import group_by_module, scan_folder  # only with dumps

    seqs: dict[str, list[DumpFile]] = {}
    for folder in folders:
        found: dict[str, list[DumpFile]] = {}
        for name, files in group_by_module(scan_folder(folder)).items():
            found.setdefault(function_key(name), []).extend(files)
        for key, files in found.items():
            # a retrace renames the module: order the function's dumps by compilation id
            files.sort(key=lambda f: (f.timestamp or 0, f.module_id))
            seqs.setdefault(key, []).extend(files)
    out: dict[str, DumpSequence] = {}
    for key, files in seqs.items():
        paths = tuple(str(f.path) for f in files)
        if len(files) < 2:
            out[key] = DumpSequence(paths, ())
            continue
        from recompile_doctor.parsers.hlo import parse_hlo_file  # only with dumps

        modules = [parse_hlo_file(f.path) for f in files]
        from recompile_doctor.differ import diff_sequence  # only with dumps: not at start-up

        out[key] = DumpSequence(paths, tuple(_condense(d) for d in diff_sequence(modules)))
    return out


def _match(seq: DumpSequence, comps: list[Compilation]) -> dict[int, CompileDiff]:
    compiled = [c for c in comps if c.compiled]
    if not seq.diffs or not compiled:
        return {}
    if seq.count == len(compiled):
        return {c.id: seq.diffs[i - 1] for i, c in enumerate(compiled) if i > 0}
    changed = [d for d in seq.diffs if d.causes]
    hashes = list(dict.fromkeys(c.hash for c in compiled if c.hash))
    out: dict[int, CompileDiff] = {}
    for i, c in enumerate(compiled):
        if i == 0 or c.hash is None or compiled[i - 1].hash == c.hash:
            continue
        k = hashes.index(c.hash)
        if 0 < k <= len(changed):
            out[c.id] = changed[k - 1]
    return out


def join_dumps(tl: Timeline, folders: Sequence[str]) -> Joined:
    """Diff the dumps of every function and attach each diff to its compilation."""
    if not folders:
        return Joined()
    seqs = dump_sequences(folders)
    by_comp: dict[int, CompileDiff] = {}
    dump_only: dict[str, tuple[CompileDiff, ...]] = {}
    by_fn = tl.by_function()
    for key, seq in seqs.items():
        comps = by_fn.get(key, [])
        compiled = [c for c in comps if c.compiled]
        by_comp.update(_match(seq, comps))
        if len(compiled) <= 1 < seq.count:
            # the log shows only the first compilation: the rest are the dumps' alone
            dump_only[key] = seq.diffs
    return Joined(True, seqs, by_comp, dump_only)
