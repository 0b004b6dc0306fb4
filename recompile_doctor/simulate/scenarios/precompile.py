"""Pre-compile mode (the user guide's "Pre-compiling executables") and the device connection
types of Graphcore's connection_type example."""

from __future__ import annotations

from recompile_doctor.simulate.api import CustomOp, ExecutionFailed, Graph, Relu, Simulation
from recompile_doctor.simulate.scenarios._base import Scenario, ScenarioInfo, fit, mnist


def precompile(sim: Simulation) -> None:
    """First a process in PRE_COMPILE mode on a machine without IPUs (``precompile.log``),
    then the same script on hardware with the copied cache (``run.log``): it loads."""
    steps = sim.steps_or(100)
    train = Graph("train_function", mnist(), batch=32)
    for log_name, ctype in (("precompile.log", "PRE_COMPILE"), ("run.log", "ALWAYS")):
        with sim.process(log_name) as proc:
            proc.configure(connection_type=ctype, ipu_version="ipu2", remote_buffers=True)
            fit(proc, lambda _e: train, epochs=2, steps_per_epoch=max(1, steps // 2))


def precompile_unhashable(sim: Simulation) -> None:
    """PRE_COMPILE with a custom op whose metadata does not set ``is_hashable``: the
    executable cannot be serialised, nothing is saved."""
    steps = sim.steps_or(20)
    layers = (*mnist()[:-1], CustomOp("my_op"), *mnist()[-1:])
    with sim.process() as proc:
        proc.configure(connection_type="PRE_COMPILE", ipu_version="ipu2")
        fit(proc, lambda _e: Graph("train_function", layers), epochs=1, steps_per_epoch=steps)


def connection_type(sim: Simulation) -> None:
    """graphcore/examples ``connection_type.py``: a TF1 session runs one small compiled graph
    and prints the result; with NEVER it catches the compilation-only error."""
    with sim.process() as proc:
        proc.configure(connection_type="ALWAYS")
        graph = Graph("my_graph", (Relu("relu"),), batch=2, input_shape=(), train=False,
                      style="tf1", scope="")  # fmt: skip
        try:
            proc.run(graph)
        except ExecutionFailed as e:
            if "configured for compilation only" not in e.message:
                raise
            proc.print("Compiled")
            return
        zeros = proc.device is not None and proc.device.connection_type == "PRE_COMPILE"
        proc.print("[0. 0.]" if zeros else "[3. 8.]")


PRECOMPILE = Scenario(
    ScenarioInfo(
        "precompile",
        0,
        (),
        "Executables are pre-compiled on a machine without IPUs (precompile.log), then the "
        "run on hardware (run.log) loads every one of them from the cache.",
    ),
    precompile,
)
PRECOMPILE_UNHASHABLE = Scenario(
    ScenarioInfo(
        "precompile-unhashable",
        None,
        ("precompile-unsupported",),
        "Pre-compile mode with a custom op that does not set is_hashable: its executable "
        "cannot be saved for the hardware run.",
    ),
    precompile_unhashable,
)
CONNECTION_TYPE = Scenario(
    ScenarioInfo(
        "connection-type",
        None,
        (),
        "Graphcore's connection_type example at default verbosity; try --connection-type "
        "ALWAYS|ON_DEMAND|NEVER|PRE_COMPILE to see when the IPU is attached.",
    ),
    connection_type,
    cache=False,
    env={"TF_CPP_VMODULE": "", "POPLAR_LOG_LEVEL": ""},
)
