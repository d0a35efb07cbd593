"""pilid.models: the estimators' building blocks (layer 4 of CONTRIBUTING.md, "Layers").

Private machinery that `pilid.estimators` and `pilid.baselines` are made of; nothing here is an
estimator of the paper (those are `pilid.estimators`, the harness's comparison models
`pilid.baselines`, and what reads a fitted one `pilid.inspection`):

- checks and inputs: `params` (hyper-parameter constraints and `ParamError`), `inputs` (X, y and
  `categorical_features`), `sample_weight` (the weights' checks and weighted statistics),
  `monotone` (`monotone_constraints`), `frame_input` (peers that take DataFrames only);
- outputs: `outputs` (logit classifiers), `multiclass` (K > 2 classes: a softmax group of class
  members), `bagging` (bags of members and their bands);
- choices made at fit: `row_rules` (``lam="rows_steep"``, ``smoothness="rows"``), `shape_choice`
  (``smoothness="auto"``, ``pairs="auto"``), `pair_choice` (FAST's pairs);
- `metrics`: the paper's metrics (MSE, AUC).
"""
