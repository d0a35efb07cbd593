"""The paper's figures from stored artefacts (matplotlib, Agg backend; PNG + PDF).

- Figure 3: learned vs true marginal value functions u_j on synthetic data (m=20, N=15000,
  gamma=5 in the paper), mean over trials with a +-1 std band, one figure per initialisation.
- Figure 4: the learned shape of ``Age`` in skill for gamma = 1, 5, 10, 15, 20.
- Figure 5: PiLiB's interaction effects of two spambase feature pairs as heat maps, from the
  grids the runner stores as ``interaction-grid-trial<k>-<feat_a>__<feat_b>.csv``
  (``x_a, x_b, value``: the block part's contribution of the pair on an x_a by x_b grid).

Nothing here trains a model: a figure without data is skipped with a printed notice.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from pilid.report import shapes  # noqa: E402
from pilid.report.records import notice  # noqa: E402

#: The paper's Figure 3 setting and Figure 4/5 choices.
FIG3_SETTING = {"N": 15000, "m": 20, "gamma": 5}
FIG4_GAMMAS = (1, 5, 10, 15, 20)
FIG4_FEATURE = "Age"
FIG5_PAIRS = (
    ("capital_run_length_average", "word_freq_receive"),
    ("word_freq_pm", "word_freq_free"),
)
FORMATS = ("png", "pdf")


def save(fig, out_dir: str | os.PathLike, stem: str) -> list[Path]:
    """Save ``fig`` as ``<stem>.png`` and ``<stem>.pdf`` under ``out_dir``; close it."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for fmt in FORMATS:
        path = out / f"{stem}.{fmt}"
        fig.savefig(path, dpi=150, bbox_inches="tight")
        paths.append(path)
    plt.close(fig)
    return paths


def _trial_shapes(root, records: pd.DataFrame) -> list[pd.DataFrame]:
    out = []
    for record in records.itertuples(index=False):
        frame = shapes.read_shapes(root, record.setting_id, record.trial)
        if frame is not None:
            out.append(frame)
    return out


def average_shape(trials: list[pd.DataFrame], feature: str, n_points: int = shapes.GRID_POINTS):
    """(grid, mean, std) of one feature's learned shape over trials, each interpolated onto a
    common dense grid over the union of the trials' ranges (std is 0 for a single trial)."""
    parts = [t[t["feature"] == feature] for t in trials]
    parts = [p for p in parts if len(p)]
    if not parts:
        return None
    lo = min(float(p["x_original"].min()) for p in parts)
    hi = max(float(p["x_original"].max()) for p in parts)
    grid = np.linspace(lo, hi, n_points)
    curves = np.stack([shapes.interpolate(p, grid) for p in parts])
    std = curves.std(axis=0, ddof=1) if len(curves) > 1 else np.zeros(n_points)
    return grid, curves.mean(axis=0), std


def _synthetic_pilid(records: pd.DataFrame) -> pd.DataFrame:
    mask = (
        (records["dataset"] == "synthetic")
        & (records["model"] == "pilid")
        & (records["task"].fillna("regression") == "regression")
    )
    return records[mask.fillna(False).to_numpy(dtype=bool)]


def choose_fig3_setting(records: pd.DataFrame, target: dict = FIG3_SETTING) -> dict | None:
    """The (N, m, gamma) of Figure 3: the paper's when run, else the nearest one recorded
    (same gamma first, then m, then N), preferring settings run with both initialisations."""
    pool = _synthetic_pilid(records)
    if pool.empty:
        return None
    keys = pool[["N", "m", "gamma"]].dropna().drop_duplicates()
    inits = pool.groupby(["N", "m", "gamma"])["init"].nunique()
    best, best_key = None, None
    for N, m, gamma in keys.itertuples(index=False):
        key = (
            -int(inits.get((N, m, gamma), 0)),
            int(gamma) != target["gamma"],
            abs(int(m) - target["m"]),
            abs(math.log(max(int(N), 1)) - math.log(target["N"])),
        )
        if best_key is None or key < best_key:
            best, best_key = {"N": int(N), "m": int(m), "gamma": int(gamma)}, key
    return best


def figure_simulation_shapes(
    records: pd.DataFrame,
    root: str | os.PathLike,
    out_dir: str | os.PathLike,
    setting: dict | None = None,
    evaluator=None,
    n_cols: int = 5,
) -> list[Path]:
    """Figure 3: learned (dashed black, mean +- std band over trials) vs true (solid blue)
    marginal value functions, both centred on the feature's range; one figure per init."""
    setting = setting or choose_fig3_setting(records)
    if setting is None:
        notice("figure 3: no PiLiD runs on synthetic regression data; skipped")
        return []
    if setting != FIG3_SETTING:
        notice(f"figure 3: the paper's setting {FIG3_SETTING} was not run; drawing {setting}")
    evaluator = evaluator or shapes.evaluator_for
    pool = _synthetic_pilid(records)
    pool = pool[
        ((pool["N"] == setting["N"]) & (pool["m"] == setting["m"]))
        .fillna(False)
        .to_numpy(dtype=bool)
    ]
    pool = pool[(pool["gamma"] == setting["gamma"]).fillna(False).to_numpy(dtype=bool)]
    written = []
    for init in dict.fromkeys(pool["init"].dropna()):
        arm = pool[pool["init"] == init]
        arm = arm.drop_duplicates(subset=["setting_id", "trial"], keep="last")
        trials = _trial_shapes(root, arm)
        if not trials:
            notice(f"figure 3 ({init}): no stored shapes for {setting}; skipped")
            continue
        data = arm["data"].iloc[0]
        truth = evaluator(dict(data) if isinstance(data, dict) else {})
        features = list(dict.fromkeys(trials[0]["feature"]))
        n_cols = max(1, min(n_cols, len(features)))
        n_rows = math.ceil(len(features) / n_cols)
        fig, axes = plt.subplots(
            n_rows, n_cols, figsize=(2.6 * n_cols, 2.1 * n_rows), squeeze=False
        )
        for ax, feature in zip(axes.ravel(), features):
            grid, mean, std = average_shape(trials, feature)
            true = truth(feature, grid)
            offset = mean.mean()
            ax.plot(grid, true - true.mean(), color="tab:blue", lw=1.5, label="actual")
            ax.plot(grid, mean - offset, color="black", ls="--", lw=1.2, label="learned")
            ax.fill_between(grid, mean - offset - std, mean - offset + std, color="0.6", alpha=0.35)
            ax.set_title(feature, fontsize=8)
            ax.tick_params(labelsize=6)
        for ax in axes.ravel()[len(features) :]:
            ax.axis("off")
        axes[0, 0].legend(fontsize=6, loc="best")
        fig.suptitle(
            f"Learned vs actual marginal value functions, init={init} (N={setting['N']}, "
            f"m={setting['m']}, gamma={setting['gamma']}, {len(trials)} trials)",
            fontsize=10,
        )
        fig.tight_layout()
        written += save(fig, out_dir, f"fig3_simulation_shapes_{init}")
    return written


def figure_skill_age(
    records: pd.DataFrame,
    root: str | os.PathLike,
    out_dir: str | os.PathLike,
    feature: str = FIG4_FEATURE,
    gammas=FIG4_GAMMAS,
) -> list[Path]:
    """Figure 4: PiLiD's learned shape of ``Age`` in skill, one panel per gamma (mean over
    trials, +-1 std band)."""
    pool = records[
        ((records["dataset"] == "skill") & (records["model"] == "pilid"))
        .fillna(False)
        .to_numpy(dtype=bool)
    ]
    panels = []
    for gamma in gammas:
        arm = pool[(pool["gamma"] == gamma).fillna(False).to_numpy(dtype=bool)]
        arm = arm.drop_duplicates(subset=["setting_id", "trial"], keep="last")
        trials = _trial_shapes(root, arm)
        names = {str(f).lower(): str(f) for t in trials for f in t["feature"].unique()}
        if trials and feature.lower() in names:
            panels.append((gamma, average_shape(trials, names[feature.lower()]), len(trials)))
    if not panels:
        notice(f"figure 4: no stored PiLiD shapes of {feature!r} on skill; skipped")
        return []
    missing = [g for g in gammas if g not in {p[0] for p in panels}]
    if missing:
        notice(f"figure 4: no shapes for gamma {missing}; drawing the others")
    fig, axes = plt.subplots(
        1, len(panels), figsize=(2.8 * len(panels), 2.6), squeeze=False, sharey=True
    )
    for ax, (gamma, (grid, mean, std), count) in zip(axes[0], panels):
        ax.plot(grid, mean, color="black", lw=1.5)
        ax.fill_between(grid, mean - std, mean + std, color="0.6", alpha=0.35)
        ax.set_title(f"gamma={gamma} ({count} trials)", fontsize=9)
        ax.set_xlabel(feature, fontsize=8)
        ax.tick_params(labelsize=7)
    axes[0, 0].set_ylabel("contribution u(Age)", fontsize=8)
    fig.suptitle("Learned shape of Age in skill by PiLiD", fontsize=10)
    fig.tight_layout()
    return save(fig, out_dir, "fig4_skill_age")


def average_grid(grids: dict[int, pd.DataFrame]):
    """(x_a values, x_b values, mean value matrix [b, a]) over trials sharing the first trial's
    grid; trials on another grid are left out."""
    first = grids[min(grids)]
    xa = np.sort(first["x_a"].unique())
    xb = np.sort(first["x_b"].unique())
    mats = []
    for frame in grids.values():
        if not (
            np.array_equal(np.sort(frame["x_a"].unique()), xa)
            and np.array_equal(np.sort(frame["x_b"].unique()), xb)
        ):
            continue
        pivot = frame.pivot_table(index="x_b", columns="x_a", values="value", aggfunc="mean")
        mats.append(pivot.reindex(index=xb, columns=xa).to_numpy(float))
    return xa, xb, np.mean(mats, axis=0), len(mats)


def figure_interactions(
    records: pd.DataFrame,
    root: str | os.PathLike,
    out_dir: str | os.PathLike,
    pairs=FIG5_PAIRS,
    dataset: str = "spambase",
) -> list[Path]:
    """Figure 5: PiLiB interaction heat maps of two spambase feature pairs (the paper's pairs
    when stored, else the first two stored pairs)."""
    pool = records[
        ((records["dataset"] == dataset) & (records["model"] == "pilib"))
        .fillna(False)
        .to_numpy(dtype=bool)
    ]
    found: dict[tuple[str, str], dict] = {}
    for setting_id in dict.fromkeys(pool["setting_id"].dropna()):
        for pair, grids in shapes.interaction_grids(root, setting_id).items():
            if len(grids) > len(found.get(pair, {})):
                found[pair] = grids
    if not found:
        notice(
            f"figure 5: no PiLiB interaction grids on {dataset} "
            "(interaction-grid-trial<k>-<a>__<b>.csv); skipped"
        )
        return []
    chosen = [p for p in pairs if p in found] or sorted(found)[:2]
    fig, axes = plt.subplots(1, len(chosen), figsize=(4.2 * len(chosen), 3.4), squeeze=False)
    for ax, (feat_a, feat_b) in zip(axes[0], chosen):
        xa, xb, values, count = average_grid(found[(feat_a, feat_b)])
        limit = float(np.nanmax(np.abs(values))) or 1.0  # symmetric: white = no effect
        mesh = ax.pcolormesh(
            xa, xb, values, shading="nearest", cmap="RdBu_r", vmin=-limit, vmax=limit
        )
        fig.colorbar(mesh, ax=ax, label="interaction effect")
        ax.set_xlabel(feat_a, fontsize=8)
        ax.set_ylabel(feat_b, fontsize=8)
        ax.set_title(f"{feat_a} x {feat_b} ({count} trials)", fontsize=8)
    fig.suptitle(f"Interacting features in {dataset} learned by PiLiB", fontsize=10)
    fig.tight_layout()
    return save(fig, out_dir, "fig5_spambase_interactions")


def build_figures(
    records: pd.DataFrame, root: str | os.PathLike, out_dir: str | os.PathLike, evaluator=None
) -> list[Path]:
    """Every figure the stored artefacts allow (Figures 3-5); the rest are skipped with a
    notice."""
    written = []
    written += figure_simulation_shapes(records, root, out_dir, evaluator=evaluator)
    written += figure_skill_age(records, root, out_dir)
    written += figure_interactions(records, root, out_dir)
    return written
