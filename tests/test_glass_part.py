"""The lever ``keep="glass"`` of the studies (`studies._levers.glass_part`; screened): the hybrid
trains, and its MLP is dropped with its main effect kept in the shapes. Checked against what the
module was before: the shapes (the explanation's terms) are the hybrid's, the output is the
table's (the sum of the terms and the pair terms), and what the output lost is the MLP's pure
interaction: without pair terms the purified deep part exactly, and with them one orthogonal to
every function of Phi (an independent least squares on dense Phi).
"""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch

import studies._levers.estimators as lever_estimators
from pilid import PiLiDRegressor
from pilid.nn.piecewise import phi_dense
from studies._levers import with_levers
from studies._levers.glass_part import _rows


def _interacting(n=900, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, 3))
    X[:40, 2] = np.nan  # missing values: their own contribution moves too
    y = np.sin(2 * X[:, 0]) + 2 * X[:, 0] * X[:, 1] + 0.1 * rng.normal(size=n)
    return X, y


def _spied(monkeypatch) -> dict:
    """What the lever's `keep_glass_part_` sees: the member's module before and after, its
    data."""
    seen = {}
    keep = lever_estimators.keep_glass_part_

    def spy(module, prep):
        seen["before"], seen["prep"] = copy.deepcopy(module), prep
        keep(module, prep)
        seen["after"] = module

    monkeypatch.setattr(lever_estimators, "keep_glass_part_", spy)
    return seen


@pytest.mark.parametrize("pairs", [0, 2])
def test_the_glass_part_keeps_the_shapes_and_loses_only_the_mlps_interaction(pairs, monkeypatch):
    X, y = _interacting()
    seen = _spied(monkeypatch)
    cls = with_levers(PiLiDRegressor)
    cls(hidden_layers=(16,), n_bags=1, pairs=pairs, epochs=30, random_state=0, keep="glass").fit(
        X, y
    )
    before, after, prep = seen["before"], seen["after"], seen["prep"]
    x, phi = _rows(prep, torch.float32)
    with torch.no_grad():
        t0, d0 = before.decompose(x, phi)
        t1, d1 = after.decompose(x, phi)
        out0, out1 = before(x, phi)[0].numpy(), after(x, phi)[0].numpy()
        mlp = before.deep(x) if pairs == 0 else before.deep.deep(x)
    torch.testing.assert_close(t1, t0, atol=2e-5, rtol=0)  # the hybrid's shapes
    table = t1.sum(2) + (0 if d1 is None else d1)
    np.testing.assert_allclose(out1, table[0].numpy(), atol=2e-5)  # the prediction is the table
    lost = out0 - out1
    assert np.std(mlp[0].numpy()) > 1e-3  # the MLP carried something to lose
    if pairs == 0:  # what was dropped is the purified deep part, exactly
        assert after.deep is None
        np.testing.assert_allclose(lost, d0[0].numpy(), atol=2e-5)
        return
    dense = phi_dense(phi[0][0], phi[1][0], before.additive.feature[0]).double().numpy()
    design = np.column_stack([np.ones(len(lost)), dense, phi[2][0].double().numpy()])
    coef = np.linalg.lstsq(design, lost, rcond=None)[0]
    explained = np.var(design @ coef) / np.var(lost)
    assert explained < 0.02  # no main effect left in what was dropped


def test_keep_hybrid_is_pilids_fit():
    X, y = _interacting(300)
    small = dict(hidden_layers=(8,), n_bags=2, pairs=0, epochs=5, random_state=0)
    ours = with_levers(PiLiDRegressor)(**small, keep="hybrid").fit(X, y)
    np.testing.assert_array_equal(ours.predict(X), PiLiDRegressor(**small).fit(X, y).predict(X))


def test_a_retired_variant_refuses_to_refit_in_one_line_naming_its_commit():
    from studies import hybrid_screen

    for variant, commit in hybrid_screen.RETIRED.items():
        assert variant in hybrid_screen.VARIANTS  # its rows are still described
        with pytest.raises(SystemExit, match=f"check out commit {commit}") as caught:
            hybrid_screen.make_variant(variant, "regression", 0, 3)
        assert "\n" not in str(caught.value)
