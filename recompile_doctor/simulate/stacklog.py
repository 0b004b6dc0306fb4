"""The real stack's log lines, with its prefixes, at its verbosity, on its streams.

Three producers write into one run: TensorFlow's C++ logger (``LOG``/``VLOG`` lines on stderr,
``%Y-%m-%d %H:%M:%S.%06d: I file.cc:LINE] msg``), Poplar's ``PO:ENGINE`` spdlog logger (stderr
unless ``POPLAR_LOG_DEST`` says otherwise; the SDK <= 2.2 prefix ``HH:MM:SS.mmm <tid> PO:ENGINE
[I] `` or the SDK >= 2.3 prefix ``<ISO>Z PO:ENGINE   <pid>.<tid> I: ``), and plain prints on stdout
(Keras progress, the compilation progress bar, the script's own output).

``run.log`` is the two streams merged in the order they were written, as
``python train.py > run.log 2>&1`` with line-buffered streams produces it; each stream alone
also goes to ``run.stdout.log`` and ``run.stderr.log`` (what ``2> run.stderr.log`` captures).  Time comes from a
simulated :class:`Clock`, so output never depends on the wall clock.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass
from typing import Literal, TextIO

from recompile_doctor.simulate.flags import LogSettings

Stream = Literal["stdout", "stderr"]

_EPOCH = _dt.datetime(2023, 4, 26, 9, 0, 0)


class Clock:
    """Simulated time in integer microseconds; starts at a date derived from the seed."""

    def __init__(self, seed: int) -> None:
        offset_s = (seed * 7919) % (86400 * 200)
        self.start = _EPOCH + _dt.timedelta(seconds=offset_s)
        self.us = 0

    def advance_ms(self, ms: float) -> None:
        self.us += max(0, round(ms * 1000))

    def advance_us(self, us: int) -> None:
        self.us += max(0, us)

    def now(self) -> _dt.datetime:
        return self.start + _dt.timedelta(microseconds=self.us)


@dataclass(frozen=True, slots=True)
class Style:
    """What differs between SDK generations in the printed text."""

    name: str
    sdk3: bool
    poplar_version: str
    poplar_package: str
    compile_cache_line: int  # xla_compilation_cache.cc line of "Compiled cluster using XLA!"
    attach_line: int  # poplar_executor.cc line of the attach message

    def attach_text(self, ordinal: int, ids: list[int]) -> str:
        joined = ",".join(str(i) for i in ids)
        if self.sdk3:
            n = len(ids)
            return (
                f"TensorFlow device /device:IPU:{ordinal} attached to {n} IPU"
                f"{'s' if n > 1 else ''} with Poplar device ID{'s' if n > 1 else ''}: {joined}"
            )
        return (
            f"Device /device:IPU:{ordinal} attached to IPU{'s' if len(ids) > 1 else ''}: {joined}"
        )


STYLES: dict[str, Style] = {
    "sdk3": Style("sdk3", True, "3.1.0 (e12d5f9f01)", "9c103dc348", 376, 1619),
    "sdk2.2": Style("sdk2.2", False, "2.2.0 (b48f8a1bd9)", "ab9c1a5d51", 250, 1465),
}

# Source locations of the TensorFlow-side messages (file, line).  Line numbers follow the
# r2.6/sdk-release-3.x sources where the reference notes give them; parsers match on the file.
COMPILER = "tensorflow/compiler/plugin/poplar/driver/poplar_compiler.cc"
EXECUTOR = "tensorflow/compiler/plugin/poplar/driver/poplar_executor.cc"
EXECUTABLE = "tensorflow/compiler/plugin/poplar/driver/poplar_executable.cc"
EXEC_CACHE = "tensorflow/compiler/plugin/poplar/driver/poplar_executable_cache.cc"
PLATFORM = "tensorflow/compiler/plugin/poplar/driver/poplar_platform.cc"
FLAGS = "tensorflow/compiler/plugin/poplar/driver/tools/flags.cc"
JIT_CACHE = "tensorflow/compiler/jit/xla_compilation_cache.cc"
MLIR_PASS = "tensorflow/compiler/mlir/mlir_graph_optimization_pass.cc"
MLIR_DUMP = "tensorflow/compiler/mlir/tensorflow/utils/dump_mlir_util.cc"
RANDOM_OPS = "tensorflow/compiler/tf2xla/kernels/random_ops.cc"
PARSE_FLAGS = "tensorflow/compiler/xla/parse_flags_from_env.cc"


class StackLog:
    """Writes the lines one simulated process prints, filtered by its logging settings."""

    def __init__(
        self,
        out: TextIO,
        clock: Clock,
        settings: LogSettings,
        style: Style,
        pid: int,
        poplar_out: TextIO | None = None,
        split: dict[Stream, TextIO] | None = None,
    ) -> None:
        self.out = out
        self.clock = clock
        self.settings = settings
        self.style = style
        self.pid = pid
        self.tid = pid
        self.poplar_out = poplar_out
        self.stream_counts: dict[Stream, int] = {"stdout": 0, "stderr": 0}
        self.lines = 0
        #: each stream alone as well, when set (``run.stdout.log``, ``run.stderr.log``)
        self.split = split

    # -- raw streams -------------------------------------------------------------------
    def write(self, text: str, stream: Stream = "stderr") -> None:
        """One physical line (``text`` has no newline) on ``stream``."""
        self.out.write(text + "\n")
        if self.split is not None:
            self.split[stream].write(text + "\n")
        self.stream_counts[stream] += 1
        self.lines += 1
        self.clock.us += 23  # printing takes time too: no two lines share a timestamp

    def stdout(self, text: str) -> None:
        self.write(text, "stdout")

    # -- TensorFlow C++ logging --------------------------------------------------------
    def vlog_on(self, path: str, level: int) -> bool:
        return self.settings.vlog_on(path, level)

    def tf(self, severity: str, path: str, line: int, msg: str) -> None:
        """A ``LOG(severity)`` line, printed if ``TF_CPP_MIN_LOG_LEVEL`` lets it through."""
        if self.settings.tf_on(severity):
            self.write(self.tf_prefix(severity, path, line) + msg)

    def vlog(self, level: int, path: str, line: int, msg: str) -> None:
        """A ``VLOG(level)`` line: severity ``I``, printed only if VLOG is on for ``path``."""
        if self.settings.vlog_on(path, level):
            self.write(self.tf_prefix("I", path, line) + msg)

    def tf_prefix(self, severity: str, path: str, line: int) -> str:
        t = self.clock.now()
        tid = f" {self.tid:7d}" if self.settings.log_thread_id else ""
        return f"{t:%Y-%m-%d %H:%M:%S}.{t.microsecond:06d}: {severity}{tid} {path}:{line}] "

    # -- Poplar spdlog -----------------------------------------------------------------
    def poplar_on(self, letter: str) -> bool:
        return self.settings.poplar_on(letter)

    def poplar(self, letter: str, msg: str, depth: int = 0) -> None:
        """A ``PO:ENGINE`` line at level ``letter`` (T, D, I, W, E); ``depth`` indents phases."""
        if not self.settings.poplar_on(letter):
            return
        t = self.clock.now()
        body = "  " * depth + msg
        if self.style.sdk3:
            text = (
                f"{t:%Y-%m-%dT%H:%M:%S}.{t.microsecond:06d}Z PO:ENGINE   "
                f"{self.pid}.{self.tid} {letter}: {body}"
            )
        else:
            text = (
                f"{t:%H:%M:%S}.{t.microsecond // 1000:03d} {self.tid} PO:ENGINE   [{letter}] {body}"
            )
        dest = self.settings.poplar_dest
        if dest == "stdout":
            self.write(text, "stdout")
        elif dest == "stderr" or self.poplar_out is None:
            self.write(text, "stderr")
        else:
            self.poplar_out.write(text + "\n")


def fmt_g(value: float) -> str:
    """C's ``%g`` (six significant digits), as Poplar prints RSS figures."""
    return f"{value:g}"
