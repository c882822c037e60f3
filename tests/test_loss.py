"""The summed cross-entropy: rnnlib.loss (plain) and rnnlib.fast.softmax (in-place backward) agree
with torch's cross-entropy in value and gradient."""
import pytest
import torch
import torch.nn.functional as F

from rnnlib import loss
from rnnlib.fast import softmax

BOTH = [loss.nll_sum, softmax.nll_sum]


@pytest.mark.parametrize("nll_sum", BOTH, ids=["plain", "fast"])
def test_value_and_gradient_equal_cross_entropy(nll_sum):
    g = torch.Generator().manual_seed(0)
    x = (3 * torch.randn(37, 101, generator=g)).requires_grad_()
    t = torch.randint(0, 101, (37,), generator=g)
    t[:5] = 7  # repeated targets
    ref = x.detach().clone().requires_grad_()
    value = nll_sum(x, t)
    (2.5 * value).backward()
    (2.5 * F.cross_entropy(ref, t, reduction="sum")).backward()
    assert torch.allclose(value.detach(), F.cross_entropy(ref.detach(), t, reduction="sum"), atol=1e-4)
    assert torch.allclose(x.grad, ref.grad, atol=1e-6)


def test_fast_gradient_matches_finite_differences_in_float64():
    # (torch.autograd.gradcheck backpropagates twice through one graph, which this loss refuses)
    g = torch.Generator().manual_seed(1)
    x = torch.randn(6, 9, dtype=torch.float64, generator=g, requires_grad=True)
    t = torch.randint(0, 9, (6,), generator=g)
    softmax.nll_sum(x, t).backward()
    eps, numeric = 1e-6, torch.zeros_like(x)
    with torch.no_grad():
        for i in range(x.shape[0]):
            for j in range(x.shape[1]):
                d = torch.zeros_like(x)
                d[i, j] = eps
                numeric[i, j] = (softmax.nll_sum(x + d, t) - softmax.nll_sum(x - d, t)) / (2 * eps)
    assert torch.allclose(x.grad, numeric, atol=1e-8)


def test_second_backward_is_refused_and_bad_shapes_named():
    x = torch.randn(4, 5, requires_grad=True)
    value = softmax.nll_sum(x, torch.tensor([0, 1, 2, 3]))
    value.backward(retain_graph=True)
    with pytest.raises(RuntimeError, match="cannot run twice"):
        value.backward()
    for nll_sum in BOTH:
        with pytest.raises(ValueError, match=r"logits \(4, 5\).*target \(3,\)"):
            nll_sum(x, torch.tensor([0, 1, 2]))


def test_no_grad_gives_the_same_value():
    x = torch.randn(8, 11)
    t = torch.randint(0, 11, (8,))
    with torch.no_grad():
        for nll_sum in BOTH:
            assert torch.allclose(nll_sum(x, t), F.cross_entropy(x, t, reduction="sum"), atol=1e-5)


def test_search_log_softmax_overwrites_fp32_logits_only():
    x = torch.randn(5, 13)
    want = torch.log_softmax(x, -1)
    y = x.clone()
    out = softmax.log_softmax_(y)
    assert out.data_ptr() == y.data_ptr() and torch.allclose(out, want, atol=1e-6)
    b = x.to(torch.bfloat16)
    out = softmax.log_softmax_(b)
    assert out.dtype == torch.float32 and torch.equal(b, x.to(torch.bfloat16))
    assert torch.allclose(out, torch.log_softmax(b.float(), -1), atol=1e-6)
