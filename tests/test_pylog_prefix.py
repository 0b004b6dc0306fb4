"""A Python-logging prefix with no time stamp (``LEVEL:logger:[lineno:]``) is read with
string methods: what the pattern reads, on any line."""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

from recompile_doctor.parsers._pylog import (
    _LEVEL_FIRST_RE,
    _LEVELS,
    level_first_unstamped,
    split_pylog,
)
from tests.conftest import examples

_LEVEL = st.sampled_from(["DEBUG:", "INFO:", "WARNING:", "WARN:", "ERROR:", "CRITICAL:", "FATAL:"])
_PIECES = st.sampled_from(
    ["jax", "_src", ".", "-", "_", ":", " ", "12", "7", "\u0663", "\u00b2", "\u00e9", "x",
     "A", "\t", "2026-11-22 19:10:47,731", "msg", "\u2028", "\n"]
)  # fmt: skip
_LINES = st.tuples(_LEVEL, st.lists(_PIECES, max_size=8).map("".join)).map("".join)


def _by_pattern(line: str) -> tuple[str | None, str | None, str, float | None, str] | None:
    m = _LEVEL_FIRST_RE.match(line)
    if m is None:
        return None
    ts = m["ts"]
    if ts:
        return None  # (a stamped line: the pattern's to read)
    return _LEVELS[m["lvl"]], m["name"], line[m.end() :], None, "none"


@settings(max_examples=examples(1000))
@given(_LINES)
@example("WARNING:jax._src.dispatch:Finished tracing f for jit in 0.1 sec")
@example("DEBUG:jax._src.compiler:get_compile_options: num_replicas=1")
@example("WARNING:jax._src.interpreters.partial_eval:2167: msg")
@example("WARNING:jax:2167:msg")
@example("WARNING:jax:2167 msg")
@example("WARNING:jax:\u0663\u0663: msg")  # (Arabic-Indic digits are \d)
@example("WARNING:jax:\u00b2: msg")  # (a superscript two is a digit, not a \d)
@example("WARN:j\u00e9-x.y_z:m")
@example("INFO:_:m")
@example("INFO:a b:m")
@example("INFO::m")
@example("INFO:9a:m")
@example("INFO:a")
@example("WARNING:2026-11-22 19:10:47,731:jax:1: x")
def test_an_unstamped_prefix_read_by_str_methods_is_the_pattern_s(line: str) -> None:
    got = level_first_unstamped(line)
    want = _by_pattern(line)
    if got is None:
        # (left to the pattern only where the line is stamped or the pattern reads nothing)
        assert want is None
        return
    assert (got.level, got.logger, got.message, got.seconds, got.clock) == want
    # AND split_pylog gives what the fast reading gave
    pl = split_pylog(line)
    assert (pl.level, pl.logger, pl.message, pl.seconds, pl.clock) == want


def test_the_common_unstamped_prefixes_take_the_fast_reading() -> None:
    for line, logger, message in [
        ("WARNING:jax._src.dispatch:Finished XLA compilation", "jax._src.dispatch", "Finished XLA compilation"),
        ("DEBUG:jax._src.lru_cache:Cache hit for key: 'k'", "jax._src.lru_cache", "Cache hit for key: 'k'"),
        ("WARNING:jax._src.interpreters.partial_eval:2167: x", "jax._src.interpreters.partial_eval", "x"),
    ]:  # fmt: skip
        got = level_first_unstamped(line)
        assert got is not None and (got.logger, got.message) == (logger, message)
