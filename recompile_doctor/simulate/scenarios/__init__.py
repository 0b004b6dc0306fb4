"""The built-in scenarios, one per mistake of Graphcore's recompilation tech note."""

from __future__ import annotations

from recompile_doctor.simulate.scenarios import alternating, constants, healthy, precompile, shapes
from recompile_doctor.simulate.scenarios._base import Scenario, ScenarioInfo

BUILTIN: tuple[Scenario, ...] = (
    healthy.SCENARIO,
    healthy.CACHE_DISABLED,
    alternating.SCENARIO,
    shapes.PARTIAL_BATCH,
    constants.FROZEN_WEIGHTS,
    shapes.CONCAT_GROWTH,
    shapes.STACK_FIX,
    constants.LR_CONSTANT,
    precompile.PRECOMPILE,
    precompile.PRECOMPILE_UNHASHABLE,
    precompile.CONNECTION_TYPE,
    alternating.KITCHEN_SINK,
)

__all__ = ["BUILTIN", "Scenario", "ScenarioInfo"]
