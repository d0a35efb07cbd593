"""One pool of one-thread worker processes, for trials and blocks of trials.

On a few CPU cores, independent one-thread jobs in k processes beat k threads per job because
small matrices do not scale across threads. Workers are started with the ``spawn`` method (no
forked torch/OpenMP state) with ``OMP_NUM_THREADS`` and friends set to 1 before they import
anything heavy, and they never outlive the process that started them:

- an exception or interrupt in the parent (Ctrl-C, SIGTERM turned into an exception by the
  runner, a closed iterator) kills every worker at once, before it is re-raised;
- Ctrl-C in a terminal, and SIGHUP when the terminal closes, reach the whole process group:
  workers ignore SIGINT and SIGHUP and leave the clean-up to the parent;
- a worker whose parent dies without cleaning up (SIGKILL) notices within half a second that it
  has been re-parented and exits;
- SIGINT, SIGTERM and SIGHUP are blocked in the parent while it starts the workers, so that a
  signal in the moment a worker boots (before it can ignore it) waits for the parent instead of
  printing the worker's traceback;
- the pool also starts inside a process that another library started with its own start method
  (a worker of the ``pilid_joblib`` launcher: joblib's loky), where spawned children used to fail
  with ``cannot find context for 'loky'``.

Inside such a worker (``in_worker()``) the cores are already shared out, so the runner's auto
``train.n_jobs`` trains the blocks in the worker itself (``planning.resolve_n_jobs``).
``descendants``/``kill_descendants`` and ``watch_parent`` are the pieces the ``pilid_joblib``
launcher (``hydra_plugins/pilid_launcher``) uses to end every process it started.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import subprocess
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
#: Set (to "1") in the environment of every worker process pilid starts, so that its children
#: inherit it: the process runs inside a pool that already shares out the cores.
WORKER_ENV = "PILID_WORKER"
#: The start methods of the standard library; a process started by another library may carry
#: its own (loky's ``loky``), which a plain spawned child cannot look up.
_STDLIB_START_METHODS = ("fork", "spawn", "forkserver")
#: Signals that stop a run (SIGHUP: the terminal or the ssh session closed); blocked while
#: worker processes start (they inherit the mask).
STOP_SIGNALS = tuple(
    getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name)
)
#: The stop signals a worker leaves to the process that started it (it ignores them): Ctrl-C
#: and a hang-up reach the whole process group, and the parent stops the workers.
PARENT_SIGNALS = tuple(s for s in STOP_SIGNALS if s != signal.SIGTERM)


def in_worker() -> bool:
    """Whether this process is a worker of a pilid pool or of the ``pilid_joblib`` launcher."""
    return os.environ.get(WORKER_ENV) == "1"


def mark_worker() -> None:
    """Mark this process (and the processes it starts) as a worker (``in_worker()``)."""
    os.environ[WORKER_ENV] = "1"


@contextlib.contextmanager
def signals_blocked(signals=STOP_SIGNALS) -> Iterator[None]:
    """Block ``signals`` in the calling thread while the block runs; a signal that arrives
    meanwhile stays pending and is delivered when the block ends. Processes started inside the
    block inherit the blocked mask (they unblock it once they have set their own handlers), so
    a signal to the process group in the moment a child boots cannot interrupt its start-up.
    A no-op where ``pthread_sigmask`` does not exist (Windows).

    Start multiprocessing's resource tracker first (``start_resource_tracker``): starting it
    unblocks SIGINT and SIGTERM in the calling thread."""
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, signals)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def handled_signals(signals=STOP_SIGNALS) -> tuple[int, ...]:
    """The signals of ``signals`` that this process does not ignore: a run started under
    ``nohup`` (SIGHUP ignored) or as a background job of a script (SIGINT ignored) keeps them
    ignored, and a blocked signal would otherwise be taken by ``sigtimedwait`` all the same."""
    return tuple(s for s in signals if signal.getsignal(s) != signal.SIG_IGN)


@contextlib.contextmanager
def hangup_ignored() -> Iterator[None]:
    """SIGHUP ignored while the block runs (main thread; elsewhere a no-op), so that helper
    processes started inside it (multiprocessing's and loky's resource trackers, which ignore
    SIGINT and SIGTERM but not SIGHUP) inherit the ignored disposition and survive a hang-up of
    the process group: killed by it, they left loky's "leaked semlock" warnings (and
    relaunch warnings) behind the run's one line."""
    hup = getattr(signal, "SIGHUP", None)
    if hup is None or threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(hup, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(hup, previous)


def start_resource_tracker() -> None:
    """Start multiprocessing's resource tracker now if it is not running: the standard library
    starts it on the first pool or lock, with SIGINT and SIGTERM unblocked after it in the
    calling thread, which would undo ``signals_blocked``. It starts with SIGHUP ignored
    (``hangup_ignored``)."""
    if os.name == "posix":
        from multiprocessing import resource_tracker

        with hangup_ignored():
            resource_tracker.ensure_running()


def unblock_signals(signals=STOP_SIGNALS) -> None:
    """Unblock ``signals`` in the calling thread (a child that inherited them blocked)."""
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, signals)


@contextlib.contextmanager
def stdlib_start_method() -> Iterator[None]:
    """Let ``spawn`` children of this process start where another library set the default
    start method to its own (a loky worker: ``loky``): a child reads the parent's default start
    method from its preparation data and cannot find loky's. Restored afterwards."""
    current = multiprocessing.get_start_method(allow_none=True)
    if current is None or current in _STDLIB_START_METHODS:
        yield
        return
    multiprocessing.set_start_method("spawn", force=True)
    try:
        yield
    finally:
        with contextlib.suppress(Exception):
            multiprocessing.set_start_method(current, force=True)


def _children_map() -> dict[int, list[int]]:
    """Parent pid -> child pids of every process in /proc (Linux)."""
    children: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as handle:
                stat = handle.read()
        except OSError:  # exited meanwhile
            continue
        # "pid (comm) state ppid ...": comm may hold spaces and parentheses
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) > 1 and fields[0] != b"Z":
            children.setdefault(int(fields[1]), []).append(int(entry.name))
    return children


def _pgrep_children(pid: int) -> list[int]:
    try:
        out = subprocess.run(
            ["pgrep", "-P", str(pid)], capture_output=True, text=True, check=False
        ).stdout
    except OSError:
        return []
    return [int(word) for word in out.split()]


def descendants(pid: int | None = None) -> list[int]:
    """The living descendants of ``pid`` (default: this process), parents before children;
    from /proc on Linux, else from ``pgrep -P``."""
    pid = os.getpid() if pid is None else pid
    if os.path.isdir("/proc/self"):
        children = _children_map()
        lookup = children.get
    else:
        lookup = _pgrep_children  # type: ignore[assignment]
    found: list[int] = []
    frontier = [pid]
    while frontier:
        nxt = []
        for parent in frontier:
            for child in lookup(parent) or []:
                if child not in found:
                    found.append(child)
                    nxt.append(child)
        frontier = nxt
    return found


def kill_descendants(pid: int | None = None, keep=lambda pid: False, rounds: int = 5) -> None:
    """SIGKILL every descendant of ``pid`` (default: this process) for which ``keep(pid)`` is
    false, repeating a few times to catch a child started meanwhile."""
    for _ in range(rounds):
        victims = [p for p in descendants(pid) if not keep(p)]
        if not victims:
            return
        for victim in victims:
            with contextlib.suppress(OSError):
                os.kill(victim, signal.SIGKILL)
        time.sleep(0.05)


def watch_parent(parent_pid: int, on_orphan) -> None:
    """Start a daemon thread that calls ``on_orphan()`` once this process has been re-parented
    (its parent died without cleaning up, e.g. by SIGKILL); ``on_orphan`` should exit."""

    def watch() -> None:
        while True:
            time.sleep(PARENT_POLL_SECONDS)
            if os.getppid() != parent_pid:
                on_orphan()
                return

    threading.Thread(target=watch, name="pilid-watch-parent", daemon=True).start()


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


def _init_worker(parent_pid: int) -> None:
    for signum in PARENT_SIGNALS:  # Ctrl-C and a hang-up are the parent's to handle
        signal.signal(signum, signal.SIG_IGN)
    unblock_signals()  # started with them blocked (``signals_blocked``)
    mark_worker()
    os.environ.update({name: "1" for name in THREAD_ENV})
    watch_parent(parent_pid, lambda: os._exit(1))
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
    pool = None
    start_resource_tracker()
    # workers start on demand: keep the variables and the start method set while any may
    with one_thread_env(), stdlib_start_method():
        try:
            with signals_blocked():  # the workers start at submit; a signal waits until after
                pool = ProcessPoolExecutor(
                    max_workers=min(n_jobs, len(jobs)),
                    mp_context=context,
                    initializer=_init_worker,
                    initargs=(os.getpid(),),
                )
                futures = [pool.submit(function, job) for job in jobs]
            for future in as_completed(futures):
                yield future.result()
        except BaseException:  # an error, an interrupt, or the iterator closed early
            if pool is not None:
                _kill_workers(pool)
            raise
        pool.shutdown(wait=True)
