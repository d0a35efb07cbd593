"""Experiment tracking (``logger=mlflow``, pilid/experiments/tracking.py): one MLflow run per
setting, by default where MLflow itself looks (``MLFLOW_TRACKING_URI``, else its default store in
the working directory), logged after the trials are stored, never twice for the same records, no
part of the setting id or of what the store records; a tracking server that does not answer is
one line before anything trains."""

from __future__ import annotations

import importlib.util
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from unittest import mock

import pytest
from hydra import compose, initialize_config_dir
from test_runner import TINY_DATA  # the runner tests' tiny data set

from pilid.errors import PilidError
from pilid.experiments.config import CONF_DIR, check_config, check_overrides
from pilid.experiments.scoring import Summary
from pilid.experiments.setting import setting_id
from pilid.run import check_composition

mlflow = pytest.importorskip("mlflow", reason='the mlflow extra: pip install -e ".[mlflow]"')

ROOT = Path(__file__).resolve().parents[1]
LABEL = "pilid gamma=2 synthetic-regression N=500 m=10"  # the setting's label (the run's name)
#: MLflow's SQLite store needs SQLAlchemy (the mlflow and dev extras install it).
needs_sqlite = pytest.mark.skipif(
    importlib.util.find_spec("sqlalchemy") is None, reason="MLflow's SQLite store needs sqlalchemy"
)


@pytest.fixture(autouse=True)
def _mlflow_environment(monkeypatch, tmp_path):
    """Each test in a directory of its own (MLflow's default store, and the run files of a
    SQLite store, go to the working directory), with no tracking setting of the user's; no
    telemetry from the tests."""
    monkeypatch.chdir(tmp_path)
    for key in ("MLFLOW_TRACKING_URI", "MLFLOW_ALLOW_FILE_STORE"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("MLFLOW_DISABLE_TELEMETRY", "true")


def _compose(overrides):
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        return compose(config_name="config", overrides=list(overrides))


def _runs(uri, experiment="adhoc"):
    """``mlflow.search_runs`` of the experiment at ``uri`` (set as the user would, by
    MLFLOW_TRACKING_URI: ``mlflow.set_tracking_uri`` would outlive the test)."""
    with mock.patch.dict(os.environ, {"MLFLOW_TRACKING_URI": uri}):
        return mlflow.search_runs(experiment_names=[experiment])


def _uri(path: Path) -> str:
    """A SQLite store at ``path``."""
    return f"sqlite:///{path}"


def _closed_port() -> int:
    """A local port nothing listens on (bound, then closed)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# -- config ------------------------------------------------------------------------------------
def test_logger_is_off_by_default_and_mlflow_composes_with_the_experiment_name():
    assert _compose([]).logger is None
    cfg = _compose(["logger=mlflow", "experiment_name=study"])
    assert cfg.logger.name == "mlflow"
    assert cfg.logger.tracking_uri is None  # MLflow's own: MLFLOW_TRACKING_URI or its default
    assert cfg.logger.experiment_name == "study"
    assert cfg.logger.artifacts is True


@pytest.mark.parametrize(
    "overrides",
    [
        [],
        ["model=linear", *TINY_DATA, "seed=3"],
        ["experiment=smoke_sim_regression"],
        ["model=pilid", "gamma=2", "data.N=500", "trials=2"],
    ],
)
def test_the_setting_id_is_the_same_with_and_without_a_logger(overrides):
    plain = setting_id(_compose(overrides))
    assert setting_id(_compose([*overrides, "logger=mlflow"])) == plain
    assert setting_id(_compose([*overrides, "logger=mlflow", "logger.tracking_uri=x"])) == plain


def test_bad_logger_configs_stop_with_one_line(monkeypatch):
    with pytest.raises(PilidError, match=r"unknown logger 'mlfow'; valid choices: mlflow"):
        check_overrides(["logger=mlfow"])
    with pytest.raises(PilidError, match=r"unknown key logger\.foo for logger 'mlflow'"):
        check_config(_compose(["logger=mlflow", "+logger.foo=1"]))
    with pytest.raises(PilidError, match=r"no logger is chosen .* add logger=<mlflow>"):
        check_composition(["logger.tracking_uri=x"])
    with pytest.raises(PilidError, match=r"logger has no _target_ .* logger=mlflow"):
        check_config({**_plain([]), "logger": {"tracking_uri": "x"}})

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "mlflow" else real(name, *a)
    )
    with pytest.raises(PilidError) as info:
        check_config(_compose(["logger=mlflow"]))
    assert 'pip install -e ".[mlflow]"' in str(info.value)
    assert "\n" not in str(info.value)
    check_config(_compose([]))  # no logger: MLflow is not needed


def _plain(overrides):
    from omegaconf import OmegaConf

    return OmegaConf.to_container(_compose(overrides), resolve=True)


# -- the tracker on a fake summary -------------------------------------------------------------
def _summary(sid="0123456789abcdef", trials=(0, 1), value=0.5):
    records = [
        {
            "trial": t,
            "metric": "mse",
            "value": value + t / 10,
            "fit_seconds": 1.0 + t,
            "finished_at": f"2026-01-0{t + 1}T00:00:00+00:00",
            "estimator": "pilid.estimators.pilid.PiLiDRegressor",
            "device": "cpu",
            "setting_id": sid,
        }
        for t in trials
    ]
    values = [r["value"] for r in records]
    mean = sum(values) / len(values)
    std = (sum((v - mean) ** 2 for v in values) / max(len(values) - 1, 1)) ** 0.5
    return Summary(f"fake: MSE {mean:.4f}", mean, std, len(records), records, sid, len(records))


def _config(**logger):
    config = _plain(["model=pilid", "gamma=2", "data.N=500", "trials=2", "logger=mlflow"])
    config["logger"].update(logger)
    return config


@needs_sqlite
def test_mlflow_tracker_logs_a_fake_summary_once(tmp_path):
    from pilid.experiments.tracking import RECORDS_TAG, SETTING_TAG, tracker_from_config

    uri = _uri(tmp_path / "runs.db")
    config = _config(tracking_uri=uri)
    artefacts = tmp_path / "artifacts"
    artefacts.mkdir()
    for name in ("shapes-trial0.csv", "shapes-trial1.csv", "shapes-trial7.csv",
                 "interaction-grid-trial1-x0__x1.csv"):  # fmt: skip
        (artefacts / name).write_text("feature,x,x_original,value\nx0,0,0,0\n")
    tracker = tracker_from_config(config["logger"])
    summary = _summary()

    run_id = tracker.log_setting(config, summary, artefacts, LABEL)
    assert run_id is not None
    runs = _runs(uri)
    assert len(runs) == 1
    run = runs.iloc[0]
    assert run["status"] == "FINISHED"
    assert run["tags.mlflow.runName"] == LABEL
    assert run[f"tags.{SETTING_TAG}"] == summary.setting_id and run[f"tags.{RECORDS_TAG}"]
    assert run["params.model.gamma"] == "2" and run["params.data.N"] == "500"
    assert run["params.trials"] == "2" and run["params.seed"] == "0"
    assert run["params.train.patience"] == "10" and run["params.model.sigma"] == "null"
    assert run["params.estimator"] == "pilid.estimators.pilid.PiLiDRegressor"
    assert "params.model.regressor" not in runs.columns  # the class keys are not parameters
    assert run["metrics.mse_mean"] == pytest.approx(summary.mean)
    assert run["metrics.mse_std"] == pytest.approx(summary.std)
    client = mlflow.MlflowClient(uri)
    history = client.get_metric_history(run_id, "mse")
    assert [(m.step, m.value) for m in sorted(history, key=lambda m: m.step)] == [
        (0, 0.5),
        (1, 0.6),
    ]
    seconds = client.get_metric_history(run_id, "fit_seconds")
    assert sorted((m.step, m.value) for m in seconds) == [(0, 1.0), (1, 2.0)]
    files = sorted(a.path for a in client.list_artifacts(run_id, "artefacts"))
    assert files == [
        "artefacts/interaction-grid-trial1-x0__x1.csv",
        "artefacts/shapes-trial0.csv",
        "artefacts/shapes-trial1.csv",
    ]  # trial 7 is not one of the summary's trials

    # the same records again (a resumed sweep): not logged twice
    assert tracker.log_setting(config, _summary(), artefacts, LABEL) is None
    assert len(_runs(uri)) == 1
    # a third trial (trials raised): the setting's new summary is a new run
    assert tracker.log_setting(config, _summary(trials=(0, 1, 2)), artefacts, LABEL) is not None
    assert len(_runs(uri)) == 2


@needs_sqlite
def test_a_failed_write_is_one_line_and_the_next_run_logs_it(tmp_path, monkeypatch):
    from mlflow import MlflowClient

    from pilid.experiments.tracking import tracker_from_config

    uri = _uri(tmp_path / "runs.db")
    config = _config(tracking_uri=uri)
    artefacts = tmp_path / "artifacts"
    artefacts.mkdir()
    (artefacts / "shapes-trial0.csv").write_text("feature,x\n")
    tracker = tracker_from_config(config["logger"])

    def fail(self, *args, **kwargs):
        raise OSError(28, "No space left on device")

    with monkeypatch.context() as patch:
        patch.setattr(MlflowClient, "log_artifact", fail)
        with pytest.raises(PilidError) as info:
            tracker.log_setting(config, _summary(), artefacts, LABEL)
    message = str(info.value)
    assert "\n" not in message and "No space left on device" in message
    assert "run the same command again to log it (nothing is retrained)" in message
    assert list(_runs(uri)["status"]) == ["FAILED"]  # the half-logged run says so

    assert tracker.log_setting(config, _summary(), artefacts, LABEL) is not None
    assert sorted(_runs(uri)["status"]) == ["FAILED", "FINISHED"]


def test_a_file_store_named_by_the_config_needs_no_environment_variable(tmp_path, monkeypatch):
    """MLflow 3 refuses the file store unless MLFLOW_ALLOW_FILE_STORE=true: the tracker sets it
    while it writes to a file store the config names, and leaves the environment as it was."""
    from pilid.experiments.tracking import tracker_from_config

    uri = (tmp_path / "mlruns").as_uri()
    config = _config(tracking_uri=uri)
    assert tracker_from_config(config["logger"]).log_setting(config, _summary()) is not None
    assert "MLFLOW_ALLOW_FILE_STORE" not in os.environ
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    assert len(_runs(uri)) == 1


# -- where the runs go ---------------------------------------------------------------------------
@needs_sqlite
def test_by_default_the_runs_go_where_mlflow_looks_in_the_working_directory(tmp_path):
    """No tracking_uri and no MLFLOW_TRACKING_URI: MLflow's default store of the working
    directory, which a bare ``mlflow.search_runs`` there reads with no setting at all."""
    from pilid.experiments.tracking import tracker_from_config

    config = _config()
    assert config["logger"]["tracking_uri"] is None
    default = mlflow.get_tracking_uri()
    assert str(tmp_path) in default  # MLflow's default store is in this directory
    tracker = tracker_from_config(config["logger"])
    assert tracker.uri == default
    run_id = tracker.log_setting(config, _summary(), None, LABEL)

    runs = mlflow.search_runs(experiment_names=["adhoc"])  # no setting: MLflow's default
    assert list(runs["run_id"]) == [run_id]
    assert runs.iloc[0]["tags.mlflow.runName"] == LABEL
    if not mlflow.__version__.startswith("2."):  # MLflow 3's default: a SQLite file here
        assert (tmp_path / "mlflow.db").is_file() and not (tmp_path / "mlruns" / "0").exists()
        assert default.startswith("sqlite:")


@needs_sqlite
def test_mlflow_tracking_uri_is_followed_and_the_config_key_wins_over_it(tmp_path, monkeypatch):
    from pilid.experiments.tracking import tracker_from_config

    from_env, from_config = _uri(tmp_path / "env.db"), _uri(tmp_path / "config.db")
    monkeypatch.setenv("MLFLOW_TRACKING_URI", from_env)
    config = _config()
    assert tracker_from_config(config["logger"]).log_setting(config, _summary()) is not None
    assert len(mlflow.search_runs(experiment_names=["adhoc"])) == 1  # the variable's store
    assert not (tmp_path / "mlflow.db").exists()  # not MLflow's default

    config = _config(tracking_uri=from_config)
    tracker = tracker_from_config(config["logger"])
    assert tracker.log_setting(config, _summary(sid="fedcba9876543210")) is not None
    assert list(_runs(from_config)["tags.pilid.setting_id"]) == ["fedcba9876543210"]
    assert list(_runs(from_env)["tags.pilid.setting_id"]) == ["0123456789abcdef"]  # no more


@pytest.mark.parametrize("by", ["config", "environment"])
def test_a_tracking_server_that_does_not_answer_is_one_line_within_seconds(by, monkeypatch):
    from pilid.experiments.tracking import tracker_from_config

    uri = f"http://127.0.0.1:{_closed_port()}"
    if by == "environment":
        monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
        config = _config()
    else:
        config = _config(tracking_uri=uri)
    start = time.monotonic()
    with pytest.raises(PilidError) as info:
        tracker_from_config(config["logger"])
    assert time.monotonic() - start < 10
    message = str(info.value)
    assert "\n" not in message and uri in message and "does not answer" in message
    assert "logger.tracking_uri=" in message and "mlflow server" in message
    assert ("MLFLOW_TRACKING_URI" in message) == (by == "environment")


def test_a_tracking_server_that_answers_passes_the_check():
    from pilid.experiments.tracking import tracker_from_config

    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        uri = f"http://127.0.0.1:{server.getsockname()[1]}"
        config = _config(tracking_uri=uri)
        assert tracker_from_config(config["logger"]).uri == uri


def test_a_run_against_a_server_that_does_not_answer_trains_nothing(tmp_path):
    from pilid.experiments import run_setting

    results = tmp_path / "results"
    uri = f"http://127.0.0.1:{_closed_port()}"
    overrides = ["model=linear", *TINY_DATA, "trials=2", f"results_dir={results}"]
    with pytest.raises(PilidError, match="does not answer"):
        run_setting(_compose([*overrides, "logger=mlflow", f"logger.tracking_uri={uri}"]))
    assert not list(results.rglob("records.jsonl"))  # refused before any trial trained


# -- through the runner ------------------------------------------------------------------------
@needs_sqlite
def test_run_setting_logs_each_setting_once_and_records_the_same(tmp_path):
    from pilid.experiments import run_setting
    from pilid.experiments.store import ResultStore, records_in

    uri = _uri(tmp_path / "runs.db")
    results = tmp_path / "results"
    base = ["model=linear", *TINY_DATA, "trials=2", f"results_dir={results}"]
    tracked = [*base, "logger=mlflow", f"logger.tracking_uri={uri}", "experiment_name=tiny"]
    for seed in (0, 1):  # two settings
        run_setting(_compose([*tracked, f"seed={seed}"]))
    runs = _runs(uri, "tiny")
    assert len(runs) == 2
    ids = {setting_id(_compose([*base, f"seed={s}"])) for s in (0, 1)}
    assert set(runs["tags.pilid.setting_id"]) == ids  # the ids of the runs without a logger
    assert set(runs["params.seed"]) == {"0", "1"}
    assert set(runs["tags.mlflow.runName"]) == {"linear synthetic-regression N=300 m=3"}
    assert runs["metrics.mse_mean"].notna().all() and runs["metrics.mse_std"].notna().all()

    # resumed: nothing trained, nothing logged again; the store holds what it held
    records = ResultStore(records_in(str(results))).records()
    for seed in (0, 1):
        assert run_setting(_compose([*tracked, f"seed={seed}"])).ran == 0
    assert len(_runs(uri, "tiny")) == 2
    assert ResultStore(records_in(str(results))).records() == records
    assert {r["setting_id"] for r in records} == ids
    assert not any("logger" in r or "logger" in r.get("params", {}) for r in records)


@pytest.mark.slow
@needs_sqlite
def test_the_issue_sweep_leaves_two_runs_and_a_resume_logs_none(tmp_path):
    """The issue's command in a fresh directory: MLflow's default store there holds 2 runs that
    a bare ``mlflow.search_runs`` reads back with their metrics; the same sweep again adds none."""
    command = [
        sys.executable, "-m", "pilid.run", "-m", "model=pilid", "gamma=2,3", "data=synthetic",
        "data.N=500", "trials=2", "logger=mlflow",
    ]  # fmt: skip
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MLFLOW_DISABLE_TELEMETRY": "true"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    for _ in range(2):
        out = subprocess.run(
            command, capture_output=True, text=True, timeout=600, env=env, cwd=tmp_path
        )
        assert out.returncode == 0, out.stderr[-3000:]
        assert out.stdout.count(" over 2 trials") == 2
    reader = (
        "import mlflow, sys; runs = mlflow.search_runs(experiment_names=['adhoc']); "
        "print(len(runs), sorted(set(runs['params.model.gamma'])), "
        "bool(runs['metrics.mse_mean'].notna().all() and runs['metrics.fit_seconds'].notna().all()"
        " and (runs['status'] == 'FINISHED').all()))"
    )
    read = subprocess.run(
        [sys.executable, "-c", reader], capture_output=True, text=True, env=env, cwd=tmp_path
    )  # a bare search in that directory, as the user would
    assert read.returncode == 0, read.stderr[-3000:]
    assert read.stdout.strip().splitlines()[-1] == "2 ['2', '3'] True"
    records = (tmp_path / "results" / "runs" / "records.jsonl").read_text().splitlines()
    assert len(records) == 4  # the second sweep trained nothing
