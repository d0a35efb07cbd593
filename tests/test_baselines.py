"""Baselines: the GAM adapter, GA2M, GA distillation and the SVM classifier.

Each is checked against an independent computation: scikit-learn's estimator checks, pygam's own
criterion, the additivity identity of a GAM, a hand-made distillation, and orderings that must
hold on additive data. Spambase runs through the runner in tests/test_model_config.py.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.ensemble import RandomForestRegressor
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import GridSearchCV, KFold, cross_val_score
from sklearn.svm import SVC
from sklearn.utils.estimator_checks import check_estimator

from pilid.baselines.ga import GAClassifier, GARegressor
from pilid.baselines.ga2m import GA2MClassifier, GA2MRegressor
from pilid.baselines.gam import GAMClassifier, GAMRegressor, search_lam
from pilid.baselines.svm import SVMClassifier
from pilid.data import load_dataset, make_split
from pilid.errors import PilidError
from pilid.experiments.model_config import builtin_estimator
from pilid.models.inputs import categorical_mask
from pilid.models.metrics import predict_scores, score

FAST_EBM = {"outer_bags": 1, "n_jobs": 1, "random_state": 0}
TINY_MLP = {"hidden_layers": [16, 16], "epochs": 5, "batch_size": 64, "device": "cpu"}


def _additive_data(n=400, seed=0, interaction=0.0):
    """x ~ U[-1, 1]^4 and a 0/1 x4; y = sin(3 x0) + x1^2 - x2 + 0.5 x4 (+ 2 c x0 x1) + noise."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, 5))
    X[:, 4] = rng.random(n) < 0.5
    f = np.sin(3 * X[:, 0]) + X[:, 1] ** 2 - X[:, 2] + 0.5 * X[:, 4]
    y = f + interaction * 2 * X[:, 0] * X[:, 1] + 0.1 * rng.standard_normal(n)
    return X, y, f


def _mixed_difference(predict, X, seed=1):
    """f(a_S, a_T) - f(a_S, b_T) - f(b_S, a_T) + f(b_S, b_T), S = {x0, x2}: 0 for an additive f."""
    rng = np.random.default_rng(seed)
    a, b = X[rng.permutation(len(X))[:50]], X[rng.permutation(len(X))[:50]]
    ab, ba = a.copy(), b.copy()
    ab[:, [1, 3, 4]], ba[:, [1, 3, 4]] = b[:, [1, 3, 4]], a[:, [1, 3, 4]]
    return predict(a) - predict(ab) - predict(ba) + predict(b)


def _pairwise_auc(y, s):
    """P(score of a positive > score of a negative) + 0.5 P(tie), over all pairs."""
    pos, neg = s[y == 1][:, None], s[y == 0][None, :]
    return float(np.mean((pos > neg) + 0.5 * (pos == neg)))


# -- GAM adapter ---------------------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("estimator", [GAMRegressor, GAMClassifier])
def test_gam_adapter_passes_scikit_learn_estimator_checks(estimator):
    check_estimator(estimator(n_splines=5, lam_grid=[0.1, 10.0]))


def test_gam_adapter_works_with_clone_cross_val_score_and_grid_search():
    X, y, _ = _additive_data(300)
    gam = GAMRegressor(n_splines=8, lam_grid=[1.0])
    copy = clone(gam)
    assert copy is not gam and copy.get_params() == gam.get_params()
    folds = KFold(3, shuffle=True, random_state=0)
    cv = cross_val_score(gam, X, y, cv=folds, scoring="neg_mean_squared_error")
    assert cv.shape == (3,) and np.all(-cv < 0.1)  # noise variance 0.01, signal variance ~0.9
    search = GridSearchCV(gam, {"n_splines": [4, 12]}, cv=folds).fit(X, y)
    assert search.best_params_ == {"n_splines": 12}  # sin(3x) needs more than 4 basis functions
    assert isinstance(search.best_estimator_, GAMRegressor)


def test_gam_terms_follow_the_column_kinds():
    X, y, _ = _additive_data(200)
    X = np.column_stack([X, np.full(len(X), 3.0)])  # a constant column gets no term
    gam = GAMRegressor(n_splines=6, lam_grid=[1.0], categorical_features=[3]).fit(X, y)
    assert gam.term_kinds_.tolist() == ["spline", "spline", "spline", "linear", "linear", "none"]
    names = [f"c{j}" for j in range(6)]
    assert categorical_mask(["c3"], 6, names).tolist() == [0, 0, 0, 1, 0, 0]
    assert categorical_mask([True] * 6, 6).all()
    for bad in ([7], ["nope"], [True, False]):
        with pytest.raises(PilidError):
            categorical_mask(bad, 6, names)


def test_gam_gridsearch_picks_the_smoothing_with_the_best_gcv():
    from pygam import LinearGAM

    X, y, _ = _additive_data(300, seed=3)
    grid = [1e-2, 1.0, 1e2, 1e4]
    gam = GAMRegressor(n_splines=10, lam_grid=grid).fit(X, y)
    gcv = []
    for lam in grid:  # refit pygam at each lam directly, same terms
        model = LinearGAM(gam.gam_.terms, max_iter=100, tol=1e-4)
        model.lam = lam
        gcv.append(model.fit(X, y).statistics_["GCV"])
    assert gam.lam_ == grid[int(np.argmin(gcv))]


def test_gam_lam_search_is_pygams_gridsearch_where_that_finds_a_model():
    """`search_lam` walks the grid as pygam's gridsearch does (order, warm starts, first best)."""
    from pygam import LinearGAM, LogisticGAM, s

    X, y, f = _additive_data(300, seed=6)
    lams = np.array([1e-3, 1e-1, 10.0, 1e3])
    for cls, target in ((LinearGAM, y), (LogisticGAM, (f > np.median(f)).astype(float))):
        terms = s(0, n_splines=8) + s(1, n_splines=8) + s(2, n_splines=8)
        theirs = cls(terms).gridsearch(X, target, lam=lams, progress=False)
        ours, scores = search_lam(cls(terms), X, target, lams)
        np.testing.assert_array_equal(ours.coef_, theirs.coef_)
        assert np.all(np.isfinite(scores)) and ours.lam == theirs.lam


def test_gam_lam_search_neither_picks_nor_warm_starts_from_a_fit_without_a_finite_ubre(
    monkeypatch,
):
    """Spambase trial 14: at lam=0.01 pygam's IRLS ended with a NaN UBRE and coefficients so large
    that every fitted probability is 0 or 1; gridsearch warm-started every later lam from them,
    each diverged at once (all IRLS weights 0) and no model was left. Such a fit is now neither
    chosen nor a warm start."""
    import pygam

    class SaturatedAtSmallLam(pygam.LogisticGAM):  # the failure, made to order
        def fit(self, X, y, weights=None):
            super().fit(X, y, weights)
            if np.ravel(self.lam)[0] < 0.05:
                self.coef_ = self.coef_ * 1e6
                self.statistics_["UBRE"] = np.nan
            return self

    X, _, f = _additive_data(300, seed=7)
    labels = (f > np.median(f)).astype(int)
    healthy = GAMClassifier(n_splines=8, lam_grid=[1.0, 100.0]).fit(X, labels)
    with monkeypatch.context() as patch:
        patch.setattr(pygam, "LogisticGAM", SaturatedAtSmallLam)
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            with pytest.raises(AttributeError):  # pygam's own search: no model, best is None
                SaturatedAtSmallLam(healthy.gam_.terms).gridsearch(
                    X, labels, lam=np.array([0.01, 1.0, 100.0]), progress=False
                )
        gam = GAMClassifier(n_splines=8, lam_grid=[0.001, 0.01, 1.0, 100.0]).fit(X, labels)
    assert np.isnan(gam.lam_scores_[:2]).all() and np.isfinite(gam.lam_scores_[2:]).all()
    assert gam.lam_ == healthy.lam_  # lam=1 started cold, as in a search without the bad lams
    np.testing.assert_array_equal(gam.gam_.coef_, healthy.gam_.coef_)
    np.testing.assert_array_equal(gam.lam_scores_[2:], healthy.lam_scores_)


def test_gam_is_additive_and_recovers_a_smooth_additive_truth():
    X, y, f = _additive_data(600, seed=4)
    gam = GAMRegressor(n_splines=12).fit(X, y)
    assert np.max(np.abs(_mixed_difference(gam.predict, X))) < 1e-8
    assert np.mean((gam.predict(X) - f) ** 2) < 0.01  # noise variance is 0.01


def test_gam_classifier_probability_is_that_of_the_second_class():
    X, y, f = _additive_data(500, seed=5)
    labels = np.where(f > np.median(f), "yes", "no")
    gam = GAMClassifier(n_splines=8, lam_grid=[1.0, 10.0]).fit(X, labels)
    assert gam.classes_.tolist() == ["no", "yes"]
    proba = gam.predict_proba(X)
    logit = gam.decision_function(X)
    np.testing.assert_allclose(proba[:, 1], 1 / (1 + np.exp(-logit)), rtol=1e-12)
    seen = np.clip(X, gam.clip_low_, gam.clip_high_)  # the inputs pygam is given (outlier clip)
    np.testing.assert_allclose(proba[:, 1], gam.gam_.predict_proba(seen), rtol=1e-9, atol=1e-12)
    assert roc_auc_score(labels == "yes", proba[:, 1]) > 0.95
    assert np.mean(gam.predict(X) == labels) > 0.85


def test_gam_rejects_bad_settings_with_one_line():
    X, y, _ = _additive_data(100)
    for params in ({"n_splines": 3}, {"lam_grid": []}, {"lam_grid": [-1.0, 1.0]}):
        with pytest.raises(PilidError) as info:
            GAMRegressor(**params).fit(X, y)
        assert "\n" not in str(info.value)
    with pytest.raises(PilidError, match="binary"):
        GAMClassifier(n_splines=5).fit(X, np.arange(100) % 3)


# -- GA2M ------------------------------------------------------------------------------------------
def test_ga2m_without_interactions_is_additive_and_with_them_finds_the_pair():
    X, y, _ = _additive_data(800, seed=6, interaction=1.0)
    additive = GA2MRegressor(interactions=0, **FAST_EBM).fit(X, y)
    assert np.max(np.abs(_mixed_difference(additive.predict, X))) < 1e-9
    pairs = GA2MRegressor(interactions=1, **FAST_EBM).fit(X, y)
    assert pairs.term_names()[-1] == "feature_0000 & feature_0001"
    assert np.max(np.abs(_mixed_difference(pairs.predict, X))) > 0.1
    X_test, y_test, _ = _additive_data(400, seed=7, interaction=1.0)
    mse = [np.mean((m.predict(X_test) - y_test) ** 2) for m in (additive, pairs)]
    assert mse[1] < 0.8 * mse[0]


def test_ga2m_interactions_none_keeps_ebms_own_task_default():
    """`model=ebm` sets interactions: null; EBM then uses its own default (5x m regression,
    3x m classification), read from InterpretML's signature, not restated here."""
    import inspect

    from interpret.glassbox import ExplainableBoostingClassifier, ExplainableBoostingRegressor

    for ours, theirs in (
        (GA2MRegressor, ExplainableBoostingRegressor),
        (GA2MClassifier, ExplainableBoostingClassifier),
    ):
        default = inspect.signature(theirs).parameters["interactions"].default
        assert ours(interactions=None)._ebm(4).interactions == default
        assert ours(interactions=3)._ebm(4).interactions == 3


@pytest.mark.slow
def test_ga2m_is_repeatable_and_scikit_learn_compatible():
    X, y, f = _additive_data(300, seed=8)
    labels = (f > np.median(f)).astype(int)
    model = GA2MClassifier(interactions=2, **FAST_EBM)
    first = clone(model).fit(X, labels).decision_function(X)
    np.testing.assert_array_equal(first, clone(model).fit(X, labels).decision_function(X))
    fitted = clone(model).fit(X, labels)
    np.testing.assert_allclose(fitted.predict_proba(X)[:, 1], 1 / (1 + np.exp(-first)))
    folds = KFold(2, shuffle=True, random_state=0)
    assert np.all(cross_val_score(model, X, labels, cv=folds, scoring="roc_auc") > 0.9)
    search = GridSearchCV(GA2MRegressor(**FAST_EBM), {"interactions": [0, 1]}, cv=folds)
    assert search.fit(X, y).best_estimator_.interactions in (0, 1)


# -- GA (distillation) -----------------------------------------------------------------------------
def test_ga_student_is_fit_to_the_teacher_outputs():
    X, y, _ = _additive_data(400, seed=9, interaction=1.0)
    teacher = RandomForestRegressor(30, min_samples_leaf=5, random_state=0)
    ga = GARegressor(teacher=teacher, student_outer_bags=1, n_jobs=1, random_state=3).fit(X, y)
    target = clone(teacher).fit(X, y).predict(X)  # the distillation, by hand
    student = GA2MRegressor(interactions=0, outer_bags=1, n_jobs=1, random_state=3)
    np.testing.assert_allclose(ga.predict(X), student.fit(X, target).predict(X))
    np.testing.assert_allclose(ga.teacher_.predict(X), target)
    assert np.max(np.abs(_mixed_difference(ga.predict, X))) < 1e-9  # additive student
    fidelity = 1 - np.mean((ga.predict(X) - target) ** 2) / np.var(target)
    assert ga.fidelity_ == pytest.approx(fidelity)


def test_ga_classifier_distils_the_teacher_logit():
    X, y, f = _additive_data(400, seed=10)
    labels = np.where(f > np.median(f), 5, 2)
    teacher = LogisticRegression(C=0.5)
    ga = GAClassifier(teacher=teacher, student="gam", student_n_splines=6).fit(X, labels)
    logit = clone(teacher).fit(X, (labels == 5).astype(int)).decision_function(X)
    student = GAMRegressor(n_splines=6).fit(X, logit)
    np.testing.assert_allclose(ga.decision_function(X), student.predict(X))
    assert ga.classes_.tolist() == [2, 5]
    np.testing.assert_allclose(ga.predict_proba(X)[:, 1], 1 / (1 + np.exp(-student.predict(X))))
    assert ga.fidelity_ > 0.99  # a linear logit is itself additive
    with pytest.raises(PilidError, match="student"):
        GARegressor(teacher=Ridge(), student="tree").fit(X, f)


@pytest.mark.slow
def test_ga_with_gam_student_passes_scikit_learn_estimator_checks():
    check_estimator(GAClassifier(teacher=LogisticRegression(), student="gam", student_n_splines=5))


def test_ga_default_teacher_is_the_paper_mlp():
    from pilid.estimators.pilid import MLPClassifier, MLPRegressor

    data = load_dataset("synthetic", N=400, m=4, n_interactions=1)
    split = make_split(data, seed=0)
    ga = GARegressor(**TINY_MLP, student_outer_bags=1, n_jobs=1, random_state=2)
    ga.fit(split.X_train, split.y_train)
    assert type(ga.teacher_) is MLPRegressor
    assert ga.teacher_.get_params()["hidden_layers"] == [16, 16]
    assert ga.teacher_.get_params()["epochs"] == 5 and ga.teacher_.random_state == 2
    assert np.mean((ga.predict(split.X_test) - split.y_test) ** 2) < np.var(split.y_test)
    assert type(GAClassifier()._make_teacher(classification=True)) is MLPClassifier
    assert GARegressor().get_params()["hidden_layers"] == (100, 200, 400, 400, 200, 100)


# -- SVM -------------------------------------------------------------------------------------------
def test_svm_classifier_scores_are_its_margin():
    X, _, f = _additive_data(300, seed=11)
    y = (f > 0).astype(int)
    svm = SVMClassifier(C=2.0).fit(X, y)
    margin = SVC(C=2.0).fit(X, y).decision_function(X)
    np.testing.assert_allclose(svm.decision_function(X), margin)
    proba = svm.predict_proba(X)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    assert roc_auc_score(y, proba[:, 1]) == pytest.approx(_pairwise_auc(y, margin))


# -- every baseline: synthetic ordering and spambase ----------------------------------------------
def _registry_model(name, task, seed=0, categorical=(), **params):
    return builtin_estimator(name, task, params, seed, "cpu", list(categorical))


CHEAP = {
    "svm": {},
    "rf": {"n_estimators": 50, "cores": 1},
    "linear": {"max_iter": 1000},
    "gam": {"n_splines": 8, "lam_grid": [0.1, 10.0]},
    "ga2m": {"interactions": 3, "outer_bags": 1, "cores": 1},
    "ga": {**TINY_MLP, "student_outer_bags": 1, "cores": 1},
}


def test_on_additive_synthetic_regression_gam_and_ga2m_beat_linear_regression():
    data = load_dataset("synthetic", N=1500, m=5, n_interactions=1, noise=0.3)
    split = make_split(data, seed=0)
    mse = {}
    for name in ("linear", "gam", "ga2m"):
        model = _registry_model(name, "regression", **CHEAP[name])
        model.fit(split.X_train, split.y_train)
        mse[name] = score("mse", split.y_test, predict_scores(model, split.X_test, "regression"))
    assert mse["gam"] < 0.8 * mse["linear"]
    assert mse["ga2m"] < 0.8 * mse["linear"]
    assert mse["gam"] > 0.3**2 and mse["ga2m"] > 0.3**2  # not below the noise


@pytest.mark.parametrize("name", sorted(CHEAP))
def test_every_baseline_learns_a_small_synthetic_classification_task(name):
    data = load_dataset("synthetic", N=600, m=4, task="classification", label="threshold")
    split = make_split(data, seed=1)
    model = _registry_model(name, "classification", seed=1, **CHEAP[name])
    model.fit(split.X_train, split.y_train)
    scores = predict_scores(model, split.X_test, "classification")
    auc = score("auc", split.y_test, scores)
    assert auc == pytest.approx(_pairwise_auc(split.y_test, scores))
    assert auc > 0.75  # noise 0.5 on a unit-variance score: the Bayes AUC is about 0.89
    proba = model.predict_proba(split.X_test)  # the contract every classifier keeps
    assert proba.shape == (len(split.y_test), 2) and np.allclose(proba.sum(axis=1), 1.0)


def test_gam_classifier_survives_one_extreme_value():
    """skill's TotalHours has one value of 1,000,000: pygam's evenly spaced knots put every
    other row in the first piece and every lam of the grid failed; clipping spline columns to
    their training 0.1-99.9% quantiles fixes it."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(1500, 3))
    X[0, 0] = 1e6 / 40.0  # the outlier, standardised as make_split would leave it
    logit = np.sin(2 * X[:, 1]) + X[:, 2] + 0.5 * np.clip(X[:, 0], -3, 3)
    y = (rng.uniform(size=1500) < 1 / (1 + np.exp(-logit))).astype(int)
    est = GAMClassifier(lam_grid=(0.1, 10.0)).fit(X, y)
    proba = est.predict_proba(X)[:, 1]
    assert np.isfinite(proba).all()
    assert roc_auc_score(y, proba) > 0.7
    assert est.clip_high_[0] < 10  # the outlier does not set the knots
