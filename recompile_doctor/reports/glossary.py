"""The words the HTML pages explain, in the order a reader meets them, for every framework."""

from __future__ import annotations

from collections.abc import Iterable

GLOSSARY: tuple[tuple[str, str], ...] = (
    (
        "Compilation",
        "Turning a traced function (an XLA module or a torch.compile graph) into an "
        "executable for the device. It takes from milliseconds on a CPU to minutes on an IPU.",
    ),
    (
        "Recompilation",
        "Compiling a function again, because its graph, an argument's shape or type, or a "
        "value it depends on changed. After warm-up every recompilation is time lost, and "
        "the report names its cause.",
    ),
    (
        "Warm-up",
        "The first compilations of each function (and everything before the first executed "
        "step). They are expected; hatched bars in the timeline are after warm-up.",
    ),
    (
        "Cache hit / miss",
        "A compilation cache (the persistent compilation cache of JAX, the FX-graph cache of "
        "torch.compile, the executable cache of Poplar) lets a later process load an "
        "executable instead of compiling it: a hit loads it, a miss compiles and saves it. "
        "With no cache configured every compilation is 'no cache'.",
    ),
    (
        "Executable load / switching",
        "Loading an executable onto the device (Poplar: 'Ending phase: Loading executable'). "
        "When several graphs take turns on one device, each turn loads again: executable "
        "switching.",
    ),
    (
        "HLO",
        "XLA's intermediate representation of a graph. With XLA_FLAGS=--xla_dump_to=DIR the "
        "HLO of each compilation is written to text files; comparing two of them shows what "
        "changed.",
    ),
    (
        "Hash",
        "A fingerprint of a module's HLO. The same hash means the same graph; a new hash for "
        "the same module means the graph changed.",
    ),
    (
        "Time wasted",
        "Compile and load time after warm-up that a fix would save.",
    ),
)

#: the terms the diff page uses (it has no timeline and no cache)
DIFF_GLOSSARY: tuple[tuple[str, str], ...] = tuple(
    (term, words) for term, words in GLOSSARY if term in ("Recompilation", "HLO", "Hash")
)


def glossary_for(frameworks: Iterable[str]) -> tuple[tuple[str, str], ...]:
    """The report page's terms: executable loads only where a framework loads executables
    explicitly (Poplar)."""
    fws = set(frameworks)
    if "poplar" in fws or not fws:
        return GLOSSARY
    return tuple(t for t in GLOSSARY if t[0] != "Executable load / switching")
