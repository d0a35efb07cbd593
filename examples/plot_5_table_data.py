"""
Your own data: a CSV file
=========================

``data=table`` runs any CSV or Parquet file through the harness with the UCI sets' protocol: an
80/20 split per trial (stratified for classification) and standardisation with the training
part's statistics. The text, ``category`` and ``bool`` columns (plus those listed in
``data.categorical``) reach each model as it takes them (``data.encoding=auto``): one column of
level codes for PiLiD, PiLiB, EBM and LightGBM, one-hot for the others; each record says which.
Missing values are kept (``data.missing=keep``) for the models that take NaN; the others lose
the rows with a missing number (logged), and a missing category is a level of its own. In
Python, ``load_dataset("table", ..., missing="keep")`` gives the same ``Dataset``.

The table here is made up: whether a customer churns, from their tenure, monthly charge, number
of support calls and contract type.
"""

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import train_test_split

from pilid import PiLiDClassifier
from pilid.data import load_dataset

rng = np.random.default_rng(0)
n = 1500
frame = pd.DataFrame(
    {
        "tenure": rng.uniform(0, 72, n).round(),
        "monthly_charge": rng.uniform(20, 120, n).round(2),
        "support_calls": rng.poisson(1.5, n),
        "contract": rng.choice(["monthly", "yearly", "two-year"], n, p=[0.5, 0.3, 0.2]),
    }
)
score = (
    -0.05 * frame["tenure"]
    + 0.02 * (frame["monthly_charge"] - 70)
    + 0.6 * np.sqrt(frame["support_calls"])
    + frame["contract"].map({"monthly": 1.0, "yearly": -0.5, "two-year": -1.5})
)
frame["churn"] = np.where(rng.uniform(size=n) < 1 / (1 + np.exp(-score)), "yes", "no")
frame.loc[rng.choice(n, 10, replace=False), "monthly_charge"] = np.nan  # a few gaps

work = Path(tempfile.mkdtemp(prefix="pilid-example-"))
path = work / "churn.csv"
frame.to_csv(path, index=False)
print(frame.head().to_string(index=False))

# %%
# On the command line
# -------------------
# The file, its target column and the task are all the harness needs; ``contract`` is text, so
# it is one-hot encoded. Every trial of the ``linear`` baseline is one record.
command = [
    sys.executable,
    "-m",
    "pilid.run",
    "model=linear",
    "data=table",
    f"data.path={path}",
    "data.target=churn",
    "data.task=classification",
    "trials=5",
    f"results_dir={work / 'runs'}",
    f"hydra.run.dir={work / 'outputs'}",
]
print("python -m pilid.run", " ".join(command[3:]).replace(str(work), "<tmp>"))
done = subprocess.run(
    command, capture_output=True, text=True, check=True, env={**os.environ, "PYTHONWARNINGS": ""}
)
print(done.stdout.strip().splitlines()[-1])

# %%
# In Python
# ---------
# ``load_dataset("table", ..., missing="keep")`` reads and checks the same file as the harness
# does (the Python function's own default, ``missing="drop"``, drops the rows with a gap); the
# positive class is the larger label in sort order, ``"yes"``.
data = load_dataset("table", path=str(path), target="churn", task="classification", missing="keep")
print(data.X.shape, data.categorical, data.info["classes"])

# %%
# The estimators take the frame as it is: a text or ``category`` column is categorical, and its
# shape has one value per level. (One split here, a small bag and few epochs; the line above is
# the mean over five splits.)
X_train, X_test, y_train, y_test = train_test_split(data.X, data.y, stratify=data.y, random_state=0)
model = PiLiDClassifier(n_bags=4, epochs=30, random_state=0).fit(X_train, y_train)
print(f"test AUC: {roc_auc_score(y_test, model.predict_proba(X_test)[:, 1]):.3f}")

# %%
# A text column's levels appear as their codes, positions in ``categories_`` (sorted): the
# ``contract`` panel's 0, 1, 2 are these levels.
print(model.categories_)
model.plot_shapes(ncols=4)
plt.tight_layout()
plt.show()

shutil.rmtree(work)  # the temporary directory
