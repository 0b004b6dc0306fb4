"""Several processes over one big log: forked workers decode the later parts while the parent
decodes the first, and each part's events are taken from the first line where the decoder
that read up to it and the part's own decoder are in the same state.

How the parts join (the *seams*): worker ``k`` starts at a line boundary ``splits[k-1]`` with
a copy of the parent's decoder as it was after the head of the input (detection's lines), so
it already knows what the head set up (the log's first time stamp, the folding) but not what
came between the head and its part (the clock, a block under way, the last step).  For its
first :data:`CHECKPOINTS` decoded lines in its part it records the decoder's checkpoint (its
state as plain values, :mod:`._checkpoint`; :data:`CHECKPOINT_BYTES` of them at most) and
publishes them.  Whoever reads up to the part
(the parent, or the worker before) goes on past its start, comparing its own checkpoint after
each line the part's worker recorded; at the first line where the two are equal, everything
after it is what that worker decoded (the same state, the same lines: the same events), so
the reader stops there (a worker writes down where it handed over).  If the states never
meet, the reader decodes the whole next part itself and tries the part after; if a worker
fails, the parent reads on alone from the last line whose state it shares; where the worker
looked up a name the parent knew (:mod:`._checkpoint`), the parent reads on past that line
and meets the worker again at a later checkpoint (it also records late ones, spaced out,
past its first :data:`CHECKPOINTS` decoded lines).  A parent that holds items the worker
never had (a decoder's ``RESIDUAL_STATE``) ends the input with the last worker's decoder
and them.  Each part is
decoded once by each process that reads it, and the result is always the one-process result:
only the time differs.

Workers write their events to anonymous temporary files (:mod:`._event_codec`); the parent
takes them a record at a time as soon as each is written (:class:`Stream`), so that it builds
on them while the workers still read, and memory stays flat.  If a worker fails after some
were taken, the parent decodes on from the line where it handed over and leaves out the
events it took already.  They are forked (never spawned: they inherit the primed
decoder) only where that is safe: a POSIX system, a single-threaded process that is not a
pool's worker.  ``RECOMPILE_DOCTOR_WORKERS=N`` sets the number of processes (1: none); by
default one per usable CPU, at most :data:`MAX_PROCESSES`, one per :data:`PART_MIN_BYTES`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import io
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from typing import IO, Any, BinaryIO, NamedTuple

from recompile_doctor.events import TypedEvent
from recompile_doctor.gc_pause import collect_less_often
from recompile_doctor.parsers import _reader
from recompile_doctor.parsers._checkpoint import (
    checkpoint,
    fits,
    knew,
    lookups_of,
    meets,
    pack_lookups,
    record_misses,
    residual_of,
    residue,
    sizes,
    sizes_of,
    unrecorded,
    with_residue,
)
from recompile_doctor.parsers._decoding import count, decode_into, runs_of
from recompile_doctor.parsers._event_codec import (
    ENDED,
    Dumped,
    EventWriter,
    Indexed,
    Missed,
    follow,
    put_indexed,
    put_record,
    record_at,
)
from recompile_doctor.parsers._format import Counted, Decoder, reading_a_part
from recompile_doctor.parsers._reader import (
    BROKEN_STREAM,
    ReadStats,
    decompressed,
    gzip_text_size,
)
from recompile_doctor.parsers._scan import Blocks, FastLines
from recompile_doctor.parsers._spans import chosen

#: a part is at least this big
PART_MIN_BYTES = 16 << 20
#: processes reading one input at most (the parent builds the timeline from every event, and
#: decodes the workers' events back into objects: past a few processes it is the bottleneck)
MAX_PROCESSES = 8
#: the parent's share of the bytes after the head with two processes (its part is this times
#: 2/N of them with N): less than half, for it also decodes the workers' events back and
#: builds the timeline of them all (measured with two processes: with the framework logs,
#: whose reports cost more, the parent still finishes last, and 0.39 beats 0.51 for them;
#: a decoder class may name its own: Poplar's, JAX's, torch's)
PARENT_SHARE = 0.39
#: a part begins at the first line, within this many bytes of where its share ends, that
#: holds one of its decoder class's ``PART_SEAMS`` (literals of the lines a worker may begin
#: at without inheriting, from the lines before, state it can never lose: see
#: :func:`seams_for`); at the first line after that end when none does
SEAM_WINDOW = 1 << 20
#: a worker records its state after each of its first decoded lines, then after every
#: :data:`CHECKPOINT_EVERY`-th up to :data:`CHECKPOINTS` decoded lines of its part (once two
#: decoders are in the same state they stay so: a later checkpoint matches as well)
CHECKPOINTS = 5000
CHECKPOINTS_DENSE = 32
CHECKPOINT_EVERY = 64
#: after those, the worker records a *late* checkpoint every :data:`LATE_EVERY` decoded
#: lines or more (as many more as keep their cost under :data:`LATE_COST` of its time; at
#: most :data:`LATE_MAX`, every other one dropped and the spacing doubled past that), so
#: that a reader whose stream stopped at a name the worker missed (:class:`Stream`) can
#: meet it again after that line instead of reading the rest of its part itself
LATE_EVERY = 1024
LATE_COST = 0.02
LATE_MAX = 64
#: the bytes a worker's checkpoints take in all, marshalled (each written to a temporary file
#: as it is taken, then copied after the worker's counts): past it, no more are taken.  A
#: state holds what its decoder keeps (names, signatures), and each checkpoint is written
#: whole: 47 checkpoints of a JAX log of distinct 20 kB function names were 540 MB, held at
#: once.  The framework logs' worker writes 0.1-2.6 MB of them
CHECKPOINT_BYTES = 64 << 20
#: no late checkpoint is taken while the decoder's tables hold more entries than this: a
#: state is built and marshalled whole, about 150 bytes an entry at once (90 MB more in the
#: worker of an 8 GB TensorFlow log of a new cluster per compilation, 630,000 of them).
#: After a name such a worker missed, the reader before it reads on to the part's end itself
LATE_MAX_ENTRIES = 100_000
#: seconds a worker waits for the next worker's checkpoints before it reads that part itself
WAIT_S = 30.0
#: a worker looks whether its parent is still there every this many decoded lines
PARENT_CHECK_EVERY = 4096
#: seconds between looks at a file another process is still writing (first, at most): a
#: worker's events, a file the team publishes
PAUSE_S = (0.0005, 0.01)
#: the number of processes per input (1: no workers)
WORKERS_ENV = "RECOMPILE_DOCTOR_WORKERS"

#: a checkpoint: (line, state, recognized, unrecognized, malformed, events so far)
Checkpoint = tuple[int, object, int, int, int, int]
#: how the lines a process decodes are made: (its blocks, its counters, lines before)
MakeLines = Callable[[Blocks, "Counted", int], FastLines]


def one_process_per_input() -> None:
    """Read every input of this process with one process (a pool's worker: the pool has
    the CPUs)."""
    os.environ[WORKERS_ENV] = "1"


def processes_for(f: BinaryIO, st: ReadStats) -> int:
    """How many processes read the input ``f`` (opened for the first pass): more than one
    only for a big regular file, not copied (gzip: one whose trailer tells the size of its
    text), in a process where forking is safe."""
    size = text_size(f, st)
    if size is None or size < _reader.PARALLEL_MIN_BYTES:
        return 1
    return min(usable(), max(2, size // PART_MIN_BYTES))


def text_size(f: BinaryIO, st: ReadStats) -> int | None:
    """The size of the text of the input ``f`` for splitting it into parts (None: it cannot
    be split: not a regular file, a copy, a lone-CR view, gzip of unknown size)."""
    if st.spooled or st.size is None:
        return None
    if st.compressed:
        return gzip_text_size(f)
    if not isinstance(f, io.BufferedReader) or not isinstance(f.raw, io.FileIO):
        return None  # (a lone-CR view)
    return st.size


def threads() -> int:
    """The threads of this process: as the system counts them where it tells (Linux), which
    sees the threads a C library started (a BLAS or Arrow thread pool, XLA's, a test
    runner's IO thread) that :mod:`threading` does not know of; else those it knows."""
    try:
        with open("/proc/self/stat", "rb") as f:
            stat = f.read()
        # (the fields after the command's name, which ends at the last ")": the number
        # of threads is the 20th field, the 18th after it)
        return max(int(stat[stat.rindex(b")") + 2 :].split()[17]), threading.active_count())
    except (OSError, ValueError, IndexError):
        return threading.active_count()


def usable() -> int:
    """How many processes may read an input here and now (1: forking is not safe)."""
    wanted = os.environ.get(WORKERS_ENV, "").strip()
    if wanted in ("0", "1"):
        return 1
    if not hasattr(os, "fork") or sys.platform == "darwin":
        return 1  # macOS: system libraries are not fork-safe
    if threads() != 1:
        return 1  # another thread could hold a lock the worker needs
    import multiprocessing  # only here: not at every start

    if multiprocessing.current_process().daemon:
        return 1  # a pool's worker (the fleet's): the pool has the CPUs
    if wanted.isdigit():
        return min(int(wanted), 64)
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    return max(1, min(cpus, MAX_PROCESSES))


def share_for(decoder: Decoder) -> float:
    """The parent's share (:data:`PARENT_SHARE`) for inputs read with ``decoder``: its
    class's ``PARENT_SHARE`` if it names one (a format whose lines make few events leaves
    the parent little to do after its part: a bigger share, as the torch formats name)."""
    share: float = getattr(type(decoder), "PARENT_SHARE", PARENT_SHARE)
    return share


def seams_for(decoder: Decoder) -> tuple[bytes, ...]:
    """The literals of the lines a part read with ``decoder`` begins at when one comes soon
    after its split (:data:`SEAM_WINDOW`): its class's ``PART_SEAMS``.  A format names them
    when a worker begun in the middle of one of its messages holds state the reader from the
    start never has and never loses (torch.compile: a compilation seen by a worker only from
    its guard dump on waits, to the end, for a function name the lines before gave): the
    two never meet, and the parent reads the worker's part itself."""
    seams: tuple[bytes, ...] = getattr(type(decoder), "PART_SEAMS", ())
    return seams


def seam_in(data: bytes, seams: tuple[bytes, ...]) -> int | None:
    """Where in ``data`` (which begins at a line start) the first line holding one of
    ``seams`` begins (None: no line does)."""
    hit = min((k for k in (data.find(x) for x in seams) if k >= 0), default=-1)
    if hit < 0:
        return None
    return data.rfind(b"\n", 0, hit) + 1


def splits_for(
    line_start: Callable[[int], int | None],
    bom: int,
    done: int,
    size: int,
    processes: int,
    share: float = PARENT_SHARE,
) -> list[int]:
    """Where the workers' parts begin (after ``bom`` bytes of mark; each the start of a
    line, in order): the parent's part first, from ``done`` (the bytes read so far; its
    ``share`` of the rest with two processes), then equal parts of the ``size`` bytes of
    text.  ``line_start(pos)``: the start of the first line after byte ``pos`` (asked in
    increasing order).  Fewer parts when lines are long; none when the input is too
    small."""
    rest = size - bom - done
    if processes < 2 or rest <= 0:
        return []
    first = share * 2 / processes
    marks = [first + (1 - first) * k / (processes - 1) for k in range(processes - 1)]
    out: list[int] = []
    for mark in marks:
        pos = max(bom + done + int(rest * mark), bom + (out[-1] if out else done))
        split = line_start(pos)
        if split is None or split - bom >= size - bom:
            break
        if not out or split - bom > out[-1]:
            out.append(split - bom)
    return out


def file_line_start(
    fd: int, size: int, seams: tuple[bytes, ...] = ()
) -> Callable[[int], int | None]:
    """``line_start`` of :func:`splits_for` for a regular file of ``size`` bytes: the first
    line start after a position, or the first line holding one of ``seams`` within
    :data:`SEAM_WINDOW` bytes of that."""

    def line_start(pos: int) -> int | None:
        while pos < size:
            chunk = os.pread(fd, 1 << 16, pos)
            if not chunk:
                return None
            k = chunk.find(b"\n")
            if k >= 0:
                start = pos + k + 1
                if seams and start < size:
                    seam = seam_in(os.pread(fd, SEAM_WINDOW, start), seams)
                    if seam is not None:
                        return start + seam
                return start
            pos += len(chunk)
        return None

    return line_start


class StreamLineStart:
    """``line_start`` of :func:`splits_for` for a stream read forward once (the text of a
    gzip file: each worker's part begins where the text decompressed to that point has
    its first line start; the bytes before the last line start found are not kept).  A
    stream that breaks has no line start past the break."""

    def __init__(self, stream: BinaryIO, seams: tuple[bytes, ...] = ()) -> None:
        # (one decompressor step a read: a stream that breaks gives what came before)
        self._read: Callable[[int], bytes] = getattr(stream, "read1", stream.read)
        self._base = 0  # the offset of _buf[0]
        self._buf = b""
        self._seams = seams  # (as file_line_start's)

    def __call__(self, pos: int) -> int | None:
        pos = max(pos, self._base)
        while True:
            at = pos - self._base
            k = self._buf.find(b"\n", at) if at < len(self._buf) else -1
            if k >= 0:
                self._base += k + 1
                self._buf = self._buf[k + 1 :]
                if self._seams:
                    self._to_seam()
                return self._base
            # no line starts in what is held (or it all lies before pos): none of it is
            # needed, whatever the length of a line
            self._base += len(self._buf)
            try:
                self._buf = self._read(1 << 20)
            except BROKEN_STREAM:  # (the parts before the break are split as they are)
                return None
            if not self._buf:
                return None

    def _to_seam(self) -> None:
        """Move on from the line start held to the first line holding a seam within
        :data:`SEAM_WINDOW` bytes, if one does (reading that far ahead)."""
        more = [self._buf]
        held = len(self._buf)
        while held < SEAM_WINDOW:
            try:
                got = self._read(1 << 20)
            except BROKEN_STREAM:  # (a seam before the break is as good)
                break
            if not got:
                break
            more.append(got)
            held += len(got)
        self._buf = b"".join(more)
        k = seam_in(self._buf[:SEAM_WINDOW], self._seams)
        if k is not None:
            self._base += k
            self._buf = self._buf[k:]


class _Orphaned(Exception):
    """A worker's parent is gone."""


@dataclasses.dataclass(slots=True)
class Counts:
    """Lines of a part by how they were read."""

    recognized: int = 0
    unrecognized: int = 0
    malformed: int = 0


class Match(NamedTuple):
    """The state of the reading process equals worker ``worker``'s at its checkpoint
    ``checkpoint``: from there on the events are that worker's."""

    worker: int
    checkpoint: int
    #: the line of that checkpoint (the last line the reading process decoded itself)
    line: int = 0


#: where to look for a worker again (:class:`Reading`): its first checkpoints, the line
#: from which one may match, and a call that gives all of them, the late ones too (it waits
#: for the worker to end), asked once the first ones are passed
Retry = tuple[list[Checkpoint], int, Callable[[], Sequence[Checkpoint] | None]]


class Reading:
    """What a process reading past its own part is reading now (:func:`read_onward`), and
    whether to look for the part's worker again after a stream of its events stopped
    (``retry``)."""

    def __init__(self, lines: FastLines) -> None:
        self.lines = lines
        self.retry: Retry | None = None

    def take_retry(self) -> Retry | None:
        retry, self.retry = self.retry, None
        return retry


def read_onward(
    team: Team,
    blocks: Blocks,
    offset: int,
    first: int,
    make_lines: Callable[[Blocks, int], FastLines],
    decoder: Decoder,
    reading: Reading,
    among: bool = False,
) -> Iterator[tuple[int, str] | Match]:
    """The lines of worker ``first``'s part and the parts after it, for a process that has
    read up to that part with ``decoder`` (its ``blocks`` began ``offset`` bytes after the
    mark; ``reading`` holds the lines it reads now).  Each line is followed, once decoded
    (when this generator resumes), by a check against the part's worker; a :class:`Match`
    after the line where the states are equal -- or, with ``among`` (the parent, which
    read the log from its start), where the worker's looked-up names are among this
    decoder's (:func:`~._checkpoint.agrees`; what the worker then misses is checked as its
    events are taken: :class:`Stream`).  The parent and the workers read on alike."""
    splits = team.splits
    for k in range(first, len(splits) + 1):
        blocks.go_on()
        blocks.limit = splits[k] - offset if k < len(splits) else None
        reading.lines = make_lines(blocks, reading.lines.lineno)
        lines = reading.lines.lines()
        passed = functools.partial(team.give_up, k)
        checks = _first_match(
            lines, decoder, team.checkpoints(k), passed, among, reading.take_retry
        )
        line = 0
        for got in checks:
            if isinstance(got, int):
                yield Match(k, got, line)
            else:
                line = got[0]
                yield got


def _first_match(
    lines: Iterator[tuple[int, str]],
    decoder: Decoder,
    target: Sequence[Checkpoint] | None,
    passed: Callable[[], None] | None = None,
    among: bool = False,
    again: Callable[[], Retry | None] | None = None,
) -> Iterator[tuple[int, str] | int]:
    """``lines``, each followed (once it has been decoded: when this generator resumes) by
    a check of ``decoder`` against the ``target`` checkpoints; the index of the first
    checkpoint matched comes after its line.  After the last checkpoint's line (or the
    match), the lines without checks; ``passed`` is called when the last checkpoint's line
    went by unmatched.  When this generator resumes after a match, ``again`` may give the
    checkpoints to look for once more (the stream of the worker's events stopped): those
    from a line on, by their index in that list, and past the last of them, the worker's
    late ones."""
    at = {cp[0]: i for i, cp in enumerate(target or ())}
    last = max(at, default=-1)
    lookups = lookups_of(decoder)
    more: Callable[[], Sequence[Checkpoint] | None] | None = None
    since = 0
    for lineno, raw in lines:
        yield lineno, raw
        if lineno > last and more is not None:  # (on to the late checkpoints)
            target, more = more(), None
            at = {cp[0]: j for j, cp in enumerate(target or ()) if cp[0] >= since}
            last = max(at, default=-1)
        if lineno > last:
            if target and passed is not None:
                passed()
            break
        i = at.get(lineno)
        if i is None or target is None:
            continue
        want = target[i][1]
        # (the sizes first: a decoder that learnt thousands of names takes milliseconds to
        # write its whole state, and a hundred checkpoints may be compared)
        if not fits(sizes(decoder), sizes_of(want), lookups if among else frozenset()):
            continue
        # (the decoder's state is not written: its looked-up entries are looked up)
        met = meets(decoder, want, among)
        del want
        if met:
            yield i
            retry = again() if again is not None else None
            if retry is None:
                break
            target, since, more = retry
            at = {cp[0]: j for j, cp in enumerate(target) if cp[0] >= since}
            last = max(at, default=-1)
            passed = None  # (nothing to stop: the worker's events are wanted again)
    yield from lines


@dataclasses.dataclass(slots=True)
class Part:
    """What a worker wrote: its checkpoints (each read from its file when asked for, while
    the team's files are open), its counts and reading at the end (``lines``: the last
    line's number; ``nbytes``: read from its start), whom it handed over to (``(worker,
    checkpoint)``; None: it read to the end), how many events it wrote, the number of its
    part's first line."""

    checkpoints: Sequence[Checkpoint]
    totals: Counts
    lines: int
    nbytes: int
    handoff: tuple[int, int] | None
    written: int
    first: int


class _Member:
    """One forked worker: its process and files."""

    def __init__(self, pid: int, events: IO[bytes], meta: IO[bytes]) -> None:
        self.pid = pid
        self.events = events
        self.meta = meta
        self.status: int | None = None

    def exited(self, block: bool) -> bool:
        if self.status is None:
            pid, status = os.waitpid(self.pid, 0 if block else os.WNOHANG)
            if pid == 0:
                return False
            self.status = status
        return True


class Team:
    """The workers of one input: worker ``k`` (1-based) decodes from ``splits[k-1]`` (bytes
    after a mark of ``bom`` bytes) to the next split and on past it until it hands over."""

    def __init__(
        self,
        path: str,
        f: BinaryIO,
        bom: int,
        splits: list[int],
        decoder: Decoder,
        make_lines: MakeLines,
        compressed: bool = False,
    ) -> None:
        import tempfile  # (here: not at every start)

        self.path = path
        self.compressed = compressed  # (gzip: a worker decompresses up to its part)
        self.bom = bom
        self.splits = splits
        self.dir = tempfile.mkdtemp(prefix="recompile-doctor-")
        self.members: list[_Member | None] = []  # worker k is members[k - 1]
        self.stopped: set[int] = set()  # the workers stopped because no reader met them
        self._published: set[str] = set()
        self._parent = os.getpid()
        st = os.fstat(f.fileno())
        ident = (st.st_dev, st.st_ino)
        try:
            for k in range(1, len(splits) + 1):
                self.members.append(self._fork(k, ident, decoder, make_lines))
        except BaseException:  # (no temporary file): the workers started so far go
            self.close()
            raise

    def _fork(
        self, k: int, ident: tuple[int, int], decoder: Decoder, make_lines: MakeLines
    ) -> _Member | None:
        """Start worker ``k`` (None: no process to spare, the part is read by the one
        before)."""
        import signal
        import tempfile

        events = tempfile.TemporaryFile(dir=self.dir)  # noqa: SIM115 - closed by close()
        try:
            meta = tempfile.TemporaryFile(dir=self.dir)  # noqa: SIM115
        except BaseException:
            events.close()
            raise
        try:
            pid = os.fork()
        except OSError:
            events.close()
            meta.close()
            self._fail(k)
            return None
        if pid == 0:  # the worker: never returns
            code = 1
            try:
                signal.signal(signal.SIGINT, signal.SIG_DFL)
                # (the process is ours, whatever the host's collector: see gc_pause)
                collect_less_often()
                self._work(k, ident, decoder, make_lines, events, meta)
                code = 0
            except _Orphaned:  # the parent is gone, and cannot remove the team's files
                import shutil

                shutil.rmtree(self.dir, ignore_errors=True)
            except BaseException:
                self._fail(k)  # (the workers after it stop waiting for it)
            finally:
                os._exit(code)
        return _Member(pid, events, meta)

    # -- files the workers share ---------------------------------------------------------
    def _publish(self, name: str, value: Any) -> None:
        """Write ``value`` to the team's file ``name`` whole, or not at all."""
        path = os.path.join(self.dir, name)
        self._published.add(name)
        if value is None:
            with open(path + ".failed", "wb"):
                pass
            return
        tmp = f"{path}.{os.getpid()}"
        with open(tmp, "wb") as out:
            put_record(out, value)
        os.replace(tmp, path)

    def _fail(self, k: int) -> None:
        """Worker ``k`` failed: it says so first (:meth:`failed`), then what it has not
        published yet says so too."""
        self._publish(f"w-{k}", None)
        for name in (f"n-{k}", f"cp-{k}"):
            if name not in self._published:
                self._publish(name, None)

    def failed(self, k: int) -> bool:
        """Whether worker ``k`` failed (or never started).  Asked of the files, not of the
        process: a worker that has said it failed may not have exited yet when the reader
        before it is done with its part."""
        m = self.members[k - 1]
        if m is None or self._read(f"w-{k}")[0]:
            return True
        return m.exited(block=False) and m.status != 0

    def _read(self, name: str) -> tuple[bool, Any]:
        """(whether the file is there, its value: None for a failure)."""
        path = os.path.join(self.dir, name)
        if os.path.exists(path + ".failed"):
            return True, None
        try:
            with open(path, "rb") as f:
                got = record_at(f.fileno(), 0)
        except FileNotFoundError:
            return False, None
        return (False, None) if got is None else (True, got[0])

    def _await(self, name: str, gone: Callable[[], bool] | None = None) -> Any:
        """The value of the team's file ``name`` once it is there (None: the worker that
        writes it failed, ``gone`` says it is no more, or :data:`WAIT_S` passed)."""
        deadline = time.monotonic() + WAIT_S
        pause = PAUSE_S[0]
        while True:
            there, value = self._read(name)
            if there:
                return value
            if gone is None:
                self._parent_alive()
            if gone is not None and gone():
                return self._read(name)[1]
            if gone is None and time.monotonic() > deadline:
                return None
            time.sleep(pause)
            pause = min(pause * 2, PAUSE_S[1])

    # -- a worker ------------------------------------------------------------------------
    def _parent_alive(self) -> None:
        """In a worker: raise :class:`_Orphaned` if the parent is gone (killed: it can
        neither take the worker's events nor remove the team's files)."""
        if os.getppid() != self._parent:
            raise _Orphaned

    def _work(
        self,
        k: int,
        ident: tuple[int, int],
        decoder: Decoder,
        make_lines: MakeLines,
        events: IO[bytes],
        meta: IO[bytes],
    ) -> None:
        self._parent_alive()
        if hasattr(decoder, "pending_last"):
            decoder.pending_last = None  # the parent's walk back: not this process's
        reading_a_part()  # (a decoder may then refuse a line: ReadAlone, and this one fails)
        # what its decoder looks up and misses: a reader that knew more may have found it
        missed = record_misses(decoder)
        splits, bom = self.splits, self.bom
        start = splits[k - 1]
        with open(self.path, "rb", buffering=0) as file:
            st = os.fstat(file.fileno())
            if (st.st_dev, st.st_ino) != ident:
                raise OSError("not the file the parent reads")
            f = decompressed(file, self.path) if self.compressed else file
            # each worker counts the lines of the part before its own (the first: from the
            # start), and adds up the counts of the workers before it
            lo = bom + splits[k - 2] if k > 1 else 0
            self._publish(f"n-{k}", _newlines(f, lo, bom + start))
            before = 0
            for i in range(1, k + 1):
                n = self._await(f"n-{i}")
                if n is None:
                    raise OSError("a worker before this one failed")
                before += n
            f.seek(bom + start)
            blocks = Blocks(f, self.path)
            c = Counts()
            out = EventWriter(events)
            cps: list[Checkpoint] = []  # (the first ones, published: their states)
            kept = _Kept()
            late = _Late(kept)
            published = False
            blocks.limit = splits[k] - start if k < len(splits) else None
            fl = make_lines(blocks, c, before)
            lines = fl.lines()
            decoded = 0
            while True:
                # the lines up to the next one after which there is something to do, in
                # one call (compiled in a compiled build: this loop runs once per line)
                stop = _next_stop(decoded, late)
                n, lineno = decode_into(lines, decoder, c, out, missed, stop - decoded)
                decoded += n
                if decoded < stop:  # (the part's lines ended)
                    break
                if not decoded % PARENT_CHECK_EVERY:
                    self._parent_alive()
                if not kept.full and (
                    decoded <= CHECKPOINTS_DENSE
                    or (decoded <= CHECKPOINTS and decoded % CHECKPOINT_EVERY == 0)
                ):
                    cp = checkpoint(decoder)
                    if cp is not None:
                        taken: Checkpoint = (lineno, cp, *_counted(c), out.count)
                        if kept.add(taken):
                            cps.append(taken)
                    del cp
                if decoded == CHECKPOINTS:  # all of them: the reader before may use them
                    self._publish(f"cp-{k}", cps)
                    published = True
                elif decoded > CHECKPOINTS and late.due(decoded):
                    late.take(decoder, lineno, c, out.count, decoded)
            if not published:
                self._publish(f"cp-{k}", cps)
            handoff: tuple[int, int] | None = None
            reading = Reading(fl)
            onward = read_onward(  # on into the next parts, until one takes over
                self, blocks, start, k + 1, lambda b, n: make_lines(b, c, n), decoder, reading
            )
            for n, got in enumerate(onward, 1):
                if isinstance(got, Match):
                    handoff = (got.worker, got.checkpoint)
                    break
                if not n % PARENT_CHECK_EVERY:
                    self._parent_alive()
                res = decoder.decode(*got)
                count(res, c)
                if missed:
                    out.missed(got[0], missed)
                    missed.clear()
                out.add(res.events)
            if blocks.broken is not None:  # (gzip ending early: the reader before sees it)
                raise OSError("the input breaks in this part")
            if handoff is None:
                if residual_of(decoder):  # (a reader with a residue ends it itself)
                    import pickle

                    self._publish(f"end-{k}", pickle.dumps(unrecorded(decoder), protocol=5))
                    out.ending()
                ended = tuple(decoder.finish())
                if missed:
                    out.missed(reading.lines.lineno + 1, missed)
                    missed.clear()
                out.add(ended)
            out.flush()
            read = (reading.lines.lineno, blocks.consumed - blocks.lost)
            # (the checkpoints, the late ones too, each in a record of their own, read when
            # asked for: Team.all_checkpoints)
            put_indexed(meta, (_counted(c), read, handoff, out.count, before + 1), kept.dumped)
            meta.flush()
            kept.close()

    # -- the parent's side ---------------------------------------------------------------
    def checkpoints(self, k: int) -> list[Checkpoint] | None:
        """Worker ``k``'s checkpoints, once published (None: it failed).  The parent sees
        its workers end; a worker waits at most :data:`WAIT_S`."""
        if os.getpid() != self._parent:
            return self._await(f"cp-{k}")  # type: ignore[no-any-return]
        m = self.members[k - 1]
        if m is None:
            return None
        return self._await(f"cp-{k}", lambda: m.exited(block=False))  # type: ignore[no-any-return]

    def ended(self, k: int) -> bytes | None:
        """Worker ``k``'s decoder as it was before its ``finish`` (pickled), once it has
        exited (None: it failed, or wrote none)."""
        part = self.part(k)
        if part is None:
            return None
        there, value = self._read(f"end-{k}")
        return value if there and isinstance(value, bytes) else None

    def all_checkpoints(self, k: int) -> Sequence[Checkpoint] | None:
        """Worker ``k``'s checkpoints, the late ones too, once it has exited (None: it
        failed)."""
        part = self.part(k)
        return part.checkpoints if part is not None else None

    def part(self, k: int) -> Part | None:
        """What worker ``k`` wrote, once it has exited (None: it failed)."""
        m = self.members[k - 1]
        if m is None or not m.exited(block=True) or m.status != 0:
            return None
        try:
            got = Indexed.at(m.meta.fileno(), 0)
            if got is None:
                return None
            (totals, (lines, nbytes), handoff, written, first), cps = got
        except (ValueError, TypeError):
            return None
        return Part(cps, Counts(*totals), lines, nbytes, handoff, written, first)

    def give_up(self, k: int) -> None:
        """The reader before worker ``k``'s part went past its last checkpoint without
        meeting it: the worker's events will never be taken, so it is stopped now rather
        than left to spend a CPU for nothing (the parent only: the workers are its
        children).  What other workers need of it (its line count, its checkpoints) is
        published by then."""
        if os.getpid() != self._parent:
            return
        m = self.members[k - 1]
        if m is None or m.status is not None:
            return
        import signal

        with contextlib.suppress(ProcessLookupError):
            os.kill(m.pid, signal.SIGKILL)
        m.exited(block=True)
        self.stopped.add(k)

    def close(self) -> None:
        """Stop the workers still running; drop their files."""
        import shutil
        import signal

        for m in self.members:
            if m is None:
                continue
            if m.status is None:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(m.pid, signal.SIGKILL)
                m.exited(block=True)
            m.events.close()
            m.meta.close()
        shutil.rmtree(self.dir, ignore_errors=True)


class _Kept:
    """A worker's checkpoints, each marshalled to a temporary file as it is taken (whole
    decoder states: not held as bytes), :data:`CHECKPOINT_BYTES` of them at most."""

    def __init__(self) -> None:
        #: in the order taken (the first ones, then the late ones): their places in the file
        self.dumped: list[Dumped] = []
        self._file: IO[bytes] | None = None
        self._bytes = 0  # (written to the file, those dropped since included)
        #: one was refused: no more are taken (a decoder's state mostly grows, and each
        #: refused one was built and marshalled whole for nothing)
        self.full = False

    def add(self, cp: Checkpoint) -> bool:
        """Write ``cp`` to the file (False: it would take the worker's checkpoints past
        :data:`CHECKPOINT_BYTES`: it is not kept, and none after it)."""
        if self._file is None:
            import tempfile  # (only here: not at every start)

            # (closed by close(); gone with the process whatever the way it ends)
            self._file = tempfile.TemporaryFile(prefix="recompile-doctor-cp-")  # noqa: SIM115
        got = Dumped.to(self._file, cp, CHECKPOINT_BYTES - self._bytes)
        if got is None:
            self.full = True
            return False
        self._bytes += got.size
        self.dumped.append(got)
        return True

    def close(self) -> None:
        """Remove the checkpoints' temporary file (once they are copied)."""
        if self._file is not None:
            self._file.close()


class _Late:
    """A worker's late checkpoints (:data:`LATE_EVERY`): spaced so that writing them costs
    at most :data:`LATE_COST` of the worker's time, and no more than :data:`LATE_MAX`."""

    def __init__(self, kept: _Kept) -> None:
        self._kept = kept
        self.taken = 0  # (the last entries of its list)
        self.every = LATE_EVERY
        self.next = CHECKPOINTS + LATE_EVERY
        self.since = time.perf_counter()  # (the end of the last one)
        self.decoded = CHECKPOINTS  # (the lines decoded by then)

    def due(self, decoded: int) -> bool:
        return decoded >= self.next

    def take(self, decoder: Decoder, lineno: int, c: Counts, events: int, decoded: int) -> None:
        t0 = time.perf_counter()
        if self._kept.full or sum(n for _, n in sizes(decoder) if n is not None) > LATE_MAX_ENTRIES:
            self.next = decoded + self.every
            self.since, self.decoded = t0, decoded
            return
        cp = checkpoint(decoder)
        if cp is not None and self._kept.add((lineno, cp, *_counted(c), events)):
            self.taken += 1
            if self.taken > LATE_MAX:  # (their bytes stay in the file, unread)
                dumped = self._kept.dumped
                first = len(dumped) - self.taken
                del dumped[first::2]
                self.taken = len(dumped) - first
                self.every *= 2
        del cp
        t1 = time.perf_counter()
        # the next one once the worker has decoded for 1/LATE_COST times what this one took
        lines_per_s = (decoded - self.decoded) / max(t0 - self.since, 1e-9)
        self.next = decoded + max(self.every, int((t1 - t0) / LATE_COST * lines_per_s))
        self.since, self.decoded = t1, decoded


def _next_stop(decoded: int, late: _Late) -> int:
    """The number of decoded lines, past ``decoded``, after which a worker next has
    something to do besides decoding: look whether its parent is still there
    (:data:`PARENT_CHECK_EVERY`), take a checkpoint (:data:`CHECKPOINTS_DENSE`,
    :data:`CHECKPOINT_EVERY`), publish them (:data:`CHECKPOINTS`) or take a late one
    (``late``)."""
    d = decoded + 1
    parent = decoded - decoded % PARENT_CHECK_EVERY + PARENT_CHECK_EVERY
    if d <= CHECKPOINTS_DENSE:
        return min(parent, d)
    if d <= CHECKPOINTS:
        every = -(-d // CHECKPOINT_EVERY) * CHECKPOINT_EVERY
        return min(parent, every, CHECKPOINTS)
    return min(parent, max(d, late.next))


def _counted(c: Counts) -> tuple[int, int, int]:
    return (c.recognized, c.unrecognized, c.malformed)


def _newlines(f: BinaryIO, lo: int, hi: int) -> int:
    """The newlines in bytes ``lo`` to ``hi`` of ``f``."""
    buf = bytearray(max(1, min(8 << 20, hi - lo)))  # (8 MB zeroed is milliseconds)
    view = memoryview(buf)
    newlines = chosen().newlines  # (in C where it is built: a tenth of the time)
    f.seek(lo)
    n = 0
    done = lo
    while done < hi:
        k = f.readinto(view[: min(len(buf), hi - done)])  # type: ignore[attr-defined]
        if not k:
            break
        n += newlines(buf, 0, k)
        done += k
    return n


class Stream:
    """The events of the workers' parts from a :class:`Match` on (the events of worker
    ``k`` after its checkpoint ``i``, then of the worker it handed over to, and so on),
    read while the workers still write them.  ``taken``: the events given so far; ``chain``
    once all are given, ``(worker, part, checkpoint)`` for each part; None after
    :meth:`events` ends while a worker of the chain failed: whoever reads on must decode
    the lines after the match itself, and leave out the first ``taken`` events."""

    def __init__(self, team: Team, match: Match, reader: Decoder | None = None) -> None:
        self.team = team
        self.match = match
        #: the decoder of the process that matched (its state stays that of the match):
        #: what a worker missed later must not be known to it
        self.reader = reader
        if reader is not None:
            pack_lookups(reader)
        self.taken = 0
        self.chain: list[tuple[int, Part, int]] | None = None
        #: the parts given in full before a worker failed, and that worker
        self.given: list[tuple[int, Part, int]] = []
        self.failed: int | None = None
        #: the line where a worker missed what the reader knew (then ``failed`` is it)
        self.missed_at: int | None = None

    def events(self) -> Iterator[list[TypedEvent]]:
        """The workers' events from where the reader's part met them, in runs of at most
        ``RUN_MAX`` (as :func:`.follow` gives them), none empty."""
        team = self.team
        done = self.given
        at: tuple[int, int] | None = (self.match.worker, self.match.checkpoint)
        extra: dict[str, dict[object, object]] | None = None  # the reader's residue
        while at is not None:
            w, j = at
            self.failed = w  # (until its part is given in full)
            m = team.members[w - 1]
            cps: Sequence[Checkpoint] | None = team.checkpoints(w) if m is not None else None
            if cps is not None and j >= len(cps):  # (a late one: the worker has ended)
                cps = team.all_checkpoints(w)
            if m is None or cps is None or j >= len(cps):
                return
            cp = cps[j]  # (a late one is read from the worker's file)
            if extra is None:
                extra = residue(self.reader, cp[1]) if self.reader is not None else {}
            skip = cp[5]
            read = skip
            since = cp[0]  # (the reader decoded the lines up to here itself)
            # (the counts of the checkpoint it is taken over at are all that is asked of it
            # afterwards; not its decoder's state, held while the part's events are taken:
            # a worker's late checkpoints are whole states, 18 MB on a 1 GB torch log)
            counts_at: Checkpoint = (cp[0], None, cp[2], cp[3], cp[4], cp[5])
            del cps, cp
            ending: list[TypedEvent] | None = None  # (the reader ends the input itself)
            for got in follow(
                m.events.fileno(), functools.partial(m.exited, block=False), skip, PAUSE_S
            ):
                if type(got) is list:  # (a run of events, as the worker wrote them)
                    read += len(got)
                    if ending is None:
                        self.taken += len(got)  # (given: the reader takes them all)
                        yield got
                    continue
                if got is ENDED:
                    if extra:
                        ending = self._end_with(w, extra)
                        if ending is None:
                            return
                    continue
                assert isinstance(got, Missed)
                reader = self.reader
                if (
                    ending is None
                    and got.line > since
                    and reader is not None
                    and knew(reader, got.keys)
                ):
                    self.missed_at = got.line
                    return
            part = team.part(w)
            if part is None or read != part.written:
                return
            if ending is not None:
                self.taken += len(ending)
                yield from runs_of(ending)
            done.append((w, dataclasses.replace(part, checkpoints=[counts_at]), 0))
            at = part.handoff
            del part
        self.failed = None
        self.chain = done

    def _end_with(self, w: int, extra: dict[str, dict[object, object]]) -> list[TypedEvent] | None:
        """The events of the end of the input from worker ``w``'s decoder as it was before
        its ``finish`` with the reader's residue ``extra`` added (None: that decoder cannot
        be had, or the residue does not fit it)."""
        import pickle

        got = self.team.ended(w)
        if got is None or self.reader is None:
            return None
        try:
            final = pickle.loads(got)
        except Exception:  # (whatever a broken file gives: the reader reads on instead)
            return None
        if not with_residue(final, self.reader, extra):
            return None
        return list(final.finish())


def how_read(team: Team, stream: Stream | None, missed: Sequence[tuple[int, int]] = ()) -> str:
    """How the parts of the input were read, in one line (logged with ``-v``): where each
    worker's part was taken over, and which parts were read again by the process before
    (their states never met, or its worker failed).  A part read again costs a second
    process's time for nothing: the reason to look.  ``missed``: (worker, line) where an
    earlier stream of the workers' events stopped at a name the worker missed (its part
    was then taken over again further on, or read to the end by this process)."""
    n = len(team.splits)
    said: list[str] = []
    reader = "this process"
    at: tuple[int, int] | None = (
        (stream.match.worker, stream.match.checkpoint) if stream is not None else None
    )
    given = {w: (part, j) for w, part, j in (stream.given if stream is not None else ())}
    failed = stream.failed if stream is not None else None
    for k in range(1, n + 1):
        name = f"part {k + 1}/{n + 1}"
        if failed is not None and stream is not None and k >= stream.match.worker:
            # (this process decoded on from the match, leaving out the events given)
            why = (
                f"worker {failed} failed"
                if stream.missed_at is None
                else f"at line {stream.missed_at:,} worker {failed} missed a name this process knew"
            )
            said.append(f"{name}: read again by this process ({why})")
        elif at is None or at[0] != k:
            why = (
                "their states never met, and its worker was stopped"
                if k in team.stopped
                else "its worker failed"
                if team.failed(k)
                else "their states never met"
            )
            said.append(f"{name}: read again by {reader} ({why})")
        elif k not in given:  # (not all of the stream was taken: nothing more is known)
            said.append(f"{name}: taken over")
            break
        else:
            part, j = given[k]
            line = part.checkpoints[j][0]
            said.append(
                f"{name} (from line {part.first:,}): taken over at line {line:,} "
                f"({line - part.first + 1:,} read twice)"
            )
            reader, at = f"the process of part {k + 1}", part.handoff
    for w, line in missed:
        if stream is not None and (w, line) == (stream.failed, stream.missed_at):
            continue  # (said above: its part was read on by this process)
        said.append(f"worker {w} missed a name this process knew at line {line:,}")
    return f"{team.path}: read by {n + 1} processes: " + "; ".join(said)
