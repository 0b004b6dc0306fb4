"""DuckDB over a fleet folder: the four tables as views, ad-hoc SQL, and the roll-up."""

from __future__ import annotations

import glob
import os
import shlex
from collections.abc import Sequence
from typing import Any

import duckdb
import pyarrow as pa

from recompile_doctor.errors import RecompileDoctorError
from recompile_doctor.fleet.store import INDEX_NAME
from recompile_doctor.fleet.tables import FLEET_SCHEMA_VERSION, SCHEMAS, TABLES

#: rows of each list in the roll-up
TOP = 25


def _sql_str(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


def connect(out: str) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB with ``runs``, ``events``, ``compilations``, ``findings`` as views
    over the Parquet files of ``out`` (``date`` comes from the partition path)."""
    if not os.path.isdir(out):
        raise RecompileDoctorError("no such directory", path=out)
    if not os.path.isdir(os.path.join(out, "runs")) and not os.path.exists(
        os.path.join(out, INDEX_NAME)
    ):
        raise RecompileDoctorError("not a fleet folder (run fleet scan --out DIR first)", path=out)
    con = duckdb.connect(":memory:")
    for name in TABLES:
        pattern = os.path.join(out, name, "*", "*.parquet")
        if glob.glob(pattern):
            con.execute(
                f"CREATE VIEW {name} AS SELECT * FROM read_parquet({_sql_str(pattern)}, "
                "hive_partitioning = true, union_by_name = true)"
            )
        else:
            empty = SCHEMAS[name].empty_table().append_column("date", pa.array([], pa.date32()))
            con.register(f"_{name}_empty", empty)
            con.execute(f"CREATE VIEW {name} AS SELECT * FROM _{name}_empty")
    return con


def query(out: str, sql: str) -> tuple[list[str], list[tuple[Any, ...]]]:
    """Column names and rows of ``sql`` over the fleet's views."""
    con = connect(out)
    try:
        cur = con.execute(sql)
    except duckdb.Error as e:
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise RecompileDoctorError(f"SQL: {first}") from None
    if cur.description is None:
        return [], []
    cols = [d[0] for d in cur.description]
    return cols, [tuple(r) for r in cur.fetchall()]


def _rows(con: duckdb.DuckDBPyConnection, sql: str) -> list[dict[str, Any]]:
    cur = con.execute(sql)
    cols = [d[0] for d in cur.description or ()]
    return [dict(zip(cols, r, strict=True)) for r in cur.fetchall()]


def analyze_command(run_path: str, files: Sequence[str], dumps: str | None) -> str:
    """The ``analyze`` command that explains one run."""
    args = ["recompile-doctor", "analyze", *(os.path.join(run_path, f) for f in files)]
    if dumps:
        args += ["--dumps", os.path.join(run_path, dumps)]
    return shlex.join(args)


_RUN_COST = """
WITH f AS (
  SELECT run_id, sum(wasted_seconds) AS wasted_seconds, count(*) AS findings,
         arg_max(CAST(rule AS VARCHAR), wasted_seconds) AS top_cause
  FROM findings GROUP BY run_id),
c AS (
  SELECT run_id, count(*) AS compilations,
         count(*) FILTER (WHERE NOT warmup) AS recompilations,
         sum(duration_s) FILTER (WHERE cache <> 'hit') AS compile_seconds
  FROM compilations GROUP BY run_id),
r AS (
  SELECT run_id, any_value(run_path) AS run_path, any_value(CAST(host AS VARCHAR)) AS host,
         CAST(any_value(date) AS VARCHAR) AS date,
         list(file ORDER BY file) FILTER (WHERE status = 'ok') AS files,
         any_value(dumps) AS dumps,
         count(*) FILTER (WHERE status = 'failed') AS failed_files
  FROM runs GROUP BY run_id)
SELECT r.*, coalesce(f.wasted_seconds, 0) AS wasted_seconds, coalesce(f.findings, 0) AS findings,
       f.top_cause, coalesce(c.compilations, 0) AS compilations,
       coalesce(c.recompilations, 0) AS recompilations,
       coalesce(c.compile_seconds, 0) AS compile_seconds
FROM r LEFT JOIN f USING (run_id) LEFT JOIN c USING (run_id)
"""


def rollup(out: str, top: int = TOP) -> dict[str, Any]:
    """The fleet roll-up as plain data (rendered by :mod:`recompile_doctor.fleet.render`)."""
    con = connect(out)
    runs = _rows(con, f"SELECT * FROM ({_RUN_COST}) ORDER BY wasted_seconds DESC, run_path")
    totals = _rows(
        con,
        "SELECT count(DISTINCT run_id) AS runs, count(*) AS files, "
        "count(*) FILTER (WHERE status = 'failed') AS failed_files, "
        "count(*) FILTER (WHERE status = 'partial') AS partial_files, "
        "CAST(min(date) AS VARCHAR) AS first_date, CAST(max(date) AS VARCHAR) AS last_date "
        "FROM runs",
    )[0]
    totals["compilations"] = sum(r["compilations"] for r in runs)
    totals["recompilations"] = sum(r["recompilations"] for r in runs)
    totals["wasted_seconds"] = round(sum(r["wasted_seconds"] for r in runs), 6)
    totals["runs_with_findings"] = sum(1 for r in runs if r["findings"])
    ranked = []
    for r in runs[:top]:
        files = list(r.pop("files") or [])
        r["analyze"] = analyze_command(r["run_path"], files, r.pop("dumps"))
        r["wasted_seconds"] = round(r["wasted_seconds"], 6)
        r["compile_seconds"] = round(r["compile_seconds"], 6)
        ranked.append(r)
    causes = _rows(
        con,
        "SELECT CAST(rule AS VARCHAR) AS rule, any_value(CAST(severity AS VARCHAR)) AS severity, "
        "round(sum(wasted_seconds), 6) AS wasted_seconds, count(DISTINCT run_id) AS runs, "
        "sum(count) AS recompilations FROM findings GROUP BY 1 "
        "ORDER BY wasted_seconds DESC, runs DESC, rule",
    )
    by_runs = sorted(causes, key=lambda c: (-c["runs"], -c["wasted_seconds"], c["rule"]))
    recurring = _rows(
        con,
        "SELECT function, CAST(rule AS VARCHAR) AS rule, count(DISTINCT run_id) AS runs, "
        "round(sum(wasted_seconds), 6) AS wasted_seconds FROM findings "
        "WHERE function IS NOT NULL GROUP BY 1, 2 HAVING count(DISTINCT run_id) > 1 "
        f"ORDER BY runs DESC, wasted_seconds DESC, function, rule LIMIT {int(top)}",
    )
    first_seen = _rows(
        con,
        """
WITH rd AS (SELECT DISTINCT run_id, date FROM runs),
fr AS (SELECT CAST(rule AS VARCHAR) AS rule, min(date) AS first_date,
              count(DISTINCT run_id) AS runs FROM findings GROUP BY 1)
SELECT fr.rule, CAST(fr.first_date AS VARCHAR) AS first_date,
       (SELECT count(*) FROM rd WHERE rd.date < fr.first_date) AS runs_before,
       (SELECT count(*) FROM rd WHERE rd.date >= fr.first_date) AS runs_since,
       fr.runs AS runs_with_cause
FROM fr ORDER BY fr.first_date DESC, fr.rule
""",
    )
    for f in first_seen:
        f["regression"] = f["runs_before"] > 0
        f["share_since"] = (
            round(f["runs_with_cause"] / f["runs_since"], 4) if f["runs_since"] else 0.0
        )
    diverging = _diverging_ranks(con, top)
    failed = _rows(
        con,
        "SELECT run_path, file, CAST(status AS VARCHAR) AS status, coalesce(error, warning) "
        "AS error FROM runs WHERE status <> 'ok' ORDER BY run_path, file",
    )
    return {
        "schema": FLEET_SCHEMA_VERSION.replace("/fleet/", "/fleet-report/"),
        "folder": os.path.abspath(out),
        "totals": totals,
        "runs": ranked,
        "causes_by_cost": causes,
        "causes_by_runs": by_runs,
        "recurring_functions": recurring,
        "first_seen": first_seen,
        "diverging_ranks": diverging,
        "failed_files": failed,
    }


def _diverging_ranks(con: duckdb.DuckDBPyConnection, top: int) -> list[dict[str, Any]]:
    """Runs whose ranks compiled a different number of times (or with a rank-divergence
    finding): per rank, how many compilations."""
    rows = _rows(
        con,
        """
WITH per AS (
  SELECT run_id, rank, count(*) AS n FROM compilations WHERE rank IS NOT NULL GROUP BY 1, 2),
div AS (
  SELECT run_id FROM per GROUP BY run_id HAVING count(*) > 1 AND min(n) <> max(n)
  UNION SELECT run_id FROM findings WHERE rule = 'rank-divergence')
SELECT div.run_id, (SELECT any_value(run_path) FROM runs WHERE runs.run_id = div.run_id)
         AS run_path,
       (SELECT list(struct_pack(rank := rank, compilations := n) ORDER BY rank)
          FROM per WHERE per.run_id = div.run_id) AS ranks
FROM div ORDER BY run_path
""",
    )
    return [
        {"run_id": r["run_id"], "run_path": r["run_path"], "ranks": list(r["ranks"] or [])}
        for r in rows[:top]
    ]
