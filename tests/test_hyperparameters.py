"""PiLiD's hyper-parameters are declared once (`pilid.hyperparameters.PILID`) and read from there:
the constructors' signatures, their checks (`_parameter_constraints`), the Hydra schemas of
``model=pilid`` / ``model=pilid_lib``, the ``model`` entries of ``KEYS_ADDED_AT_IDENTITY`` and
the docstring's defaults.
"""

from __future__ import annotations

import ast
import inspect
import re

import pytest
from sklearn.utils._param_validation import InvalidParameterError, validate_parameter_constraints

from pilid import PiLiDClassifier, PiLiDRegressor
from pilid import hyperparameters as hp
from pilid.errors import PilidError
from pilid.experiments.setting import KEYS_ADDED_AT_IDENTITY
from pilid.models.params import ParamError, Satisfies, sklearn_constraints, validate_params
from pilid.schema import section_fields

CLASSES = [PiLiDRegressor, PiLiDClassifier]
CLASS_KEYS = ("name", "regressor", "classifier")

#: A value each declared parameter refuses (device is checked where it is resolved).
BAD = {
    "gamma": 0,
    "knots": "even",
    "init": "zeros",
    "hidden_layers": [0],
    "sigma": 0.0,
    "reg": "l3",
    "lam": -1.0,
    "reg_groups": "bias",
    "purify": "yes",
    "lr": 0.0,
    "epochs": -1,
    "batch_size": 0,
    "optimizer": "rmsprop",
    "patience": 0,
    "val_fraction": 1.0,
    "random_state": "seed",
    "categorical_features": 3.5,
    "verbose": "loud",
    "n_bags": True,  # a bool is no count
    "monotone_constraints": {"x": 2},
    "deep_categorical": "embed",
    "smoothness": -0.1,
    "pairs": -1,
    "deep_input": "embeddings",
}


@pytest.mark.parametrize("cls", CLASSES)
def test_the_constructor_is_the_declaration_in_its_order(cls):
    signature = inspect.signature(cls).parameters
    assert [(n, p.default) for n, p in signature.items()] == [(p.name, p.default) for p in hp.PILID]
    assert all(p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD for p in signature.values())


@pytest.mark.parametrize("cls", CLASSES)
def test_the_docstring_shows_the_declared_defaults(cls):
    """Each ``name : type, default=value`` line of the Parameters section, read as a literal,
    is the declared default."""
    doc = inspect.getdoc(cls)
    shown = dict(re.findall(r"^(\w+) : .*, default=(.+)$", doc, flags=re.M))
    assert set(shown) == {p.name for p in hp.PILID}
    for p in hp.PILID:
        assert ast.literal_eval(shown[p.name]) == p.default, p.name


@pytest.mark.parametrize("cls", CLASSES)
def test_the_checks_are_the_declared_constraints(cls):
    assert list(cls._parameter_constraints) == [p.name for p in hp.PILID]
    assert set(BAD) == {p.name for p in hp.PILID} - {"device"}
    for p in hp.PILID:  # the default and the paper's value pass
        validate_params(cls(**{p.name: p.default}))
        if p.paper is not hp.UNPINNED:
            validate_params(cls(**{p.name: p.paper}))
    for name, bad in BAD.items():
        with pytest.raises(ParamError) as info:
            validate_params(cls(**{name: bad}))
        assert info.value.key == name and "\n" not in str(info.value)


def test_rules_of_the_rows_and_choices_pass_where_declared():
    for params in (
        {"gamma": "auto"},
        {"gamma": [2, 3, 4]},
        {"lam": "rows"},
        {"smoothness": "auto"},
        {"pairs": [0, 10, 30]},
        {"hidden_layers": None},
        {"patience": None},
        {"reg_groups": ["w", "b"]},
        {"monotone_constraints": {0: 1}},
    ):
        validate_params(PiLiDRegressor(**params))
    with pytest.raises(ParamError, match="lam='auto' is invalid"):
        validate_params(PiLiDRegressor(lam="auto"))  # "auto" is smoothness's, not lam's


def test_the_layer_0_constraints_become_scikit_learns():
    """`sklearn_constraints` on a made-up table, read by scikit-learn's own check."""
    table = (
        hp.Hyperparameter("k", 1, (hp.Integers(1, 5, "both"),), "a count", "none"),
        hp.Hyperparameter("f", 0.5, (hp.Reals(0, 1, "neither"), None), "a share", "none"),
        hp.Hyperparameter(
            "s", "a", (hp.OneOf(("b", "a")), hp.Rule("odd", "an odd int")), "", "none"
        ),
        hp.Hyperparameter("d", "x", ("no_validation",), "unchecked", "none"),
    )
    odd = Satisfies(lambda v: isinstance(v, int) and v % 2 == 1, "an odd int")  # the rule's code
    constraints = sklearn_constraints(table, {"odd": [odd]})
    assert constraints["d"] == "no_validation"

    def ok(**values):
        try:
            validate_parameter_constraints(constraints, values, caller_name="t")
        except InvalidParameterError:
            return False
        return True

    assert ok(k=1) and ok(k=5) and not ok(k=0) and not ok(k=6) and not ok(k=True) and not ok(k=2.0)
    assert ok(f=0.3) and ok(f=None) and not ok(f=0.0) and not ok(f=1.0) and not ok(f=False)
    assert ok(s="a") and ok(s="b") and ok(s=7) and not ok(s=8) and not ok(s="c")
    assert ok(d=object())
    with pytest.raises(InvalidParameterError, match=r"a str among \{'b', 'a'\}"):
        validate_parameter_constraints(constraints, {"s": "c"}, caller_name="t")


def test_the_engines_option_tuples_are_the_declared_ones():
    from pilid.estimators.neural import DEEP_CATEGORICAL, INITS
    from pilid.models.row_rules import LAM_RULES, ROWS
    from pilid.nn.mlp import PAPER_HIDDEN_LAYERS
    from pilid.nn.piecewise import KNOT_METHODS
    from pilid.train.losses import REGS
    from pilid.train.trainer import OPTIMIZERS

    assert hp.options(hp.PILID, "knots") == KNOT_METHODS
    assert hp.options(hp.PILID, "reg") == REGS
    assert hp.options(hp.PILID, "optimizer") == OPTIMIZERS
    assert hp.options(hp.PILID, "init") == INITS == ("lstsq", "gaussian")
    assert hp.options(hp.PILID, "deep_categorical") == DEEP_CATEGORICAL == ("onehot", "code")
    assert hp.options(hp.PILID, "lam") == LAM_RULES and ROWS in hp.options(hp.PILID, "smoothness")
    (hidden,) = hp.by_name(hp.PILID, "hidden_layers")
    assert hidden.paper == PAPER_HIDDEN_LAYERS


def test_the_schemas_are_the_declared_model_keys_and_types():
    keys = hp.model_keys(hp.PILID)
    paper = {k: v for k, v in section_fields("model", "pilid").items() if k not in CLASS_KEYS}
    library = {k: v for k, v in section_fields("model", "pilid_lib").items() if k not in CLASS_KEYS}
    assert paper == {p.name: p.type for p in keys}
    assert library == {p.name: p.schema_type for p in keys}
    assert paper["gamma"] is int and paper["lam"] is float and paper["smoothness"] is float
    assert {k for k in library if library[k] != paper[k]} == {"gamma", "lam", "smoothness"}
    assert list(paper)[0] == "sigma"  # MLP's keys first, where they were


def test_the_keys_left_out_of_the_setting_id_are_the_declared_identities():
    model = {
        key: value for (group, key), value in KEYS_ADDED_AT_IDENTITY.items() if group == "model"
    }
    assert (
        model
        == hp.identities(hp.PILID)
        == {
            "n_bags": 1,
            "monotone_constraints": None,
            "smoothness": 0.0,
            "pairs": 0,
            "deep_input": "columns",
        }
    )
    for p in hp.model_keys(hp.PILID):  # the paper's runs take the value that is not hashed
        assert p.identity is hp.HASHED or p.identity == p.paper


def test_a_composed_config_hashes_the_declared_keys_but_those_at_identity():
    from hydra import compose, initialize_config_dir

    from pilid.experiments.config import CONF_DIR
    from pilid.experiments.setting import setting_config

    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        paper = setting_config(compose("config", overrides=["model=pilid"]))["model"]
        library = setting_config(compose("config", overrides=["model=pilid_lib"]))["model"]
    declared = {p.name for p in hp.model_keys(hp.PILID)}
    assert set(paper) == declared - set(hp.identities(hp.PILID)) | {"name"}
    at_identity = {p.name for p in hp.model_keys(hp.PILID) if p.default == p.identity}
    assert at_identity == {"monotone_constraints"}
    assert set(library) == declared - at_identity | {"name"}
    assert library["n_bags"] == 16 and library["smoothness"] == "rows"


def test_a_declaration_names_where_it_is_set_and_a_model_key_its_type():
    with pytest.raises(ValueError, match="where='elsewhere'"):
        hp.Hyperparameter("x", 1, (hp.Integers(0),), "", "elsewhere")
    with pytest.raises(ValueError, match="needs its schema type"):
        hp.Hyperparameter("x", 1, (hp.Integers(0),), "", "model")
    with pytest.raises(PilidError):  # a ParamError is a PilidError
        validate_params(PiLiDRegressor(n_bags=0))
