"""The ``pilid_joblib`` launcher and the signals of a sweep (issue 30, bad cases 1 and 4, and the
poor interrupt cases), through the command line in subprocesses:

- the launcher runs settings of two blocks of trials with the numbers of a sequential run (it
  used to fail with ``cannot find context for 'loky'``);
- SIGTERM to the runner or to its process group, Ctrl-C (SIGINT to the group) and SIGKILL of the
  runner end every process the sweep started within seconds, SIGTERM/SIGINT with the one line
  and exit code 143/130 (the workers and loky's resource trackers used to train on and idle
  for minutes);
- SIGTERM or Ctrl-C between two settings (the runner waits for the second setting's lock, which
  this test holds) ends with that line too (it used to end silently or with a traceback);
- the records left behind are whole, and the same command resumes to the numbers of an
  uninterrupted run.

Processes are found by their process group in /proc (no psutil here): each sweep starts in a
session of its own, as a job under a shell or Slurm does, so its group id is the runner's pid.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from filelock import FileLock
from hydra import compose, initialize_config_dir

from pilid.experiments import run_setting, setting_id
from pilid.experiments.config import CONF_DIR
from pilid.experiments.locking import lock_path

pytestmark = pytest.mark.skipif(
    not os.path.isdir("/proc/self") or not hasattr(os, "killpg"),
    reason="finds processes by group in /proc (Linux)",
)

# Tiny settings: the runs' cost is mostly starting Python, torch and Hydra.
TINY = [
    "model=pilid",
    "data=synthetic",
    "data.N=300",
    "data.m=3",
    "data.n_interactions=1",
    "model.hidden_layers=[8]",
    "train.epochs=2",
    "train.batch_size=64",
]
# Long enough per setting (about a second) that a sweep is still training when it is signalled.
SLOW = [
    *TINY[:2],
    "data.N=1000",
    *TINY[3:6],
    "train.epochs=40",
    "train.patience=null",
    "train.batch_size=32",
]
JOBLIB = ["hydra/launcher=pilid_joblib", "hydra.launcher.n_jobs=2"]
INTERRUPTED = "trials recorded; run the same command to resume"
#: Generous bounds for a loaded 2-core machine; the waits poll and end as soon as they can.
START_TIMEOUT = 300
GONE_TIMEOUT = 20


def _compose(results, *overrides):
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        return compose("config", overrides=[*overrides, f"results_dir={results}"])


def _reference(results, base, sweep: dict[str, list[str]]) -> dict[tuple[str, int], float]:
    """(setting id, trial) -> value of every setting of ``sweep``, trained in this process one
    block after the other (``train.n_jobs=1``): the sequential numbers."""
    keys = list(sweep)
    combos = [[]]
    for key in keys:
        combos = [c + [f"{key}={value}"] for c in combos for value in sweep[key]]
    out = {}
    for combo in combos:
        summary = run_setting(_compose(results, *base, *combo, "train.n_jobs=1"))
        out.update({(r["setting_id"], r["trial"]): r["value"] for r in summary.records})
    return out


def _values(path) -> dict[tuple[str, int], float]:
    """(setting id, trial) -> value of every line of a records file; fails on a torn or
    unreadable line and on a trial recorded twice."""
    out = {}
    if not Path(path).exists():
        return out
    for line in Path(path).read_text().splitlines():
        record = json.loads(line)
        key = (record["setting_id"], record["trial"])
        assert key not in out, f"trial recorded twice: {key}"
        out[key] = record["value"]
    return out


def _lines(path) -> int:
    try:
        return Path(path).read_text().count("\n")
    except FileNotFoundError:
        return 0


def _default_sigint() -> None:
    # a shell starts a job with Ctrl-C at its default action, whatever the test process has
    signal.signal(signal.SIGINT, signal.SIG_DFL)


class _Sweep:
    """``python -m pilid.run -m ...`` in a session of its own, its output in files (a pipe
    would keep the test waiting on any process that outlives the runner)."""

    def __init__(self, tmp_path, name, args):
        self.results = tmp_path / name
        self.records = self.results / "records.jsonl"
        self.out = tmp_path / f"{name}.out"
        self.err = tmp_path / f"{name}.err"
        command = [
            sys.executable,
            "-m",
            "pilid.run",
            "-m",
            *args,
            f"results_dir={self.results}",
            f"hydra.sweep.dir={tmp_path / (name + '-sweep')}",
        ]
        with open(self.out, "w") as out, open(self.err, "w") as err:
            self.process = subprocess.Popen(
                command,
                stdout=out,
                stderr=err,
                env={**os.environ, "OMP_NUM_THREADS": "1"},
                start_new_session=True,
                preexec_fn=_default_sigint,
            )
        self.pgid = self.process.pid

    def wait_until(self, condition, what: str) -> bool:
        """Poll ``condition()`` until it holds (True) or the runner exits first (False)."""
        deadline = time.monotonic() + START_TIMEOUT
        while not condition():
            if self.process.poll() is not None:
                return False
            assert time.monotonic() < deadline, f"no {what} within {START_TIMEOUT} s"
            time.sleep(0.05)
        return True

    def finish(self, timeout=START_TIMEOUT) -> int:
        try:
            return self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill_group()
            raise

    def stderr_lines(self) -> list[str]:
        return [line for line in self.err.read_text().splitlines() if line.strip()]

    def group(self) -> list[str]:
        """The living (not zombie) processes of the sweep's process group: 'pid command'."""
        found = []
        for entry in os.scandir("/proc"):
            if not entry.name.isdigit():
                continue
            try:
                stat = Path(f"/proc/{entry.name}/stat").read_bytes()
                command = Path(f"/proc/{entry.name}/cmdline").read_bytes()
            except OSError:
                continue
            fields = stat[stat.rfind(b")") + 2 :].split()
            if fields[0] != b"Z" and int(fields[3]) == self.pgid:
                words = command.replace(b"\0", b" ").decode(errors="replace")
                found.append(f"{entry.name} {words[:120]}")
        return found

    def group_gone(self, timeout=GONE_TIMEOUT) -> list[str]:
        """Wait until no process of the group is left; the survivors after ``timeout`` s."""
        deadline = time.monotonic() + timeout
        while (left := self.group()) and time.monotonic() < deadline:
            time.sleep(0.1)
        return left

    def kill_group(self) -> None:
        """SIGKILL what is left of the group (the test's own clean-up)."""
        for line in self.group():
            try:
                os.kill(int(line.split()[0]), signal.SIGKILL)
            except OSError:
                pass


def _assert_one_line(sweep: _Sweep, code: int) -> str:
    """Exit code ``code``, and stderr ends with the interrupt line, its only one, no traceback
    or warning; returns the line."""
    lines = sweep.stderr_lines()
    text = "\n".join(lines[-40:])
    assert sweep.process.returncode == code, text
    assert lines and lines[-1].startswith("pilid: interrupted: "), text
    assert lines[-1].endswith(INTERRUPTED), text
    assert sum("interrupted" in line for line in lines) == 1, text
    assert not any("Traceback" in line or "Warning" in line for line in lines), text
    return lines[-1]


# -- bad case 1: settings of two blocks under the joblib launcher ------------------------------
@pytest.mark.slow
def test_joblib_launcher_runs_two_block_settings_with_the_sequential_numbers(tmp_path):
    """12 trials = blocks of 10 and 2 (the paper's 20 trials are two blocks too): each setting's
    blocks train in its launcher worker; every value equals the sequential run's. Before the
    fix the sweep exited 1 with BrokenProcessPool and recorded nothing."""
    sweep = {"gamma": ["2", "3"]}
    reference = _reference(tmp_path / "sequential", [*TINY, "trials=12"], sweep)
    run = _Sweep(tmp_path, "joblib", [*JOBLIB, *TINY, "trials=12", "gamma=2,3"])
    try:
        code = run.finish()
    finally:
        run.kill_group()
    assert code == 0, "\n".join(run.stderr_lines()[-30:])
    assert _values(run.records) == reference
    layouts = {
        (tuple(r["layout"]["block"]), r["layout"]["block_size"], r["layout"]["threads"])
        for r in map(json.loads, run.records.read_text().splitlines())
    }
    assert layouts == {((0, 10), 10, 1), ((10, 12), 10, 1)}
    assert len(run.out.read_text().splitlines()) >= 2  # the workers' summary lines


def _nested_pool(jobs):
    from pilid.parallel import imap_processes

    return sorted(imap_processes(abs, jobs, 1))


@pytest.mark.slow
def test_worker_pool_starts_inside_a_loky_worker():
    """An explicit ``train.n_jobs`` > 1 inside a launcher worker starts the runner's pool of
    spawned processes there (its children used to die with ``cannot find context for 'loky'``,
    the worker's start method, and the pool broke)."""
    from joblib.externals.loky import get_reusable_executor

    executor = get_reusable_executor(max_workers=1)
    try:
        assert executor.submit(_nested_pool, [-1, -2]).result(timeout=START_TIMEOUT) == [1, 2]
    finally:
        executor.shutdown(wait=True, kill_workers=True)


# -- bad case 4 and Ctrl-C: signals under the joblib launcher ----------------------------------
SLOW_SWEEP = {"gamma": ["2", "3", "4", "5"]}
SLOW_ARGS = [*SLOW, "trials=2"]


@pytest.fixture(scope="module")
def slow_reference(tmp_path_factory):
    """The sequential values of the four slow settings, trained once for the module."""
    return _reference(tmp_path_factory.mktemp("sequential"), SLOW_ARGS, SLOW_SWEEP)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("how", "code"),
    [("term-runner", 143), ("term-group", 143), ("int-group", 130), ("kill-runner", -9)],
)
def test_signal_ends_every_process_of_the_joblib_launcher(tmp_path, how, code, slow_reference):
    """A sweep of four settings in two workers, signalled once a trial is recorded: every
    process of its group is gone within seconds, the runner said so in one line, and the
    records are whole with the sequential values; after Ctrl-C the same command resumes to
    them all. Before the fix SIGTERM left the workers and trackers alive (the runner died
    silently or a worker printed its own line), and Ctrl-C printed about 40 lines."""
    args = SLOW_ARGS
    run = _Sweep(tmp_path, "run", [*JOBLIB, *args, "gamma=2,3,4,5"])
    try:
        if not run.wait_until(lambda: _lines(run.records) >= 1, "record"):
            pytest.skip("the sweep finished before the signal")  # a very fast machine
        if how == "term-runner":
            os.kill(run.pgid, signal.SIGTERM)
        elif how == "term-group":
            os.killpg(run.pgid, signal.SIGTERM)
        elif how == "int-group":  # Ctrl-C in a terminal
            os.killpg(run.pgid, signal.SIGINT)
        else:
            os.kill(run.pgid, signal.SIGKILL)
        run.finish()
        left = run.group_gone()
    finally:
        run.kill_group()
    assert not left, f"still running after {how}: {left}"
    if how != "kill-runner":
        line = _assert_one_line(run, code)
        assert line.startswith(f"pilid: interrupted: {_lines(run.records)} of 8 trials")
    else:
        assert run.process.returncode == code
    done = _values(run.records)
    assert done, "no record survived"
    reference = slow_reference
    assert done == {key: reference[key] for key in done}
    if how == "int-group":
        again = _Sweep(tmp_path, "run", [*JOBLIB, *args, "gamma=2,3,4,5"])
        try:
            assert again.finish() == 0, "\n".join(again.stderr_lines()[-30:])
        finally:
            again.kill_group()
        assert _values(again.records) == reference


# -- poor cases: a signal between two settings -------------------------------------------------
TINY_SWEEP = {"gamma": ["2", "3"]}
TINY_ARGS = [*TINY, "trials=2"]


@pytest.fixture(scope="module")
def tiny_reference(tmp_path_factory):
    """The sequential values of the two tiny settings, trained once for the module."""
    return _reference(tmp_path_factory.mktemp("sequential"), TINY_ARGS, TINY_SWEEP)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("launcher", "how", "code"),
    [("basic", "term-runner", 143), ("basic", "int-group", 130), ("joblib", "term-runner", 143)],
)
def test_signal_between_two_settings_ends_with_one_line(
    tmp_path, launcher, how, code, tiny_reference
):
    """The second setting's lock is held here, so the sweep records the first setting and then
    waits outside any setting's training (the basic launcher in the runner, the joblib
    launcher in a worker). Signalled there, it ends with the one line counting the sweep's
    records, its group empties, and the same command resumes to the sequential numbers. Before
    the fix SIGTERM ended the basic sweep silently (exit -15) and Ctrl-C with an 89-line
    traceback; under joblib the waiting worker outlived the runner."""
    args = TINY_ARGS
    second = setting_id(_compose(tmp_path / "run", *args, "gamma=3"))
    lock = FileLock(lock_path(tmp_path / "run", second))
    lock_path(tmp_path / "run", second).parent.mkdir(parents=True)
    lock.acquire()
    extra = JOBLIB if launcher == "joblib" else []
    run = _Sweep(tmp_path, "run", [*extra, *args, "gamma=2,3"])
    try:
        assert run.wait_until(  # the runner's line "pilid: setting <id> is running ...; waiting"
            lambda: (
                _lines(run.records) >= 2
                and any(second in line and "waiting" in line for line in run.stderr_lines())
            ),
            "first setting recorded and second one waiting",
        ), "\n".join(run.stderr_lines()[-30:])
        if how == "term-runner":
            os.kill(run.pgid, signal.SIGTERM)
        else:
            os.killpg(run.pgid, signal.SIGINT)
        run.finish()
        left = run.group_gone()
    finally:
        lock.release()
        run.kill_group()
    assert not left, f"still running after {how}: {left}"
    line = _assert_one_line(run, code)
    assert line == f"pilid: interrupted: 2 of 4 {INTERRUPTED}"
    reference = tiny_reference
    done = _values(run.records)
    assert len(done) == 2 and done == {key: reference[key] for key in done}
    if launcher == "joblib":
        return  # resuming under joblib: test_signal_ends_every_process_of_the_joblib_launcher
    again = _Sweep(tmp_path, "run", [*extra, *args, "gamma=2,3"])
    try:
        assert again.finish() == 0, "\n".join(again.stderr_lines()[-30:])
    finally:
        again.kill_group()
    assert _values(again.records) == reference
