"""The GA baseline: global additive explanation by model distillation (Tan et al. 2018).

An MLP teacher (the paper's, `pilid.estimators.pilid.MLPRegressor` / `MLPClassifier`) is trained on
the data, then an additive student sum_j f_j(x_j) is fit to the teacher's outputs (logits for
classification): EBM without pairs (`pilid.baselines.ga2m`) or a GAM (`pilid.baselines.gam`). The
student's prediction is the output.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin, clone
from sklearn.utils._param_validation import HasMethods
from sklearn.utils.validation import check_is_fitted, has_fit_parameter, validate_data

from pilid.baselines.ga2m import GA2MBase, GA2MRegressor
from pilid.baselines.gam import GAMBase, GAMRegressor
from pilid.errors import PilidError
from pilid.estimators.pilid import MLPBase, MLPClassifier, MLPRegressor
from pilid.models.inputs import binary_target
from pilid.models.outputs import LogitClassifierMixin
from pilid.models.params import N_JOBS, Choice, ParamError, validate_params
from pilid.models.sample_weight import check_weights
from pilid.nn.mlp import PAPER_HIDDEN_LAYERS

__all__ = ["GAClassifier", "GARegressor"]


class GABase(BaseEstimator):
    """Global additive explanation by model distillation (Tan et al. 2018).

    1. Teacher: an MLP (`pilid.estimators.pilid.MLPRegressor` / `MLPClassifier`, the paper's MLP:
       `hidden_layers`, `sigma`, `reg`, `lam` and the training settings below), or a copy of any
       scikit-learn estimator passed as `teacher`, trained on (X, y).
    2. Student: the additive model g(x) = b + sum_j g_j(x_j), fit by least squares to the teacher's
       output on the same training rows: its prediction for regression, its logit for
       classification. `student="ebm"`: bagged boosted trees per feature (EBM with
       `interactions=0`, `student_outer_bags` bags; Tan et al.'s tree-based student);
       `student="gam"`: penalised cubic splines (`GAMRegressor`, `student_n_splines`).
    3. Output: the student's prediction (regression) or sigmoid of the student logit.

    After `fit`: `teacher_`, `student_`, and `fidelity_`, the R^2 of the student against the
    teacher's outputs on the training data.

    ``fit(X, y, sample_weight)`` trains the teacher with the weights (its own
    ``fit(..., sample_weight)``; a teacher whose fit takes none is refused, `PilidError`) and
    fits the student to the teacher's outputs with the same weights (`GA2MRegressor` or
    `GAMRegressor` pass them to their library); `fidelity_` is then the weighted R^2.
    """

    _TEACHER_KEYS = (
        "hidden_layers",
        "sigma",
        "reg",
        "lam",
        "epochs",
        "batch_size",
        "lr",
        "optimizer",
        "patience",
        "val_fraction",
        "random_state",
        "device",
        "verbose",
        "categorical_features",
    )

    _STUDENTS = ("ebm", "gam")
    _parameter_constraints = {
        **{key: MLPBase._parameter_constraints[key] for key in _TEACHER_KEYS},
        "student": [Choice(_STUDENTS)],
        "student_outer_bags": GA2MBase._parameter_constraints["outer_bags"],
        "student_n_splines": GAMBase._parameter_constraints["n_splines"],
        "n_jobs": N_JOBS,
        "teacher": [HasMethods(["fit"]), None],
    }

    def __init__(
        self,
        hidden_layers: Sequence[int] = PAPER_HIDDEN_LAYERS,
        sigma: float = 0.05,
        reg: str = "l2",
        lam: float = 1e-5,
        epochs: int = 100,
        batch_size: int = 256,
        lr: float = 0.005,
        optimizer: str = "adam",
        patience: int | None = 10,
        val_fraction: float = 0.1,
        student: str = "ebm",
        student_outer_bags: int = 8,
        student_n_splines: int = 20,
        n_jobs: int = -1,
        random_state: int | None = None,
        device: str = "auto",
        verbose: bool = False,
        categorical_features=None,
        teacher=None,
    ):
        self.hidden_layers = hidden_layers
        self.sigma = sigma
        self.reg = reg
        self.lam = lam
        self.epochs = epochs
        self.batch_size = batch_size
        self.lr = lr
        self.optimizer = optimizer
        self.patience = patience
        self.val_fraction = val_fraction
        self.student = student
        self.student_outer_bags = student_outer_bags
        self.student_n_splines = student_n_splines
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.device = device
        self.verbose = verbose
        self.categorical_features = categorical_features
        self.teacher = teacher

    def _make_teacher(self, classification: bool):
        if self.teacher is not None:
            return clone(self.teacher)
        cls = MLPClassifier if classification else MLPRegressor
        accepted = set(cls._get_param_names())
        kwargs = {k: getattr(self, k) for k in self._TEACHER_KEYS if k in accepted}
        return cls(**kwargs)

    def _check_params(self) -> None:
        """Check the teacher's and both students' hyper-parameters before anything trains."""
        validate_params(self)
        if self.teacher is None:
            self._make_teacher(classification=False)._check_params()
        students = (
            (
                GA2MRegressor(
                    interactions=0, outer_bags=self.student_outer_bags, n_jobs=self.n_jobs
                ),
                {"outer_bags": "student_outer_bags"},
            ),
            (GAMRegressor(n_splines=self.student_n_splines), {"n_splines": "student_n_splines"}),
        )
        for student, keys in students:
            try:
                student._check_params()
            except ParamError as error:
                raise error.renamed(keys.get(error.key, error.key)) from None

    def _make_student(self):
        if self.student == "ebm":
            return GA2MRegressor(
                interactions=0,
                outer_bags=self.student_outer_bags,
                n_jobs=self.n_jobs,
                random_state=self.random_state,
                categorical_features=self.categorical_features,
            )
        if self.student == "gam":
            return GAMRegressor(
                n_splines=self.student_n_splines, categorical_features=self.categorical_features
            )
        raise ParamError(
            "student",
            self.student,
            "use ebm or gam",
            f"student={self.student!r} is unknown; use 'ebm' or 'gam'",
        )

    def _distil(self, X: np.ndarray, y: np.ndarray, classification: bool, sample_weight=None):
        self._check_params()  # before the teacher trains
        weights = check_weights(self, sample_weight, X)
        student = self._make_student()
        teacher = self._make_teacher(classification)
        if weights is None:
            teacher.fit(X, y)
        elif has_fit_parameter(teacher, "sample_weight"):
            teacher.fit(X, y, sample_weight=weights)
        else:
            raise PilidError(
                f"{type(self).__name__}: its teacher {type(teacher).__name__} takes no "
                "sample_weight in fit; pass a teacher that does (e.g. teacher=Ridge()) or drop "
                "sample_weight"
            )
        target = _teacher_logit(teacher, X) if classification else teacher.predict(X)
        target = np.asarray(target, dtype=np.float64).ravel()
        if not np.all(np.isfinite(target)):
            raise PilidError(
                "the GA teacher's outputs on the training data are not finite; the MLP diverged, "
                "lower lr or raise lam"
            )
        student.fit(X, target, sample_weight=weights)
        fitted = student.predict(X)
        if weights is None:
            spread = np.var(target)
            error = np.mean((fitted - target) ** 2)
        else:  # the weighted R^2
            spread = np.average(
                (target - np.average(target, weights=weights)) ** 2, weights=weights
            )
            error = np.average((fitted - target) ** 2, weights=weights)
        self.teacher_ = teacher
        self.student_ = student
        self.fidelity_ = float(1.0 - error / spread) if spread > 0 else 1.0
        return self

    def _student_output(self, X) -> np.ndarray:
        check_is_fitted(self, "student_")
        X = validate_data(self, X, reset=False, dtype=np.float64)
        return np.asarray(self.student_.predict(X), dtype=np.float64)


def _teacher_logit(teacher, X: np.ndarray) -> np.ndarray:
    """The teacher's logit for the positive class (decision_function, else logit of P(y=1))."""
    if hasattr(teacher, "decision_function"):
        z = np.asarray(teacher.decision_function(X), dtype=np.float64)
        if z.ndim == 1:
            return z
    p = np.asarray(teacher.predict_proba(X), dtype=np.float64)[:, -1]
    p = np.clip(p, 1e-6, 1.0 - 1e-6)
    return np.log(p) - np.log1p(-p)


#: The parameters and fitted attributes of both GAs (numpydoc, appended to their docstrings).
_GA_DOC = """

    Parameters
    ----------
    hidden_layers : tuple of int, default=(100, 200, 400, 400, 200, 100)
        The teacher MLP's layer sizes (the paper's MLP).
    sigma : float or None, default=0.05
        Std of the teacher's Gaussian weight init (None: He-normal).
    reg, lam : default="l2", 1e-5
        The teacher's penalty lam * Omega.
    epochs, batch_size, lr, optimizer, patience, val_fraction : default=100, 256, 0.005, \
"adam", 10, 0.1
        The teacher's training, as in `pilid.estimators.pilid.MLPRegressor`.
    student : {"ebm", "gam"}, default="ebm"
        The additive student: bagged boosted trees per feature (EBM without pairs; Tan et al.'s
        tree-based student) or penalised cubic splines (`GAMRegressor`).
    student_outer_bags : int, default=8
        The EBM student's bags.
    student_n_splines : int, default=20
        The GAM student's basis size.
    n_jobs : int, default=-1
        The EBM student's processes.
    random_state : int or None, default=None
        Seeds the teacher and the student.
    device : str, default="auto"
        The teacher's device.
    verbose : bool, default=False
        The teacher's progress bar.
    categorical_features : sequence of int or str, boolean mask or None, default=None
        Categorical columns.
    teacher : estimator or None, default=None
        Any scikit-learn estimator to distil instead of the MLP (a copy is fitted).

    Attributes
    ----------
    teacher_ : estimator
        The fitted teacher.
    student_ : estimator
        The fitted additive student (its prediction is the model's).
    fidelity_ : float
        R^2 of the student against the teacher's outputs on the training rows.
    n_features_in_ : int
        Number of input columns.
"""


class GARegressor(RegressorMixin, GABase):  # noqa: D101 (its __doc__ is assigned)
    __doc__ = (
        "GA by distillation (Tan et al. 2018), regression: the student fits the teacher's output."
        "\n\n    See `GABase` for the steps." + _GA_DOC
    )

    def fit(self, X, y, sample_weight=None):
        """Fit the teacher on (X, y), then distil it into the additive student, both with
        ``sample_weight`` (n,) if given (see `GABase`). Returns self."""
        X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=True)
        return self._distil(X, np.asarray(y, dtype=np.float64), False, sample_weight)

    def predict(self, X) -> np.ndarray:
        """The student's additive prediction."""
        return self._student_output(X)


class GAClassifier(LogitClassifierMixin, GABase):  # noqa: D101 (its __doc__ is assigned)
    __doc__ = (
        "GA by distillation (Tan et al. 2018), classification: the student fits the teacher's "
        "logits.\n\n    `decision_function` is the student's additive logit; "
        "`predict_proba[:, 1]` its sigmoid."
        + _GA_DOC
        + "    classes_ : ndarray of shape (2,)\n        The two class labels.\n"
    )

    def fit(self, X, y, sample_weight=None):
        """Fit the teacher on (X, y), then distil its logits into the student, both with
        ``sample_weight`` (n,) if given (see `GABase`). Returns self."""
        X, y = validate_data(self, X, y, dtype=np.float64)
        return self._distil(X, binary_target(self, y), True, sample_weight)

    def decision_function(self, X) -> np.ndarray:
        """The student's additive logit of `classes_[1]`."""
        return self._student_output(X)
