"""``recompile-doctor scenarios``: list the simulator's built-in scenarios."""

from __future__ import annotations

import json

import click

from recompile_doctor.cli._common import common_options


@click.command("scenarios")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text",
              show_default=True, help="Output format.")  # fmt: skip
@common_options
def command(fmt: str, no_color: bool) -> None:
    """List the built-in scenarios of `simulate`, with the findings each must produce."""
    from recompile_doctor.simulate import scenarios

    infos = scenarios()
    if fmt == "json":
        click.echo(json.dumps([i.to_json() for i in infos], indent=2))
        return
    width = max(len(i.name) for i in infos)
    for i in infos:
        rules = ", ".join(i.rules) or "no warning"
        cons = f"Consideration {i.consideration}" if i.consideration is not None else "-"
        click.echo(f"{i.name:<{width}}  {cons:<15}  {rules}")
        click.echo(f"{'':<{width}}  {i.description}")
