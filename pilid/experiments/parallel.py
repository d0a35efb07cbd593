"""A pool of one-thread worker processes for trials that do not batch (``train.n_jobs > 1``).

On a few CPU cores, T independent one-thread trials in T/k processes beat k threads per trial
because small matrices do not scale across threads. Workers are started with the ``spawn``
method (no forked torch/OpenMP state) and with ``OMP_NUM_THREADS`` and friends set to 1 in their
environment before they import anything heavy.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed
from typing import Any

THREAD_ENV = (
    "OMP_NUM_THREADS",
    "MKL_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "NUMEXPR_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS",
)


@contextlib.contextmanager
def one_thread_env() -> Iterator[None]:
    """Set the thread-count variables to 1 for child processes started inside the block."""
    saved = {name: os.environ.get(name) for name in THREAD_ENV}
    os.environ.update({name: "1" for name in THREAD_ENV})
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _init_worker() -> None:
    os.environ.update({name: "1" for name in THREAD_ENV})
    import torch

    torch.set_num_threads(1)


def imap_processes(
    function: Callable[[Any], Any], jobs: Iterable[Any], n_jobs: int
) -> Iterator[Any]:
    """``function(job)`` for every job in ``n_jobs`` one-thread spawned processes.

    Results are yielded as they finish (any order), so the caller can record each at once.
    ``function`` must be a module-level function; jobs and results must pickle. An exception in
    a job is raised here (after the pool is shut down); a crashed worker raises
    ``BrokenProcessPool`` instead of hanging.
    """
    jobs = list(jobs)
    if not jobs:
        return
    context = multiprocessing.get_context("spawn")
    with one_thread_env():  # workers start on demand: keep the variables set while any may
        with ProcessPoolExecutor(
            max_workers=min(n_jobs, len(jobs)), mp_context=context, initializer=_init_worker
        ) as pool:
            futures = [pool.submit(function, job) for job in jobs]
            try:
                for future in as_completed(futures):
                    yield future.result()
            finally:
                for future in futures:
                    future.cancel()
