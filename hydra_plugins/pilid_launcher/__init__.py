"""pilid's joblib launcher: settings in parallel on one machine, no process left behind.

Selected by ``conf/hydra/launcher/pilid_joblib.yaml`` (which keeps the keys of the
hydra-joblib-launcher plugin's ``joblib`` config). It runs Hydra's jobs in joblib's loky worker
processes as that plugin does, with these differences:

- *Every process ends with the runner.* SIGINT or SIGTERM to the runner, or to its process group
  (Ctrl-C in a terminal, ``kill``, ``kill -- -<pgid>``), at any moment of the sweep stops the
  workers (and any worker processes of their own) with SIGKILL, and the runner prints the one
  line of ``pilid.experiments.interrupts.interrupted_line`` and exits 130 / 143. The plugin's
  launcher could orphan them (issue 30), under these conditions:

  * SIGTERM to the runner alone: the runner had no SIGTERM handler (the runner's handler lives
    in ``run_setting``, which runs in the workers), so it died at once without a word; the
    workers, not signalled, trained their settings to the end, recording them, then idled in
    loky's worker loop for its 300 s time-out, keeping loky's and multiprocessing's resource
    trackers alive (they live while a process holds their pipe). Always, whatever the settings.
  * SIGTERM to the group: the runner died the same way; a worker that was training caught the
    signal in ``run_setting``, printed its own line and ended its job with ``sys.exit``, which
    loky's worker loop catches as the job's exception: it then idled as above. A worker that
    was not training (starting, composing its config, waiting for a setting's lock) died of
    the signal. So the workers survived when the signal found them training (settings of
    seconds to minutes: nearly always) and all ended when it found none training.
  * Ctrl-C: joblib stopped the workers, but the runner printed Hydra's traceback, each
    training worker its own line, and multiprocessing's resource tracker a warning about the
    semaphores of the killed workers (tqdm's lock): about 40 lines.
  * SIGHUP (the terminal or the ssh session closed) is a stop signal like SIGTERM (exit 129,
    the line naming SIGHUP); it used to kill the runner and the resource trackers (which ignore
    SIGINT and SIGTERM only) without a word, leaving loky's "leaked semlock" warnings. Under
    ``nohup`` SIGHUP stays ignored.
- How: the runner blocks SIGINT, SIGTERM and SIGHUP while the sweep runs, so that the workers
  it starts inherit them blocked (a signal in the moment a worker boots cannot print its
  traceback); a thread of the runner takes the signals (``sigtimedwait``) and raises the first
  one in the main thread, where joblib aborts (SIGKILL to each worker's process tree) and the
  launcher kills whatever descendant is left. The resource trackers start with SIGHUP ignored.
  Each worker, set up by ``_init_worker`` before its first job, ignores SIGINT and SIGHUP (the
  runner handles them), ends at once on SIGTERM (killing its own children first), and ends
  within half a second when the runner dies without cleaning up (SIGKILL).
- *Paper-size settings work.* A worker is marked ``pilid.parallel.in_worker()``, so a setting's
  blocks of trials train one after the other inside it (``train.n_jobs=auto`` resolves to 1:
  the launcher already gives each setting a core) with the numbers of a sequential run; an
  explicit ``train.n_jobs`` > 1 starts a nested pool, which ``pilid.parallel`` makes work inside
  a loky worker.
- A worker that dies on its own (killed alone, out of memory) stops the sweep with one line
  naming its exit code, after the others are stopped.

Tested by ``tests/test_launcher_signals.py``. The class sits in this package's ``__init__`` (Hydra
only finds plugins in the modules it scans) and imports joblib lazily, so that the scan works
without the optional plugin installed.
"""

from __future__ import annotations

import logging
import os
import signal
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hydra.core.singleton import Singleton
from hydra.core.utils import JobReturn, configure_log, filter_overrides, run_job, setup_globals
from hydra.plugins.launcher import Launcher
from hydra.types import HydraContext, TaskFunction
from omegaconf import DictConfig, open_dict

log = logging.getLogger(__name__)

#: Seconds the runner's signal thread waits per turn before checking whether the sweep ended.
SIGNAL_POLL_SECONDS = 0.1


class PilidJoblibLauncher(Launcher):
    """Hydra's joblib launcher (loky backend) whose workers never outlive the runner."""

    def __init__(self, **kwargs: Any) -> None:
        self.config: DictConfig | None = None
        self.task_function: TaskFunction | None = None
        self.hydra_context: HydraContext | None = None
        self.joblib = kwargs

    def setup(
        self, *, hydra_context: HydraContext, task_function: TaskFunction, config: DictConfig
    ) -> None:
        """Keep the config, task function and Hydra context for `launch`."""
        self.config = config
        self.task_function = task_function
        self.hydra_context = hydra_context

    def launch(
        self, job_overrides: Sequence[Sequence[str]], initial_job_idx: int
    ) -> Sequence[JobReturn]:
        """Run the jobs ``job_overrides`` in joblib's worker processes; return their results."""
        from joblib import Parallel, delayed

        setup_globals()
        assert self.config is not None and self.task_function is not None
        assert self.hydra_context is not None
        configure_log(self.config.hydra.hydra_logging, self.config.hydra.verbose)
        sweep_dir = Path(str(self.config.hydra.sweep.dir))
        sweep_dir.mkdir(parents=True, exist_ok=True)

        joblib_cfg = _joblib_kwargs(self.joblib)
        log.info(
            "Joblib.Parallel(%s) is launching %d jobs",
            ",".join(f"{k}={v}" for k, v in joblib_cfg.items()),
            len(job_overrides),
        )
        log.info("Launching jobs, sweep output dir : %s", sweep_dir)
        for idx, overrides in enumerate(job_overrides):
            log.info("\t#%d : %s", idx, " ".join(filter_overrides(overrides)))

        runner = os.getpid()
        singleton_state = Singleton.get_state()
        jobs = (
            delayed(_execute_job)(
                initial_job_idx + idx,
                overrides,
                self.hydra_context,
                self.config,
                self.task_function,
                singleton_state,
                runner,
            )
            for idx, overrides in enumerate(job_overrides)
        )
        with _RunnerSignals() as signals:
            try:
                runs = Parallel(**joblib_cfg, initializer=_init_worker, initargs=(runner,))(jobs)
            except BaseException as error:
                signals.stop_forwarding()
                _end_workers()
                _raise_stop(error, signals.signum)
                raise
        assert isinstance(runs, list)
        return runs


def _joblib_kwargs(config: dict[str, Any]) -> dict[str, Any]:
    """``joblib.Parallel``'s arguments from the launcher config (as the plugin does): the loky
    backend (threads cannot run Hydra jobs) and whole numbers where a string may stand."""
    out = dict(config)
    out["backend"] = "loky"
    for key in ("pre_dispatch", "batch_size", "max_nbytes"):
        value = out.get(key)
        if value:
            try:
                out[key] = int(value)
            except (TypeError, ValueError):
                pass
    return out


def _execute_job(
    idx: int,
    overrides: Sequence[str],
    hydra_context: HydraContext,
    config: DictConfig,
    task_function: TaskFunction,
    singleton_state: dict[Any, Any],
    runner: int,
) -> JobReturn:
    """One Hydra job in a worker (the plugin's ``execute_job``, after ``_init_worker``)."""
    _init_worker(runner)  # joblib versions without an initializer argument; a no-op after it
    setup_globals()
    Singleton.set_state(singleton_state)
    sweep_config = hydra_context.config_loader.load_sweep_config(config, list(overrides))
    with open_dict(sweep_config):
        sweep_config.hydra.job.id = f"{sweep_config.hydra.job.name}_{idx}"
        sweep_config.hydra.job.num = idx
    from hydra.core.hydra_config import HydraConfig

    HydraConfig.instance().set_config(sweep_config)
    return run_job(
        hydra_context=hydra_context,
        config=sweep_config,
        task_function=task_function,
        job_dir_key="hydra.sweep.dir",
        job_subdir_key="hydra.sweep.subdir",
    )


_worker_ready = False


def _init_worker(runner: int) -> None:
    """Set up a loky worker of the runner ``runner`` (once; not in the runner itself, where
    joblib runs the jobs when ``n_jobs`` is 1): SIGINT ignored, SIGTERM ends it and its children
    at once, it ends when the runner dies, and it holds no multiprocessing semaphore. It started
    with SIGINT/SIGTERM/SIGHUP blocked; SIGHUP is ignored like SIGINT."""
    global _worker_ready
    from pilid.parallel import PARENT_SIGNALS, mark_worker, unblock_signals, watch_parent

    if _worker_ready or os.getpid() == runner:
        return
    _worker_ready = True
    mark_worker()
    # tqdm's default lock is a multiprocessing semaphore, which a killed worker cannot give back:
    # the resource tracker would warn about it after the runner's one line
    from tqdm import tqdm

    tqdm.set_lock(threading.RLock())
    for signum in PARENT_SIGNALS:  # Ctrl-C and a hang-up reach the group: the runner's to handle
        signal.signal(signum, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _end_worker)
    unblock_signals()
    watch_parent(runner, lambda: _end_worker(None, None, code=1))


def _end_worker(signum, frame, code: int = 128 + signal.SIGTERM) -> None:
    """End this worker and its children now; its setting's finished trials are recorded (each
    record is one atomic append) and the runner reports the stop."""
    from pilid.parallel import kill_descendants

    try:
        kill_descendants()
    finally:
        os._exit(code)


def _end_workers() -> None:
    """SIGKILL every process the runner started but the resource trackers (they exit by
    themselves once the runner and its workers are gone, after cleaning up)."""
    from pilid.parallel import kill_descendants

    trackers = set()
    try:
        from multiprocessing import resource_tracker

        trackers.add(getattr(resource_tracker._resource_tracker, "_pid", None))
        from joblib.externals.loky.backend import resource_tracker as loky_tracker

        trackers.add(getattr(loky_tracker._resource_tracker, "_pid", None))
    except Exception:
        pass
    kill_descendants(keep=trackers.__contains__)


def _raise_stop(error: BaseException, signum: int | None) -> None:
    """After the workers are gone: a signal to the runner becomes the interrupt that
    ``pilid.run`` turns into its one line; a worker that died on its own stops the sweep with
    one line (exit 1). Anything else is left to propagate."""
    from concurrent.futures.process import BrokenProcessPool

    from pilid.experiments.interrupts import Terminated, recorded_counts

    if isinstance(error, SystemExit):  # a job in the runner itself (n_jobs=1) already ended it
        raise error
    if signum is not None:
        if isinstance(error, KeyboardInterrupt | Terminated):
            raise error
        if signum == signal.SIGINT:
            raise KeyboardInterrupt from None
        raise Terminated(signum) from None
    if isinstance(error, BrokenProcessPool):
        detail = str(error).split("exit codes of the workers are", 1)
        code = f" (exit code {detail[1].strip().splitlines()[0]})" if len(detail) == 2 else ""
        counts = recorded_counts()
        recorded = f"; {counts[0]} of {counts[1]} trials recorded" if counts else ""
        print(
            f"pilid: error: a worker process of the pilid_joblib launcher ended{code}; the "
            f"sweep was stopped{recorded}; run the same command to resume",
            file=sys.stderr,
            flush=True,
        )
        sys.exit(1)


class _RunnerSignals:
    """While the sweep runs in the runner: SIGINT/SIGTERM/SIGHUP blocked in its threads (the
    workers it starts inherit the mask), taken by a thread that raises the first one in the main
    thread (KeyboardInterrupt, or ``Terminated`` through the SIGTERM/SIGHUP handler installed
    here). A signal the runner ignores (SIGHUP under ``nohup``) stays ignored. Elsewhere than the
    main thread of a POSIX process, only the handlers."""

    def __init__(self) -> None:
        self.signum: int | None = None
        self._forward = True
        self._done = threading.Event()
        self._thread: threading.Thread | None = None
        self._mask = None
        self._signals: tuple[int, ...] = ()
        self._previous: dict[int, Any] = {}

    def __enter__(self) -> _RunnerSignals:
        from pilid.experiments.interrupts import Terminated
        from pilid.parallel import handled_signals, hangup_ignored, start_resource_tracker

        if threading.current_thread() is not threading.main_thread():
            return self
        self._signals = handled_signals()

        def handler(signum, frame):
            raise Terminated(signum)

        for signum in self._signals:
            previous = signal.getsignal(signum)
            if signum != signal.SIGINT and previous in (signal.SIG_DFL, None):
                self._previous[signum] = previous  # else somebody else's handler: keep it
                signal.signal(signum, handler)
        if not (hasattr(signal, "pthread_sigmask") and hasattr(signal, "sigtimedwait")):
            return self
        # starting a resource tracker unblocks the signals in this thread: start them first,
        # ignoring SIGHUP (a hang-up of the group must leave them to clean up after the sweep)
        start_resource_tracker()
        from joblib.externals.loky.backend.resource_tracker import ensure_running

        with hangup_ignored():
            ensure_running()
        self._mask = signal.pthread_sigmask(signal.SIG_BLOCK, self._signals)
        self._thread = threading.Thread(target=self._take, name="pilid-signals", daemon=True)
        self._thread.start()
        return self

    def _take(self) -> None:
        import _thread

        while not self._done.is_set():
            info = signal.sigtimedwait(self._signals, SIGNAL_POLL_SECONDS)
            if info is None or self.signum is not None:
                continue
            self.signum = info.si_signo
            if self._forward:
                _thread.interrupt_main(info.si_signo)

    def stop_forwarding(self) -> None:
        """From now on a signal is noted, not raised (the clean-up must not be interrupted)."""
        self._forward = False

    def __exit__(self, *exc) -> None:
        self._done.set()
        if self._thread is not None:
            self._thread.join()
        if self._mask is not None:
            signal.pthread_sigmask(signal.SIG_SETMASK, self._mask)
        for signum, previous in self._previous.items():
            signal.signal(signum, previous if previous is not None else signal.SIG_DFL)
