"""The alignment model of RNNsearch (Bahdanau et al. 2015, Eqs. 5--6 and Appendix A.1.2).

``e_ij = v_a^T tanh(W_a s_{i-1} + U_a h_j)``, ``alpha_ij = softmax_j(e_ij)``,
``c_i = sum_j alpha_ij h_j``. ``U_a h_j`` does not depend on ``i``, so
:meth:`AdditiveAttention.precompute` computes it once per sentence ("we can pre-compute it in
advance", A.1.2) and every decoder step reuses it.

Shapes: query ``s (B, n)``, annotations ``H (B, S, 2n)``, keys ``U_a H (B, S, n')``, mask ``(B, S)``
bool (True at real source words), context ``(B, 2n)``, weights ``(B, S)``.

Training and search compute the same weights through :mod:`rnnlib.fast.kernels` (tested equal
in ``tests/test_fast.py``).

Equations
---------
- B Eq. 6 / A.1.2: e_ij = v_a^T tanh(W_a s_{i-1} + U_a h_j), with U_a h_j precomputed
- B Eq. 6: alpha_ij = exp(e_ij) / sum_k exp(e_ik)
- B Eq. 5: c_i = sum_j alpha_ij h_j

Deviations
----------
- ``U_a`` carries a bias (zero at init, B.1 "all the bias vectors"); the printed equation omits it.
- A.1.2 sizes W_a (n x n), v_a (n) while A.2.2 uses n' (Reading the papers,
  ``reading-alignment-size``); ``align`` sets n' (B: n' = n = 1000).
- Padded source positions (beyond a sentence's length) are excluded from the softmax
  (their energies are set to the dtype's most negative finite value), so they get exactly 0
  weight; the paper processes one unpadded sentence at a time.
"""

from __future__ import annotations

import torch
from torch import nn


class AdditiveAttention(nn.Module):
    """``W_a (n', n)`` (no bias), ``U_a (n', key_size)`` + bias, ``v_a (n',)``."""

    def __init__(self, query_size: int, key_size: int, hidden_size: int) -> None:
        super().__init__()
        self.W_a = nn.Linear(query_size, hidden_size, bias=False)
        self.U_a = nn.Linear(key_size, hidden_size, bias=True)
        self.v_a = nn.Parameter(torch.empty(hidden_size))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Plain default (v_a uniform +-1/sqrt(n')); :mod:`rnnlib.init` applies the papers'
        (v_a = 0)."""
        bound = self.v_a.shape[0] ** -0.5
        nn.init.uniform_(self.v_a, -bound, bound)

    def precompute(self, annotations: torch.Tensor) -> torch.Tensor:
        """The keys ``U_a h_j`` for every source position: ``(B, S, 2n) -> (B, S, n')`` (A.1.2)."""
        return self.U_a(annotations)

    def forward(
        self, query: torch.Tensor, keys: torch.Tensor, annotations: torch.Tensor, mask: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """``query s_{i-1} (B, n)``, ``keys`` from :meth:`precompute` ``(B, S, n')``,
        ``annotations (B, S, 2n)``, ``mask (B, S)`` -> ``(context c_i (B, 2n), alpha_i (B, S))``."""
        e = torch.tanh(self.W_a(query).unsqueeze(1) + keys) @ self.v_a  # (B, S)   Eq. 6
        e = e.masked_fill(~mask, torch.finfo(e.dtype).min)
        alpha = torch.softmax(e, dim=-1)  # (B, S)   Eq. 6
        context = (alpha.unsqueeze(2) * annotations).sum(1)  # (B, 2n)  Eq. 5
        return context, alpha
