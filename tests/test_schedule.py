"""The levers ``schedule="additive_first"`` and ``lr_decay`` of the studies (`studies._levers`;
beyond the paper, measured and not adopted) and the trainer's ``keep_best`` and ``lr_scale``.

The additive stage is the additive-only model: with the MLP frozen at its zero output, its
epoch losses equal those of ``hidden_layers=None`` on the same seed (same start, same
mini-batches, Adam element by element). A phase with ``keep_best`` keeps the weights it
entered with when none of its epochs beats them on the validation rows, and a phase without
it does not. ``schedule="joint"`` is Algorithm 1, unchanged."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

from pilid import PiLiDRegressor
from pilid.errors import PilidError
from pilid.train.trainer import EnsembleData, Phase, TrainConfig, train_ensemble
from studies._levers import PiLiDLeverClassifier as LeverClassifier
from studies._levers import PiLiDLeverRegressor as LeverRegressor


def _additive_data(n=600, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, 4))
    y = np.abs(X[:, 0]) * 2 + np.where(X[:, 1] > 0, 1.0, -0.5) + 0.5 * X[:, 2]
    return X, y + 0.1 * rng.normal(size=n)


def test_the_additive_stage_trains_exactly_the_additive_only_model():
    X, y = _additive_data()
    common = dict(n_bags=1, epochs=15, patience=None, random_state=3, gamma=6)
    staged = LeverRegressor(schedule="additive_first", **common).fit(X, y)
    alone = PiLiDRegressor(hidden_layers=None, **common).fit(X, y)
    losses = np.array(staged.history_["train_loss"])
    assert len(losses) == 30 and staged.history_["phase"][-1] == "joint"  # 15 epochs each
    np.testing.assert_allclose(losses[:15], alone.history_["train_loss"], rtol=1e-5)
    assert not np.allclose(losses[15:], losses[14])  # the joint stage trains on


def test_joint_is_the_default_and_algorithm_1_unchanged():
    X, y = _additive_data(n=300)
    common = dict(n_bags=1, epochs=5, random_state=0)
    default = PiLiDRegressor(**common).fit(X, y)
    joint = LeverRegressor(schedule="joint", **common).fit(X, y)
    assert LeverRegressor().schedule == "joint" and "schedule" not in PiLiDRegressor().get_params()
    assert set(default.history_["phase"]) == {"train"}
    np.testing.assert_array_equal(default.predict(X), joint.predict(X))


def test_without_hidden_layers_additive_first_is_joint():
    X, y = _additive_data(n=300)
    common = dict(n_bags=1, epochs=5, random_state=0, hidden_layers=None)
    a = LeverRegressor(schedule="additive_first", **common).fit(X, y)
    b = PiLiDRegressor(**common).fit(X, y)
    np.testing.assert_array_equal(a.predict(X), b.predict(X))


def test_additive_first_fits_a_classifier_with_early_stopping_in_both_stages():
    X, y = _additive_data(n=500)
    model = LeverClassifier(schedule="additive_first", n_bags=2, epochs=30, random_state=0)
    model.fit(X, y > np.median(y))
    phases = [set(h["phase"]) for h in model.history_]
    assert all(p <= {"additive", "joint"} and "additive" in p for p in phases)
    assert model.score(X, y > np.median(y)) > 0.8


def test_an_unknown_schedule_is_one_line():
    with pytest.raises(PilidError, match="schedule") as info:
        LeverRegressor(schedule="sequential").fit(*_additive_data(n=50))
    assert "\n" not in str(info.value) and "additive_first" in str(info.value)


class _Line(nn.Module):
    """out = a + b x for T=1 trial (the trainer's model protocol: forward(x, phi) -> (T, B))."""

    def __init__(self):
        super().__init__()
        self.a = nn.Parameter(torch.zeros(1, 1))
        self.b = nn.Parameter(torch.zeros(1, 1))

    def forward(self, x, phi=None):
        return self.a + self.b * x[..., 0]


def _line_fit(keep_best: bool):
    """Phase 1 fits the intercept (b frozen at 0); phase 2 frees b, which the training rows
    (slope 1) pull away from 0 while the validation rows (slope 0) are best at b = 0."""
    g = torch.Generator().manual_seed(0)
    x = torch.rand(1, 200, 1, generator=g) * 2 - 1
    x_val = torch.rand(1, 100, 1, generator=g) * 2 - 1
    data = EnsembleData(x=x, y=2.0 + x[..., 0], x_val=x_val, y_val=torch.full((1, 100), 2.0))
    phases = [
        Phase("intercept", 200, frozen=("b",)),
        Phase("slope", 50, frozen=("a",), keep_best=keep_best),
    ]
    model = _Line()
    cfg = TrainConfig(task="regression", lr=0.05, batch_size=50, patience=5)
    train_ensemble(model, data, phases, cfg, seeds=[0])
    return float(model.a.detach()), float(model.b.detach())


def test_keep_best_leaves_a_phase_with_its_entry_weights_when_no_epoch_beats_them():
    a_kept, b_kept = _line_fit(keep_best=True)
    a_free, b_free = _line_fit(keep_best=False)
    assert b_kept == 0.0  # every epoch with b != 0 is worse on the validation rows
    assert a_kept == a_free and abs(a_kept - 2.0) < 0.05  # phase 1's intercept in both
    assert b_free > 0.01  # without keep_best the phase keeps its own best epoch, b > 0


def _line_steps(lr: float, lr_scale: float, epochs: int = 8):
    """The line of `_Line` fitted for `epochs` epochs (no early stopping) in one phase."""
    g = torch.Generator().manual_seed(1)
    x = torch.rand(1, 120, 1, generator=g) * 2 - 1
    data = EnsembleData(x=x, y=0.5 - 1.5 * x[..., 0])
    model = _Line()
    cfg = TrainConfig(task="regression", lr=lr, batch_size=30, patience=None)
    phase = Phase("only", epochs, early_stopping=False, lr_scale=lr_scale)
    train_ensemble(model, data, [phase], cfg, seeds=[0])
    return torch.cat([model.a.detach().ravel(), model.b.detach().ravel()])


def test_a_phase_lr_scale_is_the_step_at_the_scaled_learning_rate():
    scaled = _line_steps(lr=0.04, lr_scale=0.25)
    direct = _line_steps(lr=0.01, lr_scale=1.0)
    torch.testing.assert_close(scaled, direct, rtol=0, atol=1e-6)
    assert not torch.allclose(scaled, _line_steps(lr=0.04, lr_scale=1.0), atol=1e-3)


@pytest.mark.slow
@pytest.mark.parametrize("lr, beaten", [(0.05, True), (0.005, False)])
def test_lr_decay_refines_from_the_best_weights_and_keeps_only_what_beats_them(lr, beaten):
    X, y = _additive_data(n=500)
    common = dict(n_bags=1, epochs=40, patience=3, random_state=2, gamma=6, lr=lr)
    plain = PiLiDRegressor(**common).fit(X, y)
    refined = LeverRegressor(lr_decay=0.1, **common).fit(X, y)
    phases = refined.history_["phase"]
    n_train = phases.count("train")
    assert n_train == plain.n_epochs_ and phases[n_train:] == ["refine"] * (len(phases) - n_train)
    assert len(phases) > n_train  # the refining phase ran
    # the first phase is the plain fit's, epoch by epoch
    np.testing.assert_allclose(
        refined.history_["val_loss"][:n_train], plain.history_["val_loss"], rtol=1e-5
    )
    best_before = min(plain.history_["val_loss"])
    best_after = min(refined.history_["val_loss"][n_train:])
    # at lr=0.05 a tenth of it beats the plain fit's best; at 0.005 no refining epoch does
    assert (best_after < best_before) == beaten
    if beaten:  # the refined weights are kept
        assert np.abs(refined.predict(X) - plain.predict(X)).max() > 1e-3
    else:  # the plain fit's best weights are kept
        np.testing.assert_allclose(refined.predict(X), plain.predict(X), rtol=1e-5, atol=1e-6)


def test_lr_decay_outside_0_1_is_one_line():
    with pytest.raises(PilidError, match="lr_decay") as info:
        LeverRegressor(lr_decay=2.0).fit(*_additive_data(n=50))
    assert "\n" not in str(info.value)
