"""The alignment model equals B's printed equations (Eqs. 5-6), written out per (i, j) pair.

(The fast path's forms of the same model are checked against it in tests/test_fast.py.)"""

import torch

from rnnlib.attention import AdditiveAttention


def per_pair(att: AdditiveAttention, s, H, lengths):
    """For each sentence b and source word j < its length: e_bj = v_a . tanh(W_a s_b + U_a h_bj);
    alpha = exp(e) / sum_k exp(e_k) over the real words only; c_b = sum_j alpha_bj h_bj."""
    B, S, _ = H.shape
    alpha, c = torch.zeros(B, S), torch.zeros(B, H.shape[2])
    for b in range(B):
        e = torch.stack(
            [
                att.v_a
                @ torch.tanh(att.W_a.weight @ s[b] + att.U_a.weight @ H[b, j] + att.U_a.bias)
                for j in range(lengths[b])
            ]
        )
        a = torch.exp(e - e.max()) / torch.exp(e - e.max()).sum()
        alpha[b, : lengths[b]] = a
        c[b] = sum(a[j] * H[b, j] for j in range(lengths[b]))
    return c, alpha


def test_attention_equals_printed_equations_and_ignores_padding():
    g = torch.Generator().manual_seed(0)
    B, S, n, a = 7, 9, 6, 5
    att = AdditiveAttention(n, 2 * n, a)
    with torch.no_grad():
        for p in att.parameters():
            torch.nn.init.normal_(p, 0.0, 0.5, generator=g)
    s, H = torch.randn(B, n, generator=g), torch.randn(B, S, 2 * n, generator=g)
    lengths = [9, 1, 4, 9, 2, 7, 5]
    mask = torch.arange(S).unsqueeze(0) < torch.tensor(lengths).unsqueeze(1)
    want_c, want_alpha = per_pair(att, s, H, lengths)
    H_noisy = H.masked_fill(~mask.unsqueeze(2), 1e3)  # whatever sits under the padding
    with torch.no_grad():
        c, alpha = att(s, att.precompute(H_noisy), H_noisy, mask)
    torch.testing.assert_close(alpha, want_alpha, atol=1e-6, rtol=1e-5)
    torch.testing.assert_close(c, want_c, atol=1e-5, rtol=1e-5)
    assert bool((alpha[~mask] == 0).all())
