"""Paper A's experiment as artifacts of the book's cache (chapter ``cho2014``).

* :func:`scorer_run` -- the RNN Encoder-Decoder trained on unique phrase pairs
  (``cho2014/scorer``: ``model.pt``, ``train_log.csv``, ``eval_log.csv``);
* :func:`scored_pairs` -- ``log p(f | e)`` of every pair the decoder can use on dev and test
  (``cho2014/rnn_feature``: ``rnn.jsonl``, a :class:`~rnnlib.smt.rnn_scorer.ScoredTable`);
* :func:`table_frame` -- the phrase pairs of the table with their TM and RNN scores (Fig. 3,
  Tables 2-3).

The systems of Table 1 are :func:`rnnlib.smt.pipeline.run` on the same alignment, phrase
table and LM artifacts, with the extra features of each row and one MERT seed per run.

Deviations: none here (see :mod:`rnnlib.smt.rnn_scorer` and the chapter).
"""
from __future__ import annotations

import shutil
import time
from dataclasses import asdict
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd
import torch

from ..checkpoint import load_checkpoint
from ..config import ModelConfig
from ..models import build_model
from ..ragged import ParallelArrays
from ..smt.features import Pair
from ..smt.rnn_scorer import ScoredTable, encode_pairs, rnn_feature
from ..train import TrainConfig, train
from .cache import Artifact, ArtifactCache


def scorer_run(cache: ArtifactCache, config: dict, model_config: ModelConfig, train_config: TrainConfig,
               train_pairs: ParallelArrays, dev_pairs: ParallelArrays, data: str) -> Artifact:
    """The trained scorer for ``config`` (which names the table and the sample) as an artifact."""
    full = {**config, "model": asdict(model_config), "train": asdict(train_config)}

    def make(out: Path, work: Path) -> dict:
        torch.manual_seed(train_config.seed)
        model = build_model(model_config)
        result = train(model, train_pairs, dev_pairs, train_config, work, progress=False)
        torch.save(model.state_dict(), out / "model.pt")
        for name in ("train_log.csv", "eval_log.csv"):
            shutil.copy2(work / name, out / name)
        return {"updates": result.updates, "epochs": result.epochs, "seconds": result.seconds,
                "train_pairs": len(train_pairs), "dev_pairs": len(dev_pairs),
                "dev_nll": result.best["dev_nll_sentence"] if result.best else None,
                "threads": torch.get_num_threads()}

    return cache.build("cho2014/scorer", full, make, data=data)


def load_scorer(run: Artifact, model_config: ModelConfig) -> torch.nn.Module:
    model = build_model(model_config)
    model.load_state_dict(load_checkpoint(run.file("model.pt")))
    return model.eval()


def scored_pairs(cache: ArtifactCache, scorer: Artifact, model: torch.nn.Module, pairs: Sequence[Pair],
                 src_vocab, tgt_vocab, data: str, batch_size: int = 512) -> Artifact:
    """``rnn.jsonl``: ``pairs`` (every pair the decoder can use) scored by ``model``."""
    def make(out: Path, work: Path) -> dict:
        t = time.perf_counter()
        rnn_feature(model, pairs, src_vocab, tgt_vocab, batch_size=batch_size).save(out / "rnn.jsonl")
        return {"seconds": time.perf_counter() - t, "pairs": len(pairs)}

    return cache.build("cho2014/rnn_feature", {"scorer": scorer.key, "pairs": len(pairs)}, make, data=data)


def load_scored(art: Artifact) -> ScoredTable:
    return ScoredTable.load(art.file("rnn.jsonl"))


def table_frame(table, model: torch.nn.Module, src_vocab, tgt_vocab, sources: set | None = None,
                batch_size: int = 512) -> pd.DataFrame:
    """One row per pair of ``table`` (:class:`~rnnlib.smt.phrases.PhraseTable`) whose source is in
    ``sources`` (all without): ``src``, ``tgt`` (word tuples), ``tm`` = log p(t|s), ``rnn`` =
    log p(t|s) by the network, ``count``, ``src_count``, ``src_len``."""
    from ..smt.rnn_scorer import score_pairs
    rows = [(r, s, t) for r, (s, t, _) in enumerate(table.pairs()) if sources is None or s in sources]
    index = np.array([r for r, _, _ in rows], dtype=np.int64)
    pairs = [(s, t) for _, s, t in rows]
    rnn = score_pairs(model, encode_pairs(pairs, src_vocab, tgt_vocab), batch_size) if pairs else np.zeros(0)
    return pd.DataFrame({"src": [s for s, _ in pairs], "tgt": [t for _, t in pairs],
                         "tm": np.log(table.scores[index, 0]), "rnn": rnn,
                         "count": table.count[index], "src_count": table.src_count[index],
                         "src_len": [len(s) for s, _ in pairs]})

__all__ = ["load_scored", "load_scorer", "scored_pairs", "scorer_run", "table_frame"]
