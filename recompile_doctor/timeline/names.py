"""Module names: which compilations belong to one function."""

from __future__ import annotations

from recompile_doctor.parsers._names import function_name, inference_function


def function_key(module: str) -> str:
    """The function a module compiles (see :func:`~recompile_doctor.parsers._names.
    function_name`): compilations with the same key are compilations of one function.  A
    TensorFlow module's (``a_inference_<fn>_<n>__...``, a new one per compilation) is read
    without the memo, which it would only fill (the memos skipped here and in the table's
    ``_function_key``: 51 M of the 1,853 M instructions of the grouping by cause of 33,000
    TensorFlow recompilations)."""
    fn = inference_function(module)
    return fn if fn is not None else function_name(module)


def graph_element(hash_: str | None, module: str) -> tuple[bool, str]:
    """What a compilation's graph is told apart by, for a count of distinct graphs: (True,
    its graph hash) when the hash is known, else (False, its module's name); a hash spelt
    ``module:<name>`` is that module's."""
    if hash_ and not hash_.startswith("module:"):
        return True, hash_
    return False, hash_[7:] if hash_ else module


def elided_match(pattern: str, module: str) -> bool:
    """``Compiling module a_inference_..._0...02_001_000__executor_type____.626`` elides the
    middle of long names with ``...``."""
    if pattern == module:
        return True
    if "..." not in pattern:
        return False
    head, _, tail = pattern.partition("...")
    return module.startswith(head) and module.endswith(tail)
