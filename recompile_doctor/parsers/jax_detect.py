"""The JAX log format as format detection sees it: anchors, sniff and registry entry.  Its
decoder (:mod:`recompile_doctor.parsers.jax`) is imported only when an input of this format
is read, so that detecting another format does not load it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from recompile_doctor.parsers._format import Decoder, LogFormat

FRAMEWORK: Final = "jax"

#: literal strings: a line containing none of them holds no JAX message
ANCHORS: tuple[str, ...] = (
    "TRACING CACHE MISS",
    "Finished tracing",
    "Compiling ",
    "Finished jaxpr to MLIR",
    "Finished XLA compilation",
    "ersistent compilation cache",
    "PERSISTENT COMPILATION CACHE MISS",
    "Not writing persistent cache entry",
    "get_cache_key",
    "XLA flag in cache key",
    "Cache hit for key: ",
    "Cache miss for key: ",
    "get_executable_and_time",
    "get_compile_options: ",
    " seconds to compile (",
)

#: strings only JAX's lines contain (format detection)
_SNIFF_TELLS: tuple[str, ...] = (
    "TRACING CACHE MISS at ",
    "Finished tracing ",
    " with global shapes and types ",
    "Finished jaxpr to MLIR module conversion ",
    "Finished XLA compilation of ",
    "PERSISTENT COMPILATION CACHE MISS for ",
    "Persistent compilation cache hit for ",
    "to persistent compilation cache with key ",
    "persistent compilation cache at ",
    "get_cache_key hash ",
    "XLA flag in cache key: ",
    "jax._src.",
)


def sniff(lines: Sequence[str]) -> int:
    """How many of ``lines`` contain a string only JAX's lines contain."""
    return sum(1 for ln in lines if any(t in ln for t in _SNIFF_TELLS))


def _decoder(path: str) -> Decoder:
    """A new decoder for the input at ``path`` (imports the decoder's module)."""
    from recompile_doctor.parsers.jax import JaxDecoder

    return JaxDecoder(path)


JAX = LogFormat(
    name="jax",
    framework=FRAMEWORK,
    anchors=ANCHORS,
    sniff=sniff,
    decoder=_decoder,
    how_to_log=(
        "For JAX, log compilations and cache-miss explanations with JAX_LOG_COMPILES=1 "
        "JAX_EXPLAIN_CACHE_MISSES=1 (or jax.config.update('jax_log_compiles', True) and "
        "jax.config.update('jax_explain_cache_misses', True)) and run python train.py "
        "2> run.log; to see the persistent compilation cache and its key components also "
        "set JAX_DEBUG_LOG_MODULES=jax._src.compiler,jax._src.compilation_cache,"
        "jax._src.cache_key,jax._src.lru_cache and call logging.basicConfig(level="
        "logging.WARNING) in the script (or set JAX_LOGGING_LEVEL=DEBUG, which logs "
        "everything)."
    ),
)
