"""Labels of the report: metric, model and data-set names as the paper writes them, the row and
column orders of its tables, and LaTeX escaping of a label."""

from __future__ import annotations

import pandas as pd

from pilid.tasks import LOWER_IS_BETTER as TASK_LOWER_IS_BETTER
from pilid.tasks import METRIC_LABELS, TASK_METRIC  # noqa: F401 - TASK_METRIC re-exported

#: Metric headers: the tasks' metrics (`pilid.tasks`) and the shape-fidelity R^2.
METRIC_NAMES = {**METRIC_LABELS, "r2": "R^2"}
LOWER_IS_BETTER = {**TASK_LOWER_IS_BETTER, "r2": False}

#: Row order of the paper's tables (Tables 1 and 3 share it): PiLiD, PiLiB, MLP, NIT, SVM, RF,
#: linear, GA, GAM, GA2M (then, not in the paper: EBM with its own defaults, PiLiD and PiLiB with
#: the library's defaults, today's peers); within a model, gamma ascending.
MODEL_ORDER = (
    *("pilid", "pilib", "mlp", "nit", "svm", "rf", "linear", "ga", "gam", "ga2m"),
    *("ebm", "pilid_lib", "pilib_lib"),
    *("aplr", "lightgbm", "realmlp", "tabm"),
)
#: Each built-in model's row label (`model_label` also knows the classification label of
#: `linear`); a model of the user's own config directory is labelled by its config name.
MODEL_LABELS = {
    "pilid": "PiLiD",
    "pilid_lib": "PiLiD (library defaults)",  # not in the paper: the library's defaults
    "pilib_lib": "PiLiB (library defaults)",  # not in the paper (Table 3+)
    "mlp": "MLP",
    "pilib": "PiLiB",
    "nit": "NIT",
    "svm": "SVM (rbf kernel)",
    "rf": "Random Forest",
    "linear": "Linear Regression",
    "gam": "GAM",
    "ga2m": "GA2M",
    "ebm": "EBM (InterpretML defaults)",  # not in the paper: a stronger glass box
    "ga": "GA",
    # today's peers (Table 3+; not in the paper)
    "lightgbm": "LightGBM",
    "aplr": "APLR",
    "realmlp": "RealMLP",
    "tabm": "TabM",
}
#: Where a model's classification row has another name than its regression row.
CLASSIFICATION_LABELS = {"linear": "Logistic Regression"}
ITALIC_MODELS = ("PiLiD", "PiLiB", "NIT")  # the paper sets these in italics
#: Column order and headers of Table 3.
DATASET_ORDER = ("bike", "bank", "spambase", "skill")
DATASET_LABELS = {
    "bike": "bike sharing",
    "bank": "bank marketing",
    "spambase": "spambase",
    "skill": "skill",
}
INIT_ORDER = ("lstsq", "gaussian")


_LATEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}


def latex_escape(text: str) -> str:
    """``text`` with LaTeX's special characters escaped."""
    return "".join(_LATEX_SPECIAL.get(ch, ch) for ch in str(text))


def model_label(model: str, gamma=None, task: str | None = None, with_gamma: bool = True) -> str:
    """The paper's row label: ``PiLiD-5``, ``SVM (rbf kernel)``, ``Logistic Regression``..."""
    label = MODEL_LABELS.get(model, str(model))
    if task == "classification":
        label = CLASSIFICATION_LABELS.get(model, label)
    if with_gamma and gamma is not None and not pd.isna(gamma):
        label = f"{label}-{int(gamma)}"
    return label


def latex_label(label: str) -> str:
    """A row label in LaTeX: escaped, PiLiD/PiLiB/NIT in italics, GA2M as GA$^2$M."""
    if label == "GA2M":
        return r"GA$^2$M"
    text = latex_escape(label)
    if label.split("-")[0] in ITALIC_MODELS:
        text = rf"\textit{{{text}}}"
    return text
