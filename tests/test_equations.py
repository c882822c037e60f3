"""Equation-level tests: the printed equations computed by hand from the models' own named weights.

Each test rebuilds one equation of the papers with plain torch ops (``x @ W.T + b``, ``tanh``,
``sigmoid``, ``max``) from the parameters of a small seeded model, and compares it with what the
model's modules produce (fp32, atol 1e-6):

- B App. A.2.2: s_0 = tanh(W_s <-h_1), <-h_1 the backward encoder's state at the first position;
- A App. A / B's RNNencdec: c = tanh(V h<N>) and h'<0> = tanh(V' c);
- B App. A.2.2: t~_i = U_o s_{i-1} + V_o E y_{i-1} + C_o c_i, t_i = [max(t~_i,2j-1, t~_i,2j)]_j,
  p(y_i) = softmax(W_o t_i); A App. A.1.1's variant on the current state h'<t>, output G_l G_r.

The maxout tests pair ADJACENT units (2j-1, 2j), as both papers print, on inputs where pairing the
first half with the second half gives a different answer.

Every weight (biases, v_a and the [BOS] row included) is redrawn from a seeded Gaussian, so no
term of an equation is zero by initialisation and a missing or extra term shows.
"""

from __future__ import annotations

import pytest
import torch

from rnnlib.batch import pad_sources
from rnnlib.decoders import DeepOutput
from rnnlib.fast import kernels
from rnnlib.presets import build_model, preset
from rnnlib.specials import BOS, EOS

ATOL = 1e-6
SRC = [[5, 6, 7, 8, 9, 10], [11, 12], [13, 14, 15, 16]]  # words; pad_sources appends EOS
PREV = torch.tensor([BOS, 20, 31])  # y_{i-1} of each sentence (BOS: e = 0)
PATHS = {
    "module": lambda m: m,
    "fast": kernels.wrap,
}  # the modules, and the fast path training uses


def _model(name: str, seed: int = 0):
    """The smoke preset ``name`` with every parameter ~ N(0, 0.5^2), seeded; fp32, eval mode."""
    model = build_model(preset(name, init="default")).float().eval()
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.randn(p.shape, generator=g) * 0.5)
    return model


def lin(layer, x: torch.Tensor) -> torch.Tensor:
    """``layer.weight x (+ layer.bias)`` by hand (the bias only if the layer has one)."""
    y = x @ layer.weight.T
    return y if layer.bias is None else y + layer.bias


def gru_by_hand(cell, xs: list[torch.Tensor]) -> torch.Tensor:
    """The state after reading ``xs`` (each ``(m,)``) from h<0> = 0, A Eqs. 5--8 (reset before
    U)."""
    assert cell.reset == "before" and cell.C is None
    h = torch.zeros(cell.hidden_size)
    for x in xs:
        r = torch.sigmoid(lin(cell.W_r, x) + lin(cell.U_r, h))  # A Eq. 5
        z = torch.sigmoid(lin(cell.W_z, x) + lin(cell.U_z, h))  # A Eq. 6
        h_tilde = torch.tanh(lin(cell.W, x) + lin(cell.U, r * h))  # A Eq. 8
        h = z * h + (1 - z) * h_tilde  # A Eq. 7
    return h


def maxout_by_hand(t_tilde: torch.Tensor) -> torch.Tensor:
    """t_j = max(t~_{2j-1}, t~_{2j}), j = 1..l (1-based as printed; 0-based: units 2j and 2j+1)."""
    l = t_tilde.shape[-1] // 2
    return torch.stack(
        [torch.maximum(t_tilde[..., 2 * j], t_tilde[..., 2 * j + 1]) for j in range(l)], -1
    )


def halves(t_tilde: torch.Tensor) -> torch.Tensor:
    """The wrong pairing: unit j with unit j + l."""
    l = t_tilde.shape[-1] // 2
    return torch.maximum(t_tilde[..., :l], t_tilde[..., l:])


def attention_by_hand(att, s_prev: torch.Tensor, ann: torch.Tensor, length: int) -> torch.Tensor:
    """c_i = sum_j alpha_ij h_j, alpha_ij = softmax_j(v_a^T tanh(W_a s_{i-1} + U_a h_j)) over the
    real positions (B Eqs. 5--6)."""
    h = ann[:length]
    e = torch.tanh(lin(att.W_a, s_prev) + lin(att.U_a, h)) @ att.v_a
    alpha = torch.exp(e - e.max()) / torch.exp(e - e.max()).sum()
    return (alpha.unsqueeze(1) * h).sum(0)


# ---------------------------------------------------------------------------------------------
# initial decoder states


@pytest.mark.parametrize("path", list(PATHS))
@torch.no_grad()
def test_rnnsearch_initial_state_is_tanh_W_s_of_the_first_backward_state(path):
    """B A.2.2: s_0 = tanh(W_s <-h_1) (+ W_s's bias), <-h_1 the backward RNN's state after reading
    the sentence from its EOS back to its first word."""
    model = _model("smoke-rnnsearch")
    run = PATHS[path](model)
    dec, enc_mod, n = model.decoder, model.encoder, model.config.hidden
    assert dec.W_s.bias is not None
    src, mask = pad_sources(SRC)
    enc = run.encode(src, mask)
    s0 = run.init_state(enc)
    for b, words in enumerate(SRC):
        x = [enc_mod.embed.weight[w] for w in words + [EOS]]
        back_h1 = gru_by_hand(enc_mod.bwd.cell, x[::-1])  # <-h_1: read x_N (EOS) .. x_1
        fwd_hN = gru_by_hand(enc_mod.fwd.cell, x)  # ->h_N (not s_0's input)
        torch.testing.assert_close(enc.annotations[b, 0, n:], back_h1, atol=ATOL, rtol=0)
        expected = torch.tanh(back_h1 @ dec.W_s.weight.T + dec.W_s.bias)
        torch.testing.assert_close(s0[b], expected, atol=ATOL, rtol=0)
        # the test can tell <-h_1 from the other candidates and the bias from none
        for wrong in (torch.tanh(lin(dec.W_s, fwd_hN)), torch.tanh(back_h1 @ dec.W_s.weight.T)):
            assert (s0[b] - wrong).abs().max() > 1e-3


@pytest.mark.parametrize("path", list(PATHS))
@pytest.mark.parametrize("name", ["smoke-rnnencdec", "smoke-cho2014"])
@torch.no_grad()
def test_rnnencdec_summary_is_tanh_V_h_N_and_initial_state_tanh_V_prime_c(name, path):
    """A App. A (B's RNNencdec): c = tanh(V h<N>), h<N> the forward state after the source's EOS;
    h'<0> = tanh(V' c). ``V`` and ``V'`` (``V_prime``) each have a bias (rnnlib.encoders/decoders
    Deviations)."""
    model = _model(name)
    run = PATHS[path](model)
    enc_mod, dec = model.encoder, model.decoder
    src, mask = pad_sources(SRC)
    enc = run.encode(src, mask)
    h0 = run.init_state(enc)
    for b, words in enumerate(SRC):
        h_N = gru_by_hand(enc_mod.rnn.cell, [enc_mod.embed.weight[w] for w in words + [EOS]])
        c = torch.tanh(h_N @ enc_mod.V.weight.T + enc_mod.V.bias)
        torch.testing.assert_close(enc.context[b], c, atol=ATOL, rtol=0)
        torch.testing.assert_close(enc.init[b], c, atol=ATOL, rtol=0)
        h_prime0 = torch.tanh(c @ dec.V_prime.weight.T + dec.V_prime.bias)
        torch.testing.assert_close(h0[b], h_prime0, atol=ATOL, rtol=0)
        assert (h0[b] - torch.tanh(c @ dec.V_prime.weight.T)).abs().max() > 1e-3  # the bias shows
        assert (h0[b] - c).abs().max() > 1e-3  # h'<0> is not c itself


# ---------------------------------------------------------------------------------------------
# the deep output's maxout


def test_maxout_pairs_adjacent_units_on_a_constructed_t_tilde():
    """t~ = (0, 3, 1, 2): adjacent pairs give t = (3, 2); first half with second half would give
    (1, 3)."""
    out = DeepOutput(state=1, emb=1, ctx=1, maxout=2, vocab=5)
    with torch.no_grad():
        for layer in (out.U_o, out.V_o, out.C_o):
            layer.weight.zero_()
        out.U_o.bias.copy_(torch.tensor([0.0, 3.0, 1.0, 2.0]))
        zero = torch.zeros(1, 1)
        t = out.hidden(zero, zero, zero)
    assert t.tolist() == [[3.0, 2.0]]
    t_tilde = out.U_o.bias.detach()
    assert maxout_by_hand(t_tilde).tolist() == [3.0, 2.0] and halves(t_tilde).tolist() == [1.0, 3.0]


@pytest.mark.parametrize("name", ["smoke-rnnsearch", "smoke-rnnencdec", "smoke-cho2014"])
@torch.no_grad()
def test_maxout_layer_is_the_printed_t_tilde_with_adjacent_pairs(name):
    """DeepOutput.hidden(s, e, c) = [max(t~_2j-1, t~_2j)]_j with t~ = U_o s + V_o e + C_o c
    (U_o's bias)."""
    out = _model(name).decoder.output
    g = torch.Generator().manual_seed(1)
    s = torch.randn(4, out.U_o.in_features, generator=g)
    e = torch.randn(4, out.V_o.in_features, generator=g)
    c = torch.randn(4, out.C_o.in_features, generator=g)
    t_tilde = s @ out.U_o.weight.T + out.U_o.bias + e @ out.V_o.weight.T + c @ out.C_o.weight.T
    t = out.hidden(s, e, c)
    assert t.shape == (4, out.maxout) and t_tilde.shape == (4, 2 * out.maxout)
    torch.testing.assert_close(t, maxout_by_hand(t_tilde), atol=ATOL, rtol=0)
    assert (
        maxout_by_hand(t_tilde) - halves(t_tilde)
    ).abs().max() > 1e-2  # the pairings differ here


@pytest.mark.parametrize("path", list(PATHS))
@pytest.mark.parametrize("name", ["smoke-rnnsearch", "smoke-rnnencdec", "smoke-cho2014"])
@torch.no_grad()
def test_step_logits_are_the_printed_deep_output(name, path):
    """One decoder step's logits from the printed equations.

    B A.2.2 (paper-rnnsearch, paper-rnnencdec): t~_i = U_o s_{i-1} + V_o E y_{i-1} + C_o c_i on the
    PREVIOUS state, c_i from the alignment model (RNNsearch) or the fixed c (RNNencdec);
    p(y_i) ~ exp(W_o t_i). A App. A.1.1 (paper-cho2014): s'<t> = O_h h'<t> + O_y e(y_{t-1}) + O_c c
    on the CURRENT state h'<t>, s<t>_i = max(s'<t>_2i-1, s'<t>_2i), logits G_l G_r s<t>.
    """
    model = _model(name)
    run = PATHS[path](model)
    dec, out, cfg = model.decoder, model.decoder.output, model.config
    assert cfg.deep_output_state == ("current" if name == "smoke-cho2014" else "prev")
    src, mask = pad_sources(SRC)
    enc = run.encode(src, mask)
    state = run.init_state(enc)
    logits, new_state, _ = run.step(PREV, state, enc)
    lengths = mask.sum(1).tolist()
    for b in range(len(SRC)):
        e = torch.zeros(cfg.emb) if PREV[b] == BOS else dec.embed.weight[PREV[b]]  # e(y_0) = 0
        if cfg.arch == "rnnsearch":
            c = attention_by_hand(dec.attention, state[b], enc.annotations[b], lengths[b])
        else:
            c = enc.context[b]
        s = new_state[b] if cfg.deep_output_state == "current" else state[b]
        assert (
            new_state[b] - state[b]
        ).abs().max() > 1e-3  # prev and current differ: the test tells them apart
        t_tilde = s @ out.U_o.weight.T + out.U_o.bias + e @ out.V_o.weight.T + c @ out.C_o.weight.T
        t = maxout_by_hand(t_tilde)
        if cfg.output_rank:  # A: G = G_l G_r, G_l with its bias
            expected = (t @ out.G_r.weight.T) @ out.W_o.weight.T + out.W_o.bias
            assert out.G_r.weight.shape == (cfg.output_rank, cfg.maxout)
        else:  # B: W_o
            expected = t @ out.W_o.weight.T + out.W_o.bias
        # logits reach |x| ~ 1 after three products: allow fp32 rounding relative to that (1e-6)
        torch.testing.assert_close(logits[b], expected, atol=ATOL, rtol=1e-6)
