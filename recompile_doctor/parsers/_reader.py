"""Streaming input: plain files, gzip (detected by magic bytes), UTF-16 and stdin.

Yields ``(line_number, text)`` with 1-based physical line numbers.  Memory does not grow with
the size of the input: lines are read one at a time and an absurdly long line is cut at
:data:`MAX_LINE_BYTES`.  Invalid UTF-8 is replaced (never an error), CRLF endings are removed,
a byte-order mark selects UTF-8 or UTF-16 (LE/BE).

Every input is read once.  An input that cannot be read twice (stdin, a named pipe, a
character device, ``/dev/fd/N``) is copied, while it is read, to a private anonymous
temporary file; :func:`read_lines_around` reads the copy.  Regular files are simply re-read.

A gzip stream that ends early (the log of a killed run) is not an error: the lines before the
break are yielded and a :class:`Truncation` note is recorded in :class:`ReadStats` (and in
every :func:`collect_notes` block) -- unless ``strict``, which raises.
"""

from __future__ import annotations

import codecs
import contextlib
import contextvars
import gzip
import io
import os
import stat
import sys
import zlib
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import IO, Any, BinaryIO, cast

from recompile_doctor.errors import RecompileDoctorError
from recompile_doctor.parsers._line_text import MAX_LINE_BYTES, line_text
from recompile_doctor.read_at import read_at

GZIP_MAGIC = b"\x1f\x8b"
STDIN_NAME = "-"
_SPOOL_CHUNK = 1 << 16

#: byte-order mark -> codec of the text after it
_BOMS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)


@dataclass(frozen=True, slots=True)
class Truncation:
    """An input that could be read only up to a point."""

    path: str
    last_good_line: int  # the number of lines read before the break
    what: str  # "gzip stream ends early"
    detail: str = ""  # the decompressor's words

    def message(self) -> str:
        """``run.log.gz:722: gzip stream ends early; analysed the 722 lines before``."""
        n = self.last_good_line
        lines = "the line" if n == 1 else f"the {n} lines"
        return f"{self.path}:{n}: {self.what}; analysed {lines} before"


#: inputs smaller than this are read by one process (a fork and a seam cost ~20 ms); the
#: workers' machinery (:mod:`._parallel`) is not even imported for a plain file under it
PARALLEL_MIN_BYTES = 32 << 20


@dataclass(slots=True)
class ReadStats:
    """Counters filled in while a source is read."""

    lines: int = 0
    bytes: int = 0
    size: int | None = None  # size on disk, when known (for progress bars)
    compressed: bool = False
    encoding: str = "utf-8"  # "utf-8", "utf-16-le" or "utf-16-be" (from a byte-order mark)
    truncated: Truncation | None = None  # the stream broke; lines up to the break were read
    spooled: bool = False  # not a regular file: a private copy was kept for a second pass


# Notes of every truncated input read inside a :func:`collect_notes` block.
_NOTES: contextvars.ContextVar[list[Truncation] | None] = contextvars.ContextVar(
    "recompile_doctor_read_notes", default=None
)


@contextlib.contextmanager
def collect_notes() -> Iterator[list[Truncation]]:
    """Collect the :class:`Truncation` notes of every input read inside the block."""
    notes: list[Truncation] = []
    token = _NOTES.set(notes)
    try:
        yield notes
    finally:
        _NOTES.reset(token)


# The private copies of inputs that cannot be read twice, by display name.  Anonymous
# temporary files: the operating system deletes them when they are closed or the process ends.
_SPOOLS: dict[str, IO[bytes]] = {}


def release_spool(path: str) -> None:
    """Close (and so delete) the private copy of ``path``, if one was kept."""
    f = _SPOOLS.pop(path, None)
    if f is not None:
        f.close()


def display_name(path: str | os.PathLike[str]) -> str:
    """How an input is named in reports and errors (``-`` for stdin)."""
    return str(path)


class _Tee(io.RawIOBase):
    """A raw stream that copies every byte it reads from ``src`` to ``copy``."""

    def __init__(self, src: BinaryIO, copy: IO[bytes], owns: bool) -> None:
        super().__init__()
        self._src = src
        self._copy = copy
        self._owns = owns
        self._read1: Callable[[int], bytes] = getattr(src, "read1", src.read)

    def readable(self) -> bool:
        return True

    def readinto(self, b: memoryview) -> int:  # type: ignore[override]
        data = self._read1(min(len(b), _SPOOL_CHUNK))
        n = len(data)
        b[:n] = data
        if n:
            self._copy.write(data)
        return n

    def close(self) -> None:
        if not self.closed:
            self._copy.flush()
            if self._owns:
                self._src.close()
        super().close()


def _needs_spool(path: str, fd: int) -> bool:
    """True for stdin (even redirected from a file, it is read from where it stands) and
    for anything but a regular file (pipes, FIFOs, devices, sockets, ttys)."""
    if path == STDIN_NAME:
        return True
    try:
        return not stat.S_ISREG(os.fstat(fd).st_mode)
    except OSError:
        return path == STDIN_NAME


def _open_binary(path: str, spool: bool) -> tuple[BinaryIO, int | None, bool]:
    """The raw input, its size when known, and whether it is copied to a spool."""
    if path == STDIN_NAME:
        src: BinaryIO = sys.stdin.buffer
        try:
            fd = src.fileno()
        except (OSError, AttributeError, ValueError):
            fd = -1
        size = None
        if fd >= 0:
            with contextlib.suppress(OSError):
                st0 = os.fstat(fd)
                size = st0.st_size if stat.S_ISREG(st0.st_mode) else None
    else:
        try:
            st = os.stat(path)
            if stat.S_ISDIR(st.st_mode):
                raise RecompileDoctorError("is a directory, expected a log file", path=path)
            # a FIFO or device is opened unbuffered: a read returns what is there
            src = open(path, "rb", buffering=0 if not stat.S_ISREG(st.st_mode) else -1)  # noqa: SIM115
        except FileNotFoundError:
            raise RecompileDoctorError("no such file", path=path) from None
        except PermissionError:
            raise RecompileDoctorError("permission denied", path=path) from None
        except OSError as e:
            raise RecompileDoctorError(f"cannot read: {e.strerror or e}", path=path) from None
        fd = src.fileno()
        size = st.st_size if stat.S_ISREG(st.st_mode) else None
    if not spool or not _needs_spool(path, fd):
        return src, size, False
    release_spool(path)
    import tempfile  # only for a stream read twice: not at every start

    copy = tempfile.TemporaryFile(prefix="recompile-doctor-")  # noqa: SIM115
    _SPOOLS[path] = copy
    return _Tee(src, copy, owns=path != STDIN_NAME), size, True  # type: ignore[return-value]


def _buffered(raw: BinaryIO) -> io.BufferedReader:
    if isinstance(raw, io.BufferedReader):
        return raw
    return io.BufferedReader(raw)  # type: ignore[arg-type]


def _decompressed(buffered: io.BufferedReader, path: str, stats: ReadStats) -> BinaryIO:
    try:
        head = buffered.peek(2)[:2]
    except OSError as e:
        raise RecompileDoctorError(f"cannot read: {e.strerror or e}", path=path) from None
    if head == GZIP_MAGIC:
        stats.compressed = True
        return _lines_ended(_GzipOnce(fileobj=buffered, mode="rb"))  # type: ignore[arg-type]
    return _lines_ended(buffered)


#: how much of an input decides whether its lines end with a lone CR (old Mac style)
_CR_SNIFF = 1 << 16


class _CrAsLf(io.RawIOBase):
    """A stream whose lines end with a lone CR, read as if they ended with LF (same bytes,
    same offsets, so line numbers agree between the passes)."""

    def __init__(self, inner: BinaryIO) -> None:
        self._inner = inner

    def readable(self) -> bool:
        return True

    def readinto(self, b: Any) -> int:
        data = self._inner.read(len(b))
        n = len(data)
        b[:n] = data.replace(b"\r", b"\n")
        return n

    def close(self) -> None:
        try:
            self._inner.close()
        finally:
            super().close()


class _GzipOnce(gzip.GzipFile):
    """A gzip stream that, once broken, stays broken with its first error: ``gzip`` itself
    goes on reading after a bad header and fails again further on, with words (the bytes it
    found there) that depend on how much each caller asked for."""

    _broken: BaseException | None = None

    def _once(self, read: Callable[..., Any], *args: Any) -> Any:
        if self._broken is not None:
            raise self._broken
        try:
            return read(*args)
        except (EOFError, zlib.error, gzip.BadGzipFile) as e:
            self._broken = e
            raise

    def read(self, size: int | None = -1) -> bytes:
        return cast(bytes, self._once(super().read, size))

    def read1(self, size: int = -1) -> bytes:
        return cast(bytes, self._once(super().read1, size))

    def peek(self, n: int) -> bytes:
        return cast(bytes, self._once(super().peek, n))

    def readline(self, size: int | None = -1) -> bytes:
        return cast(bytes, self._once(super().readline, size))

    def readinto(self, b: Any) -> int:
        return cast(int, self._once(super().readinto, b))


def _lines_ended(stream: BinaryIO) -> BinaryIO:
    """``stream``, or a view of it with LF for CR when its lines end with a lone CR (no LF in
    its first 64 KiB, several CRs): otherwise one whole log would be a single line whose
    CRs look like progress-bar redraws."""
    peek = getattr(stream, "peek", None)
    if peek is None:
        return stream
    try:
        head = bytes(peek(_CR_SNIFF)[:_CR_SNIFF])
    except (OSError, EOFError, zlib.error):
        return stream  # a broken stream is reported where it is read
    if b"\n" in head or head.count(b"\r") < 2:
        return stream
    return io.BufferedReader(_CrAsLf(stream), buffer_size=1 << 20)


def gzip_text_size(f: BinaryIO) -> int | None:
    """The size of the text of ``f``, a gzip stream over a regular file, as the file's trailer
    gives it (the last member's size, modulo 4 GiB: a lower bound for a file of one member
    under 4 GiB, whose trailer tells it exactly); None when ``f`` is not such a stream or the
    trailer cannot be right (less text than the file has bytes)."""
    if not isinstance(f, _GzipOnce):  # (a lone-CR view, or not gzip)
        return None
    raw = f.fileobj
    if not isinstance(raw, io.BufferedReader) or not isinstance(raw.raw, io.FileIO):
        return None
    try:
        st = os.fstat(raw.fileno())
        if not stat.S_ISREG(st.st_mode) or st.st_size < 18:
            return None
        size = st.st_size
        text = int.from_bytes(read_at(raw, 4, size - 4), "little")
    except OSError:
        return None
    return text if text >= size else None


def decompressed(raw: BinaryIO, path: str) -> BinaryIO:
    """The text stream of the file opened as ``raw``, read as the first pass reads it
    (gunzipped, lone CRs as LF): the same bytes at the same offsets."""
    return _decompressed(_buffered(raw), path, ReadStats())


def open_source(path: str, stats: ReadStats | None = None) -> BinaryIO:
    """Open ``path`` (or stdin for ``-``) for binary reading, transparently gunzipping."""
    st = stats if stats is not None else ReadStats()
    raw, size, _ = _open_binary(path, spool=False)
    st.size = size
    return _decompressed(_buffered(raw), path, st)


def _bom(f: BinaryIO) -> tuple[str, int]:
    """The encoding a byte-order mark at the start of ``f`` selects, and the mark's length."""
    peek = getattr(f, "peek", None)
    if peek is None:
        return "utf-8", 0
    head = bytes(peek(4)[:4])
    for mark, enc in _BOMS:
        if head.startswith(mark):
            return enc, len(mark)
    return "utf-8", 0


class _Utf16Lines:
    """``readline(limit)`` over UTF-16 bytes, giving UTF-8 bytes (line ends untouched)."""

    def __init__(self, f: BinaryIO, encoding: str) -> None:
        self._text = io.TextIOWrapper(f, encoding=encoding, errors="replace", newline="\n")

    def readline(self, limit: int) -> bytes:
        return self._text.readline(limit // 2).encode("utf-8", errors="replace")

    def __del__(self) -> None:
        # the stream is its opener's to close: let go of it (a collected TextIOWrapper
        # would close it, early, and Python would warn of an unclosed file)
        with contextlib.suppress(ValueError):  # closed already
            self._text.detach()


#: what a broken compressed stream raises while it is read
BROKEN_STREAM: tuple[type[BaseException], ...] = (EOFError, gzip.BadGzipFile, zlib.error)


def skip_bom(f: BinaryIO, st: ReadStats) -> str:
    """Read past a byte-order mark at the start of ``f``; the encoding it selects."""
    try:
        enc, skip = _bom(f)
    except BROKEN_STREAM:
        enc, skip = "utf-8", 0  # broken at once: the first read says so
    st.encoding = enc
    if skip:
        f.read(skip)
        st.bytes += skip
    return enc


def record_truncation(
    path: str, st: ReadStats, lines: int, e: BaseException, strict: bool, note: bool = True
) -> None:
    """A stream that broke after ``lines`` lines: raise (``strict``) or record it in ``st``
    (and, with ``note``, in the current :func:`collect_notes` block)."""
    if strict:
        raise RecompileDoctorError(
            f"gzip stream ends early after line {lines} ({e})", path=path
        ) from None
    t = Truncation(path, lines, "gzip stream ends early", str(e))
    st.truncated = t
    sink = _NOTES.get()
    if note and sink is not None:
        sink.append(t)


def _physical_lines(
    f: BinaryIO, path: str, st: ReadStats, strict: bool, note: bool
) -> Iterator[bytes]:
    """The lines of ``f`` as bytes, line end included; records a broken stream in ``st``."""
    enc = skip_bom(f, st)
    reader: BinaryIO | _Utf16Lines = f
    if enc != "utf-8":
        reader = _Utf16Lines(f, enc)
    lineno = 0
    while True:
        try:
            raw = reader.readline(MAX_LINE_BYTES)
            if raw and len(raw) >= MAX_LINE_BYTES and not raw.endswith(b"\n"):
                # skip the rest of an over-long line (a line the stream breaks in is lost,
                # its bytes not counted)
                extra = 0
                while True:
                    rest = reader.readline(MAX_LINE_BYTES)
                    extra += len(rest)
                    if not rest or rest.endswith(b"\n"):
                        break
                st.bytes += extra
        except BROKEN_STREAM as e:
            record_truncation(path, st, lineno, e, strict, note)
            return
        except OSError as e:
            raise RecompileDoctorError(f"cannot read: {e.strerror or e}", path=path) from None
        if not raw:
            return
        lineno += 1
        yield raw


def bom_encoding(f: BinaryIO) -> str:
    """The encoding a byte-order mark at the start of ``f`` selects (peeked, not read)."""
    return _bom(f)[0]


def reader_lines(
    f: BinaryIO,
    path: str,
    st: ReadStats,
    on_progress: Callable[[int], None] | None,
    strict: bool,
) -> Iterator[tuple[int, str]]:
    """The lines of an opened input the plain way, then the checks at its end."""
    yield from _lines(f, path, st, on_progress, strict, note=True)
    if st.lines == 0 and st.truncated is None:
        raise RecompileDoctorError("empty input", path=path)
    if on_progress is not None:
        on_progress(st.bytes)


def _lines(
    f: BinaryIO,
    path: str,
    st: ReadStats,
    on_progress: Callable[[int], None] | None,
    strict: bool,
    note: bool,
) -> Iterator[tuple[int, str]]:
    for lineno, line in enumerate(_physical_lines(f, path, st, strict, note), start=1):
        raw = line
        st.bytes += len(raw)
        st.lines = lineno
        if raw.endswith(b"\n"):
            raw = raw[:-1]
        if raw.endswith(b"\r"):
            raw = raw[:-1]
        if on_progress is not None and lineno % 4096 == 0:
            on_progress(st.bytes)
        yield lineno, raw.decode("utf-8", errors="replace")


def iter_lines(
    path: str,
    stats: ReadStats | None = None,
    on_progress: Callable[[int], None] | None = None,
    allow_empty: bool = False,
    strict: bool = False,
) -> Iterator[tuple[int, str]]:
    """Yield ``(line_number, text)`` for every physical line of ``path``.

    ``text`` has its line ending removed and invalid bytes replaced by U+FFFD.  Raises
    :class:`RecompileDoctorError` for a missing, unreadable or empty input.  A gzip stream
    that ends early yields the lines before the break and sets ``stats.truncated`` (with
    ``strict``, it raises instead).  An input that is not a regular file is copied to a
    private spool while it is read, for :func:`read_lines_around`.
    """
    st = stats if stats is not None else ReadStats()
    with open_input(path, st) as f:
        yield from _lines(f, path, st, on_progress, strict, note=True)
    if st.lines == 0 and st.truncated is None and not allow_empty:
        raise RecompileDoctorError("empty input", path=path)
    if on_progress is not None:
        on_progress(st.bytes)


@contextlib.contextmanager
def open_input(path: str, st: ReadStats) -> Iterator[BinaryIO]:
    """The decompressed binary stream of ``path`` for the first pass (an input that is not
    a regular file is spooled for a second one); closed on exit, stdin excepted."""
    raw, size, spooled = _open_binary(path, spool=True)
    st.size = size
    st.spooled = spooled
    buffered = _buffered(raw)
    try:
        yield _decompressed(buffered, path, st)
    finally:
        if buffered is not sys.stdin.buffer:  # never close stdin (a tee over it is fine)
            buffered.close()


def _reread(path: str) -> tuple[BinaryIO, bool]:
    """A fresh binary stream over ``path`` for a second pass: the spooled copy, or the file
    itself when it is a regular file."""
    spool = _SPOOLS.get(path)
    if spool is not None:
        spool.flush()
        fd = os.dup(spool.fileno())
        f = os.fdopen(fd, "rb")
        f.seek(0)
        return f, True
    if path == STDIN_NAME:
        raise RecompileDoctorError("stdin cannot be read twice", path=path)
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):  # never open a pipe a second time
            raise RecompileDoctorError("not a regular file, and no copy was kept", path=path)
    except OSError:
        raise RecompileDoctorError("cannot read", path=path) from None
    raw, _size, _ = _open_binary(path, spool=False)
    return raw, False


def _reopened(path: str) -> tuple[io.BufferedReader, BinaryIO] | None:
    """The input opened again for a second pass (:func:`_reread`), buffered, and its text
    (decompressed); None when it cannot be."""
    try:
        raw, _ = _reread(path)
    except RecompileDoctorError:
        return None
    buffered = _buffered(raw)
    try:
        return buffered, _decompressed(buffered, path, ReadStats())
    except RecompileDoctorError:
        buffered.close()
        return None


def read_lines_around(
    path: str, wanted: dict[int, int]
) -> dict[int, tuple[list[str], str, list[str]]]:
    """Second pass for evidence context: for each wanted line number ``n`` with radius ``r``,
    return ``(before, line, after)``.  Streams; keeps only a small window in memory.

    Reads the private copy of an input that is not a regular file (stdin, a pipe), never the
    input itself; returns an empty dict when there is none.
    """
    if not wanted:
        return {}
    opened = _reopened(path)
    if opened is None:
        return {}
    buffered, f = opened
    try:
        enc, skip = _bom(f)
        if enc == "utf-8":  # (UTF-16: line by line, through its decoder)
            f.read(skip)
            return _around(wanted, _lines_in_spans(f, _spans(wanted)))
    except _AROUND_FALLS_BACK:
        pass  # (a stream cut short: line by line, which keeps the lines before the break)
    finally:
        buffered.close()
    return _read_lines_around(path, wanted)


#: what makes :func:`read_lines_around` read line by line instead
_AROUND_FALLS_BACK: tuple[type[BaseException], ...] = (
    *BROKEN_STREAM,
    OSError,
    RecompileDoctorError,
)
#: bytes read at once by :func:`_lines_in_spans`
_AROUND_BLOCK = 1 << 22


def _spans(wanted: dict[int, int]) -> list[tuple[int, int]]:
    """The line numbers ``wanted`` needs (each line and its radius), as sorted, merged
    ``(first, last)`` spans."""
    spans: list[tuple[int, int]] = []
    for first, last in sorted((max(n - r, 1), n + r) for n, r in wanted.items()):
        if spans and first <= spans[-1][1] + 1:
            spans[-1] = (spans[-1][0], max(spans[-1][1], last))
        else:
            spans.append((first, last))
    return spans


def _lines_in_spans(f: BinaryIO, spans: list[tuple[int, int]]) -> dict[int, str]:
    """The text of the lines of ``f`` numbered within ``spans``, as the line-by-line reading
    gives them (:func:`_lines`: split at LF, one CR before it dropped, a line past
    :data:`MAX_LINE_BYTES` cut there), found by counting line ends in big blocks (a second
    pass over a gigabyte of log for the context of a few evidence lines, at the speed of
    ``memchr``): in a block holding a wanted line, the wanted lines are found by skipping
    line ends from one to the next, and only they are cut out (the block was split into
    all its lines: 55,000 of them in 4 MB of a JAX log, for a few)."""
    from recompile_doctor.parsers._spans import chosen

    work = chosen()
    got: dict[int, str] = {}
    k = 0  # the next span
    lineno = 1  # the number of the line the carried bytes begin
    carry = b""  # the start of a line the blocks read so far have not ended (no LF in it)
    while k < len(spans):
        block = f.read(_AROUND_BLOCK)
        if block:
            end = block.rfind(b"\n")
            if end == -1:  # (a line longer than the block: keep what is kept of it)
                carry = (carry + block)[:MAX_LINE_BYTES]
                continue
            last = lineno + work.newlines(block, 0, end)  # the number of the last whole line
        elif carry:
            end, last = 0, lineno  # the last line, with no line end
        else:
            break
        while k < len(spans) and spans[k][1] < lineno:
            k += 1
        if k < len(spans) and spans[k][0] <= last:
            data = carry + block[:end]
            at, pos = lineno, 0  # (a line's number, and where it starts in data)
            while k < len(spans) and spans[k][0] <= last:
                first, stop = spans[k]
                for n in range(max(first, lineno), min(stop, last) + 1):
                    pos = work.after_lines(data, pos, len(data), n - at)
                    at = n
                    e = work.line_end(data, pos, len(data))
                    got[n] = line_text(data, pos, e)
                if stop > last:
                    break
                k += 1
        if not block:
            break
        carry, lineno = block[end + 1 :], last + 1
    return got


def _around(
    wanted: dict[int, int], lines: dict[int, str]
) -> dict[int, tuple[list[str], str, list[str]]]:
    """``(before, line, after)`` of each wanted line there is, from the lines around."""
    out: dict[int, tuple[list[str], str, list[str]]] = {}
    for n, r in wanted.items():
        if n in lines:
            before = [lines[m] for m in range(max(n - r, 1), n)]
            after = [lines[m] for m in range(n + 1, n + r + 1) if m in lines]
            out[n] = (before, lines[n], after)
    return out


def _read_lines_around(
    path: str, wanted: dict[int, int]
) -> dict[int, tuple[list[str], str, list[str]]]:
    """:func:`read_lines_around` line by line (a UTF-16 input, a broken gzip stream)."""
    radius = max(wanted.values())
    window: deque[tuple[int, str]] = deque(maxlen=radius + 1)
    pending: dict[int, tuple[list[str], str, list[str]]] = {}
    out: dict[int, tuple[list[str], str, list[str]]] = {}
    last_wanted = max(wanted)
    opened = _reopened(path)
    if opened is None:
        return {}
    buffered, f = opened
    try:
        for n, text in _lines(f, path, ReadStats(), None, strict=False, note=False):
            for k, (_before, _line, after) in list(pending.items()):
                if n - k <= wanted[k]:
                    after.append(text)
                if n - k >= wanted[k]:
                    out[k] = pending.pop(k)
            if n in wanted:
                r = wanted[n]
                before = [t for (m, t) in window if n - m <= r]
                pending[n] = (before, text, [])
            window.append((n, text))
            if n > last_wanted + radius and not pending:
                break
    except RecompileDoctorError:
        return out
    finally:
        buffered.close()
    out.update(pending)
    return out
