"""The alignment model equals B's printed equations (Eqs. 5-6), on both of its code paths."""
import pytest
import torch

from rnnlib.attention import AdditiveAttention


def textbook(att: AdditiveAttention, s, H, mask):
    """e_ij = v_a^T tanh(W_a s_{i-1} + U_a h_j); alpha = softmax over the real words; c = sum alpha h."""
    e = torch.tanh(att.W_a(s).unsqueeze(1) + att.U_a(H)) @ att.v_a
    e = e.masked_fill(~mask, float("-inf"))
    alpha = torch.softmax(e, -1)
    return (alpha.unsqueeze(2) * H).sum(1), alpha


@pytest.mark.parametrize("grad", [True, False])
def test_attention_equals_printed_equations(grad, monkeypatch):
    g = torch.Generator().manual_seed(0)
    B, S, n, a = 7, 9, 6, 5
    att = AdditiveAttention(n, 2 * n, a)
    for p in att.parameters():
        torch.nn.init.normal_(p, 0.0, 0.5, generator=g)
    s, H = torch.randn(B, n, generator=g), torch.randn(B, S, 2 * n, generator=g)
    mask = torch.arange(S).unsqueeze(0) < torch.tensor([9, 1, 4, 9, 2, 7, 5]).unsqueeze(1)
    want_c, want_alpha = textbook(att, s, H, mask)
    # the gradient-free path works on blocks of rows: make them 2 rows here
    monkeypatch.setattr(AdditiveAttention, "BLOCK", 2 * S * a)
    with torch.set_grad_enabled(grad):
        c, alpha = att(s, att.precompute(H), H, mask)
    assert c.requires_grad == grad
    torch.testing.assert_close(alpha, want_alpha, atol=1e-6, rtol=1e-5)
    torch.testing.assert_close(c, want_c, atol=1e-6, rtol=1e-5)
    assert bool((alpha[~mask] == 0).all())


def test_blocked_and_whole_energies_agree():
    """Search (no gradients, blocks of rows) and training (the whole map) compute the same weights."""
    g = torch.Generator().manual_seed(1)
    att = AdditiveAttention(8, 16, 12)
    torch.nn.init.normal_(att.v_a, 0.0, 1.0, generator=g)
    s, H = torch.randn(50, 8, generator=g), torch.randn(50, 11, 16, generator=g)
    mask = torch.ones(50, 11, dtype=torch.bool)
    keys = att.precompute(H)
    whole = att(s, keys, H, mask)[1]  # parameters require grad: the whole-map path
    assert whole.requires_grad
    with torch.no_grad():
        att.BLOCK = 3 * 11 * 12
        blocked = att(s, keys, H, mask)[1]
    torch.testing.assert_close(blocked, whole.detach(), atol=1e-7, rtol=1e-6)
