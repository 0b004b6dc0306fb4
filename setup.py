"""The build's two optional steps.  Every build compiles the log scanner's byte work in C
(``recompile_doctor/parsers/_native.c``) where a C compiler is found; without one the package
does the same work in Python.  With ``RECOMPILE_DOCTOR_MYPYC=1`` the modules listed in
``recompile_doctor/compiled_modules.py`` are also compiled with mypyc, from the same source
(as black and mypy build their wheels); without it the package is Python.  Everything else
is in ``pyproject.toml``.

    RECOMPILE_DOCTOR_MYPYC=1 pip wheel --no-build-isolation --no-deps -w dist .

(``make compiled`` does this with the project's venv, whose mypy is the compiler.)
``RECOMPILE_DOCTOR_MYPYC_OPT`` is the C compiler's optimization level, 0 to 3 (3 unless
set): ``make test`` builds the compiled package it tests at 0, which the C compiler makes in
a fifth of the time of 3 with the same behaviour (it is the code's speed that differs).
"""

from __future__ import annotations

import os
import runpy
import sys

from setuptools import Extension, setup

#: the commands that only write the package's metadata (pip asks for it before the build):
#: nothing to compile for them, and mypyc's analysis alone takes a quarter of a minute
METADATA_ONLY = ("dist_info", "egg_info")

command = sys.argv[1] if len(sys.argv) > 1 else ""
#: the log scanner's byte work in C, built in every build where a C compiler is found (the
#: package falls back to the same work in Python without it: ``parsers/_spans.py``)
NATIVE = Extension(
    "recompile_doctor.parsers._native",
    [
        "recompile_doctor/parsers/_native.c",
        "recompile_doctor/parsers/_native_codec.c",
        "recompile_doctor/parsers/_native_fields.c",
        "recompile_doctor/parsers/_native_json.c",
        "recompile_doctor/parsers/_native_marshal.c",
        "recompile_doctor/parsers/_native_pack.c",
        "recompile_doctor/parsers/_native_writer.c",
    ],
    depends=[
        "recompile_doctor/parsers/_native_codec.h",
        "recompile_doctor/parsers/_native_fields.h",
        "recompile_doctor/parsers/_native_json.h",
        "recompile_doctor/parsers/_native_marshal.h",
        "recompile_doctor/parsers/_native_pack.h",
        "recompile_doctor/parsers/_native_writer.h",
        "recompile_doctor/parsers/_native_slots.h",
    ],
    optional=True,
)
ext_modules = [NATIVE]
if os.environ.get("RECOMPILE_DOCTOR_MYPYC") == "1" and command not in METADATA_ONLY:
    from mypyc.build import mypycify

    listed = runpy.run_path(os.path.join("recompile_doctor", "compiled_modules.py"))
    opt_level = os.environ.get("RECOMPILE_DOCTOR_MYPYC_OPT", "3")
    if opt_level not in ("0", "1", "2", "3"):
        sys.exit(f"setup.py: RECOMPILE_DOCTOR_MYPYC_OPT={opt_level!r}: expected 0, 1, 2 or 3")
    ext_modules += mypycify(
        [listed["source_path"](name) for name in listed["COMPILED"]], opt_level=opt_level
    )

setup(ext_modules=ext_modules)
