"""The book's first check (chapter ``copy_task``): RNNsearch learns to copy, and its attention
becomes a diagonal.

Not an experiment of either paper: RNNsearch (Bahdanau et al. 2015, §3) is trained to copy (or
reverse) random sequences of symbols. To emit the *i*-th symbol the decoder has nothing better
to do than to look at the *i*-th source position, so if the soft alignment of B Eq. (6) works,
its weights alpha_ij become a diagonal (an anti-diagonal when reversing), as in B Fig. 3.

The chapter reads its parameters as :class:`Params`; :meth:`CopyTask.from_params` draws the
sequences and builds the configs from them. Two artifacts: the trained model
(``copy_task/model``: ``model.pt``, ``train_log.csv``, keyed by :func:`model_key`) and its beam
search on the test sequences (``copy_task/decoded``: ``results.csv``, ``attention.json``), with
the kinds and configs the chapter has always used. The functions return figures, numbers
(``glue name -> (value, digits)``) and the verdict word; the chapter's Markdown says what they
mean.

Deviations: none (the task is the book's own; the model is :class:`rnnlib.models.RNNSearch` at a
small size, see :mod:`rnnlib.models`).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import torch

from ..batch import BATCH_FORMAT, source_batch
from ..book.plotting import attention_plot
from ..cache import Artifact, ArtifactCache
from ..config import ModelConfig
from ..device import resolve_device
from ..models import build_model
from ..presets import preset
from ..ragged import ParallelArrays, Ragged
from ..search import beam_search
from ..specials import SPECIALS
from ..train import TrainConfig, train
from ..verdicts import FAILS, HOLDS
from .training_runs import load_model

#: symbol ``k`` of the alphabet has token id ``FIRST + k`` (the special tokens come first)
FIRST = len(SPECIALS)
#: test sequences searched together
DECODE_BATCH = 64
#: test sequences whose attention ``attention.json`` keeps
KEPT_ATTENTION = 8
#: the chapter's criterion: the largest weight of at least this share (%) of the rows is on the
#: expected source symbol
DIAGONAL_ARGMAX = 90


def sequence_pairs(
    n: int, rng: np.random.Generator, symbols: int, min_len: int, max_len: int, task: str
) -> ParallelArrays:
    """``n`` random sequences of ``min_len`` to ``max_len`` symbols (lengths then symbols drawn
    from ``rng``), as token ids ``FIRST .. FIRST + symbols - 1``; the target is the source
    (``task="copy"``) or the source reversed (``"reverse"``)."""
    lengths = rng.integers(min_len, max_len + 1, size=n)
    src = [rng.integers(FIRST, FIRST + symbols, size=length) for length in lengths]
    tgt = [s if task == "copy" else s[::-1] for s in src]
    return ParallelArrays(Ragged.from_lists(src), Ragged.from_lists(tgt))


@dataclass(frozen=True)
class Params:
    """The chapter's parameters, as its parameters cell declares them (the chapter reads them
    with ``P = ch.typed(copy_task.Params)``)."""

    profile: str = "cpu"
    seed: int = 1
    task: str = "copy"
    symbols: int = 10
    min_len: int = 3
    max_len: int = 10
    n_train: int = 4000
    n_test: int = 200
    max_updates: int = 400
    batch_size: int = 64
    optimizer: str = "adam"
    lr: float | None = None
    hidden: int = 64
    emb: int = 32
    beam_size: int = 5
    device: str = "auto"
    length_min: int = 5
    length_max: int = 50
    length_train: int = 8000
    length_test: int = 400
    length_updates: int = 1500
    length_cooldown: int | None = None


@dataclass
class CopyTask:
    """The chapter's setting: its parameters ``params``, the training and test sequences (drawn in
    that order from one generator seeded with ``seed``), ``data_config`` (how they were drawn,
    part of the model's cache key), the model and training configs and the device."""

    params: Params
    train_pairs: ParallelArrays
    test_pairs: ParallelArrays
    data_config: dict[str, Any]
    model_config: ModelConfig
    train_config: TrainConfig
    device: torch.device

    @classmethod
    def from_params(cls, P: Params) -> CopyTask:
        """The setting for the chapter's parameters ``P``; sets torch's threads (small models
        run fastest on one: two cost more in synchronisation than they gain).

        The model is the ``smoke-rnnsearch`` preset at the sizes ``hidden`` and ``emb``, with
        vocabularies of ``FIRST + symbols`` ids, ``maxout`` half of ``hidden`` and ``align`` =
        ``hidden``; training takes ``optimizer``, ``lr`` (default 0.01 for Adam, 1.0 for
        Adadelta), ``batch_size``, ``max_updates`` and ``seed``, a checkpoint every quarter of
        the updates (at least 50) and the concrete device.
        """
        if P.min_len > P.max_len:
            raise ValueError(
                f"parameter 'min_len' = {P.min_len} is larger than 'max_len' = {P.max_len}"
            )
        torch.set_num_threads(1 if P.hidden < 256 else min(2, torch.get_num_threads()))
        rng = np.random.default_rng(P.seed)
        draw = (P.symbols, P.min_len, P.max_len, P.task)
        train_pairs = sequence_pairs(P.n_train, rng, *draw)
        test_pairs = sequence_pairs(P.n_test, rng, *draw)
        device = resolve_device(P.device)
        return cls(
            P,
            train_pairs,
            test_pairs,
            data_config(P),
            model_config(P),
            train_config(P, device),
            device,
        )


def data_config(P: Params) -> dict[str, Any]:
    """How the sequences are drawn (part of the model's cache key)."""
    return {
        "task": P.task,
        "symbols": P.symbols,
        "min_len": P.min_len,
        "max_len": P.max_len,
        "n_train": P.n_train,
        "n_test": P.n_test,
        "seed": P.seed,
    }


def model_config(P: Params) -> ModelConfig:
    """RNNsearch at the chapter's sizes (the ``smoke-rnnsearch`` preset otherwise)."""
    vocab = FIRST + P.symbols
    return preset(
        "smoke-rnnsearch",
        emb=P.emb,
        hidden=P.hidden,
        src_vocab=vocab,
        tgt_vocab=vocab,
        maxout=max(1, P.hidden // 2),
        align=P.hidden,
    )


def train_config(P: Params, device: torch.device) -> TrainConfig:
    """The training of the chapter's model on ``device``."""
    return TrainConfig(
        optimizer=P.optimizer,
        lr=P.lr or (0.01 if P.optimizer == "adam" else 1.0),
        batch_size=P.batch_size,
        max_updates=P.max_updates,
        seed=P.seed,
        checkpoint_every=max(50, P.max_updates // 4),
        device=device.type,
    )


# -- training ---------------------------------------------------------------------------------
def model_key(task: CopyTask) -> dict[str, Any]:
    """The config that keys :func:`trained_model`: the data, model and training configs and the
    batch format."""
    return {
        "data": task.data_config,
        "model": task.model_config.to_dict(),
        "train": task.train_config.to_dict(),
        "batch_format": BATCH_FORMAT,
    }


def trained_model(cache: ArtifactCache, task: CopyTask) -> Artifact:
    """RNNsearch trained on ``task.train_pairs`` (``copy_task/model``, keyed by
    :func:`model_key`): ``model.pt`` (its parameters), ``train_log.csv`` (one row per logged
    update: ``update``, ``train_nll_token``, ...); its extra holds ``updates``, ``seconds`` and
    ``stopped``."""

    def make(out: Path, work: Path) -> dict:
        torch.manual_seed(task.params.seed)
        model = build_model(task.model_config)
        result = train(model, task.train_pairs, None, task.train_config, work, progress=True)
        torch.save(model.state_dict(), out / "model.pt")
        pd.DataFrame(result.log).to_csv(out / "train_log.csv", index=False)
        return {"updates": result.updates, "seconds": result.seconds, "stopped": result.stopped}

    return cache.build("copy_task/model", model_key(task), make)


def training_log(model_art: Artifact) -> pd.DataFrame:
    """The training log of :func:`trained_model`: one row per logged update."""
    return pd.read_csv(model_art.file("train_log.csv"))


def learning_curve(log: pd.DataFrame):
    """The training NLL per target symbol against the update, as a running mean over a
    fiftieth of the logged updates (seaborn, log scale). Returns the figure."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    smooth = max(1, len(log) // 50)
    curve = log.assign(nll=log["train_nll_token"].rolling(smooth).mean()).dropna(subset=["nll"])
    fig, ax = plt.subplots(figsize=(5, 3))
    sns.lineplot(curve, x="update", y="nll", color="black", label="training NLL per symbol", ax=ax)
    ax.set(xlabel="update", ylabel="NLL (nats per symbol)", yscale="log")
    ax.legend()
    return fig


def training_numbers(
    model_art: Artifact, log: pd.DataFrame, symbols: int
) -> dict[str, tuple[Any, int | None]]:
    """``glue name -> (value, digits)``: the updates and seconds of training, the training NLL
    per symbol over the last 5% of the logged updates, and what a uniform model pays
    (``log symbols`` nats per symbol)."""
    final = log["train_nll_token"].tail(max(1, len(log) // 20)).mean()
    return {
        "copy-updates": (model_art.extra["updates"], None),
        "copy-train-seconds": (model_art.extra["seconds"], 1),
        "copy-final-nll": (final, 3),
        "copy-symbols": (symbols, None),
        "copy-uniform-nll": (math.log(symbols), 2),
    }


# -- decoding and the alignment ---------------------------------------------------------------
def expected_positions(length: int, task: str) -> np.ndarray:
    """``(length,)``: the source position the *i*-th output symbol copies (``i``, or
    ``length - 1 - i`` when reversing)."""
    return np.arange(length) if task == "copy" else np.arange(length)[::-1]


def alignment_measures(
    attention: np.ndarray, src: np.ndarray, tokens: list[int], ref: np.ndarray, task: str
) -> dict[str, Any]:
    """How diagonal one output's alignment is. ``attention (len(tokens) + 1, len(src) + 1)``:
    B Eq. (6)'s weights alpha_ij of each output step (last row: the step that ended the output)
    over the source (last column: its ``EOS``), as :attr:`rnnlib.search.Hypothesis.attention`.

    Over the first ``min(len(tokens), len(src))`` rows: ``mass_on_expected``, the mean weight on
    the expected source symbol; ``argmax_on_expected``, the share of rows whose largest weight
    is on it (both 0 when the output is empty); ``uniform``, the weight a uniform alignment puts
    on one position, ``1 / (len(src) + 1)``; ``correct``: the output is the reference.
    """
    expected = expected_positions(len(src), task)
    used = np.arange(min(len(tokens), len(src)))
    if len(used):
        on_target = attention[used, expected[used]]
        argmax_ok = attention[used, :].argmax(1) == expected[used]
    else:
        on_target, argmax_ok = np.array([0.0]), np.array([False])
    return {
        "length": len(src),
        "correct": list(tokens) == ref.tolist(),
        "mass_on_expected": float(on_target.mean()),
        "argmax_on_expected": float(np.mean(argmax_ok)),
        "uniform": 1 / (len(src) + 1),
    }


def decoded_test(cache: ArtifactCache, task: CopyTask, model_art: Artifact) -> Artifact:
    """The trained model's beam search (width ``beam_size``) on every test sequence
    (``copy_task/decoded``, keyed by the model's key and the beam width): ``results.csv``, one
    row of :func:`alignment_measures` per test sequence, and ``attention.json``, the source,
    output and weights of the first :data:`KEPT_ATTENTION` sequences.

    The sequences are searched in their order, :data:`DECODE_BATCH` at a time, as the artifact
    was first made: :func:`rnnlib.translate.translate` sorts them by length first, and the other
    padding moves the weights in the 7th digit, so its output would not be this key's."""
    pairs, beam_size = task.test_pairs, task.params.beam_size

    def make(out: Path, work: Path) -> None:
        model = load_model(model_art, task.model_config).to(task.device)
        rows, attention = [], []
        with torch.no_grad():
            for start in range(0, len(pairs), DECODE_BATCH):
                index = range(start, min(start + DECODE_BATCH, len(pairs)))
                batch = source_batch([pairs.src[i] for i in index]).to(task.device)
                hyps = beam_search(model, batch.src, batch.src_mask, beam_size=beam_size)
                for i, nbest in zip(index, hyps):
                    best, src = nbest[0], pairs.src[i]
                    att = np.asarray(best.attention)
                    rows.append(
                        alignment_measures(att, src, best.tokens, pairs.tgt[i], task.params.task)
                    )
                    attention.append(
                        {
                            "source": src.tolist(),
                            "output": list(best.tokens),
                            "weights": att.tolist(),
                        }
                    )
        pd.DataFrame(rows).to_csv(out / "results.csv", index=False)
        (out / "attention.json").write_text(json.dumps(attention[:KEPT_ATTENTION]))

    return cache.build("copy_task/decoded", {"model": model_art.key, "beam_size": beam_size}, make)


def decoded_results(decoded: Artifact) -> pd.DataFrame:
    """One row per test sequence (:func:`alignment_measures`), from :func:`decoded_test`."""
    return pd.read_csv(decoded.file("results.csv"))


def symbol_names(ids: list[int]) -> list[str]:
    """Token ids -> ``s0``, ``s1``, ... (the special tokens by their names)."""
    return [f"s{i - FIRST}" if i >= FIRST else SPECIALS[i] for i in ids]


def alignment_figure(decoded: Artifact):
    """B Fig. 3 for the copy task: the alignment weights of the longest of the first four test
    sequences, source on x, output on y, greyscale from 0 (black) to 1 (white)
    (:func:`rnnlib.book.plotting.attention_plot`). Returns the figure."""
    import matplotlib.pyplot as plt

    examples = json.loads(decoded.file("attention.json").read_text())
    shown = max(examples[:4], key=lambda e: len(e["source"]))
    fig, ax = plt.subplots(figsize=(4, 4))
    source, output = symbol_names(shown["source"]), symbol_names(shown["output"])
    attention_plot(ax, np.array(shown["weights"]), source, output)
    ax.set_xlabel("source")
    ax.set_ylabel("generated")
    return fig


def argmax_share(results: pd.DataFrame) -> float:
    """The mean share (%) of the rows whose largest weight is on the expected source symbol,
    rounded to one digit as the chapter glues it."""
    return round(float(100 * results["argmax_on_expected"].mean()), 1)


def alignment_numbers(results: pd.DataFrame) -> dict[str, tuple[Any, int | None]]:
    """``glue name -> (value, digits)``: exact outputs (%), the mean weight on the expected
    symbol, the rows whose largest weight is on it (%), the uniform alignment's weight and the
    chapter's criterion (:data:`DIAGONAL_ARGMAX`, %)."""
    return {
        "copy-accuracy": (100 * results["correct"].mean(), 1),
        "copy-mass": (results["mass_on_expected"].mean(), 3),
        "copy-argmax": (argmax_share(results), 1),
        "copy-uniform": (results["uniform"].mean(), 3),
        "copy-criterion": (DIAGONAL_ARGMAX, None),
    }


def diagonal_name(task: str) -> str:
    """The shape the alignment should take: ``a diagonal``, ``an anti-diagonal`` when
    reversing."""
    return "an anti-diagonal" if task == "reverse" else "a diagonal"


def verdict(results: pd.DataFrame) -> str:
    """The chapter's verdict word (:data:`rnnlib.verdicts.HOLDS` or ``FAILS``): the alignment is
    a diagonal (an anti-diagonal when reversing) when the largest weight of at least
    :data:`DIAGONAL_ARGMAX` % of the rows is on the expected source symbol, as the chapter
    glues that share (:func:`argmax_share`)."""
    return HOLDS if argmax_share(results) >= DIAGONAL_ARGMAX else FAILS
