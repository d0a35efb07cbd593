"""K > 2 classes (pilid.models.multiclass): a softmax over K class logits, checked against
independent computations (torch's cross-entropy, numpy least squares, scikit-learn's multinomial
logistic regression on the same Phi), per-class shapes against known truth, and the runner on a
three-class table scored by one-vs-rest AUC."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
import torch.nn.functional as F
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score

from pilid import MLPClassifier, NITClassifier, PiLiBClassifier, PiLiDClassifier
from pilid.data import load_dataset
from pilid.data.split import make_split
from pilid.errors import PilidError
from pilid.models.fitting import fit_batched
from pilid.models.metrics import score
from pilid.nn.piecewise import compact_layout, phi_compact, phi_dense
from pilid.train.losses import task_loss

REPO = Path(__file__).resolve().parent.parent
#: The additive part alone with the paper's plain least squares (no smoothness penalty).
ADDITIVE = dict(
    hidden_layers=None, n_bags=1, device="cpu", random_state=0, purify=False, smoothness=0.0
)


def _three_classes(n=900, seed=0):
    """Logits z_0 = 0, z_1 = 3 x0, z_2 = -3 x1 (x2 unused); labels drawn from the softmax."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, 3))
    z = np.column_stack([np.zeros(n), 3 * X[:, 0], -3 * X[:, 1]])
    p = np.exp(z - z.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    y = (rng.uniform(size=(n, 1)) > np.cumsum(p, 1)).sum(1)
    return X, np.array(["low", "mid", "top"])[y]


def _dense_phi(model, X):
    layout = compact_layout(model.knots_)
    col, frac = phi_compact(torch.as_tensor(X, dtype=torch.float64), layout)[:2]
    feature = torch.as_tensor(model.knots_.layout()[0])
    return phi_dense(col, frac, feature).double().numpy()


def test_the_group_loss_is_the_softmax_cross_entropy():
    g = torch.Generator().manual_seed(0)
    logits = torch.randn(2, 3, 7, generator=g)  # 2 groups of K=3 trials, 7 rows
    y = torch.randint(0, 3, (2, 7), generator=g)
    out = logits.reshape(6, 7)
    target = y.repeat_interleave(3, dim=0).float()
    loss = task_loss(out, target, "classification", classes=3)
    for group in range(2):
        expected = F.cross_entropy(logits[group].T, y[group], reduction="none")
        for k in range(3):
            torch.testing.assert_close(loss[3 * group + k], expected)


def test_the_least_squares_start_is_one_vs_rest_per_class():
    X, y = _three_classes()
    model = PiLiDClassifier(gamma=3, epochs=0, patience=None, **ADDITIVE).fit(X, y)
    dense = _dense_phi(model, X)
    design = np.column_stack([dense, np.ones(len(X))])
    z = model.decision_function(X)
    assert z.shape == (len(X), 3)
    for k, label in enumerate(model.classes_):
        coded = np.where(y == label, 1.0, -1.0)
        coef = np.linalg.lstsq(design, coded, rcond=None)[0]
        np.testing.assert_allclose(z[:, k], design @ coef, atol=2e-3)


def test_training_reaches_the_multinomial_logistic_regression_on_phi():
    """Additive part alone, full batch, no penalty: the softmax model is the multinomial
    logistic regression on Phi, which scikit-learn solves independently (lbfgs)."""
    X, y = _three_classes()
    model = PiLiDClassifier(
        gamma=3, epochs=400, batch_size=len(X), patience=None, lam=0.0, lr=0.05, **ADDITIVE
    ).fit(X, y)
    reference = LogisticRegression(C=1e6, max_iter=5000).fit(_dense_phi(model, X), y)
    ours = model.predict_proba(X)
    theirs = reference.predict_proba(_dense_phi(model, X))
    np.testing.assert_allclose(ours.sum(1), 1.0, atol=1e-9)
    assert np.abs(ours - theirs).max() < 0.03
    assert list(model.classes_) == list(reference.classes_)


def test_per_class_shapes_recover_the_true_logit_differences():
    X, y = _three_classes(n=3000)
    model = PiLiDClassifier(gamma=4, epochs=60, lam=0.0, **ADDITIVE).fit(X, y)
    shapes = model.shape_functions()
    assert list(shapes.columns[:4]) == ["class", "feature", "x", "value"]
    assert set(shapes["class"]) == {"low", "mid", "top"}

    def shape(label, feature):
        part = shapes[(shapes["class"] == label) & (shapes["feature"] == feature)]
        return part["x"].to_numpy(float), part["value"].to_numpy()

    x0, mid = shape("mid", "x0")
    _, low = shape("low", "x0")
    learned = mid - low  # the logit difference mid - low along x0: 3 x0 + const
    slope = np.polyfit(x0, learned, 1)[0]
    assert 2.0 < slope < 4.0
    x1, top = shape("top", "x1")
    _, low1 = shape("low", "x1")
    assert np.polyfit(x1, top - low1, 1)[0] < -2.0
    _, unused_top = shape("top", "x2")
    _, unused_low = shape("low", "x2")
    assert np.ptp(unused_top - unused_low) < 0.6  # x2 carries no signal


@pytest.mark.parametrize(
    "make",
    [
        lambda: PiLiDClassifier(hidden_layers=(8,), epochs=3, n_bags=2, random_state=0),
        lambda: PiLiBClassifier(epochs=2, warmup_epochs=1, phase1_epochs=2, random_state=0),
        lambda: NITClassifier(epochs=2, warmup_epochs=1, phase1_epochs=2, random_state=0),
    ],
)
def test_explain_sums_to_every_class_logit(make):
    X, y = _three_classes(n=300)
    model = make().fit(X, y)
    z = model.decision_function(X)
    table = model.explain(X)
    assert list(table.index.get_level_values("class").unique()) == ["low", "mid", "top"]
    for k, label in enumerate(model.classes_):
        np.testing.assert_allclose(table.loc[label].sum(axis=1).to_numpy(), z[:, k], atol=1e-4)
    proba = model.predict_proba(X)
    np.testing.assert_allclose(proba, np.exp(z) / np.exp(z).sum(1, keepdims=True), rtol=1e-6)
    assert set(model.predict(X)) <= {"low", "mid", "top"}


def test_pilib_finds_interactions_per_class():
    X, y = _three_classes(n=300)
    model = PiLiBClassifier(epochs=2, warmup_epochs=1, phase1_epochs=2, random_state=0).fit(X, y)
    found = model.interactions_()
    assert set(found) == {"low", "mid", "top"}
    for label, member in zip(model.classes_, model.class_estimators_):
        assert found[label] == member.interactions_()
    with pytest.raises(PilidError, match="class_estimators_"):
        model.active_blocks_()


def test_a_multiclass_trial_trained_in_a_batch_equals_it_alone():
    X, y = _three_classes(n=300)
    params = dict(hidden_layers=(8,), epochs=3, n_bags=1, device="cpu")
    alone = PiLiDClassifier(random_state=1, **params).fit(X, y)
    other = PiLiDClassifier(random_state=2, **params)
    batched = PiLiDClassifier(random_state=1, **params)
    fit_batched([other, batched], [X[::-1], X], [y[::-1], y])
    np.testing.assert_allclose(batched.decision_function(X), alone.decision_function(X), atol=1e-5)


def test_the_mlp_baseline_takes_three_classes():
    X, y = _three_classes(n=600)
    model = MLPClassifier(hidden_layers=(16,), epochs=30, random_state=0).fit(X, y)
    proba = model.predict_proba(X)
    assert proba.shape == (600, 3)
    assert roc_auc_score(y, proba, multi_class="ovr") > 0.8


def test_ovr_auc_of_class_probabilities():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, 200)
    proba = rng.dirichlet(np.ones(3), 200)
    expected = np.mean([roc_auc_score(y == k, proba[:, k]) for k in range(3)])
    assert score("auc", y, proba) == pytest.approx(expected, rel=1e-12)


@pytest.mark.slow
def test_the_runner_and_the_report_take_a_three_class_table(tmp_path):
    X, y = _three_classes(n=400)
    frame = pd.DataFrame(X, columns=["a", "b", "c"]).assign(level=y)
    frame.to_csv(tmp_path / "levels.csv", index=False)
    results = tmp_path / "results"
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(REPO)}
    args = [
        "data=table",
        "data.path=levels.csv",
        "data.target=level",
        "data.task=classification",
        "model=pilid_lib",
        "model.n_bags=1",
        "model.hidden_layers=[8]",
        "train.epochs=3",
        "trials=2",
        f"results_dir={results}",
    ]
    run = subprocess.run(
        [sys.executable, "-m", "pilid.run", *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    records = [json.loads(line) for line in (results / "records.jsonl").read_text().splitlines()]
    assert len(records) == 2 and all(r["metric"] == "auc" for r in records)
    dataset = load_dataset(
        "table", path=str(tmp_path / "levels.csv"), target="level", task="classification"
    )
    assert dataset.info["classes"] == ["low", "mid", "top"]
    for record in records:
        split = make_split(dataset, record["seed"])
        baseline = LogisticRegression(max_iter=1000).fit(split.X_train, split.y_train)
        reference = score("auc", split.y_test, baseline.predict_proba(split.X_test))
        assert 0.6 < record["value"] <= 1.0
        assert abs(record["value"] - reference) < 0.1  # a near-linear truth: near the logit
    tables = subprocess.run(
        [sys.executable, "-m", "pilid.report", "tables", "--results", str(results), "--out", "t"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert tables.returncode == 0, tables.stderr
    markdown = "\n".join(p.read_text() for p in (tmp_path / "t").glob("*.md"))
    mean = np.mean([r["value"] for r in records])
    assert "(AUC)" in markdown and f"{mean:.4f}" in markdown


def test_each_class_logit_keeps_a_monotone_constraint():
    X, y = _three_classes(n=400)
    model = PiLiDClassifier(
        hidden_layers=(8,), epochs=5, n_bags=1, random_state=0, monotone_constraints=[0, -1, 0]
    ).fit(X, y)
    grid = np.linspace(-1.5, 1.5, 41)
    rows = np.repeat(X[:30, None, :], len(grid), axis=1)  # (30, 41, 3)
    rows[:, :, 1] = grid
    z = model.decision_function(rows.reshape(-1, 3)).reshape(30, len(grid), 3)
    assert (np.diff(z, axis=1) <= 1e-6).all()  # every class's logit falls with x1


def test_the_runners_artefacts_keep_the_class():
    from pilid.data.dataset import Dataset
    from pilid.experiments.artefacts import artefact_frames

    X, y = _three_classes(n=300)
    codes = pd.Index(["low", "mid", "top"]).get_indexer(y)
    data = Dataset(
        "levels", "classification", "auc", pd.DataFrame(X, columns=["a", "b", "c"]), codes
    )
    split = make_split(data, 0)
    model = PiLiBClassifier(epochs=2, warmup_epochs=1, phase1_epochs=2, random_state=0)
    model.fit(split.X_train, split.y_train)
    frames = artefact_frames(model, split)
    shapes = frames["shapes"]
    assert list(shapes.columns) == ["class", "feature", "x", "x_original", "value"]
    np.testing.assert_array_equal(shapes["value"], model.shape_functions()["value"])
    rename = {"x0": "a", "x1": "b", "x2": "c"}  # the split's arrays have no column names
    expected = [
        (c, tuple(rename[f] for f in g))
        for c, groups in model.interactions_().items()
        for g in groups
    ]
    table = frames["interactions"]
    assert list(table.columns) == ["class", "block", "features"]
    assert [(c, tuple(f.split(";"))) for c, f in zip(table["class"], table["features"])] == [
        (c, tuple(g)) for c, g in expected
    ]
    assert not any(isinstance(k, tuple) for k in frames)  # no per-class grids
