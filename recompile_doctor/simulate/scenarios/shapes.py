"""Shapes that change: the last partial batch (Consideration 2), tf.concat accumulation vs
the tf.stack fix (Consideration 4)."""

from __future__ import annotations

from recompile_doctor.simulate.api import Concat, Graph, Simulation, Stack
from recompile_doctor.simulate.scenarios._base import Scenario, ScenarioInfo, mnist


def partial_batch(sim: Simulation) -> None:
    """``dataset.batch(32)`` without ``drop_remainder=True``: the epoch's last batch has 8
    samples, so the train function is compiled again for batch 8."""
    full_steps = sim.steps_or(31)
    with sim.process() as proc:
        proc.configure(connection_type="ALWAYS")
        proc.epoch_begin(0, 1)
        loss = proc.run(Graph("train_function", mnist(), batch=32), full_steps)
        proc.run(Graph("train_function", mnist(), batch=8), 1)
        proc.epoch_end(full_steps + 1, loss)


def _accumulating(sim: Simulation, stack: bool) -> None:
    steps = sim.steps_or(60)
    epochs = 3
    with sim.process() as proc:
        proc.configure(connection_type="ALWAYS")
        for epoch in range(epochs):
            collect = Stack("stack", slots=8) if stack else Concat("concat", 32 * (epoch + 1))
            graph = Graph("train_function", (*mnist(), collect), batch=32)
            proc.epoch_begin(epoch, epochs)
            loss = proc.run(graph, max(1, steps // epochs))
            proc.epoch_end(max(1, steps // epochs), loss)


def concat_growth(sim: Simulation) -> None:
    """Predictions gathered with ``tf.concat`` inside the tf.function: the accumulator grows
    every epoch, so every epoch has a new input shape and a new executable."""
    _accumulating(sim, stack=False)


def stack_fix(sim: Simulation) -> None:
    """The fix: a fixed-size buffer written with ``tf.stack``-style updates; compiled once."""
    _accumulating(sim, stack=True)


PARTIAL_BATCH = Scenario(
    ScenarioInfo(
        "partial-batch",
        2,
        ("batch-size-changed",),
        "The dataset is batched without drop_remainder=True: the last batch of the epoch is "
        "smaller and the training graph is compiled again for it.",
    ),
    partial_batch,
)
CONCAT_GROWTH = Scenario(
    ScenarioInfo(
        "concat-growth",
        4,
        ("growing-shape",),
        "tf.concat accumulates results inside the tf.function: a dimension grows every epoch "
        "and the graph is recompiled every epoch.",
    ),
    concat_growth,
)
STACK_FIX = Scenario(
    ScenarioInfo(
        "stack-fix",
        4,
        (),
        "The concat-growth script fixed with tf.stack into a fixed-size buffer: compiled once.",
    ),
    stack_fix,
)
