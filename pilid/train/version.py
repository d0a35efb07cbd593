"""The training engine's version, which every record of a trained trial names.

A change of the engine that moves a fit's digits (another summation order, another solver)
bumps `ENGINE_VERSION`. A record is reproduced bit for bit by the engine version that wrote
it (its ``versions["engine"]``) and by a later one within the trials' noise; the runner never
resumes a setting with another engine than the one its records name
(`pilid.experiments.runner`). Records written before the engine had a version were written by
the first one, `FIRST_ENGINE_VERSION`.
"""

from __future__ import annotations

#: This engine's version.
ENGINE_VERSION = "1"
#: The version of the engine that wrote the records that name none.
FIRST_ENGINE_VERSION = "1"
