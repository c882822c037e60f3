"""Source encoders: RNNsearch's bidirectional RNN (B A.2.1) and the RNN Encoder--Decoder's RNN (A App. A).

Inputs are right-padded batches: ``src (B, S) int64``, ``src_mask (B, S) bool`` (True at real
tokens). Every source is at least one word followed by ``EOS`` (:mod:`rnnlib.batch` appends it).
Padding never changes a sentence's encoding:

* the forward RNN reads left to right; its states past a sentence's length are set to zero
  and never read (A's ``h<N>`` is taken at each sentence's own last token, its ``EOS``);
* the backward RNN reads each sentence reversed *within its length*, so it starts on the
  sentence's ``EOS`` and ``<-h_1`` is the state after reading the first word.

Equations
---------
- B A.2.1: ->h_i = GRU(E x_i, ->h_{i-1}), ->h_0 = 0; <-h_i the same in reverse order with its own weights
- B A.2.1: the word embedding E is shared by the forward and backward RNNs
- B Eq. 7: h_j = [->h_j ; <-h_j] (annotations, 2n wide)
- A App. A: h<t> = GRU(e(x_t), h<t-1>), h<0> = 0; c = tanh(V h<N>)
- A §2.2 / B Fig. 3: the source ends in an end-of-sequence symbol (``EOS``), which both RNNs read:
  <-h starts on it and A's h<N> is the state after it (Reading the papers, ``reading-source-end``)

Deviations
----------
- ``V`` in ``c = tanh(V h<N>)`` has a bias (zero at init); A omits biases.
- Annotations at padded positions are zeros (they get zero attention anyway).

Speed (same equations)
----------------------
- The forward and backward RNNs of B A.2.1 are independent, so they run in one loop: their
  input projections are one product over all positions, and each step multiplies both states
  by their own recurrent matrices in one batched product (``GRUCell.step`` with ``D = 2``).
"""
from __future__ import annotations

from dataclasses import dataclass, fields, replace

import torch
from torch import nn

from .gru import GRU


@dataclass
class EncoderOut:
    """What the decoder needs from one batch of sources (all batch-first).

    ``annotations (B, S, 2n)`` (RNNsearch) or ``(B, S, n)`` (RNNencdec forward states);
    ``mask (B, S)`` bool; ``init (B, n)`` the vector the decoder's initial state is computed
    from (``<-h_1`` for RNNsearch, ``c`` for RNNencdec); ``keys (B, S, n')`` the precomputed
    ``2 U_a h_j`` (RNNsearch; doubled, see rnnlib.attention); ``context (B, n)`` the fixed summary ``c`` (RNNencdec);
    ``context_proj (B, 3n)`` the decoder's ``C c`` computed once (RNNencdec).
    """

    annotations: torch.Tensor
    mask: torch.Tensor
    init: torch.Tensor
    keys: torch.Tensor | None = None
    context: torch.Tensor | None = None
    context_proj: torch.Tensor | None = None

    @property
    def batch_size(self) -> int:
        return self.mask.shape[0]

    @property
    def lengths(self) -> torch.Tensor:
        """``(B,) int64`` source lengths."""
        return self.mask.sum(1)

    def _map(self, fn) -> "EncoderOut":
        return replace(self, **{f.name: fn(getattr(self, f.name)) for f in fields(self)
                                if getattr(self, f.name) is not None})

    def index_select(self, index: torch.Tensor) -> "EncoderOut":
        """The rows ``index (K,) int64`` along the batch (beam search reorders/expands with it)."""
        return self._map(lambda t: t.index_select(0, index))

    def repeat_interleave(self, k: int) -> "EncoderOut":
        """Each sentence ``k`` times in a row: batch ``B -> B * k`` (sentence ``b`` at ``b*k .. b*k+k-1``)."""
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


def _check(src: torch.Tensor, src_mask: torch.Tensor) -> torch.Tensor:
    if src.dim() != 2 or src.shape != src_mask.shape:
        raise ValueError(f"encoder: src {tuple(src.shape)} and src_mask {tuple(src_mask.shape)} must both be (B, S)")
    lengths = src_mask.sum(1)
    if bool((lengths == 0).any()):
        raise ValueError("encoder: a source sentence is empty (src_mask row with no True)")
    return lengths


class BiRNNEncoder(nn.Module):
    """RNNsearch's encoder (B A.2.1): shared embedding ``E (Kx, m)``, forward and backward GRUs."""

    def __init__(self, vocab: int, emb: int, hidden: int, reset: str = "before") -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, emb)
        self.fwd = GRU(emb, hidden, reset)
        self.bwd = GRU(emb, hidden, reset)

    def forward(self, src: torch.Tensor, src_mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """-> ``annotations (B, S, 2n)`` = ``[->h_j; <-h_j]`` and ``<-h_1 (B, n)``."""
        lengths = _check(src, src_mask)
        x = self.embed(src)
        if self.fwd.uses_fused_kernel:  # torch.gru per direction
            fwd = self.fwd(x)
            bwd = reverse_padded(self.bwd(reverse_padded(x, lengths)), lengths)
        else:
            fwd, bwd = self._both_directions(x, lengths)
        ann = torch.cat([fwd, bwd], -1) * src_mask.unsqueeze(-1).to(fwd.dtype)
        return ann, bwd[:, 0]

    def _both_directions(self, x: torch.Tensor, lengths: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``->h (B, S, n)`` and ``<-h (B, S, n)`` (in source order), both RNNs stepping together."""
        f, b = self.fwd.cell, self.bwd.cell
        B, S, _ = x.shape
        n = f.hidden_size
        xp = nn.functional.linear(x, torch.cat([f.weight_ih, b.weight_ih]), torch.cat([f.bias_ih, b.bias_ih]))
        xf, xb = xp.split(3 * n, -1)
        xs = torch.stack([xf, reverse_padded(xb, lengths)])  # (2, B, S, 3n), backward reversed in length
        weights = []
        for wf, wb in zip(f.recurrent_weights(), b.recurrent_weights()):
            w = None if wf is None else torch.stack([wf, wb])
            weights.append(w.unsqueeze(1) if w is not None and w.dim() == 2 else w)  # biases (2, 1, 3n)
        h = x.new_zeros(2, B, n)
        outs = []
        for x_t in xs.unbind(2):
            h = f.step(x_t, h, None, tuple(weights))
            outs.append(h)
        H = torch.stack(outs, 2) if outs else x.new_zeros(2, B, 0, n)
        return H[0], reverse_padded(H[1], lengths)


class RNNEncoder(nn.Module):
    """The RNN Encoder--Decoder's encoder (A App. A): embedding, one GRU, ``c = tanh(V h<N>)``."""

    def __init__(self, vocab: int, emb: int, hidden: int, reset: str = "before") -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, emb)
        self.rnn = GRU(emb, hidden, reset)
        self.V = nn.Linear(hidden, hidden)

    def forward(self, src: torch.Tensor, src_mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """-> ``states (B, S, n)`` (zeros past each length) and ``c (B, n)``."""
        lengths = _check(src, src_mask)
        states = self.rnn(self.embed(src))
        states = states * src_mask.unsqueeze(-1).to(states.dtype)
        last = states[torch.arange(src.shape[0], device=src.device), lengths - 1]
        return states, torch.tanh(self.V(last))
