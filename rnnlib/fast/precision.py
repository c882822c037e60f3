"""Reduced precision: bf16 autocast for training and search (an option, off by default), and
its error, measured rather than assumed.

:func:`autocast` is the one place training (``TrainConfig.bf16``) and search (``bf16=True``)
switch to bfloat16: the matrix products run in bf16 (8 bits of mantissa), the weights stay
fp32, and log-probabilities are taken in fp32 from the bf16 logits. :func:`bf16_error` measures
what that does to a model's outputs; the faithfulness ledger prints its figures.

Deviations
----------
- ``bf16=True`` (training, search; off by default, not in the papers) computes the models'
  products in bfloat16: log-probabilities and attention weights differ from fp32 by the error
  :func:`bf16_error` measures (printed in the ledger).
"""

from __future__ import annotations

import contextlib
import functools

import numpy as np
import torch

from .. import machine


@functools.lru_cache(maxsize=1)
def cpu_bf16_instructions() -> tuple[str, ...]:
    """The bf16 matrix instructions this CPU advertises in ``/proc/cpuinfo`` (Linux; empty
    elsewhere), read once (:func:`rnnlib.machine.cpu_flags`).

    Without ``avx512_bf16`` or ``amx_bf16`` torch emulates bf16 products, far slower than fp32.
    """
    flags = machine.cpu_flags()
    return tuple(x for x in ("avx512_bf16", "amx_bf16") if x in flags)


def bf16_pays(device: torch.device) -> bool:
    """Whether bf16 autocast runs in hardware on ``device``: a CUDA device that supports bf16, or a
    CPU with ``avx512_bf16`` or ``amx_bf16``. Elsewhere bf16 is emulated and slower than fp32."""
    if device.type == "cuda":
        return torch.cuda.is_bf16_supported()
    return device.type == "cpu" and bool(cpu_bf16_instructions())


def resolve_bf16(bf16: bool | None, device: torch.device) -> bool:
    """A ``bf16`` parameter as used: ``True``/``False`` as given, ``None`` where it pays
    (:func:`bf16_pays`)."""
    return bf16_pays(device) if bf16 is None else bool(bf16)


def autocast(bf16: bool, device_type: str):
    """A bf16 autocast context for ``device_type`` ("cpu", "cuda") when ``bf16``, else a no-op."""
    if not bf16:
        return contextlib.nullcontext()
    return torch.autocast(device_type=device_type, dtype=torch.bfloat16)


def bf16_error(
    preset: str = "cpu-rnnsearch",
    seed: int = 0,
    batch_size: int = 32,
    min_len: int = 10,
    max_len: int = 30,
    init: str = "default",
) -> dict:
    """The largest differences between bf16 autocast and fp32 on a seeded model and batch.

    Builds ``preset`` (:mod:`rnnlib.presets`, initialised ``init``: "default" gives sharper
    outputs and non-uniform attention, unlike the papers' small initial weights) with torch
    seed ``seed``, and a batch of ``batch_size`` random pairs of ``min_len`` to ``max_len``
    words. Both runs use the fast path (:mod:`rnnlib.fast.kernels`), as training and search do.

    Returns ``{"preset", "logprob": max |log p_bf16 - log p_fp32|`` over every word of every
    real target position, ``"attention": max |alpha_bf16 - alpha_fp32|`` (``None`` for
    RNNencdec), ``"logprob_range"``: the spread (max - min) of the fp32 log-probabilities, for
    scale, ``"tokens"``: the target positions compared}.
    """
    from ..batch import make_batch
    from ..presets import build_model
    from ..presets import preset as get_preset
    from ..ragged import ParallelArrays, Ragged
    from .kernels import FastModel

    torch.manual_seed(seed)
    model = FastModel(build_model(get_preset(preset, init=init))).eval()
    cfg = model.config
    rng = np.random.default_rng(seed)

    def words(vocab):
        return [
            rng.integers(4, vocab, rng.integers(min_len, max_len + 1)) for _ in range(batch_size)
        ]

    pairs = ParallelArrays(
        Ragged.from_lists(words(cfg.src_vocab)), Ragged.from_lists(words(cfg.tgt_vocab))
    )
    batch = make_batch(pairs, range(batch_size))
    out = {}
    with torch.no_grad():
        for name, bf16 in (("fp32", False), ("bf16", True)):
            with autocast(bf16, batch.src.device.type):
                logits, att = model(batch.src, batch.src_mask, batch.tgt_in, return_attention=True)
            lp = torch.log_softmax(logits.float(), -1)[batch.tgt_mask.bool()]
            out[name] = (lp, None if att is None else att.float())
    (lp32, att32), (lp16, att16) = out["fp32"], out["bf16"]
    return {
        "preset": preset,
        "logprob": float((lp16 - lp32).abs().max()),
        "attention": None if att32 is None else float((att16 - att32).abs().max()),
        "logprob_range": float(lp32.max() - lp32.min()),
        "tokens": int(lp32.shape[0]),
    }
