"""The kept code of the package's dataclasses' methods: GIVEN the file beside the bytecode,
THEN a run takes the methods' code from it and compiles none, with the same results; a
file of another interpreter, damaged or unwritable never fails a run; other modules'
dataclasses are compiled as ever."""

from __future__ import annotations

import dataclasses
import json
import marshal
import os
import subprocess
import sys
import types
from pathlib import Path

import pytest

from recompile_doctor import dataclass_code
from recompile_doctor.dataclass_code import read_codes, write_codes

ROOT = Path(__file__).resolve().parent.parent
LOG = ROOT / "fixtures" / "jax" / "growing_shape" / "run.log"
#: the texts ``dataclasses`` writes for a class of six methods: one per method, one for them
#: all from Python 3.13 on
TEXTS_PER_CLASS = 6 if sys.version_info < (3, 13) else 1
#: at least this many texts compiled by a run of ``analyze`` with none kept (its classes:
#: 200 texts or more, 50 from 3.13 on)
MANY_TEXTS = 50 if sys.version_info < (3, 13) else 40

#: a run of ``analyze --format json`` of LOG that prints, last, how many method texts it
#: compiled and where the kept codes are
PROBE = """
import contextlib, io, json, sys
from recompile_doctor.cli.main import main
out = io.StringIO()
with contextlib.redirect_stdout(out):
    main(["analyze", sys.argv[1], "--format", "json"])
from recompile_doctor import dataclass_code as d
print(json.dumps({"report": out.getvalue(), "compiled": d.compiled_here(), "path": d.cache_path()}))
"""


def _run(prefix: Path, *, write: bool = True) -> dict[str, object]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(prefix)
    if not write:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    out = subprocess.run(
        [sys.executable, "-c", PROBE, str(LOG)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        check=True,
    ).stdout
    got: dict[str, object] = json.loads(out.strip().splitlines()[-1])
    return got


def test_a_second_run_takes_every_method_from_the_kept_codes(tmp_path: Path) -> None:
    # GIVEN a bytecode cache of its own, WHEN analyze runs twice
    first = _run(tmp_path)
    path = Path(str(first["path"]))
    # THEN the first compiled the methods and kept them beside the bytecode; the second
    # compiled none, and its report is the first's
    assert int(str(first["compiled"])) >= MANY_TEXTS
    assert path.is_file() and str(path).startswith(str(tmp_path))
    second = _run(tmp_path)
    assert second["compiled"] == 0
    assert second["report"] == first["report"]


def test_no_file_is_written_where_bytecode_is_not(tmp_path: Path) -> None:
    # GIVEN PYTHONDONTWRITEBYTECODE, THEN the run writes no kept codes, as no bytecode
    got = _run(tmp_path, write=False)
    assert int(str(got["compiled"])) >= MANY_TEXTS
    assert not Path(str(got["path"])).exists()


def _some_codes() -> dict[str, object]:
    texts = ["def f():\n return 1\n", "def g(x):\n return x + 1\n"]
    return {t: compile(t, "<string>", "exec") for t in texts}


def test_kept_codes_read_back_as_written_and_merge(tmp_path: Path) -> None:
    # GIVEN codes written by two processes in turn, THEN the file holds both, equal
    path = str(tmp_path / "sub" / "dataclass-code.marshal")
    a, b = list(_some_codes().items())
    write_codes(path, dict([a]))  # type: ignore[list-item]
    write_codes(path, dict([b]))  # type: ignore[list-item]
    assert read_codes(path) == dict([a, b])
    assert [p.name for p in (tmp_path / "sub").iterdir()] == ["dataclass-code.marshal"]


def test_a_full_file_keeps_only_what_the_process_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN a file holding as many codes as it keeps (texts of classes since changed),
    # WHEN a process adds one, THEN the file keeps the codes that process used, and its new
    path = str(tmp_path / "dataclass-code.marshal")
    monkeypatch.setattr(dataclass_code, "_MAX_CODES", 3)
    old = {
        f"def f{i}():\n return {i}\n": compile(f"def f{i}(): pass", "<string>", "exec")
        for i in range(3)
    }
    write_codes(path, old)
    assert read_codes(path) == old
    (used_text, used_code), (new_text, new_code) = list(_some_codes().items())
    write_codes(path, {new_text: new_code}, {used_text: used_code, new_text: new_code})  # type: ignore[dict-item]
    assert read_codes(path) == {used_text: used_code, new_text: new_code}


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b"garbage",
        "other magic",  # another interpreter's bytecode, a good payload
        "other optimization",  # python -O's
        "header",  # the right header, then a damaged payload
        "list",  # the right header, then a list
        "types",  # the right header, then a dict of other types
    ],
)
def test_a_damaged_or_foreign_file_is_ignored(tmp_path: Path, content: bytes | str) -> None:
    # GIVEN a file of another interpreter's bytecode, damaged, or holding other things
    head = dataclass_code._header()
    fmt = dataclass_code._FORMAT
    payload = marshal.dumps(_some_codes())
    if content == "other magic":
        data = fmt + bytes(b ^ 0xFF for b in head[len(fmt) : -1]) + head[-1:] + payload
    elif content == "other optimization":
        data = head[:-1] + bytes([(head[-1] + 1) % 3]) + payload
    elif content == "header":
        data = head + payload[:-7]
    elif content == "list":
        data = head + marshal.dumps([1, 2])
    elif content == "types":
        data = head + marshal.dumps({1: "x", "y": 2})
    else:
        assert isinstance(content, bytes)
        data = content
    path = tmp_path / "dataclass-code.marshal"
    path.write_bytes(data)
    # THEN it reads as holding nothing, and writing to it replaces it whole
    assert read_codes(str(path)) == {}
    codes = _some_codes()
    write_codes(str(path), codes)  # type: ignore[arg-type]
    assert read_codes(str(path)) == codes


def test_an_unwritable_place_fails_nothing(tmp_path: Path) -> None:
    # GIVEN a path whose folder is a file, THEN writing keeps nothing and raises nothing
    blocker = tmp_path / "file"
    blocker.write_text("x")
    write_codes(str(blocker / "dataclass-code.marshal"), _some_codes())  # type: ignore[arg-type]
    assert blocker.read_text() == "x"


def test_another_modules_dataclass_is_compiled_as_ever() -> None:
    # GIVEN the kept codes installed (the package's import installs them), WHEN a module
    # outside the package makes a dataclass, THEN its methods are not kept, and it works
    before = dataclass_code.compiled_here()

    @dataclasses.dataclass(frozen=True)
    class Outside:
        a: int
        b: str = "x"

    assert dataclass_code.compiled_here() == before
    assert Outside(1) == Outside(1, "x") and repr(Outside(2)).endswith("Outside(a=2, b='x')")
    with pytest.raises(dataclasses.FrozenInstanceError):
        Outside(1).a = 2  # type: ignore[misc]


def test_a_package_class_made_from_kept_code_is_the_class_compiled_anew(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # GIVEN one of the package's classes made twice in a module of the package, from no
    # kept codes: once from freshly compiled methods, once from the codes then kept
    monkeypatch.setattr(dataclass_code, "_codes", {})
    monkeypatch.setattr(dataclass_code, "_compiled", {})
    source = (
        "from __future__ import annotations\n"
        "from dataclasses import dataclass, field\n"
        "@dataclass(frozen=True, slots=True)\n"
        "class Probe:\n"
        '    """A probe."""\n'
        "    a: int\n"
        "    b: tuple[int, ...] = ()\n"
        "    c: list[int] = field(default_factory=list, compare=False)\n"
    )
    name = "recompile_doctor._probe_dataclass_code"
    made = []
    for _ in range(2):
        module = types.ModuleType(name)
        monkeypatch.setitem(sys.modules, name, module)
        before = dataclass_code.compiled_here()
        exec(compile(source, "probe", "exec"), module.__dict__)
        made.append((module.Probe, dataclass_code.compiled_here() - before))
    # THEN the first compiled its six methods, the second none; both behave alike
    (first, compiled_first), (second, compiled_second) = made
    assert (compiled_first, compiled_second) == (TEXTS_PER_CLASS, 0)
    assert first is not second
    for cls in (first, second):
        x = cls(1, (2,))
        assert x == cls(1, (2,), [9]) and hash(x) == hash(cls(1, (2,)))
        assert repr(x) == "Probe(a=1, b=(2,), c=[])"
        with pytest.raises(dataclasses.FrozenInstanceError):
            x.a = 3


def test_an_exec_another_tool_gave_dataclasses_still_gets_the_other_texts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # GIVEN another tool's exec in dataclasses before the package's, THEN the texts of
    # other modules' classes still go through it
    seen: list[str] = []

    def theirs(source: str, globals: object = None, locals: object = None) -> None:
        seen.append(source)
        exec(source, globals, locals)  # type: ignore[arg-type]

    monkeypatch.setattr(dataclasses, "exec", theirs, raising=False)
    monkeypatch.setattr(dataclass_code, "_before", [None])
    dataclass_code.install()
    assert dataclasses.exec is dataclass_code._exec  # type: ignore[attr-defined]

    @dataclasses.dataclass
    class Outside:
        a: int

    assert Outside(1).a == 1 and any("__init__" in t for t in seen)
