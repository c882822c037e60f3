"""The two translation models, composed from encoders, the alignment model and decoders.

* :class:`RNNSearch` -- Bahdanau et al. 2015 (B §3, App. A): bidirectional encoder, alignment
  model, attentive decoder.
* :class:`RNNEncDec` -- Cho et al. 2014 (A §2.2, App. A), also B's RNNencdec baseline:
  unidirectional encoder summarised in a fixed ``c``, decoder conditioned on ``c`` at every step.

Common interface (batch-first; ``src (B, S) int64``, ``src_mask (B, S) bool``, ``PAD = 0``):

* ``encode(src, src_mask) -> EncoderOut``
* ``init_state(enc) -> (B, n)``
* ``step(prev_word (B,), state (B, n), enc)
  -> (logits (B, K), new_state (B, n), attention (B, S) | None)``
* ``forward(src, src_mask, tgt_in (B, T)) -> logits (B, T, K)`` (teacher forcing, ``tgt_in``
  starts with ``BOS``); equals ``T`` calls of ``step``.
* ``config``: the :class:`~rnnlib.presets.ModelConfig`.

Equations
---------
- B Eq. 4: p(y_i | y_<i, x) = g(y_{i-1}, s_i, c_i) with s_i = f(s_{i-1}, y_{i-1}, c_i),
  c_i = sum_j alpha_ij h_j
- A §2.2: h<t> = f(h<t-1>, y_{t-1}, c); P(y_t | y_<t, c) = g(h<t>, y_{t-1}, c)
- A Eq. 4 / B §2.1: trained to maximise sum_n log p(y_n | x_n) (the teacher-forced logits here)

Deviations
----------
- See rnnlib.encoders, rnnlib.attention, rnnlib.decoders and rnnlib.gru; this module only
  composes them.
"""

from __future__ import annotations

import torch
from torch import nn

from .decoders import AttentionDecoder, ContextDecoder
from .encoders import BiRNNEncoder, EncoderOut, RNNEncoder
from .config import ModelConfig


class _EncoderDecoder(nn.Module):
    config: ModelConfig
    decoder: nn.Module

    def init_state(self, enc: EncoderOut) -> torch.Tensor:
        return self.decoder.init_state(enc)

    def step(self, prev_word: torch.Tensor, state: torch.Tensor, enc: EncoderOut):
        return self.decoder.step(prev_word, state, enc)

    #: ``forward`` accepts ``out_mask`` (rnnlib.train computes the loss on real tokens only)
    supports_out_mask = True

    def forward(
        self,
        src: torch.Tensor,
        src_mask: torch.Tensor,
        tgt_in: torch.Tensor,
        return_attention: bool = False,
        out_mask: torch.Tensor | None = None,
    ):
        """Teacher-forced ``logits (B, T, K)`` [and attention ``(B, T, S)`` or None]; with
        ``out_mask (B, T) bool`` (the real target positions) only their logits, ``(N, K)``."""
        return self.decoder(
            self.encode(src, src_mask), tgt_in, return_attention=return_attention, out_mask=out_mask
        )

    @property
    def device(self) -> torch.device:
        return next(self.parameters()).device


class RNNSearch(_EncoderDecoder):
    """RNNsearch (B): ``encoder`` = BiRNN, ``decoder`` = attentive decoder."""

    def __init__(self, config: ModelConfig) -> None:
        super().__init__()
        self.config = config
        self.encoder = BiRNNEncoder(
            config.src_vocab, config.emb, config.hidden, config.reset, config.unit
        )
        self.decoder = AttentionDecoder(
            config.tgt_vocab,
            config.emb,
            config.hidden,
            config.align,
            config.maxout,
            reset=config.decoder_reset or config.reset,
            deep_output_state=config.deep_output_state,
            output_rank=config.output_rank,
            dropout=config.dropout,
            unit=config.unit,
        )

    def encode(self, src: torch.Tensor, src_mask: torch.Tensor) -> EncoderOut:
        """Annotations ``[->h_j; <-h_j] (B, S, 2n)``, ``<-h_1`` and the precomputed keys
        ``U_a h_j``."""
        ann, first_backward = self.encoder(src, src_mask)
        return EncoderOut(
            annotations=ann,
            mask=src_mask,
            init=first_backward,
            keys=self.decoder.attention.precompute(ann),
        )


class RNNEncDec(_EncoderDecoder):
    """RNN Encoder--Decoder (A; B's RNNencdec): ``encoder`` = RNN + ``c = tanh(V h<N>)``,
    ``decoder`` with fixed ``c``."""

    def __init__(self, config: ModelConfig) -> None:
        super().__init__()
        self.config = config
        self.encoder = RNNEncoder(
            config.src_vocab, config.emb, config.hidden, config.reset, config.unit
        )
        self.decoder = ContextDecoder(
            config.tgt_vocab,
            config.emb,
            config.hidden,
            config.maxout,
            reset=config.decoder_reset or config.reset,
            reset_context=config.reset_context,
            deep_output_state=config.deep_output_state,
            output_rank=config.output_rank,
            dropout=config.dropout,
            unit=config.unit,
        )

    def encode(self, src: torch.Tensor, src_mask: torch.Tensor) -> EncoderOut:
        """Forward states ``(B, S, n)`` and the summary ``c (B, n)``."""
        states, c = self.encoder(src, src_mask)
        return EncoderOut(annotations=states, mask=src_mask, init=c, context=c)


def build_model(config: ModelConfig, generator: torch.Generator | None = None) -> nn.Module:
    """The model for ``config`` with the papers' initialisation unless
    ``config.init == "default"``."""
    from .init import init_paper

    model = (RNNSearch if config.arch == "rnnsearch" else RNNEncDec)(config)
    if config.init == "paper":
        init_paper(model, generator=generator)
    return model
