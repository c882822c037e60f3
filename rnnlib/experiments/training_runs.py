"""Training runs and test-set translations as artifacts of the book's cache.

:func:`train_run` trains a model with :func:`rnnlib.train.train` in chunks of ``eval_every``
updates. After each chunk the training function has measured the dev NLL; ``dev_bleu`` (a
callable) then scores the model held at that moment -- the parameters with the lowest dev NLL
so far, the ones the run would deliver if it stopped there -- so the run's logs give paper B's
Table 2 columns and a dev-BLEU curve. A run can continue another run (``parent``): it starts
from the parent's saved training state and goes on to a larger ``max_updates``, which is how
the book trains RNNsearch-50⋆ (Bahdanau et al. 2015, Table 1: "trained much longer") with
RNNsearch-50 as its earlier snapshot. Resuming is bitwise (see :mod:`rnnlib.train`), so the
continued run ends exactly where one uninterrupted run of the same length would (tested).

Files of a training artifact: ``model.pt`` (the parameters with the lowest dev NLL, or the
last ones without a dev set), ``train_log.csv`` (per update), ``eval_log.csv`` (per
evaluation), ``bleu_log.csv`` (per chunk: update, epoch, training seconds, dev BLEU), and
``state.pt`` (the whole training state, for a continuation; only with ``keep_state``), and with
``keep_state`` and a cool-down (``TrainConfig.lr_cooldown``) ``trunk.pt``: the state where the
cool-down began, for a continuation that branches there (``branch="trunk"``) and goes on at the
full rate to a later budget with a cool-down of its own (the "stable then decay" schedule's
branching: Hägele et al. 2024; its updates up to the parent's end are the parent without its
cool-down).

:func:`decode_run` translates sentences with :func:`rnnlib.translate.translate` and stores the
tokens and the detokenized text.

Equations
---------
- B Table 2: updates, epochs, hours, train NLL and dev NLL per model (rnnlib.train's logs)
- B Table 1 caption: RNNsearch-50⋆ "was trained much longer until the performance on the
  development set stopped improving" (a continuation with early stopping)

Deviations
----------
- The dev BLEU curve is not in the papers; it is measured on a fixed subset of dev.
- The papers select no snapshot explicitly; the delivered parameters are those with the lowest
  dev NLL (rnnlib.train).
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path
from typing import Callable, Sequence

import numpy as np
import pandas as pd
import torch

from ..checkpoint import load_checkpoint
from ..machine import cpu_name
from ..config import ModelConfig
from ..device import resolve_device
from ..models import build_model
from ..ragged import ParallelArrays
from ..specials import UNK
from ..train import CHECKPOINT, TrainConfig, cooldown_start, train
from ..translate import translate
from ..cache import Artifact, ArtifactCache
from ..fast import kernels
from . import run_pool

BLEU_COLUMNS = ["update", "epoch", "seconds", "dev_bleu", "bleu_seconds"]


def device_label(device: str) -> str:
    """What a run trained on, for Table 2's "GPU" column: ``"CPU, 2 threads (<model>)"``, with
    ``", one of 2 runs at a time"`` for a run trained side by side with others
    (:mod:`rnnlib.experiments.run_pool`), or the GPU name."""
    dev = resolve_device(device)
    if dev.type == "cuda":
        return torch.cuda.get_device_name(dev)
    n = torch.get_num_threads()
    side = f", one of {run_pool.AT_ONCE} runs at a time" if run_pool.AT_ONCE > 1 else ""
    return f"CPU, {n} thread{'s' if n != 1 else ''}{side} ({cpu_name()})"


def length_filter(pairs: ParallelArrays, max_len: int | None) -> np.ndarray:
    """Indices of the pairs whose source and target both have at most ``max_len`` tokens."""
    if max_len is None:
        return np.arange(len(pairs))
    return np.flatnonzero((pairs.src.lengths <= max_len) & (pairs.tgt.lengths <= max_len))


def train_run(
    cache: ArtifactCache,
    kind: str,
    config: dict,
    model_config: ModelConfig,
    train_config: TrainConfig,
    train_pairs: ParallelArrays,
    dev_pairs: ParallelArrays | None,
    dev_bleu: Callable[[torch.nn.Module], float] | None = None,
    parent: Artifact | None = None,
    keep_state: bool = False,
    data: str | None = None,
    progress: bool = False,
    branch: str = "end",
) -> Artifact:
    """The trained-model artifact ``kind`` for ``config`` (trained now if the cache lacks it).

    ``config`` must name everything that changes the result besides ``model_config`` and
    ``train_config`` (which are added to it), e.g. the data subset; ``data``: the data
    checksum. ``train_config.eval_every`` is the chunk length (required with ``dev_bleu``).
    ``parent``: a finished run made with ``keep_state=True`` to continue; its key joins the
    config. ``model_config`` and ``train_config`` must then equal the parent's except for the
    fields :data:`rnnlib.train.RESUMABLE_CHANGES` allows to change. ``branch``: where the
    continuation starts, ``"end"`` (the parent's last state) or ``"trunk"`` (where the parent's
    cool-down began; module docstring).
    """
    state_file = _check_run(train_config, dev_bleu, parent, branch)
    full = _run_config(config, model_config, train_config, parent, branch)
    trunk = cooldown_start(train_config) if keep_state else None

    def make(out: Path, work: Path) -> dict:
        start_update = 0
        if parent is not None:
            start_update = int(parent.extra["updates" if branch == "end" else "trunk_update"])
        bleu_rows = _first_bleu_rows(work, parent, state_file, start_update)
        torch.manual_seed(train_config.seed)
        model = build_model(model_config)
        result, bleu_seconds = _train_in_chunks(
            model,
            train_pairs,
            dev_pairs,
            train_config,
            work,
            start_update,
            trunk,
            dev_bleu,
            bleu_rows,
            progress,
        )
        _deliver(out, work, model, bleu_rows, keep_state)
        row = result.table2_row()
        return {
            "updates": result.updates,
            "epochs": result.epochs,
            "seconds": result.seconds,
            "stopped": result.stopped,
            "best": result.best,
            "train_pairs": len(train_pairs),
            "device": device_label(train_config.device),
            "threads": torch.get_num_threads(),
            "runs_at_once": run_pool.AT_ONCE,
            "train_nll": row["train_nll"],
            "dev_nll": row["dev_nll"],
            "bleu_seconds": bleu_seconds,
            "continued_from": parent.key if parent is not None else None,
            **({"branch": branch} if parent is not None and branch != "end" else {}),
            **({"trunk_update": trunk} if (work / "trunk.pt").exists() else {}),
        }

    return cache.build(kind, full, make, data=data)


def _check_run(
    train_config: TrainConfig,
    dev_bleu: Callable | None,
    parent: Artifact | None,
    branch: str,
) -> str:
    """The parent's state file a continuation starts from (``state.pt`` or ``trunk.pt``), after
    checking :func:`train_run`'s arguments."""
    if dev_bleu is not None and not train_config.eval_every:
        raise ValueError("train_run: dev_bleu needs train_config.eval_every (the chunk length)")
    if branch not in ("end", "trunk"):
        raise ValueError(f"train_run: branch must be 'end' or 'trunk', got {branch!r}")
    state_file = "state.pt" if branch == "end" else "trunk.pt"
    if parent is not None and state_file not in parent.meta.get("files", {}):
        raise ValueError(
            f"train_run: the parent run {parent.kind}/{parent.key} kept no {state_file} "
            "(train it with keep_state=True" + (", and a cool-down)" if branch == "trunk" else ")")
        )
    return state_file


def _run_config(
    config: dict,
    model_config: ModelConfig,
    train_config: TrainConfig,
    parent: Artifact | None,
    branch: str,
) -> dict:
    """The run's cache key config: ``config`` with the model and training configs, the parent's
    key, a branch other than the end, and the output layer's row rounding where it applies."""
    full = {
        **config,
        "model": model_config.to_dict(),
        "train": train_config.to_dict(),
        "parent": parent.key if parent is not None else None,
    }
    if parent is not None and branch != "end":  # (continuations from the end keep their keys)
        full["branch"] = branch
    on_cpu = resolve_device(train_config.device).type == "cpu"
    if train_config.bf16 and train_config.fast and on_cpu:
        # the fast path's deep output runs on rounded row counts under bf16 (repeated rows,
        # dropped before the loss): the logits are the same up to rounding, dropout's draws are not
        full["output_rows"] = kernels.OUTPUT_ROWS
    return full


def _first_bleu_rows(
    work: Path, parent: Artifact | None, state_file: str, start_update: int
) -> list[dict]:
    """The dev-BLEU rows a run starts with: an interrupted run's own (``train`` resumes it from
    its checkpoint), else a continuation's parent's up to ``start_update`` (its state file is
    copied in as the checkpoint to resume), else none."""
    bleu_rows: list[dict] = []
    if (work / CHECKPOINT).exists():  # an interrupted run: train() resumes it
        if (work / "bleu_log.csv").exists():
            bleu_rows = pd.read_csv(work / "bleu_log.csv").to_dict("records")
    elif parent is not None:
        shutil.copy2(parent.file(state_file), work / CHECKPOINT)
        bleu_rows = pd.read_csv(parent.file("bleu_log.csv")).to_dict("records")
        bleu_rows = [r for r in bleu_rows if r["update"] <= start_update]
    return bleu_rows


def _chunk_end(previous: int, chunk: int | None, limit: int | None, trunk: int | None):
    """Where the chunk after update ``previous`` ends: the next multiple of ``chunk`` (from an end
    off that grid, e.g. a trunk, back onto it), at most ``limit``, and at ``trunk`` if the
    cool-down begins inside it (to keep that state); ``None``: train to the end."""
    target = (previous // chunk + 1) * chunk if chunk else None
    if limit is not None and target is not None:
        target = min(target, limit)
    if trunk and previous < trunk and (target is None or target > trunk):
        target = trunk
    return target


def _train_in_chunks(
    model: torch.nn.Module,
    train_pairs: ParallelArrays,
    dev_pairs: ParallelArrays | None,
    train_config: TrainConfig,
    work: Path,
    start_update: int,
    trunk: int | None,
    dev_bleu: Callable[[torch.nn.Module], float] | None,
    bleu_rows: list[dict],
    progress: bool,
):
    """Train ``model`` chunk by chunk from ``start_update`` until its budget or an early stop,
    keeping the state where the cool-down begins (``trunk.pt``) and appending each chunk's dev
    BLEU to ``bleu_rows``. Returns the last chunk's :class:`rnnlib.train.TrainResult` and the
    seconds dev BLEU took."""
    chunk = train_config.eval_every or train_config.max_updates
    limit = train_config.max_updates
    bleu_seconds = 0.0
    target = start_update
    result = None
    while True:
        target = _chunk_end(target, chunk, limit, trunk)
        cfg = train_config.override(max_updates=target) if target is not None else train_config
        result = train(model, train_pairs, dev_pairs, cfg, work, progress=progress)
        if result.updates == trunk and result.stopped == "max_updates":
            shutil.copy2(work / CHECKPOINT, work / "trunk.pt.part")
            os.replace(work / "trunk.pt.part", work / "trunk.pt")
        if dev_bleu is not None and not any(r["update"] == result.updates for r in bleu_rows):
            bleu_seconds += _score_dev_bleu(model, dev_bleu, result, bleu_rows, work)
        if (
            result.stopped not in ("max_updates",)
            or target is None
            or (limit is not None and target >= limit)
        ):
            break
    return result, bleu_seconds


def _score_dev_bleu(model, dev_bleu: Callable, result, bleu_rows: list[dict], work: Path) -> float:
    """Score the model held now, append its row to ``bleu_rows`` and rewrite ``bleu_log.csv``
    (atomically); returns the seconds the scoring took."""
    t = time.perf_counter()
    score = float(dev_bleu(model))
    spent = time.perf_counter() - t
    bleu_rows.append(
        {
            "update": result.updates,
            "epoch": result.epochs,
            "seconds": result.seconds,
            "dev_bleu": score,
            "bleu_seconds": spent,
        }
    )
    pd.DataFrame(bleu_rows, columns=BLEU_COLUMNS).to_csv(work / "bleu_log.csv.part", index=False)
    os.replace(work / "bleu_log.csv.part", work / "bleu_log.csv")
    return spent


def _deliver(out: Path, work: Path, model, bleu_rows: list[dict], keep_state: bool) -> None:
    """Write the artifact's files: the delivered parameters, the logs, and with ``keep_state``
    the training state (and the trunk's, if kept)."""
    torch.save(model.state_dict(), out / "model.pt")
    for name in ("train_log.csv", "eval_log.csv"):
        shutil.copy2(work / name, out / name)
    pd.DataFrame(bleu_rows, columns=BLEU_COLUMNS).to_csv(out / "bleu_log.csv", index=False)
    if keep_state:
        shutil.copy2(work / CHECKPOINT, out / "state.pt")
        if (work / "trunk.pt").exists():
            shutil.copy2(work / "trunk.pt", out / "trunk.pt")


def load_model(run: Artifact, model_config: ModelConfig) -> torch.nn.Module:
    """The delivered parameters of a :func:`train_run` artifact, in eval mode."""
    model = build_model(model_config)
    model.load_state_dict(load_checkpoint(run.file("model.pt")))
    return model.eval()


def run_logs(run: Artifact) -> dict[str, pd.DataFrame]:
    """``{"train", "eval", "bleu"}``: the logs of a :func:`train_run` artifact."""
    return {name: pd.read_csv(run.file(f"{name}_log.csv")) for name in ("train", "eval", "bleu")}


def decode_run(
    cache: ArtifactCache,
    kind: str,
    config: dict,
    model: torch.nn.Module,
    sources: Sequence[np.ndarray],
    to_words: Callable[[list[int]], list[str]],
    detokenize: Callable[[list[str]], str],
    data: str | None = None,
    **search,
) -> Artifact:
    """Translations of ``sources`` as an artifact: ``tokens.txt`` (target tokens, space-joined)
    and ``text.txt`` (detokenized), one line per sentence in order; ``extra``: seconds,
    sentences and how many ``[UNK]`` tokens were generated.

    ``config`` must name the model (its artifact key) and the sentences (or ``data`` their
    checksum); ``search``: keyword arguments of :func:`rnnlib.translate.translate`, added to
    the config.
    """
    full = {**config, "search": search}

    def make(out: Path, work: Path) -> dict:
        t = time.perf_counter()
        hyps = translate(model, sources, **search)
        seconds = time.perf_counter() - t
        words = [to_words(h.tokens) for h in hyps]
        (out / "tokens.txt").write_text(
            "".join(" ".join(w) + "\n" for w in words), encoding="utf-8"
        )
        (out / "text.txt").write_text(
            "".join(detokenize(w).replace("\n", " ") + "\n" for w in words), encoding="utf-8"
        )
        return {
            "seconds": seconds,
            "sentences": len(sources),
            "threads": torch.get_num_threads(),
            "unk_generated": int(sum(t == UNK for h in hyps for t in h.tokens)),
        }

    return cache.build(kind, full, make, data=data)


def read_lines(path: Path) -> list[str]:
    """The lines of a text file written by :func:`decode_run` (without their newlines)."""
    return Path(path).read_text(encoding="utf-8").split("\n")[:-1]


__all__ = [
    "BLEU_COLUMNS",
    "cpu_name",
    "decode_run",
    "device_label",
    "length_filter",
    "load_model",
    "read_lines",
    "run_logs",
    "train_run",
]
