"""pilid.nn: the torch building blocks, every parameter with a leading trial dimension T.

Guo et al., IJCAI 2020, Section 3, bottom-up:

- `piecewise`: characteristic points (Definition 1) and the feature vector Phi (Definition 2).
- `additive`: the piecewise-linear component u_j = omega_j sum_k (w_k phi_k + b_k) (Eq. 10)
  and Algorithm 1's least-squares start.
- `mlp`: the deep component, the paper's MLP (Eq. 6-8).
- `embedding`: the deep component as TabM builds it, the MLP on piecewise-linear embeddings of
  Phi (beyond the paper).
- `gates`: hard-concrete L0 gates (Louizos et al. 2018) and the order penalties of PiLiB
  (L_K', Section 3.3) and NIT (L_K).
- `blocks`: B gated MLP blocks (PiLiB's and NIT's deep component).
- `ensemble`: Eq. (9), the additive part plus a deep part, and purification.

Nothing here trains or knows scikit-learn; trial seeds come from `pilid.streams`.
"""
