"""The build's one optional step: with ``RECOMPILE_DOCTOR_MYPYC=1`` the modules listed in
``recompile_doctor/compiled_modules.py`` are compiled with mypyc, from the same source (as
black and mypy build their wheels); without it the package is pure Python.  Everything else
is in ``pyproject.toml``.

    RECOMPILE_DOCTOR_MYPYC=1 pip wheel --no-build-isolation --no-deps -w dist .

(``make compiled`` does this with the project's venv, whose mypy is the compiler.)
"""

from __future__ import annotations

import os
import runpy

from setuptools import setup

ext_modules = []
if os.environ.get("RECOMPILE_DOCTOR_MYPYC") == "1":
    from mypyc.build import mypycify

    listed = runpy.run_path(os.path.join("recompile_doctor", "compiled_modules.py"))
    ext_modules = mypycify(
        [listed["source_path"](name) for name in listed["COMPILED"]], opt_level="3"
    )

setup(ext_modules=ext_modules)
