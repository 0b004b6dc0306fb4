"""What a scenario script uses: a :class:`Simulation` starts simulated Python processes; a
:class:`Process` configures the IPU, runs graphs and prints what the script itself prints.

A scenario reads like the training script it imitates::

    def run(sim: Simulation) -> None:
        with sim.process() as proc:
            proc.configure(connection_type="ALWAYS")
            train = Graph("train_function", (Dense("dense", 128, "relu"), Dense("dense_1", 10)))
            for epoch in range(3):
                proc.epoch_begin(epoch, 3)
                proc.run(train, executions=100)
                proc.epoch_end(100)
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Iterator, Mapping
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import TextIO

from recompile_doctor.simulate import stacklog as sl
from recompile_doctor.simulate.compiler import Compiler, Executable, device_hash
from recompile_doctor.simulate.costs import CostModel
from recompile_doctor.simulate.device import (
    COMPILATION_ONLY,
    PRECOMPILE_NO_CACHE,
    ConnectionType,
    Device,
    ExecutionFailed,
)
from recompile_doctor.simulate.flags import StackEnv, read_env
from recompile_doctor.simulate.graph import (
    Concat,
    Conv2D,
    CustomOp,
    Dense,
    Flatten,
    Graph,
    Hyper,
    Layer,
    OutsideCompilation,
    Relu,
    Softmax,
    Stack,
    WhileLoop,
)
from recompile_doctor.simulate.stacklog import STYLES, Clock, StackLog, Stream

__all__ = [
    "Concat",
    "Conv2D",
    "CustomOp",
    "Dense",
    "Device",
    "ExecutionFailed",
    "Flatten",
    "Graph",
    "Hyper",
    "Layer",
    "OutsideCompilation",
    "Process",
    "Relu",
    "Simulation",
    "Softmax",
    "Stack",
    "WhileLoop",
]


class Simulation:
    """One scenario run: the options, the output folder, and the processes started so far."""

    def __init__(
        self,
        out: Path,
        env: Mapping[str, str],
        *,
        seed: int = 0,
        steps: int | None = None,
        log_style: str = "sdk3",
        connection_type: ConnectionType | None = None,
    ) -> None:
        self.out = out
        self.env = dict(env)
        self.seed = seed
        self.steps = steps
        self.style = STYLES[log_style]
        self.connection_type = connection_type
        self.clock = Clock(seed)
        self.costs = CostModel(seed)
        self.rng = random.Random(seed)
        self.logs: list[Path] = []
        self.lines = 0
        self.error: str | None = None

    def steps_or(self, default: int) -> int:
        """The ``--steps`` the user asked for, else the scenario's default."""
        return self.steps if self.steps is not None else default

    @contextmanager
    def process(
        self, log_name: str = "run.log", env: Mapping[str, str] | None = None
    ) -> Iterator[Process]:
        """Start a simulated Python process whose merged stdout+stderr goes to ``log_name``
        (and each stream alone to ``<name>.stdout.log`` / ``<name>.stderr.log``).

        ``env`` replaces variables of the simulation's environment for this process only.
        """
        path = self.out / log_name
        merged = dict(self.env)
        merged.update(env or {})
        self.clock.advance_ms(self.rng.uniform(2000, 9000))
        stem = log_name.removesuffix(".log")
        with ExitStack() as files:
            fh, out, err = (
                files.enter_context(p.open("w", encoding="utf-8", newline="\n"))
                for p in (path, self.out / f"{stem}.stdout.log", self.out / f"{stem}.stderr.log")
            )
            split: dict[Stream, TextIO] = {"stdout": out, "stderr": err}
            proc = Process(self, fh, read_env(merged, sdk3=self.style.sdk3), merged, split)
            try:
                yield proc
            except ExecutionFailed as e:
                proc.die(e)
                self.error = f"{log_name}: {e.kind}: {e.message}"
            self.lines += proc.log.lines
        self.logs.append(path)


class Process:
    """A simulated Python process using TensorFlow on IPU."""

    def __init__(
        self,
        sim: Simulation,
        out: TextIO,
        env: StackEnv,
        raw_env: Mapping[str, str],
        split: dict[Stream, TextIO] | None = None,
    ) -> None:
        self.sim = sim
        self.env = env
        self.pid = sim.rng.randint(1000, 4_000_000)
        self.log = StackLog(out, sim.clock, env.log, sim.style, self.pid, split=split)
        self.compiler: Compiler | None = None
        self.device: Device | None = None
        self.attached = False
        self.loaded: int | None = None
        self.traced = False
        self.epoch_start_us = 0
        if raw_env.get("TF_POPLAR_FLAGS"):
            self.log.vlog(
                1, sl.FLAGS, 190, f"TF_POPLAR_FLAGS is set to '{raw_env['TF_POPLAR_FLAGS']}'"
            )
        self.log.tf(
            "I",
            sl.PLATFORM,
            43,
            f"Poplar version: {sim.style.poplar_version} Poplar package: {sim.style.poplar_package}",
        )

    # -- configuration ----------------------------------------------------------------
    def configure(self, device: Device | None = None, **kwargs: object) -> Device:
        """``IPUConfig.configure_ipu_system()``; keyword arguments are :class:`Device` fields."""
        dev = device or Device(**kwargs)  # type: ignore[arg-type]
        if self.sim.connection_type is not None:
            dev = dataclasses.replace(dev, connection_type=self.sim.connection_type)
        if self.env.poplar.use_on_demand and dev.connection_type == "ALWAYS":
            self.log.vlog(1, sl.EXECUTOR, 1288,
                          "Overriding device connection type to ON_DEMAND due to --use_on_demand flag")  # fmt: skip
            dev = dataclasses.replace(dev, connection_type="ON_DEMAND")
        if dev.connection_type == "PRE_COMPILE" and not self.env.cache_path:
            raise ExecutionFailed("FailedPreconditionError", PRECOMPILE_NO_CACHE)
        self.device = dev
        self.compiler = Compiler(
            self.log,
            self.env,
            self.sim.costs,
            self.sim.out,
            dev,
            device_hash(dev, self.env, self.sim.style),
            precompile=dev.connection_type == "PRE_COMPILE",
        )
        self.log.clock.advance_ms(self.sim.rng.uniform(800, 2500))
        if dev.connection_type == "ALWAYS":
            self._attach()
        return dev

    def _attach(self) -> None:
        assert self.device is not None
        self.attached = True
        if not self.env.poplar.use_ipu_model:
            ids = list(range(self.device.num_ipus))
            self.log.tf("I", sl.EXECUTOR, self.sim.style.attach_line,
                        self.sim.style.attach_text(self.device.ordinal, ids))  # fmt: skip

    # -- running ----------------------------------------------------------------------
    def compile(self, graph: Graph) -> Executable:
        """Trace and compile ``graph`` (what the first call of a tf.function does)."""
        if self.compiler is None:
            self.configure()
        assert self.compiler is not None
        if not self.traced and graph.style == "tf2":
            self.traced = True
            self.log.tf("I", sl.MLIR_PASS, 185,
                        "None of the MLIR Optimization Passes are enabled (registered 2)")  # fmt: skip
            self.log.tf("I", sl.MLIR_DUMP, 210,
                        "disabling MLIR crash reproducer, set env var "
                        "`MLIR_CRASH_REPRODUCER_DIRECTORY` to enable.")  # fmt: skip
        return self.compiler.get(graph)

    def run(self, graph: Graph, executions: int = 1, steps_per_execution: int = 1) -> float:
        """Run ``graph`` ``executions`` times; returns a fake loss (0.0 without a device)."""
        ex = self.compile(graph)
        dev = self.device
        assert dev is not None
        log = self.log
        if dev.connection_type == "NEVER":
            raise ExecutionFailed("InvalidArgumentError", COMPILATION_ONLY)
        if dev.connection_type == "PRE_COMPILE":
            for _ in range(executions):
                log.vlog(2, sl.EXECUTOR, 2113,
                         "No device attached for pre compilation of Poplar programs, output "
                         "buffer will be populated with zeros.")  # fmt: skip
                log.clock.advance_ms(0.2)
            return 0.0
        if not self.attached:
            self._attach()
        if self.loaded != ex.exec_hash:
            self.loaded = ex.exec_hash
            ms = self.sim.costs.load_ms(ex.elements)
            log.poplar("I", "Starting phase: Loading executable")
            log.clock.advance_ms(ms)
            rss = self.sim.costs.load_rss_mb(ex.elements)
            log.poplar("I", f"Ending phase: Loading executable (duration {int(ms)} ms; "
                            f"diff RSS: {sl.fmt_g(round(rss, 6))} MB)")  # fmt: skip
        step = self.sim.costs.step_ms(ex.elements, graph.batch) * steps_per_execution
        vlog_exec = log.vlog_on(sl.EXECUTOR, 1)
        vlog_run = log.vlog_on(sl.EXECUTABLE, 1)
        for _ in range(executions):
            if vlog_exec:
                log.vlog(1, sl.EXECUTOR, 2436,
                         f"Executing on Poplar stream ordinal {dev.ordinal} of type IPU")  # fmt: skip
            if vlog_run:
                log.vlog(1, sl.EXECUTABLE, 172, f"Execute {ex.module}")
            log.clock.advance_ms(step)
        return self.sim.costs.loss(executions)

    # -- what the script prints -------------------------------------------------------
    def print(self, text: str) -> None:
        """A line the script prints on stdout."""
        self.log.stdout(text)

    def epoch_begin(self, epoch: int, epochs: int) -> None:
        """Keras: ``Epoch 1/4`` on stdout."""
        self.epoch_start_us = self.log.clock.us
        self.log.stdout(f"Epoch {epoch + 1}/{epochs}")

    def epoch_end(self, steps: int, loss: float | None = None, metric: str = "loss") -> None:
        """Keras' end-of-epoch progress line (the only one it prints to a file)."""
        secs = (self.log.clock.us - self.epoch_start_us) / 1e6
        per = secs * 1000 / max(1, steps)
        value = loss if loss is not None else self.sim.costs.loss(steps)
        self.log.stdout(
            f"{steps}/{steps} [==============================] - {int(secs)}s "
            f"{max(1, int(per))}ms/step - {metric}: {value:.4f}"
        )

    def die(self, err: ExecutionFailed) -> None:
        """An uncaught TensorFlow error ends the script with Python's traceback on stderr."""
        self.log.write("Traceback (most recent call last):")
        self.log.write('  File "train.py", line 62, in <module>')
        self.log.write(f"tensorflow.python.framework.errors_impl.{err.kind}: {err.message}")
