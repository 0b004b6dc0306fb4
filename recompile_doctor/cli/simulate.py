"""``recompile-doctor simulate SCENARIO --out DIR``: run the simulated Poplar backend."""

from __future__ import annotations

import os
from pathlib import Path

import click

from recompile_doctor.cli._common import common_options
from recompile_doctor.errors import RecompileDoctorError
from recompile_doctor.simulate import run_scenario
from recompile_doctor.simulate.device import CONNECTION_TYPES


@click.command("simulate")
@click.argument("scenario")
@click.option("--out", "out", required=True, type=click.Path(path_type=Path),
              help="Fresh folder for run.log, dumps/ and cache/.")  # fmt: skip
@click.option("--cache", type=click.Path(path_type=Path), default=None,
              help="Executable cache folder (overrides TF_POPLAR_FLAGS).")  # fmt: skip
@click.option("--connection-type", type=click.Choice(CONNECTION_TYPES, case_sensitive=False),
              default=None, help="Device connection type for every process.")  # fmt: skip
@click.option("--steps", type=int, default=None, help="Training steps (default: the scenario's).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the cost model.")
@click.option("--log-style", type=click.Choice(["sdk2.2", "sdk3"]), default="sdk3",
              show_default=True, help="Old (SDK <= 2.2) or new Poplar log prefixes.")  # fmt: skip
@click.option("--verbose-xla", is_flag=True, help="All VLOG(1) lines of the Poplar backend.")
@common_options
def command(
    scenario: str,
    out: Path,
    cache: Path | None,
    connection_type: str | None,
    steps: int | None,
    seed: int,
    log_style: str,
    verbose_xla: bool,
    no_color: bool,
) -> None:
    """Simulate SCENARIO (a built-in name, see `scenarios`, or a .py scenario file).

    Writes OUT/run.log (the process's stdout and stderr, merged), OUT/dumps/ (XLA dumps) and
    OUT/cache/ (the executable cache), honouring TF_POPLAR_FLAGS, XLA_FLAGS, POPLAR_LOG_LEVEL,
    TF_CPP_VMODULE, TF_POPLAR_VLOG_LEVEL and TF_CPP_MIN_LOG_LEVEL as the real stack does.
    Relative paths in them are relative to OUT.
    """
    result = run_scenario(
        scenario,
        out,
        seed=seed,
        steps=steps,
        cache=cache,
        connection_type=connection_type,
        log_style=log_style,
        env=os.environ,
        verbose_xla=verbose_xla,
    )
    for log in (result.log_path, *(x for x in result.logs if x != result.log_path)):
        click.echo(f"{log}: {_count_lines(log)} lines")
    if result.dumps_dir is not None:
        click.echo(f"{result.dumps_dir}: XLA dumps")
    if result.cache_dir is not None:
        click.echo(f"{result.cache_dir}: executable cache")
    expected = ", ".join(result.rules) or "none"
    click.echo(f"expected findings: {expected}")
    if result.error:
        raise RecompileDoctorError(f"the simulated script failed: {result.error}")


def _count_lines(path: Path) -> int:
    """Lines of a written log, counted in the file (what ``wc -l`` says)."""
    with path.open("rb") as f:
        return sum(chunk.count(b"\n") for chunk in iter(lambda: f.read(1 << 20), b""))
