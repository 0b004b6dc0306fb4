"""The executors the map step runs on: none (in this process), a local process pool, or an
existing Dask distributed cluster through ``distributed.Client(address).get_executor()``."""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Iterator
from concurrent.futures import Executor, Future, ProcessPoolExecutor
from contextlib import contextmanager
from multiprocessing.context import BaseContext
from typing import Any, TypeVar

from recompile_doctor.errors import RecompileDoctorError
from recompile_doctor.parsers._parallel import one_process_per_input

T = TypeVar("T")
#: seconds to wait for a scheduler to answer
CONNECT_TIMEOUT_S = 30


class InlineExecutor(Executor):
    """Runs each call at once in this process (``--jobs 1``)."""

    def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> Future[Any]:
        fut: Future[Any] = Future()
        try:
            fut.set_result(fn(*args, **kwargs))
        except BaseException as e:
            fut.set_exception(e)
        return fut


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


@contextmanager
def executor_for(scheduler: str | None, jobs: int | None) -> Iterator[tuple[Executor, int]]:
    """The executor ``fleet scan`` maps runs on, and how many workers it has; closed (and
    the client disconnected) after."""
    if scheduler is not None:
        try:
            from distributed import Client
        except ImportError:
            raise RecompileDoctorError(
                "--scheduler needs the dask distributed package (pip install 'dask[distributed]')"
            ) from None
        try:
            client = Client(scheduler, timeout=CONNECT_TIMEOUT_S, set_as_default=False)  # type: ignore[no-untyped-call]
        except (OSError, TimeoutError, ValueError) as e:
            raise RecompileDoctorError(
                f"cannot connect: {' '.join(str(e).split())}", path=scheduler
            ) from None
        try:
            ex = client.get_executor(pure=False)  # type: ignore[no-untyped-call]
            workers = len(client.scheduler_info().get("workers", {}))
            try:
                yield ex, max(1, workers)
            finally:
                ex.shutdown(wait=True)
        finally:
            client.close()  # type: ignore[no-untyped-call]
        return
    n = jobs if jobs is not None else default_jobs()
    if n <= 1:
        with InlineExecutor() as inline:
            yield inline, 1
        return
    # each run is read by one process: the pool has the CPUs
    with ProcessPoolExecutor(
        max_workers=n, mp_context=pool_context(), initializer=one_process_per_input
    ) as pool:
        yield pool, n


def pool_context() -> BaseContext:
    """How the local pool starts its workers: from a fork server where there is one (a
    fresh process, started before any worker, that forks each of them), never by forking
    this process, which has threads by then (Arrow's, started by ``import pyarrow``): a
    child forked from it could wait forever on a lock one of them held.  The
    server imports the analysis first (:data:`PRELOAD`), so that each worker starts with it."""
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context()  # (spawn, where there is no fork)
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(list(PRELOAD))
    return ctx


#: what the fork server imports before it forks the workers: the analysis, not the fleet's
#: tables (``import pyarrow`` starts threads, and the server must have none)
PRELOAD = ("recompile_doctor.api",)
