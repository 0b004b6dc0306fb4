"""``recompile-doctor cache ls`` / ``cache prune`` on executable caches the simulator writes."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from recompile_doctor.cache import index
from recompile_doctor.cache_prune import Criteria, apply, parse_duration, parse_size, plan
from recompile_doctor.simulate import run_scenario
from tests.conftest import run_cli, schema

DAY = 86400.0
VLOG2 = {"TF_CPP_VMODULE": "poplar_compiler=1,poplar_executable_cache=2"}
TRAIN = "a_inference_train_function_20382"
TEST = "a_inference_test_function_26473"


class Cache:
    """A cache with three entries: the healthy run's (``first``), and the train/test graphs of
    a later run (``train``, ``test``), aged 10 days, 2 days and 1 hour."""

    def __init__(self, root: Path) -> None:
        self.dir = root / "run" / "cache"
        self.first_log = run_scenario("healthy", root / "run", env={}).log_path
        self.other_log = run_scenario(
            "alternating-graphs", root / "other", env=VLOG2, cache=self.dir
        ).log_path
        self.files = {p.name for p in self.dir.glob("*.poplar_exec")}
        now = time.time()
        self.first, self.train, self.test = (
            "1b63bfae7894d2a0",
            "e3e0444dee15cdff",
            "4200aee9d1f9ccdd",
        )
        for h, age in ((self.first, 10 * DAY), (self.train, 2 * DAY), (self.test, 3600.0)):
            os.utime(self.dir / f"{h}.poplar_exec", (now - age, now - age))

    def path(self, h: str) -> Path:
        return self.dir / f"{h}.poplar_exec"

    def names(self) -> set[str]:
        return {p.name for p in self.dir.iterdir()}


@pytest.fixture
def cache(tmp_path: Path) -> Cache:
    c = Cache(tmp_path)
    assert c.files == {f"{h}.poplar_exec" for h in (c.first, c.train, c.test)}
    return c


def ls_json(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, Any]:
    code, out, err = run_cli("cache", "ls", *args, "--format", "json", capsys=capsys)
    assert code == 0, err
    data: dict[str, Any] = json.loads(out)
    jsonschema.validate(data, schema("cache.schema.json"))
    return data


def prune_json(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, Any]:
    code, out, err = run_cli("cache", "prune", *args, "--format", "json", capsys=capsys)
    assert code == 0, err
    data: dict[str, Any] = json.loads(out)
    jsonschema.validate(data, schema("cache-prune.schema.json"))
    return data


def by_hash(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {e["hash"]: e for e in data["entries"]}


def assert_one_line_error(code: int, err: str, *words: str) -> None:
    assert code == 2
    assert err.count("\n") == 1 and err.startswith("recompile-doctor: error: ")
    assert "Traceback" not in err
    for w in words:
        assert w in err


# --------------------------------------------------------------------------- ls


def test_ls_json_describes_every_file_newest_first(
    cache: Cache, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN a cache of three executables of different ages, WHEN it is listed as JSON
    data = ls_json(capsys, str(cache.dir))
    # THEN every file is there, newest first, with its real size and modification time
    assert [e["hash"] for e in data["entries"]] == [cache.test, cache.train, cache.first]
    for e in data["entries"]:
        st = cache.path(e["hash"]).stat()
        assert e["file"] == f"{e['hash']}.poplar_exec" and e["bytes"] == st.st_size
        assert e["mtime"] == time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(st.st_mtime))
        assert e["locked"] is False
    assert data["dir"] == str(cache.dir)
    assert data["total_bytes"] == sum(e["bytes"] for e in data["entries"])
    # AND without a log nothing is known to be used: everything is unreferenced
    assert all(e["uses"] == 0 and e["modules"] == [] for e in data["entries"])
    assert data["unreferenced_bytes"] == data["total_bytes"]


def test_ls_text_is_a_table_with_totals(cache: Cache, capsys: pytest.CaptureFixture[str]) -> None:
    # GIVEN the cache, WHEN it is listed as text
    code, out, _ = run_cli("cache", "ls", str(cache.dir), capsys=capsys)
    # THEN one row per entry, newest first, with age, and the totals and why all are unreferenced
    assert code == 0
    rows = [line for line in out.splitlines() if line.startswith("  ") and "poplar" not in line]
    hashes = [r.split()[0] for r in rows[1:]]
    assert hashes == [cache.test, cache.train, cache.first]
    assert " 1h " in rows[1] and " 2d " in rows[2] and " 10d " in rows[3]
    assert "3 entries" in out.splitlines()[0]
    assert "no --log given" in out and "unreferenced" in out
    assert "\x1b[" not in out  # no colour off a terminal


def test_ls_names_the_modules_that_used_each_entry(
    cache: Cache, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN the logs of both runs (one at VLOG 1, one at VLOG 2 with "has not been compiled yet")
    data = ls_json(
        capsys, str(cache.dir), "--log", str(cache.first_log), "--log", str(cache.other_log)
    )
    entries = by_hash(data)
    # THEN each file is linked to the module compiled into it, one use per request
    assert [m.split("__")[0] for m in entries[cache.first]["modules"]] == [TRAIN]
    assert [m.split("__")[0] for m in entries[cache.train]["modules"]] == [TRAIN]
    assert [m.split("__")[0] for m in entries[cache.test]["modules"]] == [TEST]
    assert [entries[h]["uses"] for h in (cache.first, cache.train, cache.test)] == [1, 1, 1]
    assert data["unreferenced_bytes"] == 0


def test_ls_only_the_given_log_counts(cache: Cache, capsys: pytest.CaptureFixture[str]) -> None:
    # GIVEN only the first run's log
    data = ls_json(capsys, str(cache.dir), "--log", str(cache.first_log))
    entries = by_hash(data)
    # THEN only its file is referenced, and the others' bytes are unreferenced
    assert entries[cache.first]["uses"] == 1
    assert entries[cache.train]["uses"] == entries[cache.test]["uses"] == 0
    assert (
        data["unreferenced_bytes"] == entries[cache.train]["bytes"] + entries[cache.test]["bytes"]
    )


def test_a_load_from_the_cache_is_a_use(
    cache: Cache, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN a second run that loads the healthy executable ("Loaded M from P")
    again = run_scenario("healthy", tmp_path / "again", env={}, cache=cache.dir).log_path
    assert "Loaded " in again.read_text()
    data = ls_json(capsys, str(cache.dir), "--log", str(cache.first_log), "--log", str(again))
    # THEN the entry was used twice: compiled and saved once, loaded once
    assert by_hash(data)[cache.first]["uses"] == 2


def test_logs_from_another_machine_match_by_hash(
    cache: Cache, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN the log as written on another machine, with an absolute cache path
    moved = tmp_path / "elsewhere.log"
    moved.write_text(cache.first_log.read_text().replace("cache/", "/home/ci/ipu-cache/"))
    data = ls_json(capsys, str(cache.dir), "--log", str(moved))
    # THEN the file is still linked to its module
    assert by_hash(data)[cache.first]["uses"] == 1


def test_a_precompile_run_counts_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # GIVEN a PRE_COMPILE run ("Couldn't find" then "A pre-compiled Poplar program has been saved")
    res = run_scenario("precompile", tmp_path / "pc", env={})
    pre = tmp_path / "pc" / "precompile.log"
    assert "pre-compiled Poplar program has been saved" in pre.read_text()
    data = ls_json(capsys, str(res.cache_dir), "--log", str(pre))
    # THEN the miss and the save are one use of one module
    (entry,) = data["entries"]
    assert entry["uses"] == 1 and entry["modules"][0].startswith(TRAIN)


def test_sdk_1_2_file_names_are_entries(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # GIVEN an SDK 1.2 cache file and a log naming it the SDK 1.2 way
    (tmp_path / "1a2b3c.xla_engine.poplar_exec").write_bytes(b"x" * 10)
    log = tmp_path / "old.log"
    log.write_text(
        "2020-01-01 10:00:00.000000: I tensorflow/compiler/plugin/poplar/driver/poplar_compiler.cc:1] "
        "Begin XLA compilation: cluster_1  (Hash: 0xabc) for ordinal  0\n"
        "2020-01-01 10:00:00.100000: I tensorflow/compiler/plugin/poplar/driver/poplar_compiler.cc:2] "
        "Couldn't find /cache/1a2b3c.xla_engine in executable cache\n"
    )
    data = ls_json(capsys, str(tmp_path), "--log", str(log))
    # THEN it is listed under its hash and linked to the module
    assert data["entries"] == [
        {**data["entries"][0], "file": "1a2b3c.xla_engine.poplar_exec", "hash": "1a2b3c",
         "bytes": 10, "modules": ["cluster_1"], "uses": 1}
    ]  # fmt: skip


def test_ls_shows_locked_entries(cache: Cache, capsys: pytest.CaptureFixture[str]) -> None:
    # GIVEN a compile holding the lock of one entry and a load holding another's
    (cache.dir / f"{cache.train}.compile_lock").touch()
    (cache.dir / f"{cache.test}.read_lock").touch()
    entries = by_hash(ls_json(capsys, str(cache.dir)))
    # THEN exactly those are locked
    assert {h for h, e in entries.items() if e["locked"]} == {cache.train, cache.test}
    _, out, _ = run_cli("cache", "ls", str(cache.dir), capsys=capsys)
    assert "2 entries locked" in out


def test_ls_of_an_empty_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # GIVEN a folder without cache entries, THEN an empty listing, exit 0
    (tmp_path / "README").write_text("not an executable")
    data = ls_json(capsys, str(tmp_path))
    assert data == {"dir": str(tmp_path), "entries": [], "total_bytes": 0, "unreferenced_bytes": 0}


# --------------------------------------------------------------------------- prune


def test_prune_is_a_dry_run_without_yes(cache: Cache, capsys: pytest.CaptureFixture[str]) -> None:
    # GIVEN the cache, WHEN pruning what the first run did not use, without --yes
    before = cache.names()
    data = prune_json(capsys, str(cache.dir), "--unused-by", str(cache.first_log))
    # THEN it plans to remove the two other entries and deletes nothing
    assert data["dry_run"] is True and data["removed"] == [] and data["freed_bytes"] == 0
    assert {s["hash"] for s in data["remove"]} == {cache.train, cache.test}
    assert all(s["reasons"] == ["unused"] for s in data["remove"])
    assert data["bytes_to_free"] == sum(
        cache.path(h).stat().st_size for h in (cache.train, cache.test)
    )
    assert cache.names() == before
    code, out, _ = run_cli("cache", "prune", str(cache.dir), "--older-than", "1d", capsys=capsys)
    assert code == 0 and "Dry run: would remove 2 entries" in out and "--yes" in out
    assert cache.names() == before


def test_prune_yes_deletes_exactly_the_plan(
    cache: Cache, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN the dry-run plan of a prune
    args = (str(cache.dir), "--unused-by", str(cache.other_log))
    planned = {s["file"] for s in prune_json(capsys, *args)["remove"]}
    before = cache.names()
    # WHEN the same prune runs with --yes
    data = prune_json(capsys, *args, "--yes")
    # THEN exactly the planned files are gone and the freed bytes are reported
    assert planned == {f"{cache.first}.poplar_exec"}
    assert data["dry_run"] is False and set(data["removed"]) == planned
    assert cache.names() == before - planned
    assert data["freed_bytes"] == data["bytes_to_free"] > 0


@pytest.mark.parametrize(
    ("args", "removed"),
    [
        (("--older-than", "1d"), {"train", "first"}),
        (("--older-than", "3d"), {"first"}),
        (("--older-than", "30d"), set()),
        (("--keep-newest", "1"), {"train", "first"}),
        (("--keep-newest", "0"), {"test", "train", "first"}),
        (("--keep-newest", "5"), set()),
        # sizes: test 1455, train 2480, first 1968 bytes; the newest that fit are kept
        (("--max-size", "4000"), {"first"}),
        (("--max-size", "3935"), {"first"}),
        (("--max-size", "1000"), {"test", "train", "first"}),
        (("--max-size", "1G"), set()),
    ],
)
def test_each_criterion_selects_what_it_says(
    cache: Cache, args: tuple[str, ...], removed: set[str], capsys: pytest.CaptureFixture[str]
) -> None:
    data = prune_json(capsys, str(cache.dir), *args)
    assert {s["hash"] for s in data["remove"]} == {getattr(cache, n) for n in removed}
    assert data["kept"] == 3 - len(removed)


def test_criteria_combine_any_selects(cache: Cache, capsys: pytest.CaptureFixture[str]) -> None:
    # GIVEN two criteria that each select one different entry
    data = prune_json(
        capsys,
        str(cache.dir),
        "--older-than",
        "5d",
        "--unused-by",
        str(cache.first_log),
        "--keep-newest",
        "2",
    )
    # THEN an entry goes when any criterion selects it, and the reasons say which
    reasons = {s["hash"]: s["reasons"] for s in data["remove"]}
    assert reasons == {
        cache.first: ["older-than", "keep-newest"],
        cache.train: ["unused"],
        cache.test: ["unused"],
    }


def test_locked_entries_and_locks_are_never_removed(
    cache: Cache, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN a locked entry (a compile in progress) and an orphan lock
    lock = cache.dir / f"{cache.first}.compile_lock"
    lock.touch()
    orphan = cache.dir / "abcdef.read_lock"
    orphan.touch()
    # WHEN everything is pruned for real
    data = prune_json(capsys, str(cache.dir), "--keep-newest", "0", "--yes")
    # THEN the locked entry is skipped (and says so), the locks stay, the rest is gone
    assert [(s["hash"], s["why"]) for s in data["skipped"]] == [(cache.first, "locked")]
    assert set(data["removed"]) == {f"{cache.train}.poplar_exec", f"{cache.test}.poplar_exec"}
    assert cache.names() == {cache.path(cache.first).name, lock.name, orphan.name}
    code, out, _ = run_cli("cache", "prune", str(cache.dir), "--keep-newest", "0", capsys=capsys)
    assert code == 0 and "Nothing to remove" in out and "locked" in out


def test_nothing_but_cache_entries_is_ever_deleted(
    cache: Cache, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN a cache folder that also holds other files, a folder, a symlink and serialized binaries
    outside = tmp_path / "precious.bin"
    outside.write_bytes(b"keep me")
    (cache.dir / "notes.txt").write_text("x")
    (cache.dir / "NOTHEX.poplar_exec").write_text("x")
    (cache.dir / f"{cache.first}.ipu_bin").write_text("x")
    (cache.dir / f"{cache.first}.json").write_text("{}")
    (cache.dir / "abc.poplar_exec.bak").write_text("x")
    (cache.dir / "deadbeef.poplar_exec").mkdir()
    (cache.dir / "cafe.poplar_exec").symlink_to(outside)
    (cache.dir / "sub").mkdir()
    (cache.dir / "sub" / "0123.poplar_exec").write_text("x")
    others = cache.names() - cache.files
    # WHEN every criterion is set to select everything, for real
    data = prune_json(
        capsys,
        str(cache.dir),
        "--keep-newest",
        "0",
        "--max-size",
        "0",
        "--older-than",
        "0s",
        "--yes",
    )
    # THEN only the three real entries are gone
    assert set(data["removed"]) == cache.files
    assert cache.names() == others
    assert outside.read_bytes() == b"keep me" and (cache.dir / "sub" / "0123.poplar_exec").exists()


def test_an_entry_changed_after_listing_is_left_alone(cache: Cache) -> None:
    # GIVEN a plan, and then an entry rewritten by a compile before the removal
    p = plan(index(str(cache.dir)), Criteria(keep_newest=0))
    cache.path(cache.train).write_bytes(b"new executable")
    (cache.dir / f"{cache.test}.read_lock").touch()
    # WHEN the plan is applied
    apply(p)
    # THEN the changed and the newly locked entries stay
    assert {s.entry.hash: s.why_skipped for s in p.skipped} == {
        cache.train: "changed since it was listed",
        cache.test: "locked",
    }
    assert [s.entry.hash for s in p.removed] == [cache.first]
    assert cache.path(cache.train).exists() and cache.path(cache.test).exists()
    assert not p.failed


def test_a_failed_removal_is_reported_and_exits_2(
    cache: Cache, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN a file system that refuses to delete
    def refuse(path: Any, **_kw: Any) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(os, "unlink", refuse)
    code, out, err = run_cli(
        "cache", "prune", str(cache.dir), "--keep-newest", "2", "--yes", capsys=capsys
    )
    # THEN the result is printed, and one error line says what failed
    assert "Removed 0 entries" in out and "Permission denied" in out
    assert_one_line_error(code, err, "1 of 1 entries could not be removed", cache.first)
    assert cache.names() >= cache.files


# --------------------------------------------------------------------------- errors


def test_prune_without_a_criterion_refuses(
    cache: Cache, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run_cli("cache", "prune", str(cache.dir), "--yes", capsys=capsys)
    assert_one_line_error(code, err, str(cache.dir), "nothing selected")
    assert cache.names() == cache.files


def test_unused_by_a_log_without_cache_lines_refuses(
    cache: Cache, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN a log at the default level: no cache line, so it cannot say what was used
    quiet = tmp_path / "quiet.log"
    quiet.write_text("2023-04-26 09:00:10.230183: I tensorflow/core/foo.cc:1] nothing here\n")
    code, _, err = run_cli(
        "cache", "prune", str(cache.dir), "--unused-by", str(quiet), "--yes", capsys=capsys
    )
    # THEN it refuses rather than calling every entry unused
    assert_one_line_error(code, err, str(quiet), "no executable-cache lines", "TF_CPP_VMODULE")
    assert cache.names() == cache.files
    # AND ls says so, without failing
    code, out, _ = run_cli("cache", "ls", str(cache.dir), "--log", str(quiet), capsys=capsys)
    assert code == 0 and "has no executable-cache lines" in out


@pytest.mark.parametrize("sub", ["ls", "prune"])
def test_a_missing_or_wrong_directory_is_one_line(
    sub: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a_file = tmp_path / "file"
    a_file.write_text("x")
    for target, words in ((tmp_path / "nope", "no such directory"), (a_file, "not a directory")):
        code, _, err = run_cli("cache", sub, str(target), "--keep-newest", "0", capsys=capsys) if sub == "prune" \
            else run_cli("cache", sub, str(target), capsys=capsys)  # fmt: skip
        assert_one_line_error(code, err, str(target), words)


def test_an_unreadable_directory_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def denied(path: Any) -> Any:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(os, "listdir", denied)
    code, _, err = run_cli("cache", "ls", str(tmp_path), capsys=capsys)
    assert_one_line_error(code, err, str(tmp_path), "permission denied")


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (("ls", "{dir}", "--log", "{tmp}/missing.log"), ("missing.log", "no such file")),
        (("prune", "{dir}", "--unused-by", "{tmp}/missing.log"), ("missing.log", "no such file")),
        (("ls", "{dir}", "--log", "{tmp}"), ("is a directory",)),
        (("ls", "{dir}", "--log", "-", "--log", "-"), ("stdin",)),
        (("prune", "{dir}", "--older-than", "7"), ("--older-than", "unit")),
        (("prune", "{dir}", "--older-than", "soon"), ("--older-than",)),
        (("prune", "{dir}", "--max-size", "ten"), ("--max-size", "500M")),
        (("prune", "{dir}", "--keep-newest", "-1"), ("--keep-newest",)),
        (("ls", "{dir}", "--format", "xml"), ("--format",)),
    ],
)
def test_bad_options_and_logs_are_one_line(
    cache: Cache,
    tmp_path: Path,
    args: tuple[str, ...],
    words: tuple[str, ...],
    capsys: pytest.CaptureFixture[str],
) -> None:
    filled = [a.format(dir=cache.dir, tmp=tmp_path) for a in args]
    code, _, err = run_cli("cache", *filled, capsys=capsys)
    assert_one_line_error(code, err, *words)
    assert cache.names() == cache.files


def test_sizes_and_durations() -> None:
    assert parse_duration("7d") == 7 * DAY and parse_duration("12h") == 12 * 3600
    assert parse_duration("30m") == 1800 and parse_duration("3600s") == 3600
    assert parse_duration("2w") == 14 * DAY
    assert parse_size("123") == 123 and parse_size("500M") == 500 * 2**20
    assert parse_size("10G") == 10 * 2**30 and parse_size("1.5GiB") == int(1.5 * 2**30)
    assert parse_size("10GB") == 10 * 10**9
    for bad in ("7", "7y", "-1d"):
        with pytest.raises(ValueError):
            parse_duration(bad)
    for bad in ("ten", "-1", "5X", "G"):
        with pytest.raises(ValueError):
            parse_size(bad)
