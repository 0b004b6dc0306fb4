"""The page's plots drawn in a fresh Python process, for a big run.

Matplotlib and numpy take about 26 MB once imported, and a run's memory after its analyses
is highest for the biggest logs (an 8 GB log's ~120 MB, mostly freed memory its allocator
keeps): drawn in this process, the plots were on top of it (the page of that log peaked at
183-188 MB).  The plots' pictures (:mod:`.pictures`: labels, joined bars, markers, the top
sums -- kilobytes) are worked out here; a fresh interpreter (the same Python, with this one's
module search path) reads them pickled on its standard input, draws them with :mod:`.plots`
and writes the SVGs back.  Same pictures, same bytes: the page is the same either way.
Where the child cannot be started, fails or does not answer within :data:`WAIT_S` (it is
then killed), the plots are drawn here.
"""

from __future__ import annotations

import pickle
import subprocess
import sys

from recompile_doctor.reports.pictures import CostPicture, TimelinePicture, TimelinePlot

#: compilations past which the page's plots are drawn in a fresh process (below, the run's
#: memory is small and the child's start-up, ~0.1 s, would be the larger cost)
APART_ABOVE = 100_000

#: seconds the fresh process is given (drawing takes about a second; matplotlib building its
#: font cache on a machine's first run, tens): past them it is killed and the plots are
#: drawn here, so that a child that hangs never hangs the report
WAIT_S = 300.0

Drawings = tuple[TimelinePlot | None, str | None]


def draw(
    timeline: TimelinePicture | None, cost: CostPicture | None, *, apart: bool = False
) -> Drawings:
    """The timeline and the cost plot drawn (None for a picture that is None); in a fresh
    process when ``apart``."""
    if apart and (timeline is not None or cost is not None):
        drawn = _in_child(timeline, cost)
        if drawn is not None:
            return drawn
    return _here(timeline, cost)


def _here(timeline: TimelinePicture | None, cost: CostPicture | None) -> Drawings:
    from recompile_doctor.reports import plots

    return (
        plots.draw_timeline(timeline) if timeline is not None else None,
        plots.draw_cost(cost) if cost is not None else None,
    )


#: what the fresh interpreter runs: the parent's module search path first (the same
#: package, whether installed or not, and nothing put before the standard library), then
#: the pictures, drawn
_CHILD = (
    "import pickle, sys\n"
    "sys.path[:] = pickle.load(sys.stdin.buffer)\n"
    "from recompile_doctor.reports.draw_apart import _main\n"
    "_main()\n"
)


def _in_child(timeline: TimelinePicture | None, cost: CostPicture | None) -> Drawings | None:
    """The drawings made by a fresh interpreter, or None where it could not make them."""
    if not sys.executable:
        return None
    sent = pickle.dumps(list(sys.path), protocol=pickle.HIGHEST_PROTOCOL) + pickle.dumps(
        (timeline, cost), protocol=pickle.HIGHEST_PROTOCOL
    )
    try:
        done = subprocess.run(
            [sys.executable, "-c", _CHILD],
            input=sent,
            capture_output=True,
            check=False,
            timeout=WAIT_S,
        )
    except (OSError, subprocess.TimeoutExpired):  # (run() kills a child out of time)
        return None
    if done.returncode != 0:
        return None
    try:
        drawn = pickle.loads(done.stdout)  # (written by the child started above)
    except Exception:  # (any failure: drawn here instead)
        return None
    if not (
        isinstance(drawn, tuple)
        and len(drawn) == 2
        and isinstance(drawn[0], TimelinePlot | None)
        and isinstance(drawn[1], str | None)
    ):
        return None
    return (drawn[0], drawn[1])


def _main() -> None:
    """The child's part: the pictures read from standard input (after the search path),
    drawn, and the drawings written to standard output."""
    timeline, cost = pickle.load(sys.stdin.buffer)  # (from our parent)
    sys.stdout.buffer.write(pickle.dumps(_here(timeline, cost), protocol=pickle.HIGHEST_PROTOCOL))
