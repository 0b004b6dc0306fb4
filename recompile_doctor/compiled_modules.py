"""The modules a compiled build compiles with mypyc, and which of them are compiled here.

The package is pure Python.  A build made with ``RECOMPILE_DOCTOR_MYPYC=1`` (``make
compiled``; see ``setup.py``) also compiles the modules of :data:`COMPILED` with mypyc, from
the same source, as black and mypy ship theirs: the log reader's fast path, the log
decoders (Poplar's and the frameworks'), the event codec, the timeline builder and its
events' spool, the HLO parser, the differ's fingerprints and causes, and the JSON writer
of the reports.  Python then imports the compiled module where there is one, and the
source otherwise, so the pure modules are the fallback, with the same results (the suite
runs against both: ``make test``).  ``--version`` and the benchmarks say which build a run
gets.

A module of its own, outside :mod:`recompile_doctor.parsers`, importing nothing of the
package: ``setup.py`` reads :data:`COMPILED` from it before the package is built, and
``--version`` asks it without importing the parsers.
"""

from __future__ import annotations

import os
from importlib.machinery import EXTENSION_SUFFIXES

#: the modules compiled in a compiled build: the work done for every line a log reader
#: decodes (a line's text, ``parsers._line_text``, its named tuples, ``parsers._tuples``,
#: and the rule of a changed argument type, ``rules``, the bounded tables of pieces,
#: ``bounded``, and the rounding of times, ``microseconds``, among it), for every event the
#: timeline takes (and spools: ``timeline.spool``, 1.6 % of a JAX log's instructions; the
#: name of a compilation's key it asks of each: ``key_name``; a name as a table that tells
#: names apart holds it, and its digest: ``name_digest``, interpreted a frame a call),
#: for every instruction of an HLO diff, and for every value of a JSON report
#: (``json_text``: an event's text 15-25 % faster), and for every recompilation and reason
#: the analyses read after the reading (the verdicts, ``analyses.recompile``, the evidence
#: lines they keep, ``analyses.capped``, and the
#: timeline's tables and packed sequences they read: ``timeline.table``, ``.types``,
#: ``.packed``, ``.column``, ``.distinct``, ``.compile_ids``, and the modules a finding
#: gathers and the function keys it asks of each, ``.name_set`` and ``.names``; the serial
#: work after a log read by two processes).  The rest of the
#: package runs once per report, or per compilation;
#: ``differ.align`` stops mypyc with an internal error.  Not among them, as
#: ``tests/test_compiled_build.py`` checks: modules with generators that hold a resource
#: (an open file, the workers), for a compiled generator that is dropped before its end
#: does not run its ``finally`` blocks (``parsers.logs``, ``parsers._reader``); nor a
#: subclass of ``pickle.Pickler`` (compiled, it crashed the pickler: ``timeline.pickled``).
#: A compiled class deriving from ``Sequence`` or ``Mapping`` gets instance checks of its
#: own by :func:`own_abc_checks`.
#:
#: The framework decoders are compiled with their looked-up tables (``UNORDERED_STATE``,
#: ``RESIDUAL_STATE``) typed as abstract mappings and sets: a worker records what those
#: tables miss through dictionary and set subclasses
#: (:mod:`recompile_doctor.parsers._checkpoint`), and compiled code reads a table typed
#: ``dict`` or ``set`` without calling a subclass's methods (``tests/test_compiled_build.py``
#: checks the types).
#:
#: Their module-level constants (patterns, tables, memos, numbers) are declared ``Final``:
#: compiled code reads a ``Final`` name as a constant, without looking it up in the module's
#: dictionary (2 % of a framework log's instructions).  A name a test patches must not be
#: ``Final``, or the compiled run would test the value it replaced (checked there too).
COMPILED = (
    "recompile_doctor.parsers._scan",
    "recompile_doctor.parsers._line_text",
    "recompile_doctor.parsers._tuples",
    "recompile_doctor.parsers._prefixes",
    "recompile_doctor.parsers._event_codec",
    "recompile_doctor.parsers._memo",
    "recompile_doctor.parsers._decoding",
    "recompile_doctor.bounded",
    "recompile_doctor.microseconds",
    "recompile_doctor.key_name",
    "recompile_doctor.parsers._pylog",
    "recompile_doctor.parsers._torch_guards",
    "recompile_doctor.parsers.poplar",
    "recompile_doctor.parsers.poplar_decoder",
    "recompile_doctor.parsers.jax",
    "recompile_doctor.parsers.tensorflow",
    "recompile_doctor.parsers.torch",
    "recompile_doctor.parsers.torch_trace",
    "recompile_doctor.parsers.ptxla",
    "recompile_doctor.timeline.builder",
    "recompile_doctor.timeline.spool",
    "recompile_doctor.parsers.hlo._lexer",
    "recompile_doctor.parsers.hlo._instruction",
    "recompile_doctor.parsers.hlo._fastpath",
    "recompile_doctor.parsers.hlo._parser",
    "recompile_doctor.differ.fingerprint",
    "recompile_doctor.differ.causes",
    "recompile_doctor.json_text",
    "recompile_doctor.rules",
    "recompile_doctor.analyses.recompile",
    "recompile_doctor.analyses.capped",
    "recompile_doctor.timeline.types",
    "recompile_doctor.timeline.table",
    "recompile_doctor.timeline.packed",
    "recompile_doctor.timeline.column",
    "recompile_doctor.timeline.reason_facts",
    "recompile_doctor.parsers._digest_table",
    "recompile_doctor.timeline.distinct",
    "recompile_doctor.timeline.compile_ids",
    "recompile_doctor.name_digest",
    "recompile_doctor.parsers._names",
    "recompile_doctor.timeline.name_set",
    "recompile_doctor.timeline.names",
)

#: the package's folder (the folder above it holds ``recompile_doctor/...``)
_HERE = os.path.dirname(os.path.abspath(__file__))


def source_path(module: str) -> str:
    """The path of ``module``'s source, relative to the folder that holds the package."""
    return module.replace(".", "/") + ".py"


def runs_compiled(module_file: str) -> bool:
    """Whether the module whose ``__file__`` is ``module_file`` runs compiled (its file is an
    extension module, not its source or bytecode): a module that reads a line one way when
    compiled and another when interpreted asks this of its own ``__file__``."""
    return not module_file.endswith((".py", ".pyc"))


def compiled() -> tuple[str, ...]:
    """The modules of :data:`COMPILED` that this installation imports compiled (an
    extension module beside the source wins over it)."""
    return tuple(name for name in COMPILED if _extension_built(name))


def _extension_built(module: str) -> bool:
    """Whether ``module`` (of the package) has an extension module beside its source."""
    base = os.path.join(os.path.dirname(_HERE), *module.split("."))
    return any(os.path.exists(base + suffix) for suffix in EXTENSION_SUFFIXES)


#: set to "0" to have the log scanner do its byte work, and slotted objects be made, in
#: Python where the C module (``parsers/_native.c``, built wherever a C compiler is found) is
#: built
NATIVE_ENV = "RECOMPILE_DOCTOR_NATIVE"
#: the C module of the log scanner's byte work (see ``parsers/_spans.py``)
NATIVE_MODULE = "recompile_doctor.parsers._native"


def native_built() -> bool:
    """True when this installation has the scanner's C module."""
    return _extension_built(NATIVE_MODULE)


def _native_part() -> str:
    if os.environ.get(NATIVE_ENV) == "0":
        return f"the scanner's byte work in Python ({NATIVE_ENV}=0)"
    if not native_built():
        return "the scanner's byte work in Python (no C compiler when it was installed)"
    return "the scanner's byte work in C"


def describe() -> str:
    """One line: which build this is."""
    done = compiled()
    if not done:
        return (
            f"pure Python, {_native_part()} (a build compiled with mypyc reads big logs "
            "faster: `make compiled`)"
        )
    return f"compiled with mypyc ({len(done)} of {len(COMPILED)} modules), {_native_part()}"


def own_abc_checks(*classes: type) -> None:
    """Give each of ``classes`` (deriving from an abstract base class such as ``Sequence``
    or ``Mapping``) the instance checks of its own, where it has none.

    A compiled module's class is built without its metaclass's ``__new__``, so it has no
    ``_abc_impl`` of its own and ``isinstance`` consults its base's: ``isinstance((), C)``
    was True for any tuple (a registered ``Sequence``), and a check that met an instance of
    one such class could answer True for another.  Interpreted, every class has its own
    already, and nothing is done.  Each compiled module calls this on its classes, after
    them; ``tests/test_compiled_build.py`` checks that every such class has its own.
    """
    import abc

    for cls in classes:
        if "_abc_impl" not in vars(cls):
            abc._abc_init(cls)  # type: ignore[attr-defined]
