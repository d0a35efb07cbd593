"""Shape fidelity (beyond the paper) and recovery of known additive shapes."""

import numpy as np
import pytest

from pilid.data.synthetic import generate
from pilid.errors import PilidError
from pilid.estimators.pilid import PiLiDRegressor
from pilid.inspection.fidelity import estimator_fidelity, shape_fidelity


def test_shape_fidelity_is_centred_r2_per_feature():
    rng = np.random.default_rng(0)
    true = rng.normal(size=(100, 3))
    true[:, 2] = 4.0  # constant truth: undefined R^2, left out of the mean
    learned = true + 7.0  # offsets do not matter (both sides are centred)
    learned[:, 1] = 0.5 * (true[:, 1] - true[:, 1].mean())
    r2, mean = shape_fidelity(learned, true)
    f1 = true[:, 1] - true[:, 1].mean()
    expected1 = 1 - ((0.5 * f1 - f1) ** 2).sum() / (f1**2).sum()  # = 0.75
    np.testing.assert_allclose(r2[:2], [1.0, expected1])
    assert np.isnan(r2[2]) and mean == pytest.approx((1.0 + expected1) / 2)
    # `scale` divides the truth: a model on a standardised target compares to truth / sd
    r2s, _ = shape_fidelity(true[:, :2] / 2.0, true[:, :2], scale=2.0)
    np.testing.assert_allclose(r2s, 1.0)
    with pytest.raises(PilidError, match="same rows"):
        shape_fidelity(learned[:, :2], true)


def test_learned_contributions_recover_known_additive_shapes():
    X, y, shapes = generate(N=1500, m=3, n_interactions=0, noise=0.1, seed=1)
    est = PiLiDRegressor(
        gamma=10, hidden_layers=(16, 8), epochs=60, batch_size=64, random_state=0, device="cpu"
    ).fit(X[:1200], y[:1200])
    r2, mean = estimator_fidelity(est, X[1200:], shapes.functions(X[1200:]))
    assert (r2 >= 0.9).all(), r2
    assert mean >= 0.9
