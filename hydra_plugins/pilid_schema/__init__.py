"""pilid's typed configs (``pilid.schema``), stored in Hydra's ConfigStore at plugin scan.

Hydra imports every module of the ``hydra_plugins`` namespace package when it starts (an app or
``hydra.initialize_config_dir``), before it composes a config, so ``conf/``'s YAML files find
their schemas (``- /schema/model/pilid@_here_``) without the caller importing pilid first.
"""

from hydra.core.config_store import ConfigStore

from pilid.schema import CONFIG_SCHEMA, SCHEMA_GROUP, SCHEMAS, RunConfig


def register() -> None:
    """Store the top-level schema as ``pilid_schema`` and each group option's as
    ``schema/<group>/<name>`` (a group of its own, so ``--help`` lists the schemas apart from the
    options; storing again replaces: safe to repeat)."""
    store = ConfigStore.instance()
    store.store(name=CONFIG_SCHEMA, node=RunConfig)
    for group, options in SCHEMAS.items():
        for name, schema in options.items():
            store.store(group=f"{SCHEMA_GROUP}/{group}", name=name, node=schema)


register()
