"""Pre-compile mode problems (``reference/poplar_formats.md`` §3, seed 000 "Unsupported
Operations").

``precompile-unsupported``: the program contains custom operations that are not hashable (the
stack logs that they "cannot be safely serialized", so their executables are never cached and
cannot be pre-compiled), or pre-compile mode was used without ``--executable_cache_path``.
"""

from __future__ import annotations

from recompile_doctor.analyses._common import Options, make_finding
from recompile_doctor.model import Evidence, Finding
from recompile_doctor.timeline import Timeline


def precompile_unsupported(tl: Timeline, opts: Options) -> list[Finding]:
    """Unhashable custom ops, or PRE_COMPILE without a cache path."""
    unhashable = [n.span for n in tl.notes_of("custom-op-unhashable")]
    no_path = [n.span for n in tl.notes_of("precompile-no-cache-path")]
    if not unhashable and not no_path:
        return []
    parts = []
    if unhashable:
        parts.append(
            "The program contains custom user operations without is_hashable=True: their "
            "executables are not serialized, so they are neither cached nor pre-compiled and "
            "every run compiles them again."
        )
    if no_path:
        parts.append(
            "The IPU was configured for pre-compilation (DeviceConnectionType.PRE_COMPILE) but "
            "TF_POPLAR_FLAGS has no --executable_cache_path, so nothing could be saved."
        )
    table = tl.compilations
    # the last compilation before an unhashable op's line
    affected = next(
        (
            [i]
            for i in range(len(table) - 1, -1, -1)
            if any(table.source[i] == e.source and table.line[i] <= e.line for e in unhashable)
        ),
        [],
    )
    return [
        make_finding(
            "precompile-unsupported",
            detail=" ".join(parts),
            modules=(table.module_of(i) for i in affected),
            count=len(unhashable) + len(no_path),
            wasted=0.0,
            evidence=[Evidence(e.source, e.line, e.text) for e in no_path + unhashable],
        )
    ]
