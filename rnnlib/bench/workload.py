"""What the benchmarks run: synthetic sentence pairs and one training update, shared by
:mod:`rnnlib.bench.nmt` (this checkout against the reference models) and
:mod:`rnnlib.bench.against` (this checkout against another version of rnnlib)."""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from ..ragged import ParallelArrays, Ragged
from ..train import TrainConfig, batch_nll, make_optimizer


def synthetic_pairs(
    n: int, src_vocab: int, tgt_vocab: int, min_len: int, max_len: int, seed: int
) -> ParallelArrays:
    rng = np.random.default_rng(seed)
    src = [rng.integers(4, src_vocab, rng.integers(min_len, max_len + 1)) for _ in range(n)]
    tgt = [rng.integers(4, tgt_vocab, rng.integers(min_len, max_len + 1)) for _ in range(n)]
    return ParallelArrays(Ragged.from_lists(src), Ragged.from_lists(tgt))


def train_step_fn(
    model: nn.Module, batches, clip: float = 1.0, bf16: bool = False, train_module=None
):
    """``(step, state)``: one Adadelta update with clipping per call of ``step``, cycling
    ``batches``. ``train_module``: the module giving ``TrainConfig``, ``make_optimizer`` and
    ``batch_nll`` (default :mod:`rnnlib.train`; :mod:`rnnlib.bench.against` passes another
    version's)."""
    cfg_cls, make_opt, nll_of = (
        (TrainConfig, make_optimizer, batch_nll)
        if train_module is None
        else (train_module.TrainConfig, train_module.make_optimizer, train_module.batch_nll)
    )
    opt = make_opt(cfg_cls(max_updates=1), [p for p in model.parameters() if p.requires_grad])
    state = {"k": 0, "nll": []}

    def step():
        batch = batches[state["k"] % len(batches)]
        state["k"] += 1
        opt.zero_grad(set_to_none=True)
        nll = nll_of(model, batch, bf16)
        (nll / batch.size).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
        opt.step()
        state["nll"].append(float(nll.detach()) / batch.n_target_tokens)

    return step, state
