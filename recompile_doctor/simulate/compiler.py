"""The Poplar backend's compile path: hashes, the executable cache, XLA dumps, and the
lines ``CompileEngine`` prints on the way.

Hashes follow ``poplar_formats.md`` §7 in spirit: the HLO hash covers the module without names,
ids or metadata; the device hash covers the target, the IPU options (not the connection type),
the TensorFlow and Poplar versions and the hashed ``TF_POPLAR_FLAGS``; the executable hash —
the cache key and file name — is ``Hash64Combine(Hash64Combine(hlo, device), ordinal)``.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from recompile_doctor.simulate import stacklog as sl
from recompile_doctor.simulate.costs import CostModel
from recompile_doctor.simulate.device import Device
from recompile_doctor.simulate.flags import StackEnv
from recompile_doctor.simulate.graph import Graph, lower
from recompile_doctor.simulate.hlo_emit import (
    ModuleBuilder,
    canonical_text,
    element_count,
    instruction_count,
    render,
)
from recompile_doctor.simulate.stacklog import StackLog, fmt_g

MASK64 = (1 << 64) - 1
UNHASHABLE = (
    "Executable caching has been enabled, however the program being compiled contains custom "
    "user operations which cannot be safely serialized. If it is safe to pre-compile these "
    "custom user operations, please set the 'is_hashable' attribute to 'true' in the "
    "operations metadata function. Please see the documentation for further details."
)
# Passes of the backend's pipelines, for --xla_dump_hlo_pass_re dumps.
_PASSES = {
    "OptimizerPipeline": ("hlo-constant-folding", "algebraic-simplifier", "hlo-cse", "hlo-dce"),
    "PoplarPipeline": ("allocation-finder", "forward-allocation", "inplace-finder"),
}


def hash64_combine(a: int, b: int) -> int:
    """TensorFlow's ``Hash64Combine``."""
    return (a ^ ((b + 0x9E3779B97F4A7800 + ((a << 10) & MASK64) + (a >> 4)) & MASK64)) & MASK64


def str_hash(text: str) -> int:
    """A stable 64-bit string hash (stands in for libstdc++'s ``std::hash<std::string>``)."""
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "little")


def hlo_hash(module: ModuleBuilder) -> int:
    return str_hash(canonical_text(module))


def device_hash(device: Device, env: StackEnv, style: sl.Style) -> int:
    """``PoplarExecutor::poplar_device_hash_``: everything but the connection type."""
    values = device.target_values(env.poplar.use_ipu_model, env.poplar.ipu_model_tiles)
    values.append(str_hash(device.ipu_version))
    values.append(str_hash(f"ipu_options num_ipus={device.num_ipus}"))
    values.append(str_hash(f"tf_git_version {style.name}"))
    values.append(str_hash(style.poplar_package))
    values.append(str_hash(";".join(f"{k}={v}" for k, v in env.poplar.hashed)))
    if env.engine_options is not None:
        values.append(str_hash(env.engine_options))
    if env.target_options is not None:
        values.append(str_hash(env.target_options))
    values.append(1 if device.remote_buffers else 0)
    values.append(0)  # multi-replica distribution
    h = 42
    for v in values:
        h = hash64_combine(h, v & MASK64)
    return h


@dataclass(slots=True)
class Executable:
    """A compiled (or loaded) engine, as the in-process cache holds it."""

    module: str
    hlo_hash: int
    exec_hash: int
    elements: int
    instructions: int
    graph: Graph


@dataclass(slots=True)
class Compiler:
    """One process's compiler: its in-process cache and its XLA module-id counter."""

    log: StackLog
    env: StackEnv
    costs: CostModel
    cwd: Path
    device: Device
    device_hash: int
    precompile: bool = False
    in_process: dict[int, Executable] = field(default_factory=dict)
    tf_cache: dict[Graph, Executable] = field(default_factory=dict)
    module_id: int = 0
    compiled_any: bool = False
    dumped: list[Path] = field(default_factory=list)

    def resolve(self, p: str) -> Path:
        return Path(p) if os.path.isabs(p) else self.cwd / p

    def get(self, graph: Graph) -> Executable:
        """TensorFlow's compilation cache, then the backend's in-process cache, then
        ``CompileEngine``.  A graph already run in this process costs nothing."""
        known = self.tf_cache.get(graph)
        if known is not None:
            return known
        module = lower(graph)
        self.module_id += self.costs.pick(1, 4)  # every HloModule built in-process takes an id
        hh = hlo_hash(module)
        eh = hash64_combine(hash64_combine(hh, self.device_hash), self.device.ordinal)
        self._dump(module)
        hit = self.in_process.get(eh)
        if hit is not None:
            self.tf_cache[graph] = hit
            return hit
        ex = Executable(
            module.name, hh, eh, element_count(module), instruction_count(module), graph
        )
        self._compile_engine(ex)
        self.in_process[eh] = ex
        self.tf_cache[graph] = ex
        if not self.compiled_any:
            self.compiled_any = True
            self.log.tf(
                "I",
                sl.JIT_CACHE,
                self.log.style.compile_cache_line,
                "Compiled cluster using XLA!  This line is logged at most once for the "
                "lifetime of the process.",
            )
        return ex

    # --------------------------------------------------------------------------------
    def _compile_engine(self, ex: Executable) -> None:
        log, name = self.log, ex.module
        log.vlog(2, sl.EXEC_CACHE, 64, "Creating a new cache entry.")
        log.vlog(2, sl.EXEC_CACHE, 66,
                 f"Module {name} has not been compiled yet (Hash: 0x{ex.exec_hash:x}).")  # fmt: skip
        log.clock.advance_ms(3 + ex.instructions * 0.05)
        log.vlog(1, sl.COMPILER, 1487,
                 f"Begin XLA compilation: {name}  (Hash: 0x{ex.hlo_hash:x}) for ordinal  "
                 f"{self.device.ordinal}")  # fmt: skip
        cache_dir = self.env.cache_path
        use_cache = bool(cache_dir)
        if use_cache and ex.graph.has_custom_op:
            log.tf("I", sl.COMPILER, 1497, UNHASHABLE)
            use_cache = False
        if use_cache:
            base = cache_dir.rstrip("/") + "/" + f"{ex.exec_hash:x}"
            exec_file, lock = base + ".poplar_exec", base + ".compile_lock"
            self.resolve(cache_dir).mkdir(parents=True, exist_ok=True)
            log.vlog(1, sl.COMPILER, 143, f"Acquiring lock for {lock}")
            self.resolve(lock).touch()
            log.vlog(1, sl.COMPILER, 151, f"Acquired lock for {lock}")
            if self.resolve(exec_file).exists():
                log.vlog(1, sl.EXECUTABLE, 1243, f"Trying to deserialize cached file: {exec_file}")
                log.clock.advance_ms(self.costs.deserialize_ms(ex.elements))
                log.vlog(1, sl.COMPILER, 1515, f"Loaded {name} from {exec_file}")
                self._release(lock)
                return
            log.vlog(1, sl.COMPILER, 1519, f"Couldn't find {exec_file} in executable cache")
            self._really_compile(ex)
            self._save(ex, exec_file)
            self._release(lock)
            return
        self._really_compile(ex)

    def _release(self, lock: str) -> None:
        self.log.vlog(1, sl.COMPILER, 166, f"Releasing lock for {lock}")
        self.resolve(lock).unlink(missing_ok=True)

    def _save(self, ex: Executable, exec_file: str) -> None:
        path = self.resolve(exec_file)
        blob = f"POPLAR_EXEC\0{ex.module}\0{ex.hlo_hash:x}\0".encode()
        path.write_bytes(blob + bytes(range(256)) * (1 + ex.instructions // 8))
        t = self.log.clock.now().timestamp()
        os.utime(path, (t, t))
        if self.precompile:
            self.log.tf(
                "I",
                sl.COMPILER,
                1980,
                f"A pre-compiled Poplar program has been saved to {exec_file}",
            )

    def _really_compile(self, ex: Executable) -> None:
        log, name, clock = self.log, ex.module, self.log.clock
        cost = self.costs.compile(ex.elements, ex.instructions)
        v = 1 if log.vlog_on(sl.COMPILER, 1) else 0
        log.vlog(1, sl.COMPILER, 1525,
                 "Local replication factor 1, global replication factor 1, IPU-link domain "
                 "replication factor 1, partition replication factor 1")  # fmt: skip
        clock.advance_ms(cost.total_ms * 0.05)
        log.vlog(1, sl.COMPILER, 1748,
                 f"End XLA compilation: {name} (Hash: 0x{hash64_combine(ex.hlo_hash, 7):x})")  # fmt: skip
        log.vlog(1, sl.COMPILER, 1786, f"Compiling main computation {name}")
        log.vlog(1, sl.COMPILER, 1802, "Begin Poplar Pipeline.")
        clock.advance_ms(cost.total_ms * 0.05)
        log.vlog(1, sl.COMPILER, 1810, "End Poplar Pipeline.")
        log.vlog(1, sl.COMPILER, 1815, "Begin Poplar graph construction.")
        self._phase("graphConstruction", 0, cost.graph_construction_ms, cost.rss_mb * 0.3)
        log.vlog(1, sl.COMPILER, 1840, "End Poplar graph construction.")
        log.vlog(1, sl.COMPILER, 1872, f"Begin compiling Poplar engine {name}")
        rest = cost.total_ms * 0.9 - cost.graph_construction_ms
        phases = (("elimUnusedComputeSets", 0.02), ("smallSubGraphOptimisation", 0.08),
                  ("replicateConstants", 0.05), ("lowerControlFlow", 0.35),
                  ("compileCodelets", 0.5))  # fmt: skip
        done = 0.0
        # The engine's own phases nest inside one top-level phase (the cookbook excerpt shows
        # them at depth 2); its name is not in any public log: INFERRED.
        log.poplar("I", "Starting phase: engineCompilation")
        start_us = clock.us
        for i, (phase, share) in enumerate(phases):
            self._phase(phase, 1, rest * share, cost.rss_mb * share * 0.7, nested=(i == 1))
            done += share
            if v:
                log.vlog(1, sl.COMPILER, 1878, f"Poplar compilation {int(done * 100)}% complete")
        log.poplar("I", f"Ending phase: engineCompilation (duration {(clock.us - start_us) // 1000} "
                        f"ms; diff RSS: {fmt_g(round(cost.rss_mb * 0.5, 4))} MB; total RSS: "
                        f"{fmt_g(round(2400.0 + cost.rss_mb * 2, 2))} MB)")  # fmt: skip
        log.vlog(1, sl.COMPILER, 1890, "End compiling Poplar engine.")
        self._progress_bar(name, cost.total_ms)

    def _phase(self, name: str, depth: int, ms: float, rss: float, nested: bool = False) -> None:
        log = self.log
        log.poplar("I", f"Starting phase: {name}", depth)
        if nested:
            log.poplar("I", "Sub-graph optimisation begins")
            for sub, share in (("findRootNodeCandidates", 0.2), ("Create adjacencies", 0.6)):
                self._phase(sub, depth + 1, ms * share, rss * share)
            log.poplar("D", "Found 1 root node candidates")
            ms *= 0.2
        log.clock.advance_ms(ms)
        total = 2400.0 + rss * 4
        log.poplar(
            "I",
            f"Ending phase: {name} (duration {int(ms)} ms; diff RSS: {fmt_g(round(rss, 4))} MB; "
            f"total RSS: {fmt_g(round(total, 2))} MB)",
            depth,
        )

    def _progress_bar(self, name: str, total_ms: float) -> None:
        mode = self.env.poplar.show_progress_bar
        # "auto" shows nothing when stdout is not a terminal, and a log file never is.
        if mode != "true":
            return
        shown = name if len(name) <= 112 else name[:76] + "..." + name[-33:]
        secs = total_ms / 1000.0
        h, rem = divmod(int(secs), 3600)
        m, s = divmod(rem, 60)
        self.log.stdout(f"Compiling module {shown}:")
        self.log.stdout(
            f"[{'#' * 50}] 100% Compilation Finished "
            f"[Elapsed: {h:02d}:{m:02d}:{s:02d}.{int(secs * 10) % 10}]"
        )

    # --------------------------------------------------------------------------------
    def _dump(self, module: ModuleBuilder) -> None:
        xla = self.env.xla
        if not xla.dump_to:
            return
        out = self.resolve(xla.dump_to)
        out.mkdir(parents=True, exist_ok=True)
        text = render(module, large_constants=xla.dump_large_constants)
        stem = f"module_{self.module_id:04d}.{_sanitize(module.name)}"
        path = out / f"{stem}.before_optimizations.txt"
        path.write_text(text, encoding="utf-8")
        self.dumped.append(path)
        if xla.dump_hlo_pass_re:
            pattern = re.compile(xla.dump_hlo_pass_re)
            step = 0
            for pipeline, passes in _PASSES.items():
                names = ("pipeline-start", *passes, "pipeline-end")
                for before, after in zip(names[1:], names[:-1], strict=True):
                    if pattern.search(after) or pattern.search(before):
                        step += 1
                        p = out / f"{stem}.{step:04d}.{pipeline}.after_{after}.before_{before}.txt"
                        p.write_text(text, encoding="utf-8")


def _sanitize(name: str) -> str:
    return re.sub(r"[/\\\[\] ]", "_", name)
