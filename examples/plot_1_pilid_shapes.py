"""
Fit PiLiD and read its shapes
=============================

PiLiD predicts with the sum of one piecewise-linear function per feature (its *shapes*) and an
MLP that captures what the shapes cannot. On the synthetic data of the paper's Section 4.1 the
true per-feature functions are known, so we can see how close the learned shapes come.

The data and the model are kept tiny (1,500 rows, 4 features, one model, 30 epochs) so that the
example runs in seconds on a CPU; the library's defaults (a bag of 16, up to 100 epochs) give
smoother shapes.
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.model_selection import train_test_split

from pilid import PiLiDRegressor
from pilid.data import load_dataset
from pilid.inspection.fidelity import estimator_fidelity

# %%
# Synthetic data with known shapes
# --------------------------------
# ``load_dataset("synthetic")`` draws the paper's simulation: ``m`` random degree-10 polynomials
# on [0, 1] (the true marginal value functions), a few interactions and noise. The true functions
# come with the data set, as ``data.true_shapes``.
data = load_dataset("synthetic", N=1500, m=4, noise=0.3, data_seed=0)
X_train, X_test, y_train, y_test = train_test_split(data.X, data.y, random_state=0)
print(data.X.shape, data.task)

# %%
# Fit
# ---
# ``n_bags=1`` trains one model (the paper's); ``epochs`` is an upper bound, early stopping on a
# 10% validation part usually ends sooner.
model = PiLiDRegressor(n_bags=1, epochs=30, random_state=0).fit(X_train, y_train)
print(f"test R^2: {model.score(X_test, y_test):.3f}")

# %%
# The shapes
# ----------
# ``shape_functions()`` is a tidy frame: the value of each feature's function at its
# characteristic points (the knots; between them the function is linear).
shapes = model.shape_functions()
print(shapes.head(8).to_string(index=False))

# %%
# ``feature_contributions(X)`` evaluates every shape on rows of ``X``: column ``j`` is
# ``u_j(x_ij)``, centred per feature. Against the true functions, also centred, the R^2 per
# feature measures how faithful the shapes are.
true_test = data.true_shapes.functions(np.asarray(X_test))
per_feature, mean = estimator_fidelity(model, X_test, true_test)
print("shape fidelity R^2 per feature:", np.round(per_feature, 3), f"mean {mean:.3f}")

# %%
# ``plot_shapes()`` draws one panel per feature; the true functions go on top, dashed.
axes = np.ravel(model.plot_shapes(ncols=4))
offset = data.true_shapes.functions(np.asarray(X_train)).mean(axis=0)  # centred as the shapes
truth = data.true_shapes.grid()
for j, (ax, name) in enumerate(zip(axes, data.feature_names)):
    rows = truth[truth["feature"] == name]
    ax.plot(rows["x"], rows["value"] - offset[j], "k--", lw=1, label="true")
axes[0].legend(fontsize=8)
plt.tight_layout()
plt.show()
