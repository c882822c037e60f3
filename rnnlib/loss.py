"""The training objective's last layer: summed softmax cross-entropy over the real target tokens.

``nll_sum(logits (N, K), target (N,)) = -sum_n log softmax(logits_n)[target_n]`` over ``N``
target tokens. Training uses it on both paths, plain and fast (a faster backward did not pay:
see :mod:`rnnlib.fast.softmax`).

Equations
---------
- B Eq. (2) / A §2.2: log p(y | x) = sum_t log p(y_t | y_<t, x), each factor a softmax over
  the K target words (A Eq. 2)
- A Eq. (4): training maximises the mean over the pairs of log p(y | x); this is the sum of
  its negated terms (rnnlib.train divides by the sentence or token count)

Deviations
----------
- none: the printed objective
"""

from __future__ import annotations

import torch


def check_shapes(logits: torch.Tensor, target: torch.Tensor) -> None:
    """Raise ``ValueError`` naming both shapes unless ``logits`` is ``(N, K)`` and ``target``
    ``(N,)``."""
    if logits.dim() != 2 or target.shape != logits.shape[:1]:
        raise ValueError(
            f"nll_sum: logits {tuple(logits.shape)} must be (N, K) and target "
            f"{tuple(target.shape)} (N,)"
        )


def nll_sum(logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """Summed NLL of ``target (N,) int64`` under ``logits (N, K)``: a scalar of the logits'
    dtype."""
    check_shapes(logits, target)
    return -torch.log_softmax(logits, -1).gather(1, target.unsqueeze(1)).sum()
