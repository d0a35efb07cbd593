"""The paper's four UCI datasets (Section 4.2, Table 2), with the preprocessing written down.

Every loader reads the raw file exactly as UCI ships it (``pilid.data.files``), checks its
SHA-256 (``verify=False``, on the command line ``data.verify=false``, skips the check), applies
only the documented rules, and logs (logger ``pilid.data``) how many rows each rule removed. A
file missing from the data directory is downloaded there from UCI's official archive on first use
and checked (``download=False``, ``data.download=false``, raises instead), like scikit-learn's
``fetch_*`` functions. Numeric columns come back as float64, categorical
ones with pandas ``category`` dtype; scaling and one-hot encoding happen per trial in
``pilid.data.make_split``.
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pandas as pd

from pilid.data import _checks
from pilid.data.dataset import Dataset
from pilid.data.files import (
    RAW_FILES,
    file_sha256,
    locate,
    malformed,
    read_table,
    resolve_data_dir,
    verify_file,
)

log = logging.getLogger("pilid.data")

BIKE_COLUMNS = [
    "instant", "dteday", "season", "yr", "mnth", "hr", "holiday", "weekday", "workingday",
    "weathersit", "temp", "atemp", "hum", "windspeed", "casual", "registered", "cnt",
]  # fmt: skip
BANK_NUMERIC = [
    "age", "duration", "campaign", "pdays", "previous", "emp.var.rate", "cons.price.idx",
    "cons.conf.idx", "euribor3m", "nr.employed",
]  # fmt: skip
BANK_CATEGORICAL = [
    "job", "marital", "education", "default", "housing", "loan", "contact", "month",
    "day_of_week", "poutcome",
]  # fmt: skip
BANK_COLUMNS = [
    "age", "job", "marital", "education", "default", "housing", "loan", "contact", "month",
    "day_of_week", "duration", "campaign", "pdays", "previous", "poutcome", "emp.var.rate",
    "cons.price.idx", "cons.conf.idx", "euribor3m", "nr.employed", "y",
]  # fmt: skip
#: The 57 attribute names of spambase, in file order (from ``spambase.names``).
SPAMBASE_FEATURES = [
    *(
        f"word_freq_{w}"
        for w in (
            "make address all 3d our over remove internet order mail receive will people report "
            "addresses free business email you credit your font 000 money hp hpl george 650 lab "
            "labs telnet 857 data 415 85 technology 1999 parts pm direct cs meeting original "
            "project re edu table conference"
        ).split()
    ),
    *(f"char_freq_{c}" for c in ";([!$#"),
    "capital_run_length_average",
    "capital_run_length_longest",
    "capital_run_length_total",
]
SKILL_COLUMNS = [
    "GameID", "LeagueIndex", "Age", "HoursPerWeek", "TotalHours", "APM", "SelectByHotkeys",
    "AssignToHotkeys", "UniqueHotkeys", "MinimapAttacks", "MinimapRightClicks", "NumberOfPACs",
    "GapBetweenPACs", "ActionLatency", "ActionsInPAC", "TotalMapExplored", "WorkersMade",
    "UniqueUnitsMade", "ComplexUnitsMade", "ComplexAbilitiesUsed",
]  # fmt: skip
#: SkillCraft's only implausible record: GameID 5140 claims 1,000,000 hours played (114 years).
SKILL_OUTLIER_GAME_ID = 5140


def _raw(name: str, data_dir, verify: bool, download: bool) -> tuple[Path, dict]:
    """Locate (fetch when missing and ``download``) the raw file of ``name``; check its SHA-256."""
    raw = RAW_FILES[name]
    verify = _checks.flag("verify", verify)
    download = _checks.flag("download", download)
    path = locate(raw, resolve_data_dir(data_dir), download=download, verify=verify)
    if verify:
        verify_file(path, raw.sha256)
    info = {"source": str(path), "sha256": file_sha256(path) if verify else None}
    return path, info


def _check_rows(path: Path, name: str, frame: pd.DataFrame) -> int:
    expected = RAW_FILES[name].rows
    if len(frame) != expected:
        log.warning(
            "%s: %s has %d data rows, the UCI file has %d", name, path, len(frame), expected
        )
    return len(frame)


def _drop(
    frame: pd.DataFrame, keep: np.ndarray, name: str, rule: str, removed: dict
) -> pd.DataFrame:
    """Apply one documented row rule, log and record how many rows it removed."""
    count = int((~keep).sum())
    removed[rule] = count
    log.info("%s: rule %r removed %d of %d rows", name, rule, count, len(frame))
    return frame.loc[keep].reset_index(drop=True)


def _as_category(values: pd.Series) -> pd.Series:
    """Categorical with the sorted levels that occur (stable one-hot columns across trials)."""
    return values.astype(pd.CategoricalDtype(sorted(values.unique().tolist())))


def load_bike(
    data_dir=None, standardize_target: bool = True, verify: bool = True, download: bool = True
) -> Dataset:
    """Bike Sharing, ``hour.csv`` (regression, MSE): 17,379 rows, 12 raw / 15 encoded features.

    Drops ``instant`` (row id), ``dteday`` (date; its parts are in yr/mnth/weekday/hr) and
    ``casual``/``registered`` (they sum to the target). ``weathersit`` (1-4) is categorical
    (one-hot: 4 columns), the other 11 columns numeric. Target ``cnt``; ``make_split``
    standardises it with training statistics so MSE is in that unit, as in the paper.
    """
    path, info = _raw("bike", data_dir, verify, download)
    numeric = [c for c in BIKE_COLUMNS if c != "dteday"]
    frame = read_table(path, BIKE_COLUMNS, numeric)
    info["rows_raw"] = _check_rows(path, "bike", frame)
    info["rows_removed"] = {}
    features = [c for c in BIKE_COLUMNS if c not in ("instant", "dteday", "casual", "registered")]
    features.remove("cnt")
    X = frame[features].astype(np.float64)
    X["weathersit"] = _as_category(X["weathersit"].astype(np.int64))
    return Dataset(
        name="bike",
        task="regression",
        metric="mse",
        X=X,
        y=frame["cnt"].to_numpy(dtype=np.float64),
        categorical=["weathersit"],
        standardize_target=_checks.flag("standardize_target", standardize_target),
        info=info,
    )


def load_bank(
    data_dir=None, drop_duration: bool = False, verify: bool = True, download: bool = True
) -> Dataset:
    """Bank Marketing, ``bank-additional-full.csv`` (classification, AUC).

    Drops the rows whose ``job`` or ``marital`` is ``"unknown"`` (330 + 71 of 41,188), leaving
    the paper's 40,787 rows (4,594 positives). Target ``y == "yes"``. 20 raw features: 10
    numeric and 10 categorical (``unknown`` stays a level of education/default/housing/loan),
    61 columns once one-hot encoded (60 with ``drop_duration=True``; ``duration`` is known only
    after the call).
    """
    drop_duration = _checks.flag("drop_duration", drop_duration)
    path, info = _raw("bank", data_dir, verify, download)
    frame = read_table(path, BANK_COLUMNS, BANK_NUMERIC, sep=";")
    info["rows_raw"] = _check_rows(path, "bank", frame)
    removed: dict[str, int] = {}
    frame = _drop(frame, (frame["job"] != "unknown").to_numpy(), "bank", "job == unknown", removed)
    frame = _drop(
        frame, (frame["marital"] != "unknown").to_numpy(), "bank", "marital == unknown", removed
    )
    info["rows_removed"] = removed
    labels = frame["y"]
    if not labels.isin(["yes", "no"]).all():
        bad = labels[~labels.isin(["yes", "no"])].iloc[0]
        raise malformed(path, f"target y has value {bad!r}, expected yes/no")
    features = [c for c in BANK_COLUMNS if c != "y" and not (drop_duration and c == "duration")]
    X = pd.DataFrame(
        {
            c: _as_category(frame[c]) if c in BANK_CATEGORICAL else frame[c].astype(np.float64)
            for c in features
        }
    )
    info["drop_duration"] = drop_duration
    return Dataset(
        name="bank",
        task="classification",
        metric="auc",
        X=X,
        y=(labels == "yes").to_numpy().astype(np.int64),
        categorical=list(BANK_CATEGORICAL),
        info=info,
    )


def load_spambase(data_dir=None, verify: bool = True, download: bool = True) -> Dataset:
    """Spambase, ``spambase.data`` (classification, AUC): 4,601 rows, 57 numeric features.

    No header; the last column is the label (1 = spam, 1,813 rows). Names from spambase.names.
    """
    path, info = _raw("spambase", data_dir, verify, download)
    columns = [*SPAMBASE_FEATURES, "spam"]
    frame = read_table(path, columns, columns, header=False)
    info["rows_raw"] = _check_rows(path, "spambase", frame)
    info["rows_removed"] = {}
    labels = frame["spam"].to_numpy()
    if not np.isin(labels, [0.0, 1.0]).all():
        raise malformed(path, "the last column (the label) must be 0 or 1")
    return Dataset(
        name="spambase",
        task="classification",
        metric="auc",
        X=frame[SPAMBASE_FEATURES].astype(np.float64),
        y=labels.astype(np.int64),
        categorical=[],
        info=info,
    )


def load_skill(
    data_dir=None, drop_outlier: bool = False, verify: bool = True, download: bool = True
) -> Dataset:
    """SkillCraft1, ``SkillCraft1_Dataset.csv`` (classification, AUC).

    ``"?"`` marks a missing value. Rules, in order: keep LeagueIndex 1-6 (drops 35 Grandmaster
    and 55 professional rows; the professional rows are the ones lacking Age/HoursPerWeek/
    TotalHours), then drop rows with a missing value (2 more) -> 3,303 rows. Label 1 for
    LeagueIndex >= 4 (Platinum and above; 2,236 rows), 0 for 1-3. Features: the 18 columns other
    than GameID and LeagueIndex. ``drop_outlier=True`` also drops GameID 5140 (TotalHours =
    1,000,000), giving the paper's 3,302 rows.
    """
    drop_outlier = _checks.flag("drop_outlier", drop_outlier)
    path, info = _raw("skill", data_dir, verify, download)
    missing = {c: "?" for c in SKILL_COLUMNS if c not in ("GameID", "LeagueIndex")}
    frame = read_table(path, SKILL_COLUMNS, SKILL_COLUMNS, missing=missing)
    info["rows_raw"] = _check_rows(path, "skill", frame)
    league = frame["LeagueIndex"].to_numpy()
    if not np.isin(league, np.arange(1, 9)).all():
        raise malformed(path, "LeagueIndex must be a whole number 1-8")
    removed: dict[str, int] = {}
    frame = _drop(frame, league <= 6, "skill", "LeagueIndex in 7-8", removed)
    frame = _drop(frame, frame.notna().all(axis=1).to_numpy(), "skill", "missing value", removed)
    if drop_outlier:
        keep = (frame["GameID"] != SKILL_OUTLIER_GAME_ID).to_numpy()
        frame = _drop(frame, keep, "skill", f"GameID == {SKILL_OUTLIER_GAME_ID}", removed)
    info["rows_removed"] = removed
    features = [c for c in SKILL_COLUMNS if c not in ("GameID", "LeagueIndex")]
    return Dataset(
        name="skill",
        task="classification",
        metric="auc",
        X=frame[features].astype(np.float64),
        y=(frame["LeagueIndex"].to_numpy() >= 4).astype(np.int64),
        categorical=[],
        info=info,
    )
