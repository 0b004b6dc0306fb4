"""Module names -> the user's function, the same for logs and dump folders.

XLA modules carry the framework's decoration: TensorFlow's ``a_inference_<fn>_<n>__...``
(``<n>`` changes on every retrace), JAX's ``jit_<fn>`` (``jit(<fn>)`` in its logs), the
``.<n>`` suffix of a module's unique name.  The function is what stays the same.
"""

from __future__ import annotations

from recompile_doctor.parsers._lazy_re import lazy_re
from recompile_doctor.parsers._memo import memo

_INFERENCE_RE = lazy_re(r"^a_inference_(.+?)_\d+__")
_INFERENCE_SHORT_RE = lazy_re(r"^a_inference_(.+?)_\d+$")
_JIT_CALL_RE = lazy_re(r"^(?:jit|pjit|pmap|xla_pmap)\((.+)\)$")
_JIT_MODULE_RE = lazy_re(r"^(?:jit|pjit|pmap|xla_pmap)_(.+)$")
_UNIQUE_SUFFIX_RE = lazy_re(r"\.\d+$")


def _function_name(module: str) -> str:
    """The function a module compiles, without the decoration its framework adds.

    ``a_inference_train_function_806__XlaMustCompile_true_...__.626`` and
    ``a_inference_train_function_1240__...__.911`` are ``train_function`` traced twice;
    ``jit_train_step``, ``jit(train_step)`` and ``pjit(train_step)`` are ``train_step``.
    """
    m = _INFERENCE_RE.match(module) or _INFERENCE_SHORT_RE.match(module)
    if m:
        return m.group(1)
    m = _JIT_CALL_RE.match(module)
    if m:
        return m.group(1)
    base = _UNIQUE_SUFFIX_RE.sub("", module)
    m = _JIT_MODULE_RE.match(base)
    if m:
        return m.group(1)
    return base


#: :func:`_function_name`, memoized (a log names the same modules over and over)
function_name = memo(_function_name)


def file_basename(path: str) -> str:
    """The file name of a source path as a framework prints it (either slash)."""
    return path.replace("\\", "/").rsplit("/", 1)[-1]
