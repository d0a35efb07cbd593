"""`fit(X, y, sample_weight)` of the baselines and of the CV wrappers (issue 27, item 3).

Each is checked against an independent computation: the wrapped library fitted directly with
the same weights (pygam, InterpretML's EBM, scikit-learn), the repeated rows for whole-number
weights where the fit is deterministic (the GAM), the unweighted fit for unit weights, and, for
the CV wrappers, the weights each candidate's fit and each fold's score received.
"""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.linear_model import LinearRegression, LogisticRegression, Ridge
from sklearn.metrics import mean_squared_error, roc_auc_score
from sklearn.model_selection import KFold, StratifiedKFold
from sklearn.neighbors import KNeighborsRegressor
from sklearn.svm import SVC
from sklearn.utils.validation import has_fit_parameter

from pilid.baselines.ga import GAClassifier, GARegressor
from pilid.baselines.ga2m import GA2MClassifier, GA2MRegressor
from pilid.baselines.gam import GAMClassifier, GAMRegressor
from pilid.baselines.svm import SVMClassifier
from pilid.errors import PilidError
from pilid.estimators.pilid import PiLiDClassifier, PiLiDRegressor
from pilid.estimators.pilid_cv import PiLiDClassifierCV, PiLiDRegressorCV
from pilid.experiments.model_config import builtin_estimator
from pilid.models.sample_weight import weighted_quantiles

FAST_EBM = {"outer_bags": 1, "n_jobs": 1, "random_state": 0}


def _data(n=240, seed=0):
    """x ~ U[-1, 1]^3; f = sin(3 x0) + x1^2 - x2; y = f + noise; labels: f + noise > 0;
    whole-number weights 0..3 (some rows weigh 0)."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, 3))
    f = np.sin(3 * X[:, 0]) + X[:, 1] ** 2 - X[:, 2]
    y = f + 0.3 * rng.standard_normal(n)
    labels = (f + 0.5 * rng.standard_normal(n) > 0.3).astype(int)
    weights = rng.integers(0, 4, size=n)
    return X, y, labels, weights


def _output(model, X):
    return model.decision_function(X) if hasattr(model, "decision_function") else model.predict(X)


# -- the weighted quantile of the GAM's clipping -----------------------------------------------
def test_weighted_quantile_is_numpys_quantile_of_the_repeated_rows():
    rng = np.random.default_rng(0)
    for n in (1, 2, 7, 40):
        X = rng.normal(size=(n, 3))
        X[:, 2] = rng.integers(0, 3, n)  # ties
        w = rng.integers(0, 4, n)
        w[0] = max(w[0], 1)
        for q in (0.0, 0.001, 0.3, 0.5, 0.999, 1.0):
            np.testing.assert_array_equal(
                weighted_quantiles(X, q, w), np.quantile(np.repeat(X, w, axis=0), q, axis=0)
            )
            np.testing.assert_array_equal(
                weighted_quantiles(X, q, np.ones(n)), np.quantile(X, q, axis=0)
            )


# -- GAM (pygam) ---------------------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("cls", [GAMRegressor, GAMClassifier])
def test_gam_whole_number_weights_fit_the_repeated_rows(cls):
    """The GAM is deterministic: weights w (0 included) == each row repeated w times, smoothing
    search included (GCV / UBRE count n = sum(w), as the repeated rows do); a row of weight 0,
    even one at a column's extreme, is absent (pygam spaces its knots over the rows it sees)."""
    X, y, labels, w = _data()
    w[np.argmin(X, axis=0)] = 0  # rows of weight 0 hold the extremes: the knots must skip them
    w[np.argmax(X, axis=0)] = 0
    X = np.column_stack([X, np.arange(len(X)) % 2])  # a 0/1 column: a linear term ...
    X[np.flatnonzero(w == 0)[0], 3] = 0.5  # ... unless a row of weight 0 counted
    target = y if cls is GAMRegressor else labels
    weighted = cls(n_splines=8, lam_grid=[1e-2, 1.0, 1e2]).fit(X, target, sample_weight=w)
    repeated = cls(n_splines=8, lam_grid=[1e-2, 1.0, 1e2]).fit(
        np.repeat(X, w, axis=0), np.repeat(target, w)
    )
    assert weighted.term_kinds_.tolist() == ["spline"] * 3 + ["linear"]
    assert weighted.lam_ == repeated.lam_
    np.testing.assert_allclose(weighted.lam_scores_, repeated.lam_scores_, rtol=1e-6)
    np.testing.assert_array_equal(weighted.clip_low_, repeated.clip_low_)
    np.testing.assert_array_equal(weighted.clip_high_, repeated.clip_high_)
    np.testing.assert_allclose(_output(weighted, X), _output(repeated, X), rtol=1e-6, atol=1e-6)
    unweighted = cls(n_splines=8, lam_grid=[1e-2, 1.0, 1e2]).fit(X, target)
    assert np.max(np.abs(_output(weighted, X) - _output(unweighted, X))) > 1e-3  # weights act


@pytest.mark.parametrize("cls", [GAMRegressor, GAMClassifier])
def test_gam_unit_weights_are_the_unweighted_fit(cls):
    X, y, labels, _ = _data(seed=1)
    target = y if cls is GAMRegressor else labels
    plain = cls(n_splines=8, lam_grid=[1e-2, 1.0, 1e2]).fit(X, target)
    unit = cls(n_splines=8, lam_grid=[1e-2, 1.0, 1e2]).fit(X, target, sample_weight=np.ones(240))
    np.testing.assert_array_equal(unit.gam_.coef_, plain.gam_.coef_)
    np.testing.assert_array_equal(unit.lam_scores_, plain.lam_scores_)
    np.testing.assert_array_equal(_output(unit, X), _output(plain, X))


def test_gam_passes_the_weights_to_pygam():
    """One lam: the model is pygam's LinearGAM fitted directly with the same weights on the rows
    of positive weight, clipped at the quantiles of the repeated rows."""
    from pygam import LinearGAM, s

    X, y, _, w = _data(seed=2)
    w = w + 0.5 * (w > 0)  # not whole numbers
    ours = GAMRegressor(n_splines=8, lam_grid=[3.0]).fit(X, y, sample_weight=w)
    keep = w > 0
    low = np.quantile(np.repeat(X[keep], 2 * w[keep].astype(int), axis=0), 0.001, axis=0)
    high = np.quantile(np.repeat(X[keep], 2 * w[keep].astype(int), axis=0), 0.999, axis=0)
    np.testing.assert_allclose(ours.clip_low_, low, rtol=1e-12)  # doubled weights: same sample
    np.testing.assert_allclose(ours.clip_high_, high, rtol=1e-12)
    theirs = LinearGAM(s(0, n_splines=8) + s(1, n_splines=8) + s(2, n_splines=8), lam=3.0)
    theirs.fit(np.clip(X[keep], low, high), y[keep], weights=w[keep])
    np.testing.assert_allclose(ours.predict(X), theirs.predict(np.clip(X, low, high)), rtol=1e-9)


# -- GA2M (InterpretML's EBM) ----------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("cls", [GA2MRegressor, GA2MClassifier])
def test_ga2m_is_ebm_fitted_directly_with_the_same_weights(cls):
    """EBM takes sample_weight itself; it refuses a weight of 0, so those rows are dropped."""
    X, y, labels, w = _data(n=200, seed=3)
    target = y if cls is GA2MRegressor else labels
    model = cls(interactions=1, max_rounds=300, **FAST_EBM)
    ours = clone(model).fit(X, target, sample_weight=w)
    keep = w > 0
    ebm = model._ebm(X.shape[1]).fit(X[keep], target[keep], sample_weight=w[keep])
    np.testing.assert_array_equal(_output(ours, X), _output(ebm, X))
    unit = clone(model).fit(X, target, sample_weight=np.ones(len(X)))
    np.testing.assert_array_equal(_output(unit, X), _output(clone(model).fit(X, target), X))


# -- GA (distillation) ---------------------------------------------------------------------------
def test_ga_trains_teacher_and_student_with_the_weights():
    X, y, _, w = _data(n=300, seed=4)
    teacher = Ridge(alpha=1.0)
    ga = GARegressor(teacher=teacher, student_outer_bags=1, n_jobs=1, random_state=3)
    ga.fit(X, y, sample_weight=w)
    target = clone(teacher).fit(X, y, sample_weight=w).predict(X)  # the distillation, by hand
    student = GA2MRegressor(interactions=0, outer_bags=1, n_jobs=1, random_state=3)
    student.fit(X, target, sample_weight=w)
    np.testing.assert_allclose(ga.teacher_.predict(X), target)
    np.testing.assert_array_equal(ga.predict(X), student.predict(X))
    fitted = student.predict(X)
    mean = np.sum(w * target) / np.sum(w)
    r2 = 1 - np.sum(w * (fitted - target) ** 2) / np.sum(w * (target - mean) ** 2)
    assert ga.fidelity_ == pytest.approx(r2, rel=1e-12)


def test_ga_classifier_with_gam_student_uses_the_weights():
    X, _, labels, w = _data(n=300, seed=5)
    teacher = LogisticRegression(C=0.5)
    ga = GAClassifier(teacher=teacher, student="gam", student_n_splines=6)
    ga.fit(X, labels, sample_weight=w)
    logit = clone(teacher).fit(X, labels, sample_weight=w).decision_function(X)
    student = GAMRegressor(n_splines=6).fit(X, logit, sample_weight=w)
    np.testing.assert_allclose(ga.decision_function(X), student.predict(X), rtol=1e-12)


def test_ga_refuses_weights_its_teacher_cannot_take():
    X, y, _, w = _data(n=100, seed=6)
    ga = GARegressor(teacher=KNeighborsRegressor(), student="gam", student_n_splines=5)
    with pytest.raises(PilidError, match="KNeighborsRegressor takes no sample_weight") as info:
        ga.fit(X, y, sample_weight=w)
    assert "\n" not in str(info.value) and "drop sample_weight" in str(info.value)
    ga.fit(X, y)  # without weights it trains as before


# -- scikit-learn's own baselines, and every baseline the runner builds ----------------------------
def test_svm_classifier_passes_the_weights_to_libsvm():
    X, _, labels, w = _data(n=200, seed=7)
    ours = SVMClassifier(C=2.0).fit(X, labels, sample_weight=w)
    theirs = SVC(C=2.0).fit(X, labels, sample_weight=w)
    np.testing.assert_allclose(ours.decision_function(X), theirs.decision_function(X))


BASELINES = ("svm", "rf", "linear", "gam", "ga2m", "ga")


@pytest.mark.parametrize("task", ["regression", "classification"])
@pytest.mark.parametrize("name", BASELINES)
def test_every_runner_baseline_takes_sample_weight(name, task):
    model = builtin_estimator(name, task, {}, 0, "cpu", [])
    assert has_fit_parameter(model, "sample_weight"), type(model).__name__


def test_linear_baseline_whole_number_weights_are_repeated_rows():
    X, y, _, w = _data(seed=8)
    model = builtin_estimator("linear", "regression", {}, 0, "cpu", [])
    assert isinstance(model, LinearRegression)
    weighted = clone(model).fit(X, y, sample_weight=w).predict(X)
    repeated = clone(model).fit(np.repeat(X, w, axis=0), np.repeat(y, w)).predict(X)
    np.testing.assert_allclose(weighted, repeated, rtol=1e-10)


@pytest.mark.parametrize(
    "model",
    [
        GAMRegressor(n_splines=5, lam_grid=[1.0]),
        GA2MRegressor(interactions=0, **FAST_EBM),
        GARegressor(teacher=Ridge(), student="gam", student_n_splines=5),
    ],
    ids=lambda m: type(m).__name__,
)
def test_bad_weights_raise_one_line_naming_sample_weight(model):
    X, y, _, _ = _data(n=60, seed=9)
    for bad in (-np.ones(60), np.ones(59), np.zeros(60), np.r_[np.ones(59), np.nan]):
        with pytest.raises(PilidError, match="sample_weight") as info:
            clone(model).fit(X, y, sample_weight=bad)
        assert "\n" not in str(info.value) and type(model).__name__ in str(info.value)


# -- the CV wrappers -----------------------------------------------------------------------------
CV_PARAMS = dict(hidden_layers=(4,), epochs=2, batch_size=32, device="cpu")
CV_TASKS = {
    "regression": (PiLiDRegressorCV, PiLiDRegressor, KFold, mean_squared_error),
    "classification": (PiLiDClassifierCV, PiLiDClassifier, StratifiedKFold, roc_auc_score),
}


def _cv_data(task, n=60, seed=10):
    X, y, labels, _ = _data(n=n, seed=seed)
    weights = 1.0 + np.arange(n) / n  # distinct: each fit's weights name its rows
    return X, (y if task == "regression" else labels), weights


@pytest.mark.slow
@pytest.mark.parametrize("task", sorted(CV_TASKS))
def test_cv_weights_reach_every_candidate_each_fold_score_and_the_refit(task, monkeypatch):
    """Spies on the engine the candidates train with (`fit_batched`) and on the wrapped class's
    fit (the refit) record the weights each fit gets, then fit without them (so that this test
    needs nothing of the neural weighted loss); each fold's score must be the weighted metric of
    the held-out rows, computed here by hand."""
    import pilid.estimators.pilid_cv as pilid_cv

    cv_cls, est_cls, splitter, metric = CV_TASKS[task]
    X, y, w = _cv_data(task)
    seen = []
    original, engine = est_cls.fit, pilid_cv.fit_batched

    def spy(self, X, y, sample_weight=None):
        seen.append(None if sample_weight is None else np.asarray(sample_weight).copy())
        return original(self, X, y)

    def engine_spy(ests, Xs, ys, sample_weights=None, **kwargs):
        assert len(ests) == 1
        seen.append(None if sample_weights is None else np.asarray(sample_weights[0]).copy())
        return engine(ests, Xs, ys, **kwargs)

    monkeypatch.setattr(est_cls, "fit", spy)
    monkeypatch.setattr(pilid_cv, "fit_batched", engine_spy)
    folds = splitter(n_splits=2, shuffle=True, random_state=0)
    model = cv_cls(
        gammas=(1, 3), lams=(1e-3,), cv=folds, random_state=0, estimator_params=CV_PARAMS
    )
    model.fit(X, y, sample_weight=w)
    splits = list(folds.split(X, y))
    assert len(seen) == 2 * len(splits) + 1  # 2 candidates x 2 folds, then the refit
    expected = sorted(tuple(np.sort(w[train])) for train, _ in splits for _ in range(2))
    assert sorted(tuple(np.sort(s)) for s in seen[:-1]) == expected
    np.testing.assert_array_equal(seen[-1], w)
    monkeypatch.undo()
    for i, params in enumerate(model.cv_results_["params"]):
        for k, (train, test) in enumerate(splits):
            fitted = est_cls(**CV_PARAMS, random_state=0, **params).fit(X[train], y[train])
            scores = _output(fitted, X[test])
            sign = -1.0 if task == "regression" else 1.0
            expected_score = sign * metric(y[test], scores, sample_weight=w[test])
            got = model.cv_results_[f"split{k}_test_score"][i]
            assert got == pytest.approx(expected_score, rel=1e-9)
            unweighted = sign * metric(y[test], scores)
            assert got != pytest.approx(unweighted, rel=1e-9)  # the weights changed the score


@pytest.mark.slow
@pytest.mark.parametrize("task", sorted(CV_TASKS))
def test_cv_refit_is_the_wrapped_model_fitted_with_the_weights(task):
    """Needs the neural estimators' weighted fit: the refit model is PiLiD fitted with the same
    weights and the chosen parameters; unit weights give the unweighted search exactly."""
    cv_cls, est_cls, _, _ = CV_TASKS[task]
    X, y, w = _cv_data(task, seed=11)
    model = cv_cls(gammas=(1, 3), lams=(1e-3,), cv=2, random_state=0, estimator_params=CV_PARAMS)
    weighted = clone(model).fit(X, y, sample_weight=w)
    by_hand = est_cls(**CV_PARAMS, random_state=0, **weighted.best_params_)
    by_hand.fit(X, y, sample_weight=w)
    np.testing.assert_array_equal(_output(weighted, X), _output(by_hand, X))
    plain = clone(model).fit(X, y)
    unit = clone(model).fit(X, y, sample_weight=np.ones(len(X)))
    for k in range(2):
        key = f"split{k}_test_score"
        np.testing.assert_array_equal(unit.cv_results_[key], plain.cv_results_[key])
    np.testing.assert_array_equal(_output(unit, X), _output(plain, X))


def test_cv_refuses_bad_weights_in_one_line():
    X, y, _ = _cv_data("regression")
    model = PiLiDRegressorCV(gammas=(1,), lams=(1e-3,), cv=2, estimator_params=CV_PARAMS)
    with pytest.raises(PilidError, match="PiLiDRegressorCV: sample_weight") as info:
        model.fit(X, y, sample_weight=-np.ones(len(X)))
    assert "\n" not in str(info.value)


# -- scikit-learn's sample-weight checks -----------------------------------------------------------
SAMPLE_WEIGHT_CHECKS = (
    "check_sample_weights_pandas_series",
    "check_sample_weights_not_an_array",
    "check_sample_weights_list",
    "check_sample_weights_shape",
    "check_sample_weights_not_overwritten",
    "check_all_zero_sample_weights_error",
    "check_sample_weight_equivalence_on_dense_data",
)
#: Why a baseline's weights are not repeated rows (the one check it is exempt from).
NOT_REPEATED_ROWS = "EBM's bags and early-stopping split draw rows: weights are not repeated rows"


@pytest.mark.slow
@pytest.mark.parametrize(
    "model",
    [
        GAMRegressor(n_splines=5, lam_grid=[0.1, 10.0]),
        GAMClassifier(n_splines=5, lam_grid=[0.1, 10.0]),
        GA2MRegressor(interactions=1, max_rounds=200, **FAST_EBM),
        GA2MClassifier(interactions=1, max_rounds=200, **FAST_EBM),
        GARegressor(teacher=Ridge(), student="gam", student_n_splines=5),
    ],
    ids=lambda m: type(m).__name__,
)
def test_scikit_learn_sample_weight_checks(model):
    """scikit-learn's sample-weight checks, the equivalence to repeated rows included where the
    fit is deterministic (the GAM, and GA with a Ridge teacher and a GAM student)."""
    import warnings

    from sklearn.utils import estimator_checks

    exempt = {"check_sample_weight_equivalence_on_dense_data": NOT_REPEATED_ROWS}
    ebm = isinstance(model, GA2MRegressor | GA2MClassifier)
    for check in SAMPLE_WEIGHT_CHECKS:
        if ebm and check in exempt:
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            getattr(estimator_checks, check)(type(model).__name__, clone(model))
