"""Stopping a run: SIGINT/SIGTERM while trials train become ``RunInterrupted`` (the finished
trials stay recorded, and the same command resumes).

The command line (``pilid.run.cli``) runs under ``exit_on_interrupt``: SIGINT, SIGTERM or SIGHUP
at any moment of a run or a sweep (while a setting trains, between two settings, while Hydra
starts or ends) ends it with one line, ``interrupted_line``, and exit code 130 / 143 / 129. In
a ``-m`` sweep the line counts the trials recorded of every setting of the sweep (the sweeper
registers them with ``watch_settings``); in a single run, those of its setting.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import warnings
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any


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
    """SIGTERM (e.g. a Slurm time-out) or SIGHUP (the terminal closed) while trials run; raised
    like KeyboardInterrupt."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


#: The signals ``signals_as_exceptions`` turns into ``Terminated``: ``kill`` and a hang-up.
TERMINATING = tuple(
    getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name)
)


#: Seconds between two looks, while a signal waits for the main thread to leave OmegaConf or
#: Hydra.
RETRY_SECONDS = 0.02


def _package_dir(module: Any) -> str:
    return str(Path(module.__file__).resolve().parent) + os.sep


#: pilid's folder and the project's Hydra plugins' (beside it, installed or in the checkout).
_OURS = (
    str(Path(__file__).resolve().parents[1]) + os.sep,
    str(Path(__file__).resolve().parents[2] / "hydra_plugins") + os.sep,
)


def _inside_config_code(frame: Any) -> bool:
    """Whether ``frame`` runs inside OmegaConf's or Hydra's own code: an exception raised there
    can leave a config half-changed or a file half-read, and their clean-up then fails with
    another error that hides the signal. Composing a sweep's next job, OmegaConf said "'NoneType'
    object has no attribute '_invalidate_flags_cache'", and Hydra's config reader "cannot access
    local variable 'f'", each with exit 1 instead of the interrupted line.

    OmegaConf: any frame on the stack (a resolver's code runs inside it). Hydra: the nearest
    frame that is Hydra's, pilid's or the project's Hydra plugins'; the task Hydra calls
    (training) is pilid's, and a signal there is raised at once."""
    import hydra
    import omegaconf

    config, hydra_dir = _package_dir(omegaconf), _package_dir(hydra)
    nearest = None
    while frame is not None:
        name = os.path.realpath(frame.f_code.co_filename)
        if name.startswith(config):
            return True
        if nearest is None and name.startswith(_OURS):
            nearest = "pilid"
        elif nearest is None and name.startswith(hydra_dir):
            nearest = "hydra"
        frame = frame.f_back
    return nearest == "hydra"


@contextlib.contextmanager
def signals_as_exceptions() -> Iterator[None]:
    """Turn SIGTERM and SIGHUP into ``Terminated`` while the block runs (main thread only, and
    only where nobody else, e.g. submitit, handles the signal already, and where it is not
    ignored: SIGHUP under ``nohup``); SIGINT stays KeyboardInterrupt.

    A signal that arrives while OmegaConf's or Hydra's code runs (`_inside_config_code`) waits
    until it has returned (the signal is sent again to the main thread every ``RETRY_SECONDS``;
    where the main thread blocks it, as the joblib launcher does in every thread before it
    forwards the first one alone, the handler is called through ``_thread.interrupt_main``
    instead, since a signal sent would stay blocked), so that the exception never tears a config
    apart; one still waiting when the block ends is raised there."""
    import _thread
    import os
    import threading

    previous = {}
    timers: dict[int, threading.Timer] = {}  # the signals sent again, while OmegaConf runs
    pending: set[int] = set()  # the signals received and not raised yet
    closing = threading.Event()  # the block ends: record a signal, raise it once on the way out

    def handler(signum, frame):
        timers.pop(signum, None)
        if closing.is_set() or _inside_config_code(frame):
            pending.add(signum)
            if not closing.is_set():
                blocked = hasattr(signal, "pthread_sigmask") and signum in signal.pthread_sigmask(
                    signal.SIG_BLOCK, []
                )
                # sent to the main thread itself: one the kernel gave another thread (the
                # timer's) would wait for the main thread's blocking call to return
                direct = hasattr(signal, "pthread_kill")
                main = threading.main_thread().ident
                again = (
                    (_thread.interrupt_main, (signum,))
                    if blocked
                    else (signal.pthread_kill, (main, signum))
                    if direct
                    else (os.kill, (os.getpid(), signum))
                )
                timers[signum] = timer = threading.Timer(RETRY_SECONDS, *again)
                timer.daemon = True
                timer.start()
            return
        pending.discard(signum)
        raise Terminated(signum)

    if threading.current_thread() is threading.main_thread():
        for signum in TERMINATING:
            if signal.getsignal(signum) in (signal.SIG_DFL, None):
                previous[signum] = signal.signal(signum, handler)
    try:
        yield
    finally:
        closing.set()
        for timer in list(timers.values()):
            timer.cancel()
            timer.join()  # a call it made reaches this handler, not the default action
        for signum, before in previous.items():
            signal.signal(signum, before if before is not None else signal.SIG_DFL)
        if pending:
            raise Terminated(min(pending))


#: The configs of the settings the command runs (a ``-m`` sweep: every job), for the line.
_WATCHED: list[Any] = []


def watch_settings(configs: Iterable[Mapping[str, Any]], replace: bool = True) -> None:
    """Register the settings this command runs (unresolved config containers or
    ``DictConfig``s); ``interrupted_line`` counts their recorded trials."""
    if replace:
        _WATCHED.clear()
    _WATCHED.extend(configs)


def watched_settings() -> int:
    """How many settings are registered."""
    return len(_WATCHED)


def recorded_counts(configs: Iterable[Any] | None = None) -> tuple[int, int] | None:
    """(trials recorded, trials) summed over ``configs`` (default: the registered settings),
    counting trials ``0 .. trials-1`` found in each setting's results store; None when there is
    no setting or a count fails (an unreadable store, a config that does not resolve)."""
    from pilid.experiments.config import normalize_config
    from pilid.experiments.setting import resolved_config, setting_id
    from pilid.experiments.store import ResultStore, records_in

    configs = list(_WATCHED if configs is None else configs)
    if not configs:
        return None
    done = total = 0
    stores: dict[str, dict[str, set[int]]] = {}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a bad record line: warned when the store is read
            for cfg in configs:
                config = normalize_config(resolved_config(cfg))
                trials = int(config["trials"])
                root = str(config["results_dir"])
                if root not in stores:
                    by_setting: dict[str, set[int]] = {}
                    store = ResultStore(records_in(root))
                    for record in store.records() if store.path.is_file() else []:
                        by_setting.setdefault(record["setting_id"], set()).add(record["trial"])
                    stores[root] = by_setting
                recorded = stores[root].get(setting_id(config), set())
                done += len(recorded & set(range(trials)))
                total += trials
    except Exception:  # the line must come out whatever the state of the store
        return None
    return done, total


def interrupted_line(stop: RunInterrupted | None = None, signum: int | None = None) -> str:
    """The one line of an interrupted command: the trials recorded of the watched settings
    (of ``stop``'s setting when one setting or none is watched) and how to resume. SIGHUP
    (``signum``; nobody typed it) is named, with how a run outlives the terminal."""
    counts = None
    if stop is None or watched_settings() > 1:
        counts = recorded_counts()
    if counts is None and stop is not None:
        counts = (stop.recorded, stop.trials)
    hangup = signum is not None and signum == getattr(signal, "SIGHUP", None)
    why = " by SIGHUP (the terminal or session closed)" if hangup else ""
    keep = " (under nohup, tmux or screen it outlives the terminal)" if hangup else ""
    if counts is None:
        return (
            f"pilid: interrupted{why} before a setting started; run the same command to "
            f"resume{keep}"
        )
    done, total = counts
    return (
        f"pilid: interrupted{why}: {done} of {total} trials recorded; run the same command to "
        f"resume{keep}"
    )


def exit_interrupted(signum: int, stop: RunInterrupted | None = None) -> None:
    """Print ``interrupted_line`` to stderr and exit with 128 + ``signum`` (130 Ctrl-C, 143
    SIGTERM, 129 SIGHUP); a second signal meanwhile is ignored, so that the line comes out
    alone. A closed terminal cannot take the line: the exit code still says it."""
    with contextlib.suppress(ValueError):  # not the main thread: nothing to ignore there
        for other in (signal.SIGINT, *TERMINATING):
            signal.signal(other, signal.SIG_IGN)
    with contextlib.suppress(OSError):  # stderr on a terminal that hung up
        print(interrupted_line(stop, int(signum)), file=sys.stderr, flush=True)
    sys.exit(128 + int(signum))


@contextlib.contextmanager
def exit_on_interrupt() -> Iterator[None]:
    """Run a command (``pilid.run.cli``) so that SIGINT, SIGTERM or SIGHUP at any moment ends it
    with ``interrupted_line`` and exit code 130 / 143 / 129 instead of a traceback or a silent
    death."""
    try:
        with signals_as_exceptions():
            yield
    except (KeyboardInterrupt, Terminated) as stop:
        exit_interrupted(int(getattr(stop, "signum", signal.SIGINT)))
