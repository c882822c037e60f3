"""Padded minibatches built from ragged token arrays.

For a target sentence ``y_1 .. y_T`` the decoder reads ``[BOS] y_1 .. y_T`` (``tgt_in``) and is
trained to emit ``y_1 .. y_T [EOS]`` (``tgt_out``): ``BOS`` stands for the papers' all-zero
"previous word" of the first step (see :mod:`rnnlib.specials`). Sources carry no ``BOS``/``EOS``.
Padding uses ``PAD`` (0); masks are ``True`` at real tokens.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import torch

from .ragged import ParallelArrays
from .specials import BOS, EOS, PAD


@dataclass
class Batch:
    """``src: (B, S) int64``, ``src_mask: (B, S) bool``, ``tgt_in``/``tgt_out``: ``(B, T+1) int64``,
    ``tgt_mask: (B, T+1) bool`` (True where ``tgt_out`` is a real token, ``EOS`` included)."""

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
        return Batch(move(self.src), move(self.src_mask), move(self.tgt_in), move(self.tgt_out), move(self.tgt_mask))


def pad(seqs: Sequence[np.ndarray | Sequence[int]], prefix: int | None = None,
        suffix: int | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """Right-pad sequences (optionally adding one token before/after each) to ``(B, L)``.

    Returns ``(ids (B, L) int64, mask (B, L) bool)``. An empty source sentence is an error:
    the encoders need at least one annotation to attend to.
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
        ids[i, j:j + len(row)] = row
        if suffix is not None:
            ids[i, j + len(row)] = suffix
    ids_t = torch.from_numpy(ids)
    mask = torch.arange(width)[None, :] < torch.tensor(lengths, dtype=torch.int64)[:, None]
    return ids_t, mask


def make_batch(pairs: ParallelArrays, index: Sequence[int]) -> Batch:
    """The pairs at ``index`` as one padded :class:`Batch` (teacher-forcing inputs included)."""
    srcs = [pairs.src[int(i)] for i in index]
    if any(len(s) == 0 for s in srcs):
        raise ValueError("a source sentence in the batch is empty")
    tgts = [pairs.tgt[int(i)] for i in index]
    src, src_mask = pad(srcs)
    tgt_in, _ = pad(tgts, prefix=BOS)
    tgt_out, tgt_mask = pad(tgts, suffix=EOS)
    return Batch(src, src_mask, tgt_in, tgt_out, tgt_mask)


def source_batch(sources: Sequence[np.ndarray | Sequence[int]]) -> Batch:
    """Sources only (for search): ``src (B, S)``, ``src_mask (B, S)``."""
    src, src_mask = pad(sources)
    return Batch(src, src_mask)
