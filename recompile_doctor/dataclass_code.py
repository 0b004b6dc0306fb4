"""The code of the methods ``dataclasses`` writes for the package's classes, kept between
runs as the interpreter keeps a module's bytecode.

``dataclasses`` writes each class's ``__init__``, ``__repr__``, ``__eq__``, ``__hash__`` and a
frozen class's ``__setattr__`` and ``__delattr__`` as source text and compiles it when the
class is made, on every run: about 200 compilations for the classes a command imports,
25-30 ms, a fifth of ``analyze``'s start-up on a small log (from Python 3.13 on, one text
for all of a class's methods: 50 bigger ones).  :func:`install` has it take the
compiled code of a text it compiled before from a file beside the package's bytecode
(``__pycache__/dataclass-code.<tag>.marshal``, or under ``sys.pycache_prefix``), by the
very text, so that a changed class only misses; the texts it had to compile are added to
the file when the process ends, unless ``sys.dont_write_bytecode`` (as a ``.pyc`` is).  A
file written by another interpreter (its bytecode's magic number, its optimization level)
or damaged is ignored; a file is replaced whole (written aside, then renamed), so processes
ending together never leave a partial one.  Only the package's own classes are kept: the
source text of any other module's dataclass is compiled as ever.
"""

from __future__ import annotations

import atexit
import builtins
import contextlib
import dataclasses
import marshal
import os
import sys
from importlib.util import MAGIC_NUMBER, cache_from_source
from types import CodeType
from typing import Any

#: the file's first bytes: this format, the interpreter's bytecode, its optimization level
_FORMAT = b"recompile-doctor dataclass code 1\n"
_PACKAGE = __name__.rpartition(".")[0]

#: source text -> its code, read from the file or compiled in this process
_codes: dict[str, CodeType] = {}
#: the texts this process compiled (added to the file at its end)
_compiled: dict[str, CodeType] = {}
#: the texts this process used, kept or compiled (all the file keeps once it is full)
_used: dict[str, CodeType] = {}
#: at most this many codes in the file (the package's classes have about 800 texts; the
#: texts of classes changed since they were kept are dropped when it fills up)
_MAX_CODES = 2000
_state: dict[str, str | None] = {"path": None}
_counts = {"compiled": 0}
#: what ``dataclasses`` called before (builtins' ``exec``, unless another tool put its own)
_before: list[Any] = [builtins.exec]


def _header() -> bytes:
    return _FORMAT + MAGIC_NUMBER + bytes([sys.flags.optimize])


def cache_path() -> str | None:
    """The file of the package's dataclass code (None where the interpreter keeps no
    bytecode cache)."""
    tag = sys.implementation.cache_tag
    if tag is None:
        return None
    pycache = os.path.dirname(cache_from_source(os.path.abspath(__file__)))
    return os.path.join(pycache, f"dataclass-code.{tag}.marshal")


def read_codes(path: str) -> dict[str, CodeType]:
    """The codes kept in ``path``; none when it is missing, of another interpreter, or
    damaged."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return {}
    head = _header()
    if not data.startswith(head):
        return {}
    try:
        got = marshal.loads(data[len(head) :])
    except (EOFError, ValueError, TypeError):
        return {}
    if not isinstance(got, dict):
        return {}
    return {k: v for k, v in got.items() if type(k) is str and type(v) is CodeType}


def write_codes(
    path: str, codes: dict[str, CodeType], used: dict[str, CodeType] | None = None
) -> None:
    """Add ``codes`` to those kept in ``path`` (written aside, then renamed over it); past
    :data:`_MAX_CODES`, keep only ``codes`` and the ``used`` ones."""
    merged = read_codes(path)
    merged.update(codes)
    if len(merged) > _MAX_CODES:
        merged = {**(used or {}), **codes}
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(tmp, "wb") as f:
            f.write(_header() + marshal.dumps(merged))
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(tmp)


def _exec(source: Any, globals: Any = None, locals: Any = None, /, **kwargs: Any) -> None:
    """``exec``, as ``dataclasses`` calls it: the text of one of the package's classes'
    methods compiled once, then taken from the kept codes."""
    if (
        type(source) is str
        and type(globals) is dict
        and not kwargs
        and str(globals.get("__name__", "")).startswith(_PACKAGE + ".")
    ):
        code = _codes.get(source)
        if code is None:
            code = _codes[source] = _compiled[source] = compile(source, "<string>", "exec")
            _counts["compiled"] += 1
        _used[source] = code
        builtins.exec(code, globals, locals)
        return
    _before[0](source, globals, locals, **kwargs)


def exec_kept(source: str, space: dict[str, Any]) -> None:
    """``exec(source, space)`` of a text the package writes itself, ``space["__name__"]``
    one of its modules: its code compiled once and kept as the dataclasses' methods are."""
    _exec(source, space)


def _save() -> None:
    path = _state["path"]
    if _compiled and path is not None and not sys.dont_write_bytecode:
        write_codes(path, _compiled, _used)
        _compiled.clear()


def install() -> None:
    """Have ``dataclasses`` compile the package's classes' methods through the kept codes
    (once per process; before the package makes its first dataclass)."""
    if getattr(dataclasses, "exec", None) is _exec:
        return
    _before[0] = getattr(dataclasses, "exec", builtins.exec)
    path = cache_path()
    _state["path"] = path
    if path is not None:
        _codes.update(read_codes(path))
    dataclasses.exec = _exec  # type: ignore[attr-defined]  # (else builtins' exec)
    atexit.register(_save)


def compiled_here() -> int:
    """How many of the package's method texts this process had to compile (none when the
    kept codes held them all)."""
    return _counts["compiled"]
