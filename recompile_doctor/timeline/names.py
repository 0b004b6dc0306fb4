"""Module names: which compilations belong to one function."""

from __future__ import annotations

from recompile_doctor.parsers.dumps import function_name


def function_key(module: str) -> str:
    """The function a module compiles, without the ids TensorFlow adds per trace.

    ``a_inference_train_function_806__XlaMustCompile_true_...__.626`` and
    ``a_inference_train_function_1240__...__.911`` are the same ``tf.function`` traced twice.
    """
    return function_name(module)


def elided_match(pattern: str, module: str) -> bool:
    """``Compiling module a_inference_..._0...02_001_000__executor_type____.626`` elides the
    middle of long names with ``...``."""
    if pattern == module:
        return True
    if "..." not in pattern:
        return False
    head, _, tail = pattern.partition("...")
    return module.startswith(head) and module.endswith(tail)
