"""
A table from records: Table 3
=============================

Every finished trial of the harness is one JSON line in ``records.jsonl``. The report reads
records and builds the paper's tables and figures from them; it never trains. This example
reads the records committed with the repository (``results/records``, the reproduction of the
paper) and rebuilds Table 3, the models on the four UCI data sets, into a temporary directory:
``make tables`` does the same for every table.
"""

import shutil
import tempfile
from pathlib import Path

import matplotlib.pyplot as plt

from pilid.report import load_records, make_tables

try:
    ROOT = Path(__file__).resolve().parents[1]
except NameError:  # run line by line
    ROOT = Path.cwd().parent
RECORDS = ROOT / "results" / "records"

# %%
# The records
# -----------
# One row per trial: the setting (model, data, parameters, ``setting_id``), the trial and its
# seed, the test metric and how long the fit took. ``load_records`` is
# ``pilid.experiments.load_results`` (the newest record of each trial wins) with the columns the
# report needs.
records = load_records(RECORDS)
table3 = records[records["experiment"] == "real_data"]
print(f"{len(records)} records, {len(table3)} of them Table 3's")
print(table3[["model", "dataset", "trial", "metric", "value"]].head().to_string(index=False))

# %%
# The table
# ---------
# ``make_tables`` writes one Markdown and one LaTeX file per table (``--`` marks a cell not run
# yet, a dagger a cell with fewer trials than configured). Given Table 3's records only, it
# builds Table 3 only.
out = Path(tempfile.mkdtemp(prefix="pilid-example-"))
tables, written = make_tables(RECORDS, out, records=table3, fidelity=False)
print((out / "real_data.md").read_text(encoding="utf-8"))

# %%
# The same records, per trial: the spread behind each cell's ``mean ± std`` on skill (AUC).
skill = table3[table3["dataset"] == "skill"]
order = skill.groupby("model")["value"].mean().sort_values().index.tolist()
fig, ax = plt.subplots(figsize=(6, 3))
ax.boxplot([skill.loc[skill["model"] == m, "value"] for m in order], vert=False)
ax.set_yticks(range(1, len(order) + 1), order)
ax.set_xlabel("test AUC per trial (skill)")
plt.tight_layout()
plt.show()

shutil.rmtree(out)  # the temporary directory
