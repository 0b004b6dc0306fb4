"""Which multi-literal matcher the log reader uses for a format's anchors: the C module's
scan where it is built, hyperscan when its wheel imports, the ``bytes.find`` fallback
otherwise.  All give the same candidate lines; the fallback reads a big log more slowly, so
``--version`` and the benchmarks say which one a run gets.

The C scan (``literal_positions`` in ``parsers/_native.c``) gives all of a buffer's
candidates in one call, where hyperscan calls back into Python for every match (about 1,700
instructions of a compiled reading's each).  Its scan of the bytes (Wu and Manber's, over
2-byte blocks; ``memmem`` for one anchor) is as fast as hyperscan's on the framework logs,
slower where a log's words nearly hold an anchor (the DEBUG Poplar log's ``poplar/`` paths
and its ``Poplar `` anchor).  With both here, the reader takes the C scan for a buffer after
one dense in candidate lines, hyperscan after a sparse one (``_scan.DensityMatcher``);
``benchmarks/bench_matchers.py`` measures the three on each format's bench log.

A module of its own, outside :mod:`recompile_doctor.parsers`: ``--version`` asks it without
importing the parsers."""

from __future__ import annotations

import os
from collections.abc import Sequence

from recompile_doctor.compiled_modules import NATIVE_ENV, native_built

#: the name of the fallback matcher
FALLBACK = "bytes.find"


def hyperscan_version() -> str | None:
    """The version of the hyperscan wheel that imports here (None: none does)."""
    try:
        import hyperscan  # type: ignore[import-not-found, unused-ignore]
    except ImportError:
        return None
    return str(getattr(hyperscan, "__version__", "") or "(version unknown)")


def has_hyperscan() -> bool:
    """True when the log reader may match with hyperscan."""
    return hyperscan_version() is not None


def has_native_scan() -> bool:
    """True when the C module is built and in use (:data:`~recompile_doctor.compiled_modules.
    NATIVE_ENV` not "0")."""
    return os.environ.get(NATIVE_ENV) != "0" and native_built()


#: the most literals the C scan takes
NATIVE_LITERALS_MOST = 256


def native_scans(literals: Sequence[bytes]) -> bool:
    """Whether the C scan can take ``literals`` (1 to :data:`NATIVE_LITERALS_MOST`, each 2
    bytes or more, without a newline)."""
    return 0 < len(literals) <= NATIVE_LITERALS_MOST and all(
        len(lit) >= 2 and b"\n" not in lit for lit in literals
    )


def engine_for(literals: Sequence[bytes]) -> str:
    """The matcher for ``literals``: "native" (the C scan: without hyperscan, or for one
    literal, ``memmem``), "density" (the C scan or hyperscan, a buffer at a time),
    "hyperscan" or "find"."""
    hyperscan = has_hyperscan()
    if has_native_scan() and native_scans(literals):
        return "density" if hyperscan and len(set(literals)) > 1 else "native"
    return "hyperscan" if hyperscan else "find"


def describe() -> str:
    """One line: the matchers big logs are read with, and how to get the faster ones."""
    version = hyperscan_version()
    if has_native_scan():
        if version is None:
            return (
                "the C scan (hyperscan is not installed; pip install "
                "'recompile-doctor[fast]' reads logs with few candidate lines faster)"
            )
        return f"the C scan; hyperscan {version} after a buffer of few candidate lines"
    if version is None:
        return (
            f"{FALLBACK} (hyperscan is not installed; "
            "pip install 'recompile-doctor[fast]' reads big logs faster)"
        )
    return f"hyperscan {version}"
