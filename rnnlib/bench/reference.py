"""Straightforward reference implementations, written only as the baseline of ``rnnlib bench``.

They compute the same architectures as :mod:`rnnlib.models` (RNNsearch: Bahdanau et al. 2015,
Appendix A; RNNencdec: Cho et al. 2014, Appendix A) the way a first implementation would:

- every recurrent layer is a Python loop over ``torch.nn.GRUCell`` (one step at a time, the
  input projection recomputed inside the loop);
- the alignment model re-projects ``U_a h_j`` for every source word at every decoder step
  (B A.1.2 notes it can be precomputed; this baseline does not);
- the deep output and the softmax layer run inside the decoder loop, one step at a time;
- beam search decodes one sentence at a time (its hypotheses batched, as the GroundHog and
  dl4mt samplers do).

Nothing here is used for the book's results.

Deviations
----------
- ``torch.nn.GRUCell`` applies the reset gate after the recurrent product (``r * (U h)``),
  and the update gate on the old state (paper A Eq. 7); the matrix shapes and products are
  the papers', which is what the benchmark compares.
- No special initialisation (the benchmark measures speed, not learning).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from ..specials import BOS, EOS


def _maxout(t: torch.Tensor) -> torch.Tensor:
    """Pools of 2 over the last axis: ``(..., 2l) -> (..., l)`` (B A.2.2 ``t_i``)."""
    return t.view(*t.shape[:-1], -1, 2).max(-1).values


class ReferenceRNNSearch(nn.Module):
    """RNNsearch (B A.2): BiGRU encoder, additive attention, GRU decoder, maxout deep output."""

    def __init__(
        self, src_vocab: int, tgt_vocab: int, emb: int, hidden: int, maxout: int, align: int
    ) -> None:
        super().__init__()
        m, n, l = emb, hidden, maxout
        self.hidden = n
        self.src_emb = nn.Embedding(src_vocab, m)
        self.tgt_emb = nn.Embedding(tgt_vocab, m)
        self.enc_fwd = nn.GRUCell(m, n)
        self.enc_bwd = nn.GRUCell(m, n)
        self.W_s = nn.Linear(n, n)
        self.W_a = nn.Linear(n, align, bias=False)
        self.U_a = nn.Linear(2 * n, align)
        self.v_a = nn.Linear(align, 1, bias=False)
        self.dec = nn.GRUCell(m + 2 * n, n)
        self.U_o = nn.Linear(n, 2 * l)
        self.V_o = nn.Linear(m, 2 * l, bias=False)
        self.C_o = nn.Linear(2 * n, 2 * l, bias=False)
        self.W_o = nn.Linear(l, tgt_vocab)

    def encode(
        self, src: torch.Tensor, src_mask: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """``src (B,S)`` -> annotations ``H (B,S,2n)`` and ``s_0 (B,n) = tanh(W_s <-h_1)``."""
        x = self.src_emb(src)
        B, S, _ = x.shape
        h = x.new_zeros(B, self.hidden)
        fwd = []
        for t in range(S):
            h = torch.where(src_mask[:, t, None], self.enc_fwd(x[:, t], h), h)
            fwd.append(h)
        h = x.new_zeros(B, self.hidden)
        bwd = [None] * S
        for t in reversed(range(S)):
            h = torch.where(src_mask[:, t, None], self.enc_bwd(x[:, t], h), h)
            bwd[t] = h
        H = torch.cat([torch.stack(fwd, 1), torch.stack(bwd, 1)], -1)
        return H, torch.tanh(self.W_s(bwd[0]))

    def step(self, y_prev: torch.Tensor, s: torch.Tensor, H: torch.Tensor, src_mask: torch.Tensor):
        """``y_prev (B,)``, ``s (B,n)`` -> ``(logits (B,V), s_new (B,n))``; ``U_a H`` recomputed
        here."""
        e = self.tgt_emb(y_prev)
        energy = self.v_a(torch.tanh(self.W_a(s)[:, None] + self.U_a(H))).squeeze(-1)
        energy = energy.masked_fill(~src_mask, torch.finfo(energy.dtype).min)
        alpha = torch.softmax(energy, -1)
        c = torch.bmm(alpha[:, None], H).squeeze(1)
        t = _maxout(self.U_o(s) + self.V_o(e) + self.C_o(c))
        return self.W_o(t), self.dec(torch.cat([e, c], -1), s)

    def forward(self, src, src_mask, tgt_in):
        H, s = self.encode(src, src_mask)
        out = []
        for i in range(tgt_in.shape[1]):
            logits, s = self.step(tgt_in[:, i], s, H, src_mask)
            out.append(logits)
        return torch.stack(out, 1)


class ReferenceRNNEncDec(nn.Module):
    """RNN Encoder--Decoder (A Appendix A): GRU encoder, ``c = tanh(V h_T)``, ``s_0 = tanh(V' c)``,
    ``c`` fed to every decoder step and to the maxout deep output."""

    def __init__(self, src_vocab: int, tgt_vocab: int, emb: int, hidden: int, maxout: int) -> None:
        super().__init__()
        m, n, l = emb, hidden, maxout
        self.hidden = n
        self.src_emb = nn.Embedding(src_vocab, m)
        self.tgt_emb = nn.Embedding(tgt_vocab, m)
        self.enc = nn.GRUCell(m, n)
        self.V = nn.Linear(n, n)
        self.V_init = nn.Linear(n, n)
        self.dec = nn.GRUCell(m + n, n)
        self.O_h = nn.Linear(n, 2 * l)
        self.O_y = nn.Linear(m, 2 * l, bias=False)
        self.O_c = nn.Linear(n, 2 * l, bias=False)
        self.W_o = nn.Linear(l, tgt_vocab)

    def encode(self, src, src_mask):
        """``src (B,S)`` -> summary ``c (B,n)`` (as ``(B,1,n)``) and ``s_0 (B,n)``."""
        x = self.src_emb(src)
        h = x.new_zeros(x.shape[0], self.hidden)
        for t in range(x.shape[1]):
            h = torch.where(src_mask[:, t, None], self.enc(x[:, t], h), h)
        c = torch.tanh(self.V(h))
        return c[:, None], torch.tanh(self.V_init(c))

    def step(self, y_prev, s, C, src_mask):
        c = C[:, 0]
        e = self.tgt_emb(y_prev)
        s = self.dec(torch.cat([e, c], -1), s)
        t = _maxout(self.O_h(s) + self.O_y(e) + self.O_c(c))
        return self.W_o(t), s

    def forward(self, src, src_mask, tgt_in):
        C, s = self.encode(src, src_mask)
        out = []
        for i in range(tgt_in.shape[1]):
            logits, s = self.step(tgt_in[:, i], s, C, src_mask)
            out.append(logits)
        return torch.stack(out, 1)


@torch.no_grad()
def beam_search_one(
    model: nn.Module, src: torch.Tensor, beam_size: int, max_len: int
) -> tuple[list[int], float]:
    """Beam search for ONE source sentence ``src (S,)``: the best finished ``(ids, log p)``.

    Live hypotheses are batched; a hypothesis that emits ``EOS`` leaves the beam, which shrinks.
    """
    mask = torch.ones(1, src.shape[0], dtype=torch.bool)
    enc, s = model.encode(src[None], mask)
    hyps, scores = [[]], torch.zeros(1)
    prev = torch.tensor([BOS])
    finished: list[tuple[list[int], float]] = []
    for _ in range(max_len):
        k = len(hyps)
        logits, s = model.step(prev, s, enc.expand(k, -1, -1), mask.expand(k, -1))
        total = (scores[:, None] + F.log_softmax(logits, -1)).view(-1)
        top, idx = total.topk(beam_size - len(finished))
        V = logits.shape[-1]
        keep, new_hyps = [], []
        for score, flat in zip(top.tolist(), idx.tolist()):
            row, word = divmod(flat, V)
            if word == EOS:
                finished.append((hyps[row] + [word], score))
            else:
                keep.append((row, word, score))
                new_hyps.append(hyps[row] + [word])
        if len(finished) >= beam_size or not keep:
            break
        rows = torch.tensor([r for r, _, _ in keep])
        hyps, s = new_hyps, s[rows]
        scores = torch.tensor([sc for _, _, sc in keep])
        prev = torch.tensor([w for _, w, _ in keep])
    if not finished:
        finished = [(h, float(sc)) for h, sc in zip(hyps, scores.tolist())]
    return max(finished, key=lambda f: f[1])
