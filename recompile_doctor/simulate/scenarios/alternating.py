"""Training and evaluation alternate on one device (Consideration 1)."""

from __future__ import annotations

from recompile_doctor.simulate.api import Graph, Hyper, Simulation
from recompile_doctor.simulate.scenarios._base import Scenario, ScenarioInfo, mnist

STEPS_PER_EPOCH = 50


def script(sim: Simulation, *, lr_schedule: bool = False, partial_eval: bool = False) -> None:
    """``model.fit(..., validation_data=...)``: after every epoch the test_function runs on the
    same IPU, so the two executables are swapped onto the device again and again.

    ``lr_schedule``: the learning rate is a Python number that halves every epoch (baked in as
    a constant). ``partial_eval``: the validation set is batched without
    ``drop_remainder=True``, so its last batch has 8 samples."""
    steps = sim.steps_or(300)
    epochs = max(3, steps // STEPS_PER_EPOCH)
    per_epoch = max(1, steps // epochs)
    layers = mnist(units=1024, depth=2)
    with sim.process() as proc:
        proc.configure(connection_type="ALWAYS")
        test = Graph("test_function", layers, batch=32, train=False)
        for epoch in range(epochs):
            lr = Hyper(0.01 * 0.5**epoch, as_constant=True) if lr_schedule else Hyper(0.01)
            train = Graph("train_function", layers, batch=32, learning_rate=lr)
            proc.epoch_begin(epoch, epochs)
            loss = proc.run(train, per_epoch)
            proc.run(test, max(1, per_epoch // 5))
            if partial_eval:
                proc.run(Graph("test_function", layers, batch=8, train=False), 1)
            proc.epoch_end(per_epoch, loss)


SCENARIO = Scenario(
    ScenarioInfo(
        "alternating-graphs",
        1,
        ("executable-switching",),
        "Training and validation graphs alternate on one IPU every epoch: each switch loads "
        "the other executable onto the device again (~0.6 s each).",
    ),
    script,
)


def _kitchen(sim: Simulation) -> None:
    script(sim, lr_schedule=True, partial_eval=True)


KITCHEN_SINK = Scenario(
    ScenarioInfo(
        "kitchen-sink",
        None,
        ("batch-size-changed", "constant-changed", "executable-switching"),
        "Several problems at once: training and validation alternating on one IPU, a "
        "learning-rate schedule baked into the training graph as a constant, and a last "
        "validation batch smaller than the others (no drop_remainder=True).",
    ),
    _kitchen,
)
