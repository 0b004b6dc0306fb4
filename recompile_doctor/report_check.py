"""Validation of a saved JSON report before it is trusted (``report saved.json``).

A saved report is input like any other: it may be hand-edited, truncated, produced by another
version or made up.  :func:`check_report_json` checks its structure and its values -- finite
non-negative durations, known severities and rule ids, integers where integers belong -- and
raises a :class:`~recompile_doctor.errors.RecompileDoctorError` naming the first bad field
(``findings[2].severity: unknown severity 'fatal'``).  Fields it does not know are allowed (a
newer report may carry more); fields it knows must be right.

Hand-written on purpose: ``jsonschema`` is only a test dependency.  The JSON Schema in
``schemas/report.schema.json`` says the same for the structure; this also checks what a schema
cannot say (``Infinity``/``NaN``, which Python's JSON reader accepts).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from recompile_doctor.errors import RecompileDoctorError

SCHEMA_ID = "recompile-doctor/report/1"
#: the largest integer the HTML page's JavaScript holds exactly
MAX_INT = 2**53 - 1
#: the longest duration believed (31,000 years); more is a corrupt file
MAX_SECONDS = 1e12
SEVERITIES = ("info", "warning", "error")
CACHE_STATES = ("hit", "miss", "disabled", "unknown")

Check = Callable[[Any, str], None]


class _Bad(Exception):
    def __init__(self, where: str, what: str) -> None:
        super().__init__(f"field {where}: {what}")


def _kind(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "a boolean"
    if isinstance(v, int):
        return "an integer"
    if isinstance(v, float):
        return "a number"
    if isinstance(v, str):
        return "a string"
    if isinstance(v, list):
        return "a list"
    if isinstance(v, dict):
        return "an object"
    return type(v).__name__


def _int(minimum: int = 0) -> Check:
    def check(v: Any, where: str) -> None:
        if isinstance(v, bool) or not isinstance(v, int):
            raise _Bad(where, f"expected an integer, not {_kind(v)}")
        if v < minimum:
            raise _Bad(where, f"must be {minimum} or more, not {v}")
        if v > MAX_INT:
            raise _Bad(where, f"{v} is too large")

    return check


def _number(minimum: float | None = 0.0, maximum: float = MAX_SECONDS) -> Check:
    def check(v: Any, where: str) -> None:
        if isinstance(v, bool) or not isinstance(v, int | float):
            raise _Bad(where, f"expected a number, not {_kind(v)}")
        if isinstance(v, float) and not math.isfinite(v):
            raise _Bad(where, f"expected a finite number, not {v}")
        if minimum is not None and v < minimum:
            raise _Bad(where, f"must be {minimum:g} or more, not {v}")
        if abs(v) > maximum:
            raise _Bad(where, f"{v} is too large")

    return check


def _str(v: Any, where: str) -> None:
    if not isinstance(v, str):
        raise _Bad(where, f"expected a string, not {_kind(v)}")


def _bool(v: Any, where: str) -> None:
    if not isinstance(v, bool):
        raise _Bad(where, f"expected true or false, not {_kind(v)}")


def _nullable(check: Check) -> Check:
    def inner(v: Any, where: str) -> None:
        if v is not None:
            check(v, where)

    return inner


def _one_of(values: tuple[str, ...], what: str) -> Check:
    def check(v: Any, where: str) -> None:
        _str(v, where)
        if v not in values:
            raise _Bad(where, f"unknown {what} {v!r} (known: {', '.join(values)})")

    return check


def _rule_id(v: Any, where: str) -> None:
    from recompile_doctor.rules import RULES

    _str(v, where)
    if v not in RULES:
        raise _Bad(where, f"unknown rule id {v!r}")


def _list_of(check: Check) -> Check:
    def inner(v: Any, where: str) -> None:
        if not isinstance(v, list):
            raise _Bad(where, f"expected a list, not {_kind(v)}")
        for i, x in enumerate(v):
            check(x, f"{where}[{i}]")

    return inner


def _object(required: dict[str, Check], optional: dict[str, Check] | None = None) -> Check:
    opt = optional or {}

    def check(v: Any, where: str) -> None:
        if not isinstance(v, dict):
            raise _Bad(where or "(top level)", f"expected an object, not {_kind(v)}")
        for key, c in required.items():
            if key not in v:
                raise _Bad(f"{where}.{key}" if where else key, "missing")
            c(v[key], f"{where}.{key}" if where else key)
        for key, c in opt.items():
            if key in v:
                c(v[key], f"{where}.{key}" if where else key)

    return check


def _any_object(v: Any, where: str) -> None:
    if not isinstance(v, dict):
        raise _Bad(where, f"expected an object, not {_kind(v)}")


_SECONDS = _number()
_OPT_STR = _nullable(_str)
_COUNT = _int(0)
_LINE = _int(1)

_EVIDENCE = _object(
    {"source": _str, "line": _LINE, "text": _str},
    {"context": _object({}, {"before": _list_of(_str), "after": _list_of(_str)})},
)
_SIDE = _object({}, {"instruction": _OPT_STR, "text": _OPT_STR, "path": _OPT_STR})
_DIFF = _object({"kind": _str}, {"module": _str, "a": _SIDE, "b": _SIDE, "op_name": _OPT_STR,
                                 "detail": _str})  # fmt: skip

_REPORT = _object(
    {
        "schema": _one_of((SCHEMA_ID,), "report schema"),
        "inputs": _list_of(
            _object({"path": _str, "format": _str, "lines": _COUNT, "bytes": _COUNT})
        ),
        "parse": _object({"recognized": _COUNT, "unrecognized": _COUNT, "malformed": _COUNT}),
        "summary": _object(
            {
                "compilations": _COUNT,
                "cache_hits": _COUNT,
                "cache_misses": _COUNT,
                "loads": _COUNT,
                "distinct_graphs": _COUNT,
                "recompilations_after_warmup": _COUNT,
                "compile_seconds": _SECONDS,
                "load_seconds": _SECONDS,
                "wasted_seconds": _SECONDS,
            }
        ),
        "compilations": _list_of(
            _object(
                {
                    "id": _COUNT,
                    "module": _str,
                    "hash": _OPT_STR,
                    "source": _str,
                    "line": _LINE,
                    "t": _nullable(_number(minimum=None)),
                    "duration_s": _nullable(_SECONDS),
                    "cache": _one_of(CACHE_STATES, "cache state"),
                    "warmup": _bool,
                    "cause": _nullable(_rule_id),
                },
                {
                    "end_line": _nullable(_LINE),
                    "cache_file": _OPT_STR,
                    "ordinal": _nullable(_COUNT),
                    "text": _str,
                },
            )
        ),
        "events": _list_of(
            _object(
                {
                    "kind": _str,
                    "source": _str,
                    "line": _LINE,
                    "t": _nullable(_number(minimum=None)),
                    "module": _OPT_STR,
                    "hash": _OPT_STR,
                    "detail": _any_object,
                },
                {"text": _str},
            )
        ),
        "findings": _list_of(
            _object(
                {
                    "rule": _rule_id,
                    "severity": _one_of(SEVERITIES, "severity"),
                    "consideration": _nullable(_COUNT),
                    "title": _str,
                    "detail": _str,
                    "advice": _str,
                    "modules": _list_of(_str),
                    "count": _COUNT,
                    "wasted_seconds": _SECONDS,
                    "evidence": _list_of(_EVIDENCE),
                },
                {"diff": _list_of(_DIFF)},
            )
        ),
    },
    {"tool_version": _str},
)


def _all_numbers_finite(data: Any) -> None:
    """Every number anywhere (``detail`` objects too) is finite and of sane size.  Iterative:
    no depth of nesting can exhaust the stack."""
    stack: list[tuple[Any, str]] = [(data, "")]
    while stack:
        v, where = stack.pop()
        if isinstance(v, dict):
            stack.extend((x, f"{where}.{k}" if where else str(k)) for k, x in v.items())
        elif isinstance(v, list):
            stack.extend((x, f"{where}[{i}]") for i, x in enumerate(v))
        elif isinstance(v, float) and not math.isfinite(v):
            raise _Bad(where, f"expected a finite number, not {v}")
        elif isinstance(v, int) and not isinstance(v, bool) and abs(v) > MAX_INT:
            raise _Bad(where, "integer too large")


def check_report_json(data: Any, path: str) -> None:
    """Raise a :class:`RecompileDoctorError` naming the first bad field of the saved report
    ``data`` (read from ``path``); return when it is a report this version can render."""
    try:
        _REPORT(data, "")
        _all_numbers_finite(data)
    except _Bad as e:
        raise RecompileDoctorError(str(e), path=path) from None
