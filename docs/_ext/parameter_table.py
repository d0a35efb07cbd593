"""The rows of the hyper-parameter page (docs/hyperparameters.md), read from the code.

Plain Python, no Sphinx: each estimator's constructor defaults come from its signature
(`inspect.signature`), and the paper's values from the config the paper's experiments run with
(``conf/model/<name>.yaml`` and the ``train`` block of ``conf/config.yaml``, composed as the
harness composes them); PiLiD's from its declared hyper-parameters
(``pilid.hyperparameters.PILID``, the ``paper`` of each entry, which those configs hold:
``tests/test_pinned_protocol.py``). The directive ``hyperparameters`` of `pilid_docs` puts them
beside the page's own words on when to change each parameter, so that a default on the page
cannot drift from the code.
"""

from __future__ import annotations

import importlib
import inspect
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: Keys of ``conf/config.yaml``'s ``train`` block that are estimator parameters.
TRAIN_KEYS = ("epochs", "batch_size", "lr", "optimizer", "patience", "val_fraction")


def estimator(path: str):
    """The class at the dotted ``path`` (``pilid.PiLiDRegressor``)."""
    module, _, name = path.rpartition(".")
    if not module:
        raise ValueError(f"{path!r} is no dotted path; e.g. pilid.PiLiDRegressor")
    return getattr(importlib.import_module(module), name)


def defaults(cls) -> dict:
    """The constructor's parameters of ``cls`` and their defaults, in signature order."""
    return {name: p.default for name, p in inspect.signature(cls).parameters.items()}


def paper_values(config: str) -> dict:
    """The values the paper's experiments run with: ``conf/model/<config>.yaml`` (its
    ``${gamma}`` from ``conf/config.yaml``) and ``conf/config.yaml``'s ``train`` block; for PiLiD
    (``config="pilid"``) the ``paper`` values of ``pilid.hyperparameters.PILID`` (the same
    values: ``tests/test_pinned_protocol.py``)."""
    if config == "pilid":
        from pilid.hyperparameters import PILID
        from pilid.hyperparameters import paper_values as declared

        return declared(PILID)
    from omegaconf import OmegaConf

    root = OmegaConf.load(ROOT / "conf" / "config.yaml")
    model = OmegaConf.load(ROOT / "conf" / "model" / f"{config}.yaml")
    composed = OmegaConf.create({"gamma": root.get("gamma"), "model": model})
    values = OmegaConf.to_container(composed, resolve=True)["model"]
    values = {k: v for k, v in values.items() if k not in ("defaults", "name")}
    values = {k: v for k, v in values.items() if k not in ("regressor", "classifier")}
    train = OmegaConf.to_container(root.get("train"), resolve=True)
    values.update({k: train[k] for k in TRAIN_KEYS if k in train})
    return values


def shown(value) -> str:
    """A default or config value as code: a list as a tuple, strings quoted."""
    if isinstance(value, list):
        value = tuple(value)
    return repr(value)


def rows(cls, config: str, words: dict[str, str]) -> tuple[list[tuple[str, str, str, str]], list]:
    """Per constructor parameter of ``cls``: (name, default, the paper's value or ``--``,
    ``words[name]``); and the problems: parameters ``words`` lacks or names in excess."""
    own = defaults(cls)
    paper = paper_values(config)
    problems = [f"{cls.__name__}'s parameter {n} has no line" for n in own if n not in words]
    problems += [f"{n} is no parameter of {cls.__name__}" for n in words if n not in own]
    table = [
        (
            name,
            shown(default),
            shown(paper[name]) if name in paper else "--",
            words.get(name, ""),
        )
        for name, default in own.items()
    ]
    return table, problems


def differences(first, second) -> list[str]:
    """The parameters whose presence or default differs between two estimators."""
    a, b = defaults(first), defaults(second)
    return sorted(n for n in set(a) | set(b) if n not in a or n not in b or a[n] != b[n])


def parse_words(lines: list[str]) -> dict[str, str]:
    """``name | words`` lines (a line that starts with a space continues the one before) as
    ``{name: words}``."""
    words: dict[str, str] = {}
    name = None
    for line in lines:
        if not line.strip():
            continue
        if line[:1].isspace() and name is not None:
            words[name] += " " + line.strip()
            continue
        name, sep, text = line.partition("|")
        if not sep:
            raise ValueError(f"line {line!r}: write `name | when to change it`")
        name = name.strip()
        words[name] = text.strip()
    return words
