"""``recompile-doctor demo``: simulate a run with several recompilation problems, analyze it
with its dumps, write the HTML report, print the findings and the report's path."""

from __future__ import annotations

from pathlib import Path

import click

from recompile_doctor.cli._common import common_options, write_output

DEMO_SCENARIO = "kitchen-sink"


def _fresh_folder(base: Path) -> Path:
    if not base.exists():
        return base
    n = 2
    while True:
        cand = base.with_name(f"{base.name}-{n}")
        if not cand.exists():
            return cand
        n += 1


@click.command("demo")
@click.option("--out", "out", type=click.Path(path_type=Path), default=None,
              help="Fresh folder to write into (default: ./rd-demo, or rd-demo-N if taken).")  # fmt: skip
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the simulation.")
@common_options
def command(out: Path | None, seed: int, no_color: bool) -> None:
    """Simulate a problematic IPU training run and diagnose it, offline, in a few seconds."""
    from recompile_doctor import api, reports
    from recompile_doctor.reports.durations import fmt_seconds
    from recompile_doctor.simulate import run_scenario

    folder = out if out is not None else _fresh_folder(Path("rd-demo"))
    result = run_scenario(DEMO_SCENARIO, folder, seed=seed, env={})
    dumps = [result.dumps_dir] if result.dumps_dir is not None else []
    report = api.analyze([result.log_path], dumps=dumps)
    target = folder / "report.html"
    write_output(reports.render(report, "html"), str(target))
    s = report.summary
    click.echo(
        f"Simulated '{DEMO_SCENARIO}' into {folder}: {s.compilations} compilations, "
        f"{s.recompilations_after_warmup} after warm-up, {s.loads} executable loads."
    )
    for f in [f for f in report.findings if f.severity != "info"][:5]:
        cost = f", {fmt_seconds(f.wasted_seconds)} wasted" if f.wasted_seconds else ""
        click.echo(f"  [{f.severity}] {f.rule}: {f.title} ({f.count}x{cost})")
    click.echo(f"Report: {target}")
