"""Shape fidelity of PiLiD on synthetic data with known main effects (beyond the paper).

    python -m studies fidelity_study                 # N=5000, m=10, T=5, the paper's MLP
    python -m studies fidelity_study --quick         # tiny smoke run

Data: `pilid.data.synthetic.generate` (Section 4.1: degree-10 polynomial main effects on
U[0, 1] features plus random pairwise interactions, noise 0.5). For each `init` (lstsq, gaussian)
and `purify` (off, on), T trials (seeds 0..T-1, trained as one batched ensemble; the same seed
trains identically with and without purification, so the pairs differ only by it) are scored on
held-out rows:

* fidelity: R^2 of the learned centred contribution against the true centred main effect,
  per feature (`pilid.inspection.fidelity.shape_fidelity`); mean and minimum over trials x features,
  and the share of (trial, feature) shapes with R^2 < 0.8 ("unfaithful");
* deep main effect: the share of the prediction's variance that the deep part carries as a
  piecewise-linear main effect (its least-squares projection on Phi), i.e. what purification moves;
* test MSE (purification leaves predictions unchanged, so it is reported once per init).
"""

from __future__ import annotations

import argparse

import numpy as np
from sklearn.base import clone

from pilid.data.synthetic import generate
from pilid.estimators.pilid import PiLiDRegressor
from pilid.inspection.fidelity import estimator_fidelity
from pilid.models.fitting import fit_batched
from pilid.nn.mlp import PAPER_HIDDEN_LAYERS
from pilid.nn.piecewise import phi_numpy


def deep_main_share(est, X) -> float:
    """Variance share of the deep part's projection on [1, Phi] in the model's prediction."""
    _, _, deep = est.decompose(X)
    phi = np.column_stack([np.ones(len(X)), phi_numpy(X, est.knots_)])
    proj = phi @ np.linalg.lstsq(phi, deep, rcond=None)[0]
    return float(np.var(proj) / np.var(est.predict(X)))


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--N", type=int, default=5000)
    ap.add_argument("--m", type=int, default=10)
    ap.add_argument("--T", type=int, default=5)
    ap.add_argument("--gamma", type=int, default=10)
    ap.add_argument("--epochs", type=int, default=100)
    ap.add_argument("--hidden", type=int, nargs="*", default=list(PAPER_HIDDEN_LAYERS))
    ap.add_argument("--interactions", type=int, default=5)
    ap.add_argument("--noise", type=float, default=0.5)
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args(argv)
    if args.quick:
        args.N, args.m, args.T, args.epochs, args.hidden = 800, 4, 2, 5, [16]
        args.interactions = 2
    X, y, shapes = generate(
        args.N, args.m, n_interactions=args.interactions, noise=args.noise, seed=0
    )
    n_fit = int(0.8 * args.N)
    X_test, y_test = X[n_fit:], y[n_fit:]
    true_test = shapes.functions(X_test)
    print(
        f"synthetic regression N={args.N} m={args.m} interactions={args.interactions} "
        f"noise={args.noise}; PiLiD gamma={args.gamma} hidden={args.hidden} T={args.T}; "
        f"fidelity on {len(X_test)} held-out rows"
    )
    print(
        f"{'init':<9}{'purify':<8}{'fid mean':>9}{'fid min':>9}{'unfaithful':>11}"
        f"{'deep main':>10}{'test MSE':>10}"
    )
    for init in ("lstsq", "gaussian"):
        for purify in (False, True):
            template = PiLiDRegressor(
                gamma=args.gamma,
                init=init,
                purify=purify,
                hidden_layers=tuple(args.hidden),
                epochs=args.epochs,
                device="cpu",
                knots="uniform",  # the paper's protocol: one model, uniform knots, lam 1e-5
                lam=1e-5,
                n_bags=1,
            )
            ests = [clone(template).set_params(random_state=t) for t in range(args.T)]
            Xs, ys = [], []
            for t in range(args.T):
                idx = np.random.default_rng(t).permutation(n_fit)  # own order per trial
                Xs.append(X[:n_fit][idx])
                ys.append(y[:n_fit][idx])
            fit_batched(ests, Xs, ys)
            r2 = np.array([estimator_fidelity(e, X_test, true_test)[0] for e in ests])
            share = np.mean([deep_main_share(e, X_test) for e in ests])
            mse = np.mean([np.mean((e.predict(X_test) - y_test) ** 2) for e in ests])
            print(
                f"{init:<9}{str(purify):<8}{np.nanmean(r2):>9.3f}{np.nanmin(r2):>9.3f}"
                f"{np.mean(r2 < 0.8):>11.2f}{share:>10.3f}{mse:>10.4f}",
                flush=True,
            )


if __name__ == "__main__":
    main()
