"""The words the HTML pages explain, in the order a reader meets them."""

from __future__ import annotations

GLOSSARY: tuple[tuple[str, str], ...] = (
    (
        "Compilation",
        "Turning a graph (an XLA module, identified by its HLO hash) into an executable for "
        "the device. On the IPU this can take minutes; the log shows it as "
        "'Begin XLA compilation: <module> (Hash: 0x…)'.",
    ),
    (
        "Recompilation",
        "Compiling a module again. After warm-up every recompilation is time lost, and the "
        "report names its cause.",
    ),
    (
        "Warm-up",
        "The first compilations of each module (and everything before the first executed "
        "step). They are expected; hatched bars in the timeline are after warm-up.",
    ),
    (
        "Executable cache",
        "A directory (TF_POPLAR_FLAGS=--executable_cache_path=…) holding compiled executables "
        "as <hash>.poplar_exec files, so a later process can load instead of compiling.",
    ),
    (
        "Cache hit / miss",
        "A hit loads the executable from the cache ('Loaded <module> from …'); a miss compiles "
        "it and saves it ('Couldn't find … in executable cache'). With no cache configured, "
        "every compilation is 'no cache'.",
    ),
    (
        "Executable load / switching",
        "Loading an executable onto the device ('Ending phase: Loading executable (duration "
        "… ms)'). When several graphs take turns on one device, each turn loads again: "
        "executable switching.",
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
