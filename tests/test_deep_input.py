"""``deep_input="auto"`` (`pilid.models.shape_choice`): every ``pairs`` candidate trains twice,
with PiLiD's MLP on the columns and with TabM's MLP on piecewise-linear embeddings
(`pilid.nn.embedding`) free of Eq. 11's penalty; each judged on its first `CHOICE_MEMBERS` bag
members, the chosen one completes its bag.

Checked against independent computations: the losses listed are those of bags of the first
members fitted alone with each candidate's parameters (the embedded ones through the studies'
lever ``deep_embedding``, another route to the same deep part), recomputed from their
predictions; the final bag is a full bag of the chosen candidate (its rows, seeds and
predictions); without an MLP or with monotone constraints the choice is the columns' alone,
bit for bit; a refit of the fitted estimator is its first fit. The choice needs
`EMBEDDING_MIN_ROWS` fit rows: these tests fit a few hundred, with it at 0 (`_any_rows`), but
the one of the rule itself, which moves it around the rows of its data.
"""

from __future__ import annotations

import numpy as np
import pytest
from _choice import choice_loss, pair_data, trained_sizes  # tests/_choice.py

from pilid import PiLiDClassifier, PiLiDRegressor
from pilid.models import shape_choice
from pilid.models.params import ParamError
from pilid.models.shape_choice import CHOICE_MEMBERS
from pilid.nn.embedding import EMBEDDING_SIZE, EmbeddedMLP
from studies._levers import with_levers
from studies.dev_suite import CANDIDATE_BASE

SMALL = dict(hidden_layers=(8,), n_bags=6, random_state=0, device="cpu", epochs=12)
#: the embedded candidate's parameters, through the studies' lever (no public value of the library)
EMBEDDED = dict(deep_embedding=EMBEDDING_SIZE, reg_groups="additive")


@pytest.fixture(autouse=True)
def _any_rows(request, monkeypatch):
    """The embeddings tried on these tests' few rows (`shape_choice.EMBEDDING_MIN_ROWS` 0),
    except in the test of that rule."""
    if "rule" not in request.node.name:
        monkeypatch.setattr(shape_choice, "EMBEDDING_MIN_ROWS", 0)


def _alone(cls, row, **params):
    """A fit of candidate `row` of ``shape_choice_`` with its parameters fixed (the embedded
    one through the lever)."""
    fixed = {**SMALL, **params, "pairs": int(row["pairs"]), **CANDIDATE_BASE}
    if row["deep_input"] == "embeddings":
        return with_levers(cls)(**fixed, **EMBEDDED)
    return cls(**fixed)


def _deep(est):
    deep = est.estimators_[0].module_.deep
    return getattr(deep, "deep", deep)  # inside the pair terms' holder when there are pairs


def test_each_candidate_trains_with_either_deep_part_and_the_chosen_one_completes_its_bag(
    monkeypatch,
):
    X, y = pair_data(1200)
    sizes = trained_sizes(monkeypatch)
    model = PiLiDRegressor(deep_input="auto", **SMALL).fit(X, y)
    table = model.shape_choice_
    assert table["deep_input"].tolist() == ["columns", "columns", "embeddings", "embeddings"]
    assert table["pairs"].tolist()[:2] == table["pairs"].tolist()[2:]
    first, rest = CHOICE_MEMBERS, SMALL["n_bags"] - CHOICE_MEMBERS
    assert sizes == [first] * 4 + [rest]  # each candidate's first members, then the chosen's rest

    fits = [_alone(PiLiDRegressor, row, n_bags=first).fit(X, y) for _, row in table.iterrows()]
    losses = [choice_loss(fit, X, y) for fit in fits]
    np.testing.assert_allclose(table["val_loss"], losses, rtol=1e-5)
    best = int(np.argmin(losses))
    assert table["chosen"].tolist() == [i == best for i in range(4)]
    assert isinstance(_deep(model), EmbeddedMLP) == (table["deep_input"][best] == "embeddings")

    # the whole bag: the chosen candidate's members, each as in a full bag of it
    full = _alone(PiLiDRegressor, table.iloc[best]).fit(X, y)
    assert len(model.estimators_) == SMALL["n_bags"]
    np.testing.assert_array_equal(model.bag_rows_, full.bag_rows_)
    assert [m.seed_ for m in model.estimators_] == [m.seed_ for m in full.estimators_]
    for ours, theirs in zip(model.estimators_[:first], fits[best].estimators_):
        np.testing.assert_allclose(ours.predict(X), theirs.predict(X), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(model.predict(X), full.predict(X), rtol=1e-3, atol=1e-3)


def _two_classes(n=600, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    y = X[:, 0] * X[:, 1] + np.sin(2 * X[:, 2]) + 0.1 * rng.normal(size=n)
    return X, (y > 0).astype(int)


def test_a_refit_of_a_model_that_chose_the_embeddings_is_its_first_fit():
    X, y = _two_classes()
    model = PiLiDClassifier(deep_input="auto", **{**SMALL, "epochs": 8})
    first = model.fit(X, y).predict_proba(X)
    chosen = model.shape_choice_[model.shape_choice_["chosen"]]
    assert chosen["deep_input"].item() == "embeddings"  # the case a stale candidate would spoil
    np.testing.assert_array_equal(model.fit(X, y).predict_proba(X), first)
    assert model.shape_choice_["deep_input"].tolist().count("embeddings") == 2
    # a fit stopped between the choice and the chosen candidate's other members leaves them
    # behind; the next fit starts afresh
    model._chosen, model._rest_of_chosen = object(), []
    np.testing.assert_array_equal(model.fit(X, y).predict_proba(X), first)


@pytest.mark.parametrize(
    "other", [{"hidden_layers": None}, {"monotone_constraints": {0: 1}}], ids=["glass", "monotone"]
)
def test_without_an_mlp_or_with_monotone_constraints_the_choice_is_the_columns_alone(other):
    X, y = pair_data(400, seed=3)
    params = {**SMALL, "epochs": 6, **other}
    auto = PiLiDRegressor(deep_input="auto", **params).fit(X, y)
    columns = PiLiDRegressor(**params).fit(X, y)
    np.testing.assert_array_equal(auto.predict(X), columns.predict(X))
    assert "deep_input" not in auto.shape_choice_


def test_three_classes_choose_between_the_deep_parts_on_whole_class_members():
    X, y = pair_data(600, seed=1)
    label = np.digitize(y, np.quantile(y, [0.33, 0.66]))
    params = {**SMALL, "n_bags": 2, "epochs": 8}
    model = PiLiDClassifier(deep_input="auto", **params).fit(X, label)
    table = model.shape_choice_
    assert table["deep_input"].tolist() == ["columns", "embeddings"]  # no pairs for K > 2
    best = int(np.argmin(table["val_loss"]))
    assert table["chosen"].tolist() == [best == 0, best == 1]
    alone = _alone(PiLiDClassifier, table.iloc[best], **params).fit(X, label)
    np.testing.assert_allclose(model.predict_proba(X), alone.predict_proba(X), atol=1e-6)


def test_a_bad_deep_input_is_one_line_naming_the_values():
    X, y = pair_data(100, seed=2)
    with pytest.raises(ParamError, match="deep_input") as info:
        PiLiDRegressor(deep_input="embeddings", **SMALL).fit(X, y)
    assert "'auto'" in str(info.value) and "\n" not in str(info.value)


def test_the_studies_levers_that_change_the_choice_or_the_deep_part_refuse_auto_with_the_fix():
    X, y = pair_data(100, seed=2)
    lever = with_levers(PiLiDRegressor)(deep_input="auto", lam_choice=0.5, **SMALL)
    with pytest.raises(ValueError, match="set lam_choice") as info:
        lever.fit(X, y)
    assert "deep_input='columns'" in str(info.value) and "\n" not in str(info.value)


def test_the_studies_choice_members_sets_how_many_first_members_choose(monkeypatch):
    X, y = pair_data(600, seed=4)
    sizes = trained_sizes(monkeypatch)
    lever = with_levers(PiLiDRegressor)(deep_input="auto", choice_members=2, **SMALL).fit(X, y)
    assert sizes == [2] * 4 + [SMALL["n_bags"] - 2]
    assert len(lever.estimators_) == SMALL["n_bags"]
    sizes.clear()
    PiLiDRegressor(deep_input="auto", **SMALL).fit(X, y)
    assert sizes == [CHOICE_MEMBERS] * 4 + [SMALL["n_bags"] - CHOICE_MEMBERS]


def test_the_rows_rule_tries_the_embeddings_from_its_rows_on_and_else_fits_the_columns_alone(
    monkeypatch,
):
    """Below `EMBEDDING_MIN_ROWS` fit rows ``deep_input="auto"`` is ``"columns"`` bit for bit
    (every member trained at once, no deep part listed); from it on, the embedded candidates
    are listed and the choice runs on the first members; the studies' lever ``deep_min_rows``
    moves the rule."""
    X, y = pair_data(400, seed=5)
    sizes = trained_sizes(monkeypatch)
    params = {**SMALL, "epochs": 6}
    columns = PiLiDRegressor(**params).fit(X, y)
    sizes.clear()
    monkeypatch.setattr(shape_choice, "EMBEDDING_MIN_ROWS", len(X) + 1)
    below = PiLiDRegressor(deep_input="auto", **params).fit(X, y)
    np.testing.assert_array_equal(below.predict(X), columns.predict(X))
    assert "deep_input" not in below.shape_choice_
    assert sizes == [SMALL["n_bags"]] * 2  # both pair counts' full bags, as the columns' fit
    sizes.clear()
    monkeypatch.setattr(shape_choice, "EMBEDDING_MIN_ROWS", len(X))
    at = PiLiDRegressor(deep_input="auto", **params).fit(X, y)
    assert at.shape_choice_["deep_input"].tolist().count("embeddings") == 2
    assert sizes == [CHOICE_MEMBERS] * 4 + [SMALL["n_bags"] - CHOICE_MEMBERS]
    lever = with_levers(PiLiDRegressor)(deep_input="auto", deep_min_rows=len(X) + 1, **params)
    np.testing.assert_array_equal(lever.fit(X, y).predict(X), columns.predict(X))
