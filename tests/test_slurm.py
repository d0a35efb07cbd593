"""Sweeps through `hydra/launcher=pilid_slurm` on a real one-node Slurm cluster.

They run against the cluster that `scripts/slurm_local.sh` starts (its own slurm.conf, munge
key, state and logs in a scratch directory; KillWait=5, cred_expire=10) and only there:

    sudo scripts/slurm_local.sh -- python -m pytest -m slurm -s tests/test_slurm.py

The script exports PILID_SLURM_LOCAL (its scratch directory: jobcomp.txt, logs) and SLURM_CONF.
Elsewhere (a plain `make test`, CI) the module is skipped with the reason: Slurm or munge is not
installed (`apt-get install -y slurmctld slurmd slurm-client munge`), or no local cluster is up.
`-s` prints the jobs, the states seen in squeue and the job completion log, and the records.
Both tests together took 9 min 44 s on 2 cores under a load average of ~6 (the sweep ~40 s; the
time-out test trains 60 trials twice, in Slurm and uninterrupted beside it).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

TOOLS = ("munged", "slurmctld", "slurmd", "sinfo", "sbatch", "squeue", "scontrol", "scancel")
MISSING = [tool for tool in TOOLS if shutil.which(tool) is None]
LOCAL = os.environ.get("PILID_SLURM_LOCAL", "")
CONF = os.environ.get("SLURM_CONF", "")

pytestmark = [
    pytest.mark.slurm,
    pytest.mark.slow,
    pytest.mark.skipif(
        bool(MISSING),
        reason=f"Slurm is not installed ({', '.join(MISSING)} missing; "
        "apt-get install -y slurmctld slurmd slurm-client munge)",
    ),
    pytest.mark.skipif(
        not MISSING and not (LOCAL and Path(CONF) == Path(LOCAL) / "slurm.conf"),
        reason="no local Slurm cluster: run these tests under scripts/slurm_local.sh "
        "(sudo scripts/slurm_local.sh -- python -m pytest -m slurm tests/test_slurm.py)",
    ),
]

pytest.importorskip("hydra_plugins.hydra_submitit_launcher")

ROOT = Path(__file__).resolve().parents[1]
PARTITION = os.environ.get("PILID_SLURM_PARTITION", "debug")

#: Every job: the local partition, one CPU, 1 GB (the node has 2 CPUs: two jobs run at once).
LAUNCHER = [
    "hydra/launcher=pilid_slurm",
    f"hydra.launcher.partition={PARTITION}",
    "hydra.launcher.cpus_per_task=1",
    "hydra.launcher.mem_gb=1",
]


class Cluster:
    def __init__(self, directory: Path):
        self.directory = directory
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("SLURM_")}
        self.env.update(SLURM_CONF=str(directory / "slurm.conf"), OMP_NUM_THREADS="1")
        # the sweeps and their jobs (sbatch passes the environment on) run from tmp_path and
        # import pilid and hydra_plugins from this checkout, whatever is installed
        path = [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]
        self.env["PYTHONPATH"] = os.pathsep.join(path)

    def run(self, *args: str) -> str:
        return subprocess.run(
            list(args), env=self.env, capture_output=True, text=True, timeout=30
        ).stdout

    def jobcomp(self) -> list[dict[str, str]]:
        """The job completion log: one line per end of a job's run (requeues included)."""
        path = self.directory / "log" / "jobcomp.txt"
        text = path.read_text() if path.exists() else ""
        return [dict(re.findall(r"(\w+)=(\S*)", line)) for line in text.splitlines()]

    def ends(self, job_filter, final: str = "COMPLETED", count: int = 1) -> list[dict[str, str]]:
        """The jobcomp lines that job_filter accepts, once `count` of them are `final`: slurmctld
        writes a line when it has cleaned the job up, which can be after submitit saw it done."""
        deadline = time.monotonic() + 60
        while True:
            ends = [c for c in self.jobcomp() if job_filter(c)]
            if sum(c["JobState"] == final for c in ends) >= count or time.monotonic() > deadline:
                return ends
            time.sleep(0.5)

    def logs(self) -> str:
        parts = []
        for log in sorted((self.directory / "log").glob("*")):
            lines = log.read_text(errors="replace").splitlines()[-20:]
            parts.append(f"---- {log.name}\n" + "\n".join(lines))
        return "\n".join(parts)


@pytest.fixture(scope="module")
def cluster():
    """The running local cluster; the node must be idle (no one else's jobs on it)."""
    found = Cluster(Path(LOCAL))
    state = found.run("sinfo", "-h", "-p", PARTITION, "-o", "%T").strip()
    if state != "idle":
        pytest.fail(f"partition {PARTITION} of {CONF} is {state!r}, not idle\n{found.logs()}")
    print("\n" + found.run("sinfo").strip())
    return found


def _sweep(cluster: Cluster, tmp_path: Path, args: list[str], timeout: float):
    """Run `python -m pilid.run -m <LAUNCHER> <args>` from tmp_path and watch `squeue` (every
    second) until it returns; returns (its output, {job id: [(state, reason), ...]})."""
    command = [sys.executable, "-m", "pilid.run", "-m", *LAUNCHER, *args]
    command += [f"results_dir={tmp_path / 'results'}", f"hydra.sweep.dir={tmp_path / 'sweep'}"]
    print("\n$", " ".join(command[1:]))
    log = tmp_path / "sweep.log"
    states: dict[str, list[tuple[str, str]]] = {}
    with open(log, "wb") as sink:
        sweep = subprocess.Popen(
            command, cwd=tmp_path, env=cluster.env, stdout=sink, stderr=subprocess.STDOUT
        )
        deadline = time.monotonic() + timeout
        while sweep.poll() is None:
            if time.monotonic() > deadline:
                cluster.run("scancel", "-p", PARTITION)
                sweep.kill()
                sweep.wait()
                pytest.fail(
                    f"the sweep took more than {timeout} s; states {states}\n"
                    f"{log.read_text()}\n{cluster.logs()}"
                )
            for line in cluster.run("squeue", "-h", "-o", "%i %T %r").splitlines():
                job, state, reason = line.split(maxsplit=2)
                seen = states.setdefault(job, [])
                if not seen or seen[-1] != (state, reason):
                    seen.append((state, reason))
            time.sleep(1)
    output = log.read_text(errors="replace")
    if sweep.returncode != 0:
        pytest.fail(f"the sweep failed ({sweep.returncode}):\n{output}\n{cluster.logs()}")
    for job, seen in sorted(states.items()):
        print(f"squeue {job}: " + " -> ".join(f"{s}({r})" if r != "None" else s for s, r in seen))
    return output, states


def _records(results: Path) -> list[dict]:
    lines = (results / "records.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


def _job_logs(tmp_path: Path) -> dict[str, str]:
    """The jobs' own stdout+stderr (submitit's per-task logs), by Slurm job id."""
    logs = {}
    for path in sorted((tmp_path / "sweep" / ".submitit").glob("*/*_log.*")):
        job = path.name.rsplit("_", 2)[0]
        logs[job] = logs.get(job, "") + path.read_text(errors="replace")
    return logs


def test_sweep_runs_every_setting_on_slurm_and_records_each_trial_once(cluster, tmp_path):
    args = ["model=pilid", "gamma=1,5", "data=synthetic", "trials=3", "train.epochs=5"]
    output, states = _sweep(cluster, tmp_path, [*args, "hydra.launcher.timeout_min=10"], 300)

    records = _records(tmp_path / "results")
    trials: dict[tuple[str, int], list[int]] = {}
    for record in records:
        key = (record["setting_id"], record["params"]["gamma"])
        trials.setdefault(key, []).append(record["trial"])
    by_gamma = sorted((gamma, sorted(t)) for (_, gamma), t in trials.items())
    print(f"records: {len(records)} lines; (gamma, trials): {by_gamma}")
    assert by_gamma == [(1, [0, 1, 2]), (5, [0, 1, 2])]
    assert sum(len(t) for t in trials.values()) == len(records) == 6  # each exactly once
    assert len({sid for sid, _ in trials}) == 2

    # one array job, a task per setting; both ran on the cluster and completed
    tasks = sorted(job for job in states if re.fullmatch(r"\d+_\d+", job))
    assert len(tasks) == 2 and len({t.split("_")[0] for t in tasks}) == 1, states
    assert all(("RUNNING", "None") in states[t] for t in tasks), states
    logs = _job_logs(tmp_path)
    assert sorted(logs) == tasks
    summaries = sorted(
        line for text in logs.values() for line in text.splitlines() if "over 3 trials" in line
    )
    print("\n".join(f"job summary: {line}" for line in summaries))
    assert [s.split(":")[0] for s in summaries] == [
        "pilid gamma=1 synthetic-regression N=2000 m=10",
        "pilid gamma=5 synthetic-regression N=2000 m=10",
    ]
    ends = cluster.ends(lambda c: c.get("WorkDir") == str(tmp_path), count=2)
    print("jobcomp: " + "; ".join(f"{'='.join(sorted(_names(c)))} {c['JobState']}" for c in ends))
    assert [c["JobState"] for c in ends] == ["COMPLETED", "COMPLETED"]


#: About two minutes of training on a quiet core (2 s a trial; three times that on a loaded
#: machine), recorded trial by trial; early stopping off so that every trial costs the same.
TRIALS = 60
FAULT_ARGS = [
    "model=pilid",
    "gamma=5",
    "data=synthetic",
    "data.N=4000",
    f"trials={TRIALS}",
    "train.epochs=15",
    "train.patience=null",
    "train.trials_per_batch=1",
    "train.n_jobs=1",
]


def test_timed_out_job_is_requeued_and_resumes_with_the_uninterrupted_values(cluster, tmp_path):
    # The uninterrupted reference run, on this machine, beside the Slurm job.
    reference = subprocess.Popen(
        [sys.executable, "-m", "pilid.run", *FAULT_ARGS]
        + [f"results_dir={tmp_path / 'reference'}", f"hydra.run.dir={tmp_path / 'refrun'}"],
        cwd=tmp_path,
        env=cluster.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    # --time=2. slurmctld checks time limits every 30 s and sends the warning signal (SIGUSR2,
    # signal_delay_s=20) at the first check with less than 20 + 30 s left: 70-100 s into the
    # first run; a requeued run starts ~12 s after a check (cred_expire=10), so it gets ~78 s.
    # (With --time=1 a requeued run would get ~18 s: too short to start and train a trial on a
    # loaded machine.) The run times out at least once; more time-outs than the config's 3 are
    # allowed here because a loaded machine trains slower.
    launcher = ["hydra.launcher.timeout_min=2", "hydra.launcher.signal_delay_s=20"]
    launcher += ["hydra.launcher.max_num_timeout=12"]
    output, states = _sweep(cluster, tmp_path, [*FAULT_ARGS, *launcher], 1500)
    reference_output, _ = reference.communicate(timeout=900)
    assert reference.returncode == 0, reference_output

    (job,) = states
    scontrol = cluster.run("scontrol", "show", "job", job)
    restarts = int(re.search(r"Restarts=(\d+)", scontrol).group(1))
    log = _job_logs(tmp_path)[job]
    # submitit's own lines (the .err and .out logs both have them; hydra's logger repeats them)
    signalled = len(set(re.findall(r"submitit WARNING \((.+?)\) - Caught signal SIGUSR2", log)))
    found = set(re.findall(r"submitit INFO \((.+?)\) - Requeued job \d+ \((\d+) remaining", log))
    requeued = [int(left) for _, left in sorted(found)]  # time-outs left after each requeue
    ends = [c["JobState"] for c in cluster.ends(lambda c: job in _names(c))]
    print(f"job {job}: Restarts={restarts}, SIGUSR2 caught {signalled}x, requeued {requeued}")
    print(f"jobcomp JobId={job}: {' '.join(ends)}")
    assert restarts >= 1, f"the run ended before its time limit; train longer\n{log}"
    assert signalled == len(requeued) == restarts
    assert "Job not requeued" not in log and "Traceback" not in log
    seen = [state for state, _ in states[job]]
    assert seen.count("RUNNING") == restarts + 1, states
    assert ("PENDING", "BeginTime") in states[job], states  # requeued, waiting cred_expire
    assert len(ends) == restarts + 1 and ends[-1] == "COMPLETED"  # 22.05 logs a requeue PENDING

    records = _records(tmp_path / "results")
    expected = _records(tmp_path / "reference")
    runs = _runs(records, log)
    print(f"records: {len(records)} lines; trials recorded by each run: {runs}")
    assert sorted(r["trial"] for r in records) == list(range(TRIALS))  # none lost, none twice
    assert len(runs) == restarts + 1 and sum(bool(run) for run in runs) >= 2
    assert [t for run in runs for t in run] == list(range(TRIALS))  # each went on from the last
    by_trial = {r["trial"]: r for r in records}
    for record in expected:
        ours = by_trial[record["trial"]]
        assert ours["value"] == record["value"], (record["trial"], ours["value"], record["value"])
        assert ours["layout"] == record["layout"] and ours["setting_id"] == record["setting_id"]
    print(f"values: all {TRIALS} equal the uninterrupted run's ({reference_output.strip()})")


def _names(jobcomp: dict[str, str]) -> set[str]:
    """A jobcomp line's job as squeue may name it: JobId, or ArrayJobId_ArrayTaskId."""
    names = {jobcomp.get("JobId", "")}
    if jobcomp.get("ArrayTaskId", "4294967294") not in ("", "4294967294"):  # NO_VAL: no array
        names.add(f"{jobcomp['ArrayJobId']}_{jobcomp['ArrayTaskId']}")
    return names


def _runs(records: list[dict], log: str) -> list[list[int]]:
    """The trials each run of the job recorded, in record order: a record belongs to the last
    run that started (submitit's "Starting with" line, local time) before it was written."""
    from datetime import datetime

    found = re.findall(r"submitit INFO \((\S+ \S+)\) - Starting with", log)
    starts = sorted({datetime.strptime(t, "%Y-%m-%d %H:%M:%S,%f").astimezone() for t in found})
    runs: list[list[int]] = [[] for _ in starts]
    for record in records:
        at = datetime.fromisoformat(record["finished_at"])
        runs[max(i for i, start in enumerate(starts) if start <= at)].append(record["trial"])
    return runs
