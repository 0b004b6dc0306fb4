"""What the files beside two HLO dumps add to their diff: changed flags and compile options,
and the values of constants the HLO text elides.

:func:`annotate` runs after the HLO comparison of two compilations whose dump folders hold
JAX's side files (:func:`~recompile_doctor.parsers.dumps.side_files`):

* flags / compile options / topology that differ and are part of the cache key become the
  causes ``flags-changed``, ``compile-options-changed``, ``version-changed``
  (:mod:`.options`) — the same HLO compiled with other options is another executable;
* where the HLO text printed constants as ``{...}``, their values are compared in
  ``module.mlir`` (:mod:`.mlir_constants`): changed values of a weight-sized constant are
  ``frozen-weights`` (of a small one, ``constant-changed``), and the ``constants-elided`` note
  is dropped because the values were compared after all.

The readers of those files are imported only when a diff's dumps have them (not for two
plain HLO files).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from recompile_doctor.differ.causes import SAME_HLO
from recompile_doctor.differ.result import Change, ModuleDiff, Side
from recompile_doctor.parsers.dumps import side_files

if TYPE_CHECKING:
    from recompile_doctor.differ.mlir_constants import ConstantChange
    from recompile_doctor.differ.options import SettingChange

#: a constant with at least this many elements is a weight (the HLO differ's threshold too)
WEIGHT_ELEMENTS = 16


def _fmt(x: float) -> str:
    return f"{x:.6g}"


def constants_message(changes: list[ConstantChange]) -> str:
    """One line: which constants changed, how many elements, the largest difference."""
    parts = []
    for ch in changes[:3]:
        parts.append(
            f"{ch.a.name} {ch.a.type_text}: {ch.changed} of {ch.a.size} elements differ "
            f"(largest difference {_fmt(ch.max_abs_diff)})"
        )
    more = f", {len(changes) - 3} more" if len(changes) > 3 else ""
    return "constant values differ in module.mlir: " + "; ".join(parts) + more


def _constant_change(ch: ConstantChange, rule: str) -> Change:
    return Change(
        "constant",
        Side(ch.a.name, "module.mlir", f"{ch.a.type_text} dense<{ch.a.text}>", ch.a.line),
        Side(ch.b.name, "module.mlir", f"{ch.b.type_text} dense<{ch.b.text}>", ch.b.line),
        None,
        f"{ch.changed} of {ch.a.size} elements differ, largest difference {_fmt(ch.max_abs_diff)}",
        rule,
    )


def settings_message(changes: list[SettingChange]) -> str:
    shown = [f"{c.file} {c.text}" for c in changes[:4]]
    more = f", {len(changes) - 4} more" if len(changes) > 4 else ""
    return "the HLO is compiled with other settings: " + "; ".join(shown) + more


def _resolve_elided(md: ModuleDiff, a_mlir: str, b_mlir: str) -> None:
    from recompile_doctor.differ.mlir_constants import compare_constants, read_constants

    changes = compare_constants(read_constants(a_mlir), read_constants(b_mlir))
    md.notes = [n for n in md.notes if n.rule != "constants-elided"]
    if not changes:
        return
    weights = [c for c in changes if c.a.size >= WEIGHT_ELEMENTS]
    small = [c for c in changes if c.a.size < WEIGHT_ELEMENTS]
    for rule, group in (("frozen-weights", weights), ("constant-changed", small)):
        if not group:
            continue
        md.add_cause(rule, constants_message(group))
        md.changes.extend(_constant_change(c, rule) for c in group)
        md.stats["changes.constant"] = md.stats.get("changes.constant", 0) + len(group)


def annotate(md: ModuleDiff, a_hlo: str, b_hlo: str) -> None:
    """Add what the side files of ``a_hlo`` and ``b_hlo`` show to ``md`` (in place)."""
    sa, sb = side_files(a_hlo), side_files(b_hlo)
    if not (sa.any and sb.any):
        return
    from recompile_doctor.differ.options import compare_side_files

    settings = compare_side_files(sa, sb)
    if settings:
        md.settings = settings
        for rule in ("flags-changed", "compile-options-changed", "version-changed"):
            mine = [c for c in settings if c.rule == rule]
            if mine:
                md.add_cause(rule, settings_message(mine))
    elided = any(n.rule == "constants-elided" for n in md.notes)
    if elided and sa.mlir is not None and sb.mlir is not None:
        _resolve_elided(md, str(sa.mlir), str(sb.mlir))
    if md.explanations:
        md.sort_causes()
        md.equivalent = False
        md.notes = [n for n in md.notes if n.message != SAME_HLO]
