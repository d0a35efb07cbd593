"""PiLiB and NIT (Section 3.3, Algorithm 2): the gated blocks find the true interacting pairs."""

from __future__ import annotations

import copy
import warnings

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pandas as pd
import pytest
import torch
from sklearn.base import clone
from sklearn.model_selection import cross_val_score

from pilid.baselines.nit import NITClassifier, NITRegressor
from pilid.errors import PilidError
from pilid.estimators.pilib import PiLiBClassifier, PiLiBRegressor, plot_interaction
from pilid.models.fitting import fit_batched
from pilid.nn.gates import GateOrderWarning

TRUE_PAIRS = [("x0", "x1"), ("x2", "x3")]


def _pairs_data(seed: int, n: int = 2000, noise: float = 0.1):
    """Additive terms + 2 x0 x1 + 1.5 sin(2 x2 x3); x uniform on [-1, 1]^6."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1.0, 1.0, (n, 6))
    y = (
        X[:, 4] ** 2
        + np.sin(2.0 * X[:, 5])
        + 0.5 * X[:, 0]
        + 2.0 * X[:, 0] * X[:, 1]
        + 1.5 * np.sin(2.0 * X[:, 2] * X[:, 3])
        + noise * rng.normal(size=n)
    )
    return X, y


@pytest.fixture(scope="module")
def pairs():
    X, y = _pairs_data(0)
    return X[:1600], y[:1600], X[1600:], y[1600:]


@pytest.fixture(scope="module")
def pilib(pairs):
    X, y, _, _ = pairs
    with warnings.catch_warnings():
        warnings.simplefilter("error", GateOrderWarning)
        return PiLiBRegressor(epochs=20, random_state=0, device="cpu").fit(X, y)


@pytest.fixture(scope="module")
def nit(pairs):
    X, y, _, _ = pairs
    frame = pd.DataFrame(X, columns=["a", "b", "c", "d", "e", "f"])
    return NITRegressor(epochs=20, random_state=0, device="cpu").fit(frame, y)


@pytest.mark.slow
def test_pilib_blocks_hold_exactly_the_true_pairs(pilib, pairs):
    assert pilib.interactions_(min_order=2) == TRUE_PAIRS
    # Every group it reports, main effects included, lies inside a true pair or is a single
    # feature: no block mixes features that do not interact.
    for group in pilib.interactions_():
        assert len(group) == 1 or group in TRUE_PAIRS
    # The active pair blocks carry a real part of the output.
    active = pilib.active_blocks_()
    assert pilib.block_share_[active].max() > 0.2
    # Warm-up, phase 1 (with L_K'), then phase 2, each a contiguous run of epochs.
    phases = pilib.history_["phase"]
    order = ["warmup", "gates", "retrain"]
    assert [p for i, p in enumerate(phases) if i == 0 or phases[i - 1] != p] == order
    # Accuracy: far better than the variance, and better than the same model without blocks.
    _, _, X_test, y_test = pairs
    mse = np.mean((pilib.predict(X_test) - y_test) ** 2)
    assert mse < 0.05 * np.var(y_test)


def test_no_block_exceeds_max_order_and_blocks_ignore_closed_features(pilib, pairs):
    X, _, _, _ = pairs
    deep = pilib.module_.deep
    mask = deep.gates.deterministic()[0].detach().numpy()
    assert set(np.unique(mask)) <= {0.0, 1.0}  # frozen binary masks
    assert bool(deep.gates.frozen.all())
    assert mask.sum(1).max() <= pilib.max_order
    np.testing.assert_array_equal(pilib.block_order_, mask.sum(1))
    # Independent check: moving the closed features does not change any block's output.
    x = torch.as_tensor((X[:200] - pilib.x_mean_) / pilib.x_scale_, dtype=torch.float32)[None]
    with torch.no_grad():
        before = deep.block_outputs(x)[0].numpy()
        for j in range(x.shape[2]):
            moved = x.clone()
            moved[..., j] = -moved[..., j] + 0.7
            after = deep.block_outputs(moved)[0].numpy()
            closed = mask[:, j] == 0
            np.testing.assert_array_equal(after[:, closed], before[:, closed])


def test_interaction_grid_recovers_the_joint_effect(pilib):
    grid = pilib.interaction_grid("x0", "x1", n=11)
    assert list(grid.columns) == ["x_a", "x_b", "value"] and len(grid) == 121
    values = grid["value"].to_numpy().reshape(11, 11)
    a = grid["x_a"].to_numpy().reshape(11, 11)
    b = grid["x_b"].to_numpy().reshape(11, 11)
    assert np.all(np.diff(a[:, 0]) > 0) and np.all(np.diff(b[0]) > 0)

    def double_centre(v):
        return v - v.mean(0, keepdims=True) - v.mean(1, keepdims=True) + v.mean()

    # The pure interaction part of the learned surface vs that of the true 2 * x0 * x1.
    learned, truth = double_centre(values), double_centre(2.0 * a * b)
    assert np.corrcoef(learned.ravel(), truth.ravel())[0, 1] > 0.95
    assert np.abs(learned - truth).max() < 0.35 * np.abs(truth).max()
    # Indices work too; a pair no block uses is an error.
    pd.testing.assert_frame_equal(pilib.interaction_grid(0, 1, n=11), grid)
    with pytest.raises(PilidError):
        pilib.interaction_grid("x0", "x3")
    with pytest.raises(PilidError):
        pilib.interaction_grid("x0", "nosuch")


def test_interaction_grid_is_a_partial_dependence_over_the_other_features(pilib, pairs):
    """A block that also sees x4: the grid averages it out over the rows of X."""
    est = copy.deepcopy(pilib)
    deep = est.module_.deep
    users = [i for i in range(est.n_blocks) if est.block_features_[i, [0, 1]].all()]
    with torch.no_grad():
        deep.gates.mask[0, users[0], 4] = 1.0
    est.block_features_ = deep.block_features()[0].numpy().copy()
    X, _, _, _ = pairs
    background = X[:25]
    grid = est.interaction_grid("x0", "x1", n=3, X=background)
    for a, b, value in grid.itertuples(index=False):
        rows = background.copy()
        rows[:, 0], rows[:, 1] = a, b
        x = torch.as_tensor((rows - est.x_mean_) / est.x_scale_, dtype=torch.float32)[None]
        with torch.no_grad():
            g = deep.block_outputs(x)[0].double().numpy()[:, users]
        expected = est.y_scale_ * (g.mean(0) - est.block_offset_[users]).sum()
        assert value == pytest.approx(expected, abs=1e-5)
    other = est.interaction_grid("x0", "x1", n=3, X=X[100:125])
    assert not np.allclose(other["value"], grid["value"])


def test_plot_interaction_draws_a_heat_map(pilib):
    import matplotlib.pyplot as plt

    ax = plot_interaction(pilib, "x2", "x3", grid=8)
    assert ax.get_xlabel() == "x2" and ax.get_ylabel() == "x3"
    mesh = ax.collections[0]
    grid = pilib.interaction_grid("x2", "x3", n=8)
    np.testing.assert_allclose(
        np.sort(np.asarray(mesh.get_array()).ravel()), np.sort(grid["value"].to_numpy())
    )
    plt.close("all")


def test_pilib_keeps_the_pilid_interpretation_api(pilib, pairs):
    X, _, _, _ = pairs
    contrib = pilib.feature_contributions(X[:50])
    assert contrib.shape == (50, 6)
    shapes = pilib.shape_functions()
    assert sorted(shapes["feature"].unique()) == [f"x{j}" for j in range(6)]
    intercept, terms, deep = pilib.decompose(X[:50])
    np.testing.assert_allclose(intercept + terms.sum(1) + deep, pilib.predict(X[:50]), atol=1e-4)


@pytest.mark.slow
def test_nit_finds_the_pairs_and_names_dataframe_columns(nit, pairs):
    assert nit.interactions_(min_order=2) == [("a", "b"), ("c", "d")]
    assert nit.block_order_.max() <= nit.max_order
    assert not hasattr(nit, "shape_functions")  # NIT has no additive component
    _, _, X_test, y_test = pairs
    frame = pd.DataFrame(X_test, columns=["a", "b", "c", "d", "e", "f"])
    mse = np.mean((nit.predict(frame) - y_test) ** 2)
    assert mse < 0.05 * np.var(y_test)


def test_phase_one_cap_warns_and_still_bounds_the_order():
    X, y = _pairs_data(1, n=400)
    est = PiLiBRegressor(
        n_blocks=3,
        block_layers=(4,),
        max_order=1,
        warmup_epochs=1,
        phase1_epochs=2,
        epochs=2,
        random_state=1,
    )
    with pytest.warns(GateOrderWarning, match="phase1_epochs=2"):
        est.fit(X, y)
    assert est.block_order_.max() <= 1
    # Warm-up 1 epoch, phase 1 stopped at its cap of 2 epochs, then phase 2 ran its 2 epochs.
    assert len(est.history_["phase"]) == 5 and est.history_["phase"][-1] == "retrain"


def _small(cls, **kw):
    params = dict(
        n_blocks=4,
        block_layers=(8,),
        phase1_epochs=15,
        mask_patience=2,
        epochs=10,
        device="cpu",
        random_state=0,
    )
    params.update(kw)
    return cls(**params)


@pytest.mark.slow
def test_estimators_work_in_cross_val_score():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(600, 4))
    logit = 2.0 * X[:, 0] - X[:, 1] + 1.5 * X[:, 2] * X[:, 3]
    labels = np.where(rng.random(600) < 1.0 / (1.0 + np.exp(-logit)), "spam", "ham")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GateOrderWarning)
        auc = cross_val_score(_small(PiLiBClassifier), X, labels, cv=3, scoring="roc_auc")
        auc_nit = cross_val_score(_small(NITClassifier), X, labels, cv=3, scoring="roc_auc")
        y = logit + 0.1 * rng.normal(size=600)
        r2 = cross_val_score(_small(NITRegressor), X, y, cv=3)
        clf = _small(PiLiBClassifier).fit(X, labels)
    assert auc.mean() > 0.8 and auc_nit.mean() > 0.75
    assert r2.mean() > 0.5
    assert list(clf.classes_) == ["ham", "spam"]
    assert set(clf.predict(X[:20])) <= {"ham", "spam"}
    np.testing.assert_allclose(clf.predict_proba(X[:20]).sum(1), 1.0)


def test_a_trial_trained_in_a_batch_equals_the_trial_alone():
    X1, y1 = _pairs_data(4, n=500)
    X2, y2 = _pairs_data(5, n=500)
    est = _small(PiLiBRegressor, phase1_epochs=12, epochs=6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GateOrderWarning)
        pair = fit_batched([clone(est).set_params(random_state=7), clone(est)], [X1, X2], [y1, y2])
        alone = clone(est).fit(X2, y2)
    np.testing.assert_allclose(pair[1].predict(X2[:100]), alone.predict(X2[:100]), atol=1e-4)
    np.testing.assert_array_equal(pair[1].block_features_, alone.block_features_)
    assert pair[1].history_["phase"] == alone.history_["phase"]
    assert not np.allclose(pair[0].predict(X2[:100]), alone.predict(X2[:100]))


@pytest.mark.parametrize(
    "bad",
    [
        {"n_blocks": 0},
        {"max_order": 0},
        {"block_layers": []},
        {"lambda0": -1.0},
        {"gate_lr_scale": 0.0},
        {"init_prob": 1.0},
        {"phase1_epochs": 0},
        {"warmup_epochs": -1},
        {"init_scale": 0.0},
    ],
)
def test_bad_hyper_parameters_raise_one_line(bad):
    X, y = _pairs_data(0, n=50)
    for cls in (PiLiBRegressor, NITRegressor):
        with pytest.raises(PilidError) as info:
            cls(**bad).fit(X, y)
        assert "\n" not in str(info.value)
