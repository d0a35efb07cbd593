"""
Bagged shapes with bands
========================

``n_bags=k`` trains ``k`` PiLiD models on bootstrap samples of the training rows, as one batched
ensemble, and averages them. The shapes then come with the members' spread: ``std``, and
``lower``/``upper`` (the 2.5% and 97.5% percentiles over members), which ``plot_shapes()`` draws
as bands.

The bands show how much the shapes move from one bootstrap sample to another. They miss the
model's bias, so they are not calibrated 95% intervals: on the library's defaults the true shape
lies inside them at about 83% of the points (:doc:`/user_guide`, "Bagged shapes").
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.model_selection import train_test_split

from pilid import PiLiDRegressor
from pilid.data import load_dataset

data = load_dataset("synthetic", N=2500, m=3, n_interactions=1, noise=0.3, data_seed=1)
X_train, X_test, y_train, y_test = train_test_split(data.X, data.y, random_state=0)

# %%
# A bag of 8
# ----------
# The bag trains as one ensemble (every parameter has a leading member dimension), so 8 members
# cost far less than 8 separate fits. Five plain pieces per feature (``gamma=5``, no roughness
# penalty, no pair terms: a quicker fit than the default 40 smooth pieces) keep the shapes' bias
# small against the degree-10 truth.
bag = PiLiDRegressor(n_bags=8, gamma=5, smoothness=0.0, pairs=0, epochs=30, random_state=0)
bag.fit(X_train, y_train)
print(f"test R^2 of the bag: {bag.score(X_test, y_test):.3f}")
shapes = bag.shape_functions()
print(shapes.head(4).round(3).to_string(index=False))

# %%
# How often is the truth inside the band?
# ---------------------------------------
# At every characteristic point, compare the true function (centred on the training rows, as the
# shapes are) with the band.
X_fit = np.asarray(X_train)
offset = data.true_shapes.functions(X_fit).mean(axis=0)
inside = []
for j, name in enumerate(data.feature_names):
    part = shapes[shapes["feature"] == name]
    points = np.zeros((len(part), X_fit.shape[1]))
    points[:, j] = part["x"].to_numpy()
    truth = data.true_shapes.functions(points)[:, j] - offset[j]
    inside.append((part["lower"].to_numpy() <= truth) & (truth <= part["upper"].to_numpy()))
print(f"truth inside the band at {np.concatenate(inside).mean():.0%} of the points")

# %%
# The bands, with the true functions dashed
# -----------------------------------------
axes = np.ravel(bag.plot_shapes(ncols=3))
truth = data.true_shapes.grid()
for j, (ax, name) in enumerate(zip(axes, data.feature_names)):
    rows = truth[truth["feature"] == name]
    ax.plot(rows["x"], rows["value"] - offset[j], "k--", lw=1, label="true")
axes[0].legend(fontsize=8)
plt.tight_layout()
plt.show()
