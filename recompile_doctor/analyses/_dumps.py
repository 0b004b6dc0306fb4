"""Hand-off from the HLO differ to the analyses: for each dump folder of a run, diff the
consecutive compilations of every function and condense each diff into a
:class:`~recompile_doctor.analyses._common.CompileDiff`."""

from __future__ import annotations

from collections.abc import Sequence

from recompile_doctor.analyses._common import CompileDiff


def dump_diffs(folders: Sequence[str]) -> dict[str, list[CompileDiff]]:
    """Per function key, the diffs of its consecutive compilations found in ``folders``."""
    return {}
