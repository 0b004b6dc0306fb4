"""A report's events written as JSON text by a second process while the analyses run.

The JSON report of a long log lists every event: writing 100,000 of them takes a second or
more, and it used to come after the analyses, on one CPU.  The events are final once the
timeline is built, so ``analyze(..., events_json=True)`` (the command line's ``--format
json``) forks a process that writes their text, with the same function the report uses
(:func:`~recompile_doctor.model.list_items_json`), into an anonymous temporary file while
this process runs the analyses; :meth:`Report.iter_json` then copies that text.  Where the
process cannot be forked or fails, the report writes its events itself: the JSON is the
same either way (a test compares them byte for byte).  The events read back from their spool
are written a chunk at a time from the chunk's bytes where the C module is built
(:func:`utf8_texts`).  The same process writes the timeline's compilations too, but for
their causes, which the analyses give meanwhile: it writes each one's text in the two parts
around its cause, and the report puts the causes in as it copies that text
(:meth:`EventsText.compilation_pieces`).

Not for fewer than :data:`MIN_EVENTS` events, every :data:`CHARS_PER_EVENT` characters of
their lines counted as one more (a fork costs more than it saves), not where the
log reader would not fork either (:func:`~recompile_doctor.parsers._parallel.usable`:
``RECOMPILE_DOCTOR_WORKERS=1``, macOS, a process running threads, a fleet pool's worker), and
not when the text could take more than half the free room of the temporary folder (which may
be memory: ``tmpfs``); a writer that runs out of room fails, and the report writes its events.
"""

from __future__ import annotations

import os
import signal  # (here: a report closed at the interpreter's exit can no longer import it)
from collections.abc import Iterable, Iterator, Sequence
from typing import IO, TYPE_CHECKING, Any

from recompile_doctor.read_at import FileSpan, read_at

if TYPE_CHECKING:
    from recompile_doctor.model import Compilation, Event
    from recompile_doctor.timeline.table import CompilationTable

#: fewer events than this are written by the report itself (counting their lines' text as
#: more events: :data:`CHARS_PER_EVENT`)
MIN_EVENTS = 20_000
#: characters of the events' lines whose JSON text costs about as much to write as an
#: event's own fields (a string's escaping, about 60 instructions a character, against
#: 11,000 an event): 13,000 PyTorch/XLA events of 470-character lines are worth a process
CHARS_PER_EVENT = 200
#: bytes of JSON text an event takes beside its line, for the room the file needs (a JAX
#: event: about 500 in all)
EVENT_BYTES = 1024
#: bytes of JSON text a compilation takes, for the room the file needs (a JAX compilation:
#: about 650, its line's text in them; a TensorFlow one about 800)
COMPILATION_BYTES = 2048
#: bytes of text written (and read back) at once
PIECE = 1 << 20
#: how the text is stored: any ``str`` goes through unchanged, lone surrogates included
_ENCODING, _ERRORS = "utf-8", "surrogatepass"


def text_chars(events: Sequence[Event]) -> int:
    """The characters of the events' lines: as the report's events counted them when they
    were taken (:class:`~recompile_doctor.timeline.spool.ReportEvents`), else summed."""
    counted = getattr(events, "text_chars", None)
    if isinstance(counted, int):
        return counted
    return sum(len(e.text) for e in events)


class EventsText:
    """The JSON text of ``events`` (the items of the report's ``events`` list), written by a
    forked process, and that of the timeline's compilations but for their causes, which the
    analyses give meanwhile (:meth:`compilation_pieces` puts them in).  :meth:`pieces` waits
    for it; :meth:`close` stops it and removes the files.  A copy for another process
    (pickled) carries no text: ``None``."""

    def __init__(
        self,
        events: Sequence[Event],
        pid: int,
        f: IO[bytes],
        compilations: CompilationTable | None = None,
        fc: tuple[IO[bytes], IO[bytes]] | None = None,
    ) -> None:
        self.events = events
        #: the compilations whose text (each cause left out) the second file holds
        self.compilations = compilations
        self._pid: int | None = pid
        self._f: IO[bytes] | None = f
        self._fc = fc  # (the compilations' text, and where their causes go in it)
        self._ok: bool | None = None  # the writer's outcome, once known

    @classmethod
    def start(
        cls, events: Sequence[Event], compilations: CompilationTable | None = None
    ) -> EventsText | None:
        """Start writing the text of ``events`` (and of ``compilations``, the timeline's)
        in a forked process (None: not worth it, not safe here, or the fork failed)."""
        text = text_chars(events)
        if len(events) + text // CHARS_PER_EVENT < MIN_EVENTS:
            return None
        from recompile_doctor.parsers._parallel import usable

        if usable() < 2:
            return None
        import shutil
        import tempfile

        try:  # (the temporary folder may be memory: the text takes at most half its room)
            free = shutil.disk_usage(tempfile.gettempdir()).free
        except OSError:
            return None
        room = len(events) * EVENT_BYTES + 2 * text  # (a line's escapes, UTF-8)
        if compilations is not None:
            room += len(compilations) * COMPILATION_BYTES
        if room > free // 2:
            return None
        f = tempfile.TemporaryFile(prefix="recompile-doctor-json-")  # noqa: SIM115 - close()
        fc = None
        if compilations is not None:
            fc = (
                tempfile.TemporaryFile(prefix="recompile-doctor-json-"),  # noqa: SIM115
                tempfile.TemporaryFile(prefix="recompile-doctor-json-"),  # noqa: SIM115
            )
        parent = os.getpid()
        try:
            pid = os.fork()
        except OSError:
            f.close()
            for g in fc or ():
                g.close()
            return None
        if pid == 0:  # the writer: never returns
            code = 1
            try:
                signal.signal(signal.SIGINT, signal.SIG_DFL)
                if compilations is not None and fc is not None:
                    _write_compilations(compilations, *fc, parent)
                _write(events, f, parent)
                code = 0
            finally:
                os._exit(code)
        return cls(events, pid, f, compilations, fc)

    def done(self) -> bool:
        """Wait for the writer; True when it wrote the whole text."""
        if self._ok is None:
            pid = self._pid
            self._pid = None
            if pid is None:
                self._ok = False
            else:
                try:
                    _, status = os.waitpid(pid, 0)
                except ChildProcessError:  # reaped by someone else: its outcome is unknown
                    status = -1
                self._ok = status == 0 and self._f is not None
        return self._ok

    def compilation_pieces(
        self, compilations: Sequence[Compilation], raw: bool
    ) -> Iterator[str] | Iterator[bytes] | None:
        """The text of the report's compilations, ``compilations`` (the writer's table with
        the causes the analyses gave: ``CompilationTable.with_causes``), once the writer is
        done: its text with each cause put in its place (``raw``: as UTF-8 bytes).  None:
        the writer failed, wrote none, or ``compilations`` is another table."""
        from recompile_doctor.timeline.table import CompilationTable

        fc = self._fc
        if fc is None or not isinstance(compilations, CompilationTable) or not self.done():
            return None
        causes = compilations.causes_over(self.compilations)
        if causes is None:
            return None
        from recompile_doctor.json_text import spliced

        pieces = spliced(*fc, causes, PIECE)
        return pieces if raw else _decoded(pieces)

    def pieces(self) -> Iterator[str] | None:
        """The text, once the writer is done (None: it failed or the file is closed; the
        report writes its events itself)."""
        if not self.done() or self._f is None:
            return None
        return self._read(self._f)

    def raw(self) -> Iterator[bytes] | None:
        """:meth:`pieces` as the writer wrote them: UTF-8 bytes, not decoded (a writer of
        the report's bytes copies them as they are)."""
        if not self.done() or self._f is None:
            return None
        return self._read_raw(self._f)

    def span(self) -> FileSpan | None:
        """:meth:`raw` as the span of the writer's file that holds it, for a writer that has
        the system copy it (``read_at.copy_span``); None as for :meth:`raw`."""
        if not self.done() or self._f is None:
            return None
        return FileSpan(self._f, 0, os.fstat(self._f.fileno()).st_size)

    @staticmethod
    def _read_raw(f: IO[bytes]) -> Iterator[bytes]:
        pos = 0
        # (read_at of a file closed meanwhile raises ValueError: never another file's bytes)
        while data := read_at(f, PIECE, pos):
            pos += len(data)
            yield data

    def _read(self, f: IO[bytes]) -> Iterator[str]:
        return _decoded(self._read_raw(f))

    def close(self) -> None:
        """Stop the writer if it still writes, and remove the file."""
        pid = self._pid
        if pid is not None:
            self._pid = None
            self._ok = False
            try:
                if os.waitpid(pid, os.WNOHANG)[0] == 0:  # still writing
                    os.kill(pid, signal.SIGKILL)
                    os.waitpid(pid, 0)
            except ChildProcessError:  # reaped by someone else (its pid may be another's)
                pass
        if self._f is not None:
            self._f.close()
            self._f = None
        for g in self._fc or ():
            g.close()
        self._fc = None

    def __del__(self) -> None:
        # a report dropped unclosed: the writer is reaped and its file goes with it
        if any(getattr(self, name, None) is not None for name in ("_f", "_fc", "_pid")):
            self.close()

    def __reduce__(self) -> tuple[object, tuple[()]]:
        return (_none, ())


def _none() -> None:
    return None


def _decoded(pieces: Iterable[bytes]) -> Iterator[str]:
    """UTF-8 pieces (a character's bytes may be split between two) as text."""
    import codecs

    decoder = codecs.getincrementaldecoder(_ENCODING)(_ERRORS)
    for data in pieces:
        yield decoder.decode(data)
    yield decoder.decode(b"", final=True)


def _write(events: Sequence[Event], f: IO[bytes], parent: int) -> None:
    """In the writer: the text of ``events`` to ``f``; stops if the parent is gone (no one
    would read it)."""
    for data in utf8_texts(events):
        if os.getppid() != parent:
            return
        f.write(data)
    f.flush()


def utf8_texts(events: Sequence[Event]) -> Iterator[bytes]:
    """The text of ``events`` (``model.events_json``'s, UTF-8 encoded, surrogates passed) in
    pieces of about :data:`PIECE` bytes or more: the report's events read back from their
    spool a chunk at a time where the chunk's bytes can be written as they are
    (``json_text.chunk_text``: a chunk of JAX events in less than half the instructions of
    reading them back into objects and writing those), the others one at a time."""
    from recompile_doctor.json_text import ITEM_HEADS, batched, chunk_text, event_text, native_text
    from recompile_doctor.model import EVENT_KEYS, events_json
    from recompile_doctor.timeline.spool import ReportEvents, SpooledChunk

    if not isinstance(events, ReportEvents) or native_text() is None:
        for text in batched(events_json(events), PIECE):
            yield text.encode(_ENCODING, _ERRORS)
        return
    texts: list[str] = []
    n = 0
    first = True
    for part in events.parts():
        rows: Iterable[tuple[Any, ...]]
        if isinstance(part, SpooledChunk):
            data = chunk_text(part.data, EVENT_KEYS, first)
            if data is not None:
                if texts:
                    yield "".join(texts).encode(_ENCODING, _ERRORS)
                    texts, n = [], 0
                yield data
                first = first and not data
                continue
            rows = part.rows()
        else:
            rows = (part,)
        for row in rows:
            text = ITEM_HEADS[0 if first else 1] + event_text(EVENT_KEYS, row, 2)
            first = False
            texts.append(text)
            n += len(text)
            if n >= PIECE:
                yield "".join(texts).encode(_ENCODING, _ERRORS)
                texts, n = [], 0
    if texts:
        yield "".join(texts).encode(_ENCODING, _ERRORS)


#: the compilations' cuts the writer holds before writing them
_CUTS_HELD = 1 << 14


def _write_compilations(
    table: CompilationTable, f: IO[bytes], cuts_f: IO[bytes], parent: int
) -> None:
    """In the writer: the text of ``table``'s compilations (``model.compilations_json``'s)
    to ``f`` but for their causes, which the analyses give meanwhile, and where each
    compilation's cause goes in that text to ``cuts_f`` (8 bytes each: written as they come,
    not held, as the text is)."""
    from recompile_doctor.json_text import apart_pieces
    from recompile_doctor.model import COMPILATION_KEYS

    at = COMPILATION_KEYS.index("cause")
    for text, cuts in apart_pieces(table.value_rows(), COMPILATION_KEYS, at, PIECE, _CUTS_HELD):
        if os.getppid() != parent:
            return
        f.write(text)
        cuts_f.write(cuts)
    f.flush()
    cuts_f.flush()
