"""Decoders: RNNsearch's attentive decoder (B A.2.2) and the RNN Encoder--Decoder's (A App. A.1.1).

Both expose the ONE decoder step every search goes through,
``step(prev_word (B,) int64, state (B, n), enc)
-> (logits (B, K), new_state (B, n), attention (B, S) | None)``,
and a teacher-forced ``forward(enc, tgt_in (B, T)) -> logits (B, T, K)`` that calls ``step`` ``T``
times. Training and search run the same decoders through :mod:`rnnlib.fast.kernels`, which
computes the same numbers from these parameters (tested equal in ``tests/test_fast.py``).

The previous word of the first step is ``BOS``, whose embedding is forced to zero
(A App. A: "e(y_0) is an all-zero vector").

Equations
---------
- B A.2.2: s_i = GRU(E y_{i-1}, s_{i-1}, c_i) (gates and candidate see c_i through C_r, C_z, C)
- B A.2.2: s_0 = tanh(W_s <-h_1)
- B Eqs. 5--6: c_i from the alignment model queried with s_{i-1} (see rnnlib.attention)
- B A.2.2: t~_i = U_o s_{i-1} + V_o E y_{i-1} + C_o c_i; t_i,j = max(t~_i,2j-1, t~_i,2j);
  p(y_i) = softmax(W_o t_i)
- A App. A.1.1: h'<0> = tanh(V' c); h'<t> = GRU(e(y_{t-1}), h'<t-1>, c) with c in every gate and
  the candidate
- A App. A.1.1: s'<t> = O_h h'<t> + O_y y_{t-1} + O_c c; s<t>_i = max(s'<t>_2i-1, s'<t>_2i);
  p(y_t) = softmax(G s<t>)
- A App. A / §4.1.1: output matrix G = G_l G_r factored (low rank, rank 100 in the experiments)
- A §2.3 (``unit="tanh"``, the gating ablation): the decoder unit is the plain tanh unit of
  :mod:`rnnlib.gru` on the GRU candidate's inputs, s_i = tanh(W E y_{i-1} + U s_{i-1} + C c_i + b)
  (RNNencdec: h'<t> = tanh(W e(y_{t-1}) + U h'<t-1> + C c + b)); the rest unchanged

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
- RNNencdec (Reading the papers, ``reading-rnnencdec``): B A.2.2 says the model becomes RNNencdec
  "if we fix c_i to" the forward encoder's last state, and gives no initial state for it; we
  choose A's formulation, the model B cites: c = tanh(V h<N>) (one learned layer more than B's
  letter), s_0 = tanh(V' c), c entering every decoder step's gates and candidate and the deep
  output (C_o c), which is B's decoder with c_i := c.
- Biases, which the papers do not print: the deep output's ``t~_i`` has one (``U_o``'s), and
  ``W_s``, ``V'`` and ``W_o`` (``G_l``) have one each (zero at init; B.1 initialises "all the bias
  vectors" to zero).
- Optional dropout on the maxout units ``t_i`` (``dropout``, 0 in every paper preset; not in the
  papers).
"""

from __future__ import annotations

import torch
from torch import nn

from .attention import AdditiveAttention
from .encoders import EncoderOut
from .gru import make_cell
from .specials import BOS

STATE_MODES = ("prev", "current")


class DeepOutput(nn.Module):
    """Deep output with one maxout layer (B A.2.2, A App. A): ``t~ = U_o s + V_o e + C_o c``
    (2l units), ``t`` = max of pairs (l units), logits ``W_o t`` (or ``G_l G_r t`` with ``rank``)
    over the K words.

    ``U_o (2l, n)`` with the bias, ``V_o (2l, m)``, ``C_o (2l, ctx)``; A names them
    ``O_h, O_y, O_c``.
    """

    def __init__(
        self,
        state: int,
        emb: int,
        ctx: int,
        maxout: int,
        vocab: int,
        rank: int | None = None,
        dropout: float = 0.0,
    ) -> None:
        super().__init__()
        self.maxout = maxout
        self.U_o = nn.Linear(state, 2 * maxout)
        self.V_o = nn.Linear(emb, 2 * maxout, bias=False)
        self.C_o = nn.Linear(ctx, 2 * maxout, bias=False)
        self.dropout = nn.Dropout(dropout) if dropout > 0 else nn.Identity()
        if rank:
            self.G_r = nn.Linear(maxout, rank, bias=False)
            self.W_o = nn.Linear(rank, vocab)  # G_l
        else:
            self.G_r = nn.Identity()
            self.W_o = nn.Linear(maxout, vocab)

    def hidden(self, s: torch.Tensor, e: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
        """The maxout units ``t (..., l)`` from ``s (..., n)``, ``e (..., m)``, ``c (..., ctx)``."""
        t_tilde = self.U_o(s) + self.V_o(e) + self.C_o(c)  # (..., 2l)
        return t_tilde.unflatten(-1, (self.maxout, 2)).amax(-1)  # t_i,j = max(t~_i,2j-1, t~_i,2j)

    def forward(self, s: torch.Tensor, e: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
        """Unnormalised log-probabilities ``(..., K)``."""
        return self.W_o(self.G_r(self.dropout(self.hidden(s, e, c))))


class _Decoder(nn.Module):
    """Shared parts: target embedding with ``e(BOS) = 0``, the recurrent cell (GRU, or tanh with
    ``unit="tanh"``), the deep output, and the teacher-forced ``forward`` as ``T`` calls of
    ``step``."""

    def __init__(
        self,
        vocab: int,
        emb: int,
        hidden: int,
        ctx: int,
        maxout: int,
        reset: str,
        reset_context: bool,
        deep_output_state: str,
        output_rank: int | None,
        dropout: float,
        unit: str = "gru",
    ) -> None:
        super().__init__()
        if deep_output_state not in STATE_MODES:
            raise ValueError(
                f"decoder: deep_output_state={deep_output_state!r}; expected one of {STATE_MODES}"
            )
        self.use_current = deep_output_state == "current"
        self.embed = nn.Embedding(vocab, emb)
        self.cell = make_cell(
            unit, emb, hidden, reset, context_size=ctx, reset_context=reset_context
        )
        self.output = DeepOutput(hidden, emb, ctx, maxout, vocab, output_rank, dropout)

    def embed_prev(self, y: torch.Tensor) -> torch.Tensor:
        """``e(y) (..., m)`` with ``e(BOS) = 0`` (A App. A: e(y_0) is all-zero)."""
        e = self.embed(y)
        return e * (y != BOS).unsqueeze(-1).to(e.dtype)

    def forward(
        self,
        enc: EncoderOut,
        tgt_in: torch.Tensor,
        return_attention: bool = False,
        out_mask: torch.Tensor | None = None,
    ):
        """``tgt_in (B, T)`` (BOS first) -> ``logits (B, T, K)`` [and attention ``(B, T, S)`` or
        None]; with ``out_mask (B, T) bool`` the logits of the selected positions only, ``(N, K)``
        in row-major order of the mask."""
        state = self.init_state(enc)
        logits, attention = [], []
        for i in range(tgt_in.shape[1]):
            logits_i, state, alpha_i = self.step(tgt_in[:, i], state, enc)
            logits.append(logits_i)
            attention.append(alpha_i)
        logits = torch.stack(logits, 1)
        if out_mask is not None:
            logits = logits[out_mask]
        if not return_attention:
            return logits
        return logits, (
            torch.stack(attention, 1) if attention and attention[0] is not None else None
        )


class AttentionDecoder(_Decoder):
    """RNNsearch's decoder (B A.2.2): ``W_s (n, n)``, alignment model, GRU on
    ``[E y_{i-1}; c_i]``, deep output."""

    def __init__(
        self,
        vocab: int,
        emb: int,
        hidden: int,
        align: int,
        maxout: int,
        reset: str = "before",
        deep_output_state: str = "prev",
        output_rank: int | None = None,
        dropout: float = 0.0,
        unit: str = "gru",
    ) -> None:
        super().__init__(
            vocab,
            emb,
            hidden,
            2 * hidden,
            maxout,
            reset,
            False,
            deep_output_state,
            output_rank,
            dropout,
            unit,
        )
        self.W_s = nn.Linear(hidden, hidden)
        self.attention = AdditiveAttention(hidden, 2 * hidden, align)

    def init_state(self, enc: EncoderOut) -> torch.Tensor:
        """``s_0 = tanh(W_s <-h_1)``: ``(B, n)``."""
        return torch.tanh(self.W_s(enc.init))

    def step(self, prev_word: torch.Tensor, state: torch.Tensor, enc: EncoderOut):
        """``y_{i-1} (B,)``, ``s_{i-1} (B, n)`` -> ``logits (B, K)``, ``s_i (B, n)``,
        ``alpha_i (B, S)``."""
        e = self.embed_prev(prev_word)  # E y_{i-1}
        c, alpha = self.attention(state, enc.keys, enc.annotations, enc.mask)  # c_i, Eqs. 5-6
        new = self.cell(e, state, c)  # s_i
        logits = self.output(new if self.use_current else state, e, c)  # W_o t_i
        return logits, new, alpha


class ContextDecoder(_Decoder):
    """The RNN Encoder--Decoder's decoder (A App. A.1.1): ``V' (n, n)``, GRU with fixed ``c``,
    deep output."""

    def __init__(
        self,
        vocab: int,
        emb: int,
        hidden: int,
        maxout: int,
        reset: str = "before",
        reset_context: bool = False,
        deep_output_state: str = "current",
        output_rank: int | None = None,
        dropout: float = 0.0,
        unit: str = "gru",
    ) -> None:
        super().__init__(
            vocab,
            emb,
            hidden,
            hidden,
            maxout,
            reset,
            reset_context,
            deep_output_state,
            output_rank,
            dropout,
            unit,
        )
        self.V_prime = nn.Linear(hidden, hidden)

    def init_state(self, enc: EncoderOut) -> torch.Tensor:
        """``h'<0> = tanh(V' c)``: ``(B, n)``."""
        return torch.tanh(self.V_prime(enc.init))

    def step(self, prev_word: torch.Tensor, state: torch.Tensor, enc: EncoderOut):
        """``y_{t-1} (B,)``, ``h'<t-1> (B, n)`` -> ``logits (B, K)``, ``h'<t> (B, n)``, ``None``."""
        e = self.embed_prev(prev_word)  # e(y_{t-1})
        new = self.cell(e, state, enc.context)  # h'<t>
        logits = self.output(new if self.use_current else state, e, enc.context)  # G s<t>
        return logits, new, None
