"""pilid.data: every dataset of the paper, loaded the same way every time.

``load_dataset(name, data_dir=None, **options) -> Dataset`` and
``make_split(dataset, seed, test_size=0.2) -> Split``. Names: ``synthetic`` (Section 4.1;
``generator="demo"`` is the paper's simulation as the authors' demo code generates it,
``pilid.data.demo``) and the UCI datasets ``bike``, ``bank``, ``spambase``, ``skill``
(Section 4.2), and ``table``: any CSV or Parquet file (``pilid.data.table``). The UCI files
are read from ``data_dir``, else ``$PILID_DATA_DIR``, else
``~/.cache/pilid`` (one sub-folder per dataset); a missing one is downloaded there from UCI's
official archive on first use and checked (``download=False`` / ``data.download=false`` turns
that off).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass

from pilid.data.dataset import Dataset, Split
from pilid.data.demo import DemoTrueShapes, generate_demo
from pilid.data.files import resolve_data_dir
from pilid.data.split import make_split
from pilid.data.synthetic import TrueShapes, generate, load_synthetic
from pilid.data.table import frame_dataset, load_table
from pilid.data.uci import load_bank, load_bike, load_skill, load_spambase
from pilid.errors import PilidError


@dataclass(frozen=True)
class DatasetSpec:
    """A dataset name, its fixed task/metric (None: chosen by an option) and its loader."""

    name: str
    task: str | None
    metric: str | None
    loader: Callable[..., Dataset]
    uses_files: bool = True

    def options(self) -> list[str]:
        """The options ``load_dataset`` accepts for this dataset."""
        return [p for p in inspect.signature(self.loader).parameters if p != "data_dir"]


#: Every dataset ``load_dataset`` knows, keyed by the Hydra ``data=`` name.
DATASETS: dict[str, DatasetSpec] = {
    "synthetic": DatasetSpec("synthetic", None, None, load_synthetic, uses_files=False),
    "bike": DatasetSpec("bike", "regression", "mse", load_bike),
    "bank": DatasetSpec("bank", "classification", "auc", load_bank),
    "spambase": DatasetSpec("spambase", "classification", "auc", load_spambase),
    "skill": DatasetSpec("skill", "classification", "auc", load_skill),
    # any CSV/Parquet file: data=table data.path=... data.target=... data.task=...
    "table": DatasetSpec("table", None, None, load_table, uses_files=False),
}


def load_dataset(name: str, data_dir=None, **options) -> Dataset:
    """Load dataset ``name`` with its documented preprocessing (see ``conf/data/<name>.yaml``).

    Parameters
    ----------
    name : str
        One of `DATASETS`: ``synthetic``, ``bike``, ``bank``, ``spambase``, ``skill``,
        ``table`` (any CSV/Parquet file).
    data_dir : path or None, default=None
        Where the UCI files are (default: ``$PILID_DATA_DIR``, else ``~/.cache/pilid``).
    **options
        The data set's own keys (e.g. ``N``, ``m``, ``noise``, ``data_seed`` for synthetic;
        ``drop_duration`` for bank; ``verify``/``download`` for the UCI files). A UCI data set
        also accepts ``task`` equal to its fixed task, so every key of its YAML can be passed.

    Returns
    -------
    Dataset
        The features, target, task, metric and (synthetic data) the true shapes.

    Raises
    ------
    PilidError
        An unknown name or option (the message lists the valid ones).
    DataFileError
        A missing or corrupt data file.
    """
    spec = DATASETS.get(name)
    if spec is None and "path" in options:  # a table named by a YAML of the user's directory
        spec = DATASETS["table"]
    if spec is None:
        raise PilidError(f"unknown dataset {name!r}; valid names: {', '.join(DATASETS)}")
    if spec.loader is load_table:
        options = {**options, "name": name}
    if spec.task is not None and "task" in options:
        task = options.pop("task")
        if task != spec.task:
            raise PilidError(
                f"dataset {name!r} is a {spec.task} task, not {task!r}; drop the task option"
            )
    valid = spec.options()
    unknown = sorted(set(options) - set(valid))
    if unknown:
        raise PilidError(
            f"unknown option(s) {', '.join(unknown)} for dataset {name!r}; valid options: "
            f"{', '.join(valid)}"
        )
    if spec.uses_files:
        return spec.loader(data_dir=data_dir, **options)
    return spec.loader(**options)


__all__ = [
    "DATASETS",
    "Dataset",
    "DatasetSpec",
    "DemoTrueShapes",
    "Split",
    "TrueShapes",
    "frame_dataset",
    "generate",
    "generate_demo",
    "load_dataset",
    "load_table",
    "make_split",
    "resolve_data_dir",
]
