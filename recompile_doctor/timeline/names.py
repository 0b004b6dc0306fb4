"""Module names: which compilations belong to one function."""

from __future__ import annotations

import re

_INFERENCE_RE = re.compile(r"^(a_inference_.+?)_\d+__")
_UNIQUE_SUFFIX_RE = re.compile(r"\.\d+$")


def function_key(module: str) -> str:
    """The function a module compiles, without the ids TensorFlow adds per trace.

    ``a_inference_train_function_806__XlaMustCompile_true_...__.626`` and
    ``a_inference_train_function_1240__...__.911`` are the same ``tf.function`` traced twice.
    """
    m = _INFERENCE_RE.match(module)
    if m:
        return m.group(1)
    return _UNIQUE_SUFFIX_RE.sub("", module)


def elided_match(pattern: str, module: str) -> bool:
    """``Compiling module a_inference_..._0...02_001_000__executor_type____.626`` elides the
    middle of long names with ``...``."""
    if pattern == module:
        return True
    if "..." not in pattern:
        return False
    head, _, tail = pattern.partition("...")
    return module.startswith(head) and module.endswith(tail)
