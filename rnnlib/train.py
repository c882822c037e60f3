"""Training: Adadelta, gradient-norm clipping, the papers' minibatches, early stopping, resumable.

Bahdanau et al. 2015 (paper B), Appendix B.2 and §4.2: Adadelta with ``rho = 0.95``,
``eps = 1e-6``; the L2 norm of the gradient rescaled to at most 1; minibatches of 80 sentence
pairs taken from length-sorted pools of 20 minibatches. Cho et al. 2014 (paper A), §4.1: the
same Adadelta, minibatches of 64 phrase pairs drawn at random. Both are named presets,
``train_preset("paper-b")`` and ``train_preset("paper-a")`` (:data:`TRAIN_PRESETS`); the
:class:`TrainConfig` defaults are paper B's. The objective is the negative log-likelihood
``-log p(y | x)`` of A's Eq. (4) / B's Eq. (2), summed over the words of a sentence and
averaged over the sentences of a minibatch.

A :class:`Trainer` holds the state of one run (model, optimiser, minibatch stream and a
:class:`TrainState`: update count, position, logs, best evaluation) and takes it forward with
:meth:`~Trainer.step`, :meth:`~Trainer.evaluate` and :meth:`~Trainer.checkpoint` until
:meth:`~Trainer.should_stop`; :func:`train` is the one-call entry point. Every update is logged
(update, epoch, train NLL per sentence and per token, wall seconds) and every evaluation (dev
NLL per sentence and per token): the columns of paper B's Table 2. The model is computed
through :mod:`rnnlib.fast` (``TrainConfig.fast``); where its time goes: ``BENCHMARKS.md``.

Resuming: rerunning with the same ``work_dir`` continues from its ``checkpoint.pt`` (model,
optimiser, minibatch position, every process's random-number states, history) and ends
bitwise where an uninterrupted run with the new config ends (on the CPU, for a fixed thread
count and number of processes), whenever that run gets as far as the checkpoint. The fields in
:data:`RESUMABLE_CHANGES` may differ from the checkpoint's: the limits ``max_updates``,
``max_epochs`` and ``patience``, ``checkpoint_every`` (no effect on the numbers), and
``device``, ``eval_batch_size`` and ``fast`` (the numbers then agree up to rounding). A limit
that the checkpoint is already past cannot be undone: the run returns at once with the checkpoint's
state (more updates than ``max_updates`` asks for), and a ``patience`` that an earlier streak
of evaluations without improvement would have ended counts from the current streak, which is
how a finished run is continued with early stopping. ``eval_every`` may not change: the
evaluations already made decide ``patience`` and the best parameters. A checkpoint records the
hashes of the model and training modules (:func:`rnnlib.code_deps.checkpoint_code`) and resumes
only under that code: under other code it is refused (:class:`CheckpointMismatch`, naming the
files that changed) unless ``RNNLIB_KEEP_STALE=1``; one written before the code was recorded is
resumed.

Evaluations run every ``eval_every`` updates (*scheduled*), and once more at the end when the
run stops between two of them (a limit reached off the schedule, or no ``eval_every``). That
end-of-run evaluation is marked ``"scheduled": False``: it competes for the returned best
parameters but does not count toward ``patience``, and a resumed run that goes on drops it, so
its history is the uninterrupted run's.

Under ``torchrun`` the same code trains with ``DistributedDataParallel``: every process
builds the same global minibatch, takes every ``world_size``-th pair of it, and scales its loss
by the *global* sentence (or token) count, so the averaged gradient equals the single-process
gradient of the global batch. Process ``r`` seeds its random numbers (dropout) with
``seed + r``; only rank 0 writes checkpoints and logs, holding every process's random-number
state. Launch as a program with ``python -m rnnlib.train --config run.yml`` (or under
``torchrun --nproc-per-node N -m rnnlib.train --config run.yml``); see :func:`main`.

Equations
---------
- A Eq. (4) / B §2: maximise (1/N) sum_n log p(y_n | x_n): the loss is the NLL summed over a
  sentence's words and averaged over the minibatch's sentences (rnnlib.loss)
- B B.2 / A §4.1: Adadelta with rho = 0.95, eps = 1e-6 (both presets)
- B B.2: the L2 norm of the gradient rescaled to at most 1 when it is larger (``paper-b``)
- B B.2: minibatches of 80 from length-sorted pools of 1600 pairs (20 minibatches) (``paper-b``);
  A §4.1: minibatches of 64 phrase pairs drawn at random (``paper-a``) (rnnlib.minibatch_order)

Deviations
----------
- A mentions no gradient clipping, so ``paper-a`` clips nothing (``clip_norm=None``): we keep
  to the printed text, and A's phrase pairs are a few words long, so the gradient explosion
  over long sequences that B's clipping guards against (Pascanu et al. 2013) is unlikely.
  ``clip_norm=1.0`` (B's value, and the ``TrainConfig`` default) is the override if a
  run diverges.
- The papers' update rule is Adadelta with learning rate 1 (Zeiler 2012 has none); torch's
  Adadelta with ``lr=1.0`` is that rule.
- Neither paper gives its stopping rule as a number (A trained about three days, B about five,
  B's RNNsearch-50* "until the performance on the development set stopped improving"); the
  presets carry no limit, and a run names ``max_updates``, ``max_epochs`` or ``patience``
  (evaluations in a row without a lower dev NLL).
- ``loss_norm="token"`` (average over target tokens) is offered besides the papers'
  per-sentence average; it changes the scale of the gradient and so the effect of clipping.
- ``lr_decay``/``lr_patience``, a learning-rate schedule the papers do not have (their Adadelta
  sets its own step sizes): the rate is multiplied by ``lr_decay`` after every ``lr_patience``
  scheduled evaluations in a row without a lower dev NLL. Off by default (``None``); the
  ``rnnsearch`` chapter's ``cpu`` profile turns it on, compared on dev with its recipe runs.
  ``lr_decay_start`` holds the schedule back until that update (as Marian's
  ``--lr-decay-start``): early in a run, a dev NLL that fails to fall between two evaluations
  is noise more often than a stall.
- ``lr_min``, a stopping rule the papers do not have: the run ends once the schedule has cut the
  rate below it (the ``cpu`` profile: after five halvings of RNNsearch's 3e-3, four of
  RNNencdec's 1e-3), so the time a stalled run would spend
  at a rate too small to move its dev NLL is not spent. Off by default.
- ``lr_cooldown``/``lr_cooldown_end``, a cool-down the papers do not have: the last
  ``lr_cooldown`` updates up to update ``lr_cooldown_end`` (a run's whole budget; the book trains
  in chunks whose ``max_updates`` are shorter) take a share of the scheduled rate that falls
  linearly towards 0 (:func:`cooldown_factor`): the "warmup-stable-decay" schedule of Hu et al.
  (2024, MiniCPM) without its warm-up, and Hägele et al. (2024), whose cool-down over the last
  part of a fixed budget matched a cosine schedule fitted to that budget. The scheduled rate
  (``lr_decay``'s) stays in the optimiser's state; only the update's step uses the share. Off by
  default.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import random
import sys
import time
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from . import code_deps, distributed
from .batch import Batch, make_batch
from .minibatch_order import PoolBatcher, Position, RandomBatcher, eval_batches
from .checkpoint import load_checkpoint, save_atomic
from .config import UnknownNameError, load_config
from .device import resolve_device
from .fast import precision
from .fast.allocator import bound_primitive_cache, tune_allocator
from .fast.kernels import wrap as fast_path
from .loss import nll_sum
from .ragged import ParallelArrays

CHECKPOINT = "checkpoint.pt"
CHECKPOINT_FORMAT = 2
EPOCH_TOLERANCE = 1e-12  # epochs are float sums of pair counts / n


@dataclass
class TrainConfig:
    """Training hyper-parameters (paper B's values as defaults; see :func:`train_preset`).

    ``batching``: "pools" (B's length-sorted pools of ``pool`` minibatches) or "random" (A's
    random minibatches; ``pool`` unused). ``max_updates``/``max_epochs``: stop after that many
    updates / passes over the data (``None``: no limit; at least one limit or ``patience`` is
    required). ``eval_every`` and ``checkpoint_every`` count updates (``None``: only at the
    end). ``patience``: stop after that many scheduled evaluations in a row without a lower
    dev NLL (``None``: never; needs ``eval_every``). ``lr_decay``: multiply the learning rate
    by this factor (in ``(0, 1)``) after every ``lr_patience`` scheduled evaluations in a row
    without a lower dev NLL (``None``: a constant rate, the papers'; needs ``eval_every``; not
    in the papers, for data far smaller than theirs). ``lr_decay_start``: the schedule cuts the
    rate only at evaluations from this update on (``None``: from the first; a stall counted
    before it cuts nothing). ``lr_min``: stop once the schedule has cut
    the rate below this (``None``: never; as fairseq's ``--stop-min-lr``: a run whose dev NLL
    stalled through several cuts has stopped learning). ``fast``: compute through
    :mod:`rnnlib.fast` (the default; the same numbers as the plain modules up to float
    rounding, faster) or, ``False``, through the plain modules. ``bf16``: bf16 autocast
    (:mod:`rnnlib.fast.precision`; not in the papers). ``lr_cooldown``, ``lr_cooldown_end``: the
    last ``lr_cooldown`` updates up to update ``lr_cooldown_end`` use a linearly falling share of
    the rate (:func:`cooldown_factor`; both or neither; not in the papers).
    """

    optimizer: str = "adadelta"  # {adadelta, adam, sgd}
    lr: float = 1.0
    rho: float = 0.95
    eps: float = 1e-6  # Adadelta's (B B.2); Adam takes it too (Adam's own default is 1e-8)
    clip_norm: float | None = 1.0
    batch_size: int = 80
    batching: str = "pools"  # {pools, random}
    pool: int = 20
    shuffle: bool = True
    loss_norm: str = "sentence"  # {sentence, token}
    max_updates: int | None = None
    max_epochs: float | None = None
    eval_every: int | None = None
    eval_batch_size: int | None = None
    checkpoint_every: int | None = 1000
    patience: int | None = None
    lr_decay: float | None = None
    lr_patience: int = 1
    lr_decay_start: int | None = None
    lr_min: float | None = None
    lr_cooldown: int | None = None
    lr_cooldown_end: int | None = None
    seed: int = 1
    bf16: bool = False
    fast: bool = True
    device: str = "auto"

    def __post_init__(self) -> None:
        for name, valid in (
            ("optimizer", ("adadelta", "adam", "sgd")),
            ("batching", ("pools", "random")),
            ("loss_norm", ("sentence", "token")),
        ):
            if getattr(self, name) not in valid:
                raise ValueError(
                    f"TrainConfig.{name} must be one of {', '.join(valid)}, "
                    f"got {getattr(self, name)!r}"
                )
        for name in (
            "batch_size",
            "pool",
            "max_updates",
            "eval_every",
            "eval_batch_size",
            "checkpoint_every",
            "patience",
            "lr_patience",
            "lr_decay_start",
            "lr_cooldown",
            "lr_cooldown_end",
        ):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, int) or value < 1):
                raise ValueError(
                    f"TrainConfig.{name} must be a positive integer or None, got {value!r}"
                )
        for name in ("clip_norm", "max_epochs"):
            value = getattr(self, name)
            if value is not None and not value > 0:
                raise ValueError(f"TrainConfig.{name} must be positive or None, got {value!r}")
        if self.max_updates is None and self.max_epochs is None and self.patience is None:
            raise ValueError(
                "TrainConfig needs max_updates, max_epochs or patience, or it never stops"
            )
        if self.patience is not None and self.eval_every is None:
            raise ValueError(
                "TrainConfig.patience counts evaluations every eval_every updates: give eval_every"
            )
        if (self.lr_cooldown is None) != (self.lr_cooldown_end is None):
            raise ValueError(
                "TrainConfig.lr_cooldown and lr_cooldown_end go together: give both or neither, "
                f"got {self.lr_cooldown!r} and {self.lr_cooldown_end!r}"
            )
        if self.lr_min is not None and not self.lr_min > 0:
            raise ValueError(f"TrainConfig.lr_min must be positive or None, got {self.lr_min!r}")
        if self.lr_decay is not None:
            if not 0 < self.lr_decay < 1:
                raise ValueError(f"TrainConfig.lr_decay must be in (0, 1), got {self.lr_decay!r}")
            if self.eval_every is None:
                raise ValueError(
                    "TrainConfig.lr_decay follows evaluations every eval_every updates: "
                    "give eval_every"
                )

    def to_dict(self) -> dict[str, Any]:
        """Every field by name, as cache keys use it: without the learning-rate schedule's
        fields while the rate is constant (``lr_decay`` None), so the keys of runs made before
        the schedule existed stay as they were; ``lr_min`` and ``lr_decay_start`` only when set
        and the rate can fall; the cool-down's only when set (:data:`LATER_FIELDS`)."""
        d = asdict(self)
        if d["lr_decay_start"] is None or self.lr_decay is None:
            del d["lr_decay_start"]
        if d["lr_decay"] is None:
            del d["lr_decay"], d["lr_patience"]
        if d["lr_min"] is None or self.lr_decay is None:
            del d["lr_min"]
        if d["lr_cooldown"] is None:
            del d["lr_cooldown"], d["lr_cooldown_end"]
        return d

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> "TrainConfig":
        """Build from a mapping (:func:`rnnlib.config.load_config`: an unknown key is an error
        naming it)."""
        return load_config(cls, values)

    def override(self, **values: Any) -> "TrainConfig":
        """A copy with some fields changed (unknown names are an error)."""
        return TrainConfig.from_dict({**asdict(self), **values})


#: The papers' training set-ups (TrainConfig fields); see the module docstring's Deviations.
TRAIN_PRESETS: dict[str, dict[str, Any]] = {
    # A §4.1: Adadelta, 64 phrase pairs drawn at random per update, no clipping mentioned
    "paper-a": dict(
        optimizer="adadelta",
        lr=1.0,
        rho=0.95,
        eps=1e-6,
        clip_norm=None,
        batch_size=64,
        batching="random",
    ),
    # B B.2: Adadelta, L2 norm of the gradient clipped at 1, 80 pairs from pools of 20 sorted
    # minibatches
    "paper-b": dict(
        optimizer="adadelta",
        lr=1.0,
        rho=0.95,
        eps=1e-6,
        clip_norm=1.0,
        batch_size=80,
        batching="pools",
        pool=20,
    ),
}


def train_preset(name: str, **overrides: Any) -> TrainConfig:
    """The named training set-up with ``overrides`` applied by field name.

    The papers give no stopping limit, so ``overrides`` name one (``max_updates=...``).
    An unknown preset or field name is an error listing the valid ones.
    """
    if name not in TRAIN_PRESETS:
        raise UnknownNameError(
            f"unknown training preset {name!r}; valid presets: {', '.join(TRAIN_PRESETS)}"
        )
    return TrainConfig.from_dict({**TRAIN_PRESETS[name], **overrides})


#: TrainConfig fields added after runs were first keyed: :meth:`TrainConfig.to_dict` leaves each
#: out while it is unset (or cannot act), so a run that uses none of them keeps its old key
LATER_FIELDS = (
    "lr_decay",
    "lr_patience",
    "lr_min",
    "lr_decay_start",
    "lr_cooldown",
    "lr_cooldown_end",
)

# Fields that may differ between a checkpoint and the run that resumes it (module docstring).
RESUMABLE_CHANGES = {
    "max_updates",
    "max_epochs",
    "checkpoint_every",
    "patience",
    "lr_min",
    "lr_cooldown",
    "lr_cooldown_end",
    "device",
    "eval_batch_size",
    "fast",
}


@dataclass
class TrainResult:
    """What :func:`train` returns. ``log``: one dict per update; ``evals``: one per evaluation."""

    log: list[dict]
    evals: list[dict]
    updates: int
    epochs: float
    seconds: float
    stopped: str
    best: dict | None
    best_state: dict[str, torch.Tensor] = field(repr=False)
    resumed_from: int | None = None

    @property
    def final_train_nll(self) -> float | None:
        return self.log[-1]["train_nll_sentence"] if self.log else None

    def table2_row(self) -> dict:
        """Paper B Table 2's columns: updates, epochs, hours, train NLL, dev NLL (per sentence)."""
        dev = self.best["dev_nll_sentence"] if self.best else None
        return {
            "updates": self.updates,
            "epochs": self.epochs,
            "hours": self.seconds / 3600,
            "train_nll": self.final_train_nll,
            "dev_nll": dev,
        }


# ---------------------------------------------------------------------------------------------
# losses


def batch_nll(
    model: nn.Module, batch: Batch, bf16: bool = False, fast: bool = True
) -> torch.Tensor:
    """Summed ``-log p(y_t | y_<t, x)`` over the real target tokens of ``batch`` (scalar, fp32).

    Only the real (unpadded) positions reach the softmax: a model with ``supports_out_mask``
    computes its output layer for them alone; any other model's ``(B, T, V)`` logits are
    gathered at them first. ``fast``: through :mod:`rnnlib.fast` (else the plain modules);
    ``bf16``: under bf16 autocast.
    """
    if fast:
        model = fast_path(model)
    mask = batch.tgt_mask.bool()
    with precision.autocast(bf16, batch.src.device.type):
        if getattr(getattr(model, "module", model), "supports_out_mask", False):
            # positional: (src, src_mask, tgt_in, return_attention, out_mask) -> (N, V)
            logits = model(batch.src, batch.src_mask, batch.tgt_in, False, mask)
        else:
            logits = model(batch.src, batch.src_mask, batch.tgt_in)[mask]  # (B, T, V) -> (N, V)
    return nll_sum(logits.float(), batch.tgt_out[mask])


@torch.no_grad()
def evaluate_nll(
    model: nn.Module,
    pairs: ParallelArrays,
    batch_size: int = 80,
    device: torch.device | str | None = None,
    bf16: bool = False,
    world: distributed.World | None = None,
    fast: bool = True,
) -> dict:
    """Teacher-forced NLL of every pair: ``{"nll_sentence", "nll_token", "sentences", "tokens"}``.

    Per sentence is paper B's Table 2 NLL (a sum over the words, ``[EOS]`` included, averaged
    over sentences). Under ``torchrun`` each process scores every ``world_size``-th minibatch.
    """
    world = world or distributed.World()
    device = torch.device(device) if device is not None else next(model.parameters()).device
    was_training = model.training
    model.eval()
    total, tokens, sentences = 0.0, 0, 0
    for k, index in enumerate(eval_batches(pairs.src.lengths, pairs.tgt.lengths, batch_size)):
        if k % world.size != world.rank:
            continue
        batch = make_batch(pairs, index).to(device)
        total += float(batch_nll(model, batch, bf16, fast))
        tokens += batch.n_target_tokens
        sentences += batch.size
    model.train(was_training)
    total, tokens, sentences = distributed.all_sum([total, tokens, sentences], world, device)
    return {
        "nll_sentence": total / max(sentences, 1),
        "nll_token": total / max(tokens, 1),
        "sentences": int(sentences),
        "tokens": int(tokens),
    }


def cooldown_factor(cfg: TrainConfig, update: int) -> float:
    """The share of the scheduled rate that update ``update`` (1-based) uses: 1, then over the
    ``n = lr_cooldown`` updates that end at ``lr_cooldown_end`` (the run's budget, not the
    ``max_updates`` of one chunk) a linear fall, ``n/(n+1)``, ..., ``1/(n+1)``; 1 again after it
    (a continuation with a later end sets its own)."""
    n, end = cfg.lr_cooldown, cfg.lr_cooldown_end
    if n is None or end is None or update > end:
        return 1.0
    return min(1.0, (end - update + 1) / (n + 1))


def cooldown_start(cfg: TrainConfig) -> int | None:
    """The last update before the cool-down (``lr_cooldown_end - lr_cooldown``), ``None``
    without one."""
    if cfg.lr_cooldown is None or cfg.lr_cooldown_end is None:
        return None
    return max(0, cfg.lr_cooldown_end - cfg.lr_cooldown)


def make_optimizer(cfg: TrainConfig, params) -> torch.optim.Optimizer:
    if cfg.optimizer == "adadelta":
        return torch.optim.Adadelta(params, lr=cfg.lr, rho=cfg.rho, eps=cfg.eps)
    if cfg.optimizer == "adam":
        return torch.optim.Adam(params, lr=cfg.lr, eps=cfg.eps)
    return torch.optim.SGD(params, lr=cfg.lr)


def make_batcher(cfg: TrainConfig, pairs: ParallelArrays) -> PoolBatcher | RandomBatcher:
    """B's length-sorted pools or A's random minibatches (``cfg.batching``), seeded by
    ``cfg.seed``."""
    if cfg.batching == "random":
        return RandomBatcher(len(pairs.src.lengths), cfg.batch_size, cfg.seed)
    return PoolBatcher(
        pairs.src.lengths, pairs.tgt.lengths, cfg.batch_size, cfg.pool, cfg.seed, cfg.shuffle
    )


# ---------------------------------------------------------------------------------------------
# random-number states, in forms that torch.load(weights_only=True) accepts


def rng_state() -> dict:
    name, keys, pos, has_gauss, cached = np.random.get_state()
    version, internal, gauss_next = random.getstate()
    out = {
        "torch": torch.get_rng_state(),
        "numpy": {
            "name": name,
            "keys": torch.from_numpy(np.asarray(keys, dtype=np.int64)),
            "pos": int(pos),
            "has_gauss": int(has_gauss),
            "cached": float(cached),
        },
        "python": [version, list(internal), gauss_next],
    }
    if torch.cuda.is_available():
        out["cuda"] = torch.cuda.get_rng_state_all()
    return out


def set_rng_state(state: dict) -> None:
    torch.set_rng_state(state["torch"])
    n = state["numpy"]
    np.random.set_state(
        (n["name"], n["keys"].numpy().astype(np.uint32), n["pos"], n["has_gauss"], n["cached"])
    )
    version, internal, gauss_next = state["python"]
    random.setstate((version, tuple(internal), gauss_next))
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


def seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)


# ---------------------------------------------------------------------------------------------
# logs

LOG_COLUMNS = [
    "update",
    "epoch",
    "train_nll_sentence",
    "train_nll_token",
    "grad_norm",
    "sentences",
    "tokens",
    "seconds",
]
EVAL_COLUMNS = [
    "update",
    "epoch",
    "dev_nll_sentence",
    "dev_nll_token",
    "scheduled",
    "seconds",
    "lr",
]


def _write_text_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + f".{os.getpid()}.part")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def write_logs(
    work_dir: Path, cfg: TrainConfig, log: list[dict], evals: list[dict], extra: dict
) -> None:
    """``train_log.csv`` (per update), ``eval_log.csv`` (per evaluation), ``train_log.json``
    (all)."""
    for name, rows, columns in (
        ("train_log.csv", log, LOG_COLUMNS),
        ("eval_log.csv", evals, EVAL_COLUMNS),
    ):
        tmp = work_dir / f"{name}.{os.getpid()}.part"
        with open(tmp, "w", newline="", encoding="utf-8") as f:
            w = csv.DictWriter(f, fieldnames=columns, extrasaction="ignore")
            w.writeheader()
            w.writerows(rows)
        os.replace(tmp, work_dir / name)
    _write_text_atomic(
        work_dir / "train_log.json",
        json.dumps({"config": asdict(cfg), **extra, "log": log, "evals": evals}, indent=1),
    )


# ---------------------------------------------------------------------------------------------
# the state of a run and its checkpoint


@dataclass
class TrainState:
    """Everything about a run's progress except the model, optimiser and random-number states.

    ``best``/``best_state``: the best *scheduled* evaluation and the parameters then;
    ``bad_evals``: scheduled evaluations since, for ``patience``; ``stopped``: why the run last
    ended (a record only: :meth:`Trainer.should_stop` decides from the config).
    """

    update: int = 0
    epochs: float = 0.0
    seconds: float = 0.0
    position: Position = field(default_factory=Position)
    log: list[dict] = field(default_factory=list)
    evals: list[dict] = field(default_factory=list)
    best: dict | None = None
    best_state: dict[str, torch.Tensor] | None = None
    bad_evals: int = 0
    stopped: str | None = None

    def as_dict(self) -> dict:
        return {
            **{f.name: getattr(self, f.name) for f in fields(self)},
            "position": self.position.as_list(),
        }

    @classmethod
    def from_dict(cls, values: dict) -> "TrainState":
        state = cls(**{f.name: values[f.name] for f in fields(cls)})
        state.position = Position.from_list(values["position"])
        return state


class CheckpointMismatch(ValueError):
    """A work folder's checkpoint that this run may not resume; the message names the file."""


def _check_checkpoint(ckpt: dict, cfg: TrainConfig, path: Path) -> None:
    """Refuse a checkpoint of another format, one written by other model or training code than
    this run's (:func:`rnnlib.code_deps.checkpoint_code`; unless ``$RNNLIB_KEEP_STALE``; a
    checkpoint that records no code, written before it was recorded, is resumed), or one
    written with a config this run may not change."""
    if ckpt.get("format") != CHECKPOINT_FORMAT:
        raise CheckpointMismatch(
            f"{path}: checkpoint format {ckpt.get('format')!r}, expected {CHECKPOINT_FORMAT} "
            "(written by another rnnlib version); use another work_dir"
        )
    written_by = code_deps.recorded(ckpt)
    if written_by is not None and not code_deps.keep_stale():
        files = code_deps.changed(written_by, code_deps.checkpoint_code())
        if files:
            raise CheckpointMismatch(
                f"{path}: the checkpoint was written by other code (changed: "
                f"{code_deps.describe(files)}); use another work_dir to start over, or "
                f"{code_deps.KEEP_STALE_ENV}=1 to resume under this code"
            )
    saved, now = ckpt["config"], asdict(cfg)
    for f in fields(TrainConfig):
        if f.name in RESUMABLE_CHANGES:
            continue
        value = saved.get(f.name, f.default)
        if now[f.name] != value:
            raise CheckpointMismatch(
                f"{path}: the checkpoint was written with TrainConfig.{f.name}={value!r} but this "
                f"run has {now[f.name]!r}; use another work_dir or the same value"
            )


class _Progress:
    """A tqdm bar on stderr (or nothing)."""

    def __init__(self, enabled: bool, total: int | None, initial: int) -> None:
        self.bar = None
        if enabled:
            from tqdm.auto import tqdm

            self.bar = tqdm(
                total=total,
                initial=initial,
                desc="train",
                unit="upd",
                dynamic_ncols=True,
                file=sys.stderr,
            )

    def update(self, row: dict, every: int) -> None:
        if self.bar is not None:
            self.bar.update(1)
            if row["update"] % every == 1 or every == 1:
                self.bar.set_postfix(
                    nll=f"{row['train_nll_sentence']:.2f}", ep=f"{row['epoch']:.2f}"
                )

    def evaluated(self, row: dict) -> None:
        if self.bar is not None:
            self.bar.set_postfix(dev=f"{row['dev_nll_sentence']:.2f}")

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


# ---------------------------------------------------------------------------------------------
# the trainer


class Trainer:
    """One training run: ``model`` on ``train`` (``dev`` for evaluation, may be ``None``), resuming
    from ``work_dir/checkpoint.pt`` when it exists (module docstring: what may change on resume).

    ``model(src (B,S) int64, src_mask (B,S) bool, tgt_in (B,T) int64) -> logits (B,T,V)``.
    """

    def __init__(
        self,
        model: nn.Module,
        train: ParallelArrays,
        dev: ParallelArrays | None,
        cfg: TrainConfig | dict,
        work_dir: Path,
        progress: bool = True,
    ) -> None:
        self.cfg = cfg if isinstance(cfg, TrainConfig) else TrainConfig.from_dict(cfg)
        if self.cfg.patience is not None and dev is None:
            raise ValueError("TrainConfig.patience needs a dev set (dev is None)")
        self.world = distributed.setup()
        self.device = resolve_device(
            self.cfg.device, self.world.local_rank if self.world.active else None
        )
        self.work_dir = Path(work_dir)
        if self.world.is_main:
            self.work_dir.mkdir(parents=True, exist_ok=True)
        distributed.barrier(self.world)
        self.ckpt_path = self.work_dir / CHECKPOINT
        self.model, self.train_data, self.dev, self.progress = (
            model.to(self.device),
            train,
            dev,
            progress,
        )
        self.params = [p for p in model.parameters() if p.requires_grad]
        self.optimizer = make_optimizer(self.cfg, self.params)
        self.state = TrainState()
        self.resumed_from = self._resume()
        self.net: nn.Module = fast_path(model) if self.cfg.fast else model  # same parameters
        if self.world.active:
            ids = [self.device.index] if self.device.type == "cuda" else None
            self.net = nn.parallel.DistributedDataParallel(self.net, device_ids=ids)
        self._stream = make_batcher(self.cfg, train).stream(self.state.position)
        self._started, self._seconds0, self._dirty = time.perf_counter(), self.state.seconds, False

    def _resume(self) -> int | None:
        """Load the checkpoint if there is one (its update count), else seed the random numbers."""
        if not self.ckpt_path.exists():
            seed_everything(self.cfg.seed + self.world.rank)
            return None
        ckpt = load_checkpoint(self.ckpt_path)
        _check_checkpoint(ckpt, self.cfg, self.ckpt_path)
        try:
            self.model.load_state_dict(ckpt["model"])
        except RuntimeError as err:  # another architecture or size than the run that wrote it
            first = str(err).strip().splitlines()[-1].strip()
            raise CheckpointMismatch(
                f"{self.ckpt_path}: the checkpoint's model is not this run's model ({first}); "
                "resume with the run's own settings, or start afresh in another work_dir"
            ) from None
        self.optimizer.load_state_dict(ckpt["optimizer"])
        states = ckpt["rng"]  # one per process of the run that wrote it
        set_rng_state(states[self.world.rank] if self.world.rank < len(states) else states[0])
        self.state = TrainState.from_dict(ckpt)
        evals = self.state.evals
        if self.should_stop() is None and evals and not evals[-1]["scheduled"]:
            evals.pop()  # the end-of-run evaluation of a run that now goes on (module docstring)
        return self.state.update

    def elapsed(self) -> float:
        """Wall seconds of training so far, over all sessions of this run."""
        return self._seconds0 + (time.perf_counter() - self._started)

    def should_stop(self) -> str | None:
        """Why the run stops now ("early_stopping", "lr_min", "max_updates", "max_epochs"), or
        ``None``."""
        cfg, st = self.cfg, self.state
        if cfg.patience is not None and st.bad_evals >= cfg.patience:
            return "early_stopping"
        if cfg.lr_min is not None and cfg.lr_decay is not None:
            if self.optimizer.param_groups[0]["lr"] < cfg.lr_min:
                return "lr_min"
        if cfg.max_updates is not None and st.update >= cfg.max_updates:
            return "max_updates"
        if cfg.max_epochs is not None and st.epochs >= cfg.max_epochs - EPOCH_TOLERANCE:
            return "max_epochs"
        return None

    def _local_batch(self, indices: np.ndarray) -> tuple[Batch, float]:
        """This process's share of the global minibatch ``indices`` and its loss weight."""
        local = distributed.shard(indices, self.world)
        if len(local) == 0:  # a global batch smaller than the world: take a pair with weight 0
            return make_batch(self.train_data, indices[:1]).to(self.device), 0.0
        return make_batch(self.train_data, local).to(self.device), 1.0

    def step(self) -> dict:
        """One update on the next minibatch (clipped Adadelta step); returns its log row."""
        cfg, st = self.cfg, self.state
        indices, position, epochs = next(self._stream)
        batch, weight = self._local_batch(indices)
        tgt_tokens = int((self.train_data.tgt.lengths[indices] + 1).sum())  # + [EOS]
        denom = len(indices) if cfg.loss_norm == "sentence" else tgt_tokens
        self.optimizer.zero_grad(set_to_none=True)
        nll = batch_nll(self.net, batch, cfg.bf16, cfg.fast)
        (nll * (weight * self.world.size / denom)).backward()
        grad_norm = torch.nn.utils.clip_grad_norm_(self.params, cfg.clip_norm or math.inf)
        factor = cooldown_factor(cfg, st.update + 1)
        if factor == 1.0:
            self.optimizer.step()
        else:  # the scheduled rate stays in the optimiser's state; this update uses a share of it
            rates = [group["lr"] for group in self.optimizer.param_groups]
            for group in self.optimizer.param_groups:
                group["lr"] *= factor
            self.optimizer.step()
            for group, rate in zip(self.optimizer.param_groups, rates):
                group["lr"] = rate
        st.update, st.position, st.epochs = st.update + 1, position, epochs
        total, tokens = distributed.all_sum(
            [float(nll.detach()) * weight, batch.n_target_tokens * weight], self.world, self.device
        )
        row = {
            "update": st.update,
            "epoch": epochs,
            "train_nll_sentence": total / len(indices),
            "train_nll_token": total / tokens,
            "grad_norm": float(grad_norm),
            "sentences": len(indices),
            "tokens": int(tokens),
            "seconds": self.elapsed(),
        }
        st.log.append(row)
        self._dirty = True
        return row

    def _snapshot(self) -> dict[str, torch.Tensor]:
        return {k: v.detach().clone() for k, v in self.model.state_dict().items()}

    def evaluate(self, scheduled: bool = True) -> dict:
        """The dev NLL now, appended to the history; returns its row.

        A scheduled evaluation may become the best one and counts toward ``patience``; an
        end-of-run one (``scheduled=False``) does neither (module docstring).
        """
        st = self.state
        ev = evaluate_nll(
            self.model,
            self.dev,
            self.cfg.eval_batch_size or self.cfg.batch_size,
            self.device,
            self.cfg.bf16,
            self.world,
            self.cfg.fast,
        )
        row = {
            "update": st.update,
            "epoch": st.epochs,
            "dev_nll_sentence": ev["nll_sentence"],
            "dev_nll_token": ev["nll_token"],
            "scheduled": scheduled,
            "seconds": self.elapsed(),
            "lr": self.optimizer.param_groups[0]["lr"],  # the rate the updates so far ended at
        }
        st.evals.append(row)
        self._dirty = True
        if scheduled and (st.best is None or row["dev_nll_sentence"] < st.best["dev_nll_sentence"]):
            st.best, st.best_state, st.bad_evals = dict(row), self._snapshot(), 0
        elif scheduled:
            st.bad_evals += 1
            decay, every = self.cfg.lr_decay, self.cfg.lr_patience
            # the stalls of the current streak (its last bad_evals scheduled evaluations) that
            # came from lr_decay_start on: those before it count for nothing
            start = self.cfg.lr_decay_start or 0
            streak = [e for e in st.evals if e["scheduled"]][-st.bad_evals :]
            counted = sum(e["update"] >= start for e in streak)
            if decay is not None and counted and counted % every == 0:
                for group in self.optimizer.param_groups:  # saved with the optimiser's state
                    group["lr"] *= decay
        return row

    def _final_eval_is_best(self) -> bool:
        """Whether an end-of-run evaluation (the last row, unscheduled) beats the best scheduled
        one."""
        st = self.state
        last = st.evals[-1] if st.evals else None
        return (
            last is not None
            and not last["scheduled"]
            and (st.best is None or last["dev_nll_sentence"] < st.best["dev_nll_sentence"])
        )

    def best(self) -> tuple[dict | None, dict[str, torch.Tensor] | None]:
        """The best evaluation (scheduled, or the end-of-run one when lower) and its parameters."""
        if self._final_eval_is_best():
            return self.state.evals[-1], self._snapshot()
        return self.state.best, self.state.best_state

    def checkpoint(self) -> None:
        """Write ``checkpoint.pt`` and the logs (rank 0, holding every process's random-number
        state)."""
        st = self.state
        st.seconds = self.elapsed()
        rngs = distributed.gather_object(rng_state(), self.world)
        if self.world.is_main:
            save_atomic(
                {
                    "format": CHECKPOINT_FORMAT,
                    **code_deps.stamped(code_deps.checkpoint_code()),
                    "config": asdict(self.cfg),
                    "model": self.model.state_dict(),
                    "optimizer": self.optimizer.state_dict(),
                    "rng": rngs,
                    "world_size": self.world.size,
                    **st.as_dict(),
                },
                self.ckpt_path,
            )
            best = st.evals[-1] if self._final_eval_is_best() else st.best
            write_logs(
                self.work_dir,
                self.cfg,
                st.log,
                st.evals,
                {
                    "updates": st.update,
                    "epochs": st.epochs,
                    "seconds": st.seconds,
                    "best": best,
                    "stopped": st.stopped,
                    "world_size": self.world.size,
                },
            )
        distributed.barrier(self.world)
        self._dirty = False

    def _due(self, every: int | None) -> bool:
        return bool(every) and self.state.update % every == 0

    def _finish(self, reason: str) -> None:
        """Evaluate at the end if the last evaluation is older; record ``reason``; save if
        anything changed."""
        st = self.state
        if self.dev is not None and (not st.evals or st.evals[-1]["update"] != st.update):
            self.evaluate(scheduled=False)
        if st.stopped != reason:
            st.stopped, self._dirty = reason, True
        if self._dirty or not self.ckpt_path.exists():
            self.checkpoint()

    def run(self) -> TrainResult:
        """Update until :meth:`should_stop`, evaluating and checkpointing on schedule; leave the
        best-on-dev parameters in the model (the last ones without a dev set)."""
        cfg = self.cfg
        bar = _Progress(self.progress and self.world.is_main, cfg.max_updates, self.state.update)
        self.model.train()
        try:
            while (reason := self.should_stop()) is None:
                bar.update(self.step(), 10 if cfg.max_updates is not None else 1)
                if self.dev is not None and self._due(cfg.eval_every):
                    bar.evaluated(self.evaluate())
                if self._due(cfg.checkpoint_every):
                    self.checkpoint()
            self._finish(reason)
        finally:
            bar.close()
        return self._result(reason)

    def _result(self, reason: str) -> TrainResult:
        best, best_state = self.best()
        if best_state is None:  # no dev set: the last parameters
            best_state = self._snapshot()
        else:
            self.model.load_state_dict(best_state)
        st = self.state
        return TrainResult(
            log=st.log,
            evals=st.evals,
            updates=st.update,
            epochs=st.epochs,
            seconds=st.seconds,
            stopped=reason,
            best=best,
            best_state=best_state,
            resumed_from=self.resumed_from,
        )


def train(
    model: nn.Module,
    train: ParallelArrays,
    dev: ParallelArrays | None,
    cfg: TrainConfig | dict,
    work_dir: Path,
    progress: bool = True,
) -> TrainResult:
    """Train ``model`` on ``train`` (resuming from ``work_dir`` if it holds a checkpoint):
    :class:`Trainer`.

    ``model(src (B,S) int64, src_mask (B,S) bool, tgt_in (B,T) int64) -> logits (B,T,V)``.
    Returns the log and leaves the best-on-dev parameters in ``model`` (the last ones when
    there is no dev set); they are also ``result.best_state``.
    """
    return Trainer(model, train, dev, cfg, work_dir, progress).run()


# ---------------------------------------------------------------------------------------------
# the program: python -m rnnlib.train --config run.yml


def build_model_from_spec(spec: dict, src_vocab: int, tgt_vocab: int) -> nn.Module:
    """``{"preset": name, **overrides}`` (:mod:`rnnlib.presets`) or
    ``{"factory": "module:function", **kwargs}``."""
    spec = dict(spec)
    if "factory" in spec:
        import importlib

        module, _, name = spec.pop("factory").partition(":")
        return getattr(importlib.import_module(module), name)(
            src_vocab=src_vocab, tgt_vocab=tgt_vocab, **spec
        )
    if "preset" not in spec:
        raise ValueError(
            "model: give either 'preset' (a name from rnnlib.presets) "
            "or 'factory' (module:function)"
        )
    from . import presets

    name = spec.pop("preset")
    return presets.build_model(
        presets.preset(name, src_vocab=src_vocab, tgt_vocab=tgt_vocab, **spec)
    )


def load_pairs(folder: Path, split: str) -> ParallelArrays | None:
    """``<split>.src`` / ``<split>.tgt`` ragged arrays saved with :meth:`Ragged.save` in
    ``folder``."""
    from .ragged import Ragged

    if not (Path(folder) / f"{split}.src.ids.npy").exists():
        return None
    return ParallelArrays(Ragged.load(folder, f"{split}.src"), Ragged.load(folder, f"{split}.tgt"))


def _set_dotted(config: dict, assignment: str) -> None:
    key, sep, value = assignment.partition("=")
    if not sep:
        raise ValueError(f"--set {assignment!r}: expected KEY=VALUE, e.g. train.max_updates=100")
    from .config import parse_value

    node = config
    *parents, last = key.split(".")
    for p in parents:
        node = node.setdefault(p, {})
    node[last] = parse_value(value)


RUN_KEYS = {"model", "data", "work_dir", "train", "threads", "src_vocab", "tgt_vocab"}


def read_run_file(path: Path, assignments: list[str] = ()) -> dict:
    """The YAML run file at ``path`` with ``--set KEY=VALUE`` assignments applied (unknown keys
    are errors)."""
    import yaml

    config = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    for assignment in assignments:
        _set_dotted(config, assignment)
    for key in config:
        if key not in RUN_KEYS:
            raise ValueError(f"{path}: unknown key {key!r} (known: {', '.join(sorted(RUN_KEYS))})")
    return config


def run_train_config(config: dict) -> TrainConfig:
    """The run file's ``train`` section: TrainConfig fields, over the named ``preset`` if one
    is given."""
    fields_ = dict(config.get("train") or {})
    name = fields_.pop("preset", None)
    return train_preset(name, **fields_) if name else TrainConfig.from_dict(fields_)


def main(argv: list[str] | None = None) -> int:
    """Train from a YAML run file::

        data: path/to/folder      # train.src/train.tgt (and dev.src/dev.tgt) ragged arrays
        work_dir: runs/search30   # checkpoints and logs; rerunning resumes
        model: {preset: cpu-rnnsearch}   # or {factory: "package.module:function", ...}
        train: {preset: paper-b, max_updates: 2000, eval_every: 200}   # TrainConfig fields
        threads: 2                # torch.set_num_threads (optional)

    ``train.preset`` (optional) names a :data:`TRAIN_PRESETS` set-up that the other fields override.
    Vocabulary sizes come from ``src_vocab``/``tgt_vocab`` or the largest id in the data.
    Relative paths are relative to the run file. ``--set train.seed=3`` overrides a value.
    """
    ap = argparse.ArgumentParser(
        prog="python -m rnnlib.train", description="train a model (resumable; torchrun-aware)"
    )
    ap.add_argument("--config", required=True, type=Path, help="YAML run file")
    ap.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a value of the run file",
    )
    ap.add_argument("--no-progress", action="store_true")
    args = ap.parse_args(argv)
    if not args.config.is_file():
        ap.error(f"--config {args.config}: no such file")
    tune_allocator()  # a program entry point (also under torchrun): rnnlib.fast.allocator
    bound_primitive_cache()
    try:
        config, data_dir, cfg, model, train_pairs = _read_run(args)
        result = train(
            model,
            train_pairs,
            load_pairs(data_dir, "dev"),
            cfg,
            args.config.resolve().parent / config["work_dir"],
            progress=not args.no_progress,
        )
    except (RunFileError, CheckpointMismatch) as err:  # bad input, named in the message
        print(f"rnnlib train: error: {err}", file=sys.stderr)
        return 2
    world = distributed.setup()
    if world.is_main:
        print(json.dumps({"stopped": result.stopped, **result.table2_row()}))
    if world.active:
        torch.distributed.destroy_process_group()
    return 0


class RunFileError(ValueError):
    """A run file that cannot be trained from (a key unknown or missing, data not found)."""


def _read_run(args: argparse.Namespace):
    """The run file's config, data folder, training config, model and training pairs; a
    :class:`RunFileError` naming the file for what is wrong in it (and only for that: an error
    of the code below keeps its traceback)."""
    try:
        return _read_run_file(args)
    except (UnknownNameError, ValueError, KeyError, FileNotFoundError) as err:
        message = err.args[0] if isinstance(err, KeyError) and err.args else err
        raise RunFileError(str(message)) from None


def _read_run_file(args: argparse.Namespace):
    config = read_run_file(args.config, args.set)
    for key in ("data", "work_dir", "model"):
        if key not in config:
            raise ValueError(f"{args.config}: the run file has no {key!r} (see --help)")
    base = args.config.resolve().parent
    if config.get("threads"):
        torch.set_num_threads(int(config["threads"]))
    data_dir = base / config["data"]
    train_pairs = load_pairs(data_dir, "train")
    if train_pairs is None:
        raise FileNotFoundError(f"{args.config}: no train.src.ids.npy in {data_dir}")
    src_vocab = int(config.get("src_vocab") or int(train_pairs.src.ids.max()) + 1)
    tgt_vocab = int(config.get("tgt_vocab") or int(train_pairs.tgt.ids.max()) + 1)
    cfg = run_train_config(config)
    seed_everything(cfg.seed)
    model = build_model_from_spec(config["model"], src_vocab, tgt_vocab)
    return config, data_dir, cfg, model, train_pairs


if __name__ == "__main__":
    sys.exit(main())
