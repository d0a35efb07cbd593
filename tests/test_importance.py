"""`term_importances` and its bars (`pilid.inspection.importance`): each term's mean absolute
contribution, checked against the model's own outputs (``decompose``, ``predict``, the pair
terms' forward pass), and the bars' layout read from the drawn artists."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
import torch
from matplotlib.figure import Figure

from pilid import PiLiBClassifier, PiLiBRegressor, PiLiDClassifier, PiLiDRegressor
from pilid.errors import PilidError
from pilid.inspection.importance import ImportanceDisplay, pair_name, term_importances
from pilid.inspection.joint_grid import N_REFERENCE

SMALL = dict(epochs=4, batch_size=64, random_state=0, device="cpu")


def _data(n=300, seed=0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"a": rng.normal(size=n), "b": rng.uniform(size=n), "c": rng.normal(size=n)})
    y = 3.0 * X["a"] + 2.0 * X["a"] * X["b"] + np.sin(X["c"]) + 0.1 * rng.normal(size=n)
    return X, y.to_numpy()


def _pair_values(member, a, b, k, X, ref):
    """f_ab of pair term k of one model at each row of `X` (n,) and its brute-force pure
    interaction over the reference rows `ref`, from the pair terms' own forward pass."""
    pairs = member.module_.deep.pairs

    def f(rows):
        phi = member._inputs(rows)[1]
        with torch.no_grad():
            return pairs.terms(phi)[0, :, k].double().numpy()

    n, r = len(X), len(ref)
    own = f(X)
    with_ref_b = np.repeat(X, r, axis=0)
    with_ref_b[:, b] = np.tile(ref[:, b], n)
    with_ref_a = np.repeat(X, r, axis=0)
    with_ref_a[:, a] = np.tile(ref[:, a], n)
    both = np.repeat(ref, r, axis=0)
    both[:, b] = np.tile(ref[:, b], r)
    pd_a = f(with_ref_b).reshape(n, r).mean(1)  # PD of a alone at each row's x_a
    pd_b = f(with_ref_a).reshape(n, r).mean(1)
    return member.y_scale_ * (own - pd_a - pd_b + f(both).mean())


def test_main_effects_are_mean_absolute_contributions():
    X, y = _data()
    model = PiLiDRegressor(gamma=3, hidden_layers=(8,), pairs=0, n_bags=1, **SMALL).fit(X, y)
    table = model.term_importances(X)
    assert list(table.columns) == ["term", "kind", "importance"]
    main = table[table["kind"] == "main"].set_index("term")["importance"]
    expected = np.abs(model.feature_contributions(X)).mean(0)
    np.testing.assert_allclose(main[["a", "b", "c"]].to_numpy(), expected, rtol=1e-12)
    assert np.all(np.diff(table["importance"].to_numpy()) <= 0)  # most important first
    assert table.iloc[0]["term"] == "a"  # 3 a dominates the target


def test_pair_terms_are_their_pure_interaction_and_the_rest_is_deep():
    X, y = _data()
    model = PiLiDRegressor(gamma=3, hidden_layers=(8,), pairs=1, n_bags=1, **SMALL).fit(X, y)
    assert len(model.pairs_) == 1
    name_a, name_b = model.pairs_[0]
    a, b = ["a", "b", "c"].index(name_a), ["a", "b", "c"].index(name_b)
    rows = model._check_fitted_X(X.iloc[:80])
    ref = model._reference_X
    pure = _pair_values(model, a, b, 0, rows, ref)
    pure_ref = _pair_values(model, a, b, 0, ref, ref)
    table = model.term_importances(X.iloc[:80]).set_index("term")
    assert table.loc[pair_name(name_a, name_b), "kind"] == "pair"
    np.testing.assert_allclose(
        table.loc[pair_name(name_a, name_b), "importance"],
        np.abs(pure - pure_ref.mean()).mean(),
        rtol=1e-5,
    )

    # the deep row: the raw output less the intercept, the shapes and the pure pair term
    def rest(R, pure_R):
        return model.predict(R) - model.intercept_ - model.feature_contributions(R).sum(1) - pure_R

    ref_frame = pd.DataFrame(ref, columns=X.columns)
    deep = rest(X.iloc[:80], pure) - rest(ref_frame, pure_ref).mean()
    np.testing.assert_allclose(table.loc["deep", "importance"], np.abs(deep).mean(), rtol=1e-4)


def test_bag_of_pair_models_averages_members():
    X, y = _data()
    bag = PiLiDRegressor(gamma=3, hidden_layers=(8,), pairs=1, n_bags=2, **SMALL).fit(X, y)
    rows = bag._check_fitted_X(X.iloc[:60])
    ref = bag._reference_X
    by_name: dict = {}
    for member in bag.estimators_:
        (a, b) = member.module_.deep.pairs.pairs[0, 0].tolist()
        key = pair_name("abc"[a], "abc"[b])
        value = (
            _pair_values(member, a, b, 0, rows, ref)
            - _pair_values(member, a, b, 0, ref, ref).mean()
        )
        by_name[key] = by_name.get(key, 0.0) + value / len(bag.estimators_)
    table = bag.term_importances(X.iloc[:60]).set_index("term")
    for key, value in by_name.items():
        np.testing.assert_allclose(table.loc[key, "importance"], np.abs(value).mean(), rtol=1e-5)


def test_default_rows_are_the_kept_training_rows():
    X, y = _data(n=1500)
    A = X.to_numpy()
    model = PiLiDRegressor(gamma=3, hidden_layers=(8,), pairs=0, n_bags=1, **SMALL).fit(A, y)
    ref = model._reference_X
    assert len(ref) == N_REFERENCE
    # every kept row is a training row
    assert (np.abs(ref[:, None, :] - A[None]).sum(2).min(1) == 0).all()
    pd.testing.assert_frame_equal(term_importances(model), model.term_importances(ref))


def test_multiclass_gives_one_importance_per_class():
    X, y = _data()
    labels = np.digitize(y, np.quantile(y, [1 / 3, 2 / 3]))
    names = np.array(["low", "mid", "high"])[labels]
    model = PiLiDClassifier(gamma=3, hidden_layers=(8,), n_bags=1, **SMALL).fit(X, names)
    table = model.term_importances(X)
    assert list(table.columns) == ["class", "term", "kind", "importance"]
    assert list(dict.fromkeys(table["class"])) == list(model.classes_)
    contrib = model.decompose(X)[1]  # (n, m, K)
    for k, label in enumerate(model.classes_):
        part = table[table["class"] == label]
        assert np.all(np.diff(part["importance"].to_numpy()) <= 0)
        main = part[part["kind"] == "main"].set_index("term")["importance"]
        np.testing.assert_allclose(main[["a", "b", "c"]], np.abs(contrib[:, :, k]).mean(0))


def test_pilib_deep_part_is_its_blocks_centred():
    X, y = _data()
    blocks = dict(n_blocks=3, block_layers=(4,), warmup_epochs=1, phase1_epochs=2)
    model = PiLiBRegressor(gamma=2, **blocks, **SMALL).fit(X, y)
    table = model.term_importances(X).set_index("term")
    assert set(table["kind"]) == {"main", "deep"}
    deep = model.decompose(X)[2]
    ref = model.decompose(pd.DataFrame(model._reference_X, columns=X.columns))[2]
    np.testing.assert_allclose(table.loc["deep", "importance"], np.abs(deep - ref.mean()).mean())


def test_bars_most_important_on_top_coloured_by_kind():
    table = pd.DataFrame(
        {
            "term": ["a", "deep", "a x b", "b", "c"],
            "kind": ["main", "deep", "pair", "main", "main"],
            "importance": [3.0, 1.5, 0.7, 0.4, 0.1],
        }
    )
    ax = Figure().subplots()
    display = ImportanceDisplay(table, output="predicted y").plot(ax=ax, max_terms=4)
    bars = display.bars_[0].patches
    assert display.terms_ == ["a", "deep", "a x b", "b"]
    widths = [p.get_width() for p in bars]
    np.testing.assert_allclose(widths, [3.0, 1.5, 0.7, 0.4])
    centres = [p.get_y() + p.get_height() / 2 for p in bars]
    assert centres == sorted(centres, reverse=True)  # the first term highest
    ticks = {t.get_text(): t.get_position()[1] for t in ax.get_yticklabels()}
    assert ticks["a"] > ticks["deep"] > ticks["a x b"] > ticks["b"]
    assert bars[0].get_facecolor() != bars[1].get_facecolor()  # main vs deep
    assert bars[0].get_facecolor() == bars[3].get_facecolor()  # two main effects
    assert ax.get_xlim()[0] == 0.0
    assert len(display.legend_.get_texts()) == 3  # main, pair, deep


def test_bars_of_classes_are_stacked():
    table = pd.DataFrame(
        {
            "class": ["x", "x", "y", "y"],
            "term": ["a", "b", "a", "b"],
            "kind": ["main"] * 4,
            "importance": [1.0, 2.0, 2.5, 0.2],
        }
    )
    ax = Figure().subplots()
    display = ImportanceDisplay(table).plot(ax=ax)
    assert display.terms_ == ["a", "b"]  # a: 3.5 over b: 2.2
    first, second = display.bars_
    np.testing.assert_allclose([p.get_x() for p in second.patches], [1.0, 2.0])
    np.testing.assert_allclose([p.get_x() + p.get_width() for p in second.patches], [3.5, 2.2])


def test_plot_importance_of_an_estimator():
    X, y = _data(n=150)
    model = PiLiDRegressor(gamma=2, hidden_layers=(4,), pairs=0, n_bags=1, **SMALL).fit(X, y)
    ax = Figure().subplots()
    display = model.plot_importance(X, ax=ax, max_terms=2)
    expected = model.term_importances(X)
    assert display.terms_ == list(expected["term"][:2])
    assert re.findall(r"\d+", ax.get_title()) == ["2", "4"]  # 2 of the 4 terms drawn
    with pytest.raises(PilidError, match="max_terms"):
        model.plot_importance(X, ax=ax, max_terms=0)


def test_k_class_pilib_reads_the_rows_its_class_members_kept():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(240, 3))
    y = np.digitize(X[:, 0] + X[:, 1] * X[:, 2], [-0.5, 0.5])
    blocks = dict(n_blocks=2, block_layers=(4,), warmup_epochs=1, phase1_epochs=2)
    model = PiLiBClassifier(gamma=2, **blocks, **SMALL).fit(X, y)
    rows = model.class_estimators_[0]._reference_X
    table = model.term_importances()
    assert list(dict.fromkeys(table["class"])) == [0, 1, 2]
    pd.testing.assert_frame_equal(table, model.term_importances(rows))
