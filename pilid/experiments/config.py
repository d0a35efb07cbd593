"""Checks on the command line and the composed config, each failing with one clear line.

The schema of a setting is ``pilid.schema``: typed dataclasses for the top level, ``train``,
each dataset and each model, which Hydra composes the YAML values into (so Hydra itself refuses
``model.gamm=3`` and ``trials=abc``; ``composition_error`` makes its message one line).
``check_config`` runs the same schema over configs that did not come through Hydra's merge (a
key added with ``+``, a plain dict handed to the runner) and checks the values' ranges;
``normalize_config`` gives each value its field's type (``data.N=1e3`` is ``1000``) so that equal
settings hash alike, and ``normalize_overrides`` does the same on the command line.
"""

from __future__ import annotations

import difflib
import re
import typing
from collections.abc import Iterable, Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, OmegaConf

from pilid.errors import PilidError
from pilid.experiments.model_config import MODEL_CLASS_KEYS
from pilid.schema import (
    CONF_DIR,
    ESTIMATOR_TRAIN_KEYS,
    SCHEMAS,
    section_fields,
    whole_number_keys,
)

GROUPS = ("data", "model", "experiment", "logger")


def group_options(group: str, conf_dir: Path = CONF_DIR) -> list[str]:
    """The options of a config group: the names of the YAML files in conf/<group>/."""
    return sorted(p.stem for p in (conf_dir / group).glob("*.yaml"))


def user_config_dirs(args: Iterable[str]) -> list[Path]:
    """The directories Hydra's ``--config-dir``/``-cd`` adds to the search path (the user's own
    model and data YAMLs), as given on the command line."""
    args = list(args)
    dirs = []
    for i, arg in enumerate(args):
        key, eq, value = arg.partition("=")
        if key in ("--config-dir", "-cd"):
            value = value if eq else (args[i + 1] if i + 1 < len(args) else "")
            if value:
                dirs.append(Path(value).expanduser())
    return dirs


def check_overrides(args: Iterable[str], conf_dir: Path = CONF_DIR) -> None:
    """Reject `data=nosuch`, `model=a,nosuch`, ... before Hydra prints a long error (the options
    of ``conf/`` and of the ``--config-dir`` directories)."""
    args = list(args)
    extra_dirs = user_config_dirs(args)
    for directory in extra_dirs:
        if not directory.is_dir():
            raise PilidError(
                f"--config-dir {directory} is not a directory; give the folder that holds your "
                "model/ and data/ YAML files"
            )
    for arg in args:
        if arg.startswith("-") or "=" not in arg:
            continue
        key, value = arg.split("=", 1)
        key = key.lstrip("+~")
        if key not in GROUPS or value in ("", "null"):
            continue
        value = value.strip()
        for prefix in ("choice(", "range("):
            if value.startswith(prefix) and value.endswith(")"):
                value = value[len(prefix) : -1]
        choices = sorted({o for d in (conf_dir, *extra_dirs) for o in group_options(key, Path(d))})
        for option in (v.strip().strip("'\"") for v in value.split(",")):
            if option and option not in choices:
                raise PilidError(f"unknown {key} {option!r}; valid choices: {', '.join(choices)}")


def check_override_syntax(args: Iterable[str]) -> None:
    """Every ``key=value`` of the command line parses in Hydra's override grammar: one that
    does not (a value with characters outside it, ``results_dir=ré中``) stops with one line
    that names it and shows it quoted, instead of Hydra's lexer error."""
    from hydra.core.override_parser.overrides_parser import OverridesParser

    parser = OverridesParser.create()
    for arg in args:
        if arg.startswith("-") or "=" not in arg:
            continue
        try:
            parser.parse_overrides([arg])
        except Exception as error:  # noqa: BLE001 - Hydra's OverrideParseException
            key, _, value = arg.partition("=")
            lexer = "LexerNoViableAlt" in str(error)  # a character outside the grammar
            quoted = value.replace("\\", "\\\\").replace("'", "\\'")
            fix = (
                f"quote the value: \"{key}='{quoted}'\""
                if lexer
                else f"{str(error).splitlines()[0]}; see python -m pilid.run --help for the syntax"
            )
            raise PilidError(f"{arg} is not valid override syntax; {fix}") from None


def normalize_overrides(args: Iterable[str]) -> list[str]:
    """The command line with ``data.N=1e3`` written ``data.N=1000``: a whole number typed as a
    float, for a key whose schema type is int (Hydra's typed config would refuse the float, and
    ``1e3`` is how people type large N). Sweeps (``data.N=5e3,1e4``) too; other values untouched.
    """
    keys = whole_number_keys()
    out = []
    for arg in args:
        key, _, value = arg.partition("=")
        if arg.startswith("-") or not _ or key.lstrip("+~") not in keys:
            out.append(arg)
            continue
        out.append(f"{key}={','.join(_whole(part) for part in value.split(','))}")
    return out


def _whole(text: str) -> str:
    try:
        number = float(text)
    except ValueError:
        return text
    if number.is_integer() and not re.fullmatch(r"\s*[+-]?\d+\s*", text):
        return str(int(number))
    return text


def composition_error(
    error: BaseException, overrides: Iterable[str] = (), config_dirs: Iterable[Path] = ()
) -> PilidError:
    """Hydra's multi-line composition error (``Could not override 'model.gamm'``, ``Error
    merging override trials=abc``) as one line that names the key and the fix (``overrides``:
    the command line's, to repeat the value typed). A key or value refused inside a YAML file
    (``In 'data/bost': ConfigKeyError raised while composing config``) is named with that file,
    looked up in ``config_dirs`` (the ``--config-dir`` directories) and then ``conf/``
    (``yaml_error``)."""
    in_file = yaml_error(error, config_dirs)
    if in_file is not None:
        return in_file
    cause = error.__cause__ or error
    full_key = str(getattr(cause, "full_key", "") or "")
    message = str(cause).splitlines()[0] if str(cause) else type(cause).__name__
    if full_key and type(cause).__name__ in ("ConfigAttributeError", "ConfigKeyError"):
        section, _, key = full_key.rpartition(".")
        if section in SECTIONS or not section:
            name = _schema_name(getattr(cause, "object_type", None))
            return PilidError(unknown_key_message(section or None, key, {section: {"name": name}}))
    if full_key and type(cause).__name__ == "ValidationError":
        value = getattr(cause, "value", None)
        shown = f"={value!r}" if value is not None else ""
        kind = next((fix for word, fix in _KINDS.items() if word in message), "<value>")
        return PilidError(f"{full_key}{shown} is invalid: {message}; use {full_key}={kind}")
    already = re.search(r"An item is already at '([\w.]+)'", message)
    if already:
        key = already[1]
        typed = {a.partition("=")[0].lstrip("+~"): a.partition("=")[2] for a in overrides}
        return PilidError(
            f"{key} is already in the config; set it without the '+': "
            f"{key}={typed.get(key) or '<value>'}"
        )
    first = str(error).splitlines()[0] if str(error) else message
    return PilidError(f"{first} {message}".strip() if first != message else message)


#: Hydra's first line for an error inside a config file: ``In 'data/bost': ConfigKeyError ...``.
_IN_FILE = re.compile(r"In '([^']+)': (\w+) raised while composing config")


def config_file(option: str, config_dirs: Iterable[Path] = ()) -> Path:
    """The YAML file of the config ``option`` (``data/bost``): in the first of ``config_dirs``
    that has it, else in ``conf/`` (the path it would have there when neither has it)."""
    for directory in (*config_dirs, CONF_DIR):
        path = Path(directory) / f"{option}.yaml"
        if path.is_file():
            return path
    return CONF_DIR / f"{option}.yaml"


def yaml_error(error: BaseException, config_dirs: Iterable[Path] = ()) -> PilidError | None:
    """One line for a key the schema lacks (``targt:``) or a value of the wrong type written in
    a YAML file (of the user's ``--config-dir`` or of ``conf/``), naming the file, the key, the
    closest valid key or the type wanted, and the fix; None for any other error."""
    found = _IN_FILE.match(str(error))
    cause = error.__cause__ or error.__context__
    full_key = str(getattr(cause, "full_key", "") or "")
    if found is None or not full_key:
        return None
    option = found[1]
    group = option.split("/", 1)[0]
    path = config_file(option, config_dirs)
    key = full_key[len(group) + 1 :] if full_key.startswith(f"{group}.") else full_key
    where = f"{path} ({group}={option.split('/', 1)[-1]})" if group in SECTIONS else str(path)
    kind = type(cause).__name__
    if kind in ("ConfigAttributeError", "ConfigKeyError"):
        section, _, _ = full_key.rpartition(".")
        schema = getattr(cause, "object_type", None)
        if section == "train":
            types = section_fields("train")
        elif section in SECTIONS:
            types = section_fields(section, _schema_name(schema)) or {}
        else:
            types = section_fields("run") if not section else {}
        valid = [k for k in types if k not in _NOT_LISTED]
        last = full_key.rpartition(".")[2]
        close = difflib.get_close_matches(last, valid, n=1)
        hint = f"did you mean {close[0]}? " if close else ""
        listed = f"valid keys: {', '.join(valid)}; " if valid else ""
        return PilidError(
            f"unknown key {key!r} in {where}; {hint}{listed}correct or remove {key} in that file"
        )
    if kind == "ValidationError":
        message = str(cause).splitlines()[0] if str(cause) else kind
        value = getattr(cause, "value", None)
        wanted = next((fix for word, fix in _KINDS.items() if word in message), "<value>")
        shown = f" {value!r}" if value is not None else ""
        return PilidError(
            f"{key}:{shown} in {where} is invalid: {message}; write {key}: {wanted} in that file"
        )
    return None


#: The fix for OmegaConf's "could not be converted to <type>", in the command line's words.
_KINDS = {
    "to Integer": "<a whole number>",
    "to Float": "<a number>",
    "bool": "true|false",
    "to String": "<text>",
}


def _schema_name(schema: Any) -> str | None:
    for options in SCHEMAS.values():
        for name, cls in options.items():
            if cls is schema:
                return name
    return None


# -- schema ------------------------------------------------------------------------------------
#: Keys of a section that name it or its class rather than a setting: not listed as valid keys.
_NOT_LISTED = ("name", "regressor", "classifier", "_target_")
SECTIONS = ("model", "data", "train", "logger")


@lru_cache(maxsize=64)
def _yaml(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    loaded = OmegaConf.to_container(OmegaConf.load(path), resolve=False)
    return {k: v for k, v in (loaded or {}).items() if k != "defaults"}


def base_defaults(conf_dir: Path = CONF_DIR) -> dict[str, Any]:
    """The top-level values of ``conf/config.yaml`` (``train`` a dict): the run's defaults."""
    return _yaml(Path(conf_dir) / "config.yaml")


def section_types(config: Mapping[str, Any], section: str) -> dict[str, Any] | None:
    """The valid keys of ``model``/``data``/``train`` with their types (``pilid.schema``), or
    None for a ``model``/``data`` whose ``name`` has no schema."""
    if section == "train":
        return section_fields("train")
    node = config.get(section)
    name = node.get("name") if isinstance(node, Mapping) else None
    return section_fields(section, name) if isinstance(name, str) else None


def _coerce(value: Any, annotation: Any) -> Any:
    """``value`` in the type ``annotation`` when that loses nothing (1e3 -> 1000, 0 -> 0.0)."""
    if isinstance(value, bool):
        return value
    kinds = set(typing.get_args(annotation)) or {annotation}
    if int in kinds and isinstance(value, float) and value.is_integer():
        return int(value)
    if float in kinds and isinstance(value, int):
        return float(value)
    for kind in kinds:
        if typing.get_origin(kind) is list and isinstance(value, list):
            (item,) = typing.get_args(kind)
            return [_coerce(v, item) for v in value]
    return value


def normalize_config(config: dict[str, Any]) -> dict[str, Any]:
    """A copy of a resolved config whose values have the types of their schema fields.

    ``data.N=1e3`` becomes ``1000`` and ``model.lam=0`` becomes ``0.0``, so that equal settings
    hash to one setting id (Hydra's composition already types the values; this covers configs
    handed to the runner as plain dicts). A value of another kind (a string for a number, ...)
    is left as it is for the checks to reject.
    """
    out = dict(config)
    top = section_fields("run")
    for key, value in config.items():
        if key not in SECTIONS and key in top:
            out[key] = _coerce(value, top[key])
    for section in SECTIONS:
        node = config.get(section)
        types = section_types(config, section)
        if isinstance(node, Mapping) and types:
            out[section] = {k: _coerce(v, types.get(k, Any)) for k, v in node.items()}
    return out


def unknown_key_message(section: str | None, key: str, config: Mapping[str, Any]) -> str:
    """The one line for a key the schema lacks: ``unknown key model.gamm for model 'pilid';
    valid keys: ...`` (``section`` None: the top level)."""
    if section is None:
        valid = [k for k in section_fields("run") if k not in ("train", "model", "data")]
        valid += ["train", "model", "data"]
        return f"unknown key {key!r} at the top level; valid keys: {', '.join(valid)}"
    types = section_types(config, section) or {}
    node = config.get(section)
    if section == "logger" and not (isinstance(node, Mapping) and node.get("name")):
        options = "|".join(group_options("logger"))
        return (
            f"logger.{key} is set but no logger is chosen (logger is null by default); add "
            f"logger=<{options}>, e.g. logger=mlflow logger.{key}=<value>"
        )
    what = f"{section} {node.get('name')!r}" if section != "train" else "train"
    return (
        f"unknown key {section}.{key} for {what}; valid keys: "
        f"{', '.join(k for k in types if k not in _NOT_LISTED)} (check "
        f"the spelling: "
        f"{section}.<key>=<value>)"
    )


def check_keys(config: Mapping[str, Any]) -> None:
    """Reject keys under ``model``, ``data`` and ``train`` (and at the top) that the schema
    does not have, listing the valid ones. Hydra rejects most of them when it composes; a key
    added with ``+`` (``+model.gamm=3``) and a plain dict handed to the runner get here."""
    top = section_fields("run")
    unknown = sorted(k for k in config if k not in top and k not in ("hydra", "experiment"))
    if unknown:
        raise PilidError(unknown_key_message(None, unknown[0], config))
    for section in SECTIONS:
        node = config.get(section)
        types = section_types(config, section)
        if not isinstance(node, Mapping) or types is None:
            continue
        bad = sorted(k for k in node if k not in types)
        if bad:
            raise PilidError(unknown_key_message(section, bad[0], config))


def check_config(cfg: DictConfig | Mapping[str, Any]) -> None:
    """Validate the composed config: its keys, trials, seed, gamma and the training settings."""
    if isinstance(cfg, DictConfig):
        cfg = OmegaConf.to_container(cfg, resolve=False)
    cfg = dict(cfg)
    check_keys(cfg)
    _check_unset(cfg)
    cfg = normalize_config(_resolved_enough(cfg))
    trials = cfg.get("trials")
    if not isinstance(trials, int) or isinstance(trials, bool) or trials < 1:
        raise PilidError(f"trials={trials!r} is invalid; use a whole number >= 1 (the paper: 20)")
    seed = cfg.get("seed")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise PilidError(f"seed={seed!r} is invalid; use a whole number >= 0")
    if seed + trials - 1 >= 2**32:
        raise PilidError(
            f"seed={seed} with trials={trials} gives trial seeds up to {seed + trials - 1}, "
            f"past 2**32 - 1; use seed <= {2**32 - trials}"
        )
    results_dir = cfg.get("results_dir")
    if results_dir is None or not str(results_dir).strip():
        raise PilidError(
            f"results_dir={results_dir!r} is empty; set results_dir=<directory>, e.g. "
            "results_dir=results/runs"
        )
    _check_names(cfg)
    encoding = (cfg.get("data") or {}).get("encoding")
    if encoding is not None and encoding not in ("auto", "onehot"):
        raise PilidError(
            f"data.encoding={encoding!r} is invalid; use data.encoding=auto (each model's "
            "categorical columns as it takes them) or data.encoding=onehot"
        )
    model = cfg.get("model") or {}
    for key, gamma in (("gamma", cfg.get("gamma")), ("model.gamma", model.get("gamma"))):
        if gamma is not None:
            _check_gamma(key, gamma)
    train = cfg.get("train") or {}
    # epochs=0 is the estimators' too: Algorithm 1's start alone (least squares, no training)
    for key, low in (("epochs", 0), ("batch_size", 1)):
        value = train.get(key)
        if value is not None and (not isinstance(value, int) or value < low):
            raise PilidError(f"train.{key}={value!r} is invalid; use a whole number >= {low}")
    lr = train.get("lr")
    if lr is not None and not (isinstance(lr, int | float) and lr > 0):
        raise PilidError(f"train.lr={lr!r} is invalid; use a positive number such as 0.005")
    per_batch = train.get("trials_per_batch")
    if per_batch not in (None, "auto") and (
        isinstance(per_batch, bool) or not isinstance(per_batch, int) or per_batch < 1
    ):
        raise PilidError(
            f"train.trials_per_batch={per_batch!r} is invalid; use a whole number >= 1 (trials "
            "trained together as one ensemble) or auto"
        )
    n_jobs = train.get("n_jobs")
    if n_jobs not in (None, "auto") and (
        isinstance(n_jobs, bool) or not isinstance(n_jobs, int) or n_jobs < 1
    ):
        raise PilidError(f"train.n_jobs={n_jobs!r} is invalid; use auto or a whole number >= 1")
    _check_model(cfg)
    _check_logger(cfg)


#: The suffix of the results store's file (``records.jsonl``): a ``results_dir`` is its folder.
_RECORDS_SUFFIX = ".jsonl"


def _check_names(cfg: Mapping[str, Any]) -> None:
    """``experiment_name`` is a name, never a path (the report names its tables after it), and
    ``results_dir`` a folder, never the records file itself."""
    name = cfg.get("experiment_name")
    if isinstance(name, str) and (
        not name.strip() or re.search(r"[/\\\x00-\x1f]", name) or name.startswith(".")
    ):
        plain = re.sub(r"[^A-Za-z0-9_.+-]", "_", name).strip("._") or "my_experiment"
        raise PilidError(
            f"experiment_name={name!r} is not a plain name (no path separators, no leading dot, "
            f"not empty); use e.g. experiment_name={plain}"
        )
    results_dir = str(cfg.get("results_dir"))
    if results_dir.endswith(_RECORDS_SUFFIX):
        folder = results_dir[: -len(_RECORDS_SUFFIX)] or "results/runs"
        raise PilidError(
            f"results_dir={results_dir} names a file; results_dir is the folder that holds "
            f"records.jsonl: use e.g. results_dir={folder}"
        )


#: Top-level keys that only reach a model through an interpolation in its YAML
#: (``gamma: ${gamma}``): a model whose YAML fixes its own value does not read them.
SHORTCUT_KEYS = ("gamma",)


def unread_shortcuts(config: Mapping[str, Any], overrides: Iterable[str]) -> list[str]:
    """The notices for shortcut keys given in `overrides` (``gamma=3``) that the composed,
    unresolved `config`'s model does not read (``model=pilid_lib`` fixes ``gamma: 40``):
    one line each, naming the model's own key to set instead."""
    given = {a.partition("=")[0].lstrip("+~"): a.partition("=")[2] for a in overrides if "=" in a}
    model = config.get("model") or {}
    text = repr(model)
    notices = []
    for key in SHORTCUT_KEYS:
        if key in given and "${" + key + "}" not in text:
            name = model.get("name", "this model") if isinstance(model, Mapping) else "it"
            if isinstance(model, Mapping) and key in model:
                why = f"its YAML sets model.{key}={model[key]}; set model.{key}=<value> instead"
            else:
                why = f"it has no model.{key}: the value changes nothing there"
            notices.append(f"the top-level {key} does not reach model={name} ({why})")
    return notices


def _check_logger(cfg: Mapping[str, Any]) -> None:
    """``logger``: None (no tracking) or a tracker that can work (its class imports, takes the
    config's keys and finds its package: ``logger=mlflow`` without MLflow stops here, before
    anything trains)."""
    from pilid.experiments.tracking import check_logger

    check_logger(cfg.get("logger"))


def _check_unset(cfg: Mapping[str, Any]) -> None:
    """A value the YAML leaves for the command line (``???``: ``data.path`` of data=table) and
    the command line did not give: one line naming every such key."""
    for section in ("data", "model"):
        node = cfg.get(section)
        if not isinstance(node, Mapping):
            continue
        unset = [k for k, v in node.items() if isinstance(v, str) and v == "???"]
        if unset:
            name = node.get("name") or section
            given = " ".join(f"{section}.{k}=<value>" for k in unset)
            raise PilidError(f"{section}={name} needs {', '.join(unset)}; add {given}")


#: Keys of ``train`` handed to the estimators with the model config (minus ``name``).
TRAIN_PARAM_KEYS = ESTIMATOR_TRAIN_KEYS


def missing_names(config: Mapping[str, Any], choices: Mapping[str, Any] | None) -> dict[str, str]:
    """``{group: name}`` for ``model``/``data`` configs whose YAML gives no ``name`` (a model or
    table of the user's own config directory; a table YAML that extends ``table``
    keeps its inherited name only when it is ``table`` itself): the chosen option's name, which
    its records and table rows carry. ``choices``: Hydra's ``hydra.runtime.choices``."""
    names = {}
    for group in ("model", "data"):
        node = config.get(group)
        choice = (choices or {}).get(group)
        if not isinstance(node, Mapping) or not isinstance(choice, str):
            continue
        option = choice.rsplit("/", 1)[-1]
        # a table YAML of the user's that extends `table` is named after its file
        inherited = group == "data" and node.get("name") == "table" and option != "table"
        if not node.get("name") or inherited:
            names[group] = option
    return names


def model_params(config: Mapping[str, Any]) -> dict[str, Any]:
    """The estimator parameters of a resolved config, as recorded in each trial's record: the
    model config minus ``name`` and its class keys, plus the ``train`` keys the estimators
    take."""
    skip = {"name", *MODEL_CLASS_KEYS}
    params = {k: v for k, v in (config.get("model") or {}).items() if k not in skip}
    train = config.get("train") or {}
    params.update({k: train[k] for k in TRAIN_PARAM_KEYS if k in train})
    return params


def _check_model(cfg: Mapping[str, Any]) -> None:
    """Every hyper-parameter of the model, checked without training (one line on a bad one)."""
    model, data = cfg.get("model") or {}, cfg.get("data") or {}
    name = model.get("name")
    task = data.get("task")
    if task is None:
        from pilid.data import DATASETS

        spec = DATASETS.get(str(data.get("name")))
        task = getattr(spec, "task", None)
    if not isinstance(name, str) or task not in ("regression", "classification"):
        return  # the runner reports an unknown model or task when it loads them
    from pilid.experiments.model_config import check_model

    check_model(model, task, cfg.get("train") or {})


def _resolved_enough(cfg: dict[str, Any]) -> dict[str, Any]:
    """The config with its interpolations resolved where they can be (``${gamma}``, env)."""
    cfg = {k: v for k, v in cfg.items() if k != "hydra"}
    try:
        return OmegaConf.to_container(OmegaConf.create(cfg), resolve=True)
    except Exception:  # an unresolvable key is reported by the runner, naming it
        return cfg


def _check_gamma(key: str, gamma) -> None:
    if gamma == "auto":  # model.gamma of model=pilid_lib: a rule of the training rows
        return
    if isinstance(gamma, bool) or not isinstance(gamma, int) or gamma < 1:
        raise PilidError(
            f"{key}={gamma!r} is invalid; the number of pieces per feature must be a whole "
            "number >= 1 (gamma=1 is a linear model; the paper uses 1, 5, 10, 15, 20); "
            "model=pilid_lib also takes model.gamma=auto"
        )
