"""The compiled build (``make compiled``): which modules it compiles, and the rules that keep
its results those of the pure package (``make test-compiled`` runs the suite's tests of those
modules against it)."""

from __future__ import annotations

import abc
import ast
import dataclasses
import importlib
import os
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from recompile_doctor import compiled_modules
from recompile_doctor.compiled_modules import COMPILED, compiled, source_path

PACKAGE_ROOT = Path(compiled_modules.__file__).resolve().parent.parent
#: set by ``make test-compiled``: this run must import the compiled build
EXPECTED = os.environ.get("RECOMPILE_DOCTOR_EXPECT_COMPILED") == "1"


def _tree(module: str) -> ast.Module:
    return ast.parse((PACKAGE_ROOT / source_path(module)).read_text(encoding="utf-8"))


def test_every_compiled_module_has_its_source() -> None:
    # GIVEN the list setup.py compiles, THEN each names a module of the package, once
    assert len(set(COMPILED)) == len(COMPILED)
    for name in COMPILED:
        assert name.startswith("recompile_doctor.")
        assert (PACKAGE_ROOT / source_path(name)).is_file(), name


def test_the_run_imports_the_build_it_says() -> None:
    # GIVEN `make test-compiled`, THEN every listed module is compiled in this run (its
    # tests do not pass on the pure source by mistake); otherwise the source tree holds no
    # extension module (one built in place would shadow every later edit of its source)
    if EXPECTED:
        assert compiled() == COMPILED
        assert "compiled with mypyc" in compiled_modules.describe()
        return
    assert compiled() == (), "compiled in place: `make compiled` builds into build/compiled"
    assert compiled_modules.describe().startswith("pure Python")


def _generators_holding_resources(tree: ast.Module) -> list[str]:
    """Generator functions with a ``finally`` or a ``with`` (cleanup that a compiled
    generator dropped before its end does not run)."""
    out = []
    for fn in ast.walk(tree):
        if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        own = list(_own_nodes(fn))
        if any(isinstance(n, ast.Yield | ast.YieldFrom) for n in own) and any(
            isinstance(n, ast.With) or (isinstance(n, ast.Try) and n.finalbody) for n in own
        ):
            out.append(fn.name)
    return out


def _own_nodes(fn: ast.AST) -> Iterator[ast.AST]:
    """The nodes of ``fn``'s body, not those of a function or lambda defined inside it (a
    ``yield`` there makes that one a generator, not ``fn``)."""
    stack = list(ast.iter_child_nodes(fn))
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, ast.FunctionDef | ast.Lambda):
            stack.extend(ast.iter_child_nodes(node))


@pytest.mark.parametrize("name", COMPILED)
def test_no_compiled_module_has_a_generator_with_cleanup(name: str) -> None:
    # GIVEN a compiled module, THEN none of its generators has cleanup to run when it is
    # dropped before its end (a compiled generator never runs it: files and workers would
    # be left open)
    assert _generators_holding_resources(_tree(name)) == []


def test_the_generator_check_finds_cleanup() -> None:
    # GIVEN a generator with a `with`, one with a `finally`, and one without either, THEN
    # the check names the first two
    tree = ast.parse(
        "def a():\n    with open('x') as f:\n        yield f\n"
        "def b():\n    try:\n        yield 1\n    finally:\n        pass\n"
        "def c():\n    yield 1\n    def d():\n        with open('x'):\n            pass\n"
    )
    assert _generators_holding_resources(tree) == ["a", "b"]


#: the types a compiled class may give a table a worker records (``UNORDERED_STATE``,
#: ``RESIDUAL_STATE``): compiled code calls the methods of what such a table holds (the
#: recording subclasses of _checkpoint), where for ``dict`` and ``set`` it calls the
#: dictionary's and the set's own C functions
_RECORDABLE = ("MutableMapping", "MutableSet", "DigestTable")


def _recorded_tables(tree: ast.Module) -> dict[str, list[str]]:
    """Per class: the attributes its ``UNORDERED_STATE`` and ``RESIDUAL_STATE`` name."""
    out: dict[str, list[str]] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.ClassDef):
            continue
        for stmt in node.body:
            target = stmt.target if isinstance(stmt, ast.AnnAssign) else None
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
                target = stmt.targets[0]
            value = stmt.value if isinstance(stmt, ast.Assign | ast.AnnAssign) else None
            if (
                isinstance(target, ast.Name)
                and target.id in ("UNORDERED_STATE", "RESIDUAL_STATE")
                and value is not None
            ):
                names = [
                    n.value
                    for n in ast.walk(value)
                    if isinstance(n, ast.Constant) and isinstance(n.value, str)
                ]
                out.setdefault(node.name, []).extend(names)
    return out


def _table_types(tree: ast.Module, cls: str) -> dict[str, str]:
    """The outer type each ``self.<name>: T = ...`` of class ``cls`` is annotated with
    (the annotation's text, without its parameters; unannotated, the class that makes
    it; else ``?``)."""
    out: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == cls:
            for n in ast.walk(node):
                if isinstance(n, ast.AnnAssign | ast.Assign):
                    targets = [n.target] if isinstance(n, ast.AnnAssign) else n.targets
                    for t in targets:
                        if (
                            isinstance(t, ast.Attribute)
                            and isinstance(t.value, ast.Name)
                            and t.value.id == "self"
                        ):
                            ann = n.annotation if isinstance(n, ast.AnnAssign) else None
                            if isinstance(ann, ast.Subscript):
                                ann = ann.value
                            if ann is None and isinstance(n.value, ast.Call):
                                ann = n.value.func  # (typed by what makes it: Table())
                            text = ast.unparse(ann) if ann is not None else "?"
                            out.setdefault(t.attr, text)
    return out


@pytest.mark.parametrize("name", COMPILED)
def test_a_compiled_class_types_the_tables_a_worker_records_abstractly(name: str) -> None:
    # GIVEN a compiled module, THEN each table a class of it names as looked up or residual
    # is annotated, where it is made, as an abstract mapping or set (or the compact table):
    # a worker puts recording subclasses in their place, and compiled code reads a table
    # typed `dict` or `set` without calling a subclass's methods (the takeovers' tests in
    # tests/test_parallel.py fail then: a worker's misses go unrecorded)
    tree = _tree(name)
    for cls, tables in _recorded_tables(tree).items():
        types = _table_types(tree, cls)
        for table in tables:
            assert types.get(table, "?").rsplit(".", 1)[-1] in _RECORDABLE, (
                f"{name}.{cls}.{table}: {types.get(table, 'not annotated')}"
            )


def test_the_table_check_finds_a_concrete_type() -> None:
    # GIVEN a class whose looked-up table is typed `dict`, one typed `set` and one abstract,
    # THEN the check reads the first two as such, and the third as recordable
    tree = ast.parse(
        "class D:\n"
        "    UNORDERED_STATE: ClassVar[frozenset[str]] = frozenset({'_a', '_b', '_c'})\n"
        "    def __init__(self) -> None:\n"
        "        self._a: dict[str, str] = {}\n"
        "        self._b: set[str] = set()\n"
        "        self._c: MutableMapping[str, str] = {}\n"
    )
    assert sorted(_recorded_tables(tree)["D"]) == ["_a", "_b", "_c"]
    assert _table_types(tree, "D") == {"_a": "dict", "_b": "set", "_c": "MutableMapping"}


def test_the_framework_decoders_are_compiled() -> None:
    # GIVEN the compiled build, THEN it compiles every log decoder (a line of each format
    # is decoded by compiled code)
    from recompile_doctor.parsers import LOG_FORMATS

    for fmt in LOG_FORMATS:
        module = type(fmt.decoder("x")).__module__
        assert module in COMPILED, (fmt.name, module)


@pytest.mark.parametrize("name", ["torch", "tensorflow"])
def test_a_line_s_prefix_is_read_by_str_methods_exactly_in_the_compiled_build(name: str) -> None:
    # GIVEN this run's build, THEN the torch and TensorFlow decoders read a line's prefix
    # by str methods when compiled (cheaper there) and by its pattern when not (cheaper
    # there); the two readings are held to each other by each format's tests
    import importlib

    module = importlib.import_module(f"recompile_doctor.parsers.{name}")
    assert module._BY_STR is (module.__name__ in compiled())


def _working_state() -> list[object]:
    from recompile_doctor.model import ValueChange
    from recompile_doctor.parsers import jax, ptxla, torch, torch_trace

    line = torch._Line(3, "raw", "1", 0.5, "0/0", "guards", "torch/x.py", "msg")
    block = ptxla._Block("pfx", 7)
    block.lines.append("line")
    change = ValueChange("f", "x", "f32[1]", "f32[2]", "a.py:3", "run.log", 4)
    return [
        line,
        torch._Block("recompile", line, [line]),
        torch_trace._Envelope(2, "raw", 1.5, {"str": {}}, "str", ["p"], [2, 3]),
        block,
        jax.Explanation("f", "a.py:3", False, True, "dtype-changed", (change,), 1.5),
    ]


@pytest.mark.parametrize("index", range(5))
def test_a_decoders_working_state_with_its_init_written_out_copies_and_pickles(
    index: int,
) -> None:
    # GIVEN an object of a working-state class whose __init__ is written out (compiled in
    # the compiled build: mypyc copies and pickles such an object by making one without
    # arguments first), THEN it copies and pickles whole, in either build
    import copy
    import pickle

    obj = _working_state()[index]
    for back in (copy.copy(obj), pickle.loads(pickle.dumps(obj, protocol=5))):
        assert type(back) is type(obj)
        assert dataclasses.astuple(back) == dataclasses.astuple(obj)  # type: ignore[call-overload]


#: how the tests put another value in a module's name: ``monkeypatch.setattr(module,
#: "NAME", ...)``, ``mock.patch.object(module, "NAME", ...)`` or by dotted path
_PATCHED = re.compile(
    r"""(?:setattr|patch\.object)\(\s*[\w.]+,\s*["'](\w+)["']"""
    r"""|(?:setattr|patch)\(\s*["']recompile_doctor[\w.]*\.(\w+)["']"""
)


def _patched_names(text: str) -> set[str]:
    return {a or b for a, b in _PATCHED.findall(text)}


def _final_names(tree: ast.Module) -> set[str]:
    """The module-level names a module declares ``Final``."""
    found = set()
    for node in tree.body:
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            ann = node.annotation
            head = ann.value if isinstance(ann, ast.Subscript) else ann
            if isinstance(head, ast.Name) and head.id == "Final":
                found.add(node.target.id)
    return found


def test_no_name_a_test_patches_is_final_in_a_compiled_module() -> None:
    # GIVEN the names the tests patch, THEN no compiled module declares one of them Final:
    # compiled code reads a Final name as a constant (a literal is inlined, any other value
    # is kept in C), so a test patching it would test the value it replaced
    patched: set[str] = set()
    here = Path(__file__).resolve()
    for path in here.parent.rglob("*.py"):
        if path != here:  # (this file's own example below)
            patched |= _patched_names(path.read_text(encoding="utf-8"))
    assert {"PACK_FROM", "CHUNK_BYTES", "PIECE_ITEMS"} <= patched  # (the patterns find them)
    clashes = {m: sorted(_final_names(_tree(m)) & patched) for m in COMPILED}
    assert {m: c for m, c in clashes.items() if c} == {}


def test_the_final_check_finds_a_patched_final_name() -> None:
    text = 'monkeypatch.setattr(_scan, "NL", b"x")\nmock.patch.object(json_text, "_INF", 1)\n'
    tree = ast.parse("from typing import Final\nNL: Final = b'\\n'\n_INF: Final[float] = 1.0\n")
    assert _final_names(tree) & _patched_names(text) == {"NL", "_INF"}


@pytest.mark.parametrize("name", COMPILED)
def test_no_compiled_module_asks_an_objects_class_by_attribute(name: str) -> None:
    # GIVEN a compiled module, THEN it asks an object's class with type(x): compiled code
    # reads x.__class__ as a generic attribute (a lookup by name each time), type(x) at once
    uses = [
        node.lineno
        for node in ast.walk(_tree(name))
        if isinstance(node, ast.Attribute) and node.attr == "__class__"
    ]
    assert uses == [], f"{name}: lines {uses}"


def _abstract_classes(module: object) -> list[type]:
    """The classes ``module`` defines that derive from an abstract base class (not its
    protocols: they are never instances' classes)."""
    return [
        c
        for c in vars(module).values()
        if isinstance(c, abc.ABCMeta)
        and c.__module__ == getattr(module, "__name__", None)
        and not getattr(c, "_is_protocol", False)
    ]


@pytest.mark.parametrize("name", COMPILED)
def test_a_compiled_class_deriving_from_an_abc_has_instance_checks_of_its_own(name: str) -> None:
    # GIVEN a compiled module's classes deriving from Sequence or Mapping, THEN each has
    # instance checks of its own: built by mypyc, it shared its base's, and a tuple was an
    # instance of every compiled Sequence (own_abc_checks)
    for cls in _abstract_classes(importlib.import_module(name)):
        assert "_abc_impl" in vars(cls), f"{name}.{cls.__name__}: call own_abc_checks on it"
        assert not isinstance((), cls) and not isinstance({}, cls), cls


def test_own_abc_checks_mends_a_class_that_shares_its_bases() -> None:
    # GIVEN a Sequence subclass stripped of its own checks, as mypyc builds one
    class Kept(Sequence[int]):
        def __getitem__(self, i: Any) -> Any:
            return i

        def __len__(self) -> int:
            return 0

    del Kept._abc_impl  # type: ignore[attr-defined]
    assert isinstance((), Kept)  # (what the compiled build's classes did)
    # WHEN mended, THEN only its own instances are its instances
    compiled_modules.own_abc_checks(Kept)
    assert not isinstance((), Kept) and isinstance(Kept(), Kept)
    assert isinstance(Kept(), Sequence)


@pytest.mark.parametrize("name", COMPILED)
def test_no_compiled_module_subclasses_the_pickler(name: str) -> None:
    # GIVEN a compiled module, THEN it defines no pickle.Pickler subclass: compiled, its
    # reducer_override crashed the pickler (timeline.pickled is not compiled for this)
    bases = [
        ast.unparse(base)
        for node in ast.walk(_tree(name))
        if isinstance(node, ast.ClassDef)
        for base in node.bases
    ]
    assert not [b for b in bases if b.endswith("Pickler")], name


def _constant_names(tree: ast.Module) -> set[str]:
    """The module-level names bound to a literal (a tuple, a string, a number...)."""
    out = set()
    for node in tree.body:
        target: ast.expr | None = None
        value: ast.expr | None = None
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        elif isinstance(node, ast.AnnAssign):
            target, value = node.target, node.value
        if isinstance(target, ast.Name) and isinstance(
            value, ast.Tuple | ast.Constant | ast.List | ast.Set | ast.Dict
        ):
            out.add(target.id)
    return out


@pytest.mark.parametrize("name", COMPILED)
def test_no_compiled_module_tells_a_constant_by_its_identity(name: str) -> None:
    # GIVEN a compiled module, THEN no `is` test compares with a name bound to a literal: the
    # compiled build makes its own copies of such a constant (a tuple used as a memo's
    # "absent" once made every shape read as no shape), so a sentinel is an object()
    tree = _tree(name)
    constants = _constant_names(tree)
    found = [
        (node.lineno, ast.unparse(node))
        for node in ast.walk(tree)
        if isinstance(node, ast.Compare)
        and any(isinstance(op, ast.Is | ast.IsNot) for op in node.ops)
        and any(
            isinstance(x, ast.Name) and x.id in constants for x in (node.left, *node.comparators)
        )
    ]
    assert found == []
