"""The lever ``lam_choice = f`` of the studies (`studies._levers`; screened, not adopted): the
``pairs="auto"`` candidates are trained at the rule's weight of Eq. 11's penalty (``lam_``) and
at f times it, and the inner validation keeps the best of the four.

Checked against independent computations: each listed loss is recomputed from a fit with the
candidate's pairs and lam fixed, scored as the choice scores (the held-out rows by the whole
bag, each training row by the members that missed it); the chosen model predicts what that
fit predicts; at the lever's neutral value (None) the fit is PiLiD's, bit for bit.
"""

from __future__ import annotations

import numpy as np
import pytest
from _choice import choice_loss, pair_data  # tests/_choice.py

import pilid.models.fitting as fitting
from pilid import PiLiDRegressor
from studies._levers import with_levers
from studies.dev_suite import CANDIDATE_BASE

SMALL = dict(hidden_layers=(8,), n_bags=3, random_state=0, device="cpu", epochs=12, pairs="auto")
SMALL.update(CANDIDATE_BASE)  # the deep input the levers were measured on ("auto" refuses them)


@pytest.mark.slow
@pytest.mark.parametrize("reg", ["l2", "l1"])
def test_the_four_candidates_are_their_own_fits_and_the_best_is_kept(reg, monkeypatch):
    X, y = pair_data(1200)
    small = {**SMALL, "reg": reg}
    rule = PiLiDRegressor(**small).fit(X, y).lam_
    sizes = []  # the ensembles the engine trains: a weight of Omega per trial, not per ensemble
    fit_ensemble = fitting.fit_ensemble
    monkeypatch.setattr(
        fitting,
        "fit_ensemble",
        lambda spec, preps, *a, **k: sizes.append(len(preps)) or fit_ensemble(spec, preps, *a, **k),
    )
    model = with_levers(PiLiDRegressor)(**small, lam_choice=0.05).fit(X, y)
    assert sizes == [6, 6]  # per pair count: 2 weights x 3 members
    monkeypatch.undo()
    table = model.shape_choice_
    np.testing.assert_allclose(table["lam"], [rule, rule, 0.05 * rule, 0.05 * rule])
    assert table["pairs"].tolist()[0] == 0 and table["pairs"].tolist()[1] > 0
    assert table["pairs"].tolist()[2:] == table["pairs"].tolist()[:2]

    fits = [
        PiLiDRegressor(**{**small, "pairs": int(k), "lam": float(lam)}).fit(X, y)
        for k, lam in zip(table["pairs"], table["lam"])
    ]
    losses = [choice_loss(fit, X, y) for fit in fits]
    np.testing.assert_allclose(table["val_loss"], losses, rtol=1e-5)
    best = int(np.argmin(losses))
    assert table["chosen"].tolist() == [i == best for i in range(4)]
    assert model.lam_ == pytest.approx(table["lam"][best])
    # the four train as one ensemble per pair count (a weight of Omega per trial): the same fit
    # to float32's rounding, not to the bit
    np.testing.assert_allclose(model.predict(X), fits[best].predict(X), rtol=1e-5, atol=1e-5)


def test_without_the_lever_the_fit_is_pilids():
    X, y = pair_data(600)
    small = {**SMALL, "epochs": 4}
    lever = with_levers(PiLiDRegressor)(**small).fit(X, y)
    plain = PiLiDRegressor(**small).fit(X, y)
    np.testing.assert_array_equal(lever.predict(X), plain.predict(X))
    assert "lam" not in lever.shape_choice_


def test_a_diverged_trial_trains_again_with_its_own_weights(monkeypatch):
    """Only trials held smooth train again (with the additive part's steps scaled by its
    pieces), each at its own roughness and Omega weights, not the ensemble's first ones."""
    import pilid.train.batched as batched
    from pilid.errors import TrainingDivergedWarning

    X, y = pair_data(600)
    seen = []  # per ensemble trained: its roughness and Omega weights, trials, piece steps
    reasons = batched.divergence_reasons

    def one_diverged(*args, **kwargs):
        out = list(reasons(*args, **kwargs))
        if len(seen) == 1:  # the first ensemble (its call is seen): every trial said to diverge
            out = ["said to diverge"] * len(out)
        return out

    fit_ensemble = batched.fit_ensemble

    def spying(spec, preps, device, piece_steps=False, starts=None):
        seen.append((spec.config.smoothness, spec.config.lam, len(preps), piece_steps))
        return fit_ensemble(spec, preps, device, piece_steps, starts)

    monkeypatch.setattr(batched, "divergence_reasons", one_diverged)
    monkeypatch.setattr(batched, "fit_ensemble", spying)
    monkeypatch.setattr(fitting, "fit_ensemble", spying)
    small = {**SMALL, "n_bags": 2, "epochs": 3, "pairs": 0, "smoothness": "auto"}
    with pytest.warns(TrainingDivergedWarning):  # rescued by the second training
        with_levers(PiLiDRegressor)(**small, lam_choice=0.05).fit(X, y)
    (smooth, lam, size, _), (again_smooth, again_lam, again_size, again_steps) = seen[:2]
    # the first ensemble: 2 roughness weights x 2 Omega weights x 2 members
    assert size == 8 and len(set(smooth)) == 2 and len(set(lam)) == 2
    held = [t for t in range(size) if smooth[t] > 0]
    assert again_steps and again_size == len(held)
    assert again_smooth == pytest.approx(smooth[held[0]])  # one weight: all held alike
    assert again_lam == tuple(lam[t] for t in held)
