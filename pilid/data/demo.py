"""The paper's simulation (Section 4.1) as the authors' public demo code generates it.

Section 4.1 describes the data in four steps: (a) the true marginal value functions are ``m``
random polynomials of degree 10, (b) ``N`` objects with features in [0, 1], (c) random feature
interactions are added to the marginal values, (d) the target is the sum of the marginal values
and the interactions (regression), or a logistic function of it assigns the labels 0/1
(classification). The paper gives no more detail; the authors' demo repository
(``guomengzhuo/Demo_PILIB_model``, ``src/data_process.py``: ``generate_attribute_value``,
``marginalvalue_with_interaction`` and the two classification variants, called from
``src/simulation.py``) fills it in, and this module follows it:

(a) ``u_j(x) = sum_{k=1..10} a_jk x^k`` with ``a_jk ~ U(-1, 1)``: raw monomials, no constant
    term, not centred or normalised (as in the demo).
(b) ``x_ij = f_j * v_ij`` with ``v_ij ~ U(0, 1)`` and a per-feature factor ``f_j ~ U(0, 1)``
    drawn once (as in the demo), so feature j lies in [0, f_j].
(c) ``n_interactions`` products are appended one at a time to the matrix whose first ``m``
    columns are the marginal values ``u_j(x_j)``: product k multiplies two columns drawn
    uniformly, with replacement, from the ``m + k`` columns already there (marginal values and
    earlier products), so squares and products of products occur (as in the demo).
(d) The noiseless score ``s`` is the sum of all columns. Regression: ``y = s + noise * eps``,
    eps ~ N(0, 1) (the demo: noise 0.5). Classification, ``label=``: ``"threshold"``
    ``y = 1[s + noise * eps >= 0]`` (the demo's ``sigmoid(.) >= 0.5``, the paper's "logistic
    function"); ``"median"`` splits the noiseless ``s`` at its median into equal halves (the
    demo's other classification function: the lower ``ceil(N/2)`` scores are class 0);
    ``"bernoulli"`` draws ``y ~ Bernoulli(sigmoid(logit_scale * (s + noise * eps)))``.

The one unknown is the number of products: the paper does not give it and the demo script uses 900
for m=50. ``n_interactions=None`` takes :func:`default_pairs`, ``20 * m``, chosen from linear
regression alone: for m = 10..50 and candidate counts ``round(c * m)``, c on a grid 0.5..20, linear
regression's test MSE (the median over data seeds 0-39 of the mean over two 80/20 splits) at N =
5000, 10000, 15000, 20000 is compared with the paper's linear-regression rows (Table 1 and the
supplementary N=5000/10000/15000 tables); the pooled rule takes the c with the least sum of squared
differences over m and N. Its output::

     m  pairs  ours20k  paper20k  ours_allN  paper_allN  seed0_20k  q25_20k  q75_20k   range_20k
    10     73    0.278     0.352      0.278       0.429      0.281    0.260    0.319 0.274-0.278
    20    286    0.346     0.395      0.346       0.451      0.294    0.294    0.481 0.326-0.346
    30    600    0.385     0.287      0.386       0.427      0.385    0.333    0.457 0.366-0.385
    40    800    0.441     0.393      0.446       0.465      0.393    0.374    0.585 0.412-0.441
    50    262    0.482     0.418      0.486       0.500      0.451    0.412    0.578 0.450-0.506
    (ours: the linear MSE's median over data seeds at the best count; 20k: N=20000;
     allN: mean over the N rows; seed0: data seed 0; q25/q75: quartiles over data seeds;
     range_20k: from the lowest to the highest candidate count's MSE at N=20000)
    pooled loss (sum over m and N of squared differences) by c:
      0.5: 0.446, 0.7: 0.442, 0.98: 0.439, 1.37: 0.443, 1.91: 0.440, 2.67: 0.434
      3.74: 0.430, 5.23: 0.421, 7.31: 0.416, 10.23: 0.415, 14.3: 0.413, 20: 0.408
    pooled rule: pairs = round(20.0 * m) -> m=10: 200, m=20: 400, m=30: 600, m=40: 800, m=50: 1000

The count is weakly identified: over 0.5m..20m products the typical linear MSE at N=20000 moves by
at most 0.06 (``range_20k``) while it varies far more between random truths (the interquartile range
over data seeds at m=50 is 0.41-0.58), and the pooled loss only falls from 0.446 to 0.408. Averaged
over the four N our linear MSE lies below the paper's for every m (``ours_allN < paper_allN``; the
paper's N=5000 table is high, 0.48-0.72), and it rises with the count until it levels off above ~10m
products (later products are mostly products of products of values below 1, hence small), so the
loss is least at the grid's upper end, c = 20, on that plateau: a one-off run of the calibration's
linear MSE at 10m/20m/40m products (N=20000, same seeds and splits) gives 0.278/0.278/0.278 (m=10),
0.385/0.385/0.385 (m=30) and 0.498/0.506/0.504 (m=50), so a larger grid would not move the data
much. The demo's 900 for m=50 is 18m, on the same plateau.

Where this differs from the demo (on purpose): every random quantity has its own stream of
``data_seed`` (the demo draws everything from one global stream after the objects, so its
truth changes with ``N``); here the truth (factors, coefficients, pairs) depends only on
``data_seed``, ``m``, ``degree`` and the number of products, the first ``N`` objects are the
same whatever ``N``, and the first ``k`` products are the same whatever ``n_interactions``.
The demo's classification functions add no products unless asked (``pair_num=None``); here
both tasks use the same rule.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.special import expit

from pilid.data import _checks
from pilid.data.dataset import TASKS
from pilid.errors import PilidError

LABELS = ("threshold", "median", "bernoulli")
DEGREE = 10
#: Appended products per feature by default, from the calibration above.
PAIRS_PER_FEATURE = 20
# Independent random streams of the seed, by role (order fixed forever); the entropy is
# (data_seed, _TAG) so that they differ from the Legendre generator's streams.
_TAG = 0x64656D6F  # "demo"
_STREAMS = ("factors", "coefficients", "pairs", "objects", "noise", "labels")


def _streams(seed: int) -> dict[str, np.random.Generator]:
    children = np.random.SeedSequence([seed, _TAG]).spawn(len(_STREAMS))
    return {name: np.random.default_rng(child) for name, child in zip(_STREAMS, children)}


def default_pairs(m: int) -> int:
    """The number of appended products for ``m`` features when ``n_interactions`` is None:
    ``PAIRS_PER_FEATURE * m`` (20m; calibrated on the paper's linear-regression rows)."""
    return PAIRS_PER_FEATURE * _checks.whole("m", m, 1)


@dataclass(frozen=True)
class DemoTrueShapes:
    """The truth of the demo simulation: marginal value functions and appended products.

    ``factors[j]``: feature j lies in [0, factors[j]]. ``coef[j, k]``: coefficient of ``x^k`` in
    ``u_j`` (``coef[:, 0] == 0``). ``pairs[k] = (a, b)``: product k is column a times column b of
    the matrix ``[u_1(x_1), ..., u_m(x_m), product_0, ..., product_{k-1}]`` (``a, b < m + k``).
    """

    factors: np.ndarray
    coef: np.ndarray
    pairs: np.ndarray
    feature_names: tuple[str, ...]

    @property
    def m(self) -> int:
        """Number of features."""
        return self.coef.shape[0]

    @property
    def degree(self) -> int:
        """Degree of the polynomials u_j."""
        return self.coef.shape[1] - 1

    @property
    def n_interactions(self) -> int:
        """Number of interaction products."""
        return len(self.pairs)

    def _check(self, X) -> np.ndarray:
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2 or X.shape[1] != self.m:
            raise PilidError(
                f"X has shape {X.shape}; the true shapes need an (n, {self.m}) array of features"
            )
        return X

    def functions(self, X) -> np.ndarray:
        """True marginal values ``u_j(x_ij)`` (Eq. (1)), shape (n, m), in the data's units.

        Not centred: ``u_j(0) = 0`` (raw monomials, as in the demo code).
        """
        X = self._check(X)
        values = np.zeros_like(X)
        for k in range(self.degree, 0, -1):  # Horner's rule, over the 10 degrees
            values = (values + self.coef[:, k]) * X
        return values

    def columns(self, X) -> np.ndarray:
        """The demo's matrix: marginal values then the products, shape (n, m + n_interactions)."""
        X = self._check(X)
        out = np.empty((len(X), self.m + self.n_interactions))
        out[:, : self.m] = self.functions(X)
        for k, (a, b) in enumerate(self.pairs):
            np.multiply(out[:, a], out[:, b], out=out[:, self.m + k])
        return out

    def interaction_terms(self, X) -> np.ndarray:
        """Each appended product's value, shape (n, n_interactions)."""
        return self.columns(X)[:, self.m :]

    def interactions(self, X) -> np.ndarray:
        """The interaction part ``u(x_1, ..., x_m)`` of Eq. (1): the sum of the products, (n,)."""
        return self.interaction_terms(X).sum(axis=1)

    def score(self, X) -> np.ndarray:
        """The noiseless score ``sum_j u_j(x_j) + u(x)``, shape (n,)."""
        return self.functions(X).sum(axis=1) + self.interactions(X)

    def orders(self) -> np.ndarray:
        """Marginal values multiplied in each product, repeats counted (2: a plain pair)."""
        order = np.ones(self.m + self.n_interactions, dtype=np.int64)
        for k, (a, b) in enumerate(self.pairs):
            order[self.m + k] = order[a] + order[b]
        return order[self.m :]

    def feature_sets(self) -> list[tuple[int, ...]]:
        """The distinct features each product depends on (sorted feature indices)."""
        sets: list[frozenset[int]] = [frozenset([j]) for j in range(self.m)]
        for a, b in self.pairs:
            sets.append(sets[a] | sets[b])
        return [tuple(sorted(s)) for s in sets[self.m :]]

    def grid(self, n_points: int = 101) -> pd.DataFrame:
        """Tidy true shapes on an even grid of each feature's range [0, factors[j]]:
        columns ``feature``, ``x``, ``value``."""
        n_points = _checks.whole("n_points", n_points, 2)
        x = np.linspace(0.0, 1.0, n_points)[:, None] * self.factors
        values = self.functions(x)
        return pd.DataFrame(
            {
                "feature": np.repeat(np.asarray(self.feature_names, dtype=object), n_points),
                "x": x.T.reshape(-1),
                "value": values.T.reshape(-1),
            }
        )

    def polynomials(self) -> list[np.polynomial.Polynomial]:
        """Each ``u_j`` as a numpy ``Polynomial`` in the data's units (callable)."""
        return [np.polynomial.Polynomial(c) for c in self.coef]


def make_demo_truth(
    m: int, seed: int = 0, n_interactions: int | None = None, degree: int = DEGREE
) -> DemoTrueShapes:
    """Steps (a) and (c) of Section 4.1 as in the demo: factors, coefficients and pairs.

    Depends on ``seed``, ``m``, ``degree`` and ``n_interactions`` only (not ``N``); the first
    ``k`` pairs are the same for every ``n_interactions >= k``.
    """
    m = _checks.whole("m", m, 1)
    seed = _checks.whole("data_seed", seed, 0)
    degree = _checks.whole("degree", degree, 1, "(the paper: 10)")
    if n_interactions is None:
        n_interactions = default_pairs(m)
    n_interactions = _checks.whole(
        "n_interactions", n_interactions, 0, "(products appended; null: the calibrated rule)"
    )
    rngs = _streams(seed)
    factors = rngs["factors"].uniform(0.0, 1.0, size=m)
    coef = np.zeros((m, degree + 1))
    coef[:, 1:] = rngs["coefficients"].uniform(-1.0, 1.0, size=(m, degree))
    # Product k draws its two columns uniformly from the m + k columns there: nested in k.
    width = m + np.arange(n_interactions)
    u = rngs["pairs"].random((n_interactions, 2))
    pairs = np.minimum(np.floor(u * width[:, None]).astype(np.int64), width[:, None] - 1)
    return DemoTrueShapes(
        factors=factors,
        coef=coef,
        pairs=pairs,
        feature_names=tuple(f"x{j}" for j in range(m)),
    )


def median_labels(score: np.ndarray) -> np.ndarray:
    """The demo's median split: the ``ceil(N/2)`` lowest scores are class 0, the rest class 1
    (ties in ``score`` broken by position), so the classes are equal halves."""
    score = np.asarray(score)
    order = np.argsort(score, kind="stable")
    y = np.zeros(len(score), dtype=np.int64)
    y[order[math.ceil(len(score) / 2) :]] = 1
    return y


def generate_demo(
    N: int,
    m: int,
    task: str = "regression",
    n_interactions: int | None = None,
    noise: float = 0.5,
    seed: int = 0,
    label: str = "threshold",
    logit_scale: float = 1.0,
    degree: int = DEGREE,
) -> tuple[np.ndarray, np.ndarray, DemoTrueShapes]:
    """Section 4.1's simulation as in the demo code: ``(X (N, m), y, DemoTrueShapes)``.

    ``X[:, j]`` lies in [0, factors[j]]. Regression: ``y = s(x) + noise * eps`` (float64), so
    with ``noise=0`` ``y == shapes.functions(X).sum(1) + shapes.interactions(X)`` exactly.
    Classification (int64 0/1): ``label`` as in the module docstring.
    """
    N = _checks.whole("N", N, 1)
    task = _checks.choice("task", task, TASKS)
    label = _checks.choice("label", label, LABELS)
    noise = _checks.real("noise", noise, 0.0, hint="(the standard deviation of the noise)")
    logit_scale = _checks.real("logit_scale", logit_scale, 0.0)
    shapes = make_demo_truth(m, seed, n_interactions, degree)
    rngs = _streams(int(seed))
    X = rngs["objects"].random((N, shapes.m)) * shapes.factors
    score = shapes.score(X)
    if not np.all(np.isfinite(score)):
        raise PilidError(
            f"the demo generator overflowed with n_interactions={shapes.n_interactions} for "
            f"m={shapes.m}; use fewer products"
        )
    if task == "classification" and label == "median":
        return X, median_labels(score), shapes
    eps = rngs["noise"].standard_normal(N)
    latent = score + noise * eps if noise > 0 else score
    if task == "regression":
        return X, latent.astype(np.float64), shapes
    if label == "threshold":
        y = latent >= 0
    else:
        y = rngs["labels"].random(N) < expit(logit_scale * latent)
    return X, y.astype(np.int64), shapes
