"""pilid.inspection: reading a fitted model (layer 5 of CONTRIBUTING.md, "Layers").

What the estimators of `pilid.estimators` (and the peers) show of themselves, apart from how
they train:

- `shapes`: `ShapeMixin`, the shape read-out of the additive component (Definition 3's u_j):
  ``shape_functions``, ``feature_contributions``, ``plot_shapes`` (each shape over its data's
  distribution, levels in a readable order);
- `importance`: ``term_importances`` and ``plot_importance`` (`ImportanceDisplay`), each term's
  mean absolute contribution (main effects, pair terms, the deep part);
- `displays` (`ShapeDisplay`, its panels' pieces in `shape_panels`) and `interaction_display`
  (`InteractionDisplay`, `InteractionPlotMixin`): every plot of a shape or a joint effect
  (Figures 3-5); `plotting` keeps their function forms;
- `explanation`: ``explain`` and its waterfall (one prediction as the sum of its parts, Eq. 9);
- `pair_effect`: PiLiD's interaction of two features by partial dependence, on the grid of
  `joint_grid` that PiLiB's and NIT's ``interaction_grid`` use too;
- `fidelity`: learned shapes against known true ones; `peer_shapes`: EBM's and APLR's shapes.

It imports the building blocks of `pilid.models` and never an estimator module: the estimators
inherit its mixins.
"""
