"""What the trained encoder computes for a phrase: its code ``c``, its gates and how long each
unit remembers (Cho et al. 2014, §2.2--2.3, Figs. 5 and 7).

* :func:`phrase_batches` -- phrases as the encoder reads them (padded batches, ``EOS`` last);
* :func:`phrase_codes` -- ``c`` of A §2.2 for a list of phrases, through ``model.encode``;
* :func:`encoder_gates` -- the encoder's reset and update gates and states over a batch
  (A Eqs. 5--8, step by step);
* :func:`gate_activity` -- per hidden unit, how often each gate is *active*;
* :func:`perturbation_memory` -- per hidden unit, the share of a change to a phrase's first
  word still in its state ``lag`` words later.

Shapes are batch-first: ``src (B, S) int64``, ``mask (B, S) bool``, gates ``(B, S, n)``.

Equations
---------
- A Eq. 5: r = sigmoid(W_r x + U_r h<t-1>); A Eq. 6: z = sigmoid(W_z x + U_z h<t-1>)
- A Eq. 7: h<t> = z h<t-1> + (1 - z) h~<t> (z near 1 keeps the old state)
- A App. A: c = tanh(V h<N>), the phrase code plotted in Figs. 5 and 7

Deviations
----------
- Which gate value counts as "active" is ours: A says that short-memory units have reset gates
  that are "frequently active" and long-memory units update gates that are "mostly active". We
  read an active reset gate as one that drops the previous state (``r < 0.5``, A: "when the reset
  gate is close to 0, the hidden state is forced to ignore the previous hidden state") and an
  active update gate as one that keeps it (``z > 0.5`` in A's Eq. 7).
- A unit's memory is ours too (A measures none): :func:`perturbation_memory`.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import torch


def phrase_batches(
    vocab,
    phrases: Sequence[Sequence[str]],
    batch_size: int = 256,
    device: torch.device | str | None = None,
):
    """Yield ``(index (b,), src (b, S) int64, mask (b, S) bool)`` for ``phrases`` (word lists),
    each ending in ``EOS`` as the encoder reads it (:func:`rnnlib.batch.source_batch`), on
    ``device`` (``None``: the host)."""
    from ...batch import source_batch

    for k in range(0, len(phrases), batch_size):
        idx = np.arange(k, min(k + batch_size, len(phrases)))
        batch = source_batch([vocab.encode(phrases[i]) for i in idx])
        if device is not None:
            batch = batch.to(device)
        yield idx, batch.src, batch.src_mask


def _device(model: torch.nn.Module) -> torch.device:
    """Where ``model``'s parameters are: the functions below compute there and return host
    arrays."""
    return next(model.parameters()).device


@torch.no_grad()
def phrase_codes(
    model: torch.nn.Module, vocab, phrases: Sequence[Sequence[str]], batch_size: int = 256
) -> np.ndarray:
    """``c`` (A §2.2: ``c = tanh(V h<N>)``) of each phrase: ``(len(phrases), n) float32``
    (``(0, 0)`` for no phrase)."""
    out = None
    for idx, src, mask in phrase_batches(
        vocab, phrases, batch_size, _device(model)
    ):  # on the model's device
        c = model.encode(src, mask).context
        if c is None:
            raise ValueError(
                "phrase_codes: the model has no fixed summary c (an RNNsearch?); use an RNNencdec"
            )
        if out is None:
            out = np.zeros((len(phrases), c.shape[1]), dtype=np.float32)
        out[idx] = c.float().cpu().numpy()
    return out if out is not None else np.zeros((0, 0), dtype=np.float32)


@torch.no_grad()
def encoder_gates(encoder: torch.nn.Module, src: torch.Tensor, mask: torch.Tensor):
    """The reset gates ``r``, update gates ``z`` (A Eqs. 5--6) and states ``h`` of the encoder's
    GRU over ``src (B, S)``: three ``(B, S, n)`` tensors, zero past each length.

    ``encoder``: an :class:`rnnlib.encoders.RNNEncoder` (``embed``, ``rnn.cell`` with ``W_r``,
    ``U_r``, ``W_z``, ``U_z``, the names of A's Eqs. 5--6).
    """
    cell = encoder.rnn.cell
    x = encoder.embed(src)
    B, S, _ = x.shape
    h = x.new_zeros(B, cell.hidden_size)
    rs, zs, hs = [], [], []
    for t in range(S):
        r = torch.sigmoid(cell.W_r(x[:, t]) + cell.U_r(h))  # A Eq. 5
        z = torch.sigmoid(cell.W_z(x[:, t]) + cell.U_z(h))  # A Eq. 6
        h = cell(x[:, t], h)  # A Eqs. 7-8
        rs.append(r), zs.append(z), hs.append(h)
    m = mask.unsqueeze(-1).to(x.dtype)
    return torch.stack(rs, 1) * m, torch.stack(zs, 1) * m, torch.stack(hs, 1) * m


def gate_activity(
    model: torch.nn.Module,
    vocab,
    phrases: Sequence[Sequence[str]],
    batch_size: int = 256,
    threshold: float = 0.5,
) -> dict[str, np.ndarray]:
    """Per hidden unit ``(n,)``: ``reset_active``, the share of the steps over ``phrases`` at
    which ``r < threshold`` (the unit drops its previous state), ``update_active``, the share
    with ``z > threshold`` (it keeps its previous state, A's Eq. 7), and the mean gates
    ``r_mean``, ``z_mean``. Steps: every word and the ``EOS`` of every phrase."""
    r_low = z_high = r_sum = z_sum = None
    steps = 0
    for _, src, mask in phrase_batches(
        vocab, phrases, batch_size, _device(model)
    ):  # on the model's device
        r, z, _ = encoder_gates(model.encoder, src, mask)
        m = mask.unsqueeze(-1)
        add = [
            ((r < threshold) & m).sum((0, 1)),
            ((z > threshold) & m).sum((0, 1)),
            r.sum((0, 1)),
            z.sum((0, 1)),
        ]
        if r_low is None:
            r_low, z_high, r_sum, z_sum = (a.double() for a in add)
        else:
            r_low, z_high, r_sum, z_sum = (
                a + b.double() for a, b in zip((r_low, z_high, r_sum, z_sum), add)
            )
        steps += int(mask.sum())
    return {
        "reset_active": (r_low / steps).cpu().numpy(),
        "update_active": (z_high / steps).cpu().numpy(),
        "r_mean": (r_sum / steps).cpu().numpy(),
        "z_mean": (z_sum / steps).cpu().numpy(),
    }


@torch.no_grad()
def perturbation_memory(
    model: torch.nn.Module,
    vocab,
    phrases: Sequence[Sequence[str]],
    lag: int = 3,
    seed: int = 0,
    batch_size: int = 256,
) -> np.ndarray:
    """How long each hidden unit remembers, ``(n,)``: the first word of each phrase is replaced
    by a random word of the shortlist (seeded), and the unit's memory is
    ``sum |h'_j<1 + lag> - h_j<1 + lag>| / sum |h'_j<1> - h_j<1>|`` over the phrases (of more
    than ``lag`` words, ``EOS`` included): the share of the change it still carries ``lag``
    words later. 1 means nothing forgotten, 0 everything."""
    from ...specials import SPECIALS

    NUM_SPECIALS = len(SPECIALS)
    if lag < 1:
        raise ValueError(f"perturbation_memory: lag must be >= 1, got {lag}")
    long = [p for p in phrases if len(p) + 1 > lag]
    if not long:
        raise ValueError(f"perturbation_memory: no phrase has more than {lag} tokens")
    g = torch.Generator().manual_seed(
        seed
    )  # the replacements drawn on the host: the same on any device
    device = _device(model)
    first = last = None
    for _, src, mask in phrase_batches(vocab, long, batch_size):
        other = src.clone()
        repl = torch.randint(NUM_SPECIALS, len(vocab), (src.shape[0],), generator=g)
        same = repl == src[:, 0]
        repl[same] = NUM_SPECIALS + (repl[same] + 1 - NUM_SPECIALS) % (len(vocab) - NUM_SPECIALS)
        other[:, 0] = repl
        src, other, mask = src.to(device), other.to(device), mask.to(device)
        _, _, h = encoder_gates(model.encoder, src, mask)
        _, _, h2 = encoder_gates(model.encoder, other, mask)
        d = (h2 - h).abs()
        a, b = d[:, 0].sum(0).double(), d[:, lag].sum(0).double()
        first, last = (a, b) if first is None else (first + a, last + b)
    return (last / first.clamp_min(1e-12)).cpu().numpy()
