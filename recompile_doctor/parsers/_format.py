"""What a log format is: a name, a sniff over a file's first lines, the literal strings its
lines contain, and a decoder that turns lines into typed events.

A decoder is made per input (it may keep state: a multi-line block, a clock, the compilation
under way).  The driver (:func:`recompile_doctor.parsers.parse_log`) hands it only the lines
that contain one of the format's anchors, plus every line while the decoder says it is inside
a block (``continuing``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Final, Literal, NamedTuple, Protocol

from recompile_doctor.events import ProcessStarted, Span, TypedEvent

#: what became of a line handed to a decoder
LineStatus = Literal["recognized", "unrecognized", "malformed"]

#: which of the lines it does not decode a decoder needs to see (``Decoder.wants_skipped``)
SkipMode = Literal["all", "last", "none"]


class Decoded(NamedTuple):
    """A decoder's answer for one line: its events and status; ``problem`` says what is
    wrong with a malformed line.  (A named tuple: one is built per decoded line.)"""

    status: LineStatus
    events: tuple[TypedEvent, ...] = ()
    problem: str | None = None


class Counted(Protocol):
    """What a decoded line is counted in (the driver's ParseCounter, a worker's Counts)."""

    recognized: int
    unrecognized: int
    malformed: int


UNRECOGNIZED: Final = Decoded("unrecognized")
#: a recognized line without events (most of them: one answer for all, not one per line;
#: one with events: :func:`recompile_doctor.parsers._tuples.recognized`)
RECOGNIZED: Final = Decoded("recognized")


class Decoder(Protocol):
    """Turns the lines of one input into typed events.

    Several processes may read one input (:mod:`._parallel`), each with a copy of the
    decoder; where their states are equal (:mod:`._checkpoint`: every attribute), the later
    part's events are taken from the process that read it.  Optional class attributes widen
    that: ``UNORDERED_STATE``, the dictionaries and sets the decoder only looks up (never
    iterates, pops or hands on): a worker's entries need only be among the reader's;
    ``RESIDUAL_STATE``, the dictionaries it looks up by key (and may take entries out of)
    and iterates only in :meth:`finish`, in an order of their own: what the reader holds
    there that a worker never had is added to the last worker's decoder before its
    ``finish``; ``PARENT_SHARE``, the parent's share of the input with two processes (a
    format whose lines make few events: more).  A test holds every decoder to these rules.
    """

    #: True while inside a multi-line block: the driver then passes every line
    continuing: bool

    def decode(self, lineno: int, raw: str) -> Decoded:
        """A line that contains an anchor (or any line while ``continuing``)."""
        ...

    def skipped(self, lineno: int, raw: str) -> bool | None:
        """A line without an anchor that the driver did not decode (a decoder may take its
        time stamp); cheap.  True when the line told the decoder something (a time
        stamp) that a later line of the same kind would replace.

        Which of these lines the driver passes is up to an optional attribute
        ``wants_skipped`` (a :data:`SkipMode`, read again after each call): "all" of them,
        in order (the default, for a decoder without the attribute); "last": only the last
        one before each decoded line that tells the decoder something (the driver walks back
        from the decoded line, calling ``skipped`` until it returns True, never past a line
        it already passed); "none".

        In "last" mode a decoder with an attribute ``pending_last`` (initially None) lets
        the fast path put off that walk back: the driver then sets ``pending_last`` to a
        function that does it (calling ``skipped`` as above), and the decoder calls it at
        the start of its next ``decode`` when it needs the line, or sets ``pending_last`` to
        None when it does not.  The function stays valid until that ``decode`` returns.

        A decoder may also let the fast path fold lines it would fold anyway without their
        text: an attribute ``fold_tails`` (a tuple of bytes, read again for each line) and
        a method ``fold_line(line: bytes) -> bool``.  A candidate line whose bytes end with
        one of ``fold_tails`` goes to ``fold_line`` first; True: the line is done, counted
        recognized, and never decoded (nor passed to ``skipped``).

        A decoder whose blocks continue on lines of one start (a class attribute
        ``CONTINUED_BY``, bytes) may let the fast path pass them undecoded: while it is
        ``continuing`` and an attribute ``skips_continued`` is true, a line starting with
        those bytes is counted recognized without a call; ``decode`` must then answer such a
        line "recognized", with no events and no change to its state (as the line-by-line
        path still calls it).

        A decoder whose blocks run on lines of one prefix may let the fast path hand it such
        lines a run at a time: a class attribute ``COLLECT_STOP`` (bytes), an attribute
        ``collect_prefix`` (bytes, or None; read while ``continuing``) and a method
        ``collect(lineno: int, bodies: list[str])``.  While it is ``continuing`` and
        ``collect_prefix`` is not None, the lines from there on that start with those bytes,
        go on with anything but ``COLLECT_STOP`` and are not cut (``_line_text.MAX_LINE_BYTES``) are
        counted recognized and given to ``collect``: the number of the first, and each
        line's text after the prefix without its trailing CRs (``raw.rstrip("\r\n")`` of
        what ``decode`` is given, after the prefix; the prefix is ASCII).  ``decode`` must
        answer each such line "recognized" with no events, and ``collect`` leave the decoder
        as those ``decode`` calls would, one after the other."""
        ...

    def finish(self) -> Iterator[TypedEvent]:
        """Events still pending at the end of the input (an unterminated block)."""
        ...


@dataclass(frozen=True, slots=True)
class LogFormat:
    """One log format of the registry."""

    name: str
    framework: str
    #: literal strings: a line containing none of them holds no message of this format
    anchors: tuple[str, ...]
    #: how strongly the first lines of an input look like this format (0: not at all)
    sniff: Callable[[Sequence[str]], int]
    #: a new decoder for the input at ``path``
    decoder: Callable[[str], Decoder]
    #: what to set so that a run of this framework logs its compilations
    how_to_log: str


class ReadAlone(Exception):
    """Raised by a decoder in a worker reading one part of a log (:func:`in_a_part`), at a
    line that only a reading from the start decodes right (a run begun again in the same
    log, :func:`new_run`: the end of the run before gives what the reader before the part
    holds): the worker fails, and that reader reads the part itself (see
    :mod:`._parallel`)."""


#: whether this process is a worker reading one part of a log (set once, in the worker)
_IN_A_PART = [False]


def in_a_part() -> bool:
    """Whether this process is a worker reading one part of a log (:mod:`._parallel`)."""
    return _IN_A_PART[0]


def reading_a_part() -> None:
    """Mark this process (a forked worker, which reads nothing else) as reading a part."""
    _IN_A_PART[0] = True


def new_run(span: Span, framework: str) -> ProcessStarted:
    """The event of a run of the process begun again at ``span`` (runs appended to one log),
    called before the decoder ends the run before (its ``RUN_END``): in a worker reading one
    part of the log it raises :class:`ReadAlone` instead."""
    if in_a_part():
        raise ReadAlone(f"line {span.line}: a new run of the process")
    return ProcessStarted(span, None, framework, None)


def anchor_sniffer(anchors: Sequence[str]) -> Callable[[Sequence[str]], int]:
    """A sniff that counts the lines containing one of ``anchors``."""

    def sniff(lines: Sequence[str]) -> int:
        return sum(1 for ln in lines if any(a in ln for a in anchors))

    return sniff
