"""Signals, interrupted reports and launcher errors (issue 49, item 8), each ending in one line:

- SIGHUP (the terminal or the ssh session closed) ends a sweep like SIGTERM: one pilid line
  naming the signal and how to resume, exit code 129, every process of the sweep gone, no
  "leaked semlock" warning of loky's resource tracker, the records whole (it used to die with
  exit 129, no pilid line, and under the joblib launcher the tracker's warnings);
- ``python -m pilid.report tables`` writes its files into a hidden folder beside ``--out`` and
  moves them in only once all are written: an interrupt (SIGTERM, Ctrl-C) leaves the folder as
  it was (it could hold some old and some new tables); Ctrl-C in the report is one line, exit
  130 (it printed a 30-118-line traceback);
- the Slurm launcher without ``sbatch``/``srun`` on PATH, or with an ``sbatch`` that refuses the
  sweep, stops with one line (a 25-47-line traceback before);
- ``dry_run=true`` on a ``records.jsonl`` that is a directory is one error line and exit 2 (it
  said "0/2 trials recorded" with exit code 0).
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from omegaconf import OmegaConf
from test_launcher_signals import JOBLIB, SLOW, _lines, _reference, _Sweep, _values
from test_report_cli import TINY_SWEEP  # one setting of smoke_sim_regression

from pilid.errors import PilidError
from pilid.report.__main__ import main as report_main

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "OMP_NUM_THREADS": "1"}

needs_proc = pytest.mark.skipif(
    not os.path.isdir("/proc/self") or not hasattr(os, "killpg") or not hasattr(signal, "SIGHUP"),
    reason="finds processes by group in /proc (Linux)",
)

# -- SIGHUP ends a sweep with one line ---------------------------------------------------------
HUP_ARGS = [*SLOW, "trials=2"]
HUP_SWEEP = {"gamma": ["2", "3", "4"]}
HANGUP = (
    "pilid: interrupted by SIGHUP (the terminal or session closed): {done} of 6 trials "
    "recorded; run the same command to resume (under nohup, tmux or screen it outlives the "
    "terminal)"
)


@pytest.fixture(scope="module")
def hup_reference(tmp_path_factory):
    """The sequential values of the three slow settings, trained once for the module."""
    return _reference(tmp_path_factory.mktemp("sequential"), HUP_ARGS, HUP_SWEEP)


@needs_proc
@pytest.mark.slow
@pytest.mark.parametrize(
    ("launcher", "how"), [("joblib", "group"), ("joblib", "runner"), ("basic", "group")]
)
def test_sighup_ends_a_sweep_with_one_line_naming_it(tmp_path, launcher, how, hup_reference):
    """SIGHUP to the sweep's process group (a closed terminal) or to the runner alone, once a
    trial is recorded: exit 129, the one line naming SIGHUP and the resume, no traceback or
    warning (loky's "leaked semlock" ones included), no process left, whole records with the
    sequential values; the same command then resumes to all of them."""
    if signal.getsignal(signal.SIGHUP) == signal.SIG_IGN:  # the sweep inherits it, and keeps it
        pytest.skip("SIGHUP is ignored here (as under nohup), and a sweep keeps it ignored")
    extra = JOBLIB if launcher == "joblib" else []
    args = [*extra, *HUP_ARGS, "gamma=2,3,4"]
    run = _Sweep(tmp_path, "run", args)
    try:
        if not run.wait_until(lambda: _lines(run.records) >= 1, "record"):
            pytest.skip("the sweep finished before the signal")  # a very fast machine
        if how == "group":
            os.killpg(run.pgid, signal.SIGHUP)
        else:
            os.kill(run.pgid, signal.SIGHUP)
        run.finish()
        left = run.group_gone()
    finally:
        run.kill_group()
    lines = run.stderr_lines()
    text = "\n".join(lines[-40:])
    assert not left, f"still running after SIGHUP: {left}"
    assert run.process.returncode == 129, text
    assert lines[-1] == HANGUP.format(done=_lines(run.records)), text
    assert sum(line.startswith("pilid:") for line in lines) == 1, text
    assert not any("semlock" in line or "Traceback" in line or "Warning" in line for line in lines)
    done = _values(run.records)
    assert done and done == {key: hup_reference[key] for key in done}
    if (launcher, how) != ("joblib", "group"):
        return  # the resume: once
    again = _Sweep(tmp_path, "run", args)
    try:
        assert again.finish() == 0, "\n".join(again.stderr_lines()[-30:])
    finally:
        again.kill_group()
    assert _values(again.records) == hup_reference


@contextlib.contextmanager
def unblocked(signum):
    """``signum`` unblocked in the main thread while the block runs: a process started with it
    blocked (a CI runner's mask is inherited) would keep it from the main thread, and the
    handler would then come only through another thread."""
    if not hasattr(signal, "pthread_sigmask"):  # no signal masks (Windows)
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_UNBLOCK, [signum])
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def _poll(seconds):
    """Wait ``seconds`` in short sleeps, as a run's main thread does between two steps: a
    signal taken by another thread, or passed on by ``_thread.interrupt_main``, is handled at
    the next step, where one long ``time.sleep`` would hold it until it returns."""
    import time

    end = time.monotonic() + seconds
    while time.monotonic() < end:
        time.sleep(0.01)


@pytest.mark.skipif(not hasattr(signal, "SIGHUP"), reason="POSIX signals")
@pytest.mark.parametrize("name", ["SIGTERM", "SIGHUP"])
def test_a_signal_inside_omegaconf_waits_until_omegaconf_returns(name):
    """A signal that arrives while OmegaConf resolves a value (as Hydra composes a sweep's next
    job) lets the resolution finish whole; ``Terminated`` comes right after, outside OmegaConf
    (raised inside, it tore the config apart: exit 1 and OmegaConf's error, not the line)."""
    import time

    from pilid.experiments.interrupts import Terminated, signals_as_exceptions

    signum = getattr(signal, name)
    if signal.getsignal(signum) not in (signal.SIG_DFL, None):
        pytest.skip(f"{name} is handled or ignored here, so the block leaves it alone")
    events = []

    def slow_value():
        if not events:  # the first resolution only
            os.kill(os.getpid(), signum)
            time.sleep(0.3)  # the handler runs in here, inside OmegaConf's frames
        events.append("resolved")
        return 7

    OmegaConf.register_new_resolver("pilid_test_slow_value", slow_value, replace=True)
    cfg = OmegaConf.create({"a": "${pilid_test_slow_value:}", "b": 1})
    start = time.monotonic()
    with pytest.raises(Terminated) as stop, unblocked(signum), signals_as_exceptions():
        events.append(cfg.a)
        _poll(10)  # the signal is raised here, once OmegaConf has returned
    assert events == ["resolved", 7]
    assert stop.value.signum == signum
    assert time.monotonic() - start < 5
    assert OmegaConf.to_container(cfg, resolve=True) == {"a": 7, "b": 1}
    assert signal.getsignal(signum) in (signal.SIG_DFL, None)  # the handler is restored


@pytest.mark.skipif(not hasattr(signal, "SIGTERM"), reason="POSIX signals")
def test_a_signal_inside_hydra_waits_until_hydra_returns(monkeypatch, tmp_path):
    """A signal that arrives while Hydra reads a config file (as it composes a sweep's next job)
    lets the composition finish; ``Terminated`` comes right after, outside Hydra (raised inside,
    Hydra's reader failed on its own clean-up: "cannot access local variable 'f'", exit 1)."""
    import time

    from hydra import compose, initialize_config_dir

    from pilid.experiments.config import CONF_DIR
    from pilid.experiments.interrupts import Terminated, signals_as_exceptions

    if signal.getsignal(signal.SIGTERM) not in (signal.SIG_DFL, None):
        pytest.skip("SIGTERM is handled or ignored here, so the block leaves it alone")
    events = []

    def reading(real):
        def read(self, res):
            if not events:  # the first file only
                events.append("signalled")
                os.kill(os.getpid(), signal.SIGTERM)
                time.sleep(0.3)  # the handler runs in here, with Hydra's frames below
            return real(self, res)

        return read

    composed = []
    start = time.monotonic()
    with pytest.raises(Terminated) as stop, unblocked(signal.SIGTERM), signals_as_exceptions():
        with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
            # Hydra loads its plugins' modules afresh as it starts: patch the class it uses
            source = sys.modules["hydra._internal.core_plugins.importlib_resources_config_source"]
            cls = source.ImportlibResourcesConfigSource
            monkeypatch.setattr(cls, "_read_config", reading(cls._read_config))
            composed.append(compose("config", overrides=[f"results_dir={tmp_path}"]))
        _poll(10)  # the signal is raised here, once Hydra has returned
    assert events == ["signalled"]
    assert stop.value.signum == signal.SIGTERM
    assert time.monotonic() - start < 5
    assert composed and composed[0].results_dir == str(tmp_path)


@pytest.mark.skipif(not hasattr(signal, "pthread_sigmask"), reason="POSIX signal masks")
def test_a_held_back_signal_comes_back_where_the_signal_is_blocked():
    """The joblib launcher blocks SIGTERM in every thread and forwards the first one to the
    main thread's handler (`_thread.interrupt_main`), once. A SIGTERM held back inside OmegaConf
    must still end the block when OmegaConf returns, though a second SIGTERM sent to the process
    would stay blocked (it did: the sweep ran on, and the runner outlived the group's
    SIGTERM)."""
    import _thread
    import time

    from pilid.experiments.interrupts import Terminated, signals_as_exceptions

    if signal.getsignal(signal.SIGTERM) not in (signal.SIG_DFL, None):
        pytest.skip("SIGTERM is handled or ignored here, so the block leaves it alone")
    events = []

    def forwarded_value():
        if not events:  # the launcher's thread forwards the signal while OmegaConf resolves
            _thread.interrupt_main(signal.SIGTERM)
            time.sleep(0.3)
        events.append("resolved")
        return 3

    OmegaConf.register_new_resolver("pilid_test_forwarded", forwarded_value, replace=True)
    cfg = OmegaConf.create({"a": "${pilid_test_forwarded:}"})
    start = time.monotonic()
    with pytest.raises(Terminated), signals_as_exceptions():
        mask = signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGTERM])
        try:
            events.append(cfg.a)
            for _ in range(500):  # a main thread that polls, as the launcher's waits
                time.sleep(0.01)  # the held-back signal is raised here
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)
    assert events == ["resolved", 3]
    assert time.monotonic() - start < 3


def test_a_signal_still_waiting_when_the_block_ends_is_raised_there():
    """The block ends while OmegaConf still holds a signal back: ``Terminated`` on the way out,
    never a silent loss of the signal."""
    import time

    from pilid.experiments.interrupts import Terminated, signals_as_exceptions

    if signal.getsignal(signal.SIGTERM) not in (signal.SIG_DFL, None):
        pytest.skip("SIGTERM is handled or ignored here, so the block leaves it alone")

    def kill_and_return():
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(0.005)
        return 1

    OmegaConf.register_new_resolver("pilid_test_kill_late", kill_and_return, replace=True)
    cfg = OmegaConf.create({"a": "${pilid_test_kill_late:}"})
    with pytest.raises(Terminated), signals_as_exceptions():
        assert cfg.a == 1  # the block ends at once: the retry has not come yet
    assert signal.getsignal(signal.SIGTERM) in (signal.SIG_DFL, None)


# -- the report: an interrupt leaves the folder whole, in one line -----------------------------
CONF = ROOT / "conf"


@pytest.fixture
def conf(tmp_path) -> Path:
    """A copy of ``conf/`` whose smoke_sim_regression grid is one setting."""
    import shutil

    copy = tmp_path / "conf"
    shutil.copytree(CONF, copy)
    (copy / "experiment" / "smoke_sim_regression.yaml").write_text(TINY_SWEEP)
    return copy


def _results(folder: Path, value: float) -> Path:
    """A results directory of two trials of the tiny setting, each of MSE ``value``."""
    record = {
        "experiment": "smoke_sim_regression",
        "dataset": "synthetic",
        "model": "pilid",
        "params": {"gamma": 5, "init": "lstsq"},
        "N": 400,
        "m": 4,
        "task": "regression",
        "metric": "mse",
        "setting_id": "tiny",
        "data": {"name": "synthetic", "task": "regression", "N": 400, "m": 4},
    }
    lines = [{**record, "trial": t, "seed": t, "value": value} for t in (0, 1)]
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "records.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    return folder


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def _leftovers(parent: Path) -> list[str]:
    return [p.name for p in parent.rglob("*") if p.name.endswith((".staging", ".tmp"))]


def _tables(conf, results, out) -> list[str]:
    return ["tables", "--results", str(results), "--out", str(out), "--conf-dir", str(conf)]


@pytest.fixture
def old_tables(tmp_path, conf, capsys):
    """``tmp_path/tables`` built from records of MSE 0.3, its bytes, and records of MSE 0.9 (the
    new build's; every table file differs)."""
    out = tmp_path / "tables"
    assert report_main(_tables(conf, _results(tmp_path / "old", 0.3), out)) == 0
    capsys.readouterr()
    new = _results(tmp_path / "new", 0.9)
    return out, _snapshot(out), new


def _interrupt_after_first_file(monkeypatch, how):
    """Make the tables' writer stop the build once it has written its first file: ``how`` is
    the exception it raises, or a signal number this process sends itself."""
    from pilid.report import table_model

    real = table_model.write_text
    calls = []

    def writer(path, text, *args, **kwargs):
        written = real(path, text, *args, **kwargs)
        calls.append(path)
        if len(calls) == 1:
            if not isinstance(how, int):
                raise how
            # without a handler the signal would end pytest itself: fail the test instead
            assert signal.getsignal(how) not in (signal.SIG_DFL, None), "signal not handled"
            os.kill(os.getpid(), how)  # Python runs the handler at once, in this thread
        return written

    monkeypatch.setattr(table_model, "write_text", writer)
    return calls


@pytest.mark.parametrize(
    ("how", "code", "why"),
    [
        (KeyboardInterrupt(), 130, "Ctrl-C (SIGINT)"),
        (signal.SIGTERM, 143, "SIGTERM"),
        (signal.SIGHUP, 129, "SIGHUP"),
    ],
    ids=["ctrl-c", "sigterm", "sighup"],
)
def test_an_interrupted_table_build_leaves_the_old_tables_and_says_so_in_one_line(
    tmp_path, conf, capsys, monkeypatch, old_tables, how, code, why
):
    """Stopped after its first table file, the build leaves every old file as it was (it used to
    leave that table new beside old ones), no hidden folder, and one line; the same command
    then writes all new files."""
    if isinstance(how, int) and signal.getsignal(how) == signal.SIG_IGN:
        pytest.skip(f"{why} is ignored here (as under nohup), and the report keeps it ignored")
    out, before, new = old_tables
    calls = _interrupt_after_first_file(monkeypatch, how)
    try:
        code_seen = report_main(_tables(conf, new, out))
    except KeyboardInterrupt:
        pytest.fail("Ctrl-C came out of the report as a KeyboardInterrupt (a traceback)")
    err = capsys.readouterr().err.strip().splitlines()
    assert len(calls) == 1
    assert (code_seen, err) == (
        code,
        [
            f"pilid: interrupted by {why}: {out} keeps its previous files (or all of the new "
            "ones, never a mix); run the same command to build it again"
        ],
    )
    assert _snapshot(out) == before
    assert _leftovers(tmp_path) == []
    monkeypatch.undo()
    assert report_main(_tables(conf, new, out)) == 0
    after = _snapshot(out)
    assert set(after) == set(before)
    changed = [name for name in after if after[name] != before[name]]
    assert changed and all(name.endswith((".tex", ".md", ".csv")) for name in changed)
    assert after["tables.md"] != before["tables.md"] and "0.9" in after["tables.md"].decode()


def test_a_table_build_stopped_by_another_exception_leaves_the_old_tables(
    tmp_path, conf, monkeypatch, old_tables
):
    """SystemExit (or any error) between two files: the old folder, no hidden folder left."""
    out, before, new = old_tables
    _interrupt_after_first_file(monkeypatch, SystemExit(3))
    with pytest.raises(SystemExit):
        report_main(_tables(conf, new, out))
    assert _snapshot(out) == before
    assert _leftovers(tmp_path) == []


def test_a_signal_while_the_tables_are_moved_in_waits_until_all_are_in(
    tmp_path, conf, capsys, monkeypatch, old_tables
):
    """SIGTERM while the written files are moved into the folder is held back until the last
    one is in: the folder is wholly new, then the one line and exit 143."""
    from pilid import atomic

    out, before, new = old_tables
    real = atomic._move_into
    moves = []

    def move(source, target):
        real(source, target)
        moves.append(target)
        if len(moves) == 1:
            os.kill(os.getpid(), signal.SIGTERM)

    assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL  # the report installs its own
    monkeypatch.setattr(atomic, "_move_into", move)
    assert report_main(_tables(conf, new, out)) == 143
    assert capsys.readouterr().err.startswith("pilid: interrupted by SIGTERM: ")
    assert len(moves) == len(before) > 1
    monkeypatch.undo()
    reference = tmp_path / "reference"
    assert report_main(_tables(conf, new, reference)) == 0
    assert _snapshot(out) == _snapshot(reference)
    assert _leftovers(tmp_path) == []


def test_staged_folder_keeps_files_it_does_not_write_and_their_modes(tmp_path):
    """Files of the folder that the build does not write stay; a replaced file keeps its
    permission bits; the paths map to the folder."""
    from pilid.atomic import moved_path, staged_folder

    out = tmp_path / "out"
    out.mkdir()
    (out / "keep.csv").write_text("mine")
    (out / "a.md").write_text("old")
    os.chmod(out / "a.md", 0o600)
    with staged_folder(out) as staging:
        (staging / "a.md").write_text("new")
        (staging / "sub").mkdir()
        (staging / "sub" / "b.md").write_text("b")
    assert moved_path(staging / "sub" / "b.md", staging, out) == out / "sub" / "b.md"
    assert {p.relative_to(out).as_posix(): p.read_text() for p in out.rglob("*.*")} == {
        "keep.csv": "mine",
        "a.md": "new",
        "sub/b.md": "b",
    }
    assert (out / "a.md").stat().st_mode & 0o777 == 0o600
    assert _leftovers(tmp_path) == []


_CTRL_C_REPORT = """
import os, runpy, signal, sys
from pilid.report import table_model
real = table_model.write_text
def writer(path, text, *args, **kwargs):
    real(path, text, *args, **kwargs)
    os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C after the first table file
table_model.write_text = writer
sys.argv = ["pilid.report", *sys.argv[1:]]
runpy.run_module("pilid.report", run_name="__main__", alter_sys=True)
"""


@pytest.mark.slow
def test_ctrl_c_in_the_report_command_is_one_line_and_exit_130(tmp_path, conf, old_tables):
    """The command line itself, Ctrl-C (a real SIGINT) in the middle of the tables: one line
    on stderr, exit code 130, the old tables (it printed a 30-118-line traceback)."""
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:  # a background job of a script
        pytest.skip("SIGINT is ignored here (a job started with & by a script), so is Ctrl-C")
    out, before, new = old_tables
    done = subprocess.run(
        [sys.executable, "-c", _CTRL_C_REPORT, *_tables(conf, new, out)],
        capture_output=True,
        text=True,
        env=ENV,
        timeout=300,
        cwd=ROOT,
    )
    assert done.returncode == 130, done.stderr[-3000:]
    assert done.stderr.strip().splitlines() == [
        f"pilid: interrupted by Ctrl-C (SIGINT): {out} keeps its previous files (or all of the "
        "new ones, never a mix); run the same command to build it again"
    ]
    assert _snapshot(out) == before


# -- the Slurm launcher without Slurm ----------------------------------------------------------
needs_submitit = pytest.mark.skipif(
    importlib.util.find_spec("hydra_plugins.hydra_submitit_launcher") is None,
    reason="the optional hydra-submitit-launcher plugin is not installed",
)
NO_SLURM = (
    "pilid: error: hydra/launcher=pilid_slurm needs Slurm's {missing}, which {verb} not on PATH "
    "(this is not a Slurm login node); nothing was submitted; run the sweep on a Slurm login "
    "node, or on this machine with hydra/launcher=pilid_joblib (its cores) or "
    "hydra/launcher=pilid_local (Slurm's code path without a cluster)"
)


def _fake_slurm(folder: Path, commands: dict[str, str]) -> Path:
    """A folder of shell scripts standing in for Slurm's commands."""
    folder.mkdir()
    for name, body in commands.items():
        (folder / name).write_text(f"#!/bin/sh\n{body}\n")
        (folder / name).chmod(0o755)
    return folder


@needs_submitit
@pytest.mark.parametrize(
    ("present", "missing", "verb"),
    [((), "sbatch and srun", "are"), (("srun",), "sbatch", "is"), (("sbatch",), "srun", "is")],
)
def test_slurm_launcher_without_sbatch_or_srun_is_one_line(
    tmp_path, monkeypatch, capsys, present, missing, verb
):
    """Checked before anything is submitted: one line naming what is missing and the fix,
    exit 2 (submitit's 'Could not detect "srun"' or sbatch's FileNotFoundError came as a
    traceback of 25-47 lines)."""
    from hydra_plugins.pilid_launcher.slurm import PilidSlurmLauncher

    fake = _fake_slurm(tmp_path / "bin", {name: "exit 0" for name in present})
    monkeypatch.setenv("PATH", str(fake))
    launcher = PilidSlurmLauncher(submitit_folder=str(tmp_path / "submitit"))
    with pytest.raises(SystemExit) as stopped:
        launcher.launch([["gamma=2"]], initial_job_idx=0)
    assert stopped.value.code == 2
    assert capsys.readouterr().err.splitlines() == [NO_SLURM.format(missing=missing, verb=verb)]
    assert not (tmp_path / "submitit").exists()


def _sweep_command(tmp_path, *extra):
    return [
        sys.executable, "-m", "pilid.run", "-m", "hydra/launcher=pilid_slurm", "model=linear",
        "data.N=300", "data.m=3", "trials=1", f"results_dir={tmp_path / 'runs'}",
        f"hydra.sweep.dir={tmp_path / 'sweep'}", *extra,
    ]  # fmt: skip


@needs_submitit
@pytest.mark.slow
def test_slurm_sweep_without_sbatch_is_one_line(tmp_path):
    """The command line on a machine without Slurm: stderr is the one line, exit 2."""
    fake = _fake_slurm(tmp_path / "bin", {})
    env = {**ENV, "PATH": str(fake)}
    done = subprocess.run(
        _sweep_command(tmp_path), capture_output=True, text=True, env=env, timeout=300, cwd=ROOT
    )
    assert done.returncode == 2, done.stderr[-3000:]
    assert done.stderr.strip().splitlines() == [
        NO_SLURM.format(missing="sbatch and srun", verb="are")
    ]
    assert not (tmp_path / "runs").exists()


@needs_submitit
@pytest.mark.slow
def test_slurm_sweep_that_sbatch_refuses_is_its_message_and_one_line(tmp_path):
    """sbatch is there but the controller cannot be reached: sbatch's own message, then one
    pilid line (a traceback before); nothing recorded."""
    refusal = "sbatch: error: Batch job submission failed: Unable to contact slurm controller"
    fake = _fake_slurm(tmp_path / "bin", {"sbatch": f'echo "{refusal}" >&2\nexit 1', "srun": ""})
    env = {**ENV, "PATH": f"{fake}{os.pathsep}{os.environ.get('PATH', '')}"}
    done = subprocess.run(
        _sweep_command(tmp_path), capture_output=True, text=True, env=env, timeout=300, cwd=ROOT
    )
    assert done.returncode == 2, done.stderr[-3000:]
    assert done.stderr.strip().splitlines() == [
        refusal,
        "pilid: error: sbatch refused the sweep (exit 1; its message is above); nothing was "
        "submitted; check the cluster (sinfo) and hydra.launcher.partition, or run the sweep on "
        "a Slurm login node, or on this machine with hydra/launcher=pilid_joblib (its cores) or "
        "hydra/launcher=pilid_local (Slurm's code path without a cluster)",
    ]
    assert not (tmp_path / "runs").exists()


# -- dry_run=true on a records.jsonl that is a directory ---------------------------------------
def test_dry_run_on_a_records_directory_is_one_line(tmp_path):
    """The plan of a setting and the sweep's dry run both stop with one line (they counted
    the directory as no records: "0/2 trials recorded", exit 0)."""
    from test_runner import TINY_DATA, _compose

    from hydra_plugins.pilid_sweeper.checked_sweeper import _dry_run
    from pilid.experiments.planning import plan_setting

    (tmp_path / "runs" / "records.jsonl").mkdir(parents=True)
    expected = (
        f"'{tmp_path / 'runs' / 'records.jsonl'}' is a directory, not a records file; move it "
        "away or set results_dir to another directory"
    )
    cfg = _compose(["model=linear", *TINY_DATA, "trials=2", f"results_dir={tmp_path / 'runs'}"])
    with pytest.raises(PilidError) as raised:
        plan_setting(cfg)
    assert str(raised.value) == expected
    with pytest.raises(PilidError) as raised:
        _dry_run([OmegaConf.to_container(cfg, resolve=False)])
    assert str(raised.value) == expected


@pytest.mark.slow
def test_dry_run_sweep_on_a_records_directory_exits_2_with_one_line(tmp_path):
    records = tmp_path / "runs" / "records.jsonl"
    records.mkdir(parents=True)
    command = [
        sys.executable, "-m", "pilid.run", "-m", "model=linear", "data.N=300,600", "data.m=3",
        "trials=2", "dry_run=true", f"results_dir={tmp_path / 'runs'}",
        f"hydra.sweep.dir={tmp_path / 'sweep'}",
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, env=ENV, timeout=300, cwd=ROOT)
    assert done.returncode == 2, done.stderr[-3000:]
    assert done.stdout == ""
    assert done.stderr.strip().splitlines() == [
        f"pilid: error: '{records}' is a directory, not a records file; move it away or set "
        "results_dir to another directory"
    ]
