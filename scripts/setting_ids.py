"""Every job of every experiment config with its setting id, as JSON (for config refactors).

A change to conf/ or to pilid/schema.py must not change the id of a setting that has records:
run this before and after the change and compare the two files.

    python scripts/setting_ids.py before.json   # then change conf/, then:
    python scripts/setting_ids.py after.json
"""

from __future__ import annotations

import argparse
import json

from hydra import compose, initialize_config_dir

from pilid.experiments.config import CONF_DIR
from pilid.experiments.grid import expand, sweep_params
from pilid.experiments.setting import setting_id


def main(out: str) -> None:
    ids = {}
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        for name in sorted(p.stem for p in (CONF_DIR / "experiment").glob("*.yaml")):
            base = compose("config", overrides=[f"experiment={name}"], return_hydra_config=True)
            for job in expand(sweep_params(base)):  # the jobs Hydra's sweeper runs
                overrides = [f"experiment={name}", *job]
                ids[" ".join(overrides)] = setting_id(compose("config", overrides=overrides))
    with open(out, "w") as handle:
        json.dump(ids, handle, indent=0, sort_keys=True)
    print(f"{len(ids)} jobs -> {out}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("out", nargs="?", default="setting_ids.json", help="the JSON to write")
    main(parser.parse_args().out)
