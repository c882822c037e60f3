"""Source encoders: RNNsearch's bidirectional RNN (B A.2.1) and the RNN Encoder--Decoder's RNN \
(A App. A).

Inputs are right-padded batches: ``src (B, S) int64``, ``src_mask (B, S) bool`` (True at real
tokens). Every source is at least one word followed by ``EOS`` (:mod:`rnnlib.batch` appends it).
Padding never changes a sentence's encoding:

* the forward RNN reads left to right; its states past a sentence's length are set to zero
  and never read (A's ``h<N>`` is taken at each sentence's own last token, its ``EOS``);
* the backward RNN reads each sentence reversed *within its length*, so it starts on the
  sentence's ``EOS`` and ``<-h_1`` is the state after reading the first word.

Training and search run the same encoders through :mod:`rnnlib.fast.kernels` (tested equal in
``tests/test_fast.py``).

Equations
---------
- B A.2.1: ->h_i = GRU(E x_i, ->h_{i-1}), ->h_0 = 0; <-h_i the same in reverse order with its own
  weights
- B A.2.1: the word embedding E is shared by the forward and backward RNNs
- B Eq. 7: h_j = [->h_j ; <-h_j] (annotations, 2n wide)
- A App. A: h<t> = GRU(e(x_t), h<t-1>), h<0> = 0; c = tanh(V h<N>)
- A §2.2 / B Fig. 3: the source ends in an end-of-sequence symbol (``EOS``), which both RNNs read:
  <-h starts on it and A's h<N> is the state after it (Reading the papers, ``reading-source-end``)
- A §2.3 (``unit="tanh"``, the gating ablation): every GRU above is the plain tanh unit of
  :mod:`rnnlib.gru`, ->h_i = tanh(W E x_i + U ->h_{i-1} + b), the rest unchanged

Deviations
----------
- ``V`` in ``c = tanh(V h<N>)`` has a bias (zero at init); A omits biases.
- Annotations at padded positions are zeros (they get zero attention anyway).
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace

import torch
from torch import nn

from .gru import make_rnn


@dataclass
class EncoderOut:
    """What the decoder needs from one batch of sources (all batch-first).

    ``annotations (B, S, 2n)`` (RNNsearch) or ``(B, S, n)`` (RNNencdec forward states);
    ``mask (B, S)`` bool; ``init (B, n)`` the vector the decoder's initial state is computed
    from (``<-h_1`` for RNNsearch, ``c`` for RNNencdec); ``keys (B, S, n')`` the precomputed
    ``U_a h_j`` (RNNsearch, B A.1.2); ``context (B, n)`` the fixed summary ``c`` (RNNencdec).
    """

    annotations: torch.Tensor
    mask: torch.Tensor
    init: torch.Tensor
    keys: torch.Tensor | None = None
    context: torch.Tensor | None = None

    @property
    def batch_size(self) -> int:
        return self.mask.shape[0]

    @property
    def lengths(self) -> torch.Tensor:
        """``(B,) int64`` source lengths."""
        return self.mask.sum(1)

    def _map(self, fn) -> "EncoderOut":
        return replace(
            self,
            **{
                f.name: fn(getattr(self, f.name))
                for f in fields(self)
                if getattr(self, f.name) is not None
            },
        )

    def index_select(self, index: torch.Tensor) -> "EncoderOut":
        """The rows ``index (K,) int64`` along the batch (beam search reorders/expands with it)."""
        return self._map(lambda t: t.index_select(0, index))

    def repeat_interleave(self, k: int) -> "EncoderOut":
        """Each sentence ``k`` times in a row: batch ``B -> B * k`` (sentence ``b`` at
        ``b*k .. b*k+k-1``)."""
        return self._map(lambda t: t.repeat_interleave(k, dim=0))


def reverse_padded(x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """Reverse each row of ``x (B, S, ...)`` within its length; padding stays at the end.

    Applying it twice gives ``x`` back.
    """
    S = x.shape[1]
    t = torch.arange(S, device=x.device).unsqueeze(0)
    L = lengths.unsqueeze(1)
    idx = torch.where(t < L, L - 1 - t, t)
    idx = idx.view(*idx.shape, *([1] * (x.dim() - 2))).expand_as(x)
    return x.gather(1, idx)


def check_sources(src: torch.Tensor, src_mask: torch.Tensor) -> torch.Tensor:
    """The ``(B,)`` source lengths; ``ValueError`` unless ``src`` and ``src_mask`` are both
    ``(B, S)`` and every sentence has a word."""
    if src.dim() != 2 or src.shape != src_mask.shape:
        raise ValueError(
            f"encoder: src {tuple(src.shape)} and src_mask {tuple(src_mask.shape)} "
            "must both be (B, S)"
        )
    lengths = src_mask.sum(1)
    if bool((lengths == 0).any()):
        raise ValueError("encoder: a source sentence is empty (src_mask row with no True)")
    return lengths


class BiRNNEncoder(nn.Module):
    """RNNsearch's encoder (B A.2.1): shared embedding ``E (Kx, m)``, forward and backward GRUs
    (or tanh RNNs, ``unit="tanh"``)."""

    def __init__(
        self, vocab: int, emb: int, hidden: int, reset: str = "before", unit: str = "gru"
    ) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, emb)
        self.fwd = make_rnn(unit, emb, hidden, reset)
        self.bwd = make_rnn(unit, emb, hidden, reset)

    def forward(
        self, src: torch.Tensor, src_mask: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """-> ``annotations (B, S, 2n)`` = ``[->h_j; <-h_j]`` and ``<-h_1 (B, n)``."""
        lengths = check_sources(src, src_mask)
        x = self.embed(src)  # E x_j
        forward_states = self.fwd(x)  # ->h_1 .. ->h_S
        backward_states = reverse_padded(
            self.bwd(reverse_padded(x, lengths)), lengths
        )  # <-h_1 .. <-h_S
        ann = torch.cat([forward_states, backward_states], -1)  # h_j, B Eq. 7
        ann = ann * src_mask.unsqueeze(-1).to(ann.dtype)
        return ann, backward_states[:, 0]


class RNNEncoder(nn.Module):
    """The RNN Encoder--Decoder's encoder (A App. A): embedding, one GRU (or tanh RNN,
    ``unit="tanh"``), ``c = tanh(V h<N>)``."""

    def __init__(
        self, vocab: int, emb: int, hidden: int, reset: str = "before", unit: str = "gru"
    ) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, emb)
        self.rnn = make_rnn(unit, emb, hidden, reset)
        self.V = nn.Linear(hidden, hidden)

    def forward(
        self, src: torch.Tensor, src_mask: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """-> ``states (B, S, n)`` (zeros past each length) and ``c (B, n)``."""
        lengths = check_sources(src, src_mask)
        states = self.rnn(self.embed(src))  # h<1> .. h<S>
        states = states * src_mask.unsqueeze(-1).to(states.dtype)
        last = states[torch.arange(src.shape[0], device=src.device), lengths - 1]  # h<N>
        return states, torch.tanh(self.V(last))  # c = tanh(V h<N>)
