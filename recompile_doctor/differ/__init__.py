"""Explain why two compilations of a module differ: name the cause, then the evidence.

``diff_modules(a, b)`` aligns two parsed modules (:mod:`.align`), ignores what cannot cause a
recompile (names, ids, metadata, layouts, scheduling) and rolls the rest up into SPEC rule ids
(:mod:`.causes`).  ``diff_paths(A, B)`` does the same for two files or two dump folders, pairing
the compilations of each module in order and comparing a side's extra compilations with their
predecessor in the same folder; ``explain_dump_folder(DIR)`` diffs the consecutive compilations of
each module within one run's dump folder.
"""

from __future__ import annotations

from pathlib import Path

from recompile_doctor.differ.align import align
from recompile_doctor.differ.beside import annotate
from recompile_doctor.differ.causes import explain
from recompile_doctor.differ.fingerprint import Fingerprints, compute
from recompile_doctor.differ.result import (
    SCHEMA_DIFF,
    Cause,
    Change,
    DiffResult,
    ModuleDiff,
    Note,
    Side,
)
from recompile_doctor.differ.sequence import mark_growth
from recompile_doctor.errors import RecompileDoctorError
from recompile_doctor.gc_pause import gc_paused
from recompile_doctor.parsers.dumps import (
    DumpFile,
    function_name,
    group_by_function,
    group_by_module,
    module_names,
    no_dump_error,
    pair_names,
    scan_folder,
)
from recompile_doctor.parsers.hlo import (
    HloModule,
    parse_hlo_file,
    parse_hlo_file_like,
    parse_hlo_file_recorded,
    parse_hlo_files,
    plain_requested,
)

__all__ = [
    "SCHEMA_DIFF",
    "Cause",
    "Change",
    "DiffResult",
    "ModuleDiff",
    "Note",
    "Side",
    "diff_dirs",
    "diff_files",
    "diff_modules",
    "diff_paths",
    "diff_sequence",
    "explain_dump_folder",
    "module_fingerprint",
]


def diff_modules(
    a: HloModule,
    b: HloModule,
    fa: Fingerprints | None = None,
    fb: Fingerprints | None = None,
) -> ModuleDiff:
    """The causes and instruction changes between two compilations ``a`` (old) and ``b`` (new)."""
    with gc_paused():  # many small objects, no garbage: the cyclic GC only costs time here
        fa = fa if fa is not None else compute(a)
        fb = fb if fb is not None else compute(b, like=fa)
        full_a, full_b = fa.computation_full, fb.computation_full
        md = explain(
            a, b, align(a, b, fa, fb), lambda ca, cb: full_a.get(ca, 0) == full_b.get(cb, 1)
        )
    annotate(md, a.path, b.path)
    return md


def module_fingerprint(m: HloModule, fp: Fingerprints | None = None) -> int:
    """One number for "same executable": equal for modules that differ only in noise."""
    fp = fp if fp is not None else compute(m)
    return fp.computation_full[m.entry]


def diff_files(a: str | Path, b: str | Path, *, plain: bool | None = None) -> ModuleDiff:
    """Two HLO files (B's lines printed as A's are parsed once: see :func:`parse_hlo_files`;
    ``plain`` parses each from scratch, default ``$RECOMPILE_DOCTOR_PLAIN``)."""
    return diff_modules(*parse_hlo_files(a, b, plain=plain))


def diff_sequence(modules: list[HloModule]) -> list[ModuleDiff]:
    """Pairwise diffs of consecutive compilations; ``growing-shape`` is found across them."""
    fps = [compute(m) for m in modules]
    diffs = [
        diff_modules(modules[k], modules[k + 1], fps[k], fps[k + 1])
        for k in range(len(modules) - 1)
    ]
    mark_growth(modules, diffs)
    return diffs


def explain_dump_folder(path: str | Path, stage: str | None = None) -> dict[str, list[ModuleDiff]]:
    """For one run's dump folder: module name -> diffs of its consecutive compilations.

    Modules compiled once map to an empty list.  Order is the module id order in the folder.
    """
    groups = group_by_module(scan_folder(path), stage)
    return {
        name: diff_sequence([parse_hlo_file(f.path) for f in files]) if len(files) > 1 else []
        for name, files in groups.items()
    }


def _parse_sides(
    fa: list[DumpFile], fb: list[DumpFile], plain: bool | None
) -> tuple[list[HloModule], list[HloModule]]:
    """A's compilations, then B's, the k-th of B taking over the k-th of A's lines printed
    the same (:func:`parse_hlo_files`) unless ``plain`` (default
    ``$RECOMPILE_DOCTOR_PLAIN``); the same modules either way, in the same order (so the
    same first error)."""
    if plain is None:
        plain = plain_requested()
    if plain:
        return [parse_hlo_file(f.path) for f in fa], [parse_hlo_file(f.path) for f in fb]
    recorded = [parse_hlo_file_recorded(f.path) for f in fa]
    likes = [like for _, like in recorded]
    mb = [
        parse_hlo_file_like(f.path, likes[k] if k < len(likes) else None) for k, f in enumerate(fb)
    ]
    return [m for m, _ in recorded], mb


def _compare_function(
    res: DiffResult, fa: list[DumpFile], fb: list[DumpFile], plain: bool | None = None
) -> None:
    """Account for every compilation of one function in A and in B.

    The k-th compilation in A is compared with the k-th in B; a side's extra compilations
    (beyond the other side's count, or all but the first when the other side has none) are
    compared with their predecessor in the same folder, as a sequence (``growing-shape``).
    """
    ma, mb = _parse_sides(fa, fb, plain)
    n = min(len(ma), len(mb))
    for k in range(n):
        md = diff_modules(ma[k], mb[k])
        if fa[k].name != fb[k].name:  # a retrace: name the function, not two long names
            md.name = function_name(fa[k].name)
        res.modules.append(md)
    for side, mine in (("a", ma), ("b", mb)):
        chain = mine[max(n, 1) - 1 :]
        if len(chain) < 2:
            continue
        for md in diff_sequence(chain):
            md.within = side
            res.modules.append(md)


def _functions_named(module: str, *groups: dict[str, list[DumpFile]]) -> set[str]:
    """The functions that ``module`` names (a full module name, a function or a short name)
    in any of ``groups``: the full name of B's module also picks A's compilations of it."""
    return {
        fn
        for g in groups
        for fn, files in g.items()
        if any(module in module_names(f.name) for f in files)
    }


def diff_dirs(
    a: str | Path,
    b: str | Path,
    module: str | None = None,
    stage: str | None = None,
    *,
    plain: bool | None = None,
) -> DiffResult:
    """Diff two dump folders: modules paired by function name (:func:`function_name`: never by
    the module_NNNN counter, nor by TensorFlow's per-trace counter)."""
    groups = []
    for folder in (a, b):
        files = scan_folder(folder)
        grouped = group_by_function(files, stage)
        if not grouped:  # comparing nothing is never "equivalent"
            raise no_dump_error(folder, files, stage)
        groups.append(grouped)
    ga, gb = groups
    if module is not None:
        wanted = _functions_named(module, ga, gb)
        if not wanted:
            known = ", ".join(sorted(set(ga) | set(gb))) or "none"
            raise RecompileDoctorError(f"no module named '{module}' (modules: {known})", str(a))
        ga = {k: v for k, v in ga.items() if k in wanted}
        gb = {k: v for k, v in gb.items() if k in wanted}
    _, only_a, only_b = pair_names(ga, gb)
    res = DiffResult(str(a), str(b), unpaired_a=only_a, unpaired_b=only_b)
    for name in sorted(set(ga) | set(gb)):
        _compare_function(res, ga.get(name, []), gb.get(name, []), plain)
    return res


def diff_paths(
    a: str | Path,
    b: str | Path,
    module: str | None = None,
    stage: str | None = None,
    *,
    plain: bool | None = None,
) -> DiffResult:
    """``diff A B``: two HLO files, or two dump folders.  ``plain`` (default
    ``$RECOMPILE_DOCTOR_PLAIN``) parses B's modules from scratch instead of taking over the
    lines of the A module they are compared with printed the same (:func:`parse_hlo_files`):
    the result is the same."""
    # The parser and the differ allocate many objects and free none until the modules go
    # (when _diff_paths returns): the cyclic GC would only scan them, once more after each
    # step that turns it back on.  Off until then, the modules are freed before it runs.
    with gc_paused():
        return _diff_paths(a, b, module, stage, plain)


def _diff_paths(
    a: str | Path, b: str | Path, module: str | None, stage: str | None, plain: bool | None
) -> DiffResult:
    pa, pb = Path(a), Path(b)
    for p in (pa, pb):
        if not p.exists():
            raise RecompileDoctorError("no such file or directory", path=str(p))
    if pa.is_dir() != pb.is_dir():
        raise RecompileDoctorError(
            "cannot compare a folder with a file: give two HLO files or two dump folders",
            path=str(b if pa.is_dir() else a),
        )
    if pa.is_dir():
        return diff_dirs(pa, pb, module, stage, plain=plain)
    ma, mb = parse_hlo_files(pa, pb, plain=plain)
    if module is not None and module not in module_names(ma.name) | module_names(mb.name):
        raise RecompileDoctorError(f"no module named '{module}' (modules: {ma.name})", str(a))
    return DiffResult(str(a), str(b), [diff_modules(ma, mb)])
