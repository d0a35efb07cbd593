"""pilid.models: the scikit-learn estimators (layer 4 of CONTRIBUTING.md, "Layers").

Families, one module each:

- `pilid`: PiLiD (Section 3) and the MLP baseline; `pilid_cv`: PiLiD with gamma and lambda
  chosen by inner cross-validation; `pilib`: PiLiB (Section 3.3); `nit`: NIT.
  Their shared base is `neural` (`NeuralEstimator`), the gated-block machinery of PiLiB and NIT
  is `gated`; they train through `pilid.train.fit_batched`.
- Baselines of Section 4: `svm`, `gam`, `ga2m`, `ga` (random forest and linear/logistic
  regression are scikit-learn's own).
- Shared: `params` (hyper-parameter constraints and `ParamError`), `inputs` (X, y and
  `categorical_features`), `outputs` (logit classifiers), `displays` (`ShapeDisplay`,
  `InteractionDisplay`: every plot of a shape or a joint effect; `plotting` keeps their function
  forms), `explanation` (`explain` and its waterfall), `fidelity`, `frame_input`
  (peers that take DataFrames only), `bagging` (bags of members and their bands), `multiclass`
  (K > 2 classes: a softmax group of class members), `monotone` (`monotone_constraints`),
  `sample_weight` (the weights' checks and weighted statistics).
- `metrics`: the paper's metrics (the class each `model=` name builds is named by its YAML in
  conf/model/).

`estimators` and `baselines` only re-export the families under the module names that the
comments of conf/model/*.yaml give.
"""
