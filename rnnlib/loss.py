"""The training objective's last layer: summed softmax cross-entropy over the real target tokens.

``nll_sum(logits (N, K), target (N,)) = -sum_n log softmax(logits_n)[target_n]`` over ``N``
target tokens; the same value and gradient as ``F.cross_entropy(logits, target, reduction="sum")``.

Equations
---------
- B Eq. (2) / A §2.2: log p(y | x) = sum_t log p(y_t | y_<t, x), each factor a softmax over
  the K target words (A Eq. 2)
- A Eq. (4): training maximises the mean over the pairs of log p(y | x); this is the sum of
  its negated terms (rnnlib.train divides by the sentence or token count)

Deviations
----------
- none: the value and gradient of the printed objective, only computed with fewer passes

Speed (same function)
---------------------
The ``(N, K)`` matrix is the largest of a training step (``K`` = the target shortlist). torch's
cross-entropy backward writes a zero ``(N, K)`` gradient, scatters into it and runs the
log-softmax backward over it (four passes over the matrix). Here the forward keeps its
log-softmax and the backward turns that saved matrix into the gradient in place,
``softmax - onehot(target)`` (one pass), so a training step makes three fewer passes over it.
The saved matrix is consumed: the graph can be backpropagated once (``retain_graph=True`` is
refused with a clear error).
"""
from __future__ import annotations

import torch
import torch.nn.functional as F


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
            raise RuntimeError("rnnlib.loss.nll_sum: the backward pass consumes its saved "
                               "log-probabilities; it cannot run twice (retain_graph=True)")
        ctx.consumed = True
        lsm, target = ctx.saved_tensors
        grad = lsm.exp_()  # softmax, in place of the saved log-softmax
        grad.scatter_add_(1, target.unsqueeze(1), grad.new_full((target.shape[0], 1), -1.0))
        return grad.mul_(grad_out), None


def nll_sum(logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """Summed NLL of ``target (N,) int64`` under ``logits (N, K)``: a scalar of the logits' dtype.

    Equals ``F.cross_entropy(logits, target, reduction="sum")`` in value and gradient.
    Under ``torch.no_grad`` (evaluation) it is the plain forward.
    """
    if logits.dim() != 2 or target.shape != logits.shape[:1]:
        raise ValueError(f"nll_sum: logits {tuple(logits.shape)} must be (N, K) and target "
                         f"{tuple(target.shape)} (N,)")
    if not (torch.is_grad_enabled() and logits.requires_grad):
        return F.cross_entropy(logits, target, reduction="sum")
    return _NLLSum.apply(logits, target)
