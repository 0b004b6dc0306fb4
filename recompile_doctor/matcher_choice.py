"""Which multi-literal matcher the log reader uses: hyperscan when its wheel imports, the
``bytes.find`` fallback otherwise.  Both give the same candidates; the fallback reads a big
log more slowly, so ``--version`` and the benchmarks say which one a run gets.

A module of its own, outside :mod:`recompile_doctor.parsers`: ``--version`` asks it without
importing the parsers."""

from __future__ import annotations

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
    """True when the log reader matches with hyperscan."""
    return hyperscan_version() is not None


def describe() -> str:
    """One line: the matcher big logs are read with, and how to get the faster one."""
    version = hyperscan_version()
    if version is None:
        return (
            f"{FALLBACK} (hyperscan is not installed; "
            "pip install 'recompile-doctor[fast]' reads big logs faster)"
        )
    return f"hyperscan {version}"
