"""Typed configs (Hydra structured configs): the keys and value types of every config group.

One dataclass per config file: ``RunConfig`` (``conf/config.yaml``, with ``TrainConfig`` for
``train``), one per dataset (``conf/data/<name>.yaml``), one per model
(``conf/model/<name>.yaml``) and one per experiment tracker (``conf/logger/<name>.yaml``). Each
YAML file names its schema first in its defaults list (``- /schema/model/pilid@_here_``), so
Hydra composes the YAML's values into the dataclass and itself rejects a key the dataclass lacks
(``model.gamm=3``) and a value of the wrong type (``trials=abc``); ``pilid.run`` turns those
errors into the command line's one-line form. A key added with ``+`` (``+train.epoch=3``) gets
past Hydra (it force-adds) and is refused by ``pilid.experiments.config.check_config`` from the
same schema.

The values (the defaults a run uses) live once, in the YAML files; the dataclasses hold only the
keys and their types (every field is ``MISSING`` until a YAML file sets it). The same schemas give
``pilid.experiments.config`` its valid keys and value types for configs handed to the runner as
plain dicts, so the checks have one source. PiLiD's two schemas (``pilid``, ``pilid_lib``) are built
from its declared hyper-parameters (`pilid.hyperparameters.PILID`: the ``model`` keys and their
types), not written out here.

A field's type decides how a value is stored and hence the setting id (``1000`` and ``1000.0``
hash differently): a field is ``float`` only where its YAML value is a float. A data field that
the loader takes but that recorded settings did not have is hashed only when it differs from
its YAML value (``pilid.experiments.setting.KEYS_ADDED_AT_IDENTITY``).

``hydra_plugins/pilid_schema`` stores the schemas in Hydra's ``ConfigStore`` (group ``model``:
``schema_pilid``, ...) when Hydra scans its plugins, so every Hydra app and every
``hydra.compose`` of ``conf/`` finds them without importing pilid first. This module itself
knows nothing of Hydra (plain dataclasses), so every layer may read the schemas.
"""

from __future__ import annotations

import dataclasses
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from omegaconf import MISSING

from pilid import hyperparameters

#: The repository's config directory (``conf/``): the YAML files the schemas type.
CONF_DIR = Path(__file__).resolve().parent.parent / "conf"

#: The ``train`` keys the neural estimators take as parameters; the others (``batched``,
#: ``trials_per_batch``, ``n_jobs``) only lay a setting's trials out over blocks and processes.
ESTIMATOR_TRAIN_KEYS = ("epochs", "batch_size", "lr", "optimizer", "patience", "val_fraction")


# -- top level ------------------------------------------------------------------------------------
@dataclass
class TrainConfig:
    """``train``: the training settings of the neural models (``conf/config.yaml``)."""

    epochs: int = MISSING
    batch_size: int = MISSING
    lr: float = MISSING
    optimizer: str = MISSING
    patience: int | None = MISSING
    val_fraction: float = MISSING
    batched: bool = MISSING
    trials_per_batch: Any = MISSING  # a whole number >= 1 or "auto"
    n_jobs: Any = MISSING  # a whole number >= 1 or "auto"


@dataclass
class RunConfig:
    """The top level of ``conf/config.yaml``: one setting's run (``data`` and ``model`` are the
    selected group options, each typed by its own schema)."""

    experiment_name: str = MISSING
    trials: int = MISSING
    seed: int = MISSING
    device: str = MISSING
    data_dir: str = MISSING
    results_dir: str = MISSING
    force: bool = MISSING
    dry_run: bool = MISSING
    verbose: bool = MISSING
    gamma: int = MISSING
    train: TrainConfig = field(default_factory=TrainConfig)
    data: Any = MISSING
    model: Any = MISSING
    logger: Any = None  # the selected ``logger`` option (a tracker), or None: no tracking


# -- data -----------------------------------------------------------------------------------------
@dataclass
class DataConfig:
    """Keys every dataset has."""

    name: str = MISSING
    task: str = MISSING


@dataclass
class UCIDataConfig(DataConfig):
    """A UCI file: how it is checked (sha256) and fetched."""

    verify: bool = MISSING
    download: bool = MISSING


@dataclass
class BankData(UCIDataConfig):
    """The options of the bank marketing data set (``data=bank``)."""

    drop_duration: bool = MISSING


@dataclass
class BikeData(UCIDataConfig):
    """The options of the bike sharing data set (``data=bike``)."""

    standardize_target: bool = MISSING


@dataclass
class SkillData(UCIDataConfig):
    """The options of the SkillCraft data set (``data=skill``)."""

    drop_outlier: bool = MISSING


@dataclass
class SpambaseData(UCIDataConfig):
    """The options of the spambase data set (``data=spambase``)."""

    pass


@dataclass
class SyntheticData(DataConfig):
    """The options of ``pilid.data.synthetic.load_synthetic`` (both generators)."""

    N: int = MISSING
    m: int = MISSING
    n_interactions: int | None = MISSING
    noise: float = MISSING
    data_seed: int = MISSING
    label: str = MISSING
    interaction_order: int = MISSING
    interaction_share: float = MISSING
    logit_scale: float = MISSING
    degree: int = MISSING
    interaction_degree: int = MISSING
    generator: str = MISSING


@dataclass
class TableData(DataConfig):
    """Any CSV/Parquet file (``pilid.data.table.load_table``)."""

    path: str = MISSING
    target: str = MISSING
    categorical: list[str] | None = MISSING
    drop: list[str] | None = MISSING
    sha256: str | None = MISSING
    standardize_target: bool = MISSING
    missing: str = MISSING  # "keep" (NaN for the models that take it) or "drop"
    encoding: str = MISSING  # "auto" (each model's categories as it takes them) or "onehot"


# -- models ---------------------------------------------------------------------------------------
@dataclass
class ModelConfig:
    """Keys every built-in model has: its name and its class per task (``_target_`` blocks,
    ``pilid.experiments.model_config``)."""

    name: str = MISSING
    regressor: Any = MISSING  # {_target_: <module.Class>, _rename_: {...}, ...}
    classifier: Any = MISSING


@dataclass
class PenaltyConfig(ModelConfig):
    """Eq. 11's penalty and the MLP weights' init."""

    sigma: float | None = MISSING
    reg: str = MISSING
    lam: float = MISSING


@dataclass
class MLPModel(PenaltyConfig):
    """The paper's MLP baseline (``model=mlp``)."""

    hidden_layers: list[int] | None = MISSING
    n_bags: int = MISSING


def _declared_schema(name: str, base: type, schema_type: str, doc: str) -> type:
    """A dataclass of `base` with a field per ``model`` key of `pilid.hyperparameters.PILID`
    (typed by the entry's `schema_type` attribute, ``type`` or ``schema_type``; a field of
    `base` keeps its place and takes the declared type)."""
    fields = [
        (p.name, getattr(p, schema_type), field(default=MISSING))
        for p in hyperparameters.model_keys(hyperparameters.PILID)
    ]
    schema = dataclasses.make_dataclass(name, fields, bases=(base,))
    schema.__module__ = __name__
    schema.__doc__ = doc
    return schema


#: PiLiD with the paper's protocol (``model=pilid``): every ``model`` key of
#: `pilid.hyperparameters.PILID`, typed as the paper's values are (``gamma`` an int, ``lam`` and
#: ``smoothness`` floats).
PiLiDModel = _declared_schema(
    "PiLiDModel",
    MLPModel,
    "type",
    "PiLiD with the paper's protocol (``model=pilid``); the keys of `pilid.hyperparameters.PILID`.",
)
#: PiLiD with the library's defaults (``model=pilid_lib``): gamma, lam and smoothness may be rules
#: of the training rows ("auto", "rows_steep", "rows"; pilid.models.row_rules), smoothness "auto".
PiLiDLibModel = _declared_schema(
    "PiLiDLibModel",
    PiLiDModel,
    "schema_type",
    "PiLiD with the library's defaults (``model=pilid_lib``): gamma, lam and smoothness may be "
    "rules of the training rows.",
)


@dataclass
class GatedModel(ModelConfig):
    """The gated blocks of NIT and PiLiB (Section 3.3)."""

    n_bags: int = MISSING
    n_blocks: int = MISSING
    max_order: int = MISSING
    block_layers: list[int] = MISSING
    lambda0: float = MISSING
    gate_lr_scale: float = MISSING
    warmup_epochs: int = MISSING
    phase1_epochs: int = MISSING
    mask_patience: int = MISSING
    init_prob: float = MISSING
    init_scale: float = MISSING
    reg: str = MISSING
    lam: float = MISSING


@dataclass
class NITModel(GatedModel):
    """NIT (``model=nit``): the gated blocks without the additive component."""

    pass


@dataclass
class PiLiBModel(GatedModel):
    """PiLiB (``model=pilib``): the gated blocks plus the additive component."""

    gamma: int = MISSING
    knots: str = MISSING
    init: str = MISSING
    sigma: float | None = MISSING
    reg_groups: str = MISSING
    purify: bool = MISSING
    monotone_constraints: Any = MISSING  # None, {column: 1 or -1} or one of -1, 0, 1 per column


@dataclass
class GAModel(PenaltyConfig):
    """GA by distillation (``model=ga``)."""

    hidden_layers: list[int] | None = MISSING
    student: str = MISSING
    student_outer_bags: int = MISSING
    student_n_splines: int = MISSING
    cores: int = MISSING


@dataclass
class GA2MModel(ModelConfig):
    """GA2M via InterpretML's EBM (``model=ga2m``, ``model=ebm``)."""

    interactions: Any = MISSING  # a count, a fraction or a list of pairs (InterpretML's)
    outer_bags: int = MISSING
    inner_bags: int = MISSING
    learning_rate: float | None = MISSING
    max_bins: int = MISSING
    max_interaction_bins: int = MISSING
    max_rounds: int = MISSING
    early_stopping_rounds: int = MISSING
    validation_size: float = MISSING
    min_samples_leaf: int = MISSING
    smoothing_rounds: int | None = MISSING
    interaction_smoothing_rounds: int | None = MISSING
    cores: int = MISSING


@dataclass
class GAMModel(ModelConfig):
    """The GAM of pygam (``model=gam``)."""

    n_splines: int = MISSING
    spline_order: int = MISSING
    lam_grid: list[float] = MISSING
    max_iter: int = MISSING
    tol: float = MISSING


@dataclass
class LinearModel(ModelConfig):
    """Linear or logistic regression (``model=linear``)."""

    fit_intercept: bool = MISSING
    C: float = MISSING
    max_iter: int = MISSING


@dataclass
class RFModel(ModelConfig):
    """Random forest (``model=rf``)."""

    n_estimators: int = MISSING
    criterion: str | None = MISSING
    max_features: Any = MISSING  # None, "sqrt", "log2", a count or a fraction
    max_depth: int | None = MISSING
    min_samples_split: Any = MISSING  # a count or a fraction
    min_samples_leaf: Any = MISSING  # a count or a fraction
    bootstrap: bool = MISSING
    max_samples: Any = MISSING  # None, a count or a fraction
    cores: int = MISSING


@dataclass
class SVMModel(ModelConfig):
    """The SVM (``model=svm``)."""

    kernel: str = MISSING
    C: float = MISSING
    rbf_gamma: Any = MISSING  # "scale", "auto" or a positive number
    epsilon: float = MISSING
    tol: float = MISSING
    shrinking: bool = MISSING
    cache_size: int = MISSING
    max_iter: int = MISSING
    class_weight: Any = MISSING  # None, "balanced" or a dict


@dataclass
class LightGBMModel(ModelConfig):
    """LightGBM's own defaults (``conf/model/lightgbm.yaml``; a peer of Table 3+)."""

    n_estimators: int = MISSING
    learning_rate: float = MISSING
    num_leaves: int = MISSING
    cores: int = MISSING


@dataclass
class APLRModel(ModelConfig):
    """APLR's own defaults (``conf/model/aplr.yaml``; a peer of Table 3+)."""

    m: int = MISSING
    v: float = MISSING
    cv_folds: int = MISSING
    n_jobs: int = MISSING


@dataclass
class RealMLPModel(ModelConfig):
    """RealMLP's library defaults (pytabkit's RealMLP-TD, ``conf/model/realmlp.yaml``; a peer of
    Table 3+). A null keeps pytabkit's own default."""

    n_epochs: int | None = MISSING
    lr: float | None = MISSING
    batch_size: int | None = MISSING
    val_fraction: float = MISSING
    n_threads: int = MISSING


@dataclass
class TabMModel(ModelConfig):
    """TabM's library defaults (pytabkit's TabM-D, ``conf/model/tabm.yaml``; a peer of
    Table 3+). A null keeps pytabkit's own default."""

    n_epochs: int | None = MISSING
    patience: int | None = MISSING
    lr: float | None = MISSING
    batch_size: int | None = MISSING
    val_fraction: float = MISSING
    n_threads: int = MISSING


# -- loggers ------------------------------------------------------------------------------------
@dataclass
class LoggerConfig:
    """Keys every experiment tracker has (``conf/logger/<name>.yaml``, ``logger=<name>``): its
    name and its class (``pilid.experiments.tracking``)."""

    name: str = MISSING
    _target_: str = MISSING


@dataclass
class MLflowLoggerConfig(LoggerConfig):
    """MLflow (``logger=mlflow``): one run per setting (``pilid.experiments.tracking``)."""

    tracking_uri: str | None = MISSING
    experiment_name: str = MISSING
    artifacts: bool = MISSING


#: The schema of each option of each config group (the YAML file of the same name uses it).
SCHEMAS: dict[str, dict[str, type]] = {
    "data": {
        "bank": BankData,
        "bike": BikeData,
        "skill": SkillData,
        "spambase": SpambaseData,
        "synthetic": SyntheticData,
        "table": TableData,
    },
    "model": {
        "ga": GAModel,
        "ebm": GA2MModel,  # the same estimator with InterpretML's own defaults
        "ga2m": GA2MModel,
        "gam": GAMModel,
        "linear": LinearModel,
        "mlp": MLPModel,
        "nit": NITModel,
        "pilib": PiLiBModel,
        "pilib_lib": PiLiBModel,  # PiLiB's library defaults (Table 3+)
        "pilid": PiLiDModel,
        "pilid_lib": PiLiDLibModel,
        "rf": RFModel,
        "svm": SVMModel,
        # today's peers (Table 3+)
        "aplr": APLRModel,
        "lightgbm": LightGBMModel,
        "realmlp": RealMLPModel,
        "tabm": TabMModel,
    },
    "logger": {
        "mlflow": MLflowLoggerConfig,
    },
}
#: Where a group option's schema is stored: ``conf/model/pilid.yaml``'s defaults list starts
#: with ``- /schema/model/pilid@_here_``; the primary config's with ``- pilid_schema``.
SCHEMA_GROUP = "schema"
CONFIG_SCHEMA = "pilid_schema"


def section_fields(section: str, name: str | None = None) -> dict[str, Any] | None:
    """The keys of a config section with their annotated types: ``train`` and the top level
    (``section="run"``) always; ``data``/``model`` for a known option ``name``, else None."""
    if section == "train":
        schema = TrainConfig
    elif section == "run":
        schema = RunConfig
    else:
        schema = SCHEMAS.get(section, {}).get(str(name))
        if schema is None:
            return None
    hints = _type_hints(schema)
    return {f.name: hints[f.name] for f in dataclasses.fields(schema)}


def _type_hints(schema: type) -> dict[str, Any]:
    return typing.get_type_hints(schema)


def whole_number_keys() -> set[str]:
    """Dotted keys (``data.N``, ``model.n_blocks``, ``trials``) whose type is ``int`` in some
    schema: a whole number typed as a float (``data.N=1e3``) is rewritten to an int for them."""
    keys = {k for k, t in section_fields("run").items() if t is int}
    keys |= {f"train.{k}" for k, t in section_fields("train").items() if _is_int(t)}
    for section, options in SCHEMAS.items():
        for name in options:
            keys |= {
                f"{section}.{k}" for k, t in section_fields(section, name).items() if _is_int(t)
            }
    return keys


def _is_int(annotation: Any) -> bool:
    return int in (typing.get_args(annotation) or (annotation,))
