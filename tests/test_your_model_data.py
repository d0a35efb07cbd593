"""Your model, your data: a model YAML of the user's own directory (``--config-dir``)
and any CSV (``data=table``) run through the runner like the built-in ones, with the numbers an
independent fit gives; bad model and table configs stop in one line before training."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from _uci import uci_dir  # tests/_uci.py
from hydra import compose, initialize_config_dir
from hydra.core.global_hydra import GlobalHydra
from omegaconf import OmegaConf
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.linear_model import LinearRegression
from sklearn.metrics import roc_auc_score

from pilid.data import load_dataset, make_split
from pilid.errors import PilidError
from pilid.experiments.config import CONF_DIR, check_config, check_overrides, missing_names
from pilid.experiments.setting import setting_id
from pilid.run import check_composition

REPO = Path(__file__).resolve().parent.parent
HGB = "_target_: sklearn.ensemble.HistGradientBoostingClassifier\nmax_iter: 20\n"


def _pilid(*args, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(REPO)}
    return subprocess.run(
        [sys.executable, "-m", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )


def _records(results: Path) -> list[dict]:
    return [json.loads(line) for line in (results / "records.jsonl").read_text().splitlines()]


def _user_dir(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "my_conf"
    for name, text in files.items():
        (root / Path(name).parent).mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def _checked(args: list[str]) -> dict:
    """What ``python -m pilid.run <args>`` checks before training: the command line, the
    composition and ``check_config`` of the composed job (names filled in as the job does)."""
    check_overrides(args)
    check_composition(args)
    dirs = [a.split("=", 1)[1] for a in args if a.startswith("--config-dir=")]
    search = [f"hydra.searchpath=[file://{dirs[0]}]"] if dirs else []
    overrides = [a for a in args if not a.startswith("-")]
    GlobalHydra.instance().clear()
    try:
        with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
            cfg = compose("config", overrides=[*search, *overrides], return_hydra_config=True)
    finally:
        GlobalHydra.instance().clear()
    container = OmegaConf.to_container(cfg, resolve=False)
    choices = container.pop("hydra")["runtime"]["choices"]
    for group, name in missing_names(container, choices).items():
        container[group] = {**container[group], "name": name}
    check_config(container)
    return container


def _one_line(args: list[str], match: str) -> str:
    with pytest.raises(PilidError) as info:
        _checked(args)
    message = str(info.value)
    assert "\n" not in message, message
    assert match in message, message
    return message


# -- a model of the user's own ------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.uci
def test_a_model_yaml_outside_the_repository_runs_on_skill_like_a_built_in(tmp_path):
    data_dir = uci_dir()
    conf = _user_dir(tmp_path, {"model/hgb.yaml": HGB})
    results = tmp_path / "results"
    args = ["pilid.run", f"--config-dir={conf}", "model=hgb", "data=skill", "trials=2"]
    args += [f"results_dir={results}", f"data_dir={data_dir}"]
    run = _pilid(*args, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    records = _records(results)
    assert [r["trial"] for r in records] == [0, 1]
    assert {r["model"] for r in records} == {"hgb"}
    assert {r["estimator"] for r in records} == {"sklearn.ensemble.HistGradientBoostingClassifier"}
    assert records[0]["params"]["max_iter"] == 20
    # the numbers of an independent fit on the same splits
    dataset = load_dataset("skill", data_dir=data_dir)
    for record in records:
        split = make_split(dataset, record["seed"])
        model = HistGradientBoostingClassifier(max_iter=20, random_state=record["seed"])
        model.fit(split.X_train, split.y_train)
        expected = roc_auc_score(split.y_test, model.predict_proba(split.X_test)[:, 1])
        assert record["value"] == pytest.approx(expected, abs=1e-12)
    # resume: nothing left to train; a dry run says so and writes nothing
    again = _pilid(*args, cwd=tmp_path)
    assert again.returncode == 0 and len(_records(results)) == 2
    dry = _pilid(*args, "dry_run=true", cwd=tmp_path)
    assert dry.returncode == 0 and "2/2 trials recorded" in dry.stdout, dry.stdout
    # the report gives it a row under its config name
    tables = _pilid("pilid.report", "tables", "--results", str(results), "--out", "t", cwd=tmp_path)
    assert tables.returncode == 0, tables.stderr
    markdown = "\n".join(p.read_text() for p in (tmp_path / "t").glob("*.md"))
    assert "| hgb |" in markdown and "skill (AUC)" in markdown


@pytest.mark.slow
def test_a_csv_written_from_a_dataframe_runs_as_data_table(tmp_path):
    rng = np.random.default_rng(3)
    n = 300
    frame = pd.DataFrame(
        {
            "size": rng.normal(10, 3, n),
            "colour": rng.choice(["red", "green", "blue"], n),
            "id": np.arange(n),
        }
    )
    frame["price"] = 2 * frame["size"] + 3 * (frame["colour"] == "red") + rng.normal(0, 1, n)
    frame.loc[5, "size"] = np.nan  # a missing number: its row is dropped for linear (no NaN)
    frame.to_csv(tmp_path / "shop.csv", index=False)
    results = tmp_path / "results"
    run = _pilid(
        "pilid.run",
        "data=table",
        "data.path=shop.csv",
        "data.target=price",
        "data.task=regression",
        "data.drop=[id]",
        "model=linear",
        "trials=2",
        f"results_dir={results}",
        cwd=tmp_path,
    )
    assert run.returncode == 0, run.stderr
    records = _records(results)
    assert [r["dataset"] for r in records] == ["shop", "shop"] and records[0]["N"] == n - 1
    dataset = load_dataset(
        "table", path=str(tmp_path / "shop.csv"), target="price", task="regression", drop=["id"]
    )
    assert dataset.categorical == ["colour"] and dataset.X.shape == (n - 1, 2)
    for record in records:
        split = make_split(dataset, record["seed"])
        fitted = LinearRegression().fit(split.X_train, split.y_train)
        expected = np.mean((split.y_test - fitted.predict(split.X_test)) ** 2)
        assert record["value"] == pytest.approx(expected, rel=1e-10)


def test_a_table_yaml_of_the_users_directory_is_named_after_its_file(tmp_path):
    pd.DataFrame({"x": np.arange(60.0), "y": np.arange(60) % 2}).to_csv(tmp_path / "a.csv")
    text = f"defaults: [table, _self_]\npath: {tmp_path / 'a.csv'}\ntarget: y\n"
    conf = _user_dir(tmp_path, {"data/mine.yaml": text + "task: classification\n"})
    config = _checked([f"--config-dir={conf}", "data=mine", "model=linear"])
    assert config["data"]["name"] == "mine" and config["data"]["target"] == "y"


# -- the built-in models keep their setting ids ----------------------------------------------------
def test_built_in_class_keys_are_not_hashed_but_another_class_is():
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        cfg = OmegaConf.to_container(compose("config", overrides=["model=rf"]))
    without = {**cfg, "model": {k: v for k, v in cfg["model"].items() if k != "regressor"}}
    without["model"].pop("classifier")
    assert setting_id(cfg) == setting_id(without)  # the ids from before the keys existed
    other = {**cfg, "model": {**cfg["model"], "regressor": {"_target_": "sklearn.svm.SVR"}}}
    assert setting_id(other) != setting_id(cfg)


def test_the_peers_keep_the_setting_ids_of_their_committed_records():
    """The peers of Table 3+ were recorded with their class keys hashed (they had them from the
    start): their ids stay those of the committed records, so a resume skips them."""
    golden = {"lightgbm": "a14a0b109bfbb911", "aplr": "c4a50ea21a6af774"}
    for model, expected in golden.items():
        with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
            cfg = compose("config", overrides=["experiment=peers", f"model={model}", "data=bike"])
        assert setting_id(cfg) == expected, model


# -- bad model configs: one line each, before training -------------------------------------------
def test_a_target_that_cannot_be_imported(tmp_path):
    conf = _user_dir(tmp_path, {"model/bad.yaml": "_target_: sklearn.ensemble.NoSuchForest\n"})
    _one_line([f"--config-dir={conf}", "model=bad"], "model._target_=sklearn.ensemble.NoSuch")


def test_a_target_that_is_not_an_estimator(tmp_path):
    conf = _user_dir(tmp_path, {"model/od.yaml": "_target_: collections.OrderedDict\n"})
    _one_line([f"--config-dir={conf}", "model=od"], "is not a scikit-learn estimator")


def test_a_classifier_on_a_regression_data_set(tmp_path):
    conf = _user_dir(tmp_path, {"model/hgb.yaml": HGB})
    message = _one_line(
        [f"--config-dir={conf}", "model=hgb", "data=synthetic", "data.task=regression"],
        "is a classifier, but the data set is a regression task",
    )
    assert "regressor: {_target_: ...}" in message


def test_a_key_the_class_does_not_take(tmp_path):
    conf = _user_dir(tmp_path, {"model/hgb.yaml": HGB})
    args = [f"--config-dir={conf}", "model=hgb", "data=synthetic", "data.task=classification"]
    _one_line([*args, "model.no_such_param=1"], "model.no_such_param is not a parameter of")
    _one_line([*args, "+model.no_such_param=1"], "drop it (~model.no_such_param)")
    # a key the class takes but the YAML lacks: add it with '+'
    _one_line([*args, "model.learning_rate=0.3"], "+model.learning_rate=0.3")
    assert _checked([*args, "+model.learning_rate=0.3"])["model"]["learning_rate"] == 0.3


def test_a_value_the_class_refuses(tmp_path):
    conf = _user_dir(tmp_path, {"model/hgb.yaml": HGB})
    args = [f"--config-dir={conf}", "model=hgb", "data=synthetic", "data.task=classification"]
    message = _one_line([*args, "model.max_iter=0"], "model.max_iter=0 is invalid for hgb")
    assert "fix it, e.g. model.max_iter=100" in message
    _one_line(["model=rf", "model.n_estimators=0"], "model.n_estimators=0 is invalid for rf")


def test_an_unknown_model_lists_the_options_of_both_directories(tmp_path):
    conf = _user_dir(tmp_path, {"model/hgb.yaml": HGB})
    message = _one_line([f"--config-dir={conf}", "model=hgbb"], "unknown model 'hgbb'")
    assert "hgb," in message and "pilid" in message


# -- bad tables: one line each ------------------------------------------------------------------
def _table(tmp_path, **options):
    options = {"target": "y", "task": "classification", **options}
    with pytest.raises(PilidError) as info:
        load_dataset("table", **options)
    assert "\n" not in str(info.value)
    return str(info.value)


def test_bad_tables_fail_in_one_line(tmp_path):
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"x": rng.normal(size=40), "y": rng.normal(size=40)})
    frame.to_csv(tmp_path / "t.csv", index=False)
    (tmp_path / "empty.csv").write_text("")
    assert "no such file" in _table(tmp_path, path=str(tmp_path / "nope.csv"))
    assert "empty file" in _table(tmp_path, path=str(tmp_path / "empty.csv"))
    assert "column 'z' is not in t.csv" in _table(
        tmp_path, path=str(tmp_path / "t.csv"), target="z"
    )
    message = _table(tmp_path, path=str(tmp_path / "t.csv"))
    assert "40 distinct float values" in message and "data.task=regression" in message
    assert "data.task" in _table(tmp_path, path=str(tmp_path / "t.csv"), task="ranking")
    wrong = _table(tmp_path, path=str(tmp_path / "t.csv"), task="regression", sha256="ab" * 32)
    assert "fails its sha256 check" in wrong and "data.sha256=" in wrong
    digest = hashlib.sha256((tmp_path / "t.csv").read_bytes()).hexdigest()
    checked = load_dataset(
        "table", path=str(tmp_path / "t.csv"), target="y", task="regression", sha256=digest
    )
    assert checked.info["sha256"] == digest
    _one_line(["data=table", "data.path=t.csv"], "data=table needs task, target")


@pytest.mark.parametrize("task", ["regression", "classification"])
def test_a_peer_whose_package_is_missing_names_the_extra(monkeypatch, task):
    import importlib

    from pilid.errors import PilidError
    from pilid.experiments import model_config

    real = importlib.import_module

    def without_pytabkit(name, *args, **kwargs):
        if name.split(".")[0] == "pytabkit":
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return real(name, *args, **kwargs)

    monkeypatch.setattr(
        model_config, "_import", lambda path: without_pytabkit(path.rsplit(".", 1)[0])
    )
    with pytest.raises(
        PilidError, match=r"needs the package 'pytabkit'.*pip install -e \"\.\[peers\]\""
    ):
        model_config.estimator_class(model_config.builtin_model("realmlp"), task)
