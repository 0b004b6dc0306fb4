"""A deterministic cost model: compile and load durations, RSS, step times.

Every figure grows with the size of the graph (its parameter and constant elements plus its
instruction count) and is jittered by a generator seeded from the run's seed, so the same seed
gives the same numbers.  The figures are in the range Graphcore documents: tens of seconds to
compile an MNIST-sized model, ~0.6 s to load a large executable onto the device.
"""

from __future__ import annotations

import random
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class CompileCost:
    """What one simulated compilation costs: time, graph construction, memory."""

    total_ms: float
    graph_construction_ms: float
    rss_mb: float


class CostModel:
    """Seeded generator of durations (milliseconds) and memory (MB)."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed * 1_000_003 + 17)

    def _jitter(self, spread: float = 0.08) -> float:
        return 1.0 + self.rng.uniform(-spread, spread)

    def compile(self, elements: int, instructions: int) -> CompileCost:
        total = (9000.0 + elements * 0.004 + instructions * 120.0) * self._jitter()
        graph = total * 0.18 * self._jitter(0.05)
        rss = (120.0 + elements * 4e-5 + instructions * 0.8) * self._jitter()
        return CompileCost(total, graph, rss)

    def load_ms(self, elements: int) -> float:
        """Loading an executable onto the device: slow (>= 500 ms) for big models only."""
        return (90.0 + elements / 4000.0) * self._jitter(0.05)

    def load_rss_mb(self, elements: int) -> float:
        return (0.25 + elements * 3e-7) * self._jitter()

    def deserialize_ms(self, elements: int) -> float:
        return (300.0 + elements / 20000.0) * self._jitter()

    def step_ms(self, elements: int, batch: int) -> float:
        return (0.6 + elements * batch * 1e-9) * self._jitter(0.02)

    def pick(self, lo: int, hi: int) -> int:
        return self.rng.randint(lo, hi)

    def loss(self, step: int) -> float:
        return 2.3 / (1.0 + step / 300.0) * self._jitter(0.03)
