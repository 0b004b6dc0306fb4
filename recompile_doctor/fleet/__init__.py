"""Many runs at once: discover runs, analyse each (the same library call as ``analyze``) on
any :class:`concurrent.futures.Executor` (a local process pool or a Dask distributed cluster),
store events, compilations and findings as hive-partitioned Parquet, and roll them up with
DuckDB.

Nothing here prints; the ``fleet`` commands under ``cli/`` do.
"""

from __future__ import annotations

from recompile_doctor.fleet.discover import RunTask, discover_runs
from recompile_doctor.fleet.scan import ScanResult, scan

__all__ = ["RunTask", "ScanResult", "discover_runs", "scan"]
