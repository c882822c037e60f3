"""The output layer's softmax over the ``K`` target words, computed in place (training and search).

The ``(N, K)`` logits are the largest matrix of a training step and of a search step (``K`` =
the target shortlist, ``N`` = target tokens or live hypotheses). Both functions here compute
what :mod:`rnnlib.loss` and :mod:`rnnlib.search` compute plainly, with fewer passes over it.

- :func:`nll_sum` equals :func:`rnnlib.loss.nll_sum` in value and gradient. torch's
  cross-entropy backward writes a zero ``(N, K)`` gradient, scatters into it and runs the
  log-softmax backward over it (four passes over the matrix). Here the forward keeps its
  log-softmax and the backward turns that saved matrix into the gradient in place,
  ``softmax - onehot(target)`` (one pass). The saved matrix is consumed: the graph can be
  backpropagated once (``retain_graph=True`` is refused with a clear error).
- :func:`log_softmax_` overwrites a search step's fp32 logits (used once) with their
  log-softmax, while the matrix is in cache.

Measured: see :mod:`rnnlib.fast.kernels` ("Measured").
"""
from __future__ import annotations

import torch
import torch.nn.functional as F

from ..loss import check_shapes


class _NLLSum(torch.autograd.Function):
    """``-sum_n log_softmax(x)_n[t_n]`` with the in-place backward described above."""

    @staticmethod
    def forward(ctx, logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        lsm = torch.log_softmax(logits, -1)
        picked = lsm.gather(1, target.unsqueeze(1))
        ctx.save_for_backward(lsm, target)
        ctx.consumed = False
        return -picked.sum()

    @staticmethod
    def backward(ctx, grad_out: torch.Tensor):
        if ctx.consumed:
            raise RuntimeError("rnnlib.fast.softmax.nll_sum: the backward pass consumes its saved "
                               "log-probabilities; it cannot run twice (retain_graph=True)")
        ctx.consumed = True
        lsm, target = ctx.saved_tensors
        grad = lsm.exp_()  # softmax, in place of the saved log-softmax
        grad.scatter_add_(1, target.unsqueeze(1), grad.new_full((target.shape[0], 1), -1.0))
        return grad.mul_(grad_out), None


def nll_sum(logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """:func:`rnnlib.loss.nll_sum` (same value and gradient) with the in-place backward.

    Without gradients (evaluation) it is ``F.cross_entropy``.
    """
    check_shapes(logits, target)
    if not (torch.is_grad_enabled() and logits.requires_grad):
        return F.cross_entropy(logits, target, reduction="sum")
    return _NLLSum.apply(logits, target)


def log_softmax_(logits: torch.Tensor) -> torch.Tensor:
    """``log_softmax(logits, -1)`` in fp32, written over ``logits (R, K)`` when they are
    contiguous fp32 (the caller must not need them again); otherwise a new fp32 matrix."""
    if logits.dtype == torch.float32 and logits.is_contiguous():
        return torch.log_softmax(logits, -1, out=logits)
    return torch.log_softmax(logits, -1, dtype=torch.float32)
