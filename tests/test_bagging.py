"""Bagged PiLiD / MLP (`n_bags`, `pilid.models.bagging`): averages, bands, rows, parameters."""

from __future__ import annotations

import numbers

import numpy as np
import pytest
from scipy.special import expit
from sklearn.base import clone

from pilid.errors import PilidError
from pilid.estimators.pilid import LIBRARY_DEFAULTS, MLPRegressor, PiLiDClassifier, PiLiDRegressor
from pilid.inspection.fidelity import estimator_fidelity
from pilid.models.bagging import bag_rows
from pilid.models.fitting import fit_batched

KW = dict(hidden_layers=[16], epochs=6, batch_size=64, random_state=3, device="cpu")


def _true_functions(X):
    """A hand-made additive truth: one smooth shape per feature (n, 3)."""
    return np.column_stack([np.sin(1.5 * X[:, 0]), 0.5 * X[:, 1] ** 2, -0.8 * X[:, 2]])


def _data(n=400, seed=0, noise=0.2):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-2, 2, size=(n, 3))
    y = _true_functions(X).sum(1) + noise * rng.normal(size=n)
    return X, y


@pytest.fixture(scope="module")
def data():
    return _data()


@pytest.fixture(scope="module")
def bag(data):
    X, y = data
    return PiLiDRegressor(n_bags=4, **KW).fit(X, y)


def _f32(values) -> float:
    """The float32 rounding of a bag's one forward (`pilid.nn.bag`: the members' outputs summed
    in float32, in another order than their mean) on outputs as large as `values`."""
    return 1e-6 * max(1.0, float(np.abs(values).max()))


class _Unbagged(PiLiDRegressor):
    """The single model with the bagging step removed: trains itself on every fit row."""

    def _members(self, prep):
        return [(self, prep)]


def test_bag_of_one_is_the_single_model(data):
    X, y = data
    single = _Unbagged(**KW).fit(X, y)  # the library default is a bag: bypass it
    one = PiLiDRegressor(n_bags=1, **KW).fit(X, y)
    assert np.array_equal(single.predict(X), one.predict(X))
    assert single.shape_functions().equals(one.shape_functions())
    assert not hasattr(one, "estimators_") and list(one.shape_functions().columns) == [
        "feature",
        "x",
        "value",
    ]


def test_a_bag_reads_many_rows_chunk_by_chunk_as_its_members_do(data, bag):
    X, _ = data
    rng = np.random.default_rng(7)  # more rows than one chunk of prediction (8,192) holds
    many = X[rng.integers(0, len(X), 20_000)] + rng.normal(0, 0.01, (20_000, X.shape[1]))
    members = np.stack([m.predict(many) for m in bag.estimators_])  # each encodes its own
    np.testing.assert_allclose(bag.predict(many), members.mean(0), rtol=0, atol=_f32(members))
    parts = [m.decompose(many) for m in bag.estimators_]
    _, contrib, deep = bag.decompose(many)
    np.testing.assert_allclose(contrib, np.mean([p[1] for p in parts], axis=0), atol=1e-12)
    np.testing.assert_allclose(deep, np.mean([p[2] for p in parts], axis=0), atol=1e-12)


def test_bag_prediction_is_the_mean_of_its_members(data, bag):
    X, y = data
    assert len(bag.estimators_) == 4
    members = np.stack([m.predict(X) for m in bag.estimators_])
    np.testing.assert_allclose(bag.predict(X), members.mean(0), rtol=0, atol=_f32(members))
    assert members.std(0).mean() > 1e-4  # the members differ
    # Eq. 9 stays exact for the bag: each term the mean of the members'
    intercept, contrib, deep = bag.decompose(X)
    np.testing.assert_allclose(intercept + contrib.sum(1) + deep, bag.predict(X), atol=1e-5)
    member_contrib = np.stack([m.feature_contributions(X) for m in bag.estimators_])
    np.testing.assert_allclose(bag.feature_contributions(X), member_contrib.mean(0), atol=1e-12)


def test_bands_contain_the_mean_and_std_is_the_members_spread(bag):
    shapes = bag.shape_functions()
    assert list(shapes.columns) == ["feature", "x", "value", "std", "lower", "upper"]
    values = np.stack([m.shape_functions()["value"].to_numpy() for m in bag.estimators_])
    np.testing.assert_allclose(shapes["value"], values.mean(0), atol=1e-12)
    np.testing.assert_allclose(shapes["std"], np.std(values, axis=0), atol=1e-12)
    np.testing.assert_allclose(shapes["lower"], np.percentile(values, 2.5, axis=0), atol=1e-12)
    np.testing.assert_allclose(shapes["upper"], np.percentile(values, 97.5, axis=0), atol=1e-12)
    assert (shapes["lower"] <= shapes["value"] + 1e-12).all()
    assert (shapes["value"] <= shapes["upper"] + 1e-12).all()
    assert (shapes["upper"] - shapes["lower"]).max() > 0


def test_true_shape_inside_bands_and_fidelity_not_worse():
    X, y = _data(n=800, seed=1, noise=0.3)
    # 6 pieces unpenalised, no pair terms: the bands of plain pieces (a roughness penalty
    # pulls the shapes off the truth at the points where it bends)
    kw = {**KW, "hidden_layers": None, "gamma": 6, "epochs": 15, "smoothness": 0.0, "pairs": 0}
    single = PiLiDRegressor(**kw).fit(X, y)
    bag = PiLiDRegressor(n_bags=8, **kw).fit(X, y)
    truth = _true_functions(X)
    _, r2_single = estimator_fidelity(single, X, truth)
    _, r2_bag = estimator_fidelity(bag, X, truth)
    assert r2_bag >= r2_single - 0.02, (r2_bag, r2_single)
    shapes = bag.shape_functions()
    inside = []
    for j, name in enumerate(bag._feature_names()):
        part = shapes[shapes["feature"] == name]
        grid = np.zeros((len(part), 3))
        grid[:, j] = part["x"].to_numpy()
        true = _true_functions(grid)[:, j] - truth[:, j].mean()  # centred on the fit rows
        tol = 0.05  # the piecewise-linear fit's own bias at the points (coverage 0.62 at 0)
        inside.append(
            (part["lower"].to_numpy() - tol <= true) & (true <= part["upper"].to_numpy() + tol)
        )
    coverage = np.concatenate(inside).mean()
    print(f"coverage {coverage:.2f}, R^2 bag {r2_bag:.4f} single {r2_single:.4f}")
    assert coverage >= 0.6


def test_bootstrap_rows_differ_and_are_reproducible(data, bag):
    X, y = data
    rows = bag.bag_rows_
    n_train = len(rows[0])
    assert rows.shape == (4, n_train) and n_train == 360  # 10% held out for early stopping
    assert all(not np.array_equal(rows[0], rows[b]) for b in range(1, 4))
    assert all(len(np.unique(r)) < n_train for r in rows)  # drawn with replacement
    val = np.setdiff1d(np.arange(len(y)), np.unique(rows))
    assert len(np.intersect1d(val, np.concatenate(rows))) == 0
    again = PiLiDRegressor(n_bags=4, **KW).fit(X, y)
    assert np.array_equal(again.bag_rows_, rows)
    assert np.array_equal(again.predict(X), bag.predict(X))
    other = PiLiDRegressor(n_bags=4, **{**KW, "random_state": 4}).fit(X, y)
    assert not np.array_equal(other.bag_rows_, rows)
    # member b does not depend on the bag's size
    idx = np.arange(100)
    assert np.array_equal(bag_rows(7, 2, idx)[1], bag_rows(7, 2, idx)[1])
    assert [m.random_state for m in bag.estimators_[:2]] == [
        bag_rows(bag.seed_, b, idx)[0] for b in range(2)
    ]


def test_purification_keeps_the_bags_predictions(data, bag):
    X, y = data
    raw = PiLiDRegressor(n_bags=4, purify=False, **KW).fit(X, y)
    np.testing.assert_allclose(raw.predict(X), bag.predict(X), rtol=0, atol=1e-4)
    moved = np.abs(raw.shape_functions()["value"] - bag.shape_functions()["value"]).max()
    assert moved > 1e-3  # purification did move the deep part's main effect


def test_classifier_bag_averages_logits(data):
    X, y = data
    yc = (y > np.median(y)).astype(int)
    clf = PiLiDClassifier(n_bags=3, **KW).fit(X, yc)
    logits = np.stack([m.decision_function(X) for m in clf.estimators_])
    np.testing.assert_allclose(clf.decision_function(X), logits.mean(0), atol=_f32(logits))
    np.testing.assert_allclose(clf.predict_proba(X)[:, 1], expit(logits.mean(0)), atol=_f32(1))
    assert set(clf.predict(X)) <= {0, 1}


def test_mlp_bag_averages_predictions(data):
    X, y = data
    mlp = MLPRegressor(n_bags=3, **KW).fit(X, y)
    members = np.stack([m.predict(X) for m in mlp.estimators_])
    np.testing.assert_allclose(mlp.predict(X), members.mean(0), atol=_f32(members))
    assert mlp.decompose(X)[1] is None


def test_fit_batched_trains_bags_of_several_trials(data, bag):
    X, y = data
    a, b = fit_batched(
        [PiLiDRegressor(n_bags=4, **KW), PiLiDRegressor(n_bags=4, **{**KW, "random_state": 4})],
        [X, X],
        [y, y],
    )
    np.testing.assert_allclose(a.predict(X), bag.predict(X), atol=1e-4)
    assert not np.allclose(a.predict(X), b.predict(X))


def test_n_bags_is_a_parameter():
    from pilid import NITClassifier, PiLiBRegressor

    for cls in (PiLiDRegressor, PiLiDClassifier, MLPRegressor, PiLiBRegressor, NITClassifier):
        (constraint,) = cls._parameter_constraints["n_bags"]
        assert constraint.type is numbers.Integral and constraint.left == 1
        assert constraint.right is None
        est = cls(n_bags=5)
        twin = clone(est)
        default = (
            LIBRARY_DEFAULTS["n_bags"] if issubclass(cls, PiLiDRegressor | PiLiDClassifier) else 1
        )
        assert twin.get_params()["n_bags"] == 5 and cls().get_params()["n_bags"] == default
        assert twin.set_params(n_bags=2).n_bags == 2
    X, y = _data(n=50)
    for bad in (0, True, 1.5):
        with pytest.raises(PilidError, match="n_bags"):
            PiLiDRegressor(n_bags=bad, **KW).fit(X, y)


def _compose_run(overrides):
    from hydra import compose, initialize_config_dir

    from pilid.experiments.config import CONF_DIR

    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        return compose(config_name="config", overrides=overrides)


def test_the_runner_trains_a_bag_under_its_own_setting_id(tmp_path):
    """model.n_bags=1 is the paper's single model (same id as before the key existed); a bag
    gets its own id, and the runner trains and records it."""
    from pilid.experiments import run_setting
    from pilid.experiments.setting import setting_config, setting_id

    tiny = [
        "model=pilid",
        "gamma=3",
        "data.N=300",
        "data.m=3",
        "data.n_interactions=2",
        "model.hidden_layers=[8,8]",
        "train.epochs=3",
        "train.batch_size=64",
        "train.patience=null",
        "trials=2",
    ]
    single = _compose_run([*tiny, f"results_dir={tmp_path / 'one'}"])
    explicit = _compose_run([*tiny, "model.n_bags=1", f"results_dir={tmp_path / 'one'}"])
    bag = _compose_run([*tiny, "model.n_bags=3", f"results_dir={tmp_path / 'bag'}"])
    assert "n_bags" not in setting_config(single)["model"]
    assert setting_id(single) == setting_id(explicit) != setting_id(bag)
    assert setting_config(bag)["model"]["n_bags"] == 3
    one, three = run_setting(single), run_setting(bag)
    assert [r["trial"] for r in three.records] == [0, 1]
    assert all(r["params"]["n_bags"] == 3 for r in three.records)
    values = [r["value"] for r in three.records]
    assert np.all(np.isfinite(values))
    assert values != [r["value"] for r in one.records]


@pytest.fixture(scope="module")
def block_bag():
    """A PiLiB bag of 3 on a lattice (every bootstrap keeps all 5 levels of every feature, so
    the members' grids lie on the bag's) with one planted pair, x2 * x3."""
    from pilid import PiLiBRegressor

    rng = np.random.default_rng(0)
    X = rng.choice(np.linspace(0.0, 1.0, 5), size=(1500, 4))
    y = X[:, 0] + np.sin(3 * X[:, 1]) + 2 * X[:, 2] * X[:, 3] + 0.05 * rng.normal(size=1500)
    kw = dict(n_blocks=4, max_order=2, block_layers=(8,), epochs=30, warmup_epochs=30)
    kw.update(phase1_epochs=60, lambda0=0.1, batch_size=64, random_state=0, device="cpu")
    return PiLiBRegressor(n_bags=3, **kw).fit(X, y), X


@pytest.mark.slow
def test_pilib_bag_averages_members_and_their_interaction_grids(block_bag):
    bag, X = block_bag
    assert len(bag.estimators_) == 3
    members = np.stack([m.predict(X) for m in bag.estimators_])
    np.testing.assert_allclose(bag.predict(X), members.mean(0), rtol=1e-6, atol=1e-6)
    assert bag.interactions_(min_order=2) == [("x2", "x3")]
    grid = bag.interaction_grid(2, 3)
    assert list(grid.columns) == ["x_a", "x_b", "value", "std", "lower", "upper"]
    background = bag._background_X
    values = []
    for member in bag.estimators_:  # each member's own grid on the same points and rows
        try:
            part = member.interaction_grid(2, 3, X=background)
        except PilidError:  # a member without the pair adds 0 to the mean
            values.append(np.zeros(len(grid)))
            continue
        assert np.array_equal(part[["x_a", "x_b"]].to_numpy(), grid[["x_a", "x_b"]].to_numpy())
        values.append(part["value"].to_numpy())
    np.testing.assert_allclose(grid["value"], np.mean(values, axis=0), atol=1e-10)
    np.testing.assert_allclose(grid["std"], np.std(values, axis=0), atol=1e-10)
    assert (grid["lower"] <= grid["value"] + 1e-12).all()
    assert (grid["value"] <= grid["upper"] + 1e-12).all()
    with pytest.raises(PilidError, match="estimators_"):
        bag.active_blocks_()


def test_interactions_of_a_bag_are_those_most_members_find(block_bag, monkeypatch):
    bag, _ = block_bag
    found = [[("x0", "x1")], [("x0", "x1"), ("x2", "x3")], [("x2", "x3")]]
    for member, groups in zip(bag.estimators_, found):
        monkeypatch.setattr(member, "interactions_", lambda *a, g=groups: g)
    assert bag.interactions_() == [("x0", "x1"), ("x2", "x3")]  # 2 of 3 each
    assert bag.interactions_(min_agreement=0.9) == []
    found[0].append(("x2", "x3"))
    assert bag.interactions_(min_agreement=0.9) == [("x2", "x3")]
