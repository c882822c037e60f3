"""Training: Adadelta, gradient-norm clipping, length-sorted pools, early stopping, resumable.

Bahdanau et al. 2015, Appendix B.2 and §4.2: Adadelta with ``rho = 0.95``, ``eps = 1e-6``;
the L2 norm of the gradient rescaled to at most 1; minibatches of 80 sentence pairs taken
from length-sorted pools of 20 minibatches (:mod:`rnnlib.batching`). The objective is the
negative log-likelihood ``-log p(y | x)`` of Eq. (2)/(4), summed over the words of a sentence
and averaged over the sentences of a minibatch. Cho et al. 2014 (paper A) uses the same
optimizer with minibatches of 64 phrase pairs (``batch_size=64``).

:func:`train` logs every update (update, epoch, train NLL per sentence and per token, wall
seconds) and every evaluation (dev NLL per sentence and per token): the columns of paper B's
Table 2. Rerunning it with the same ``work_dir`` resumes from the last checkpoint and ends
bitwise where an uninterrupted run ends (on the CPU, for a fixed thread count).

Under ``torchrun`` the same function trains with ``DistributedDataParallel``: every process
builds the same global minibatch, takes every ``world_size``-th pair of it, and scales its loss
by the *global* sentence (or token) count, so the averaged gradient equals the single-process
gradient of the global batch. Only rank 0 writes checkpoints and logs.

Launch as a program with ``python -m rnnlib.train --config run.yml`` (or under ``torchrun
--nproc-per-node N -m rnnlib.train --config run.yml``); see :func:`main`.

Equations
---------
- A Eq. (4) / B §2: maximise (1/N) sum_n log p(y_n | x_n): the loss is the NLL summed over a
  sentence's words and averaged over the minibatch's sentences (rnnlib.loss)
- B B.2 / A §4.1: Adadelta with rho = 0.95, eps = 1e-6
- B B.2: the L2 norm of the gradient rescaled to at most 1 when it is larger
- B B.2: minibatches of 80 from length-sorted pools of 1600 pairs (20 minibatches); A: 64 phrase pairs

Deviations
----------
- A mentions no gradient clipping; ``TrainConfig.clip_norm`` defaults to B's 1.0 for every model
  (``None`` turns it off).
- The paper's update rule is Adadelta with learning rate 1 (Zeiler 2012 has none); torch's
  Adadelta with ``lr=1.0`` is that rule.
- ``loss_norm="token"`` (average over target tokens) is offered besides the paper's
  per-sentence average; it changes the scale of the gradient and so the effect of clipping.
- Under ``torchrun`` only rank 0's random-number states are checkpointed (training itself
  draws no random numbers after the initial shuffle, which every rank draws from the seed).
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
from contextlib import nullcontext
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from . import distributed
from .fast.allocator import tune_allocator
from .batch import Batch, make_batch
from .batching import PoolBatcher, Position, eval_batches
from .checkpoint import load_checkpoint, save_atomic
from .device import resolve_device
from .loss import nll_sum
from .ragged import ParallelArrays

CHECKPOINT = "checkpoint.pt"
CHECKPOINT_FORMAT = 1


@dataclass
class TrainConfig:
    """Training hyper-parameters (paper B's values as defaults).

    ``max_updates``/``max_epochs``: stop after that many updates / passes over the data
    (``None``: no limit; at least one limit or ``patience`` is required). ``eval_every`` and
    ``checkpoint_every`` count updates (``None``: only at the end). ``patience``: stop after
    that many evaluations in a row without a lower dev NLL (``None``: never).
    """

    optimizer: str = "adadelta"   # {adadelta, adam, sgd}
    lr: float = 1.0
    rho: float = 0.95
    eps: float = 1e-6
    clip_norm: float | None = 1.0
    batch_size: int = 80
    pool: int = 20
    shuffle: bool = True
    loss_norm: str = "sentence"   # {sentence, token}
    max_updates: int | None = None
    max_epochs: float | None = None
    eval_every: int | None = None
    eval_batch_size: int | None = None
    checkpoint_every: int | None = 1000
    patience: int | None = None
    seed: int = 1
    bf16: bool = False
    device: str = "auto"

    def __post_init__(self) -> None:
        if self.optimizer not in ("adadelta", "adam", "sgd"):
            raise ValueError(f"TrainConfig.optimizer must be adadelta, adam or sgd, got {self.optimizer!r}")
        if self.loss_norm not in ("sentence", "token"):
            raise ValueError(f"TrainConfig.loss_norm must be 'sentence' or 'token', got {self.loss_norm!r}")
        for name in ("batch_size", "pool", "max_updates", "eval_every", "eval_batch_size",
                     "checkpoint_every", "patience"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, int) or value < 1):
                raise ValueError(f"TrainConfig.{name} must be a positive integer or None, got {value!r}")
        if self.max_updates is None and self.max_epochs is None and self.patience is None:
            raise ValueError("TrainConfig needs max_updates, max_epochs or patience, or it never stops")

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> "TrainConfig":
        """Build from a mapping; an unknown key is an error that names it."""
        known = {f.name for f in fields(cls)}
        for name in values:
            if name not in known:
                raise ValueError(f"unknown TrainConfig field {name!r} (known: {', '.join(sorted(known))})")
        return cls(**values)

    def override(self, **values: Any) -> "TrainConfig":
        """A copy with some fields changed (unknown names are an error)."""
        return TrainConfig.from_dict({**asdict(self), **values})


# Fields that may differ between a checkpoint and the run that resumes it.
RESUMABLE_CHANGES = {"max_updates", "max_epochs", "eval_every", "checkpoint_every", "patience",
                     "device", "eval_batch_size"}


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
        return {"updates": self.updates, "epochs": self.epochs, "hours": self.seconds / 3600,
                "train_nll": self.final_train_nll, "dev_nll": dev}


# ---------------------------------------------------------------------------------------------
# losses

def batch_nll(model: nn.Module, batch: Batch, bf16: bool = False) -> torch.Tensor:
    """Summed ``-log p(y_t | y_<t, x)`` over the real target tokens of ``batch`` (scalar, fp32).

    Only the real (unpadded) positions reach the softmax: a model with ``supports_out_mask``
    computes its output layer for them alone; any other model's ``(B, T, V)`` logits are
    gathered at them first.
    """
    dev_type = batch.src.device.type
    ctx = torch.autocast(device_type=dev_type, dtype=torch.bfloat16) if bf16 else nullcontext()
    mask = batch.tgt_mask.bool()
    with ctx:
        if getattr(getattr(model, "module", model), "supports_out_mask", False):
            # positional: (src, src_mask, tgt_in, return_attention, out_mask) -> (N, V)
            logits = model(batch.src, batch.src_mask, batch.tgt_in, False, mask)
        else:
            logits = model(batch.src, batch.src_mask, batch.tgt_in)[mask]  # (B, T, V) -> (N, V)
    return nll_sum(logits.float(), batch.tgt_out[mask])


@torch.no_grad()
def evaluate_nll(model: nn.Module, pairs: ParallelArrays, batch_size: int = 80,
                 device: torch.device | str | None = None, bf16: bool = False,
                 world: distributed.World | None = None) -> dict:
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
        total += float(batch_nll(model, batch, bf16))
        tokens += batch.n_target_tokens
        sentences += batch.size
    model.train(was_training)
    total, tokens, sentences = distributed.all_sum([total, tokens, sentences], world, device)
    return {"nll_sentence": total / max(sentences, 1), "nll_token": total / max(tokens, 1),
            "sentences": int(sentences), "tokens": int(tokens)}


def make_optimizer(cfg: TrainConfig, params) -> torch.optim.Optimizer:
    if cfg.optimizer == "adadelta":
        return torch.optim.Adadelta(params, lr=cfg.lr, rho=cfg.rho, eps=cfg.eps)
    if cfg.optimizer == "adam":
        return torch.optim.Adam(params, lr=cfg.lr, eps=cfg.eps)
    return torch.optim.SGD(params, lr=cfg.lr)


# ---------------------------------------------------------------------------------------------
# random-number states, in forms that torch.load(weights_only=True) accepts

def rng_state() -> dict:
    name, keys, pos, has_gauss, cached = np.random.get_state()
    version, internal, gauss_next = random.getstate()
    out = {"torch": torch.get_rng_state(),
           "numpy": {"name": name, "keys": torch.from_numpy(np.asarray(keys, dtype=np.int64)),
                     "pos": int(pos), "has_gauss": int(has_gauss), "cached": float(cached)},
           "python": [version, list(internal), gauss_next]}
    if torch.cuda.is_available():
        out["cuda"] = torch.cuda.get_rng_state_all()
    return out


def set_rng_state(state: dict) -> None:
    torch.set_rng_state(state["torch"])
    n = state["numpy"]
    np.random.set_state((n["name"], n["keys"].numpy().astype(np.uint32), n["pos"], n["has_gauss"], n["cached"]))
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

LOG_COLUMNS = ["update", "epoch", "train_nll_sentence", "train_nll_token", "grad_norm", "sentences",
               "tokens", "seconds"]
EVAL_COLUMNS = ["update", "epoch", "dev_nll_sentence", "dev_nll_token", "seconds"]


def _write_text_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + f".{os.getpid()}.part")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def write_logs(work_dir: Path, cfg: TrainConfig, log: list[dict], evals: list[dict], extra: dict) -> None:
    """``train_log.csv`` (per update), ``eval_log.csv`` (per evaluation), ``train_log.json`` (all)."""
    for name, rows, columns in (("train_log.csv", log, LOG_COLUMNS), ("eval_log.csv", evals, EVAL_COLUMNS)):
        tmp = work_dir / f"{name}.{os.getpid()}.part"
        with open(tmp, "w", newline="", encoding="utf-8") as f:
            w = csv.DictWriter(f, fieldnames=columns, extrasaction="ignore")
            w.writeheader()
            w.writerows(rows)
        os.replace(tmp, work_dir / name)
    _write_text_atomic(work_dir / "train_log.json", json.dumps(
        {"config": asdict(cfg), **extra, "log": log, "evals": evals}, indent=1))


# ---------------------------------------------------------------------------------------------
# the loop

def _check_resumable(saved: dict, cfg: TrainConfig, path: Path) -> None:
    now = asdict(cfg)
    for name, value in saved.items():
        if name in RESUMABLE_CHANGES:
            continue
        if now.get(name) != value:
            raise ValueError(f"{path}: the checkpoint was written with TrainConfig.{name}={value!r} but this "
                             f"run has {now.get(name)!r}; use another work_dir or the same value")


def train(model: nn.Module, train: ParallelArrays, dev: ParallelArrays | None, cfg: TrainConfig | dict,
          work_dir: Path, progress: bool = True) -> TrainResult:
    """Train ``model`` on ``train`` (resuming from ``work_dir`` if it holds a checkpoint).

    ``model(src (B,S) int64, src_mask (B,S) bool, tgt_in (B,T) int64) -> logits (B,T,V)``.
    Returns the log and leaves the best-on-dev parameters in ``model`` (the last ones when
    there is no dev set); they are also ``result.best_state``.
    """
    train_data = train
    cfg = cfg if isinstance(cfg, TrainConfig) else TrainConfig.from_dict(cfg)
    tune_allocator()  # large per-step tensors reuse freed memory (rnnlib.fast.allocator)
    world = distributed.setup()
    device = resolve_device(cfg.device, world.local_rank if world.active else None)
    work_dir = Path(work_dir)
    if world.is_main:
        work_dir.mkdir(parents=True, exist_ok=True)
    distributed.barrier(world)

    model.to(device)
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = make_optimizer(cfg, params)
    batcher = PoolBatcher(train_data.src.lengths, train_data.tgt.lengths, cfg.batch_size, cfg.pool,
                          cfg.seed, cfg.shuffle)
    tgt_lengths = train_data.tgt.lengths

    # -- state (fresh or from the checkpoint) ------------------------------------------------
    s: dict[str, Any] = {"update": 0, "epochs": 0.0, "seconds": 0.0, "position": Position(),
                         "log": [], "evals": [], "best": None, "best_state": None, "bad_evals": 0,
                         "stopped": None}
    resumed_from = None
    ckpt_path = work_dir / CHECKPOINT
    if ckpt_path.exists():
        ckpt = load_checkpoint(ckpt_path)
        if ckpt.get("format") != CHECKPOINT_FORMAT:
            raise ValueError(f"{ckpt_path}: checkpoint format {ckpt.get('format')!r}, expected {CHECKPOINT_FORMAT}")
        _check_resumable(ckpt["config"], cfg, ckpt_path)
        model.load_state_dict(ckpt["model"])
        optimizer.load_state_dict(ckpt["optimizer"])
        set_rng_state(ckpt["rng"])
        for key in ("update", "epochs", "seconds", "log", "evals", "best", "best_state", "bad_evals", "stopped"):
            s[key] = ckpt[key]
        s["position"] = Position.from_list(ckpt["position"])
        if s["stopped"] != "early_stopping":
            s["stopped"] = None  # limits may have been raised since
        resumed_from = s["update"]
    else:
        seed_everything(cfg.seed)

    net: nn.Module = model
    if world.active:
        net = nn.parallel.DistributedDataParallel(model, device_ids=[device.index] if device.type == "cuda" else None)

    eval_bs = cfg.eval_batch_size or cfg.batch_size
    start_seconds = s["seconds"]
    t0 = time.perf_counter()

    def elapsed() -> float:
        return start_seconds + (time.perf_counter() - t0)

    def snapshot_state() -> dict:
        return {k: v.detach().clone() for k, v in model.state_dict().items()}

    def run_eval() -> None:
        ev = evaluate_nll(model, dev, eval_bs, device, cfg.bf16, world)
        row = {"update": s["update"], "epoch": s["epochs"], "dev_nll_sentence": ev["nll_sentence"],
               "dev_nll_token": ev["nll_token"], "seconds": elapsed()}
        s["evals"].append(row)
        if s["best"] is None or row["dev_nll_sentence"] < s["best"]["dev_nll_sentence"]:
            s["best"] = dict(row)
            s["best_state"] = snapshot_state()
            s["bad_evals"] = 0
        else:
            s["bad_evals"] += 1
            if cfg.patience is not None and s["bad_evals"] >= cfg.patience:
                s["stopped"] = "early_stopping"

    def save() -> None:
        s["seconds"] = elapsed()
        if world.is_main:
            save_atomic({"format": CHECKPOINT_FORMAT, "config": asdict(cfg), "model": model.state_dict(),
                         "optimizer": optimizer.state_dict(), "rng": rng_state(),
                         "position": s["position"].as_list(), "update": s["update"], "epochs": s["epochs"],
                         "seconds": s["seconds"], "log": s["log"], "evals": s["evals"], "best": s["best"],
                         "best_state": s["best_state"], "bad_evals": s["bad_evals"], "stopped": s["stopped"],
                         "world_size": world.size}, ckpt_path)
            write_logs(work_dir, cfg, s["log"], s["evals"], {
                "updates": s["update"], "epochs": s["epochs"], "seconds": s["seconds"], "best": s["best"],
                "stopped": s["stopped"], "world_size": world.size})
        distributed.barrier(world)

    def limit_reached() -> str | None:
        if s["stopped"]:
            return s["stopped"]
        if cfg.max_updates is not None and s["update"] >= cfg.max_updates:
            return "max_updates"
        if cfg.max_epochs is not None and s["epochs"] >= cfg.max_epochs - 1e-12:
            return "max_epochs"
        return None

    bar = None
    if progress and world.is_main:
        from tqdm.auto import tqdm
        bar = tqdm(total=cfg.max_updates, initial=s["update"], desc="train", unit="upd",
                   dynamic_ncols=True, file=sys.stderr)

    stream = batcher.stream(s["position"])
    dirty = False
    model.train()
    while (reason := limit_reached()) is None:
        indices, nxt, epochs = next(stream)
        local = distributed.shard(indices, world)
        weight = 1.0
        if len(local) == 0:  # a global batch smaller than the world: take a pair with weight 0
            local, weight = indices[:1], 0.0
        batch = make_batch(train_data, local).to(device)
        denom = len(indices) if cfg.loss_norm == "sentence" else int((tgt_lengths[indices] + 1).sum())

        optimizer.zero_grad(set_to_none=True)
        nll = batch_nll(net, batch, cfg.bf16)
        (nll * (weight * world.size / denom)).backward()
        grad_norm = torch.nn.utils.clip_grad_norm_(params, cfg.clip_norm if cfg.clip_norm else math.inf)
        optimizer.step()

        s["update"] += 1
        s["position"], s["epochs"] = nxt, epochs
        total, tokens = distributed.all_sum([float(nll.detach()) * weight, batch.n_target_tokens * weight], world, device)
        s["log"].append({"update": s["update"], "epoch": epochs, "train_nll_sentence": total / len(indices),
                         "train_nll_token": total / tokens, "grad_norm": float(grad_norm),
                         "sentences": len(indices), "tokens": int(tokens), "seconds": elapsed()})
        dirty = True
        if bar is not None:
            bar.update(1)
            if s["update"] % 10 == 1 or cfg.max_updates is None:
                bar.set_postfix(nll=f"{total / len(indices):.2f}", ep=f"{epochs:.2f}")
        if dev is not None and cfg.eval_every and s["update"] % cfg.eval_every == 0:
            run_eval()
            if bar is not None:
                bar.set_postfix(dev=f"{s['evals'][-1]['dev_nll_sentence']:.2f}")
        if cfg.checkpoint_every and s["update"] % cfg.checkpoint_every == 0:
            save()
            dirty = False

    if dev is not None and (not s["evals"] or s["evals"][-1]["update"] != s["update"]):
        run_eval()
        dirty = True
    if s["stopped"] != reason:
        s["stopped"], dirty = reason, True
    if dirty or not ckpt_path.exists():
        save()
    if bar is not None:
        bar.close()

    if s["best_state"] is None:  # no dev set: the last parameters
        s["best_state"] = snapshot_state()
    else:
        model.load_state_dict(s["best_state"])
    return TrainResult(log=s["log"], evals=s["evals"], updates=s["update"], epochs=s["epochs"],
                       seconds=elapsed() if dirty else s["seconds"], stopped=reason, best=s["best"],
                       best_state=s["best_state"], resumed_from=resumed_from)


# ---------------------------------------------------------------------------------------------
# the program: python -m rnnlib.train --config run.yml

def build_model_from_spec(spec: dict, src_vocab: int, tgt_vocab: int) -> nn.Module:
    """``{"preset": name, **overrides}`` (:mod:`rnnlib.presets`) or ``{"factory": "module:function", **kwargs}``."""
    spec = dict(spec)
    if "factory" in spec:
        import importlib
        module, _, name = spec.pop("factory").partition(":")
        return getattr(importlib.import_module(module), name)(src_vocab=src_vocab, tgt_vocab=tgt_vocab, **spec)
    if "preset" not in spec:
        raise ValueError("model: give either 'preset' (a name from rnnlib.presets) or 'factory' (module:function)")
    from . import presets
    name = spec.pop("preset")
    return presets.build_model(presets.preset(name, src_vocab=src_vocab, tgt_vocab=tgt_vocab, **spec))


def load_pairs(folder: Path, split: str) -> ParallelArrays | None:
    """``<split>.src`` / ``<split>.tgt`` ragged arrays saved with :meth:`Ragged.save` in ``folder``."""
    from .ragged import Ragged
    if not (Path(folder) / f"{split}.src.ids.npy").exists():
        return None
    return ParallelArrays(Ragged.load(folder, f"{split}.src"), Ragged.load(folder, f"{split}.tgt"))


def _set_dotted(config: dict, assignment: str) -> None:
    key, sep, value = assignment.partition("=")
    if not sep:
        raise ValueError(f"--set {assignment!r}: expected KEY=VALUE, e.g. train.max_updates=100")
    import yaml
    node = config
    *parents, last = key.split(".")
    for p in parents:
        node = node.setdefault(p, {})
    node[last] = yaml.safe_load(value)


RUN_KEYS = {"model", "data", "work_dir", "train", "threads", "src_vocab", "tgt_vocab"}


def main(argv: list[str] | None = None) -> int:
    """Train from a YAML run file::

        data: path/to/folder      # train.src/train.tgt (and dev.src/dev.tgt) ragged arrays
        work_dir: runs/search30   # checkpoints and logs; rerunning resumes
        model: {preset: cpu-rnnsearch}   # or {factory: "package.module:function", ...}
        train: {max_updates: 2000, eval_every: 200}   # TrainConfig fields
        threads: 2                # torch.set_num_threads (optional)

    Vocabulary sizes come from ``src_vocab``/``tgt_vocab`` or the largest id in the data.
    Relative paths are relative to the run file. ``--set train.seed=3`` overrides a value.
    """
    ap = argparse.ArgumentParser(prog="python -m rnnlib.train", description="train a model (resumable; torchrun-aware)")
    ap.add_argument("--config", required=True, type=Path, help="YAML run file")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override a value of the run file")
    ap.add_argument("--no-progress", action="store_true")
    args = ap.parse_args(argv)
    if not args.config.is_file():
        ap.error(f"--config {args.config}: no such file")
    import yaml
    config = yaml.safe_load(args.config.read_text(encoding="utf-8")) or {}
    for assignment in args.set:
        _set_dotted(config, assignment)
    for key in config:
        if key not in RUN_KEYS:
            raise ValueError(f"{args.config}: unknown key {key!r} (known: {', '.join(sorted(RUN_KEYS))})")
    base = args.config.resolve().parent
    if config.get("threads"):
        torch.set_num_threads(int(config["threads"]))
    data_dir = base / config["data"]
    train_pairs = load_pairs(data_dir, "train")
    if train_pairs is None:
        raise FileNotFoundError(f"{args.config}: no train.src.ids.npy in {data_dir}")
    dev_pairs = load_pairs(data_dir, "dev")
    src_vocab = int(config.get("src_vocab") or int(train_pairs.src.ids.max()) + 1)
    tgt_vocab = int(config.get("tgt_vocab") or int(train_pairs.tgt.ids.max()) + 1)
    cfg = TrainConfig.from_dict(config.get("train") or {})
    seed_everything(cfg.seed)
    model = build_model_from_spec(config["model"], src_vocab, tgt_vocab)
    result = train(model, train_pairs, dev_pairs, cfg, base / config["work_dir"], progress=not args.no_progress)
    world = distributed.setup()
    if world.is_main:
        print(json.dumps({"stopped": result.stopped, **result.table2_row()}))
    if world.active:
        torch.distributed.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
