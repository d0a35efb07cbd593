"""
Which features interact: PiLiB
==============================

PiLiB (the paper's Section 3.3) keeps PiLiD's shapes and replaces the MLP by a few small blocks,
each behind L0 gates on its inputs. Training pushes the gates towards the fewest features a block
needs, so the active blocks name the small groups of features that interact, and
``interaction_grid(i, j)`` draws their joint effect (the paper's Figure 5).

Here the target has one planted interaction, ``1.5 * x3 * x4``, beside main effects of ``x0``,
``x1`` and ``x2``. The model is small (4 blocks of order at most 2, few epochs) so that it trains
in seconds.
"""

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from sklearn.model_selection import train_test_split

from pilid import PiLiBRegressor

rng = np.random.default_rng(0)
n = 2000
X = pd.DataFrame(rng.uniform(-1, 1, size=(n, 5)), columns=[f"x{j}" for j in range(5)])
y = (
    X["x0"]
    + np.sin(2 * X["x1"])
    + X["x2"] ** 2
    + 1.5 * X["x3"] * X["x4"]  # the interaction
    + 0.1 * rng.standard_normal(n)
).to_numpy()
X_train, X_test, y_train, y_test = train_test_split(X, y, random_state=0)

# %%
# Fit
# ---
# ``warmup_epochs`` train without the gate penalty first, so that a block learns its pair before
# the penalty starts closing gates; ``phase1_epochs`` caps the gate search, ``epochs`` the
# final training with the gates frozen (Algorithm 2).
model = PiLiBRegressor(
    n_blocks=4,
    max_order=2,
    block_layers=(8,),
    warmup_epochs=10,
    phase1_epochs=40,
    epochs=30,
    random_state=0,
).fit(X_train, y_train)
print(f"test R^2: {model.score(X_test, y_test):.3f}")

# %%
# The interactions found
# ----------------------
# ``interactions_(min_order=2)`` lists the feature groups of the active blocks whose output is
# not a sum of one-feature functions.
print("interactions:", model.interactions_(min_order=2))

# %%
# Their joint effect
# ------------------
# The sum of the blocks that use both features, on a grid, centred; the planted effect is a
# saddle.
model.plot_interaction(3, 4)
plt.tight_layout()
plt.show()

# %%
# The main effects stay in the shapes, as in PiLiD.
model.plot_shapes(ncols=5)
plt.tight_layout()
plt.show()
