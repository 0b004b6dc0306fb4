"""Compare what sits beside the HLO: XLA flags, compile options and topology of two compilations.

A JAX dump folder holds, per compilation, ``module_NNNN.<name>.debug_options`` (the XLA flags
that differ from the defaults) and ``module_NNNN.<name>/compile_options.textproto`` and
``topology.textproto``.  Two compilations of the same HLO that differ there are two cache
entries: the persistent cache key hashes the flags and the compile options.  Each file is read
into a nested mapping (:mod:`recompile_doctor.parsers.textproto`) and compared with DeepDiff;
what JAX leaves out of the key (the ``xla_dump_*`` flags, the host device count, cache and
CUDA paths, see :data:`NOT_IN_KEY`) is ignored.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from recompile_doctor.parsers.dumps import SideFiles
from recompile_doctor.parsers.textproto import read_textproto

#: XLA flags JAX leaves out of the persistent cache key (``jax/_src/cache_key.py``:
#: ``xla_flags_to_exclude_from_cache_key`` and the debug options it clears in
#: ``_hash_serialized_compile_options``); every ``xla_dump_*`` flag is left out as well
NOT_IN_KEY: frozenset[str] = frozenset(
    {
        "xla_force_host_platform_device_count",
        "xla_gpu_cuda_data_dir",
        "xla_gpu_experimental_autotune_cache_mode",
        "xla_gpu_per_fusion_autotune_cache_dir",
        "xla_tpu_compiler_variant",
        "xla_tpu_sdc_checker_streamz_metric",
        "xla_tpu_sdc_checker_enable_sdc_event_callbacks",
        "xla_tpu_sdc_checker_enable_coresweep_ng_callbacks",
        "xla_tpu_sdc_checker_no_logging_if_callbacks_are_present",
    }
)
_NOT_IN_KEY_PREFIXES = ("xla_dump_",)
#: topology fields that name the platform's version rather than an option
_VERSION_FIELDS = frozenset({"platform_version"})
UNSET = "(unset)"

FILES = ("debug_options", "compile_options", "topology")


def in_cache_key(field: str) -> bool:
    """Whether the flag or option ``field`` (``xla_dump_to``, ``--xla_dump_to=dumps``) is part
    of the cache key."""
    name = field.lstrip("-").split("=", 1)[0]
    return name not in NOT_IN_KEY and not name.startswith(_NOT_IN_KEY_PREFIXES)


@dataclass(frozen=True, slots=True)
class SettingChange:
    """One field of the flags / compile options / topology that differs: ``field`` is the
    dotted path (``executable_build_options.debug_options.xla_backend_optimization_level``),
    ``old`` / ``new`` the values as text (None: not set)."""

    file: str  # one of FILES
    field: str
    old: str | None
    new: str | None
    rule: str
    a_path: str = ""
    b_path: str = ""

    @property
    def text(self) -> str:
        return f"{self.field}: {self.old or UNSET} → {self.new or UNSET}"

    def to_json(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "field": self.field,
            "old": self.old,
            "new": self.new,
            "rule": self.rule,
        }


def _text(v: Any) -> str | None:
    if type(v).__name__ == "NotPresent":  # deepdiff's marker of a field set on one side only
        return None
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (dict, list)):
        s = json.dumps(v, separators=(",", ":"), sort_keys=True, default=str)
        return s if len(s) <= 120 else s[:117] + "..."
    return str(v)


def _field(parts: list[Any]) -> str:
    out = ""
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out


def _rule(file: str, parts: list[Any]) -> str:
    if file == "debug_options" or "debug_options" in parts:
        return "flags-changed"
    if file == "topology" and any(p in _VERSION_FIELDS for p in parts):
        return "version-changed"
    return "compile-options-changed"


def compare_settings(
    a: dict[str, Any], b: dict[str, Any], file: str, a_path: str = "", b_path: str = ""
) -> list[SettingChange]:
    """The fields of one side file that differ and are part of the cache key."""
    # imported here: deepdiff imports pandas, which `analyze` of a plain log must not pay for
    from deepdiff import DeepDiff

    tree = DeepDiff(a, b, view="tree", verbose_level=2)
    out: list[SettingChange] = []
    for levels in tree.values():
        for lvl in levels:
            parts = list(lvl.path(output_format="list"))
            if not all(in_cache_key(p) for p in parts if isinstance(p, str)):
                continue
            out.append(
                SettingChange(
                    file,
                    _field(parts),
                    _text(lvl.t1),
                    _text(lvl.t2),
                    _rule(file, parts),
                    a_path,
                    b_path,
                )
            )
    out.sort(key=lambda c: c.field)
    return out


def _pairs(a: SideFiles, b: SideFiles) -> list[tuple[str, Path, Path]]:
    out = []
    for file in FILES:
        pa, pb = getattr(a, file), getattr(b, file)
        if pa is not None and pb is not None:
            out.append((file, pa, pb))
    return out


def compare_side_files(a: SideFiles, b: SideFiles) -> list[SettingChange]:
    """Every cache-key field that differs in the flags, compile options and topology files
    present on both sides."""
    out: list[SettingChange] = []
    for file, pa, pb in _pairs(a, b):
        out.extend(compare_settings(read_textproto(pa), read_textproto(pb), file, str(pa), str(pb)))
    return out
