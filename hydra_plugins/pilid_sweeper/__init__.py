"""pilid's Hydra sweeper plugin (Hydra finds plugins only in the ``hydra_plugins`` package)."""
