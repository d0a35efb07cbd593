"""Issue 49, item 2: a table's setting holds its contents. The runner takes the file's sha256
when ``data.sha256`` is not given, so an edited file (or another file at the same relative
path) is a new setting that trains, never the old records, and a setting never mixes trials
of two contents; ``data=table`` records carry the file's stem."""

from __future__ import annotations

import hashlib

import numpy as np
import pandas as pd
import pytest
from hydra import compose, initialize_config_dir
from sklearn.linear_model import LinearRegression

from pilid.data import load_dataset, make_split
from pilid.errors import DataFileError, PilidError
from pilid.experiments import ResultStore, run_setting
from pilid.experiments.config import CONF_DIR
from pilid.experiments.setting import setting_id, setting_label, table_identity, table_name
from pilid.report.records import grids_for_records, load_records
from pilid.report.tables import build_tables


def _compose(overrides):
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        return compose(config_name="config", overrides=overrides)


def _config(path, results, *extra, trials=2):
    args = ["data=table", f"data.path={path}", "data.target=y", "data.task=regression"]
    args += ["model=linear", f"trials={trials}", f"results_dir={results}", *extra]
    return _compose(args)


def _write(path, n, seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 2))
    frame = pd.DataFrame({"a": x[:, 0], "b": x[:, 1]})
    frame["y"] = 2 * frame["a"] - frame["b"] + rng.normal(0, 0.5, n)
    frame.to_csv(path, index=False)
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _independent(path, record) -> float:
    """The record's MSE by an independent fit on the file as it is now."""
    dataset = load_dataset("table", path=str(path), target="y", task="regression")
    split = make_split(dataset, record["seed"])
    fitted = LinearRegression().fit(split.X_train, split.y_train)
    return float(np.mean((split.y_test - fitted.predict(split.X_test)) ** 2))


def test_an_edited_csv_is_a_new_setting_that_trains(tmp_path, capsys):
    path, results = tmp_path / "x.csv", tmp_path / "results"
    old_digest = _write(path, 300, seed=0)
    old = run_setting(_config(path, results))
    assert {r["data"]["sha256"] for r in old.records} == {old_digest}
    assert {r["dataset"] for r in old.records} == {"x"} and old.records[0]["N"] == 300
    new_digest = _write(path, 250, seed=1)  # the file replaced in place, same path
    new = run_setting(_config(path, results, trials=4))
    assert new.setting_id != old.setting_id
    assert new.ran == 4 and [r["trial"] for r in new.records] == [0, 1, 2, 3]
    assert {(r["N"], r["data"]["sha256"]) for r in new.records} == {(250, new_digest)}
    for record in new.records:  # the new file's numbers, not the old records'
        assert record["value"] == pytest.approx(_independent(path, record), rel=1e-10)
    note = capsys.readouterr().err
    assert f"data.path={path} now has sha256 {new_digest[:12]}" in note
    assert old_digest[:12] in note and "a new setting" in note
    store = ResultStore(results)
    assert store.done_trials(old.setting_id) == {0, 1}  # the old records stay, apart
    # the dry run and the report see the same id; the report keeps the two contents apart
    assert setting_id(_config(path, results)) == new.setting_id
    frame = load_records(results)
    (table,) = build_tables(frame, grids_for_records(frame), root=None)
    headers = [h.md for h in table.columns]
    assert headers == [
        f"x N=250 sha256 {new_digest[:8]} (MSE)",
        f"x N=300 sha256 {old_digest[:8]} (MSE)",
    ]
    assert [c.n for c in table.cells[0]] == [4, 2]


def test_a_relative_path_from_two_directories_gives_two_settings(tmp_path, monkeypatch):
    results = tmp_path / "results"
    digests, summaries = [], []
    for name, seed in (("one", 0), ("two", 1)):
        folder = tmp_path / name
        folder.mkdir()
        digests.append(_write(folder / "x.csv", 200, seed))
        monkeypatch.chdir(folder)
        summaries.append(run_setting(_config("x.csv", results)))
    assert summaries[0].setting_id != summaries[1].setting_id
    for digest, summary, name in zip(digests, summaries, ("one", "two")):
        assert {r["data"]["sha256"] for r in summary.records} == {digest}
        for record in summary.records:
            expected = _independent(tmp_path / name / "x.csv", record)
            assert record["value"] == pytest.approx(expected, rel=1e-10)
    frame = load_records(results)
    (table,) = build_tables(frame, grids_for_records(frame), root=None)
    assert sorted(h.md for h in table.columns) == sorted(f"x sha256 {d[:8]} (MSE)" for d in digests)


def test_the_checksum_given_or_taken_is_one_setting_and_a_changed_file_is_refused(tmp_path):
    path = tmp_path / "x.csv"
    digest = _write(path, 100, seed=0)
    taken = _config(path, tmp_path / "results")
    given = _config(path, tmp_path / "results", f"data.sha256={digest}")
    assert setting_id(taken) == setting_id(given)
    data = table_identity(dict(taken.data))
    assert data["sha256"] == digest and data["name"] == "x"
    assert setting_label({"model": {"name": "linear"}, "data": dict(taken.data)}) == "linear x"
    # the runner loads what its id holds: a file changed after the checksum was taken is
    # refused in one line, and nothing is recorded
    _write(path, 100, seed=1)
    with pytest.raises(DataFileError, match="fails its sha256 check") as info:
        run_setting(given)
    assert "\n" not in str(info.value)
    assert not (tmp_path / "results" / "records.jsonl").exists()


def test_the_name_of_a_table(tmp_path):
    assert table_name({"name": "table", "path": "data/fair.csv"}) == "fair"
    assert table_name({"name": "mine", "path": "data/fair.csv"}) == "mine"
    assert table_name({"name": "table", "path": "bike.csv"}) == "bike.csv"  # a built-in's name
    with pytest.raises(PilidError, match="data.name=bike is a built-in") as info:
        table_name({"name": "bike", "path": "x.csv"})
    assert "data.name=my_bike" in str(info.value)
    with pytest.raises(DataFileError, match="no such file"):
        table_identity({"name": "table", "path": str(tmp_path / "none.csv")})
