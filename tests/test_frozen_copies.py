"""The frozen dataclasses of the modules the compiled build compiles are copied and pickled
whole, in either build.

mypyc gives a frozen dataclass of a compiled module a state setter that sets each field
through the frozen class's ``__setattr__``, which refuses: a copy, a deep copy or an
unpickled object failed with ``FrozenInstanceError`` in the compiled build (a public
``Rule`` among them), where the pure build copied them.  Each such class makes itself again
from its fields (``__reduce__``: :func:`recompile_doctor.slotted.remade_from_fields`).

GIVEN every module of ``COMPILED`` WHEN its frozen dataclasses are listed THEN each defines
``__reduce__``; GIVEN real objects of each (a rule, a guard failure, Poplar's messages, a
PyTorch/XLA graph, a JAX timeline, its processes and verdicts) WHEN copied, deep-copied and
pickled THEN each copy equals the original and is still frozen.  (``make test`` runs this
against the compiled build too.)
"""

from __future__ import annotations

import copy
import dataclasses
import importlib
import pickle
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from recompile_doctor.analyses import Options
from recompile_doctor.analyses.recompile import verdicts
from recompile_doctor.compiled_modules import COMPILED
from recompile_doctor.parsers import poplar
from recompile_doctor.parsers._torch_guards import split_entry
from recompile_doctor.parsers.ptxla import _Graph
from recompile_doctor.rules import RULES
from tests.conftest import timeline_of

JAX_LOG = next((Path(__file__).resolve().parent.parent / "fixtures" / "jax").glob("*/run.log"))


def _frozen_dataclasses() -> Iterator[type]:
    for name in COMPILED:
        module = importlib.import_module(name)
        for value in vars(module).values():
            if (
                isinstance(value, type)
                and value.__module__ == name
                and dataclasses.is_dataclass(value)
                and value.__dataclass_params__.frozen  # type: ignore[attr-defined]
            ):
                yield value


def test_every_frozen_dataclass_of_a_compiled_module_makes_itself_again() -> None:
    found = list(_frozen_dataclasses())
    assert _Graph in found and len(found) >= 9
    assert [c.__qualname__ for c in found if "__reduce__" not in vars(c)] == []


def _objects() -> list[Any]:
    tl = timeline_of(JAX_LOG)
    found = verdicts(tl, Options())
    assert tl.processes and len(found) > 0, "the JAX fixture has processes and recompilations"
    return [
        next(iter(RULES.values())),
        split_entry("0/1: L['n'] == 2"),
        poplar.Message("compile-end", "m", "0a1b", {"path": "/x/0a1b.poplar_exec"}),
        poplar.Malformed("compile-end", "Compilation of <module> took <s> s"),
        _Graph("user mark_step", "abc", 2, 1, None, (("step", "train.py", 9),)),
        tl,
        tl.processes[0],
        found[0],
    ]


COPIES: dict[str, Callable[[Any], Any]] = {
    "copy": copy.copy,
    "deepcopy": copy.deepcopy,
    "pickle": lambda o: pickle.loads(pickle.dumps(o)),
}


@pytest.mark.parametrize("how", sorted(COPIES))
def test_frozen_objects_are_copied_and_pickled_whole(how: str) -> None:
    for obj in _objects():
        got = COPIES[how](obj)
        assert type(got) is type(obj) and got == obj, type(obj).__qualname__
        field = dataclasses.fields(obj)[0].name
        with pytest.raises((dataclasses.FrozenInstanceError, AttributeError)):
            setattr(got, field, getattr(got, field))


def test_a_poplar_spec_is_copied_whole() -> None:
    # (a spec holds its pattern and builders: copied, not pickled, as the pure build does)
    spec = poplar._SPECS[0]
    assert copy.copy(spec) == spec and copy.deepcopy(spec).kind == spec.kind
