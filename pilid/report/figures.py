"""The paper's figures from stored artefacts (matplotlib; PNG + PDF).

- Figure 3: learned vs true marginal value functions u_j on synthetic data (m=20, N=15000,
  gamma=5 in the paper), mean over trials with a +-1 std band, one figure per initialisation.
- Figure 4: the learned shape of ``Age`` in skill for gamma = 1, 5, 10, 15, 20.
- Figure 5: PiLiB's interaction effects of two spambase feature pairs as heat maps, from the
  grids the runner stores as ``interaction-grid-trial<k>-<feat_a>__<feat_b>.csv``
  (``x_a, x_b, value``: the block part's contribution of the pair on an x_a by x_b grid).
- ``paper_vs_ours``: every cell of the paper's tables that we ran, the paper's value against ours
  (one marker per cell, coloured by table, the diagonal drawn; MSE and AUC in separate panels).
- ``peers_shapes_skill`` (Table 3+, beyond the paper): the shapes of skill's four most important
  features as PiLiD (library defaults), EBM and APLR learned them in experiment ``peers``, the
  models as lines on the same axes (`figure_peers_shapes`).

Nothing here trains a model: a figure without data is skipped with a printed notice, and
`build_figures` ends with one notice naming every figure it could not draw. Files are
deterministic: PNG and PDF are saved without dates or version strings (``METADATA``), so a
rebuild on the same matplotlib gives the same bytes. The figures are `matplotlib.figure.Figure`
objects, never pyplot's: importing or running this module neither changes the user's backend
nor opens a window, and a figure is freed when it is saved. Shapes and heat maps are drawn by
the displays of `pilid.inspection.displays` (`ShapeDisplay`, `InteractionDisplay`), as the
estimators' own plots are.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from pilid.atomic import replacing
from pilid.experiments.artefacts import GRID_KIND, artefact_path
from pilid.inspection.displays import ShapeDisplay, plain_text
from pilid.inspection.interaction_display import InteractionDisplay
from pilid.report import shapes
from pilid.report.labels import model_label
from pilid.report.records import ExperimentGrid, newest, notice, select_records

#: The paper's Figure 3 setting and Figure 4/5 choices.
FIG3_SETTING = {"N": 15000, "m": 20, "gamma": 5}
FIG4_GAMMAS = (1, 5, 10, 15, 20)
FIG4_FEATURE = "Age"
FIG5_PAIRS = (
    ("capital_run_length_average", "word_freq_receive"),
    ("word_freq_pm", "word_freq_free"),
)
FORMATS = ("png", "pdf")
#: Fixed file metadata: no creation date, no library version (PNG's ``Software``, PDF's
#: ``Producer``), so that the same figure gives the same bytes.
METADATA = {
    "png": {"Software": None},
    "pdf": {"Creator": "pilid.report", "Producer": None, "CreationDate": None},
}
#: Every figure stem `build_figures` can draw (for the notice of those it could not).
FIGURE_STEMS = {
    "figure 3": ("fig3_simulation_shapes_lstsq", "fig3_simulation_shapes_gaussian"),
    "figure 4": ("fig4_skill_age",),
    "figure 5": ("fig5_spambase_interactions",),
    "peers shapes": ("peers_shapes_skill",),
}


def save(fig, out_dir: str | os.PathLike, stem: str) -> list[Path]:
    """Save ``fig`` as ``<stem>.png`` and ``<stem>.pdf`` under ``out_dir`` with fixed metadata
    (``METADATA``), each replaced atomically (`pilid.atomic`: a report killed while it saves
    leaves the old file whole). The formats' own canvases draw it (no backend needed)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for fmt in FORMATS:
        path = out / f"{stem}.{fmt}"
        with replacing(path) as temporary:
            fig.savefig(temporary, format=fmt, dpi=150, bbox_inches="tight", metadata=METADATA[fmt])
        paths.append(path)
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


def _synthetic_pilid(records: pd.DataFrame, generator=None) -> pd.DataFrame:
    """PiLiD on synthetic regression data, of one generator (shapes of two truths are never
    mixed): ``generator`` where it has records (None: the default generator), else the generator
    with most records (ties: the default generator, then by name)."""
    mask = (
        (records["dataset"] == "synthetic")
        & (records["model"] == "pilid")
        & (records["task"].fillna("regression") == "regression")
    )
    pool = records[mask.fillna(False).to_numpy(dtype=bool)]
    if "generator" not in pool.columns or pool.empty:
        return pool
    keys = pool["generator"].map(lambda g: "" if g is None or pd.isna(g) else str(g))
    wanted = "" if generator is None else str(generator)
    if not (keys == wanted).any():
        counts = keys.value_counts()
        wanted = min(counts.index, key=lambda k: (-int(counts[k]), k))
    return pool[(keys == wanted).to_numpy(dtype=bool)]


def choose_fig3_setting(
    records: pd.DataFrame, target: dict = FIG3_SETTING, generator=None
) -> dict | None:
    """The (N, m, gamma) of Figure 3: the paper's when run, else the nearest one recorded
    (same gamma first, then m, then N), preferring settings run with both initialisations.
    ``generator``: the synthetic generator preferred (see `_synthetic_pilid`)."""
    pool = _synthetic_pilid(records, generator)
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


def fig3_arms(
    records: pd.DataFrame, setting: dict | None = None, generator=None
) -> tuple[dict | None, list[tuple[str, pd.DataFrame]]]:
    """Figure 3's setting and its records per initialisation: ``(setting, [(init, records)])``
    (one record per trial, the newest)."""
    setting = setting or choose_fig3_setting(records, generator=generator)
    if setting is None:
        return None, []
    pool = _synthetic_pilid(records, generator)
    pool = pool[
        ((pool["N"] == setting["N"]) & (pool["m"] == setting["m"]))
        .fillna(False)
        .to_numpy(dtype=bool)
    ]
    pool = pool[(pool["gamma"] == setting["gamma"]).fillna(False).to_numpy(dtype=bool)]
    arms = []
    for init in dict.fromkeys(pool["init"].dropna()):
        arm = pool[pool["init"] == init]
        arms.append((init, newest(arm)))
    return setting, arms


def figure_simulation_shapes(
    records: pd.DataFrame,
    root: str | os.PathLike,
    out_dir: str | os.PathLike,
    setting: dict | None = None,
    evaluator=None,
    n_cols: int = 5,
    generator=None,
) -> list[Path]:
    """Figure 3: learned (dashed black, mean +- std band over trials) vs true (solid blue)
    marginal value functions, both centred on the feature's range; one figure per init.
    ``generator``: the synthetic generator preferred (the one the paper's experiments use)."""
    setting, arms = fig3_arms(records, setting, generator)
    if setting is None:
        notice("figure 3: no PiLiD runs on synthetic regression data; skipped")
        return []
    if setting != FIG3_SETTING:
        notice(f"figure 3: the paper's setting {FIG3_SETTING} was not run; drawing {setting}")
    evaluator = evaluator or shapes.evaluator_for
    written = []
    for init, arm in arms:
        trials = _trial_shapes(root, arm)
        if not trials:
            notice(f"figure 3 ({init}): no stored shapes for {setting}; skipped")
            continue
        data = arm["data"].iloc[0]
        truth = evaluator(dict(data) if isinstance(data, dict) else {})
        features = list(dict.fromkeys(trials[0]["feature"]))
        n_cols = max(1, min(n_cols, len(features)))
        n_rows = math.ceil(len(features) / n_cols)
        fig = Figure(figsize=(2.6 * n_cols, 2.1 * n_rows))
        axes = fig.subplots(n_rows, n_cols, squeeze=False)
        for ax, feature in zip(axes.ravel(), features):
            grid, mean, std = average_shape(trials, feature)
            true = truth(feature, grid)
            ax.plot(grid, true - true.mean(), color="tab:blue", lw=1.5, label="actual")
            _draw_mean_shape(ax, feature, grid, mean - mean.mean(), std, LEARNED_STYLE)
            ax.set_title(plain_text(feature), fontsize=8)
            ax.tick_params(labelsize=6)
        for ax in axes.ravel()[len(features) :]:
            ax.axis("off")
        axes[0, 0].legend(fontsize=6, loc="best")
        fig.suptitle(
            f"Learned vs actual marginal value functions, init={plain_text(init)} "
            f"(N={setting['N']}, m={setting['m']}, gamma={setting['gamma']}, {len(trials)} trials)",
            fontsize=10,
        )
        fig.tight_layout()
        written += save(fig, out_dir, f"fig3_simulation_shapes_{init}")
    return written


#: Figure 3's learned curve (the true one is solid blue) and the +-1 std band of Figures 3-4
#: (outlined: ``lw`` None is matplotlib's default edge).
LEARNED_STYLE = {"color": "black", "ls": "--", "lw": 1.2, "label": "learned"}
BAND = {"color": "0.6", "alpha": 0.35, "lw": None, "label": "_nolegend_"}


def _draw_mean_shape(ax, feature: str, grid, mean, std, style: dict) -> ShapeDisplay:
    """A feature's mean shape over trials (on a dense `grid`) with its +-`std` band, drawn on
    `ax` by `ShapeDisplay` (no markers, no line at 0; the caller sets title and ticks)."""
    table = pd.DataFrame(
        {"feature": feature, "x": grid, "value": mean, "lower": mean - std, "upper": mean + std}
    )
    return ShapeDisplay(table).plot(
        ax=ax, line_kw={"marker": None, **style}, band_kw=BAND, reference_line=False
    )


def fig4_arms(records: pd.DataFrame, gammas=FIG4_GAMMAS) -> list[tuple[int, pd.DataFrame]]:
    """PiLiD's records on skill per gamma of Figure 4 (one record per trial, the newest)."""
    pool = records[
        ((records["dataset"] == "skill") & (records["model"] == "pilid"))
        .fillna(False)
        .to_numpy(dtype=bool)
    ]
    arms = []
    for gamma in gammas:
        arm = pool[(pool["gamma"] == gamma).fillna(False).to_numpy(dtype=bool)]
        arms.append((gamma, newest(arm)))
    return arms


def figure_skill_age(
    records: pd.DataFrame,
    root: str | os.PathLike,
    out_dir: str | os.PathLike,
    feature: str = FIG4_FEATURE,
    gammas=FIG4_GAMMAS,
) -> list[Path]:
    """Figure 4: PiLiD's learned shape of ``Age`` in skill, one panel per gamma (mean over
    trials, +-1 std band)."""
    panels = []
    for gamma, arm in fig4_arms(records, gammas):
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
    fig = Figure(figsize=(2.8 * len(panels), 2.6))
    axes = fig.subplots(1, len(panels), squeeze=False, sharey=True)
    for ax, (gamma, (grid, mean, std), count) in zip(axes[0], panels):
        _draw_mean_shape(ax, feature, grid, mean, std, {"color": "black", "lw": 1.5})
        ax.set_title(f"gamma={gamma} ({count} trials)", fontsize=9)
        ax.set_xlabel(plain_text(feature), fontsize=8)
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


def fig5_choice(
    records: pd.DataFrame, root: str | os.PathLike, pairs=FIG5_PAIRS, dataset: str = "spambase"
) -> list[tuple[tuple[str, str], str, dict]]:
    """Figure 5's panels: ``[((feat_a, feat_b), setting_id, {trial: grid})]``, the paper's pairs
    when stored, else the first two stored pairs; each pair from the PiLiB setting on ``dataset``
    with most trials stored for it."""
    pool = records[
        ((records["dataset"] == dataset) & (records["model"] == "pilib"))
        .fillna(False)
        .to_numpy(dtype=bool)
    ]
    found: dict[tuple[str, str], tuple[str, dict]] = {}
    for setting_id in dict.fromkeys(pool["setting_id"].dropna()):
        for pair, grids in shapes.interaction_grids(root, setting_id).items():
            if len(grids) > len(found.get(pair, ("", {}))[1]):
                found[pair] = (str(setting_id), grids)
    chosen = [p for p in pairs if p in found] or sorted(found)[:2]
    return [(pair, *found[pair]) for pair in chosen]


def figure_interactions(
    records: pd.DataFrame,
    root: str | os.PathLike,
    out_dir: str | os.PathLike,
    pairs=FIG5_PAIRS,
    dataset: str = "spambase",
) -> list[Path]:
    """Figure 5: PiLiB interaction heat maps of two spambase feature pairs (the paper's pairs
    when stored, else the first two stored pairs)."""
    panels = fig5_choice(records, root, pairs, dataset)
    if not panels:
        notice(
            f"figure 5: no PiLiB interaction grids on {dataset} "
            "(interaction-grid-trial<k>-<a>__<b>.csv); skipped"
        )
        return []
    chosen = [pair for pair, _, _ in panels]
    found = {pair: grids for pair, _, grids in panels}
    fig = Figure(figsize=(4.2 * len(chosen), 3.4))
    axes = fig.subplots(1, len(chosen), squeeze=False)
    for ax, (feat_a, feat_b) in zip(axes[0], chosen):
        xa, xb, values, count = average_grid(found[(feat_a, feat_b)])
        title = f"{plain_text(feat_a)} x {plain_text(feat_b)} ({count} trials)"
        InteractionDisplay(xa, xb, values, feat_a, feat_b).plot(
            ax, "RdBu_r", title, "interaction effect", label_size=8, title_size=8
        )
    fig.suptitle(f"Interacting features in {plain_text(dataset)} learned by PiLiB", fontsize=10)
    fig.tight_layout()
    return save(fig, out_dir, "fig5_spambase_interactions")


# -- Table 3+'s shapes (beyond the paper) ---------------------------------------------------------
#: The experiment, data set and models of the peers' shape figure: PiLiD with the library's
#: defaults first (it ranks the features), then the peers whose shapes the runner stores
#: (`pilid.inspection.peer_shapes`). IGANN is not offered on this stack (README, "Table 3+").
PEERS_EXPERIMENT = "peers"
PEERS_SHAPE_DATASET = "skill"
PEERS_SHAPE_MODELS = ("pilid_lib", "ebm", "aplr")
PEERS_SHAPE_FEATURES = 4
PEERS_SHAPES_STEM = "peers_shapes_skill"


def peers_shape_arms(
    records: pd.DataFrame,
    conf_dir: str | os.PathLike | None = None,
    grid: ExperimentGrid | None = None,
    models=PEERS_SHAPE_MODELS,
    dataset: str = PEERS_SHAPE_DATASET,
) -> tuple[int | None, list[tuple[str, pd.DataFrame]]]:
    """The peers' shape figure's records: ``(configured trials, [(model, records)])``, each
    model's records those that fill its setting of ``dataset`` in experiment ``peers`` (the
    table's choice, `pilid.report.records.select_records`: a cell Table 3 ran counts).
    ``(None, [])`` when no model but the first has a record on ``dataset`` (the experiment's
    grid is then not composed). ``grid``: the experiment's grid (default: composed from
    ``conf_dir``)."""
    recorded = records[
        ((records["dataset"] == dataset) & records["model"].isin(list(models[1:])))
        .fillna(False)
        .to_numpy(dtype=bool)
    ]
    if recorded.empty:
        return None, []
    if grid is None:
        from pilid.report.records import experiment_grid

        grid = experiment_grid(PEERS_EXPERIMENT, conf_dir)
    arms = []
    for model in models:
        settings = [s for s in grid.settings if s.model == model and s.dataset == dataset]
        if settings:
            one = ExperimentGrid(name=grid.name, trials=grid.trials, settings=settings)
            arms.append((model, select_records(records, one)))
    return grid.trials, arms


def _peer_shapes(records, root, conf_dir=None, grid=None, models=PEERS_SHAPE_MODELS):
    """``(configured trials, {model: [(record, shapes)]})`` of the models with stored shapes."""
    trials, arms = peers_shape_arms(records, conf_dir, grid, models)
    found = {}
    for model, arm in arms:
        pairs = []
        for record in arm.itertuples(index=False):
            frame = shapes.read_shapes(root, record.setting_id, record.trial)
            if frame is not None:
                pairs.append((record, frame))
        if pairs:
            found[model] = pairs
    return trials, found


def rank_features(trials: list[pd.DataFrame], n: int | None = None) -> list[str]:
    """The features of ``trials`` (stored shapes) by the spread (max - min) of their mean shape
    over the trials (`average_shape`), widest first (ties: first stored first); ``n`` at most."""
    features = list(dict.fromkeys(f for t in trials for f in t["feature"]))
    spread = {}
    for feature in features:
        _, mean, _ = average_shape(trials, feature)
        spread[feature] = float(np.max(mean) - np.min(mean))
    ranked = sorted(features, key=lambda f: -spread[f])  # stable: ties keep the stored order
    return ranked if n is None else ranked[:n]


def figure_peers_shapes(
    records: pd.DataFrame,
    root: str | os.PathLike,
    out_dir: str | os.PathLike,
    conf_dir: str | os.PathLike | None = None,
    grid: ExperimentGrid | None = None,
    models=PEERS_SHAPE_MODELS,
    n_features: int = PEERS_SHAPE_FEATURES,
) -> list[Path]:
    """Table 3+'s shapes: skill's ``n_features`` most important features as PiLiD (library
    defaults, ``pilid_lib``), EBM and APLR learned them in experiment ``peers``, one panel per
    feature, the models as lines on the same axes.

    A feature's importance is the spread (max - min) of PiLiD (library defaults)'s mean shape
    (`rank_features`; the first model with stored shapes when PiLiD has none, with a notice).
    Each model's line is its mean shape over the trials with stored shapes, each trial
    interpolated onto one grid in original units (`average_shape`; EBM's steps as stored by
    `pilid.inspection.peer_shapes`), then centred to mean 0 over that grid: PiLiD and EBM centre on
    the training rows and APLR not at all, so only the form is compared, not the level. The
    legend gives each model's trial count, "reduced" when fewer than the experiment's configured
    trials. IGANN, named by the issue, is not offered on this stack (README: why) and is not
    drawn. Skipped with one notice when no peer (EBM, APLR) has stored shapes on skill yet.
    """
    trials_configured, found = _peer_shapes(records, root, conf_dir, grid, models)
    peers = [m for m in models[1:] if m in found]
    if not peers:
        names = ", ".join(model_label(m) for m in models[1:])
        notice(
            f"peers shapes: no stored shapes of {names} on {PEERS_SHAPE_DATASET} "
            f"(experiment {PEERS_EXPERIMENT}); skipped"
        )
        return []
    drawn = [m for m in models if m in found]
    absent = [model_label(m) for m in models if m not in found]
    if absent:
        notice(f"peers shapes: no stored shapes of {', '.join(absent)}; drawing the others")
    ranker = models[0] if models[0] in found else drawn[0]
    if ranker != models[0]:
        notice(f"peers shapes: features ranked by {model_label(ranker)}'s shapes")
    per_model = {m: [frame for _, frame in found[m]] for m in drawn}
    features = rank_features(per_model[ranker], n_features)
    labels, parts = {}, []
    for model in drawn:
        count = len(per_model[model])
        if trials_configured and count < trials_configured:
            labels[model] = f"{model_label(model)}: {count}/{trials_configured} trials (reduced)"
        else:
            labels[model] = f"{model_label(model)}: {count} trials"
        for feature in features:
            averaged = average_shape(per_model[model], feature)
            if averaged is None:
                continue
            grid_x, mean, _ = averaged
            part = {"feature": feature, "x": grid_x, "value": mean - mean.mean()}
            parts.append(pd.DataFrame({"class": labels[model], **part}))
    table = pd.concat(parts, ignore_index=True)
    fig = Figure(figsize=(3.0 * len(features), 2.9))
    axes = fig.subplots(1, len(features), squeeze=False)[0]
    display = ShapeDisplay(table, features=features).plot(
        ax=axes, line_kw={"marker": None, "lw": 1.4}
    )
    if display.legend_ is not None:
        display.legend_.remove()
    for row in display.lines_:  # each line named by its model (and trial count)
        for line, label in zip(row, display.classes_):
            line.set_label(label)
    present = [labels[m] for m in drawn]
    lines = [display.lines_[0, display.classes_.index(label)] for label in present]
    fig.legend(lines, present, loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=len(present))
    axes[0].set_ylabel("contribution (centred)", fontsize=8)
    for ax in axes:  # features in raw units (shares of a second, hours): few ticks, no overlap
        ax.xaxis.set_major_locator(MaxNLocator(nbins=4))
    ranked_by = model_label(ranker)
    fig.suptitle(
        f"Learned shapes of skill's {len(features)} most important features (by the spread of "
        f"{ranked_by}'s mean shape), experiment {PEERS_EXPERIMENT}",
        fontsize=10,
    )
    fig.tight_layout()
    return save(fig, out_dir, PEERS_SHAPES_STEM)


def build_figures(
    records: pd.DataFrame,
    root: str | os.PathLike,
    out_dir: str | os.PathLike,
    evaluator=None,
    generator=None,
    conf_dir: str | os.PathLike | None = None,
) -> list[Path]:
    """Every figure the stored artefacts allow (Figures 3-5, the peers' shapes); the rest are
    skipped with a notice, and one last notice names every figure that could not be drawn.
    ``generator``: the synthetic generator Figure 3 prefers (None: the default one);
    ``conf_dir``: the configs whose experiment ``peers`` the peers' shapes follow (None:
    ``conf/``)."""
    written = []
    written += figure_simulation_shapes(
        records, root, out_dir, evaluator=evaluator, generator=generator
    )
    written += figure_skill_age(records, root, out_dir)
    written += figure_interactions(records, root, out_dir)
    written += figure_peers_shapes(records, root, out_dir, conf_dir=conf_dir)
    drawn = {p.stem for p in written}
    missing = [
        f"{name} ({stem})"
        for name, stems in FIGURE_STEMS.items()
        for stem in stems
        if stem not in drawn
    ]
    if missing:
        notice(f"figures not drawn (no records or artefacts for them): {', '.join(missing)}")
    return written


def figure_artifacts(
    records: pd.DataFrame,
    root: str | os.PathLike,
    generator=None,
    conf_dir: str | os.PathLike | None = None,
) -> list[Path]:
    """Every stored artefact file `build_figures` reads to draw its figures from ``records``
    (sorted, existing files only): the shapes of Figure 3's setting (both initialisations) and
    of Figure 4's skill runs, the interaction grids of Figure 5's two pairs in the setting
    they are drawn from, and, once a peer has stored shapes on skill, the shapes the peers'
    figure reads. With only these files beside the records (a fresh clone, where the
    other artefacts are not committed) the same figures are drawn from the same data."""
    paths: set[Path] = set()
    _, arms = fig3_arms(records, generator=generator)
    for _, arm in [*arms, *fig4_arms(records)]:
        for record in arm.itertuples(index=False):
            path = artefact_path(root, record.setting_id, "shapes", int(record.trial))
            if path.is_file():
                paths.add(path)
    for (feat_a, feat_b), setting_id, grids in fig5_choice(records, root):
        for trial in grids:
            path = artefact_path(root, setting_id, (GRID_KIND, feat_a, feat_b), int(trial))
            if path.is_file():
                paths.add(path)
    _, found = _peer_shapes(records, root, conf_dir)
    if any(model in found for model in PEERS_SHAPE_MODELS[1:]):  # the figure is drawn
        for pairs in found.values():
            for record, _ in pairs:
                paths.add(artefact_path(root, record.setting_id, "shapes", int(record.trial)))
    return sorted(paths)
