"""``fleet scan|report|query``: many runs into Parquet, the roll-up and SQL.

The cluster tests (marked ``cluster``) start a real Dask scheduler and two single-threaded
workers on loopback and check that ``--scheduler`` gives the same tables as the local pool;
they run in CI and are skipped only where ``distributed`` cannot be imported.

The fleet is made of the real captures in ``fixtures/`` linked into 320 run folders that
vary host, date and rank; a cause (``dtype-changed``) appears only from 2026-11-10 on.
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import duckdb
import pytest
from conftest import FIXTURES, run_cli

from recompile_doctor.fleet import discover_runs, scan
from recompile_doctor.fleet.executors import InlineExecutor, executor_for
from recompile_doctor.fleet.rollup import connect, query, rollup
from recompile_doctor.fleet.tables import SCHEMAS, TABLES

ROOT = Path(__file__).resolve().parent.parent
N_RUNS = 320
FIRST_DTYPE_DAY = 10

#: case -> the causes its analysis must name (a subset)
BEFORE = ["jax/healthy", "jax/batch_size", "tensorflow/healthy", "simulated/healthy",
          "tensorflow/batch_size_retrace", "jax/two_functions", "simulated/partial-batch"]  # fmt: skip
AFTER = [*BEFORE, "jax/dtype", "tensorflow/dtype", "torch/dtype", "torch/ranks"]
DTYPE_CASES = {"jax/dtype", "tensorflow/dtype", "torch/dtype"}


def plan() -> list[tuple[str, str, str, str]]:
    """(relative run folder, case, host, date) of every run of the fleet."""
    runs = []
    for i in range(N_RUNS):
        day = 1 + i % 19
        pool = AFTER if day >= FIRST_DTYPE_DAY else BEFORE
        case = pool[(i // 19) % len(pool)]
        host = f"node{i % 4}"
        date = f"2026-11-{day:02d}"
        runs.append((f"host={host}/date={date}/job{i:04d}", case, host, date))
    return runs


def _link_case(case: str, run: Path, i: int) -> None:
    src = FIXTURES / case
    run.mkdir(parents=True)
    # jax runs are one rank of a job: the file name carries the rank
    name = f"rank{i % 2}.log" if case.startswith("jax/") else "run.log"
    (run / name).symlink_to(src / "run.log")
    if (src / "trace").is_dir():
        (run / "trace").mkdir()
        for f in sorted((src / "trace").iterdir()):
            (run / "trace" / f.name).symlink_to(f)


def build_fleet(root: Path) -> Path:
    """The 320 runs plus one broken run (an empty log, a damaged gzip) under ``root``."""
    for i, (rel, case, _host, _date) in enumerate(plan()):
        _link_case(case, root / rel, i)
    broken = root / "host=node0/date=2026-11-05/broken"
    broken.mkdir(parents=True)
    (broken / "run.log").symlink_to(FIXTURES / "jax/healthy/run.log")
    (broken / "empty.log").write_bytes(b"")
    data = bytearray(gzip.compress((FIXTURES / "jax/dtype/run.log").read_bytes() * 20))
    data[100:160] = bytes(b ^ 0xFF for b in data[100:160])
    (broken / "bad.log.gz").write_bytes(bytes(data))
    return root


@pytest.fixture(scope="session")
def fleet_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_fleet(tmp_path_factory.mktemp("fleet") / "logs")


@pytest.fixture(scope="session")
def local_scan(fleet_root: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The fleet scanned once on the local process pool (2 workers)."""
    out = tmp_path_factory.mktemp("fleet-out") / "local"
    with executor_for(None, 2) as (ex, workers):
        scan([str(fleet_root)], str(out), ex, workers=workers)
    return out


def table_rows(out: Path, name: str) -> list[tuple[Any, ...]]:
    """Every row of a table, in a deterministic order, with dictionary strings as text."""
    con = connect(str(out))
    cols = [c[0] for c in con.execute(f"DESCRIBE {name}").fetchall()]
    order = ", ".join(c for c in ("run_id", "file", "seq") if c in cols)
    return [tuple(r) for r in con.execute(f"SELECT * FROM {name} ORDER BY {order}").fetchall()]


# --- discovery ---------------------------------------------------------------------------


def test_a_run_is_a_folder_with_its_trace_files(tmp_path: Path) -> None:
    # GIVEN a torch run with two rank traces, in a host= and date= path
    run = tmp_path / "host=gpu7" / "date=2026-01-02" / "job"
    _link_case("torch/ranks", run, 0)
    # WHEN the runs are discovered
    (task,) = discover_runs([str(tmp_path)])
    # THEN the log and both traces are one run, with the host, date and ranks of the path
    assert task.run_dir == str(run)
    assert task.host == "gpu7" and task.date == "2026-01-02"
    assert task.files[0].rel == "run.log"
    assert sorted(f.rank for f in task.files if f.rel.startswith("trace/")) == [0, 1]  # type: ignore[type-var]
    assert len(task.run_id) == 16
    assert discover_runs([str(run)])[0].run_id == task.run_id  # stable


def test_streams_saved_beside_their_merged_log_are_not_counted_twice(tmp_path: Path) -> None:
    # GIVEN a simulated run folder as the simulator writes it: run.log (both streams) and
    # each stream alone beside it, and a run whose stderr file is not a copy of its log
    run = tmp_path / "sim"
    run.mkdir()
    for name in ("run.log", "run.stdout.log", "run.stderr.log"):
        (run / name).symlink_to(FIXTURES / "simulated" / "healthy" / name)
    other = tmp_path / "other"
    other.mkdir()
    (other / "run.log").symlink_to(FIXTURES / "jax" / "healthy" / "run.log")
    (other / "run.stderr.log").symlink_to(FIXTURES / "jax" / "batch_size" / "run.log")
    # WHEN the runs are discovered
    oth, sim = discover_runs([str(tmp_path)])  # (sorted by folder)
    # THEN the stream copies are left out, and a file that is not one is kept
    assert [f.rel for f in sim.files] == ["run.log"]
    assert [f.rel for f in oth.files] == ["run.log", "run.stderr.log"]


def test_host_from_a_regular_expression(tmp_path: Path) -> None:
    # GIVEN a run under /<cluster>/<host>/<job>
    _link_case("jax/healthy", tmp_path / "clusterA" / "h042" / "job1", 0)
    # WHEN --host-from names the host folder
    (task,) = discover_runs([str(tmp_path)], host_from=r"clusterA/(?P<host>[^/]+)/")
    # THEN the host comes from it
    assert task.host == "h042"


def test_globs_expand_and_dumps_are_not_logs(tmp_path: Path) -> None:
    # GIVEN two runs, one with an XLA dump folder
    a = tmp_path / "a"
    shutil.copytree(FIXTURES / "jax/batch_size", a)
    _link_case("jax/healthy", tmp_path / "b", 0)
    # WHEN discovered through a glob
    tasks = discover_runs([str(tmp_path / "*")])
    # THEN each is one run, the dumps are passed as dumps and never read as logs
    assert [Path(t.run_dir).name for t in tasks] == ["a", "b"]
    assert tasks[0].dumps == (str(a / "dumps"),)
    assert all(not f.rel.startswith("dumps") for t in tasks for f in t.files)


# --- scanning ----------------------------------------------------------------------------


def test_every_run_is_written_and_rows_say_where_they_come_from(local_scan: Path) -> None:
    # GIVEN the fleet scanned locally
    con = connect(str(local_scan))
    # THEN every run is in runs, and the per-run tables carry host, date and file
    runs = con.execute("SELECT count(DISTINCT run_id) FROM runs").fetchone()
    assert runs == (N_RUNS + 1,)
    hosts = {
        r[0] for r in con.execute("SELECT DISTINCT CAST(host AS VARCHAR) FROM events").fetchall()
    }
    assert hosts == {"node0", "node1", "node2", "node3"}
    dates = con.execute("SELECT min(date), max(date) FROM compilations").fetchone()
    assert dates is not None and str(dates[0]) == "2026-11-01" and str(dates[1]) == "2026-11-19"
    ranks = {r[0] for r in con.execute("SELECT DISTINCT rank FROM compilations").fetchall()}
    assert {0, 1} <= ranks
    missing = con.execute(
        "SELECT count(*) FROM findings WHERE file IS NULL OR line IS NULL"
    ).fetchone()
    assert missing == (0,)


def test_parquet_is_zstd_with_dictionary_strings(local_scan: Path) -> None:
    import pyarrow.parquet as pq

    # GIVEN one run's files
    f = next((local_scan / "compilations").glob("date=*/*.parquet"))
    meta = pq.ParquetFile(f)
    # THEN the columns are zstd-compressed and framework is dictionary-encoded
    col = meta.metadata.row_group(0).column(meta.schema_arrow.get_field_index("framework"))
    assert col.compression == "ZSTD"
    assert str(meta.schema_arrow.field("framework").type).startswith("dictionary")
    # AND the columns are exactly those of the documented schema
    doc = json.loads((ROOT / "recompile_doctor/schemas/fleet.schema.json").read_text())
    for name in TABLES:
        documented = [c["name"] for c in doc["tables"][name]["columns"]]
        assert documented == SCHEMAS[name].names, name


def test_a_broken_file_is_recorded_and_the_scan_goes_on(local_scan: Path) -> None:
    # GIVEN the broken run (an empty log, a damaged gzip, a good log)
    rows = query(
        str(local_scan),
        "SELECT file, status, error, warning FROM runs WHERE run_path LIKE '%/broken' "
        "ORDER BY file",
    )[1]
    by_file = {r[0]: r[1:] for r in rows}
    # THEN the empty log failed with its one-line error, the gzip is partly read with a
    # warning, and the good log was analysed
    assert by_file["empty.log"][0] == "failed" and "empty input" in by_file["empty.log"][1]
    assert by_file["bad.log.gz"][0] == "partial" and "gzip" in by_file["bad.log.gz"][2]
    assert by_file["run.log"][0] == "ok"
    comps = query(
        str(local_scan),
        "SELECT count(*) FROM compilations c JOIN runs r USING (run_id, file) "
        "WHERE r.run_path LIKE '%/broken'",
    )[1]
    assert comps[0][0] >= 1


def test_rescan_reads_nothing_new_then_only_the_changed_run(
    fleet_root: Path, local_scan: Path, tmp_path: Path
) -> None:
    # GIVEN a copy of the scanned folder
    out = tmp_path / "again"
    shutil.copytree(local_scan, out)
    before = table_rows(out, "findings")
    # WHEN the same paths are scanned again
    again = scan([str(fleet_root)], str(out), InlineExecutor())
    # THEN nothing is read
    assert (again.scanned, again.files_read, again.skipped) == (0, 0, N_RUNS + 1)
    # WHEN one log changes (a new mtime)
    victim = fleet_root / "host=node0/date=2026-11-05/broken/empty.log"
    st = victim.stat()
    os.utime(victim, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    try:
        third = scan([str(fleet_root)], str(out), InlineExecutor())
    finally:  # the fleet is shared with the other tests
        os.utime(victim, ns=(st.st_atime_ns, st.st_mtime_ns))
    # THEN only its run is read again and the tables are the same
    assert (third.scanned, third.files_read) == (1, 3)
    assert table_rows(out, "findings") == before


def test_runs_behind_fsspec_urls_are_copied_to_the_worker(tmp_path: Path) -> None:
    pytest.importorskip("fsspec")
    # GIVEN a run given as a file:// URL (any fsspec protocol takes the same path)
    root = tmp_path / "logs"
    _link_case("torch/ranks", root / "host=h1" / "run", 0)
    local = tmp_path / "local"
    remote = tmp_path / "remote"
    # WHEN it is scanned by URL and by path
    scan([str(root)], str(local), InlineExecutor())
    res = scan(["file://" + str(root)], str(remote), InlineExecutor())
    # THEN the URL run is found with its traces and gives the same findings
    assert (res.runs, res.files_read, res.failed_files) == (1, 3, 0)
    paths = query(str(remote), "SELECT DISTINCT run_path FROM runs")[1]
    assert paths == [("file://" + str(root / "host=h1" / "run"),)]
    sql = "SELECT CAST(rule AS VARCHAR), file, line FROM findings ORDER BY 1"
    assert query(str(remote), sql)[1] == query(str(local), sql)[1]


def test_the_local_pool_never_forks_this_process() -> None:
    # GIVEN this process, which has Arrow's threads once it wrote a table (a child forked
    # from it could wait forever on a lock one of them held)
    from recompile_doctor.fleet import executors

    with executor_for(None, 2) as (pool, n):
        # THEN the local pool's workers come from a fork server, never from this process
        assert n == 2
        assert isinstance(pool, ProcessPoolExecutor)
        assert executors.pool_context().get_start_method() in ("forkserver", "spawn")
        assert pool.submit(os.getpid).result(timeout=60) != os.getpid()
    # AND what the server imports starts no thread in it
    code = (
        f"import {', '.join(executors.PRELOAD)}\n"
        "from recompile_doctor.parsers._parallel import threads\n"
        "print(threads())"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert out.stdout.strip() == "1"


# --- the roll-up -------------------------------------------------------------------------


def planned_runs_with(cases: set[str]) -> int:
    return sum(1 for _rel, case, _h, _d in plan() if case in cases)


def test_rollup_names_the_causes(local_scan: Path) -> None:
    data = rollup(str(local_scan))
    causes = {c["rule"]: c for c in data["causes_by_runs"]}
    # THEN dtype changes are found in exactly the runs of the dtype captures
    assert causes["dtype-changed"]["runs"] == planned_runs_with(DTYPE_CASES)
    assert causes["batch-size-changed"]["runs"] >= planned_runs_with(
        {"jax/batch_size", "tensorflow/batch_size_retrace"}
    )
    assert causes["rank-divergence"]["runs"] == planned_runs_with({"torch/ranks"})
    # AND the costliest cause comes first
    cost = [c["wasted_seconds"] for c in data["causes_by_cost"]]
    assert cost == sorted(cost, reverse=True)
    # AND dtype changes are a regression from 2026-11-10 on; batch sizes were there always
    first = {f["rule"]: f for f in data["first_seen"]}
    assert first["dtype-changed"]["first_date"] == f"2026-11-{FIRST_DTYPE_DAY}"
    assert first["dtype-changed"]["regression"] is True
    assert first["batch-size-changed"]["first_date"] == "2026-11-01"
    assert first["batch-size-changed"]["regression"] is False


def test_rollup_ranks_runs_recurring_functions_ranks_and_failures(local_scan: Path) -> None:
    data = rollup(str(local_scan), top=500)
    wasted = [r["wasted_seconds"] for r in data["runs"]]
    assert wasted == sorted(wasted, reverse=True) and wasted[0] > 0
    top = data["runs"][0]
    assert top["analyze"].startswith("recompile-doctor analyze " + top["run_path"])
    recurring = {(f["function"], f["rule"]) for f in data["recurring_functions"]}
    assert ("loss_fn", "dtype-changed") in recurring or ("train_step", "dtype-changed") in recurring
    diverging = data["diverging_ranks"]
    assert len(diverging) == planned_runs_with({"torch/ranks"})
    assert [(x["rank"], x["compilations"]) for x in diverging[0]["ranks"]] == [(0, 1), (1, 2)]
    failed = {(Path(f["run_path"]).name, f["file"], f["status"]) for f in data["failed_files"]}
    assert failed == {("broken", "empty.log", "failed"), ("broken", "bad.log.gz", "partial")}


# --- the CLI -----------------------------------------------------------------------------


@pytest.fixture
def small_fleet(tmp_path: Path) -> Iterator[Path]:
    root = tmp_path / "logs"
    for i, case in enumerate(["jax/dtype", "torch/ranks", "tensorflow/healthy"]):
        _link_case(case, root / f"host=h{i}" / f"date=2026-10-0{i + 1}" / f"run{i}", i)
    yield root


def test_cli_scan_report_query(small_fleet: Path, tmp_path: Path, capsys: Any) -> None:
    out = tmp_path / "out"
    code, _, err = run_cli(
        "fleet", "scan", str(small_fleet), "--out", str(out), "--jobs", "1", capsys=capsys
    )
    assert code == 0, err
    assert "3 runs, 3 scanned" in err
    # the roll-up in every format
    code, text, _ = run_cli("fleet", "report", str(out), capsys=capsys)
    assert code == 0 and "rank-divergence" in text and "dtype-changed" in text
    code, js, _ = run_cli("fleet", "report", str(out), "--format", "json", capsys=capsys)
    assert json.loads(js)["totals"]["runs"] == 3
    code, md, _ = run_cli("fleet", "report", str(out), "--format", "markdown", capsys=capsys)
    assert md.startswith("# recompile-doctor fleet report") and "| dtype-changed |" in md
    # SQL as a table, JSON and CSV
    sql = "SELECT CAST(rule AS VARCHAR) AS rule, count(*) AS n FROM findings GROUP BY 1 ORDER BY 1"
    code, table, _ = run_cli("fleet", "query", str(out), sql, capsys=capsys)
    assert code == 0 and table.splitlines()[0].split() == ["rule", "n"]
    code, js, _ = run_cli("fleet", "query", str(out), sql, "--format", "json", capsys=capsys)
    assert {"rule": "rank-divergence", "n": 1} in json.loads(js)
    code, csv_text, _ = run_cli("fleet", "query", str(out), sql, "--format", "csv", capsys=capsys)
    assert csv_text.splitlines()[0] == "rule,n" and "dtype-changed,1" in csv_text


def test_cli_scan_exit_code_counts_failures(small_fleet: Path, tmp_path: Path, capsys: Any) -> None:
    (small_fleet / "host=h0/date=2026-10-01/run0/empty.log").write_bytes(b"")
    code, _, err = run_cli(
        "fleet", "scan", str(small_fleet), "--out", str(tmp_path / "o"), "--jobs", "1",
        capsys=capsys,
    )  # fmt: skip
    assert code == 1
    assert "empty.log: empty input" in err and "1 failed" in err


def test_cli_usage_errors_are_one_line_exit_2(tmp_path: Path, capsys: Any) -> None:
    code, _, err = run_cli("fleet", "scan", str(tmp_path / "nope*"), "--out", str(tmp_path / "o"),
                           capsys=capsys)  # fmt: skip
    assert code == 2 and err.startswith("recompile-doctor: error: ") and "no file matches" in err
    code, _, err = run_cli("fleet", "report", str(tmp_path), capsys=capsys)
    assert code == 2 and "not a fleet folder" in err
    code, _, err = run_cli("fleet", "scan", str(tmp_path), "--out", str(tmp_path / "o"),
                           "--host-from", "(no-group)", capsys=capsys)  # fmt: skip
    assert code == 2 and "(?P<host>" in err


def test_cli_query_bad_sql_is_one_line(local_scan: Path, capsys: Any) -> None:
    code, _, err = run_cli("fleet", "query", str(local_scan), "SELEC nothing", capsys=capsys)
    assert code == 2 and err.count("\n") == 1 and err.startswith("recompile-doctor: error: SQL:")


def test_html_report_is_self_contained_and_escaped(tmp_path: Path, capsys: Any) -> None:
    # GIVEN a run whose folder name is markup
    root = tmp_path / "logs"
    _link_case("jax/dtype", root / "<script>alert(1)</script>", 0)
    out = tmp_path / "out"
    with executor_for(None, 1) as (ex, _):
        scan([str(root)], str(out), ex)
    # WHEN the HTML report is written
    page = tmp_path / "fleet.html"
    code, _, err = run_cli("fleet", "report", str(out), "-o", str(page), capsys=capsys)
    assert code == 0, err
    html = page.read_text()
    # THEN the markup is escaped, nothing is loaded from the network, and the run names the
    # analyze command that explains it
    assert "<script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    for loads in ("<link", "<script", "src=", "url(http", "@import", "<img"):
        assert loads not in html
    assert "<svg" in html and "recompile-doctor analyze" in html


def test_dictionary_columns_survive_duckdb_views(local_scan: Path) -> None:
    con: duckdb.DuckDBPyConnection = connect(str(local_scan))
    kinds = Counter(
        r[0] for r in con.execute("SELECT CAST(kind AS VARCHAR) FROM events").fetchall()
    )
    assert kinds["compile-begin"] > 0


# --- on a Dask cluster --------------------------------------------------------------

START_TIMEOUT_S = 60
STOP_TIMEOUT_S = 15


def _dask(*args: str) -> list[str]:
    script = Path(sys.executable).parent / "dask"
    return [str(script), *args] if script.exists() else [sys.executable, "-m", "dask", *args]


def _stop(procs: list[subprocess.Popen[bytes]]) -> None:
    for p in procs:
        if p.poll() is None:
            p.terminate()
    for p in procs:
        try:
            p.wait(timeout=STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait(timeout=STOP_TIMEOUT_S)


def _need_distributed() -> None:
    """Only skipped where ``distributed`` cannot be imported (never after ``make setup``);
    with ``CI`` set, a missing package fails instead."""
    if os.environ.get("CI"):
        import distributed  # noqa: F401
    else:
        pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A Dask scheduler on 127.0.0.1 (a free port) and two workers of one thread each."""
    _need_distributed()
    from distributed import Client

    d = tmp_path_factory.mktemp("dask")
    sched_file = d / "scheduler.json"
    log = (d / "cluster.log").open("wb")
    common = ["--no-dashboard"]
    procs: list[subprocess.Popen[bytes]] = []
    try:
        procs.append(
            subprocess.Popen(
                _dask(
                    "scheduler",
                    "--host",
                    "127.0.0.1",
                    "--port",
                    "0",
                    "--scheduler-file",
                    str(sched_file),
                    *common,
                ),
                stdout=log,
                stderr=subprocess.STDOUT,
                cwd=d,
            )
        )
        deadline = time.monotonic() + START_TIMEOUT_S
        while not sched_file.exists() or not sched_file.read_text().strip():
            if time.monotonic() > deadline or procs[0].poll() is not None:
                pytest.fail("the Dask scheduler did not start: " + (d / "cluster.log").read_text())
            time.sleep(0.1)
        address = json.loads(sched_file.read_text())["address"]
        for _ in range(2):
            procs.append(
                subprocess.Popen(
                    _dask(
                        "worker",
                        address,
                        "--host",
                        "127.0.0.1",
                        "--nworkers",
                        "1",
                        "--nthreads",
                        "1",
                        "--memory-limit",
                        "0",
                        *common,
                    ),
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    cwd=d,
                )
            )
        with Client(address, timeout=START_TIMEOUT_S) as client:
            client.wait_for_workers(2, timeout=START_TIMEOUT_S)
        yield address
    finally:
        # the workers first, while the scheduler they say goodbye to still answers: stopped
        # together, each worker waited for it in vain (8.3 s against 0.9 under load)
        _stop(procs[1:])
        _stop(procs[:1])
        log.close()


@pytest.mark.cluster
def test_cluster_and_local_pool_write_identical_tables(
    cluster: str, fleet_root: Path, local_scan: Path, tmp_path: Path, capsys: Any
) -> None:
    # GIVEN the fleet scanned on the local pool (fixture local_scan)
    # WHEN the same paths are scanned on the Dask cluster through the CLI
    out = tmp_path / "cluster"
    code, _, err = run_cli(
        "fleet", "scan", str(fleet_root), "--out", str(out), "--scheduler", cluster,
        capsys=capsys,
    )  # fmt: skip
    # THEN the broken file makes the exit code 1, every run was scanned
    assert code == 1, err
    assert f"{N_RUNS + 1} runs, {N_RUNS + 1} scanned" in err
    # AND every table holds the same rows as the local scan
    for name in TABLES:
        assert table_rows(out, name) == table_rows(local_scan, name), name
    # AND a second scan on the cluster reads nothing
    code, _, err = run_cli(
        "fleet", "scan", str(fleet_root), "--out", str(out), "--scheduler", cluster,
        capsys=capsys,
    )  # fmt: skip
    assert f"0 scanned, {N_RUNS + 1} unchanged, 0 files read" in err


@pytest.mark.cluster
def test_unreachable_scheduler_is_a_one_line_error(
    tmp_path: Path, capsys: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    _need_distributed()
    import recompile_doctor.fleet.executors as executors

    monkeypatch.setattr(executors, "CONNECT_TIMEOUT_S", 2)
    src = tmp_path / "logs"
    shutil.copytree(FIXTURES / "jax/healthy", src)
    code, _, err = run_cli(
        "fleet", "scan", str(src), "--out", str(tmp_path / "o"),
        "--scheduler", "tcp://127.0.0.1:9", capsys=capsys,
    )  # fmt: skip
    assert code == 2
    assert err.startswith("recompile-doctor: error: tcp://127.0.0.1:9: cannot connect")
