"""``python -m recompile_doctor``."""

from recompile_doctor.cli.main import run

run()
