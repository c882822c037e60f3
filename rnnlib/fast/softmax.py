"""The output layer's softmax over the ``K`` target words in search, computed in place.

A search step's ``(R, K)`` logits (``R`` live hypotheses, ``K`` the target shortlist) are used
once: :func:`log_softmax_` overwrites them with their log-softmax while the matrix is in cache,
instead of writing a second ``(R, K)`` matrix, which made beam search at the cpu size faster.
Training keeps the plain :func:`rnnlib.loss.nll_sum`: a backward that turned the saved
log-softmax into the gradient in place measured no faster there, and was dropped. Both are
measured in ``BENCHMARKS.md``, section "The fast path".
"""

from __future__ import annotations

import torch


def log_softmax_(logits: torch.Tensor) -> torch.Tensor:
    """``log_softmax(logits, -1)`` in fp32, written over ``logits (R, K)`` when they are
    contiguous fp32 (the caller must not need them again); otherwise a new fp32 matrix."""
    if logits.dtype == torch.float32 and logits.is_contiguous():
        return torch.log_softmax(logits, -1, out=logits)
    return torch.log_softmax(logits, -1, dtype=torch.float32)
