"""What makes two runs "the same setting": a stable hash of the resolved config.

``setting_id`` hashes every key that can change a trial's result (data, model, training
settings, ``seed``) and drops the bookkeeping keys that only say how, where or how many times
it runs. ``seed`` stays in because trial ``t`` uses seed ``seed + t``: another seed gives other
splits and initialisations, hence another setting. ``trials`` is left out so that raising it
from 5 to 20 reuses the first 5 trials. ``train.batched``/``train.trials_per_batch``/
``train.n_jobs`` are left out: they say how the trials are laid out over processes, which
changes wall time (``n_jobs``) or at most the float rounding (``batched``, ``trials_per_batch``,
recorded in each record's ``layout``), not what is computed. ``data.verify`` and
``data.download`` only say how the data file is checked and fetched. ``logger`` only says where
the setting's summary is also sent (an MLflow run).

A key added after records existed is left out while it holds the value that computes exactly
what was computed before it existed (``KEYS_ADDED_AT_IDENTITY``, e.g. ``model.n_bags=1``: one
model, no bag), so the records made before stay valid; any other value is hashed.

Values are normalised first (``pilid.experiments.config.normalize_config``): ``data.N=1e3`` and
``data.N=1000`` are one setting, as are ``model.lam=0`` and ``model.lam=0.0``.

A table (``data=table``, or a user's YAML that extends it) is identified by its contents
(`table_identity`): the SHA-256 of the file's bytes fills ``data.sha256`` when it is not given,
so an edited file, or another file under the same relative path, is another setting, and the
loader checks the bytes it parses against it. ``data=table`` is named after its file (the
stem) unless ``data.name`` says otherwise.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, OmegaConf

from pilid.hyperparameters import PILID, identities

#: Top-level keys that do not change a trial's result.
BOOKKEEPING_KEYS = (
    "trials",
    "device",
    "results_dir",
    "data_dir",
    "force",
    "dry_run",
    "verbose",
    "gamma",  # the shortcut; model.gamma (where the model has one) carries the value
    "experiment_name",
    "experiment",
    "logger",  # where the setting's summary is also tracked (pilid.experiments.tracking)
    "hydra",
)
#: Keys under ``train`` that do not change a trial's result.
TRAIN_BOOKKEEPING_KEYS = ("batched", "n_jobs", "trials_per_batch")
#: Keys under ``data`` that do not change a trial's result (how the file is checked and fetched).
DATA_BOOKKEEPING_KEYS = ("verify", "download")

#: Keys added after records existed, with the value that reproduces the computation from before
#: (left out of the hash at that value; ``tests/test_strict_runs.py`` pins the golden ids).
#: The ``model`` entries are the declared ones (`pilid.hyperparameters.PILID`'s ``identity``:
#: ``n_bags=1``, no monotone constraint, no roughness penalty, no pair terms); they hold for
#: every model that has the key.
KEYS_ADDED_AT_IDENTITY = {
    **{("model", name): value for name, value in identities(PILID).items()},
    # the synthetic loader's options that conf/data/synthetic.yaml lists since its schema
    ("data", "interaction_share"): 0.2,
    ("data", "logit_scale"): 1.0,
    ("data", "degree"): 10,
    ("data", "interaction_degree"): 3,
    ("data", "generator"): "legendre",
    ("data", "missing"): "drop",  # a table's rows with a missing value dropped (pilid.data.table)
    ("data", "encoding"): "onehot",  # a table's categorical columns one-hot for every model
}

#: Length of the hex digest kept as the id (64 bits: collisions are not a concern here).
ID_LENGTH = 16


def resolved_config(cfg: DictConfig | Mapping[str, Any]) -> dict[str, Any]:
    """The config as a plain dict with all interpolations resolved."""
    if isinstance(cfg, DictConfig):
        return OmegaConf.to_container(cfg, resolve=True, throw_on_missing=True)
    return OmegaConf.to_container(OmegaConf.create(dict(cfg)), resolve=True, throw_on_missing=True)


def setting_config(cfg: DictConfig | Mapping[str, Any]) -> dict[str, Any]:
    """The resolved, normalised config minus the bookkeeping keys: what ``setting_id`` hashes."""
    from pilid.experiments.config import normalize_config

    config = normalize_config(resolved_config(cfg))
    for key in BOOKKEEPING_KEYS:
        config.pop(key, None)
    train = config.get("train")
    if isinstance(train, dict):
        config["train"] = {k: v for k, v in train.items() if k not in TRAIN_BOOKKEEPING_KEYS}
    data = config.get("data")
    if isinstance(data, dict):
        data = {k: v for k, v in data.items() if k not in DATA_BOOKKEEPING_KEYS}
        config["data"] = table_identity(data)
    for (group, key), identity in KEYS_ADDED_AT_IDENTITY.items():
        section = config.get(group)
        if isinstance(section, dict) and key in section and section[key] == identity:
            section.pop(key)
    _drop_shipped_categories(config.get("model"))
    _drop_builtin_classes(config.get("model"))
    _recorded_class_paths(config.get("model"))
    return config


#: The models that had records before their YAML named its classes (the registry's): their
#: class keys are left out of the hash at the YAML's values. Models added since (the peers of
#: Table 3+) were recorded with their class keys hashed, as a user's model is.
MODELS_BEFORE_CLASS_KEYS = (
    *("pilid", "pilid_lib", "mlp", "pilib", "nit", "ga", "gam", "ga2m", "ebm"),
    *("svm", "rf", "linear"),
)


def _drop_builtin_classes(model: Any) -> None:
    """Leave the class keys (``regressor``/``classifier``) of a model of
    ``MODELS_BEFORE_CLASS_KEYS`` out of the hash while they name the classes its
    ``conf/model/<name>.yaml`` names: they were added after records existed and compute what the
    registry computed. Any other model (a user's, a peer, or another class put in a built-in
    one) is hashed with its classes: another class is another setting."""
    from pilid.experiments.model_config import MODEL_CLASS_KEYS, builtin_model

    if not isinstance(model, dict) or model.get("name") not in MODELS_BEFORE_CLASS_KEYS:
        return
    shipped = builtin_model(model.get("name"))
    if shipped is None:
        return
    for key in MODEL_CLASS_KEYS:
        if key in model and model[key] == shipped.get(key):
            model.pop(key)


def _drop_shipped_categories(model: Any) -> None:
    """Leave a class block's ``_categories_`` (how the class takes categorical columns,
    `pilid.experiments.model_config.ADAPTER_KEYS`) out of the hash while it is its built-in
    YAML's: added to a peer whose class keys are hashed (LightGBM's) after records existed, it
    changes nothing but a table's encoding under ``data.encoding=auto``, which is hashed."""
    from pilid.experiments.model_config import TASK_BLOCK, builtin_model

    if not isinstance(model, dict):
        return
    shipped = builtin_model(model.get("name")) or {}
    for key in TASK_BLOCK.values():
        block, own = model.get(key), shipped.get(key)
        if isinstance(block, dict) and isinstance(own, dict) and "_categories_" in block:
            if block["_categories_"] == own.get("_categories_"):
                model[key] = {k: v for k, v in block.items() if k != "_categories_"}


#: The modules whose classes records named before they moved out of ``pilid.models`` (the
#: estimators, the inspection and the baselines in subpackages), new -> recorded. A class key
#: that is hashed (``model=pilib_lib``'s, a user's) is hashed at the recorded path: the same class
#: is the same setting under either name.
MOVED_MODULES = {
    **{f"pilid.estimators.{m}": f"pilid.models.{m}" for m in ("pilid", "pilid_cv", "pilib")},
    **{f"pilid.baselines.{m}": f"pilid.models.{m}" for m in ("svm", "gam", "ga2m", "ga", "nit")},
    "pilid.estimators": "pilid.models.estimators",
    "pilid.baselines": "pilid.models.baselines",
}


def _recorded_class_paths(model: Any) -> None:
    """Put each class key's ``_target_`` of a moved module (`MOVED_MODULES`) at its recorded
    path, for the hash."""
    from pilid.experiments.model_config import TARGET_KEYS

    if not isinstance(model, dict):
        return
    for key in TARGET_KEYS:
        block = model.get(key)
        if key == "_target_":
            path = block
        else:
            path = block.get("_target_") if isinstance(block, dict) else None
        module, _, name = path.rpartition(".") if isinstance(path, str) else ("", "", "")
        if module in MOVED_MODULES:
            path = f"{MOVED_MODULES[module]}.{name}"
            model[key] = path if key == "_target_" else {**block, "_target_": path}


#: ``conf/data/table.yaml``'s name: a table run under it is named after its file.
TABLE_NAME = "table"


def is_table(data: Any) -> bool:
    """Whether a data config names a table file (``data=table`` or a YAML that extends it)."""
    return isinstance(data, Mapping) and "path" in data


def table_name(data: Mapping[str, Any]) -> str:
    """The data set name of a table's records: ``data.name`` where it says one (a YAML of the
    user's directory, ``data.name=...``), else the file's stem (``fair.csv``: ``fair``), or its
    whole file name where the stem is a built-in data set's name (``bike.csv``)."""
    from pilid.data import DATASETS
    from pilid.errors import PilidError

    name = str(data.get("name") or TABLE_NAME)
    if name != TABLE_NAME:
        if name in DATASETS:
            raise PilidError(
                f"data.name={name} is a built-in data set's name, not a table's; name the table "
                f"otherwise, e.g. data.name=my_{name}"
            )
        return name
    file = Path(str(data["path"])).expanduser()
    return file.name if file.stem in DATASETS else file.stem


def table_identity(data: Mapping[str, Any]) -> dict[str, Any]:
    """A table's data config as its setting holds it: named (`table_name`) and with
    ``sha256``, the SHA-256 of the file's bytes (the path as given, relative to the working
    directory) where the config gives none. Any other data config is returned as it is.

    The runner loads the table from this config, so the bytes it parses are checked against the
    checksum its setting id holds (`pilid.data.table.load_table`): a setting never mixes trials
    of two contents. Raises ``DataFileError`` (one line) for a missing or empty file.
    """
    if not is_table(data):
        return dict(data) if isinstance(data, Mapping) else data
    from pilid.data.table import table_sha256

    pinned = dict(data)
    pinned["name"] = table_name(data)
    if not pinned.get("sha256"):
        pinned["sha256"] = table_sha256(str(data["path"]))
    return pinned


def canonical_json(value: Any) -> str:
    """JSON with sorted keys and no whitespace (``1`` and ``1.0`` stay distinct values)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def setting_id(cfg: DictConfig | Mapping[str, Any]) -> str:
    """Stable 16-hex-digit id of a setting: SHA-256 of the canonical JSON of ``setting_config``.

    The id does not depend on key order, on the process or on the machine, so a resumed run, a
    joblib worker and a Slurm job all find the same trials in the store.

    Parameters
    ----------
    cfg : DictConfig or dict
        A composed run config (``python -m pilid.run``'s), or its plain-dict form.

    Returns
    -------
    str
        16 hexadecimal digits.
    """
    digest = hashlib.sha256(canonical_json(setting_config(cfg)).encode("utf-8")).hexdigest()
    return digest[:ID_LENGTH]


def setting_label(config: Mapping[str, Any]) -> str:
    """``<model>[ gamma=<g>][ init=<i>] <dataset>[-<task> N=<N> m=<m>]``, e.g.
    ``pilid gamma=5 synthetic-regression N=20000 m=30``: enough to tell apart the settings of a
    paper grid (a synthetic set's size and feature count; a non-default initialisation, as in
    Table 2's Gaussian half)."""
    model = config["model"]
    data = config["data"]
    label = str(model["name"])
    if model.get("gamma") is not None:
        label += f" gamma={model['gamma']}"
    if model.get("init") not in (None, "lstsq"):
        label += f" init={model['init']}"
    dataset = table_name(data) if is_table(data) else str(data["name"])
    if dataset == "synthetic":
        dataset += f"-{data.get('task', 'regression')} N={data.get('N')} m={data.get('m')}"
    return f"{label} {dataset}"
