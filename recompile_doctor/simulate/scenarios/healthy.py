"""One process, one graph, a cache: what Graphcore recommends (Consideration 0 and 1)."""

from __future__ import annotations

from collections.abc import Callable

from recompile_doctor.simulate.api import Graph, Simulation
from recompile_doctor.simulate.scenarios._base import Scenario, ScenarioInfo, fit, mnist


def script(sim: Simulation, *, stack_fix: bool = False) -> None:
    steps = sim.steps_or(200)
    epochs = 2 if steps >= 2 else 1
    # two runs of the same script: the second loads from the cache the first one filled
    # (or, without a cache, compiles everything again)
    for log_name in ("run.log", "second-run.log"):
        with sim.process(log_name) as proc:
            proc.configure(connection_type="ALWAYS", ipu_version="ipu2")
            fit(
                proc,
                _same_graph(Graph("train_function", mnist(), batch=32)),
                epochs=epochs,
                steps_per_epoch=max(1, steps // epochs),
            )


def _same_graph(graph: Graph) -> Callable[[int], Graph]:
    """The graph of every epoch: always the same one."""
    return lambda _epoch: graph


SCENARIO = Scenario(
    ScenarioInfo(
        "healthy",
        0,
        (),
        "One process trains one graph with the executable cache on (run.log); a second run "
        "of the same script with the same cache (second-run.log) loads the executable "
        "instead of compiling. Nothing to fix.",
    ),
    script,
)

CACHE_DISABLED = Scenario(
    ScenarioInfo(
        "cache-disabled",
        0,
        ("cache-disabled",),
        "The same training run without --executable_cache_path: every process compiles every "
        "graph from scratch.",
    ),
    script,
    cache=False,
)
