"""Runs that never lie: a resumed run gives the uninterrupted run's numbers, and interrupts are
clean (runs that never lie)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest
from hydra import compose, initialize_config_dir

from pilid.experiments import ResultStore, run_setting
from pilid.experiments.config import CONF_DIR
from pilid.experiments.planning import plan_blocks

# Early stopping on (patience 3), so that a trial's value depends on the epoch it restores:
# the case where the single-trial and batched computations used to part ways.
SMALL = [
    "data=synthetic",
    "data.N=600",
    "data.m=4",
    "data.n_interactions=2",
    "model=pilid",
    "gamma=4",
    "model.hidden_layers=[16,16]",
    "train.epochs=40",
    "train.patience=3",
    "train.batch_size=64",
]


def _config(tmp_path, *overrides):
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        return compose("config", overrides=[*SMALL, f"results_dir={tmp_path}", *overrides])


def _values(path) -> dict[tuple[str, int], float]:
    """(setting id, trial) -> value of every line of a records file (fails on a bad line)."""
    lines = [json.loads(line) for line in open(path)]
    out = {}
    for r in lines:
        key = (r["setting_id"], r["trial"])
        assert key not in out, f"trial recorded twice: {key}"
        out[key] = r["value"]
    return out


def test_blocks_are_fixed_by_trial_index():
    assert plan_blocks(7, 3, [4]) == [[3, 4, 5]]
    assert plan_blocks(7, 3, [0, 6]) == [[0, 1, 2], [6]]
    assert plan_blocks(7, 3, range(7)) == [[0, 1, 2], [3, 4, 5], [6]]
    assert plan_blocks(7, 3, []) == []


@pytest.mark.slow
@pytest.mark.parametrize("deleted", [[1], [0, 3], [2, 3]])
def test_resume_after_losing_any_trials_gives_the_same_numbers(tmp_path, deleted):
    """The case to guard: delete some trials' lines from a finished run, rerun: the resumed
    trials equal the uninterrupted ones exactly (before the fix, trial 1 went 0.5650 -> 0.4681)."""
    full = tmp_path / "full"
    run_setting(_config(full, "trials=4"))
    reference = _values(full / "records.jsonl")

    resumed = tmp_path / "resumed"
    resumed.mkdir()
    kept = [
        line for line in open(full / "records.jsonl") if json.loads(line)["trial"] not in deleted
    ]
    (resumed / "records.jsonl").write_text("".join(kept))
    summary = run_setting(_config(resumed, "trials=4"))
    assert summary.ran == len(deleted)
    assert _values(resumed / "records.jsonl") == reference


@pytest.mark.slow
def test_worker_count_and_batched_resume_do_not_change_numbers(tmp_path):
    """train.n_jobs changes the speed only: every block trains on one thread wherever it runs."""
    one = tmp_path / "one"
    two = tmp_path / "two"
    run_setting(_config(one, "trials=4", "train.trials_per_batch=2", "train.n_jobs=1"))
    run_setting(_config(two, "trials=4", "train.trials_per_batch=2", "train.n_jobs=2"))
    assert _values(one / "records.jsonl") == _values(two / "records.jsonl")
    layouts = [json.loads(line)["layout"] for line in open(two / "records.jsonl")]
    assert {(tuple(x["block"]), x["block_size"], x["threads"]) for x in layouts} == {
        ((0, 2), 2, 1),
        ((2, 4), 2, 1),
    }


def test_raising_trials_trains_only_the_new_trials(tmp_path):
    run_setting(_config(tmp_path, "trials=2"))
    summary = run_setting(_config(tmp_path, "trials=3"))
    assert summary.ran == 1 and summary.n == 3
    assert len(ResultStore(tmp_path).records()) == 3


# -- kill and resume through the command line ---------------------------------------------------
SWEEP = [
    *SMALL,
    "data.N=1500",
    "model.hidden_layers=[64,64]",
    "train.patience=5",
    "trials=10",  # 2 settings x 5 blocks of 2: room for three interrupts on a fast machine
    "train.trials_per_batch=2",
    "train.n_jobs=2",
]


def _command(tmp_path, results):
    return [
        sys.executable,
        "-m",
        "pilid.run",
        "-m",
        "gamma=2,4",
        *[a for a in SWEEP if not a.startswith("gamma=")],
        f"results_dir={results}",
        f"hydra.sweep.dir={tmp_path / 'sweep'}",
    ]


def _lines(path) -> int:
    try:
        return sum(1 for _ in open(path))
    except FileNotFoundError:
        return 0


def _default_sigint() -> None:
    # a shell starts a job with Ctrl-C at its default action, whatever the test process has
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _start(command):
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    return subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        start_new_session=True,  # its own process group, like a job under a shell or Slurm
        preexec_fn=_default_sigint,
    )


_last_pgid = [0]


def _interrupt_after(command, records, at_least, how, timeout=240):
    """Start the sweep, wait until ``at_least`` records exist, then stop it ``how``."""
    process = _start(command)
    _last_pgid[0] = process.pid  # start_new_session: the group id is the runner's pid
    deadline = time.monotonic() + timeout
    while _lines(records) < at_least and process.poll() is None:
        assert time.monotonic() < deadline, "the sweep recorded too little in time"
        time.sleep(0.05)
    if process.poll() is not None:  # finished before the interrupt point: nothing to test
        return process.returncode, *process.communicate()
    if how == "term":
        os.kill(process.pid, signal.SIGTERM)
    elif how == "int":  # Ctrl-C in a terminal: the whole foreground process group
        os.killpg(process.pid, signal.SIGINT)
    else:  # SIGKILL of the runner alone: its workers must notice and exit
        os.kill(process.pid, signal.SIGKILL)
    out, err = process.communicate(timeout=60)
    return process.returncode, out, err


def _children_gone(pgid, timeout=10.0) -> bool:
    """Whether every process of the group has exited within ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.1)
    return False


@pytest.mark.slow
def test_sweep_interrupted_at_several_points_resumes_to_the_uninterrupted_numbers(tmp_path):
    """A two-setting sweep stopped by SIGTERM, Ctrl-C and SIGKILL at several points, then
    resumed, records every trial exactly once with the uninterrupted run's values."""
    # The uninterrupted numbers, trained here one block after the other (n_jobs changes the speed
    # only: test_worker_count_and_batched_resume_do_not_change_numbers), which spares a third
    # sweep's process starts.
    reference_dir = tmp_path / "reference"
    fixed = [a for a in SWEEP if not a.startswith(("gamma=", "train.n_jobs="))]
    for gamma in (2, 4):
        run_setting(_config(reference_dir, *fixed, f"gamma={gamma}", "train.n_jobs=1"))
    reference = _values(reference_dir / "records.jsonl")
    total = len(reference)
    assert total == 20

    rounds = []  # (attempt, how, exit code, lines before, lines after), for the message
    for attempt in range(3):  # a run that finished before two interrupts is retried afresh
        results = tmp_path / f"interrupted-{attempt}"
        records = results / "records.jsonl"
        command = _command(tmp_path, results)
        stopped = []  # the interrupts that left trials to resume (each next round resumes them)
        for how, code in (("term", 143), ("int", 130), ("kill", -9)):
            before = _lines(records)
            if before == total:
                break  # an earlier round finished the sweep: nothing left to stop
            rc, _, err = _interrupt_after(command, records, before + 2, how)
            rounds.append((attempt, how, rc, before, _lines(records)))
            if rc == 0:
                continue  # the sweep finished first; the next rounds have nothing left to stop
            assert rc == code, err[-2000:]
            if _lines(records) < total:
                stopped.append(how)
            if how != "kill":
                lines = [line for line in err.splitlines() if line.strip()]
                assert lines[-1].startswith("pilid: interrupted: "), err[-2000:]
                assert lines[-1].endswith("trials recorded; run the same command to resume")
                assert "Traceback" not in err
            assert _lines(records) >= before
        if len(stopped) >= 2:
            break
    assert len(stopped) >= 2, f"only {stopped} interrupted the sweep; rounds: {rounds}"
    result = subprocess.run(
        command,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert _values(records) == reference


@pytest.mark.slow
@pytest.mark.parametrize("how", ["term", "kill"])
def test_no_worker_outlives_the_runner(tmp_path, how):
    """SIGTERM: the runner stops its workers and exits 143. SIGKILL of the runner alone: the
    workers notice they were orphaned and exit. Either way the process group empties."""
    results = tmp_path / "results"
    rc, _, err = _interrupt_after(_command(tmp_path, results), results / "records.jsonl", 1, how)
    if rc == 0:
        pytest.skip("the sweep finished before the signal")
    assert rc == (143 if how == "term" else -9), err[-2000:]
    assert _children_gone(_last_pgid[0]), f"workers outlived the runner after SIG{how.upper()}"
