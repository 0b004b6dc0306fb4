"""The compiled build (``make compiled``): which modules it compiles, and the rules that keep
its results those of the pure package (``make test-compiled`` runs the suite's tests of those
modules against it)."""

from __future__ import annotations

import ast
import os
from pathlib import Path

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
        own = [n for n in ast.walk(fn) if not _nested(fn, n)]
        if any(isinstance(n, ast.Yield | ast.YieldFrom) for n in own) and any(
            isinstance(n, ast.With) or (isinstance(n, ast.Try) and n.finalbody) for n in own
        ):
            out.append(fn.name)
    return out


def _nested(fn: ast.AST, node: ast.AST) -> bool:
    """Whether ``node`` belongs to a function or lambda defined inside ``fn``."""
    return any(
        inner is not fn
        and isinstance(inner, ast.FunctionDef | ast.Lambda)
        and node is not inner
        and any(node is n for n in ast.walk(inner))
        for inner in ast.walk(fn)
    )


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


@pytest.mark.parametrize("name", COMPILED)
def test_no_compiled_class_has_tables_a_worker_records(name: str) -> None:
    # GIVEN a compiled module, THEN no class of it names looked-up or residual tables: a
    # worker puts dictionary subclasses in their place to record misses, whose methods
    # compiled code does not call
    for node in ast.walk(_tree(name)):
        if isinstance(node, ast.ClassDef):
            for stmt in node.body:
                target = stmt.target if isinstance(stmt, ast.AnnAssign) else None
                if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
                    target = stmt.targets[0]
                if isinstance(target, ast.Name):
                    assert target.id not in ("UNORDERED_STATE", "RESIDUAL_STATE"), (
                        f"{name}.{node.name}"
                    )
