"""
Your own model through the experiment harness
=============================================

Any scikit-learn estimator runs under the paper's protocol (the same 80/20 splits per trial, the
records, resume, sweeps and launchers) from a YAML file in a directory of your own, selected
with Hydra's ``--config-dir``. Nothing in ``pilid/`` changes: the built-in models are YAML files
of the same kind (``conf/model/*.yaml``).

Here a gradient-boosting classifier and the built-in ``linear`` model run side by side, 4 trials
each, on a small synthetic classification task; everything goes to a temporary directory.
"""

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import matplotlib.pyplot as plt

from pilid.experiments import load_results

work = Path(tempfile.mkdtemp(prefix="pilid-example-"))

# %%
# The model's YAML
# ----------------
# One class (``_target_``) with its hyper-parameters as plain keys; a model for both tasks names
# ``regressor: {_target_: ...}`` and ``classifier: {_target_: ...}`` instead.
(work / "my_conf" / "model").mkdir(parents=True)
(work / "my_conf" / "model" / "hgb.yaml").write_text(
    "_target_: sklearn.ensemble.HistGradientBoostingClassifier\nmax_iter: 50\n"
)

# %%
# The sweep
# ---------
# ``-m`` sweeps over the comma-separated values: one setting per model, each with its trials.
# ``results_dir`` is where the records go; running the same command again would skip every
# recorded trial (resume).
command = [
    sys.executable,
    "-m",
    "pilid.run",
    "-m",
    "--config-dir",
    str(work / "my_conf"),
    "model=hgb,linear",
    "data=synthetic",
    "data.task=classification",
    "data.N=1000",
    "data.m=5",
    "trials=4",
    f"results_dir={work / 'runs'}",
    f"hydra.sweep.dir={work / 'multirun'}",
]
print("python -m pilid.run", " ".join(command[3:]).replace(str(work), "<tmp>"))
done = subprocess.run(
    command, capture_output=True, text=True, check=True, env={**os.environ, "PYTHONWARNINGS": ""}
)
for line in done.stdout.splitlines():
    if line.startswith(("hgb", "linear")):  # the summary line of each setting
        print(line)

# %%
# The records
# -----------
# One JSON line per finished trial in ``<results_dir>/records.jsonl``; ``load_results`` reads
# them into a frame, one row per trial.
records = load_results(work / "runs")
print(records[["model", "trial", "seed", "metric", "value", "fit_seconds"]].to_string(index=False))

# %%
# Test AUC per trial: the same splits for both models, so the trials pair up.
fig, ax = plt.subplots(figsize=(5, 3))
for model, rows in records.groupby("model"):
    ax.plot(rows["trial"], rows["value"], "o-", label=model)
ax.set_xlabel("trial (its seed picks the split)")
ax.set_ylabel("test AUC")
ax.legend()
plt.tight_layout()
plt.show()

shutil.rmtree(work)  # the temporary directory
