"""The alignment model of RNNsearch (Bahdanau et al. 2015, Eqs. 5--6 and Appendix A.1.2).

``e_ij = v_a^T tanh(W_a s_{i-1} + U_a h_j)``, ``alpha_ij = softmax_j(e_ij)``, ``c_i = sum_j alpha_ij h_j``.
``U_a h_j`` does not depend on ``i``, so :meth:`AdditiveAttention.precompute` computes it once per
sentence ("we can pre-compute it in advance", A.1.2) and every decoder step reuses it.

Shapes: query ``s (B, n)``, annotations ``H (B, S, 2n)``, keys ``U_a H (B, S, n')``, mask ``(B, S)``
bool (True at real source words), context ``(B, 2n)``, weights ``(B, S)``.

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

Speed (same equations)
----------------------
- :meth:`AdditiveAttention.attend` takes the query product already computed, so the decoder can
  multiply ``s_{i-1}`` by ``W_a`` and its own ``U_r, U_z`` in one stacked product.
- ``tanh(u) = 2 sigmoid(2u) - 1`` (an identity), so ``e_ij = (2 v_a)^T sigmoid(2u) - sum(v_a)``
  with ``u = W_a s_{i-1} + U_a h_j``: torch's CPU ``tanh`` is about 9x slower than its
  ``sigmoid``, and this (B, S, n') map is the largest element-wise cost of training and search.
  The results agree with ``tanh`` to float rounding (about 1e-7).
- The factor 2 is carried by the operands: :meth:`AdditiveAttention.precompute` returns the
  keys ``2 U_a h_j`` and :meth:`AdditiveAttention.attend` takes the query ``2 W_a s_{i-1}``, so
  ``2u`` is one addition and no pass over the (B, S, n') map multiplies it by 2. Doubling is
  exact in floating point, so the energies are bitwise those of ``2 * (U_a h_j + W_a s_{i-1})``.
- Without gradients (search), the map is computed for a block of rows at a time (about 2 MiB),
  so the addition, the sigmoid and the product with ``v_a`` read it while it is in cache; with
  hundreds of hypotheses (80 sentences x beam 10) the whole map is 25 MB.
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
        """Plain default (v_a uniform +-1/sqrt(n')); :mod:`rnnlib.init` applies the papers' (v_a = 0)."""
        bound = self.v_a.shape[0] ** -0.5
        nn.init.uniform_(self.v_a, -bound, bound)

    #: floats of the (rows, S, n') map computed at once by the gradient-free path (2 MiB)
    BLOCK = 1 << 19

    def precompute(self, annotations: torch.Tensor) -> torch.Tensor:
        """The keys ``2 U_a h_j`` for every source position: ``(B, S, 2n) -> (B, S, n')`` (doubled, see Speed)."""
        return self.U_a(annotations).mul_(2)

    def forward(self, query: torch.Tensor, keys: torch.Tensor, annotations: torch.Tensor,
                mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``query s_{i-1} (B, n)``, ``keys`` from :meth:`precompute` ``(B, S, n')``, ``annotations (B, S, 2n)``,
        ``mask (B, S)`` -> ``(context (B, 2n), alpha (B, S))``."""
        return self.attend(self.W_a(query).mul_(2), keys, annotations, mask)

    def attend(self, doubled_query: torch.Tensor, keys: torch.Tensor, annotations: torch.Tensor,
               mask: torch.Tensor, v_a: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """As :meth:`forward` from ``2 W_a s_{i-1} (B, n')``; ``v_a``: the vector, if the caller cast it once."""
        v_a = self.v_a if v_a is None else v_a
        # v_a^T tanh(u) = (2 v_a)^T sigmoid(2u) - sum(v_a), 2u = 2 W_a s_{i-1} + 2 U_a h_j
        v2, q = 2 * v_a, doubled_query.unsqueeze(1)
        if torch.is_grad_enabled() and (keys.requires_grad or q.requires_grad or v2.requires_grad):
            energy = (keys + q).sigmoid_() @ v2
        else:
            rows = max(1, self.BLOCK // max(1, keys.shape[1] * keys.shape[2]))
            energy = torch.cat([(k + qq).sigmoid_() @ v2 for k, qq in zip(keys.split(rows), q.split(rows))])
        energy = (energy - v_a.sum()).masked_fill(~mask, torch.finfo(energy.dtype).min)  # (B, S)
        alpha = torch.softmax(energy, dim=-1)
        context = torch.bmm(alpha.unsqueeze(1).to(annotations.dtype), annotations).squeeze(1)
        return context, alpha
