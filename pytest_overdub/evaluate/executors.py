"""Where trials run: in this process, in local worker processes, or on an existing Dask cluster.

Every executor runs the same :func:`~.trial.run_trial` on the same picklable spec, and each trial writes
only its own folder, so where a trial ran does not change its result. ``--parallel N`` (N > 1) starts N
local worker processes (forked); ``--executor dask --scheduler ADDR`` submits to a running Dask cluster
(the ``distributed`` package, the ``[cluster]`` extra), keeping ``--parallel`` trials in flight (default:
the cluster's threads). Dask workers must see the run folder at the same path (a shared file system) and
have pytest-overdub installed. Stopping the eval stops local workers and their agents; on Dask it cancels
the trials not yet started, while the ones running finish or reach their time limit.
"""

from __future__ import annotations

import multiprocessing
from concurrent.futures import Executor, ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Iterator

from ..errors import OverdubError

EXECUTORS = ("local", "dask")


@dataclass
class Pool:
    """An executor (None: run in this process, one trial at a time) and how many trials to keep in flight."""

    executor: Executor | None
    window: int


@contextmanager
def open_executor(kind: str, *, parallel: int, scheduler: str | None) -> Iterator[Pool]:
    if kind == "dask":
        with _dask(scheduler, parallel=parallel) as pool:
            yield pool
    elif parallel <= 1:
        yield Pool(executor=None, window=1)
    else:
        with _local(parallel) as pool:
            yield pool


@contextmanager
def _local(parallel: int) -> Iterator[Pool]:
    from .agents import stop_on_sigterm

    context = multiprocessing.get_context("fork")
    executor = ProcessPoolExecutor(max_workers=parallel, mp_context=context, initializer=stop_on_sigterm)
    try:
        yield Pool(executor=executor, window=parallel)
    except BaseException:
        _stop_workers(executor)
        raise
    executor.shutdown(wait=True)


def _stop_workers(executor: ProcessPoolExecutor) -> None:
    """Stop the workers now: SIGTERM (each kills its agent's process group), then SIGKILL a laggard.
    ``_processes`` is the pool's own map of its worker processes (no public way to reach them)."""
    processes = list(getattr(executor, "_processes", {}).values())
    executor.shutdown(wait=False, cancel_futures=True)
    for proc in processes:
        proc.terminate()
    for proc in processes:
        proc.join(timeout=5)
        if proc.is_alive():
            proc.kill()


@contextmanager
def _dask(scheduler: str | None, *, parallel: int) -> Iterator[Pool]:
    if not scheduler:
        raise OverdubError("--executor dask needs --scheduler ADDR, the address of a running Dask scheduler "
                           "(e.g. tcp://10.0.0.5:8786)")
    try:
        from distributed import Client
    except ImportError:
        raise OverdubError("--executor dask needs the distributed package: pip install 'pytest-overdub[cluster]'") \
            from None
    try:
        client = Client(scheduler, timeout="20s")
    except (OSError, TimeoutError) as exc:
        raise OverdubError(f"--scheduler {scheduler}: cannot reach the Dask scheduler ({exc})") from None
    try:
        threads = sum(client.nthreads().values()) or 1
        executor = client.get_executor(pure=False)
        try:
            yield Pool(executor=executor, window=parallel if parallel > 1 else threads)
        except BaseException:
            executor.shutdown(wait=False)
            raise
    finally:
        client.close()

