"""What the training engine (`pilid.train.batched.fit_ensemble`) works on: `Prepared`, one
trial's data ready to stack (encoded X, target, split, scaling, Phi's knots); and `Trainable`,
the hooks an estimator gives `pilid.models.fitting.fit_batched` (its data, its `TrainSpec`, what
to keep after training), which calls them; the engine never does.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pilid.nn.piecewise import Knots
from pilid.train.spec import TrainSpec


@dataclass
class Prepared:
    """One trial's data, ready to stack: encoded X, target, split, scaling and knots."""

    X: np.ndarray
    target: np.ndarray
    train_idx: np.ndarray
    val_idx: np.ndarray
    seed: int
    x_mean: np.ndarray
    x_scale: np.ndarray
    knots: Knots | None
    #: Classification with K > 2 classes: the class whose logit this trial holds (its
    #: least-squares start codes that class +1, the others -1); None otherwise.
    class_index: int | None = None
    #: Sample weights of the rows of X (statistics, validation loss); None: unweighted.
    weight: np.ndarray | None = None
    #: Sample weights of the rows `train_idx` (training loss, least-squares start,
    #: purification); None: unit weights (unweighted, or a bag member's bootstrap rows).
    train_weight: np.ndarray | None = None
    #: Missing values: per feature, did the fit rows of X hold NaN? Such a feature gets a
    #: learned contribution for NaN (the additive part) and a missing indicator (the deep
    #: part's input, `deep_input`); None: no feature had missing values.
    missing: np.ndarray | None = None
    #: Categorical features the deep part sees one-hot (`deep_input`): pairs (feature j, its
    #: levels, the sorted codes seen in fit); None: every feature enters as one standardised
    #: column (its code, for a categorical feature).
    onehot: tuple[tuple[int, np.ndarray], ...] | None = None
    #: Explicit pair terms (`pilid.nn.pairs`): the feature indices of each pair, (K, 2), added
    #: to the deep part on the grid of `knots`; None: none (the paper's model).
    pairs: np.ndarray | None = None
    #: Numeric features the deep part sees piecewise-linearly encoded (`deep_input`, on bin
    #: edges such as `pilid.train.encoding.quantile_bins`): pairs (feature j, its bin edges);
    #: None: each as one standardised column (the estimators of the library set none).
    bins: tuple[tuple[int, np.ndarray], ...] | None = None


class Trainable:
    """What an estimator gives to be trained by `pilid.models.fitting.fit_batched`
    (`pilid.estimators.neural.NeuralEstimator` has it all); the engine itself
    (`pilid.train.batched.fit_ensemble`) reads only a `TrainSpec` and the `Prepared` data.

    Besides `get_params` (scikit-learn: trials of one batch share their hyper-parameters but
    `random_state`) and ``device`` (where the ensemble trains, `pilid.device.resolve_device`):

    * ``_prepare(X, y) -> Prepared``: the checked, encoded trial data (resets fitted state);
      ``_prepare(X, y, sample_weight=w)`` when the trial has sample weights (`Prepared`'s
      ``weight`` and ``train_weight``).
    * ``_train_spec() -> TrainSpec``: what its trials train (`pilid.train.spec.TrainSpec`: the
      schedule, the optimiser and penalties, the deep part's builder, the additive part's start,
      purification, monotone signs), read once its data is prepared.
    * ``_finalize(prep)``, ``_after_fit()``: fitted attributes once ``module_`` (the trial's
      T=1 module, on the CPU, `pilid.train.spec.TrainedTrial`) is set.
    * ``_members(prep) -> list[(Trainable, Prepared)]``: what trains for this estimator (default
      itself on its own data; a bag, `pilid.models.bagging`, gives its members, each with its
      own rows and seed, and they train as trials of the same ensemble); ``_collect()`` runs
      once they are all fitted (default nothing); ``_more_members()`` then gives what trains
      next, its ``_collect()`` running again once that is fitted (default nothing; e.g. what an
      estimator decided on the units it trained first asks for more).
    """

    def _prepare(self, X, y) -> Prepared:
        raise NotImplementedError

    def _train_spec(self) -> TrainSpec:
        raise NotImplementedError

    def _finalize(self, prep: Prepared) -> None:
        return None

    def _after_fit(self) -> None:
        return None

    def _members(self, prep: Prepared) -> list:
        return [(self, prep)]

    def _collect(self) -> None:
        return None

    def _more_members(self) -> list:
        return []


def _missing_of(prep: Prepared) -> np.ndarray:
    """`Prepared.missing` as one bool per feature (all False when None)."""
    if prep.missing is None:
        return np.zeros(prep.X.shape[1], dtype=bool)
    return np.asarray(prep.missing, dtype=bool)
