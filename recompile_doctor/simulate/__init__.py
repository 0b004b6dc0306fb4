"""The simulated Poplar backend: Graphcore's TensorFlow-on-IPU stack as it compiles, caches,
loads and logs, without an IPU.

``run_scenario(name_or_path, out, ...)`` writes ``out/run.log`` (the process's merged
stdout+stderr), ``out/dumps/`` (XLA ``before_optimizations`` dumps) and ``out/cache/`` (the
executable cache) and returns a :class:`SimulationResult`; ``scenarios()`` lists the built-in
scenarios.  Scenario scripts use :mod:`recompile_doctor.simulate.api`.
"""

from __future__ import annotations

from recompile_doctor.simulate.runner import SimulationResult, run_scenario, scenarios
from recompile_doctor.simulate.scenarios import ScenarioInfo

__all__ = ["ScenarioInfo", "SimulationResult", "run_scenario", "scenarios"]
