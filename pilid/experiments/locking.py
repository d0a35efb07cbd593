"""File locks of the results directory (``filelock``: ``flock`` on POSIX, ``msvcrt`` on Windows).

Two locks live under ``<results_dir>/.locks/``:

- ``records.jsonl.lock``: held by the store while it appends to ``records.jsonl``, so that
  several processes (joblib workers, Slurm array jobs on a shared file system with working
  locks) never interleave; a reader holds it shared (``shared``) where the lock file exists,
  so that it never reads half a record, and creates or writes nothing (a dry run, a report on a
  read-only results directory);
- ``<setting_id>.lock``: held by the runner while a setting runs, so that a second process on
  the same setting waits, then finds its trials recorded.

The operating system drops a lock when its holder dies, even by SIGKILL. A reader never waits
for a lock its own process holds (``flock`` locks of two open files conflict even in one
process): SIGTERM or Ctrl-C while the store appends a record used to leave the run waiting
forever for itself when its interrupted line counted the records (``shared``).
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from filelock import FileLock, Timeout

from pilid.errors import PilidError

#: The folder of the lock files, inside the results directory.
LOCKS_DIR = ".locks"

#: Lock files this process holds through ``exclusive`` (resolved paths, with a count per nesting).
_HELD: dict[str, int] = {}

#: How long ``shared`` waits for a writer of another process before it reads unlocked (an
#: append holds the lock for milliseconds; a reader skips a partial last line anyway).
SHARED_WAIT_SECONDS = 10.0


def lock_path(root: str | Path, name: str) -> Path:
    """``<root>/.locks/<name>.lock``."""
    return Path(root) / LOCKS_DIR / f"{name}.lock"


@contextlib.contextmanager
def exclusive(path: Path, waiting: str | None = None) -> Iterator[None]:
    """Hold the lock file ``path`` (made with its folder when missing) while the block runs.

    ``waiting``: a line printed on stderr when another process holds the lock and this one
    waits for it. ``OSError`` when the lock file cannot be made.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    key = os.path.realpath(path)
    lock = FileLock(path, thread_local=False)
    _HELD[key] = _HELD.get(key, 0) + 1  # before the lock: a signal inside acquire still counts
    try:
        try:
            lock.acquire(timeout=0)
        except Timeout:
            if waiting:
                print(waiting, file=sys.stderr, flush=True)
            lock.acquire()
        yield
    finally:
        try:
            lock.release()
        finally:
            _HELD[key] -= 1
            if not _HELD[key]:
                del _HELD[key]


@contextlib.contextmanager
def shared(path: Path) -> Iterator[None]:
    """Hold the lock file ``path`` shared while the block runs (a reader beside writers that
    hold it through ``exclusive``), creating and writing nothing.

    The file is opened read-only and locked with ``flock(LOCK_SH)``, which waits for a writer's
    exclusive hold and lets other readers in. Where the lock file does not exist (no writer of
    ours has used it), cannot be opened, or cannot be locked (no ``fcntl``, as on Windows, or a
    file system without ``flock``), the block runs unlocked: readers skip a partial last line.
    So it does where this process holds the lock itself (``exclusive``; a signal handler that
    reads while the store appends), and after `SHARED_WAIT_SECONDS` of another process's hold.
    """
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        fcntl = None
    fd = -1
    if fcntl is not None and os.path.realpath(path) not in _HELD:
        try:
            fd = os.open(path, os.O_RDONLY)
        except OSError:
            fd = -1
    try:
        if fd >= 0:
            deadline = time.monotonic() + SHARED_WAIT_SECONDS
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
                    break
                except BlockingIOError:  # a writer holds it: wait a little, then again
                    if time.monotonic() >= deadline:
                        break
                    time.sleep(0.01)
                except OSError:  # no flock on this file system: unlocked
                    break
        yield
    finally:
        if fd >= 0:
            os.close(fd)  # closing the descriptor drops its lock


@contextlib.contextmanager
def setting_lock(root: Path, sid: str) -> Iterator[None]:
    """Hold ``<results_dir>/.locks/<setting_id>.lock`` while a setting runs.

    A second process on the same setting (a duplicate job, a Slurm requeue racing the old one)
    waits, then finds the trials recorded and only prints the summary.
    """
    try:
        path = lock_path(root, sid)
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "a+b"):  # can we write there? (a clear error before any training)
            pass
    except OSError as error:
        raise PilidError(
            f"cannot write to results_dir {str(root)!r} ({error.strerror}); "
            "set results_dir to a writable directory"
        ) from error
    waiting = f"pilid: setting {sid} is running in another process; waiting for it"
    with exclusive(path, waiting):
        yield
