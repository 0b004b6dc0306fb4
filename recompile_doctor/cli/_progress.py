"""A progress bar on stderr for long inputs (only on a terminal, only for big inputs)."""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

#: seconds between two redraws of the bar
REDRAW_S = 0.1
#: inputs smaller than this (in total) get no progress bar
PROGRESS_MIN_BYTES = 50 * 1024 * 1024


def _total_size(paths: Sequence[str]) -> int:
    total = 0
    for p in paths:
        if p == "-":
            continue
        with contextlib.suppress(OSError):
            total += os.path.getsize(p)
    return total


@contextmanager
def progress_for(
    paths: Sequence[str], enabled: bool = True
) -> Iterator[Callable[[str, int], None] | None]:
    """Yield a callback ``(path, bytes_read)`` that drives a bar, or ``None`` when no bar is
    wanted (stderr not a terminal, or small inputs)."""
    total = _total_size(paths)
    if not enabled or total < PROGRESS_MIN_BYTES or not sys.stderr.isatty():
        yield None
        return
    from rich.console import Console
    from rich.progress import BarColumn, DownloadColumn, Progress, TimeRemainingColumn

    done: dict[str, int] = {}
    # redrawn from the updates, not by a thread of its own: a process with one thread may
    # fork a worker for the second half of a big log (parsers._parallel)
    with Progress(
        "[progress.description]{task.description}",
        BarColumn(),
        DownloadColumn(),
        TimeRemainingColumn(),
        console=Console(stderr=True),
        transient=True,
        auto_refresh=False,
    ) as bar:
        task = bar.add_task("reading logs", total=total)
        drawn = [0.0]

        def update(path: str, n: int) -> None:
            done[path] = n
            bar.update(task, completed=min(sum(done.values()), total))
            now = time.monotonic()
            if now - drawn[0] >= REDRAW_S:
                drawn[0] = now
                bar.refresh()

        yield update
