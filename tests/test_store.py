"""The results store: atomic appends, torn lines, concurrent writers, setting ids."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import warnings

import numpy as np
import pandas as pd
import pytest
from omegaconf import OmegaConf

from pilid.errors import PilidError
from pilid.experiments import ResultStore, load_results
from pilid.experiments.setting import setting_config, setting_id
from pilid.experiments.store import StoreWarning


def _record(trial, setting="s1", value=0.5, **extra):
    return {"setting_id": setting, "trial": trial, "seed": trial, "value": value, **extra}


def test_round_trip_keeps_values_and_order(tmp_path):
    store = ResultStore(tmp_path)
    records = [_record(t, value=0.1 * t, params={"gamma": 5, "hidden": [16, 16]}) for t in range(5)]
    store.append(records[0])
    store.extend(records[1:])
    assert store.path == tmp_path / "records.jsonl"
    assert store.records() == records
    lines = store.path.read_bytes().split(b"\n")
    assert lines[-1] == b"" and len(lines) == 6  # one line per record, newline-terminated
    assert [json.loads(line) for line in lines[:-1]] == records


def test_numpy_values_and_non_finite_numbers_become_plain_json(tmp_path):
    store = ResultStore(tmp_path / "r.jsonl")
    store.append(
        _record(np.int64(3), value=np.float32(0.25), x=np.arange(3), bad=float("nan"), p=tmp_path)
    )
    (got,) = store.records()
    assert got == {
        "setting_id": "s1",
        "trial": 3,
        "seed": 3,
        "value": 0.25,
        "x": [0, 1, 2],
        "bad": None,
        "p": str(tmp_path),
    }
    assert store.done_trials("s1") == {3}


def test_torn_last_line_is_skipped_with_warning_and_repaired_by_next_append(tmp_path):
    store = ResultStore(tmp_path)
    store.extend([_record(0), _record(1)])
    full = (json.dumps(_record(2)) + "\n").encode()
    with open(store.path, "ab") as handle:  # a writer killed half-way through its line
        handle.write(full[: len(full) // 2])
    with pytest.warns(StoreWarning, match="last line is incomplete"):
        assert [r["trial"] for r in store.records()] == [0, 1]
    with pytest.warns(StoreWarning):
        assert store.done_trials("s1") == {0, 1}

    store.append(_record(3))
    data = store.path.read_bytes()
    assert data.endswith((json.dumps(_record(3)) + "\n").encode())
    assert data.count(b"\n") == 4  # the torn fragment got its own line, not glued to trial 3
    with pytest.warns(StoreWarning, match="line 3 is not a complete record"):
        assert [r["trial"] for r in store.records()] == [0, 1, 3]
    with pytest.warns(StoreWarning):
        frame = load_results(tmp_path)
    assert sorted(frame["trial"]) == [0, 1, 3]


def test_complete_last_record_without_newline_is_read(tmp_path):
    path = tmp_path / "records.jsonl"
    path.write_text(json.dumps(_record(0)) + "\n" + json.dumps(_record(1)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert [r["trial"] for r in ResultStore(path).records()] == [0, 1]


def test_garbage_lines_never_break_the_reader(tmp_path):
    path = tmp_path / "records.jsonl"
    path.write_bytes(b'\xff\xfe\n[1, 2]\n{"trial": \n' + json.dumps(_record(7)).encode() + b"\n\n")
    with pytest.warns(StoreWarning):
        assert ResultStore(tmp_path).records() == [_record(7)]


def test_keep_last_supersedes_older_records_of_a_trial(tmp_path):
    store = ResultStore(tmp_path)
    store.extend([_record(0, value=1.0), _record(1, value=2.0), _record(0, "s2", value=5.0)])
    store.append(_record(0, value=3.0))  # e.g. a force=true rerun of trial 0
    assert [(r["trial"], r["value"]) for r in store.setting_records("s1")] == [(0, 3.0), (1, 2.0)]
    assert len(store.setting_records("s1", keep="all")) == 3
    assert store.done_trials("s1") == {0, 1} and store.done_trials("s2") == {0}
    assert store.done_trials("nosuch") == set()

    frame = load_results(tmp_path)
    assert isinstance(frame, pd.DataFrame) and len(frame) == 3
    values = frame.set_index(["setting_id", "trial"])["value"]
    assert values[("s1", 0)] == 3.0 and values[("s1", 1)] == 2.0 and values[("s2", 0)] == 5.0
    assert len(load_results(store.path, keep="all")) == 4


def test_load_results_on_empty_and_missing_paths(tmp_path):
    frame = load_results(tmp_path)
    assert frame.empty and {"setting_id", "trial", "value", "model"} <= set(frame.columns)
    with pytest.raises(PilidError, match="no results at"):
        load_results(tmp_path / "nosuch")
    with pytest.raises(PilidError, match="keep="):
        load_results(tmp_path, keep="first")


_WRITER = """
import os, sys, time
from pilid.experiments.store import ResultStore
path, writer, n, go = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
while not os.path.exists(go):
    time.sleep(0.005)
store = ResultStore(path)
for i in range(n):
    # 6 kB lines: larger than PIPE_BUF, so only the lock keeps them whole
    store.append({"writer": writer, "i": i, "payload": chr(97 + writer) * 6000})
"""


def test_concurrent_writers_lose_and_mix_nothing(tmp_path):
    writers, per_writer = 4, 120
    go = tmp_path / "go"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _WRITER, str(tmp_path), str(w), str(per_writer), str(go)]
        )
        for w in range(writers)
    ]
    time.sleep(0.3)
    go.touch()
    assert all(p.wait(timeout=120) == 0 for p in procs)

    data = (tmp_path / "records.jsonl").read_bytes()
    lines = data.split(b"\n")
    assert lines.pop() == b""
    assert len(lines) == writers * per_writer
    records = [json.loads(line) for line in lines]  # every line is a whole record
    assert sorted((r["writer"], r["i"]) for r in records) == [
        (w, i) for w in range(writers) for i in range(per_writer)
    ]
    assert all(r["payload"] == chr(97 + r["writer"]) * 6000 for r in records)
    for w in range(writers):  # each writer's own records stay in its order
        assert [r["i"] for r in records if r["writer"] == w] == list(range(per_writer))
    writer_sequence = [r["writer"] for r in records]
    switches = sum(a != b for a, b in zip(writer_sequence, writer_sequence[1:]))
    assert switches > 0  # the writers really ran at the same time


# -- setting ids -------------------------------------------------------------------------------
BASE = {
    "experiment_name": "adhoc",
    "trials": 20,
    "seed": 0,
    "device": "auto",
    "data_dir": "~/.cache/pilid",
    "results_dir": "results/runs",
    "force": False,
    "verbose": False,
    "gamma": 5,
    "data": {"name": "synthetic", "N": 2000, "m": 10},
    "model": {"name": "pilid", "gamma": "${gamma}", "hidden_layers": [16, 16]},
    "train": {"epochs": 10, "lr": 0.005, "batched": True, "n_jobs": 1, "trials_per_batch": None},
}


def _cfg(**changes):
    cfg = OmegaConf.create(BASE)
    for key, value in changes.items():
        OmegaConf.update(cfg, key, value, merge=False)
    return cfg


def test_setting_id_is_stable_and_ignores_bookkeeping():
    sid = setting_id(_cfg())
    assert len(sid) == 16 and int(sid, 16) >= 0
    assert setting_id(OmegaConf.to_container(_cfg())) == sid  # plain dicts work too
    reordered = OmegaConf.create(dict(reversed(list(BASE.items()))))
    assert setting_id(reordered) == sid
    for key, value in {
        "trials": 3,
        "device": "cpu",
        "results_dir": "/elsewhere",
        "data_dir": "/data",
        "force": True,
        "verbose": True,
        "experiment_name": "table1",
        "train.batched": False,
        "train.n_jobs": 4,
        "train.trials_per_batch": 5,
    }.items():
        assert setting_id(_cfg(**{key: value})) == sid, key
    config = setting_config(_cfg())
    assert config["model"]["gamma"] == 5 and "gamma" not in config and "trials" not in config


def test_setting_id_changes_with_what_changes_results():
    sid = setting_id(_cfg())
    others = {
        setting_id(_cfg(**{key: value}))
        for key, value in {
            "seed": 1,
            "gamma": 10,  # reaches the model through the interpolation
            "data.N": 5000,
            "data.name": "skill",
            "model.hidden_layers": [16, 32],
            "train.epochs": 11,
            "train.lr": 0.001,
        }.items()
    }
    assert sid not in others and len(others) == 7
    # the subprocess computes the same id: nothing depends on the process (hash seeds etc.)
    code = (
        "from omegaconf import OmegaConf; from pilid.experiments.setting import setting_id; "
        f"print(setting_id(OmegaConf.create({BASE!r})))"
    )
    env = {**os.environ, "PYTHONHASHSEED": "123"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert out.stdout.strip() == sid, out.stderr
