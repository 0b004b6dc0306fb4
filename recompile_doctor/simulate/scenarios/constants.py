"""Values baked into the graph: frozen weights (Consideration 3), a learning-rate schedule
passed as a Python number (Consideration 5)."""

from __future__ import annotations

from recompile_doctor.simulate.api import Graph, Hyper, Simulation
from recompile_doctor.simulate.scenarios._base import Scenario, ScenarioInfo, fit, mnist


def frozen_weights(sim: Simulation) -> None:
    """Every epoch the script freezes the current weights into the graph
    (``convert_variables_to_constants``) and runs it: new constants, new executable."""
    steps = sim.steps_or(60)
    epochs = 3
    with sim.process() as proc:
        proc.configure(connection_type="ALWAYS")
        fit(
            proc,
            lambda e: Graph(
                "serving_function",
                mnist(64),
                batch=32,
                weights="frozen",
                weights_version=e,
                train=False,
            ),
            epochs=epochs,
            steps_per_epoch=max(1, steps // epochs),
        )


def lr_constant(sim: Simulation) -> None:
    """A learning-rate schedule computed in Python and passed as a number: the value is a
    constant of the graph, so each new rate is a new executable."""
    steps = sim.steps_or(60)
    epochs = 3
    with sim.process() as proc:
        proc.configure(connection_type="ALWAYS")
        fit(
            proc,
            lambda e: Graph(
                "train_function",
                mnist(),
                batch=32,
                learning_rate=Hyper(0.01 * 0.5**e, as_constant=True),
            ),
            epochs=epochs,
            steps_per_epoch=max(1, steps // epochs),
        )


FROZEN_WEIGHTS = Scenario(
    ScenarioInfo(
        "frozen-weights",
        3,
        ("frozen-weights",),
        "The graph is re-frozen with the current weights every epoch: the weights are "
        "constants, so every epoch compiles a new executable.",
    ),
    frozen_weights,
)
LR_CONSTANT = Scenario(
    ScenarioInfo(
        "lr-constant",
        5,
        ("constant-changed",),
        "A learning-rate schedule is baked into the training graph as a constant: every new "
        "rate compiles a new executable.",
    ),
    lr_constant,
)
