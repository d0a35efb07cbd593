"""The training engine's version, which every record of a trained trial names.

A change of the engine that moves a fit's digits (another summation order, another solver)
bumps `ENGINE_VERSION`. A record is reproduced bit for bit by the engine version that wrote
it (its ``versions["engine"]``) and by a later one within the trials' noise; the runner never
resumes a setting with another engine than the one its records name
(`pilid.experiments.runner`). Records written before the engine had a version were written by
the first one, `FIRST_ENGINE_VERSION`.

The versions, and what moved the digits:

* "1": the first engine (every record written before the engine had a version);
* "2": a bag predicts in one call (`pilid.nn.bag`), its members' outputs summed in float32
  in another order than their mean; the early-stopping losses of a bag's candidates
  (``pairs="auto"``, ``smoothness="auto"``) read it too;
* "3": units that differ only in the roughness weight or Omega's weight (the candidates of
  ``smoothness="auto"``, a cross-validation's grid of ``lam``) train as one ensemble, a weight
  per trial (`pilid.train.batched.trial_weights`; Omega's L2 term then in the loss, not the
  optimiser's weight decay). Fits with one weight of each (the library's defaults among them)
  are those of engine 2, bit for bit.
"""

from __future__ import annotations

#: This engine's version.
ENGINE_VERSION = "3"
#: The version of the engine that wrote the records that name none (they were all written before
#: engine 2, whose bags sum in another order: a setting of them is not resumed by a later engine).
FIRST_ENGINE_VERSION = "1"
