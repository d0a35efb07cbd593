"""Monotone constraints (`pilid.models.monotone`): the whole prediction monotone, every row.

Each constrained feature is swept over a fine grid that covers and exceeds its training range,
for many training rows of make_friedman1 (which has an interaction, sin(pi x0 x1)), and the
prediction (regression) or logit (classification) must never step against the constraint.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch
from sklearn.datasets import make_friedman1

from pilid import PiLiBClassifier, PiLiBRegressor, PiLiDClassifier, PiLiDRegressor
from pilid.errors import PilidError
from pilid.nn.additive import AdditiveEnsemble
from pilid.nn.least_squares import monotone_start
from pilid.nn.piecewise import compact_layout, fit_knots, phi_compact

FAST = {"epochs": 8, "batch_size": 64, "patience": None, "lr": 0.01}
PILIB_FAST = {**FAST, "warmup_epochs": 2, "phase1_epochs": 4, "n_blocks": 4, "gamma": 4}
#: x0 enters friedman1 through sin(pi x0 x1) (rising on most rows): -1 goes against the data;
#: x3 enters as +10 x3; x1 is kept free, so the interaction's other feature moves.
CONSTRAINTS = {0: -1, 3: 1}
TOL = 1e-6


def _data(n=300):
    X, y = make_friedman1(n_samples=n, random_state=0)
    return X, y


def _sweep(est, X, constraints, output, rows=60, points=121):
    """The worst step against the constraint over a grid of each constrained feature (from
    below the training minimum to above the maximum), for `rows` rows of X."""
    worst = np.inf
    base = X[:rows]
    for j, sign in constraints.items():
        lo, hi = X[:, j].min(), X[:, j].max()
        span = hi - lo
        grid = np.linspace(lo - 0.5 * span, hi + 0.5 * span, points)
        Z = np.repeat(base[:, None, :], points, axis=1)
        Z[:, :, j] = grid
        out = output(Z.reshape(-1, X.shape[1])).reshape(rows, points)
        worst = min(worst, float((np.diff(out, axis=1) * sign).min()))
    return worst


def _models():
    return [
        (PiLiDRegressor, {**FAST, "n_bags": 1, "hidden_layers": (32, 16)}, "regression"),
        (PiLiDRegressor, {**FAST, "n_bags": 2, "hidden_layers": (32, 16)}, "regression"),
        (PiLiDClassifier, {**FAST, "n_bags": 2, "hidden_layers": (32, 16)}, "classification"),
        (PiLiBRegressor, {**PILIB_FAST, "n_bags": 1}, "regression"),
        (PiLiBClassifier, {**PILIB_FAST, "n_bags": 2}, "classification"),
    ]


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize(("cls", "params", "task"), _models())
def test_grid_sweep_finds_no_step_against_the_constraint(cls, params, task):
    X, y = _data()
    target = y if task == "regression" else (y > np.median(y)).astype(int)
    est = cls(random_state=0, monotone_constraints=CONSTRAINTS, **params).fit(X, target)
    output = est.predict if task == "regression" else est.decision_function
    assert _sweep(est, X, CONSTRAINTS, output) >= -TOL
    # the unconstrained model does step against them on the same rows (the test can fail)
    free = cls(random_state=0, **params).fit(X, target)
    free_out = free.predict if task == "regression" else free.decision_function
    assert _sweep(free, X, {0: -1}, free_out) < -1e-3
    # the shapes of the constrained features are monotone, those of the others are not forced
    shapes = est.shape_functions()
    names = est._feature_names()
    for j, sign in CONSTRAINTS.items():
        values = shapes.loc[shapes["feature"] == names[j], "value"].to_numpy()
        assert (np.diff(values) * sign).min() >= -TOL
    assert est.monotone_constraints_.tolist() == [-1, 0, 0, 1, 0, 0, 0, 0, 0, 0]


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_the_deep_part_and_the_blocks_do_not_see_a_constrained_feature():
    X, y = _data()
    est = PiLiBRegressor(random_state=0, monotone_constraints={"x3": 1}, **PILIB_FAST).fit(X, y)
    assert not est.block_features_[:, 3].any()  # its gates stayed closed
    _, _, deep = est.decompose(X[:50])
    moved = X[:50].copy()
    moved[:, 3] = np.linspace(-3, 3, 50)
    _, _, deep_moved = est.decompose(moved)
    np.testing.assert_array_equal(deep, deep_moved)  # exactly: its deep input is 0
    pilid = PiLiDRegressor(random_state=0, monotone_constraints={"x3": 1}, n_bags=1, **FAST).fit(
        X, y
    )
    _, contrib, deep = pilid.decompose(X[:50])
    _, contrib_moved, deep_moved = pilid.decompose(moved)
    np.testing.assert_array_equal(deep, deep_moved)
    # the other features' contributions do not move either: x3 acts through its shape alone
    keep = [j for j in range(10) if j != 3]
    np.testing.assert_array_equal(contrib[:, keep], contrib_moved[:, keep])


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("cls", [PiLiDRegressor, PiLiBRegressor])
def test_no_constraint_computes_what_none_computes(cls):
    """All zeros (and an empty dict) is the unconstrained model, bit for bit."""
    X, y = _data(200)
    params = {**(PILIB_FAST if cls is PiLiBRegressor else FAST), "n_bags": 1}
    ref = cls(random_state=3, **params).fit(X, y).predict(X)
    for value in ([0] * 10, {}):
        out = cls(random_state=3, monotone_constraints=value, **params).fit(X, y).predict(X)
        np.testing.assert_array_equal(out, ref)


def test_additive_slopes_have_the_constraints_sign_whatever_the_parameters():
    """`AdditiveEnsemble` with ``sign``: u_j monotone for arbitrary (negative) w and omega."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 3))
    knots = fit_knots(X, 6, "quantile", np.zeros(3, dtype=bool))
    feature = torch.as_tensor(knots.layout()[0])[None]
    P = feature.shape[1]
    sign = torch.as_tensor([-1.0, 0.0, 1.0])[feature]
    add = AdditiveEnsemble(
        feature, torch.ones(1, P), 3, torch.zeros(1, P, dtype=torch.float64), sign=sign
    )
    with torch.no_grad():
        add.w.copy_(torch.as_tensor(rng.normal(size=(1, P))))
        add.omega.copy_(torch.as_tensor([[-0.7, -1.3, -2.0]]))
    grid = np.column_stack([np.linspace(-4, 4, 301)] * 3)
    col, frac = phi_compact(torch.as_tensor(grid), compact_layout(knots, dtype=torch.float64))
    terms = add.terms((col[None], frac[None]))[0].detach().numpy()
    assert (np.diff(terms[:, 0]) <= 1e-12).all()
    assert (np.diff(terms[:, 2]) >= -1e-12).all()
    assert (np.diff(terms[:, 1]) > 1e-6).any() and (np.diff(terms[:, 1]) < -1e-6).any()


def test_the_least_squares_start_is_clamped_and_keeps_the_mean():
    rng = np.random.default_rng(1)
    phi = torch.as_tensor(rng.uniform(size=(1, 50, 4)))
    w = torch.as_tensor([[0.5, -0.4, 0.3, -0.2]], dtype=torch.float64)
    b = torch.zeros(1, 4, dtype=torch.float64)
    sign = torch.as_tensor([[1.0, 1.0, -1.0, 0.0]], dtype=torch.float64)
    mask = torch.ones(1, 4, dtype=torch.float64)
    w2, b2 = monotone_start(phi, w, b, sign, mask)
    assert w2.tolist() == [[0.5, 0.0, 0.0, -0.2]]
    before = (phi @ w[0] + b.sum()).mean()
    after = (phi @ w2[0] + b2.sum()).mean()
    torch.testing.assert_close(after, before)


@pytest.mark.parametrize(
    ("value", "words"),
    [
        ({"nope": 1}, "names 'nope', which is no column of X"),
        ([1, 0], "has 2 values but X has 3 columns"),
        ({"a": 2}, "monotone_constraints={'a': 2} is invalid"),
        ([1, 0.5, 0], "is invalid"),
        ("a", "is invalid"),
        ({"c": 1}, "categorical column 'c'"),
        ({7: 1}, "index 7, but X has 3 columns"),
    ],
)
def test_bad_constraints_raise_one_line_naming_the_fix(value, words):
    X = pd.DataFrame(
        {"a": np.arange(40.0), "b": np.sin(np.arange(40.0)), "c": pd.Categorical(["u", "v"] * 20)}
    )
    y = np.arange(40.0)
    est = PiLiDRegressor(monotone_constraints=value, epochs=1, n_bags=1, random_state=0)
    with pytest.raises(PilidError) as info:
        est.fit(X, y)
    message = str(info.value)
    assert words in message and "\n" not in message


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_names_and_list_agree_and_the_cv_wrapper_passes_them_on():
    from pilid import PiLiDRegressorCV

    X, y = _data(200)
    frame = pd.DataFrame(X, columns=[f"f{j}" for j in range(10)])
    params = {**FAST, "n_bags": 1}
    by_name = PiLiDRegressor(random_state=0, monotone_constraints={"f3": 1}, **params)
    by_list = PiLiDRegressor(random_state=0, monotone_constraints=[0, 0, 0, 1] + [0] * 6, **params)
    np.testing.assert_array_equal(
        by_name.fit(frame, y).predict(frame), by_list.fit(frame, y).predict(frame)
    )
    cv = PiLiDRegressorCV(
        gammas=[3],
        lams=[1e-3],
        cv=2,
        random_state=0,
        monotone_constraints={"f0": -1},
        estimator_params=params,
    ).fit(frame, y)
    assert cv.best_estimator_.monotone_constraints_[0] == -1
    assert (
        _sweep(cv, X, {0: -1}, lambda Z: cv.predict(pd.DataFrame(Z, columns=frame.columns))) >= -TOL
    )
    with pytest.raises(PilidError, match="pass monotone_constraints=... instead"):
        PiLiDRegressorCV(estimator_params={"monotone_constraints": {"f0": 1}}).fit(frame, y)
