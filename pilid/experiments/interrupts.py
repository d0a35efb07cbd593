"""Stopping a run: SIGINT/SIGTERM while trials train become ``RunInterrupted`` (the finished
trials stay recorded, and the same command resumes)."""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator


class RunInterrupted(Exception):
    """SIGINT or SIGTERM stopped a setting; the finished trials are recorded.

    ``recorded`` of ``trials`` trials of the setting are in the store; ``exit_code`` is
    128 + the signal number (130 for Ctrl-C, 143 for SIGTERM), the shell's convention.
    """

    def __init__(self, recorded: int, trials: int, signum: int):
        self.recorded, self.trials, self.signum = recorded, trials, signum
        self.exit_code = 128 + signum
        super().__init__(
            f"interrupted: {recorded} of {trials} trials recorded; run the same command to resume"
        )


class Terminated(BaseException):
    """SIGTERM (e.g. a Slurm time-out) while trials run; raised like KeyboardInterrupt."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


@contextlib.contextmanager
def signals_as_exceptions() -> Iterator[None]:
    """Turn SIGTERM into ``Terminated`` while the block runs (main thread only, and only where
    nobody else, e.g. submitit, handles SIGTERM already); SIGINT stays KeyboardInterrupt."""
    import threading

    installed = False
    previous = None
    if threading.current_thread() is threading.main_thread():
        previous = signal.getsignal(signal.SIGTERM)
        if previous in (signal.SIG_DFL, None):

            def handler(signum, frame):
                raise Terminated(signum)

            signal.signal(signal.SIGTERM, handler)
            installed = True
    try:
        yield
    finally:
        if installed:
            signal.signal(signal.SIGTERM, previous)
