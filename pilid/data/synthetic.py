"""Synthetic data with known shapes (Section 4.1 of the paper), fully determined by a seed.

Steps (a)-(d) of Section 4.1:

(a) ``m`` random polynomials of degree 10 on [0, 1] are the true marginal value functions
    ``u_j`` of Eq. (1). Each is drawn in the orthonormal shifted-Legendre basis
    ``P~_k(x) = sqrt(2k+1) P_k(2x-1)``, k = 1..10, with coefficients ``a_jk ~ N(0, k^-4)``
    (smooth, yet of full degree), then rescaled to its variance share (below). With no constant
    term every ``u_j`` has mean exactly 0 on U[0, 1] (the shapes are centred), and its variance
    is ``sum_k a_jk^2``.
(b) ``N`` objects are drawn uniformly from [0, 1]^m.
(c) ``n_interactions`` interaction terms, each the product of ``interaction_order`` centred
    unit-variance random cubic polynomials of distinct features (the sets are drawn at random).
(d) The noiseless score is ``s(x) = sum_j u_j(x_j) + sum_k g_k(x)``. Regression:
    ``y = s + noise * eps``, eps ~ N(0, 1). Classification (Eq. (1) with U logistic): the latent
    ``z = s + noise * eps`` gives ``y ~ Bernoulli(sigmoid(logit_scale * z))``
    (``label="bernoulli"``, the default) or ``y = 1[z > 0]`` (``label="threshold"``).

Scaling: under independent U[0, 1] features all these terms are mutually uncorrelated, so
``Var s`` is the sum of their variances. Feature j's variance is proportional to a weight drawn from
U(0.5, 1.5) (so no feature has more than 3 times another's), the interaction terms share
``interaction_share`` of the variance equally, and the total is exactly 1 before noise.

The truth (functions, weights, interaction sets) depends only on ``seed`` and ``m``; the objects,
the noise and the label draws come from their own streams of the same seed, with the first ``N``
rows identical whatever the ``N`` (settings that differ in ``N`` share the truth and are nested).

``generator="legendre"`` (the default) is this generator; ``generator="demo"`` is the paper's
simulation as the authors' demo code generates it (raw monomials with U(-1, 1) coefficients,
features scaled per feature, products of products; :mod:`pilid.data.demo`), the one the
paper's simulation experiments use.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.polynomial import legendre
from scipy.special import expit

from pilid.data import _checks, demo
from pilid.data.dataset import Dataset
from pilid.errors import PilidError
from pilid.tasks import TASK_METRIC as METRICS
from pilid.tasks import TASKS

LABELS = ("bernoulli", "threshold")
#: ``generator=`` choices: this module's Legendre generator and the demo code's (pilid.data.demo).
GENERATORS = ("legendre", "demo")
#: ``n_interactions=None`` means this for the Legendre generator (``demo.default_pairs`` for demo).
LEGENDRE_INTERACTIONS = 5
#: The coefficient of P~_k has std k**-COEF_DECAY: smooth shapes that still use degree 10.
COEF_DECAY = 2.0
# Independent random streams spawned from the seed, by role (order fixed forever).
_STREAMS = ("coefficients", "weights", "interaction_sets", "interaction_factors", "objects",
            "noise", "labels")  # fmt: skip


def _streams(seed: int) -> dict[str, np.random.Generator]:
    children = np.random.SeedSequence(seed).spawn(len(_STREAMS))
    return {name: np.random.default_rng(child) for name, child in zip(_STREAMS, children)}


def _orthonormal_legendre(x: np.ndarray, coef: np.ndarray) -> np.ndarray:
    """``sum_k coef[..., k] * sqrt(2k+1) * P_k(2x - 1)``; ``coef[..., k]`` broadcasts with ``x``."""
    k = np.arange(coef.shape[-1])
    c = np.moveaxis(coef * np.sqrt(2 * k + 1), -1, 0)
    return legendre.legval(2.0 * x - 1.0, c, tensor=False)


@dataclass(frozen=True)
class TrueShapes:
    """The true marginal value functions and interaction terms of a synthetic dataset.

    ``coef[j, k]``: coefficient of ``P~_k`` in ``u_j`` (``coef[:, 0] == 0``: centred shapes).
    Interaction term ``k`` is ``interaction_weight[k] * prod_l h_kl(x[interaction_features[k,
    l]])`` with ``h_kl`` given by ``interaction_coef[k, l]`` in the same basis (unit variance).
    """

    coef: np.ndarray
    interaction_features: np.ndarray
    interaction_coef: np.ndarray
    interaction_weight: np.ndarray
    feature_names: tuple[str, ...]

    @property
    def m(self) -> int:
        """Number of features."""
        return self.coef.shape[0]

    @property
    def degree(self) -> int:
        """Degree of the Legendre expansions."""
        return self.coef.shape[1] - 1

    def _check(self, X) -> np.ndarray:
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2 or X.shape[1] != self.m:
            raise PilidError(
                f"X has shape {X.shape}; the true shapes need an (n, {self.m}) array of features"
            )
        return X

    def functions(self, X) -> np.ndarray:
        """True marginal values ``u_j(x_ij)`` (Eq. (1)), shape (n, m), original [0, 1] units.

        Each ``u_j`` has mean exactly 0 on U[0, 1], so these are also the centred shapes.
        """
        return _orthonormal_legendre(self._check(X), self.coef)

    def interaction_terms(self, X) -> np.ndarray:
        """Each interaction term's value, shape (n, n_interactions)."""
        X = self._check(X)
        if len(self.interaction_weight) == 0:
            return np.zeros((len(X), 0))
        factors = _orthonormal_legendre(X[:, self.interaction_features], self.interaction_coef)
        return factors.prod(axis=2) * self.interaction_weight

    def interactions(self, X) -> np.ndarray:
        """The interaction part ``u(x_1, ..., x_m)`` of Eq. (1), shape (n,)."""
        return self.interaction_terms(X).sum(axis=1)

    def score(self, X) -> np.ndarray:
        """The noiseless score ``sum_j u_j(x_j) + u(x)``, shape (n,) (unit variance)."""
        return self.functions(X).sum(axis=1) + self.interactions(X)

    def grid(self, n_points: int = 101) -> pd.DataFrame:
        """Tidy true shapes on an even grid of [0, 1]: columns ``feature``, ``x``, ``value``."""
        n_points = _checks.whole("n_points", n_points, 2)
        x = np.linspace(0.0, 1.0, n_points)
        values = self.functions(np.repeat(x[:, None], self.m, axis=1))
        return pd.DataFrame(
            {
                "feature": np.repeat(np.asarray(self.feature_names, dtype=object), n_points),
                "x": np.tile(x, self.m),
                "value": values.T.reshape(-1),
            }
        )

    def polynomials(self) -> list[legendre.Legendre]:
        """Each ``u_j`` as a numpy ``Legendre`` series on the domain [0, 1] (callable)."""
        k = np.arange(self.degree + 1)
        return [legendre.Legendre(c * np.sqrt(2 * k + 1), domain=[0.0, 1.0]) for c in self.coef]

    def variances(self) -> np.ndarray:
        """Exact variance of each ``u_j`` under U[0, 1], shape (m,)."""
        return (self.coef**2).sum(axis=1)

    def interaction_variances(self) -> np.ndarray:
        """Exact variance of each interaction term under U[0, 1]^m."""
        return self.interaction_weight**2


def _interaction_sets(rng: np.random.Generator, m: int, order: int, count: int) -> np.ndarray:
    """``count`` distinct sorted feature sets of size ``order``, drawn uniformly at random."""
    if count == 0:
        return np.zeros((0, order), dtype=np.int64)
    if math.comb(m, order) <= 200_000:
        every = np.array(list(itertools.combinations(range(m), order)), dtype=np.int64)
        return every[np.sort(rng.choice(len(every), size=count, replace=False))]
    chosen: dict[tuple[int, ...], None] = {}
    while len(chosen) < count:  # rejection sampling when the sets are too many to list
        chosen.setdefault(tuple(sorted(rng.choice(m, size=order, replace=False).tolist())), None)
    return np.array(sorted(chosen), dtype=np.int64)


def _legendre_only(generator: str, **options) -> None:
    """Reject options of the Legendre generator set away from their defaults for the demo's."""
    defaults = {"interaction_order": 2, "interaction_share": 0.2, "interaction_degree": 3}
    for name, value in options.items():
        if generator == "demo" and value != defaults[name]:
            raise PilidError(
                f"{name}={value!r} applies to generator=legendre only; drop it for "
                "generator=demo (whose products are set by n_interactions)"
            )


def make_true_shapes(
    m: int,
    seed: int = 0,
    n_interactions: int | None = LEGENDRE_INTERACTIONS,
    interaction_order: int = 2,
    interaction_share: float = 0.2,
    degree: int = 10,
    interaction_degree: int = 3,
    generator: str = "legendre",
) -> TrueShapes | demo.DemoTrueShapes:
    """Steps (a) and (c) of Section 4.1: the truth, from ``seed`` and ``m`` alone (not ``N``).

    ``generator="demo"``: the demo code's truth (:func:`pilid.data.demo.make_demo_truth`);
    ``n_interactions=None`` is each generator's default (5 here, ``demo.default_pairs(m)``).
    """
    generator = _checks.choice("generator", generator, GENERATORS)
    _legendre_only(
        generator,
        interaction_order=interaction_order,
        interaction_share=interaction_share,
        interaction_degree=interaction_degree,
    )
    if generator == "demo":
        return demo.make_demo_truth(m, seed, n_interactions, degree)
    if n_interactions is None:
        n_interactions = LEGENDRE_INTERACTIONS
    m = _checks.whole("m", m, 1)
    seed = _checks.whole("data_seed", seed, 0)
    n_interactions = _checks.whole("n_interactions", n_interactions, 0)
    degree = _checks.whole("degree", degree, 1, "(the paper: 10)")
    interaction_degree = _checks.whole("interaction_degree", interaction_degree, 1)
    interaction_share = _checks.real("interaction_share", interaction_share, 0.0, 0.95)
    if n_interactions:
        interaction_order = _checks.whole("interaction_order", interaction_order, 2)
        if interaction_order > m:
            raise PilidError(
                f"interaction_order={interaction_order} exceeds m={m}; use an order <= m"
            )
        possible = math.comb(m, interaction_order)
        if n_interactions > possible:
            raise PilidError(
                f"n_interactions={n_interactions} exceeds the {possible} distinct feature sets of "
                f"order {interaction_order} among m={m}; use at most {possible}"
            )
    rngs = _streams(seed)
    k = np.arange(1, degree + 1)
    raw = rngs["coefficients"].standard_normal((m, degree)) / k**COEF_DECAY
    raw /= np.linalg.norm(raw, axis=1, keepdims=True)  # unit variance each
    share = interaction_share if n_interactions else 0.0
    weights = rngs["weights"].uniform(0.5, 1.5, size=m)
    variances = weights / weights.sum() * (1.0 - share)
    coef = np.zeros((m, degree + 1))
    coef[:, 1:] = raw * np.sqrt(variances)[:, None]

    order = interaction_order if n_interactions else 2
    sets = _interaction_sets(rngs["interaction_sets"], m, order, n_interactions)
    ki = np.arange(1, interaction_degree + 1)
    factors = rngs["interaction_factors"].standard_normal(
        (n_interactions, order, interaction_degree)
    )
    factors /= ki
    factors /= np.linalg.norm(factors, axis=2, keepdims=True)
    interaction_coef = np.zeros((n_interactions, order, interaction_degree + 1))
    interaction_coef[..., 1:] = factors
    weight = np.full(n_interactions, math.sqrt(share / n_interactions) if n_interactions else 0.0)
    return TrueShapes(
        coef=coef,
        interaction_features=sets,
        interaction_coef=interaction_coef,
        interaction_weight=weight,
        feature_names=tuple(f"x{j}" for j in range(m)),
    )


def generate(
    N: int,
    m: int,
    task: str = "regression",
    n_interactions: int = 5,
    noise: float = 0.5,
    seed: int = 0,
    label: str = "bernoulli",
    interaction_order: int = 2,
    interaction_share: float = 0.2,
    logit_scale: float = 1.0,
    degree: int = 10,
    interaction_degree: int = 3,
) -> tuple[np.ndarray, np.ndarray, TrueShapes]:
    """Section 4.1's simulation: ``(X (N, m) in [0, 1], y, TrueShapes)``.

    Regression: ``y = s(x) + noise * eps`` (float64), so with ``noise=0``
    ``y == shapes.functions(X).sum(1) + shapes.interactions(X)`` exactly. Classification
    (int64 0/1): ``label="bernoulli"`` (default) draws ``y ~ Bernoulli(sigmoid(logit_scale * z))``
    with ``z = s(x) + noise * eps``; ``label="threshold"`` sets ``y = 1[z > 0]``.
    """
    N = _checks.whole("N", N, 1)
    task = _checks.choice("task", task, TASKS)
    label = _checks.choice("label", label, LABELS)
    noise = _checks.real("noise", noise, 0.0, hint="(the standard deviation of the noise)")
    logit_scale = _checks.real("logit_scale", logit_scale, 0.0)
    shapes = make_true_shapes(
        m, seed, n_interactions, interaction_order, interaction_share, degree, interaction_degree
    )
    rngs = _streams(int(seed))
    X = rngs["objects"].random((N, shapes.m))
    score = shapes.functions(X).sum(axis=1) + shapes.interactions(X)
    eps = rngs["noise"].standard_normal(N)
    latent = score + noise * eps if noise > 0 else score
    if task == "regression":
        return X, latent.astype(np.float64), shapes
    if label == "threshold":
        y = latent > 0
    else:
        y = rngs["labels"].random(N) < expit(logit_scale * latent)
    return X, y.astype(np.int64), shapes


def load_synthetic(
    N: int = 2000,
    m: int = 10,
    task: str = "regression",
    n_interactions: int | None = None,
    noise: float = 0.5,
    data_seed: int = 0,
    label: str = "bernoulli",
    interaction_order: int = 2,
    interaction_share: float = 0.2,
    logit_scale: float = 1.0,
    degree: int = 10,
    interaction_degree: int = 3,
    generator: str = "legendre",
) -> Dataset:
    """``generate`` (or, with ``generator="demo"``, :func:`pilid.data.demo.generate_demo`, the
    demo code's simulation of Section 4.1) wrapped as a :class:`Dataset` (features
    ``x0..x{m-1}``, left unscaled). ``n_interactions=None``: the generator's default (5 for
    legendre, ``20 * m`` products for demo); ``label`` for demo: threshold, median or bernoulli.
    """
    generator = _checks.choice("generator", generator, GENERATORS)
    if n_interactions is None and generator == "legendre":
        n_interactions = LEGENDRE_INTERACTIONS
    params = {
        "N": N,
        "m": m,
        "task": task,
        "n_interactions": n_interactions,
        "noise": noise,
        "data_seed": data_seed,
        "label": label,
        "interaction_order": interaction_order,
        "interaction_share": interaction_share,
        "logit_scale": logit_scale,
        "degree": degree,
        "interaction_degree": interaction_degree,
        "generator": generator,
    }
    if generator == "demo":
        _legendre_only(
            generator,
            interaction_order=interaction_order,
            interaction_share=interaction_share,
            interaction_degree=interaction_degree,
        )
        X, y, shapes = demo.generate_demo(
            N,
            m,
            task=task,
            n_interactions=n_interactions,
            noise=noise,
            seed=data_seed,
            label=label,
            logit_scale=logit_scale,
            degree=degree,
        )
        params["n_interactions"] = shapes.n_interactions
        return _dataset(task, X, y, shapes, params)
    X, y, shapes = generate(
        N,
        m,
        task=task,
        n_interactions=n_interactions,
        noise=noise,
        seed=data_seed,
        label=label,
        interaction_order=interaction_order,
        interaction_share=interaction_share,
        logit_scale=logit_scale,
        degree=degree,
        interaction_degree=interaction_degree,
    )
    return _dataset(task, X, y, shapes, params)


def _dataset(task: str, X: np.ndarray, y: np.ndarray, shapes, params: dict) -> Dataset:
    names = list(shapes.feature_names)
    return Dataset(
        name="synthetic",
        task=task,
        metric=METRICS[task],
        X=pd.DataFrame(X, columns=names),
        y=y,
        feature_names=names,
        categorical=[],
        true_shapes=shapes,
        standardize_target=False,
        info={"scale_features": False, "generator": params},
    )
