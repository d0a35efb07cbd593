"""The typed configs (pilid/schema.py) match conf/: one schema per config file, every key of a
YAML file a field of its schema and every field set, so Hydra's composition is what types and
checks a run."""

import dataclasses

import pytest
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

from pilid.experiments.config import CONF_DIR, group_options
from pilid.schema import SCHEMA_GROUP, SCHEMAS, RunConfig, TrainConfig, whole_number_keys


def _compose(*overrides):
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        return compose("config", overrides=list(overrides))


@pytest.mark.parametrize("group", sorted(SCHEMAS))
def test_every_config_file_has_a_schema_and_names_it(group):
    assert sorted(SCHEMAS[group]) == group_options(group)
    for name in SCHEMAS[group]:
        loaded = OmegaConf.to_container(OmegaConf.load(CONF_DIR / group / f"{name}.yaml"))
        assert loaded["defaults"][0] == f"/{SCHEMA_GROUP}/{group}/{name}@_here_"
        fields = {f.name for f in dataclasses.fields(SCHEMAS[group][name])}
        assert set(loaded) - {"defaults"} == fields, f"{group}/{name}.yaml vs its schema"


@pytest.mark.slow
@pytest.mark.parametrize(
    "group, name", [(g, n) for g in sorted(SCHEMAS) for n in sorted(SCHEMAS[g])]
)
def test_each_option_composes_typed_with_every_field_set(group, name):
    # data=table leaves its file, target and task to the command line (``???``)
    given = ["data.path=t.csv", "data.target=y", "data.task=regression"] if name == "table" else []
    cfg = _compose(f"{group}={name}", *given)
    assert OmegaConf.get_type(cfg) is RunConfig
    assert OmegaConf.get_type(cfg.train) is TrainConfig
    assert OmegaConf.get_type(cfg[group]) is SCHEMAS[group][name]
    assert OmegaConf.missing_keys(cfg) == set()


def test_top_level_and_train_keys_are_the_schema_fields():
    loaded = OmegaConf.to_container(OmegaConf.load(CONF_DIR / "config.yaml"))
    top = {f.name for f in dataclasses.fields(RunConfig)}
    assert set(loaded) - {"defaults", "hydra"} == top - {"data", "model", "logger"}  # groups
    assert set(loaded["train"]) == {f.name for f in dataclasses.fields(TrainConfig)}


def test_hydra_types_the_values_when_it_composes():
    cfg = _compose("model.lam=0", "train.patience=null", "data.N=3000")
    assert type(cfg.model.lam) is float and cfg.model.lam == 0.0
    assert cfg.train.patience is None and type(cfg.data.N) is int
    with pytest.raises(Exception, match="data.N=many") as info:
        _compose("data.N=many")
    assert "could not be converted to Integer" in str(info.value.__cause__)
    with pytest.raises(Exception, match="gamm"):
        _compose("model.gamm=3")


def test_whole_number_keys_are_the_int_fields():
    keys = whole_number_keys()
    assert {"trials", "seed", "gamma", "data.N", "data.m", "train.epochs"} <= keys
    assert {"train.patience", "model.n_blocks", "model.max_depth"} <= keys  # int | None too
    assert not {"model.lam", "train.lr", "data.noise", "model.rbf_gamma"} & keys
