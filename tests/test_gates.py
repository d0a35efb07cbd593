"""Hard-concrete L0 gates and the gated blocks, checked against independent computations."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from pilid.errors import PilidError
from pilid.nn.blocks import GatedBlocks
from pilid.nn.gates import (
    BETA,
    GAMMA,
    ZETA,
    HardConcreteGates,
    deterministic_gates,
    expected_order,
    nit_order_penalty,
    pilib_order_penalty,
    prob_block_nonempty,
    prob_nonzero,
    sample_gates,
)


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def _logit(p):
    return math.log(p / (1.0 - p))


LOG_ALPHAS = torch.tensor([-4.0, -2.0, -1.0, 0.0, 0.5, 1.5, 3.0], dtype=torch.float64)


def test_sampled_gates_match_closed_form_probabilities():
    """Monte-Carlo P(z != 0) and P(z == 1) vs the hard-concrete CDF (Louizos et al. 2018)."""
    n = 40_000
    gen = torch.Generator().manual_seed(0)
    z = sample_gates(LOG_ALPHAS, n=n, generator=gen).numpy()
    assert z.shape == (n, LOG_ALPHAS.numel())
    assert z.min() >= 0.0 and z.max() <= 1.0
    la = LOG_ALPHAS.numpy()
    # Independent derivation, with s = sigmoid((L + log_alpha)/beta), L standard logistic:
    # z > 0 <=> s > -gamma/(zeta-gamma);  z = 1 <=> s >= (1-gamma)/(zeta-gamma).
    p_open = _sigmoid(la - BETA * _logit(-GAMMA / (ZETA - GAMMA)))
    p_one = _sigmoid(la - BETA * _logit((1.0 - GAMMA) / (ZETA - GAMMA)))
    tol_open = 4.5 * np.sqrt(p_open * (1 - p_open) / n) + 1e-4
    tol_one = 4.5 * np.sqrt(p_one * (1 - p_one) / n) + 1e-4
    np.testing.assert_array_less(np.abs((z > 0).mean(0) - p_open), tol_open)
    np.testing.assert_array_less(np.abs((z == 1).mean(0) - p_one), tol_one)
    # The library's closed form is the same number.
    np.testing.assert_allclose(prob_nonzero(LOG_ALPHAS).numpy(), p_open, rtol=1e-12)
    # The gates are continuous in between: a real share of draws lies strictly inside (0, 1).
    inside = ((z > 0) & (z < 1)).mean(0)
    assert (inside[1:-1] > 0.05).all()


def test_eval_gates_are_deterministic_and_draw_no_random_numbers():
    gates = HardConcreteGates(4, 5, seeds=[1, 2], init_prob=0.6, init_std=1.0)
    gates.eval()
    state = torch.get_rng_state()
    first = gates()
    second = gates()
    assert torch.equal(torch.get_rng_state(), state)
    assert gates._generators == {}  # no per-trial noise generator was even created
    assert torch.equal(first, second)
    la = gates.log_alpha.detach().numpy()
    expected = np.clip(_sigmoid(la) * (ZETA - GAMMA) + GAMMA, 0.0, 1.0)
    np.testing.assert_allclose(first.detach().numpy(), expected, rtol=1e-6, atol=1e-7)
    # Training mode draws from the trials' own generators (not the global one), anew each call.
    gates.train()
    a, b = gates(), gates()
    assert torch.equal(torch.get_rng_state(), state)
    assert len(gates._generators["cpu"]) == 2
    assert not torch.equal(a, b)


def test_a_trial_does_not_depend_on_the_batch_it_is_trained_in():
    """Trial t's initial weights, gates and gate noise depend on seeds[t] alone (bit for bit);
    its output equals the lone trial's within float rounding (a batched matmul over T=2 may
    round differently from T=1, which is why the runner trains in fixed blocks)."""
    pair = GatedBlocks(4, seeds=[7, 11], n_blocks=3, layers=[5])
    alone = GatedBlocks(4, seeds=[11], n_blocks=3, layers=[5])
    for (name, p2), (_, p1) in zip(pair.named_parameters(), alone.named_parameters()):
        assert torch.equal(p2[1:], p1), name
    pair.train()
    alone.train()
    for _ in range(3):
        assert torch.equal(pair.gates()[1:], alone.gates())
    x = torch.randn(1, 10, 4)
    pair.eval()
    alone.eval()
    torch.testing.assert_close(pair(x.expand(2, 10, 4))[1:], alone(x), rtol=1e-5, atol=1e-6)
    # Different seeds give different trials.
    assert not torch.equal(pair.weights[0][0], pair.weights[0][1])


def test_init_prob_sets_the_probability_of_an_open_gate():
    for scale in (1.0, 10.0):
        gates = HardConcreteGates(3, 4, seeds=[0], init_prob=0.7, init_std=0.0, lr_scale=scale)
        np.testing.assert_allclose(gates.prob_nonzero().detach().numpy(), 0.7, rtol=1e-6)
        np.testing.assert_allclose(gates.expected_order().detach().numpy(), 4 * 0.7, rtol=1e-6)
        torch.testing.assert_close(gates.log_alpha, scale * gates.loc)


def test_gradients_reach_log_alpha_through_sampled_gates():
    gates = HardConcreteGates(2, 3, seeds=[0], init_prob=0.5)
    gates.train()
    gates().sum().backward()
    assert gates.loc.grad is not None and gates.loc.grad.abs().sum() > 0


def test_expected_order_and_nonempty_probability():
    torch.manual_seed(1)
    la = torch.randn(2, 3, 4, dtype=torch.float64)
    p = _sigmoid(la.numpy() - BETA * math.log(-GAMMA / ZETA))
    np.testing.assert_allclose(expected_order(la).numpy(), p.sum(-1), rtol=1e-12)
    # P(block non-empty) by Monte Carlo over independent gates.
    n = 20_000
    z = sample_gates(la, n=n, generator=torch.Generator().manual_seed(5)).numpy()
    mc = (z > 0).any(-1).mean(0)
    exact = prob_block_nonempty(la).numpy()
    np.testing.assert_array_less(np.abs(mc - exact), 4.5 * np.sqrt(exact * (1 - exact) / n) + 1e-3)


def test_order_penalties_match_their_formulas():
    torch.manual_seed(2)
    la = torch.randn(3, 5, 6, dtype=torch.float64) * 2
    p = _sigmoid(la.numpy() - BETA * math.log(-GAMMA / ZETA))
    k = p.sum(-1)
    excess = np.maximum(k.max(-1) - 2, 0.0)
    n_active = np.maximum((1 - np.prod(1 - p, axis=-1)).sum(-1), 1.0)
    pilib = excess + 0.3 * (k - 2).sum(-1) / n_active
    nit = excess + 0.3 * k.mean(-1)
    np.testing.assert_allclose(pilib_order_penalty(la, 2, 0.3).numpy(), pilib, rtol=1e-10)
    np.testing.assert_allclose(nit_order_penalty(la, 2, 0.3).numpy(), nit, rtol=1e-10)
    # The PiLiB denominator is held constant: d/d log_alpha of the second term is
    # lambda0 / n_active * dp/dlog_alpha (the first term vanishes for K large).
    la.requires_grad_(True)
    pilib_order_penalty(la, 100, 0.3).sum().backward()
    dp = p * (1 - p)
    np.testing.assert_allclose(la.grad.numpy(), 0.3 / n_active[:, None, None] * dp, rtol=1e-8)


def test_freeze_fixes_binary_masks_per_trial_and_caps_the_order():
    gates = HardConcreteGates(3, 6, seeds=[4, 5], init_prob=0.5, init_std=2.0)
    la = gates.log_alpha.detach().clone()
    gates.freeze(torch.tensor([True, False]), max_order=2)
    open_ = (deterministic_gates(la) > 0).numpy()
    mask = gates.mask.numpy()
    assert gates.frozen.tolist() == [True, False]
    # Trial 0: the (at most) two open gates with the largest log_alpha of each block.
    for b in range(3):
        cand = [j for j in np.argsort(-la[0, b].numpy(), kind="stable") if open_[0, b, j]][:2]
        expected = np.zeros(6)
        expected[cand] = 1.0
        np.testing.assert_array_equal(mask[0, b], expected)
    # Frozen trial: mask in training mode too, no gradient; the other trial keeps sampling.
    gates.train()
    z = gates()
    np.testing.assert_array_equal(z[0].detach().numpy(), mask[0])
    z.sum().backward()
    assert gates.loc.grad[0].abs().sum() == 0
    assert gates.loc.grad[1].abs().sum() > 0
    np.testing.assert_array_equal(gates.expected_order()[0].detach().numpy(), mask[0].sum(-1))
    # Freezing all later keeps trial 0's mask.
    gates.freeze()
    np.testing.assert_array_equal(gates.mask[0].numpy(), mask[0])
    assert bool(gates.frozen.all())


@pytest.mark.parametrize(
    "kwargs",
    [
        {"init_prob": 1.5},
        {"gamma": 0.1},
        {"zeta": 0.9},
        {"beta": 0.0},
        {"lr_scale": 0.0},
    ],
)
def test_bad_gate_settings_raise(kwargs):
    with pytest.raises(PilidError):
        HardConcreteGates(2, 3, seeds=[0], **kwargs)


def _reference_blocks(module: GatedBlocks, x: np.ndarray, z: np.ndarray) -> np.ndarray:
    """Loop-over-trials-and-blocks NumPy forward pass, (T, n, B)."""
    T, n, _ = x.shape
    out = np.zeros((T, n, module.n_blocks))
    ws = [w.detach().numpy() for w in module.weights]
    bs = [b.detach().numpy() for b in module.biases]
    wy = module.out_weight.detach().numpy()
    for t in range(T):
        for i in range(module.n_blocks):
            h = x[t] * z[t, i]
            for w, b in zip(ws, bs):
                h = np.maximum(h @ w[t, i] + b[t, i], 0.0)
            out[t, :, i] = h @ wy[t, i]
    return out


def test_blocks_match_a_loop_reference_and_respect_their_gates():
    torch.manual_seed(5)
    T, B, m, n = 2, 4, 5, 30
    module = GatedBlocks(m, seeds=[0, 1], n_blocks=B, layers=[6, 3]).double()
    with torch.no_grad():
        for b in module.biases:
            b.normal_(0, 0.1)
        module.out_bias.fill_(0.5)
    x = torch.randn(T, n, m, dtype=torch.float64)
    z = (torch.rand(T, B, m) > 0.5).double()
    got = module.block_outputs(x, z).detach().numpy()
    np.testing.assert_allclose(got, _reference_blocks(module, x.numpy(), z.numpy()), atol=1e-12)
    total = module(x, z).detach().numpy()
    np.testing.assert_allclose(total, got.sum(-1) + 0.5, atol=1e-12)
    # A block ignores every feature whose gate is closed.
    x2 = x.clone()
    x2[..., 0] += 3.0
    changed = module.block_outputs(x2, z).detach().numpy()
    closed = z[:, :, 0].numpy() == 0
    diff = np.abs(changed - got).max(axis=1)  # (T, B)
    assert closed.any() and (~closed).any()
    assert np.all(diff[closed] == 0)
    assert np.any(diff[~closed] > 0)


def test_blocks_reject_badly_shaped_input_and_layers():
    module = GatedBlocks(3, seeds=[0], n_blocks=2, layers=[4])
    with pytest.raises(PilidError):
        module(torch.zeros(1, 5, 4))
    for bad in ([0], [], [2.5], "abc"):
        with pytest.raises(PilidError):
            GatedBlocks(3, seeds=[0], layers=bad)
    with pytest.raises(PilidError):
        GatedBlocks(3, seeds=[0], n_blocks=0)
