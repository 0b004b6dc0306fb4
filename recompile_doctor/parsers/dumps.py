"""XLA dump folders (``--xla_dump_to``): file naming, grouping by module and stage, pairing.

XLA names a dump ``[<timestamp>.]module_<id>[.<module name>][.cl_<n>].<suffix>`` where ``<id>``
is a per-process counter (``%04d``, widening past 4 digits) and ``<suffix>`` names the stage:
``before_optimizations``, ``after_optimizations``, ``cpu_after_optimizations``,
``sm_8.0_gpu_after_optimizations``, the TPU ``after_optimizations_{before,after}_buffer_assignment``,
or a per-pass dump ``<step>.<pipeline>.after_<pass>.before_<pass>``.  Everything else in a dump
folder (``.ll``, ``.o``, ``debug_options``, buffer assignments, protos, MLIR) is ignored.

The id is *not* stable across processes: two folders are paired by module name (and content),
and within one folder the same name with different ids is a sequence of compilations.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from recompile_doctor.errors import RecompileDoctorError
from recompile_doctor.parsers import _names
from recompile_doctor.parsers._lazy_re import lazy_re

DEFAULT_STAGE = "before_optimizations"

_FILE = lazy_re(r"^(?:(?P<ts>\d{6,})\.)?module_(?P<id>\d{4,})(?:\.(?P<rest>.+))?\.txt(?:\.gz)?$")
_STAGE = lazy_re(
    r"(?:^|\.)(?P<stage>"
    r"(?:(?:sm_[\d.]+|[a-z][a-z0-9]*)_gpu_|cpu_)?after_optimizations"
    r"(?:_(?:before|after)_buffer_assignment)?"
    r"|before_optimizations"
    r"|\d{4}\.[\w-]+\.after_[\w-]+\.before_[\w-]+"
    r")$"
)
_CL = lazy_re(r"\.cl_\d+$")
_IGNORED_TAILS = ("-buffer-assignment", "-memory-usage-report", "-live-range", "-values")
_INFERENCE = lazy_re(r"^(a_inference_.+?)_\d+__")
_UNIQUE_SUFFIX = lazy_re(r"\.\d+$")
#: what frameworks put before the user's function name in a module name
_FUNCTION_PREFIXES = ("a_inference_", "jit_")


def function_name(module: str) -> str:
    """The function a module compiles (``a_inference_mlp_28__...`` and ``jit_mlp`` -> ``mlp``):
    see :func:`recompile_doctor.parsers._names.function_name`, shared with the log parsers."""
    return _names.function_name(module)


def _decorated_name(module: str) -> str:
    """The module's name without per-trace ids, framework prefix kept (``a_inference_mlp``,
    ``jit_mlp``)."""
    m = _INFERENCE.match(module)
    if m:
        return m.group(1)
    return _UNIQUE_SUFFIX.sub("", module)


def module_names(module: str) -> set[str]:
    """Every name a user may give for ``module`` (``--module``): the full name, the function
    name and the function name without its framework prefix (``mlp`` for ``jit_mlp`` and for
    ``a_inference_mlp_28__...``)."""
    fn = _decorated_name(module)
    names = {module, fn, function_name(module)}
    for prefix in _FUNCTION_PREFIXES:
        if fn.startswith(prefix) and len(fn) > len(prefix):
            names.add(fn[len(prefix) :])
    return names


@dataclass(frozen=True, slots=True)
class DumpFile:
    """One HLO text dump: which module, which compilation (id), which stage."""

    path: Path
    module_id: int
    name: str
    stage: str
    timestamp: int | None = None

    @property
    def is_pass_dump(self) -> bool:
        return self.stage[:4].isdigit()


def parse_dump_name(filename: str) -> tuple[int, str | None, str, int | None] | None:
    """``(id, module name or None, stage, timestamp)`` of an HLO text dump name, else None."""
    m = _FILE.match(filename)
    if m is None or m.group("rest") is None:
        return None
    rest = m.group("rest")
    if rest.endswith(_IGNORED_TAILS):
        return None
    s = _STAGE.search(rest)
    if s is None:
        return None
    name: str | None = rest[: s.start()]
    name = _CL.sub("", name) if name else None
    ts = m.group("ts")
    return int(m.group("id")), name or None, s.group("stage"), int(ts) if ts else None


def _header_name(path: Path) -> str:
    """The module name from the ``HloModule`` line (used when the file name omits it)."""
    try:
        with path.open("r", encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("HloModule"):
                    return line.split()[1].rstrip(",") if len(line.split()) > 1 else path.name
    except OSError:
        pass
    return path.name


def scan_folder(folder: str | Path) -> list[DumpFile]:
    """Every HLO text dump in ``folder`` (not recursive), sorted by module name then id."""
    root = Path(folder)
    if not root.exists():
        raise RecompileDoctorError("no such directory", path=str(folder))
    if not root.is_dir():
        raise RecompileDoctorError("not a directory, expected an XLA dump folder", path=str(folder))
    out: list[DumpFile] = []
    for p in root.iterdir():
        parsed = parse_dump_name(p.name)
        if parsed is None or not p.is_file():
            continue
        mid, name, stage, ts = parsed
        out.append(DumpFile(p, mid, name or _header_name(p), stage, ts))
    out.sort(key=lambda d: (d.name, d.module_id, d.stage))
    return out


def _has_dump(folder: Path) -> bool:
    try:
        return any(parse_dump_name(p.name) is not None for p in folder.iterdir())
    except OSError:
        return False


def no_dump_error(
    folder: str | Path, files: list[DumpFile], stage: str | None
) -> RecompileDoctorError:
    """The error for a folder with nothing to compare: what was looked for, what is there."""
    root = Path(folder)
    pattern = f"module_*.{stage or '<stage>'}.txt"
    if files:
        present = ", ".join(stages(files))
        return RecompileDoctorError(
            f"no HLO dump at stage '{stage}' (looked for {pattern} files; stages present: "
            f"{present})",
            path=str(folder),
        )
    subs = sorted((p for p in root.iterdir() if p.is_dir()), key=lambda p: p.name)
    with_dumps = [p for p in subs if _has_dump(p)]
    if with_dumps:
        names = ", ".join(f"{p.name}/" for p in with_dumps[:6])
        more = f" and {len(with_dumps) - 6} more" if len(with_dumps) > 6 else ""
        hint = (
            f"the folder has {'a subfolder' if len(with_dumps) == 1 else 'subfolders'} with "
            f"dumps: {names}{more} — did you mean "
            f"{'it' if len(with_dumps) == 1 else 'one of them'}?"
        )
    elif side := _side_only_modules(root):
        # XLA wrote a module's options but no HLO: the module was looked up, not compiled
        return RecompileDoctorError(
            f"no HLO to compare: the folder holds XLA's side files of {', '.join(side)} but "
            "no HLO text, so that run compiled nothing (its executables came from a "
            "compilation cache); analyze the two runs' logs together to see why they hit or "
            "missed the cache",
            path=str(folder),
        )
    elif any(root.iterdir()):
        hint = "nothing in the folder is named like an XLA dump; dump with --xla_dump_to=DIR"
    else:
        hint = "the folder is empty; dump with XLA_FLAGS=--xla_dump_to=DIR"
    return RecompileDoctorError(
        f"no HLO dump found (looked for {pattern} files; {hint})", path=str(folder)
    )


_SIDE_FILE_RE = lazy_re(r"module_\d+\.(?P<name>.+?)\.(?:debug_options|[a-z_]+\.textproto)$")


def _side_only_modules(root: Path) -> list[str]:
    """The modules a dump folder has XLA side files for (``module_0002.jit_f.debug_options``)
    when it holds no HLO text at all."""
    names = []
    for p in sorted(root.iterdir(), key=lambda p: p.name):
        m = _SIDE_FILE_RE.match(p.name) if p.is_file() else None
        if m is not None and m.group("name") not in names:
            names.append(m.group("name"))
    return names


def stages(files: list[DumpFile]) -> list[str]:
    """The stages present, in a stable order (before_optimizations first)."""
    found = sorted({f.stage for f in files})
    return sorted(found, key=lambda s: (s != DEFAULT_STAGE, s))


def pick_stage(files: list[DumpFile], stage: str | None = None) -> str | None:
    """``stage`` if present, else ``before_optimizations``, else the only non-pass stage."""
    present = stages(files)
    if not present:
        return None
    if stage is not None:
        return stage
    if DEFAULT_STAGE in present:
        return DEFAULT_STAGE
    whole = [s for s in present if not s[:4].isdigit()]
    return whole[0] if whole else present[0]


def group_by_module(files: list[DumpFile], stage: str | None = None) -> dict[str, list[DumpFile]]:
    """Module name -> its compilations (one file each, at one stage) in module id order.

    The stage is chosen per module: ``stage`` when given, else ``before_optimizations``,
    falling back to the only stage that module has.
    """
    by_name: dict[str, list[DumpFile]] = {}
    for f in files:
        by_name.setdefault(f.name, []).append(f)
    out: dict[str, list[DumpFile]] = {}
    for name in sorted(by_name):
        mine = by_name[name]
        chosen = pick_stage(mine, stage)
        seq = sorted((f for f in mine if f.stage == chosen), key=lambda f: f.module_id)
        if seq:
            out[name] = seq
    return out


def group_by_function(files: list[DumpFile], stage: str | None = None) -> dict[str, list[DumpFile]]:
    """:func:`function_name` -> its compilations in module id order: a function retraced
    under another module name (TensorFlow's per-trace counter) stays one sequence."""
    out: dict[str, list[DumpFile]] = {}
    for name, seq in group_by_module(files, stage).items():
        out.setdefault(function_name(name), []).extend(seq)
    return {k: sorted(v, key=lambda f: f.module_id) for k, v in sorted(out.items())}


def pair_names(
    a: dict[str, list[DumpFile]], b: dict[str, list[DumpFile]]
) -> tuple[list[str], list[str], list[str]]:
    """Module names in both folders, only in ``a``, only in ``b`` (each sorted)."""
    both = sorted(set(a) & set(b))
    return both, sorted(set(a) - set(b)), sorted(set(b) - set(a))


@dataclass(frozen=True, slots=True)
class SideFiles:
    """What JAX's XLA dump puts beside one compilation's HLO text (None where absent):
    ``<prefix>.debug_options`` and, in the folder ``<prefix>/``, ``compile_options.textproto``,
    ``topology.textproto`` and ``module.mlir``; ``<prefix>`` is ``module_NNNN.<name>``."""

    prefix: str
    debug_options: Path | None
    compile_options: Path | None
    topology: Path | None
    mlir: Path | None

    @property
    def any(self) -> bool:
        return any((self.debug_options, self.compile_options, self.topology, self.mlir))


def _present(p: Path) -> Path | None:
    return p if p.is_file() else None


def side_files(hlo_path: str | Path) -> SideFiles:
    """The files beside the HLO text dump ``hlo_path`` (any stage) of the same compilation."""
    p = Path(hlo_path)
    parsed = parse_dump_name(p.name)
    if parsed is None:
        prefix = p.name.split(".txt")[0]
    else:
        prefix = p.name[: p.name.rindex("." + parsed[2])]
        prefix = _CL.sub("", prefix)
    folder = p.parent / prefix
    return SideFiles(
        prefix,
        _present(p.parent / f"{prefix}.debug_options"),
        _present(folder / "compile_options.textproto"),
        _present(folder / "topology.textproto"),
        _present(folder / "module.mlir"),
    )
