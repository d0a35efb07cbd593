"""Every random stream of a trial, in one table: which draws come from which generator.

A trial with seed s draws each kind of random number from its own stream, seeded by the pair
(s, stream id) alone. So a trial's numbers do not depend on how many trials train beside it
(`pilid.models.fitting.fit_batched`), nor on the order in which the streams are used. The ids
are part of the recorded results: changing one changes every number drawn from it.

====================  ==  ====================================================  ================
name                  id  what it draws                                         drawn in
====================  ==  ====================================================  ================
STREAM_SPLIT           0  rows held out for early stopping (NumPy)              train.validation
STREAM_BATCHES         1  mini-batch permutations, one per epoch (torch)        train.trainer
STREAM_DEEP            2  the deep part's initial weights (MLP, blocks)         nn.mlp, nn.blocks
STREAM_ADDITIVE        3  w of the additive part with init="gaussian"           train.batched
STREAM_NOISE           4  reserved (never drawn; kept so the id is not reused)  -
STREAM_BLOCK_SUMMARY   7  rows for the block summaries of PiLiB/NIT (NumPy)     estimators.gated
STREAM_BAG             8  a bag member's seed and bootstrap rows (NumPy)        models.bagging
STREAM_GRID_ROWS       9  rows kept for PiLiD's interaction_grid (NumPy)        estimators.pilid
STREAM_FIT_SAMPLE     10  rows of a large table for the once-per-fit work        train, estimators
STREAM_GATE_INIT      16  jitter of the gates' initial log_alpha                nn.gates
STREAM_GATE_NOISE     17  the gates' hard-concrete noise in training            nn.gates
====================  ==  ====================================================  ================
"""

from __future__ import annotations

import numpy as np
import torch

STREAM_SPLIT = 0
STREAM_BATCHES = 1
STREAM_DEEP = 2
STREAM_ADDITIVE = 3
STREAM_NOISE = 4
STREAM_BLOCK_SUMMARY = 7
STREAM_BAG = 8
STREAM_GRID_ROWS = 9
STREAM_FIT_SAMPLE = 10
STREAM_GATE_INIT = 16
STREAM_GATE_NOISE = 17


def trial_generator(seed: int, stream: int, device="cpu") -> torch.Generator:
    """A torch generator for one random stream of a trial seed (see the table above)."""
    state = np.random.SeedSequence([int(seed) % (2**63), int(stream)]).generate_state(2)
    g = torch.Generator(device=device)
    g.manual_seed((int(state[0]) << 31) | (int(state[1]) >> 1))
    return g


def trial_rng(seed: int, stream: int) -> np.random.Generator:
    """A NumPy generator for one random stream of a trial seed (see the table above)."""
    return np.random.default_rng([seed, stream])


def member_rng(seed: int, stream: int, member: int) -> np.random.Generator:
    """A NumPy generator for member `member` of a bag (`STREAM_BAG`): seeded by (seed, stream,
    member) alone, so member b draws the same numbers in a bag of any size."""
    return np.random.default_rng([seed, stream, member])
