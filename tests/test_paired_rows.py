"""`studies.paired_rows`: two models' rows compared trial by trial, against numpy."""

from __future__ import annotations

import json
import math

import numpy as np

from studies import paired_rows


def _records(path, arm_id, values: dict, metric="auc"):
    with open(path / "records.jsonl", "w") as handle:
        for model, per_trial in values.items():
            sid = arm_id("real_data", "skill", model)
            for trial, value in per_trial.items():
                record = {
                    "experiment": "real_data",
                    "dataset": "skill",
                    "model": model,
                    "params": {},
                    "task": "classification",
                    "trial": trial,
                    "seed": trial,
                    "metric": metric,
                    "value": value,
                    "setting_id": sid,
                    "data": {"name": "skill"},
                }
                handle.write(json.dumps(record) + "\n")


def test_the_comparison_is_the_paired_difference_over_the_trials_both_arms_have(tmp_path, capsys):
    script = paired_rows
    rng = np.random.default_rng(0)
    a, b = rng.uniform(0.8, 0.9, 6), rng.uniform(0.8, 0.9, 6)
    # trial 5 of the first arm is missing: the pairs are trials 0-4
    values = {"ebm": dict(enumerate(a[:5])), "ga2m": dict(enumerate(b))}
    _records(tmp_path, script.arm_id, values)
    assert script.main(["ebm", "ga2m", "--data", "skill", "--results", str(tmp_path)]) == 0
    diff = a[:5] - b[:5]
    se = diff.std(ddof=1) / math.sqrt(5)
    line = capsys.readouterr().out.strip()
    assert line == (
        f"skill (AUC, 5 trials): ebm {a[:5].mean():.4f}, ga2m {b[:5].mean():.4f}, difference "
        f"{diff.mean():+.4f} +- {se:.4f} (standard error); ebm better in {int((diff > 0).sum())} "
        "of 5"
    )


def test_an_arm_of_another_setting_id_is_not_mixed_in(tmp_path, capsys):
    script = paired_rows
    _records(tmp_path, lambda e, d, m: f"not-{m}", {"ebm": {0: 0.9}, "ga2m": {0: 0.8}})
    assert script.main(["ebm", "ga2m", "--data", "skill", "--results", str(tmp_path)]) == 0
    assert capsys.readouterr().out.strip() == "skill: no trials that both ebm and ga2m have"
