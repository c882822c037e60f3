"""Padded minibatches built from ragged token arrays.

For a target sentence ``y_1 .. y_T`` the decoder reads ``[BOS] y_1 .. y_T`` (``tgt_in``) and is
trained to emit ``y_1 .. y_T [EOS]`` (``tgt_out``): ``BOS`` stands for the papers' all-zero
"previous word" of the first step (see :mod:`rnnlib.specials`).

A source sentence ``x_1 .. x_S`` is read as ``x_1 .. x_S [EOS]``: paper A's encoder reads the
input "marked by an end-of-sequence symbol" and takes its state after that symbol as the summary
``c`` (§2.2), the source axis of paper B's Fig. 3 ends in ``<end>``, and the papers'
implementation appends the symbol to every source. So the backward encoder starts on it,
RNNencdec's summary is taken after it, and the alignment model can attend to it. Every
function here that builds sources appends it (:func:`pad_sources`), so ``src`` is
``(B, S + 1)`` for a longest sentence of ``S`` words.

Padding uses ``PAD`` (0); masks are ``True`` at real tokens (the source's ``EOS`` included).

Equations
---------
- A §2.2: the encoder reads the source up to its end-of-sequence symbol; the state after it is c
- B Fig. 3: the source x_1 .. x_Tx is followed by <end> (``EOS``), which has an attention weight
- A App. A: the first decoder step's previous word is the all-zero e(y_0) (``BOS``, zero embedding)
- B Fig. 3: the generated translation ends in <end> too, a word the decoder emits (``EOS``)

Deviations
----------
- none: B's text does not say that its sources end in <end>; A's text, B's Fig. 3 and the papers'
  implementation do (Reading the papers, ``reading-source-end``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import torch

from .ragged import ParallelArrays
from .specials import BOS, EOS, PAD

#: The layout of the minibatches, for the cache keys of trained models (bump it when a change
#: alters what a model is trained on). 2: sources end in ``EOS``.
BATCH_FORMAT = 2


@dataclass
class Batch:
    """``src: (B, S+1) int64`` (each source ends in ``EOS``), ``src_mask: (B, S+1) bool``,
    ``tgt_in``/``tgt_out``: ``(B, T+1) int64``, ``tgt_mask: (B, T+1) bool`` (True where
    ``tgt_out`` is a real token, ``EOS`` included)."""

    src: torch.Tensor
    src_mask: torch.Tensor
    tgt_in: torch.Tensor | None = None
    tgt_out: torch.Tensor | None = None
    tgt_mask: torch.Tensor | None = None

    @property
    def size(self) -> int:
        return self.src.shape[0]

    @property
    def n_target_tokens(self) -> int:
        return int(self.tgt_mask.sum()) if self.tgt_mask is not None else 0

    def to(self, device: torch.device | str) -> "Batch":
        move = lambda t: None if t is None else t.to(device, non_blocking=True)  # noqa: E731
        return Batch(
            move(self.src),
            move(self.src_mask),
            move(self.tgt_in),
            move(self.tgt_out),
            move(self.tgt_mask),
        )


def pad(
    seqs: Sequence[np.ndarray | Sequence[int]], prefix: int | None = None, suffix: int | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """Right-pad sequences (optionally adding one token before/after each) to ``(B, L)``.

    Returns ``(ids (B, L) int64, mask (B, L) bool)``. Sources go through :func:`pad_sources`.
    """
    extra = (prefix is not None) + (suffix is not None)
    lengths = [len(s) + extra for s in seqs]
    width = max(lengths) if lengths else 0
    ids = np.full((len(seqs), width), PAD, dtype=np.int64)
    for i, s in enumerate(seqs):
        row = np.asarray(s, dtype=np.int64)
        j = 0
        if prefix is not None:
            ids[i, 0] = prefix
            j = 1
        ids[i, j : j + len(row)] = row
        if suffix is not None:
            ids[i, j + len(row)] = suffix
    ids_t = torch.from_numpy(ids)
    mask = torch.arange(width)[None, :] < torch.tensor(lengths, dtype=torch.int64)[:, None]
    return ids_t, mask


def pad_sources(sources: Sequence[np.ndarray | Sequence[int]]) -> tuple[torch.Tensor, torch.Tensor]:
    """Source sentences (word ids, without ``EOS``) ->
    ``(src (B, S+1) int64, src_mask (B, S+1) bool)``, each sentence followed by ``EOS``.

    An empty sentence is an error (the papers' model never sees one: a source is at least one word
    and its ``<end>``), and so is a sentence that already contains ``EOS`` (it would end twice).
    """
    for i, s in enumerate(sources):
        row = np.asarray(s)
        if row.size == 0:
            raise ValueError(f"source sentence {i} of the batch is empty")
        if bool((row == EOS).any()):
            raise ValueError(
                f"source sentence {i} of the batch already contains [EOS] (id {EOS}); "
                "pass the words only, the end-of-sentence token is appended here"
            )
    return pad(sources, suffix=EOS)


def make_batch(pairs: ParallelArrays, index: Sequence[int]) -> Batch:
    """The pairs at ``index`` as one padded :class:`Batch` (sources end in ``EOS``; teacher-forcing
    inputs included)."""
    srcs = [pairs.src[int(i)] for i in index]
    tgts = [pairs.tgt[int(i)] for i in index]
    src, src_mask = pad_sources(srcs)
    tgt_in, _ = pad(tgts, prefix=BOS)
    tgt_out, tgt_mask = pad(tgts, suffix=EOS)
    return Batch(src, src_mask, tgt_in, tgt_out, tgt_mask)


def source_batch(sources: Sequence[np.ndarray | Sequence[int]]) -> Batch:
    """Sources only (for search and scoring): ``src (B, S+1)``, ``src_mask (B, S+1)``, each
    sentence followed by ``EOS``."""
    return Batch(*pad_sources(sources))
