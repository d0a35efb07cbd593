"""
Which features matter: term importance and shapes over their data
=================================================================

A model with many features first needs an answer to "which of them matter?". PiLiD's
``term_importances`` gives each term's mean absolute contribution to the prediction: every
feature's shape, every pair term and the deep part (EBM's first view). ``plot_importance`` draws
it, and ``plot_shapes(order="importance", sharey=True)`` then draws the shapes in that order on
one y scale, each over the distribution of its data.

The table is made up and tiny (800 rows, a bag of two, 20 epochs) so that the example runs in
seconds on a CPU.
"""

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from pilid import PiLiDClassifier, PiLiDRegressor

# %%
# A table with a 0/1 column, a count, numbers as text and a text column
# ---------------------------------------------------------------------
rng = np.random.default_rng(0)
n = 800
X = pd.DataFrame(
    {
        "age": rng.normal(45, 12, n),
        "senior": rng.integers(0, 2, n),
        "children": rng.integers(0, 4, n),
        "tenure": rng.choice(["9", "10", "11", "12"], n),
        "contract": rng.choice(["Month-to-month", "One year", "Two year"], n, p=[0.5, 0.3, 0.2]),
        "noise": rng.uniform(size=n),
    }
)
age = (X["age"] - 45) / 12
y = 2 * np.tanh(age) + X["senior"] + 0.5 * (X["contract"] == "Two year") + 0.8 * age * X["senior"]
y = y + 0.3 * rng.normal(size=n)

model = PiLiDRegressor(n_bags=2, epochs=20, pairs=2, random_state=0).fit(X, y)

# %%
# Term importance
# ---------------
# The mean absolute contribution of each term over the training rows kept at fit, in the
# target's units; a pair term's is its pure interaction (what it adds beyond the two shapes).
print(model.term_importances().to_string(index=False))
model.plot_importance()
plt.show()

# %%
# The shapes, most important first, on one scale
# ----------------------------------------------
# The grey strip under each shape is where the data lies; ``senior`` and ``children`` (few
# values) are points at their values; the levels of ``tenure`` are in numeric order, those of
# ``contract`` the most frequent first.
model.plot_shapes(ncols=3, order="importance", sharey=True)
plt.show()

# %%
# One prediction of a classifier
# ------------------------------
# The waterfall starts at the intercept, its axis spans the bars, and the title gives the
# probability beside the logit.
clf = PiLiDClassifier(n_bags=1, epochs=20, pairs=0, random_state=0)
clf.fit(X, np.where(y > np.median(y), "high", "low"))
clf.plot_explanation(X, row=0)
plt.show()
