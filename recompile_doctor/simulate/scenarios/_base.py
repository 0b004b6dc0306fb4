"""What every built-in scenario shares: its description, and the Keras-like loop."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from recompile_doctor.simulate.api import Dense, Graph, Process, Simulation


@dataclass(frozen=True, slots=True)
class ScenarioInfo:
    """A scenario as ``recompile-doctor scenarios`` lists it.

    ``rules`` are exactly the warnings and errors ``analyze run.log --dumps dumps`` must raise
    (info findings may come on top).
    """

    name: str
    consideration: int | None
    rules: tuple[str, ...]
    description: str

    def to_json(self) -> dict[str, object]:
        return {
            "name": self.name,
            "consideration": self.consideration,
            "rules": list(self.rules),
            "description": self.description,
        }


@dataclass(frozen=True, slots=True)
class Scenario:
    """A built-in scenario: its listing, its script and its default environment."""

    info: ScenarioInfo
    script: Callable[[Simulation], None]
    cache: bool = True
    env: Mapping[str, str] = field(default_factory=dict)
    builtin: bool = True  # False for a user's scenario file


def mnist(units: int = 128, depth: int = 1) -> tuple[Dense, ...]:
    """The Keras MNIST model of Graphcore's examples: Dense(relu) x depth, Dense(softmax)."""
    hidden = tuple(Dense(f"dense{'_' + str(i) if i else ''}", units, "relu") for i in range(depth))
    return (*hidden, Dense(f"dense_{depth}", 10, "softmax"))


def fit(
    proc: Proc,
    graph_for_epoch: Callable[[int], Graph],
    *,
    epochs: int,
    steps_per_epoch: int,
    steps_per_execution: int = 1,
    after_epoch: Callable[[int], None] | None = None,
) -> None:
    """``model.fit``: per epoch, ``Epoch i/n``, the executions, the progress line."""
    for epoch in range(epochs):
        proc.epoch_begin(epoch, epochs)
        executions = max(1, steps_per_epoch // steps_per_execution)
        loss = proc.run(graph_for_epoch(epoch), executions, steps_per_execution)
        proc.epoch_end(steps_per_epoch, loss)
        if after_epoch is not None:
            after_epoch(epoch)


Proc = Process
