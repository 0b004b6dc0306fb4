"""``run_scenario``: resolve a scenario (built-in name or Python file), build the simulated
process environment, run it into a fresh output folder.

Environment precedence, lowest first: the defaults every scenario gets (the logging the
Graphcore tech note recommends, ``XLA_FLAGS=--xla_dump_to=dumps``, a cache in ``cache`` when the
scenario uses one), the scenario's own defaults, the ``env`` passed in (the CLI passes
``os.environ``; only the variables the real stack reads are taken), then the explicit options.
The simulated script runs in the output folder: relative paths are relative to it.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from recompile_doctor.errors import RecompileDoctorError
from recompile_doctor.simulate.api import Simulation
from recompile_doctor.simulate.device import connection_type as check_connection_type
from recompile_doctor.simulate.flags import parse_env_flags, read_env
from recompile_doctor.simulate.scenarios import BUILTIN, Scenario, ScenarioInfo
from recompile_doctor.simulate.stacklog import STYLES

DEFAULT_ENV: dict[str, str] = {
    "TF_CPP_VMODULE": "poplar_compiler=1,poplar_executable=1",
    "POPLAR_LOG_LEVEL": "INFO",
    "XLA_FLAGS": "--xla_dump_to=dumps",
}
_READ_PREFIXES = ("TF_", "XLA_FLAGS", "POPLAR_", "POPDIST_")


@dataclass(frozen=True, slots=True)
class SimulationResult:
    """Where a simulated run put its output, and what the analyzer must find in it."""

    scenario: str
    log_path: Path
    logs: tuple[Path, ...]
    dumps_dir: Path | None
    cache_dir: Path | None
    rules: tuple[str, ...]
    lines: int
    error: str | None = None


def scenarios() -> list[ScenarioInfo]:
    """The built-in scenarios, in listing order."""
    return [s.info for s in BUILTIN]


def find_scenario(name_or_path: str) -> Scenario:
    for s in BUILTIN:
        if s.info.name == name_or_path:
            return s
    p = Path(name_or_path)
    if p.suffix == ".py" or p.exists():
        return _load_file(p)
    names = ", ".join(s.info.name for s in BUILTIN)
    raise RecompileDoctorError(
        f"unknown scenario {name_or_path!r} (one of: {names}, or a .py file)"
    )


def _load_file(path: Path) -> Scenario:
    if not path.is_file():
        raise RecompileDoctorError("no such scenario file", path=str(path))
    spec = importlib.util.spec_from_file_location(f"rd_scenario_{path.stem}", path)
    if spec is None or spec.loader is None:
        raise RecompileDoctorError("cannot load as a Python file", path=str(path))
    mod = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(mod)
    except Exception as e:  # a user's script: report, do not crash
        raise RecompileDoctorError(
            f"scenario file failed: {type(e).__name__}: {e}", path=str(path)
        ) from e
    run = getattr(mod, "run", None)
    if not callable(run):
        raise RecompileDoctorError("a scenario file must define run(sim)", path=str(path))
    info = ScenarioInfo(
        name=path.stem,
        consideration=getattr(mod, "CONSIDERATION", None),
        rules=tuple(getattr(mod, "RULES", ())),
        description=str(getattr(mod, "DESCRIPTION", (mod.__doc__ or "").strip())),
    )
    return Scenario(info, run, cache=bool(getattr(mod, "CACHE", True)), builtin=False)


def build_env(
    scenario: Scenario,
    env: Mapping[str, str] | None,
    cache: Path | None,
    verbose_xla: bool,
) -> dict[str, str]:
    out = dict(DEFAULT_ENV)
    if scenario.cache:
        out["TF_POPLAR_FLAGS"] = "--executable_cache_path=cache"
    out.update(scenario.env)
    for k, v in (env or {}).items():
        if k.startswith(_READ_PREFIXES):
            out[k] = v
    if cache is not None:
        kept = [
            f"--{n}" if v is None else f"--{n}={v}"
            for n, v in parse_env_flags("TF_POPLAR_FLAGS", out.get("TF_POPLAR_FLAGS", ""))
            if n != "executable_cache_path"
        ]
        out["TF_POPLAR_FLAGS"] = " ".join([*kept, f"--executable_cache_path={cache}"])
    if verbose_xla:
        out["TF_POPLAR_VLOG_LEVEL"] = "1"
    return {k: v for k, v in out.items() if v != ""}


def run_scenario(
    name_or_path: str,
    out: Path,
    *,
    seed: int = 0,
    steps: int | None = None,
    cache: Path | None = None,
    connection_type: str | None = None,
    log_style: str = "sdk3",
    env: Mapping[str, str] | None = None,
    verbose_xla: bool = False,
) -> SimulationResult:
    """Simulate a scenario into the fresh folder ``out``; never reads ``os.environ`` itself."""
    scenario = find_scenario(name_or_path)
    if log_style not in STYLES:
        raise RecompileDoctorError(f"unknown log style {log_style!r} (sdk2.2 or sdk3)")
    if steps is not None and steps < 1:
        raise RecompileDoctorError(f"--steps must be at least 1, not {steps}")
    ctype = check_connection_type(connection_type) if connection_type else None
    if cache is not None:
        cache = cache.absolute()
    full_env = build_env(scenario, env, cache, verbose_xla)
    stack = read_env(full_env, sdk3=STYLES[log_style].sdk3)  # bad flags fail before any output
    out = Path(out)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise RecompileDoctorError("output folder exists and is not empty", path=str(out))
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise RecompileDoctorError(f"cannot create folder: {e.strerror or e}", path=str(out)) from e
    sim = Simulation(out, full_env, seed=seed, steps=steps, log_style=log_style,
                     connection_type=ctype)  # fmt: skip
    try:
        scenario.script(sim)
    except RecompileDoctorError:
        raise
    except Exception as e:
        if scenario.builtin:
            raise
        # a user's scenario file: name it and what went wrong, no traceback
        raise RecompileDoctorError(
            f"scenario failed: {type(e).__name__}: {e}", path=name_or_path
        ) from e
    dumps = _resolve(out, stack.xla.dump_to)
    cache_dir = _resolve(out, stack.cache_path)
    logs = tuple(sim.logs)
    main = out / "run.log" if (out / "run.log") in logs else (logs[-1] if logs else out / "run.log")
    return SimulationResult(
        scenario=scenario.info.name,
        log_path=main,
        logs=logs,
        dumps_dir=dumps if dumps is not None and dumps.is_dir() else None,
        cache_dir=cache_dir,
        rules=scenario.info.rules,
        lines=sim.lines,
        error=sim.error,
    )


def _resolve(out: Path, p: str) -> Path | None:
    if not p:
        return None
    path = Path(p)
    return path if path.is_absolute() else out / path
