"""The summed cross-entropy (rnnlib.loss) and search's in-place log-softmax
(rnnlib.fast.softmax)."""

import pytest
import torch
import torch.nn.functional as F

from rnnlib.fast.softmax import log_softmax_
from rnnlib.loss import nll_sum


def test_value_and_gradient_equal_cross_entropy():
    g = torch.Generator().manual_seed(0)
    x = (3 * torch.randn(37, 101, generator=g)).requires_grad_()
    t = torch.randint(0, 101, (37,), generator=g)
    t[:5] = 7  # repeated targets
    ref = x.detach().clone().requires_grad_()
    value = nll_sum(x, t)
    (2.5 * value).backward()
    (2.5 * F.cross_entropy(ref, t, reduction="sum")).backward()
    assert torch.allclose(
        value.detach(), F.cross_entropy(ref.detach(), t, reduction="sum"), atol=1e-4
    )
    assert torch.allclose(x.grad, ref.grad, atol=1e-6)


def test_value_is_the_sum_of_minus_log_probabilities_and_bad_shapes_are_named():
    x = torch.tensor([[0.0, 0.0], [1.0, 0.0]], dtype=torch.float64)
    p = 1 / (1 + torch.exp(torch.tensor(-1.0, dtype=torch.float64)))  # softmax([1, 0])[0]
    assert float(nll_sum(x, torch.tensor([1, 0]))) == pytest.approx(
        -float(torch.log(torch.tensor(0.5)) + torch.log(p))
    )
    with pytest.raises(ValueError, match=r"logits \(2, 2\).*target \(3,\)"):
        nll_sum(x, torch.tensor([0, 1, 0]))


def test_search_log_softmax_overwrites_fp32_logits_only():
    x = torch.randn(5, 13)
    want = torch.log_softmax(x, -1)
    y = x.clone()
    out = log_softmax_(y)
    assert out.data_ptr() == y.data_ptr() and torch.allclose(out, want, atol=1e-6)
    b = x.to(torch.bfloat16)
    out = log_softmax_(b)
    assert out.dtype == torch.float32 and torch.equal(b, x.to(torch.bfloat16))
    assert torch.allclose(out, torch.log_softmax(b.float(), -1), atol=1e-6)
