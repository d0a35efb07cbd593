"""The levers measured on the development suite and not adopted live in the studies
(`studies._levers`), not in the library: they are no parameters of PiLiD and no config keys;
the studies' classes take PiLiD's parameters and the levers (checked, kept by ``clone``) and at
the levers' neutral values fit what PiLiD fits. Each lever's own behaviour is checked in its
file (``test_schedule``, ``test_deep_bins``, ``test_min_frequency``, ``test_bag_validation``,
``test_shared_deep``, ``test_choice_members``)."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone

from pilid import PiLiDClassifier, PiLiDRegressor
from pilid import hyperparameters as hp
from pilid.models.params import ParamError, validate_params
from pilid.schema import section_fields
from studies._levers import LEVERS, PiLiDLeverClassifier, PiLiDLeverRegressor, with_levers

ROOT = Path(__file__).resolve().parent.parent
NAMES = [
    "schedule",
    "lr_decay",
    "bag_validation",
    "deep_bins",
    "deep_ensemble",
    "min_frequency",
    "choice_members",
    "deep_min_rows",
    "lam_choice",
    "deep_embedding",
    "deep_dropout",
    "keep",
    "deep_clip",
    "deep_heads",
]


@pytest.mark.parametrize("cls", [PiLiDRegressor, PiLiDClassifier])
def test_the_levers_are_no_parameters_of_pilid_and_the_studies_class_takes_them(cls):
    assert [p.name for p in LEVERS] == NAMES
    for p in LEVERS:
        assert p.name not in cls().get_params()
        assert p.name not in section_fields("model", "pilid_lib")
        with pytest.raises(TypeError, match=p.name):
            cls(**{p.name: p.default})
    lever_cls = with_levers(cls)
    assert issubclass(lever_cls, cls)
    assert {with_levers(PiLiDRegressor), with_levers(PiLiDClassifier)} == {
        PiLiDLeverRegressor,
        PiLiDLeverClassifier,
    }
    params = lever_cls(gamma=3, schedule="additive_first").get_params()
    assert set(params) == set(cls().get_params()) | set(NAMES)
    assert params["gamma"] == 3 and params["schedule"] == "additive_first"
    assert {name: params[name] for name in NAMES if name != "schedule"} == {
        p.name: p.default for p in LEVERS if p.name != "schedule"
    }
    copy = clone(lever_cls(deep_bins=4, lr_decay=0.5)).set_params(bag_validation="own")
    assert (copy.deep_bins, copy.lr_decay, copy.bag_validation) == (4, 0.5, "own")
    with pytest.raises(ParamError, match="deep_bins=1 is invalid"):
        validate_params(lever_cls(deep_bins=1))


def test_the_studies_class_lists_pilids_parameters_then_the_levers_by_keyword():
    """An explicit ``__init__`` (no patched signature): PiLiD's parameters in its order with
    its defaults, then each lever keyword-only at its neutral value, so that a new parameter
    of PiLiD that the studies' class lacks fails here."""
    pilid = list(inspect.signature(PiLiDRegressor.__init__).parameters.values())
    ours = list(inspect.signature(PiLiDLeverRegressor.__init__).parameters.values())
    assert ours[: len(pilid)] == pilid
    levers = ours[len(pilid) :]
    assert [(p.name, p.kind, p.default) for p in levers] == [
        (p.name, inspect.Parameter.KEYWORD_ONLY, p.default) for p in LEVERS
    ]
    assert "__signature__" not in vars(PiLiDLeverRegressor.__init__)


def test_at_the_neutral_levers_the_studies_class_fits_what_pilid_fits():
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(200, 3)), columns=["a", "b", "c"])
    X["d"] = pd.Categorical(rng.choice(list("pqrs"), 200, p=[0.5, 0.3, 0.17, 0.03]))
    y = np.sin(X["a"]) + X["b"] * X["c"] + (X["d"] == "s") + 0.1 * rng.normal(size=200)
    common = dict(gamma=4, hidden_layers=(8,), n_bags=3, epochs=4, pairs="auto", random_state=1)
    public = PiLiDRegressor(**common).fit(X, y)
    ours = PiLiDLeverRegressor(**common).fit(X, y)
    np.testing.assert_array_equal(ours.predict(X), public.predict(X))
    pd.testing.assert_frame_equal(ours.shape_choice_, public.shape_choice_)
    labels = (y > np.median(y)).astype(int)
    public = PiLiDClassifier(**common).fit(X, labels)
    ours = PiLiDLeverClassifier(**common).fit(X, labels)
    np.testing.assert_array_equal(ours.predict_proba(X), public.predict_proba(X))


def test_the_library_names_no_lever_and_declares_none():
    assert not hasattr(hp, "LEVERS") and not hasattr(hp, "lever")
    assert "lever" not in hp.WHERE
    named = [
        f"{path.relative_to(ROOT)}:{number}"
        for path in sorted((ROOT / "pilid").rglob("*"))
        if path.suffix in (".py", ".md") and path.is_file()
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if re.search(r"lever", line, flags=re.I)
    ]
    assert named == []
