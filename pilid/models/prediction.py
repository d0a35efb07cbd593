"""A fitted model's outputs on many rows, chunk by chunk (`NeuralEstimator`'s prediction).

Rows are read in chunks of `PREDICT_CHUNK`, so memory follows a chunk, not the rows. A bag
(`pilid.models.bagging`) encodes each chunk once for all its members: they share the scaling,
the deep part's encoding and the characteristic points of Definition 1 (`bagging.take_inputs`),
so each member reads the same deep input and Phi (Guo et al., IJCAI 2020, Eq. 9) as it would
encode itself.
"""

from __future__ import annotations

import numpy as np
import torch

#: Rows per chunk of prediction.
PREDICT_CHUNK = 8192


def starts(X: np.ndarray) -> range:
    """The first row of each chunk of `PREDICT_CHUNK` rows of X."""
    return range(0, X.shape[0], PREDICT_CHUNK)


@torch.no_grad()
def on_inputs(est, inputs, what: str):
    """Fitted single model `est`'s output `what` on one chunk's encoded `inputs` (``(x, phi)``
    of ``est._inputs``): "raw", its raw output (n,); "terms", ``(terms (n, m), deep (n,))`` of
    its module's ``decompose`` (either None where the model has no such part)."""
    x, phi = inputs
    if what == "raw":
        return est.module_(x[None], phi)[0].double().numpy()
    terms, deep = est.module_.decompose(x[None], phi)
    return (
        None if terms is None else terms[0].double().numpy(),
        None if deep is None else deep[0].double().numpy(),
    )


def chunk_outputs(est, X: np.ndarray, what: str) -> list:
    """`on_inputs` of single model `est` on each chunk of X."""
    return [on_inputs(est, est._inputs(X[s : s + PREDICT_CHUNK]), what) for s in starts(X)]


def members_on_chunks(bag, X: np.ndarray, what: str) -> list[list]:
    """A bag's: per chunk of X, each member's `on_inputs` on the chunk's inputs, encoded once."""
    chunks = []
    for s in starts(X):
        inputs = bag._inputs(X[s : s + PREDICT_CHUNK])
        chunks.append([on_inputs(member, inputs, what) for member in bag.estimators_])
    return chunks


@torch.no_grad()
def bag_chunks(bag, X: np.ndarray) -> list[np.ndarray]:
    """A bag's raw output (the mean of its members'), (n,) per chunk of X: one call of its
    `pilid.nn.bag.BagForward` per chunk where fit built one (``_bag_forward``), else each
    member's `on_inputs` on the chunk's inputs, averaged."""
    forward = getattr(bag, "_bag_forward", None)
    if forward is None:  # a structure the bag's forward does not reduce, or an older pickle
        return [np.mean(raws, axis=0) for raws in members_on_chunks(bag, X, "raw")]
    out = []
    for s in starts(X):
        x, phi = bag._inputs(X[s : s + PREDICT_CHUNK])
        out.append(forward(x[None], phi)[0].double().numpy())
    return out


def joined_terms(chunks: list) -> tuple[np.ndarray | None, np.ndarray | None]:
    """One model's (terms, deep) over X from its (terms, deep) per chunk."""
    terms = [t for t, _ in chunks if t is not None]
    deep = [d for _, d in chunks if d is not None]
    return (np.concatenate(terms) if terms else None, np.concatenate(deep) if deep else None)
