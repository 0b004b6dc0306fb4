"""Module names -> the user's function, the same for logs and dump folders.

XLA modules carry the framework's decoration: TensorFlow's ``a_inference_<fn>_<n>__...``
(``<n>`` changes on every retrace), JAX's ``jit_<fn>`` (``jit(<fn>)`` in its logs), the
``.<n>`` suffix of a module's unique name.  The function is what stays the same.
"""

from __future__ import annotations

from typing import Final

from recompile_doctor.parsers._lazy_re import lazy_re
from recompile_doctor.parsers._memo import memo

_INFERENCE_RE: Final = lazy_re(r"^a_inference_(.+?)_\d+__")
_INFERENCE_SHORT_RE: Final = lazy_re(r"^a_inference_(.+?)_\d+$")
_JIT_CALL_RE: Final = lazy_re(r"^(?:jit|pjit|pmap|xla_pmap)\((.+)\)$")
_JIT_MODULE_RE: Final = lazy_re(r"^(?:jit|pjit|pmap|xla_pmap)_(.+)$")
_UNIQUE_SUFFIX_RE: Final = lazy_re(r"\.\d+$")
#: TensorFlow's prefix of a module's name (:func:`inference_function`)
INFERENCE_PREFIX: Final = "a_inference_"


def _function_name(module: str) -> str:
    """The function a module compiles, without the decoration its framework adds.

    ``a_inference_train_function_806__XlaMustCompile_true_...__.626`` and
    ``a_inference_train_function_1240__...__.911`` are ``train_function`` traced twice;
    ``jit_train_step``, ``jit(train_step)`` and ``pjit(train_step)`` are ``train_step``.
    """
    got = inference_function(module)
    if got is not None:
        return got
    m = _JIT_CALL_RE.match(module)
    if m:
        return m.group(1)
    base = _UNIQUE_SUFFIX_RE.sub("", module)
    m = _JIT_MODULE_RE.match(base)
    if m:
        return m.group(1)
    return base


def inference_function(module: str) -> str | None:
    """What ``^a_inference_(.+?)_\\d+__`` captures of ``module``, else what
    ``^a_inference_(.+?)_\\d+$`` does, else None: the patterns of
    :func:`inference_function_by_patterns`, by str methods (a TensorFlow log names a new
    module per compilation, which no memo holds)."""
    if not module.startswith(INFERENCE_PREFIX):
        return None
    start = len(INFERENCE_PREFIX)
    # (``.`` stops at a line end: the name holds none)
    stop = module.find("\n", start)
    if stop < 0:
        stop = len(module)
    # the shortest name followed by ``_<digits>__``: at the first ``__`` that has digits
    # and an underscore before it (the underscore before the digits is the last one before
    # the ``__``: an earlier one would have it among the digits)
    q = module.find("__", start + 1)
    while q >= 0:
        j = module.rfind("_", start + 1, q)
        if j >= stop:
            break
        if j >= 0 and j + 1 < q and module[j + 1 : q].isdecimal():
            return module[start:j]
        q = module.find("__", q + 1)
    # the name followed by ``_<digits>`` at the end (``$``: or before a last line end)
    end = len(module) - 1 if module.endswith("\n") else len(module)
    j = module.rfind("_", start + 1, end)
    if 0 <= j < stop and j + 1 < end and module[j + 1 : end].isdecimal():
        return module[start:j]
    return None


def inference_function_by_patterns(module: str) -> str | None:
    """:func:`inference_function` by its patterns (the reference a test holds it to)."""
    m = _INFERENCE_RE.match(module) or _INFERENCE_SHORT_RE.match(module)
    return m.group(1) if m else None


#: :func:`_function_name`, memoized (a log names the same modules over and over)
function_name: Final = memo(_function_name)


def file_basename(path: str) -> str:
    """The file name of a source path as a framework prints it (either slash)."""
    return path.replace("\\", "/").rsplit("/", 1)[-1]
