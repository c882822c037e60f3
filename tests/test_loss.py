"""rnnlib.loss.nll_sum: the value and gradient of torch's summed cross-entropy, with a cheaper backward."""
import pytest
import torch
import torch.nn.functional as F

from rnnlib.loss import nll_sum


def test_value_and_gradient_equal_cross_entropy():
    g = torch.Generator().manual_seed(0)
    x = (3 * torch.randn(37, 101, generator=g)).requires_grad_()
    t = torch.randint(0, 101, (37,), generator=g)
    t[:5] = 7  # repeated targets
    ref = x.detach().clone().requires_grad_()
    (2.5 * nll_sum(x, t)).backward()
    (2.5 * F.cross_entropy(ref, t, reduction="sum")).backward()
    assert torch.allclose(nll_sum(x.detach(), t), F.cross_entropy(ref.detach(), t, reduction="sum"), atol=1e-4)
    assert torch.allclose(x.grad, ref.grad, atol=1e-6)


def test_gradient_matches_finite_differences_in_float64():
    # (torch.autograd.gradcheck backpropagates twice through one graph, which this loss refuses)
    g = torch.Generator().manual_seed(1)
    x = torch.randn(6, 9, dtype=torch.float64, generator=g, requires_grad=True)
    t = torch.randint(0, 9, (6,), generator=g)
    nll_sum(x, t).backward()
    eps, numeric = 1e-6, torch.zeros_like(x)
    with torch.no_grad():
        for i in range(x.shape[0]):
            for j in range(x.shape[1]):
                d = torch.zeros_like(x)
                d[i, j] = eps
                numeric[i, j] = (nll_sum(x + d, t) - nll_sum(x - d, t)) / (2 * eps)
    assert torch.allclose(x.grad, numeric, atol=1e-8)


def test_second_backward_is_refused_and_bad_shapes_named():
    x = torch.randn(4, 5, requires_grad=True)
    loss = nll_sum(x, torch.tensor([0, 1, 2, 3]))
    loss.backward(retain_graph=True)
    with pytest.raises(RuntimeError, match="cannot run twice"):
        loss.backward()
    with pytest.raises(ValueError, match=r"logits \(4, 5\).*target \(3,\)"):
        nll_sum(x, torch.tensor([0, 1, 2]))


def test_no_grad_gives_the_same_value():
    x = torch.randn(8, 11)
    t = torch.randint(0, 11, (8,))
    with torch.no_grad():
        assert torch.allclose(nll_sum(x, t), F.cross_entropy(x, t, reduction="sum"), atol=1e-5)
