"""The fast path of the log driver: big binary chunks, a multi-literal matcher, and Python work
only for the lines that may hold a message.

A log of a gigabyte is mostly lines no decoder wants.  Instead of decoding every line, the
reader fills a reused buffer with whole lines, a matcher finds where the format's literal
anchors occur (the C module's scan, hyperscan when its wheel is installed, or
``bytes.find``: :mod:`recompile_doctor.matcher_choice`; the same candidate lines either
way), newlines are counted only between candidates for line numbers, and only candidate
lines are decoded to text and checked with the driver's exact anchor test.
The lines around them are handed to the decoder's ``skipped`` as its ``wants_skipped``
asks (see :class:`~recompile_doctor.parsers._format.Decoder`), and every line while the
decoder is ``continuing``.  The events, statuses and line numbers are those of the plain
line-by-line path.
"""

from __future__ import annotations

import gzip
import re
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any, BinaryIO, Final, Protocol

from recompile_doctor.bounded import Kept
from recompile_doctor.errors import RecompileDoctorError
from recompile_doctor.matcher_choice import engine_for
from recompile_doctor.parsers._format import Decoder, SkipMode
from recompile_doctor.parsers._line_text import MAX_LINE_BYTES, line_text
from recompile_doctor.parsers._reader import BROKEN_STREAM
from recompile_doctor.parsers._spans import chosen, native_in_use

#: the reused read buffer (whole lines are moved to its front between reads)
CHUNK_BYTES = 4 << 20
#: the smallest first buffer: an input known to be smaller than :data:`CHUNK_BYTES` starts
#: with a buffer of its size (4 MB zeroed is 3 ms of a small log's start-up), grown to
#: :data:`CHUNK_BYTES` the first time it fills (the input was not as small as it said)
FIRST_MIN_BYTES = 64 << 10
NL: Final = b"\n"


class Matcher(Protocol):
    """Finds where any of a set of literals occurs."""

    def positions(self, data: bytearray, end: int) -> list[int]:
        """Offsets (ascending) inside the lines containing a literal, in ``data[:end]``: at
        least one inside every such line."""
        ...


class FindMatcher:
    """``bytes.find`` per literal, one hit per line and literal."""

    def __init__(self, literals: Sequence[bytes]) -> None:
        self._literals = _minimal(literals)

    def positions(self, data: bytearray, end: int) -> list[int]:
        out: list[int] = []
        find = data.find
        for lit in self._literals:
            p = find(lit, 0, end)
            while p >= 0:
                out.append(p)
                nl = find(NL, p, end)
                if nl < 0:
                    break
                p = find(lit, nl + 1, end)
        out.sort()
        return out


class HyperscanMatcher:
    """Hyperscan's block mode over the whole chunk; one Python call per match."""

    def __init__(self, literals: Sequence[bytes]) -> None:
        import hyperscan  # type: ignore[import-not-found, unused-ignore]

        lits = _minimal(literals)
        self._db = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
        self._db.compile(
            expressions=[re.escape(lit) for lit in lits],
            ids=list(range(len(lits))),
            elements=len(lits),
            flags=[0] * len(lits),
        )

    def positions(self, data: bytearray, end: int) -> list[int]:
        out: list[int] = []
        append = out.append

        def on_match(_id: int, _from: int, to: int, _flags: int, _ctx: object) -> None:
            append(to - 1)  # the last byte of the match: inside its line

        view = memoryview(data)[:end]
        self._db.scan(view, match_event_handler=on_match)  # type: ignore[type-var, unused-ignore]
        return out


class NativeMatcher:
    """The C module's scan (``literal_positions``: Wu and Manber's over 2-byte blocks, or
    ``memmem`` for one literal), one position a line, all in one call: hyperscan calls a
    Python function for every match (with the interpreter's lock taken back each time),
    about 1,700 instructions of a compiled reading's, a third of its scan of a JAX log."""

    def __init__(self, literals: Sequence[bytes], positions: _Positions) -> None:
        self._literals = tuple(_minimal(literals))
        self._positions = positions

    def positions(self, data: bytearray, end: int) -> list[int]:
        return self._positions(data, end, self._literals)


class DensityMatcher:
    """The C scan where a log's candidate lines are dense, hyperscan where they are sparse,
    chosen for each buffer by the one before (the first: the C scan).  Both give the same
    lines; hyperscan's scan of the bytes is faster where a log's words nearly hold an
    anchor (Poplar's ``Poplar `` in lines full of ``poplar/``: the C scan moves on a byte at
    a time there), its call per match the slower part where matches are many (measured:
    ``benchmarks/bench_matchers.py``)."""

    def __init__(self, native: NativeMatcher, hyperscan: Matcher) -> None:
        self._native = native
        self._hyperscan = hyperscan
        self._sparse = False

    def positions(self, data: bytearray, end: int) -> list[int]:
        got = (self._hyperscan if self._sparse else self._native).positions(data, end)
        if end >= SPARSE_JUDGED_BYTES:
            # (the C scan gives a position a line, hyperscan one a match: a line holding
            # two anchors counts twice there, which only makes a buffer look denser)
            self._sparse = len(got) * (1 << 20) < SPARSE_LINES_PER_MB * end
        return got


#: candidate lines a MB under which a buffer's scan is left to hyperscan (hyperscan's call
#: per match: about 1,700 instructions of compiled reading; the C scan's slower moves over
#: the DEBUG Poplar log's bytes: about as much for 500 lines a MB)
SPARSE_LINES_PER_MB: Final = 1000
#: a buffer is judged once it holds this many bytes (a log's last short one is not)
SPARSE_JUDGED_BYTES: Final = 1 << 20


class _Positions(Protocol):
    def __call__(self, data: bytearray, end: int, literals: tuple[bytes, ...], /) -> list[int]: ...


def _minimal(literals: Sequence[bytes]) -> list[bytes]:
    """The literals without those containing another (a line holding the longer one holds
    the shorter one too), without duplicates."""
    uniq = sorted({lit for lit in literals if lit}, key=len)
    out: list[bytes] = []
    for lit in uniq:
        if not any(o in lit for o in out):
            out.append(lit)
    return out


#: this thread's hyperscan matchers, by their literals: a database takes milliseconds to
#: compile (a fleet's scan reads thousands of small logs of a few formats, and a log's
#: workers inherit what their parent made), and its scratch space serves one scan at a
#: time (a Dask worker runs tasks in threads)
_MADE = threading.local()
#: the most matchers a thread keeps (a format's literals make one)
MATCHERS_KEPT: Final = 64


def make_matcher(literals: Sequence[str], engine: str | None = None) -> Matcher:
    """The fastest matcher available for ``literals`` (:func:`~recompile_doctor.
    matcher_choice.engine_for`; ``engine``: "native", "density" (the C scan or hyperscan,
    a buffer at a time), "hyperscan" or "find" to choose)."""
    lits = [s.encode("utf-8") for s in literals]
    engine = engine or engine_for(_minimal(lits))
    if engine == "find":
        return FindMatcher(lits)
    if engine in ("native", "density"):
        native = native_in_use()
        if native is None:
            raise ValueError("the C scan was asked for, and the C module is not in use")
        scan = NativeMatcher(lits, native.literal_positions)
        if engine == "native":
            return scan
        return DensityMatcher(scan, make_matcher(literals, "hyperscan"))
    made: Kept[tuple[bytes, ...], HyperscanMatcher] | None = getattr(_MADE, "matchers", None)
    if made is None:
        made = _MADE.matchers = Kept(MATCHERS_KEPT)
    key = tuple(lits)
    got = made.table.get(key)
    if got is None:
        got = made.put(key, HyperscanMatcher(lits))
    return got


class Blocks:
    """The input as a series of buffers of whole lines.

    After each successful :meth:`next`, ``data[:end]`` holds whole lines only (each ending
    in a newline, except the very last line of the input).  A line longer than the buffer
    is replaced by its first :data:`MAX_LINE_BYTES` bytes and a newline (all the plain
    reader keeps of it).  ``consumed - lost`` is the number of bytes the lines hold.
    """

    def __init__(self, f: BinaryIO, path: str, size: int | None = None) -> None:
        """``size``: the bytes left to read, if known (a small input gets a small buffer)."""
        self._f = f
        self._path = path
        first = CHUNK_BYTES if size is None else max(FIRST_MIN_BYTES, size + 1)
        self._buf = bytearray(min(first, CHUNK_BYTES))
        self._fill = 0  # bytes in the buffer
        self._eof = False
        self._read1: Callable[[int], bytes] | None = None
        if isinstance(f, gzip.GzipFile) or not hasattr(f, "readinto"):
            # one decompressor step per read, so that a broken stream loses only the line
            # it breaks in (as the plain reader does)
            self._read1 = getattr(f, "read1", f.read)
        self.broken: BaseException | None = None
        self.data: bytearray = self._buf
        self.end = 0
        self.consumed = 0
        self.lost = 0
        #: read no further than this many bytes (the input ends there until :meth:`go_on`)
        self.limit: int | None = None

    def go_on(self) -> None:
        """Read on past :attr:`limit` (after :meth:`next` has returned False there)."""
        self.limit = None
        self._eof = self.broken is not None

    def _read(self, at: int) -> int:
        if self._eof:
            return 0
        room = len(self._buf) - at
        if self.limit is not None:
            room = min(room, self.limit - self.consumed)
            if room <= 0:
                self._eof = True
                return 0
        try:
            if self._read1 is not None:
                chunk = self._read1(room)
                n = len(chunk)
                self._buf[at : at + n] = chunk
            else:
                view = memoryview(self._buf)[at : at + room]
                n = self._f.readinto(view)  # type: ignore[attr-defined]
        except BROKEN_STREAM as e:
            self.broken = e
            n = 0
        except OSError as e:
            raise RecompileDoctorError(f"cannot read: {e.strerror or e}", path=self._path) from None
        if not n:
            self._eof = True
        self.consumed += n
        return int(n)

    def next(self, keep: int) -> bool:
        """Drop ``data[:keep]`` (lines done with), read more; False at the end."""
        buf = self._buf
        if self.data is not buf:  # after an over-long line
            keep = 0
        keep = min(keep, self._fill)
        if keep:
            buf[: self._fill - keep] = buf[keep : self._fill]
            self._fill -= keep
        self.data = buf
        while True:
            while self._fill < len(buf):
                n = self._read(self._fill)
                if not n:
                    break
                self._fill += n
            if self._fill < len(buf) or len(buf) >= CHUNK_BYTES:
                break
            buf.extend(bytes(CHUNK_BYTES - len(buf)))  # a first buffer too small: full size
        nl = buf.rfind(NL, 0, self._fill)
        if nl >= 0:
            self.end = nl + 1
            return True
        if self._fill == len(buf):
            return self._long_line()
        if self.broken is not None or self._fill == 0:
            self.lost += self._fill  # the partial line before a break is lost
            self._fill = self.end = 0
            return False
        self.end = self._fill
        return True

    def _long_line(self) -> bool:
        """A line longer than the buffer: keep its head, read past its end."""
        head = bytes(self._buf[:MAX_LINE_BYTES])
        length = self._fill
        self._fill = 0
        while True:
            n = self._read(0)
            if not n:
                if self.broken is not None:  # the line never ended: lost
                    self.lost += length
                    self.end = 0
                    return False
                break
            nl = self._buf.find(NL, 0, n)
            if nl >= 0:
                self._buf[: n - nl - 1] = self._buf[nl + 1 : n]
                self._fill = n - nl - 1
                break
            length += n
        self.data = bytearray(head + NL)
        self.end = len(self.data)
        return True


def skip_mode(decoder: Decoder) -> SkipMode:
    """``decoder.wants_skipped`` ("all" for a decoder without it)."""
    mode: object = getattr(decoder, "wants_skipped", "all")
    if mode == "last":
        return "last"
    if mode == "none":
        return "none"
    return "all"


class _Counts(Protocol):
    recognized: int
    unrecognized: int


class FastLines:
    """The lines of a block-read input that one decoder must decode; see the module doc.
    ``lineno`` counts the lines gone by; the lines not decoded are added to
    ``counter.unrecognized``.  ``start``: where in the loaded block (``loaded``) to begin.
    ``literal_anchors``: every line holding one of the matcher's literals passes
    ``is_anchor`` (the literals are the anchors), so a candidate line is checked only when
    it is cut at :data:`MAX_LINE_BYTES` (the cut may have lost its literal)."""

    def __init__(
        self,
        blocks: Blocks,
        matcher: Matcher,
        decoder: Decoder,
        is_anchor: Callable[[str], bool],
        counter: _Counts,
        on_progress: Callable[[int], None] | None = None,
        *,
        start: int = 0,
        loaded: bool = False,
        lineno: int = 0,
        literal_anchors: bool = False,
    ) -> None:
        self.literal_anchors = literal_anchors
        self._modal = hasattr(decoder, "wants_skipped")  # else: every line ("all")
        self._defer = hasattr(decoder, "pending_last")
        #: the start of the lines that continue a block and that the decoder may let pass
        #: undecoded (``CONTINUED_BY``, ``skips_continued``: see Decoder)
        self._continued: bytes | None = getattr(decoder, "CONTINUED_BY", None)
        #: what ends a run of lines the decoder takes at once (``COLLECT_STOP``: see Decoder)
        self._collect_stop: bytes | None = getattr(decoder, "COLLECT_STOP", None)
        #: a gap whose walk back is put off: (start, end, number of its last line)
        self._pending: tuple[int, int, int] | None = None
        self.on_progress = on_progress
        self.counter = counter
        self._start = start if loaded else -1
        self.blocks = blocks
        self.matcher = matcher
        self.decoder = decoder
        self.is_anchor = is_anchor
        self.lineno = lineno  # lines done
        self._walk_back_fn = self._walk_back  # (what the decoder calls: made once)
        #: the byte work (see _spans): in C where that module is built
        work = chosen()
        self._spans, self._text, self._line_end = work.line_spans, work.line_text, work.line_end
        self._skip_prefixed, self._newlines = work.skip_prefixed, work.newlines
        self._take_prefixed = work.take_prefixed
        self.native = work.native
        self._limit = MAX_LINE_BYTES  # (where a line's text is cut)

    def _gap(self, data: bytearray, a: int, b: int, n: int = -1) -> None:
        """The lines of ``data[a:b]`` (whole lines), none of them decoded; ``n``: the
        newlines among them, if known."""
        if n < 0:
            n = self._newlines(data, a, b)
        if b > a and data[b - 1] != 10:
            n += 1  # the last line of the input, without a newline
        if not n:
            return
        first = self.lineno + 1
        self.lineno += n
        self.counter.unrecognized += n
        dec = self.decoder
        mode: object = dec.wants_skipped if self._modal else "all"  # type: ignore[attr-defined]
        if mode == "none":
            return
        pos = a
        if mode != "last":  # "all" (and anything unknown)
            k = first
            while pos < b:
                e = self._line_end(data, pos, b)
                dec.skipped(k, self._text(data, pos, e, self._limit))
                pos, k = e + 1, k + 1
                if self._modal and skip_mode(dec) != "all":
                    break
            if pos >= b or skip_mode(dec) != "last":
                return
        if self._defer:
            # the walk back is put off until the decoder asks (often it need not be done)
            if self._pending is not None and dec.pending_last is not None:  # type: ignore[attr-defined]
                self._walk_back()  # (the last gap's, still wanted: _settle)
            self._pending = (pos, b, self.lineno)
            dec.pending_last = self._walk_back_fn  # type: ignore[attr-defined]
            return
        self._pending = (pos, b, self.lineno)
        self._walk_back()

    def _settle(self) -> None:
        """The put-off walk back, now: unless the decoder has dropped it (or done it)."""
        if self._pending is None:
            return
        if getattr(self.decoder, "pending_last", None) is None:
            self._pending = None
            return
        self._walk_back()

    def _walk_back(self) -> None:
        """Hand the decoder the gap's last lines, from its end back to the first line that
        tells the decoder something (``wants_skipped`` "last")."""
        gap = self._pending
        if gap is None:
            return
        self._pending = None
        dec = self.decoder
        if self._defer:
            dec.pending_last = None  # type: ignore[attr-defined]
        pos, b, k = gap
        data = self.blocks.data
        e = b - 1 if data[b - 1] == 10 else b
        while e >= pos:
            nl = data.rfind(NL, pos, e)
            s = pos if nl < 0 else nl + 1
            if dec.skipped(k, self._text(data, s, e, self._limit)):
                return
            e, k = s - 1, k - 1

    def lines(self) -> Iterator[tuple[int, str]]:
        """``(lineno, text)`` of every line to decode: those holding an anchor, and every
        line while the decoder is ``continuing``; the others go to :meth:`_gap`."""
        blocks = self.blocks
        dec = self.decoder
        is_anchor = self.is_anchor
        limit = self._limit
        uncut = limit if self.literal_anchors else -1
        # the decoder's shortcut for lines it folds (literal anchors only: such a line holds
        # one, as the line it repeats did)
        fold: Callable[[bytearray], bool] | None = getattr(dec, "fold_line", None)
        counter = self.counter
        continued = self._continued
        collect_stop = self._collect_stop
        spans_of = self._spans
        # (a line's text asked of its start and end as the span list holds them, objects,
        # with the limit made one once: as ints they were made anew for each call, some 225
        # instructions a candidate line)
        text_at: Callable[..., str] = self._text
        limit_at: Any = limit
        line_end, skip_prefixed = self._line_end, self._skip_prefixed
        take_prefixed = self._take_prefixed
        pos = self._start
        while pos >= 0 or blocks.next(blocks.end):
            pos = max(pos, 0)
            data, end = blocks.data, blocks.end
            # each candidate line's start, end and the newlines before it (from ``after``)
            spans = spans_of(data, pos, end, self.matcher.positions(data, end))
            span_at: list[Any] = spans  # (its items as the objects they are)
            nspans = len(spans)
            j = 0
            after = pos
            while pos < end:
                if dec.continuing:
                    taking: bytes | None = (
                        dec.collect_prefix  # type: ignore[attr-defined]
                        if collect_stop is not None
                        else None
                    )
                    if taking is not None and collect_stop is not None:
                        # a run of a block's lines, its texts handed over in one call
                        # (counted recognized: as decoding each would)
                        pos, bodies = take_prefixed(data, pos, end, taking, collect_stop, limit)
                        if bodies:
                            dec.collect(self.lineno + 1, bodies)  # type: ignore[attr-defined]
                            self.lineno += len(bodies)
                            counter.recognized += len(bodies)
                        if pos >= end:
                            continue
                    if continued is not None and dec.skips_continued:  # type: ignore[attr-defined]
                        # lines the decoder takes without a change (a payload it does not
                        # read): counted recognized, not decoded
                        pos, passed = skip_prefixed(data, pos, end, continued)
                        if passed:
                            self.lineno += passed
                            counter.recognized += passed
                        if pos >= end:
                            continue
                    e = line_end(data, pos, end)
                    self.lineno += 1
                    yield self.lineno, text_at(data, pos, e, limit_at)
                    pos = e + 1
                    continue
                while j < nspans and spans[j] < pos:  # lines read while continuing
                    after = spans[j + 1] + 1
                    j += 3
                if j == nspans:
                    self._gap(data, pos, end)
                    pos = end
                    break
                s = spans[j]
                e = spans[j + 1]
                # the newlines before the line, counted from ``after``: known unless the
                # decoder read on past it while continuing
                self._gap(data, pos, s, spans[j + 2] if pos == after else -1)
                after = e + 1
                j += 3
                if (
                    fold is not None
                    and e - s <= uncut
                    and data.endswith(dec.fold_tails, s, e)  # type: ignore[attr-defined]
                    and fold(data[s:e])
                ):
                    # a line the decoder folds unseen: counted, not decoded to text
                    self.lineno += 1
                    counter.recognized += 1
                    pos = e + 1
                    continue
                text = text_at(data, span_at[j - 3], span_at[j - 2], limit_at)
                if e - s <= uncut or is_anchor(text):
                    self.lineno += 1
                    yield self.lineno, text
                else:
                    self._gap(data, s, min(e + 1, end))
                pos = e + 1
            pos = -1
            self._settle()  # before the block is replaced
            if self.on_progress is not None:
                self.on_progress(blocks.consumed)


def read_head(blocks: Blocks, n: int) -> tuple[list[tuple[int, str]], int, bool]:
    """The first ``n`` lines (fewer at the end of the input), the offset in the current
    block where the rest begins, and whether a block is loaded."""
    head: list[tuple[int, str]] = []
    while blocks.next(blocks.end if head else 0):
        data, end = blocks.data, blocks.end
        pos = 0
        while pos < end:
            nl = data.find(NL, pos, end)
            e = end if nl < 0 else nl
            head.append((len(head) + 1, line_text(data, pos, e)))
            pos = e + 1
            if len(head) >= n:
                return head, pos, True
    return head, 0, False


def read_more(
    blocks: Blocks, pos: int, loaded: bool, first: int, n: int
) -> tuple[list[tuple[int, str]], int, bool]:
    """Like :func:`read_head`, continuing at ``pos`` of the loaded block: up to ``n`` more
    lines, numbered from ``first``."""
    more: list[tuple[int, str]] = []
    if not loaded:
        return more, 0, False
    while True:
        data, end = blocks.data, blocks.end
        while pos < end:
            nl = data.find(NL, pos, end)
            e = end if nl < 0 else nl
            more.append((first + len(more), line_text(data, pos, e)))
            pos = e + 1
            if len(more) >= n:
                return more, pos, True
        if not blocks.next(blocks.end):
            return more, 0, False
        pos = 0


_LITERAL: Final = re.compile(r"(?:\\.|[^\\.^$*+?{}\[\]()|])*", re.DOTALL)


def regex_literals(rx: re.Pattern[str]) -> list[str] | None:
    """The literals of a regex that is an alternation of escaped literals (None if it is
    anything else)."""
    parts = re.split(r"(?<!\\)\|", rx.pattern)
    if not all(_LITERAL.fullmatch(p) for p in parts):
        return None
    return [re.sub(r"\\(.)", r"\1", p, flags=re.DOTALL) for p in parts]
