"""Decoders: RNNsearch's attentive decoder (B A.2.2) and the RNN Encoder--Decoder's (A App. A.1.1).

Both expose the ONE decoder step every search goes through,
``step(prev_word (B,) int64, state (B, n), enc) -> (logits (B, K), new_state (B, n), attention (B, S) | None)``,
and a teacher-forced ``forward(enc, tgt_in (B, T)) -> logits (B, T, K)`` that runs only the
recurrence step by step and then the deep output and softmax projection for all ``T`` steps as
one large product (they depend only on the recorded states, previous words and contexts). It
equals calling ``step`` ``T`` times (tested to 1e-5).

The previous word of the first step is ``BOS``, whose embedding is forced to zero
(A App. A: "e(y_0) is an all-zero vector").

Equations
---------
- B A.2.2: s_i = GRU(E y_{i-1}, s_{i-1}, c_i) (gates and candidate see c_i through C_r, C_z, C)
- B A.2.2: s_0 = tanh(W_s <-h_1)
- B Eqs. 5--6: c_i from the alignment model queried with s_{i-1} (see rnnlib.attention)
- B A.2.2: t~_i = U_o s_{i-1} + V_o E y_{i-1} + C_o c_i; t_i,j = max(t~_i,2j-1, t~_i,2j); p(y_i) = softmax(W_o t_i)
- A App. A.1.1: h'<0> = tanh(V' c); h'<t> = GRU(e(y_{t-1}), h'<t-1>, c) with c in every gate and the candidate
- A App. A.1.1: s'<t> = O_h h'<t> + O_y y_{t-1} + O_c c; s<t>_i = max(s'<t>_2i-1, s'<t>_2i); p(y_t) = softmax(G s<t>)
- A App. A / §4.1.1: output matrix G = G_l G_r factored (low rank, rank 100 in the experiments)

Deviations
----------
- Deep-output state (Reading the papers, ``reading-deep-output-state``):
  ``deep_output_state="prev"`` feeds ``s_{i-1}`` as B prints in t~_i (B's Eq. 4 writes g(y_{i-1},
  s_i, c_i)); ``"current"`` feeds the updated state, as A prints (O_h h'<t>). The B presets use
  "prev", the A preset "current".
- A's decoder candidate brackets are garbled (Reading the papers, ``reading-decoder-brackets``).
  We read them as h~'<t> = tanh(W' e(y_{t-1}) + r' * (U' h'<t-1> + C c)): the reset gate, applied
  after the recurrent product, also scales the context. Option ``reset_context=True`` (the A
  preset); B's form (reset inside U(r * s), context not reset) is ``reset_context=False``.
- A's ``O_y y_{t-1}`` multiplies the one-hot previous word; we use its embedding
  (``O_y e(y_{t-1})``), as B's ``V_o E y_{i-1}`` and A's rank-100 input factorisation suggest.
- Output factorisation (Reading the papers, ``reading-output-factorisation``): A prints G_r in
  R^{500x1000}, but the maxout output has 500 units; we read G = G_l G_r as acting on the ``l``
  maxout units with an optional inner rank (``output_rank``: G_l (K x r), G_r (r x l));
  ``output_rank=None`` is B's full W_o.
- RNNencdec (Reading the papers, ``reading-rnnencdec``): B only says RNNencdec is RNNsearch with a
  fixed context; we use A's formulation for it: c = tanh(V h<N>), s_0 = tanh(V' c), c entering
  every decoder step's gates and candidate and the deep output (C_o c), which is B's decoder with
  c_i := c.
- ``[U_o | V_o | C_o]`` are stored as one matrix over the concatenation ``[s; E y; c]``; every
  linear map has a bias (zero at init; B.1 initialises "all the bias vectors" to zero).
- Optional dropout on the maxout units ``t_i`` (``dropout``, 0 in every paper preset; not in the papers).

Speed (same equations)
----------------------
- RNNsearch: ``s_{i-1}`` feeds the alignment model (``W_a``) and the gates (``U_r, U_z``): one
  product with the stacked ``[2 W_a; U_r; U_z]`` per step (the alignment model takes its query
  doubled, see rnnlib.attention). ``C_{r,z,.} c_i`` is one product.
- ``W E y_{i-1}`` for every step is one product before the loop (teacher forcing).
- Under autocast the weights every step multiplies are cast once per sequence.
- ``forward(..., out_mask=tgt_mask)`` computes the deep output and ``W_o`` only for the real
  (unpadded) target positions, returned as ``(N, K)`` rows in row-major order of the mask.
"""
from __future__ import annotations

import torch
from torch import nn

from .attention import AdditiveAttention
from .encoders import EncoderOut
from .gru import GRUCell, autocast_once
from .specials import BOS

STATE_MODES = ("prev", "current")


class DeepOutput(nn.Module):
    """Deep output with one maxout layer (B A.2.2, A App. A): ``[s; e; c] -> 2l -> max of pairs -> l -> K``."""

    def __init__(self, state: int, emb: int, ctx: int, maxout: int, vocab: int,
                 rank: int | None = None, dropout: float = 0.0) -> None:
        super().__init__()
        self.maxout = maxout
        self.readout = nn.Linear(state + emb + ctx, 2 * maxout)  # [U_o | V_o | C_o]
        self.dropout = nn.Dropout(dropout) if dropout > 0 else nn.Identity()
        if rank:
            self.G_r = nn.Linear(maxout, rank, bias=False)
            self.W_o = nn.Linear(rank, vocab)  # G_l
        else:
            self.G_r = nn.Identity()
            self.W_o = nn.Linear(maxout, vocab)

    def hidden(self, s: torch.Tensor, e: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
        """The maxout units ``t (..., l)`` from ``s (..., n)``, ``e (..., m)``, ``c (..., ctx)``."""
        t_tilde = self.readout(torch.cat([s, e, c], -1))
        return t_tilde.unflatten(-1, (self.maxout, 2)).amax(-1)

    def forward(self, s: torch.Tensor, e: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
        """Unnormalised log-probabilities ``(..., K)``."""
        return self.W_o(self.G_r(self.dropout(self.hidden(s, e, c))))


class _Decoder(nn.Module):
    """Shared parts: target embedding with ``e(BOS) = 0``, the GRU cell, the deep output."""

    def __init__(self, vocab: int, emb: int, hidden: int, ctx: int, maxout: int, reset: str,
                 reset_context: bool, deep_output_state: str, output_rank: int | None,
                 dropout: float) -> None:
        super().__init__()
        if deep_output_state not in STATE_MODES:
            raise ValueError(f"decoder: deep_output_state={deep_output_state!r}; expected one of {STATE_MODES}")
        self.use_current = deep_output_state == "current"
        self.embed = nn.Embedding(vocab, emb)
        self.cell = GRUCell(emb, hidden, reset, context_size=ctx, reset_context=reset_context)
        self.output = DeepOutput(hidden, emb, ctx, maxout, vocab, output_rank, dropout)

    def embed_prev(self, y: torch.Tensor) -> torch.Tensor:
        """``e(y) (…, m)`` with ``e(BOS) = 0`` (A App. A: e(y_0) is all-zero)."""
        e = self.embed(y)
        return e * (y != BOS).unsqueeze(-1).to(e.dtype)

    def _logits(self, states, e, contexts, out_mask):
        """The deep output of all steps at once, on the rows ``out_mask (B, T)`` selects (all if None)."""
        if out_mask is not None:
            states, e, contexts = states[out_mask], e[out_mask], contexts[out_mask]
        return self.output(states, e, contexts)


class AttentionDecoder(_Decoder):
    """RNNsearch's decoder (B A.2.2): ``W_s (n, n)``, alignment model, GRU on ``[E y_{i-1}; c_i]``, deep output."""

    def __init__(self, vocab: int, emb: int, hidden: int, align: int, maxout: int,
                 reset: str = "before", deep_output_state: str = "prev",
                 output_rank: int | None = None, dropout: float = 0.0) -> None:
        super().__init__(vocab, emb, hidden, 2 * hidden, maxout, reset, False, deep_output_state,
                         output_rank, dropout)
        self.W_s = nn.Linear(hidden, hidden)
        self.attention = AdditiveAttention(hidden, 2 * hidden, align)

    def init_state(self, enc: EncoderOut) -> torch.Tensor:
        """``s_0 = tanh(W_s <-h_1)``: ``(B, n)``."""
        return torch.tanh(self.W_s(enc.init))

    def _weights(self) -> dict:
        """What every step multiplies, taken (and under autocast cast) once per sequence:
        ``query = [2 W_a; U_r; U_z]`` (``[2 W_a; U_r; U_z; U]`` for reset="after"), ``U``, ``C = [C_r; C_z; C]``, ``v_a``."""
        cell, g = self.cell, self.cell.gate_rows
        gates, cand = cell.weight_hh.split([g, cell.weight_hh.shape[0] - g])
        query = torch.cat([2 * self.attention.W_a.weight, gates])  # 2 W_a: rnnlib.attention "Speed"
        query, cand, ctx, v_a = autocast_once(query, cand, cell.weight_ch, self.attention.v_a)
        return {"query": query, "cand": cand, "ctx": ctx, "v_a": v_a}

    def _advance(self, xp: torch.Tensor, s: torch.Tensor, enc: EncoderOut, w: dict,
                 annotations: torch.Tensor | None = None):
        """``s_i``, ``c_i`` and ``alpha_i`` from ``W x_i (B, 3n)`` and ``s_{i-1} (B, n)`` (B A.2.2, Eqs. 5--6)."""
        a = self.attention.W_a.out_features
        wa_s, hp = nn.functional.linear(s, w["query"]).split([a, self.cell.gate_rows], -1)  # [2 W_a s; U_r s; U_z s]
        ann = enc.annotations if annotations is None else annotations
        c, alpha = self.attention.attend(wa_s, enc.keys, ann, enc.mask, w["v_a"])
        hp = hp if self.cell.bias_hh is None else hp + self.cell.bias_hh
        new = self.cell.step(xp, s, nn.functional.linear(c, w["ctx"]), (None, w["cand"], None), hp=hp)
        return new, c, alpha

    def step(self, prev_word: torch.Tensor, state: torch.Tensor, enc: EncoderOut):
        e = self.embed_prev(prev_word)
        new, c, alpha = self._advance(self.cell.project_input(e), state, enc, self._weights())
        logits = self.output(new if self.use_current else state, e, c)
        return logits, new, alpha

    def forward(self, enc: EncoderOut, tgt_in: torch.Tensor, return_attention: bool = False,
                out_mask: torch.Tensor | None = None):
        """``tgt_in (B, T)`` (BOS first) -> ``logits (B, T, K)`` [and ``alpha (B, T, S)``];
        with ``out_mask (B, T) bool`` the logits of the selected positions only, ``(N, K)``."""
        e = self.embed_prev(tgt_in)
        xp = self.cell.project_input(e)  # W E y_{i-1} for all steps at once
        s = self.init_state(enc)
        w = self._weights()
        (ann,) = autocast_once(enc.annotations)
        states, contexts, alphas = [], [], []
        for x_t in xp.unbind(1):
            new, c, alpha = self._advance(x_t, s, enc, w, ann)
            states.append(new if self.use_current else s)
            contexts.append(c)
            alphas.append(alpha)
            s = new
        logits = self._logits(torch.stack(states, 1), e, torch.stack(contexts, 1), out_mask)
        return (logits, torch.stack(alphas, 1)) if return_attention else logits


class ContextDecoder(_Decoder):
    """The RNN Encoder--Decoder's decoder (A App. A.1.1): ``V' (n, n)``, GRU with fixed ``c``, deep output."""

    def __init__(self, vocab: int, emb: int, hidden: int, maxout: int, reset: str = "before",
                 reset_context: bool = False, deep_output_state: str = "current",
                 output_rank: int | None = None, dropout: float = 0.0) -> None:
        super().__init__(vocab, emb, hidden, hidden, maxout, reset, reset_context,
                         deep_output_state, output_rank, dropout)
        self.V_prime = nn.Linear(hidden, hidden)

    def init_state(self, enc: EncoderOut) -> torch.Tensor:
        """``h'<0> = tanh(V' c)``: ``(B, n)``."""
        return torch.tanh(self.V_prime(enc.init))

    def step(self, prev_word: torch.Tensor, state: torch.Tensor, enc: EncoderOut):
        e = self.embed_prev(prev_word)
        new = self.cell.step(self.cell.project_input(e), state, enc.context_proj)
        logits = self.output(new if self.use_current else state, e, enc.context)
        return logits, new, None

    def forward(self, enc: EncoderOut, tgt_in: torch.Tensor, return_attention: bool = False,
                out_mask: torch.Tensor | None = None):
        """``tgt_in (B, T)`` -> ``logits (B, T, K)`` (attention is ``None`` when asked for);
        with ``out_mask (B, T) bool`` the logits of the selected positions only, ``(N, K)``."""
        e = self.embed_prev(tgt_in)
        xp = self.cell.project_input(e)
        s = self.init_state(enc)
        states, weights = [], self.cell.recurrent_weights()
        for x_t in xp.unbind(1):
            new = self.cell.step(x_t, s, enc.context_proj, weights)
            states.append(new if self.use_current else s)
            s = new
        T = tgt_in.shape[1]
        c = enc.context.unsqueeze(1).expand(-1, T, -1)
        logits = self._logits(torch.stack(states, 1), e, c, out_mask)
        return (logits, None) if return_attention else logits
