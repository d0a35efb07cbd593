"""The levers of ``studies.lever_study`` that were measured on the development suite and not
adopted, as code of the studies (the library holds none of them).

`LEVERS` declares them (``schedule``, ``lr_decay``, ``bag_validation``, ``deep_bins``,
``deep_ensemble``, ``min_frequency``, ``choice_members``), each with its neutral value;
`PiLiDLeverRegressor` / `PiLiDLeverClassifier` are PiLiD with them as parameters, built by
`with_levers` from the library's class: `studies._levers.estimators` (the estimators and the
hooks each lever overrides), `studies._levers.bags` (a bag's own early-stopping rows, the choice
on a candidate's first members) and `studies._levers.shared_mlp` (a bag's MLP as one efficient
ensemble). A private package: ``python -m studies`` lists the studies, not this.
"""

from studies._levers.estimators import (
    LEVERS,
    PiLiDLeverClassifier,
    PiLiDLeverRegressor,
    with_levers,
)

__all__ = ["LEVERS", "PiLiDLeverClassifier", "PiLiDLeverRegressor", "with_levers"]
