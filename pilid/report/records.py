"""What the report reads: the trial records, and the grid of settings each experiment configures.

A *setting* here is what a table cell stands for: data set (+ task, N, m for synthetic data), model
and the model's ``gamma``/``init`` where it has them. Cells are filled by matching records on these
fields, not on the record's ``experiment`` name, so that a setting shared by two experiments (the
results store runs it once) fills both tables. The synthetic data's ``generator``
(``data.generator``: ``legendre``, the data module's default, or ``demo``, the authors' demo code)
is part of a setting too, matched exactly: records of one generator never fill the other's cells.
A record without the key was made by the default generator, so ``legendre`` and no key are the
same (both normalise to None). A table's checksum (``data.sha256``, which the runner fills in:
`pilid.experiments.setting.table_identity`) is matched exactly in the same way: the records of
an edited file, or of another file of the same name, never fill the cells of the first.
"""

from __future__ import annotations

import copy
import math
import os
import re
import sys
from dataclasses import dataclass, fields
from pathlib import Path

import numpy as np
import pandas as pd

from pilid.errors import PilidError
from pilid.experiments.grid import job_values, sweep_axes, sweep_params
from pilid.experiments.store import RECORD_KEY, records_path

#: The fields that identify a table cell; ``None`` means "not part of this setting".
SETTING_FIELDS = ("dataset", "task", "N", "m", "model", "gamma", "init")

#: Fields without which a line is not a trial record at all.
IDENTITY_FIELDS = ("experiment", "dataset", "model", "metric")

#: Fields a setting matches exactly where it has them (`Setting.matches`): a rule of pieces and
#: a roughness weight where configured; the generator and a table's checksum, None included.
MATCHED_EXACTLY = ("gamma_rule", "smoothness", "generator", "sha256")

#: Fields a record may lack (older records, real data sets with no task in their config): a
#: record without the field matches any configured value.
LENIENT_FIELDS = ("task", "init")

#: Experiments the report knows how to lay out (``smoke_<name>`` uses the layout of ``<name>``).
TABLE_KINDS = {
    "sim_regression": "sim",
    "sim_classification": "sim",
    "init_significance": "init",
    "real_data": "real",
    "peers": "peers",  # Table 3+ (beyond the paper): Table 3's layout with fit seconds beside
    "skill_shapes": None,  # figure 4 only
}


def notice(message: str) -> None:
    """A one-line note on stderr about something the report skipped."""
    print(f"pilid.report: {message}", file=sys.stderr, flush=True)


def base_experiment(name: str) -> str:
    """``smoke_sim_regression`` -> ``sim_regression`` (smoke variants share the layout)."""
    return name[len("smoke_") :] if name.startswith("smoke_") else name


@dataclass(frozen=True)
class Setting:
    """One configured setting: the fields a record must match to fill its table cell."""

    dataset: str
    model: str
    task: str | None = None
    N: int | None = None
    m: int | None = None
    gamma: int | None = None
    init: str | None = None
    generator: str | None = None  # the synthetic generator; None: the default (legendre)
    sha256: str | None = None  # a table's checksum (data.sha256); None: no table, or none known
    #: A gamma configured as a rule (``"auto"``, not a number): only records made with that rule
    #: fill the cell, not those of a run with a number of pieces (``model.gamma=40``).
    gamma_rule: str | None = None
    #: PiLiD's configured ``smoothness`` (`smoothness_key`): only records made with it fill the
    #: cell, not those of a run with ``model.smoothness=auto`` or another weight; None: any.
    smoothness: str | None = None

    def matches(self, frame: pd.DataFrame) -> np.ndarray:
        """Boolean mask of the rows of a normalised record frame (`normalise_records`: every
        column present) that belong to this setting."""
        mask = np.ones(len(frame), dtype=bool)
        for name in SETTING_FIELDS:
            value = getattr(self, name)
            if value is None:
                continue
            column = frame[name]
            hit = (column == value).fillna(False).to_numpy(dtype=bool)
            if name in LENIENT_FIELDS:
                hit = hit | column.isna().to_numpy(dtype=bool)
            mask = mask & hit
        # matched exactly where configured: a rule of pieces, a roughness weight
        for name in MATCHED_EXACTLY[:2]:
            value = getattr(self, name)
            if value is not None:
                mask = mask & (frame[name] == value).fillna(False).to_numpy(dtype=bool)
        # the generator and a table's checksum are matched exactly, None included
        for name in MATCHED_EXACTLY[2:]:
            value, column = getattr(self, name), frame[name]
            hit = column.isna() if value is None else (column == value).fillna(False)
            mask = mask & hit.to_numpy(dtype=bool)
        return mask


@dataclass
class ExperimentGrid:
    """The settings an experiment config sweeps, in sweep order, and its trials per setting."""

    name: str
    trials: int
    settings: list[Setting]
    from_records: bool = False  # no experiment config: the settings the records hold

    @property
    def kind(self) -> str | None:
        """The table layout: the paper table's, or for an experiment without a config of its
        own (``adhoc`` runs, a user's models and tables) Table 3's: rows = models, columns =
        data sets."""
        base = base_experiment(self.name)
        if base in TABLE_KINDS:
            return TABLE_KINDS[base]
        return "real" if self.from_records else None


# -- records --------------------------------------------------------------------------------------
def results_root(path: str | os.PathLike) -> Path:
    """The results directory (where ``artifacts/`` lives) for a directory or records file."""
    return records_path(path).parent


def _int_or_none(value):
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def _integers(values: pd.Series) -> pd.Series:
    """Whole numbers as nullable ``Int64`` (anything else becomes <NA>)."""
    numbers = pd.to_numeric(values.astype(object), errors="coerce").astype(float)
    whole = numbers.where(np.isfinite(numbers) & (numbers == np.round(numbers)))
    return whole.astype("Int64")


#: The synthetic generator a record without ``data.generator`` used (`pilid.data.synthetic`).
DEFAULT_GENERATOR = "legendre"


def generator_key(value) -> str | None:
    """A record's or config's ``data.generator`` as a setting holds it: None for the default."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    value = str(value)
    return None if value == DEFAULT_GENERATOR else value


def _param(params, key):
    return params.get(key) if isinstance(params, dict) else None


#: Record fields kept as they are (what the compute summary of REPRODUCTION.md reads).
PASSTHROUGH_FIELDS = ("fit_seconds", "fit_mode", "layout", "device", "versions", "finished_at")


def smoothness_key(value) -> str:
    """PiLiD's ``smoothness`` as one comparable string: a rule as it is (``"auto"``), a weight as
    a float's repr; a record without the key (made before it existed) has the weight that
    reproduces it, 0 (`pilid.experiments.setting.KEYS_ADDED_AT_IDENTITY`)."""
    if value is None:
        return repr(0.0)
    return value if isinstance(value, str) else repr(float(value))


def _rule(gamma) -> str | None:
    """A gamma given as a rule (a string such as ``"auto"``), else None."""
    return gamma if isinstance(gamma, str) else None


def normalise_records(raw: pd.DataFrame) -> pd.DataFrame:
    """One row per record with flat setting columns (``gamma``/``init`` taken from ``params``,
    ``generator`` and ``sha256`` from ``data``).

    Columns: ``experiment, dataset, task, N, m, model, gamma, gamma_rule, smoothness, init,
    generator, sha256, trial, seed, metric, value, setting_id, data, params`` and, where the records
    have them, ``fit_seconds, fit_mode, layout, device, versions, finished_at``; integer
    columns use pandas' nullable ``Int64``.
    """
    frame = pd.DataFrame(index=raw.index)
    for column in ("experiment", "dataset", "task", "model", "metric", "setting_id"):
        values = raw[column] if column in raw else pd.Series(None, index=raw.index)
        frame[column] = values.astype("object").where(values.notna(), None)
    params = raw["params"] if "params" in raw else pd.Series([{}] * len(raw), index=raw.index)
    frame["params"] = params
    frame["data"] = raw["data"] if "data" in raw else pd.Series([{}] * len(raw), index=raw.index)
    for column in ("N", "m", "trial", "seed"):
        values = raw[column] if column in raw else pd.Series(None, index=raw.index)
        frame[column] = _integers(values)
    frame["gamma"] = _integers(params.map(lambda p: _param(p, "gamma")))
    frame["gamma_rule"] = params.map(lambda p: _rule(_param(p, "gamma"))).astype(object)
    frame["init"] = params.map(lambda p: _param(p, "init")).astype(object)
    frame["smoothness"] = params.map(lambda p: smoothness_key(_param(p, "smoothness")))
    generators = frame["data"].map(lambda d: generator_key(_param(d, "generator")))
    frame["generator"] = generators.astype(object)
    checksums = frame["data"].map(lambda d: _param(d, "sha256") or None)
    frame["sha256"] = checksums.astype(object).where(checksums.notna(), None)
    values = raw["value"] if "value" in raw else pd.Series(None, index=raw.index)
    frame["value"] = pd.to_numeric(values, errors="coerce").astype(float)
    for column in PASSTHROUGH_FIELDS:
        if column in raw:
            frame[column] = raw[column]
    return frame.reset_index(drop=True)


def load_records(path: str | os.PathLike) -> pd.DataFrame:
    """The records under ``path`` (results directory or ``records.jsonl``), normalised.

    Uses ``pilid.experiments.load_results`` (the newest record of each setting and trial). Raises
    ``PilidError`` when there are none.
    """
    from pilid.experiments import load_results

    file = records_path(path)
    if not file.exists():
        raise PilidError(
            f"no records found at {str(path)!r} (expected {str(file)!r}); run an experiment "
            "first (python -m pilid.run -m experiment=<name>) or pass --results <dir>"
        )
    raw = load_results(file)
    if raw.empty:
        raise PilidError(f"{str(file)!r} holds no records; run an experiment into it first")
    frame = normalise_records(raw)
    named = frame[list(IDENTITY_FIELDS)].notna().all(axis=1).to_numpy()
    if not named.any():
        raise PilidError(
            f"{str(file)!r} holds no trial records (none of its {len(frame)} line(s) has "
            f"{', '.join(IDENTITY_FIELDS)}); pass --results a results directory or the "
            "records.jsonl that python -m pilid.run writes"
        )
    return frame


def newest(frame: pd.DataFrame) -> pd.DataFrame:
    """The newest record of each setting and trial (the store's rule, `newest_records`, on a
    frame of records in file order)."""
    return frame.drop_duplicates(subset=list(RECORD_KEY), keep="last")


# -- experiment grids -----------------------------------------------------------------------------
_REFERENCE = re.compile(r"^\$\{([A-Za-z_][\w.]*)\}$")


def _set_dotted(tree: dict, key: str, value) -> None:
    *parents, last = key.split(".")
    for part in parents:
        tree = tree.setdefault(part, {})
    tree[last] = value


def _get_dotted(tree: dict, key: str):
    for part in key.split("."):
        tree = tree[part]
    return tree


def _setting_fields(cfg) -> dict:
    """The setting fields of a composed config (a DictConfig or its plain-dict form)."""
    from omegaconf import DictConfig, OmegaConf

    if isinstance(cfg, DictConfig):
        cfg = OmegaConf.to_container(cfg)
    data, model = dict(cfg.get("data") or {}), dict(cfg.get("model") or {})
    for section in (data, model):
        for key, value in section.items():
            if isinstance(value, str) and "${" in value:
                match = _REFERENCE.match(value)
                if match:  # the common case: a plain reference such as ${gamma}
                    section[key] = _get_dotted(cfg, match[1])
                else:
                    resolved = OmegaConf.to_container(OmegaConf.create(cfg), resolve=True)
                    return _setting_fields(resolved)
    return {
        "dataset": data.get("name"),
        "task": data.get("task"),
        "N": _int_or_none(data.get("N")),
        "m": _int_or_none(data.get("m")),
        "model": model.get("name"),
        "gamma": _int_or_none(model.get("gamma")),
        "gamma_rule": _rule(model.get("gamma")),
        "smoothness": None if "smoothness" not in model else smoothness_key(model["smoothness"]),
        "init": model.get("init"),
        "generator": generator_key(data.get("generator")),
        "sha256": data.get("sha256") or None,
    }


#: Grids already composed in this process, keyed by name, config dir and the config files' state.
_GRID_CACHE: dict[tuple, ExperimentGrid] = {}


def _conf_state(conf_dir: Path) -> tuple:
    """(path, size, mtime) of every config file: a changed file gives another cache key."""
    files = sorted(p for p in conf_dir.rglob("*") if p.is_file())
    return tuple((str(p), p.stat().st_size, p.stat().st_mtime_ns) for p in files)


def experiment_grid(name: str, conf_dir: str | os.PathLike | None = None) -> ExperimentGrid:
    """The settings of ``conf/experiment/<name>.yaml`` (see `compose_experiment_grid`), composed
    once per process and configuration state (composing a large sweep takes seconds)."""
    from pilid.experiments.config import CONF_DIR

    conf_dir = Path(conf_dir or CONF_DIR).resolve()
    key = (name, str(conf_dir), _conf_state(conf_dir))
    if key not in _GRID_CACHE:
        _GRID_CACHE[key] = compose_experiment_grid(name, conf_dir)
    return copy.deepcopy(_GRID_CACHE[key])


def compose_experiment_grid(name: str, conf_dir: str | os.PathLike | None = None) -> ExperimentGrid:
    """Expand ``conf/experiment/<name>.yaml``'s sweep (``hydra.sweeper.params``) into settings,
    in the basic sweeper's order (`pilid.experiments.grid`: the cartesian product of the axes).

    Each value of a config-group axis (``model=...``, ``+experiment/method=...``) is composed
    once and contributes the top-level subtrees it changes; a combination whose axes change the
    same subtree is composed as a whole. Plain keys (``data.N``, ``gamma``, ``model.init``) are
    set on a copy of the combined config.
    """
    from hydra import compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra
    from omegaconf import OmegaConf

    from pilid.experiments.config import CONF_DIR

    conf_dir = Path(conf_dir or CONF_DIR).resolve()
    if not (conf_dir / "experiment" / f"{name}.yaml").exists():
        raise PilidError(f"no experiment config {name!r} in {conf_dir / 'experiment'}")
    if GlobalHydra.instance().is_initialized():  # a Hydra app (or a test) holds the state
        GlobalHydra.instance().clear()
    base_overrides = [f"experiment={name}"]

    def small(cfg) -> dict:
        # data, model and the top-level scalars (e.g. the gamma shortcut) are all that matter
        container = OmegaConf.to_container(cfg)
        keep = ("data", "model")
        return {k: v for k, v in container.items() if k in keep or not isinstance(v, dict)}

    try:
        with initialize_config_dir(config_dir=str(conf_dir), version_base="1.3"):
            base = compose("config", overrides=base_overrides, return_hydra_config=True)
            trials = int(base.trials)
            axes = sweep_axes(sweep_params(base))
            is_group = [(conf_dir / axis.name).is_dir() for axis in axes]
            groups = [axis for axis, group in zip(axes, is_group) if group]
            base_small = small(compose("config", overrides=base_overrides))
            changes = []  # per group axis: {value: {top-level key: subtree}}
            for group in groups:
                axis = {}
                for value in group.parsed:
                    one = small(
                        compose("config", overrides=[*base_overrides, f"{group.key}={value}"])
                    )
                    keys = set(one) | set(base_small)
                    axis[value] = {k: one.get(k) for k in keys if one.get(k) != base_small.get(k)}
                changes.append(axis)
            combined = {}
            for combination in job_values(groups):
                parts = [axis[value] for axis, value in zip(changes, combination)]
                touched = [set(part) for part in parts]
                if sum(map(len, touched)) == len(set().union(*touched)):
                    merged = dict(base_small)
                    for part in parts:
                        merged.update(part)
                else:  # two axes change the same subtree: compose the combination itself
                    overrides = [f"{g.key}={v}" for g, v in zip(groups, combination)]
                    merged = small(compose("config", overrides=[*base_overrides, *overrides]))
                combined[combination] = {k: v for k, v in merged.items() if v is not None}
    finally:
        GlobalHydra.instance().clear()
    settings = []
    for combination in job_values(axes):  # every job of the sweep, in the sweeper's order
        chosen = tuple(v for group, v in zip(is_group, combination) if group)
        cfg = copy.deepcopy(combined[chosen])
        for axis, group, value in zip(axes, is_group, combination):
            if not group:
                _set_dotted(cfg, axis.name, value)
        settings.append(Setting(**_setting_fields(cfg)))
    return ExperimentGrid(name=name, trials=trials, settings=list(dict.fromkeys(settings)))


#: What tells two recorded settings apart in a grid made of records: every field of `Setting`.
RECORDED_FIELDS = (*SETTING_FIELDS, "generator", "sha256", "gamma_rule", "smoothness")


def grid_from_records(name: str, frame: pd.DataFrame) -> ExperimentGrid:
    """A grid for an experiment with no config: its recorded settings (every field of `Setting`
    as recorded, so that two runs that differ in any of them are two settings), max trials
    seen."""
    rows = frame[frame["experiment"] == name]
    settings = []
    names = list(RECORDED_FIELDS)
    for record in rows[names].drop_duplicates().itertuples(index=False):
        values = {f: (None if pd.isna(v) else v) for f, v in zip(names, record)}
        for key in ("N", "m", "gamma"):
            values[key] = _int_or_none(values[key])
        settings.append(Setting(**values))
    trials = int(rows["trial"].max()) + 1 if len(rows) else 1
    return ExperimentGrid(name=name, trials=trials, settings=settings, from_records=True)


def grids_for_records(
    frame: pd.DataFrame, conf_dir: str | os.PathLike | None = None
) -> list[ExperimentGrid]:
    """The grid of every experiment named in the records (from its config where there is one)."""
    from pilid.experiments.config import CONF_DIR

    if conf_dir is not None and not (Path(conf_dir).expanduser() / "experiment").is_dir():
        raise PilidError(
            f"conf_dir {str(conf_dir)!r} has no experiment/ folder; pass the repository's conf/ "
            "directory, or None for the default"
        )
    conf_dir = Path(conf_dir or CONF_DIR).expanduser()
    grids = []
    for name in dict.fromkeys(frame["experiment"].dropna()):
        if (conf_dir / "experiment" / f"{name}.yaml").exists():
            grids.append(experiment_grid(name, conf_dir))
        else:
            grids.append(grid_from_records(name, frame))
    return grids


# -- records of a grid ----------------------------------------------------------------------------
def select_records(frame: pd.DataFrame, grid: ExperimentGrid) -> pd.DataFrame:
    """The records that fill each setting of ``grid``, with a ``cell`` column (setting index).

    Per setting: records with ``trial < grid.trials``; among the record groups (setting ids) that
    match, those written by this experiment win, then the group with most trials, then the one
    written last (a notice says when several groups competed, e.g. runs before and after a
    change of a model's defaults in one results directory).
    """
    parts = []
    in_range = (frame["trial"] < grid.trials).fillna(False).to_numpy(dtype=bool)
    # every setting names its data set and model: match only the rows that have both, on the
    # columns a setting reads (a wide frame is taken once, for the rows that match)
    by_name = frame.groupby(["dataset", "model"], sort=False, dropna=True).indices
    keys = frame[list(dict.fromkeys([*SETTING_FIELDS, *MATCHED_EXACTLY]))]
    for index, setting in enumerate(grid.settings):
        where = by_name.get((setting.dataset, setting.model))
        if where is None:
            continue
        where = where[setting.matches(keys.iloc[where]) & in_range[where]]
        if len(where) == 0:
            continue
        rows = frame.iloc[where]
        if rows["setting_id"].nunique() > 1:
            own = rows[rows["experiment"] == grid.name]
            pool = own if not own.empty else rows
            runs = pool.assign(_row=np.arange(len(pool))).groupby("setting_id", sort=False)
            rank = pd.DataFrame({"trials": runs["trial"].nunique(), "last": runs["_row"].max()})
            counts = rank["trials"]
            chosen = rank.sort_values(["trials", "last"]).index[-1]  # most trials, then newest
            if len(counts) > 1:
                notice(
                    f"{grid.name}: {len(counts)} runs match {describe(setting)}; "
                    f"using setting {chosen} ({counts[chosen]} trials)"
                )
            rows = pool[pool["setting_id"] == chosen]
        rows = newest(rows).copy()
        rows["cell"] = index
        parts.append(rows)
    if not parts:
        return frame.iloc[0:0].assign(cell=pd.Series(dtype="int64"))
    return pd.concat(parts, ignore_index=True)


def describe(setting: Setting) -> str:
    """``dataset=synthetic N=5000 m=10 model=pilid gamma=5`` (fields that are set)."""
    return " ".join(
        f"{f.name}={getattr(setting, f.name)}"
        for f in fields(setting)
        if getattr(setting, f.name) is not None
    )
