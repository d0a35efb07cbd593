"""One pool of one-thread worker processes, for trials and blocks of trials.

On a few CPU cores, independent one-thread jobs in k processes beat k threads per job because
small matrices do not scale across threads. Workers are started with the ``spawn`` method (no
forked torch/OpenMP state) with ``OMP_NUM_THREADS`` and friends set to 1 before they import
anything heavy, and they never outlive the process that started them:

- an exception or interrupt in the parent (Ctrl-C, SIGTERM turned into an exception by the
  runner, a closed iterator) kills every worker at once, before it is re-raised;
- Ctrl-C in a terminal reaches the whole process group: workers ignore SIGINT and leave the
  clean-up to the parent;
- a worker whose parent dies without cleaning up (SIGKILL) notices within half a second that it
  has been re-parented and exits.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import threading
import time
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
#: Seconds between a worker's checks that its parent is still alive.
PARENT_POLL_SECONDS = 0.5


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


@contextlib.contextmanager
def torch_threads(n: int) -> Iterator[None]:
    """Run the block with ``n`` torch intra-op threads, restoring the count afterwards."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def _watch_parent(parent_pid: int) -> None:
    while True:
        time.sleep(PARENT_POLL_SECONDS)
        if os.getppid() != parent_pid:  # re-parented: the parent died without cleaning up
            os._exit(1)


def _init_worker(parent_pid: int) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    os.environ.update({name: "1" for name in THREAD_ENV})
    threading.Thread(target=_watch_parent, args=(parent_pid,), daemon=True).start()
    import torch

    torch.set_num_threads(1)


def _kill_workers(pool: ProcessPoolExecutor) -> None:
    processes = list((getattr(pool, "_processes", None) or {}).values())
    for process in processes:
        with contextlib.suppress(Exception):
            process.kill()
    for process in processes:
        with contextlib.suppress(Exception):
            process.join(timeout=5)
    pool.shutdown(wait=False, cancel_futures=True)


def imap_processes(
    function: Callable[[Any], Any], jobs: Iterable[Any], n_jobs: int
) -> Iterator[Any]:
    """``function(job)`` for every job in ``n_jobs`` one-thread spawned processes.

    Results are yielded as they finish (any order), so the caller can record each at once.
    ``function`` must be a module-level function; jobs and results must pickle. An exception in
    a job is raised here after the other workers are killed; a crashed worker raises
    ``BrokenProcessPool`` instead of hanging. Use it as ``with contextlib.closing(...)`` so that
    an interrupt outside the loop also kills the workers at once.
    """
    jobs = list(jobs)
    if not jobs:
        return
    context = multiprocessing.get_context("spawn")
    with one_thread_env():  # workers start on demand: keep the variables set while any may
        pool = ProcessPoolExecutor(
            max_workers=min(n_jobs, len(jobs)),
            mp_context=context,
            initializer=_init_worker,
            initargs=(os.getpid(),),
        )
        futures = [pool.submit(function, job) for job in jobs]
        try:
            for future in as_completed(futures):
                yield future.result()
        except BaseException:  # an error, an interrupt, or the iterator closed early
            _kill_workers(pool)
            raise
        pool.shutdown(wait=True)
