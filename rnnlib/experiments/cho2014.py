"""Paper A's experiment as artifacts of the book's cache (chapter ``cho2014``).

* :func:`phrase_scorer` -- the chapter's phrase scorer from its parameters: the phrase table of
  its SMT run, the held-out and training pairs, the model and training configs and
  :func:`scorer_run`; the representations chapter (A §4.4) reads the same network through it,
  with the parameters :func:`cho2014_params` resolves and the corpus :func:`cho2014_corpus` prepares;
* :func:`scorer_variant` -- the same network on the same pairs with another recurrent unit
  (A §2.3's tanh units) or fewer updates;
* :func:`scorer_run` -- the RNN Encoder-Decoder trained on unique phrase pairs
  (``cho2014/scorer``: ``model.pt``, ``train_log.csv``, ``eval_log.csv``);
* :func:`scored_pairs` -- ``log p(f | e)`` of every pair the decoder can use on dev and test
  (``cho2014/rnn_feature``: ``rnn.jsonl``, a :class:`~rnnlib.smt.rnn_scorer.ScoredTable`);
* :func:`table_frame` -- the phrase pairs of the table with their TM and RNN scores (Fig. 3,
  Tables 2-3).

The systems of Table 1 are :func:`rnnlib.smt.system.run` on the same alignment, phrase
table and LM artifacts, with the extra features of each row and one MERT seed per run.

Devices: the chapter's ``device`` parameter (``auto``: CUDA when there is one, else the CPU;
:func:`rnnlib.device.resolve_device`) is where the scorer trains, scores and samples and where
its checkpoints load (:func:`phrase_scorer`, :func:`load_scorer`). The scorer's cache key
carries the device as :func:`train_key` writes it: a run on the CPU keeps the key it had before
the chapter had the parameter (``"device": "auto"``, :class:`~rnnlib.train.TrainConfig`'s
default, which resolved to the CPU), a run on a GPU keys ``"cuda"``.

Deviations: none here (see :mod:`rnnlib.smt.rnn_scorer` and the chapter).
"""

from __future__ import annotations

import dataclasses
import shutil
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pandas as pd
import torch

from ..checkpoint import load_checkpoint
from ..config import ModelConfig
from ..device import resolve_device
from ..models import build_model
from ..ragged import ParallelArrays
from ..presets import preset
from ..smt.features import Pair
from ..smt.phrases import PhraseTable
from ..smt.system import SMTResult
from ..smt.rnn_scorer import ScoredTable, encode_pairs, rnn_feature, table_pairs
from ..train import TrainConfig, train, train_preset
from ..cache import Artifact, ArtifactCache


def train_key(train_config: TrainConfig) -> dict[str, Any]:
    """``train_config`` as the scorer's cache key holds it: every field, the device as its type
    (``"cuda:1"`` keys as ``"cuda"``), and a CPU device as ``"auto"``: the scorer's keys were made
    before the chapter had a ``device`` parameter, with TrainConfig's default ``"auto"`` on the
    CPU, and a CPU run keeps that key (as :meth:`rnnlib.config.ModelConfig.to_dict` leaves out
    ``unit`` while it is ``"gru"``). ``"auto"`` itself is written as what it resolves to here."""
    d = asdict(train_config)
    kind = resolve_device("auto").type if d["device"] == "auto" else torch.device(d["device"]).type
    d["device"] = "auto" if kind == "cpu" else kind
    return d


def scorer_run(
    cache: ArtifactCache,
    config: dict,
    model_config: ModelConfig,
    train_config: TrainConfig,
    train_pairs: ParallelArrays,
    dev_pairs: ParallelArrays,
    data: str,
) -> Artifact:
    """The trained scorer for ``config`` (which names the table and the sample) as an artifact,
    trained on ``train_config.device`` (keyed by :func:`train_key`)."""
    full = {**config, "model": model_config.to_dict(), "train": train_key(train_config)}

    def make(out: Path, work: Path) -> dict:
        torch.manual_seed(train_config.seed)
        model = build_model(model_config)
        result = train(model, train_pairs, dev_pairs, train_config, work, progress=False)
        torch.save(model.state_dict(), out / "model.pt")
        for name in ("train_log.csv", "eval_log.csv"):
            shutil.copy2(work / name, out / name)
        return {
            "updates": result.updates,
            "epochs": result.epochs,
            "seconds": result.seconds,
            "train_pairs": len(train_pairs),
            "dev_pairs": len(dev_pairs),
            "dev_nll": result.best["dev_nll_sentence"] if result.best else None,
            "threads": torch.get_num_threads(),
            "device": resolve_device(train_config.device).type,
        }

    return cache.build("cho2014/scorer", full, make, data=data)


#: the chapter parameters that set the network itself (beside those of its phrase table's SMT
#: run); a chapter that reads the scorer shows them
SCORER_PARAMS = (
    "model_preset",
    "src_vocab",
    "tgt_vocab",
    "rnn_sample",
    "rnn_dev_pairs",
    "rnn_updates",
    "rnn_eval_every",
    "seed",
    "device",
)

#: the MERT seed of the SMT run whose phrase table the scorer is trained on (the first of the
#: chapter's ``mert_seeds``; the table itself does not depend on it)
SCORER_MERT_SEED = 1


@dataclass
class PhraseScorer:
    """The chapter's phrase scorer and what it was made from (:func:`phrase_scorer`).

    ``artifact``: the ``cho2014/scorer`` run; ``smt``: the SMT run (MERT seed
    :data:`SCORER_MERT_SEED`) whose phrase table ``table`` holds every extracted pair;
    ``all_pairs``: its unique pairs; ``held``: those held out for the dev NLL; ``train_pairs``:
    the (sampled) pairs the network trained on; ``seconds``: the wall time of
    :func:`scorer_run` in this process (a cache hit is quick); ``device``: where the network
    trained and where :meth:`model` puts it (the chapter's ``device`` parameter, resolved).
    """

    artifact: Artifact
    model_config: ModelConfig
    train_config: TrainConfig
    smt: SMTResult
    table: PhraseTable
    all_pairs: list[Pair]
    held: list[Pair]
    train_pairs: list[Pair]
    seconds: float
    run_config: dict | None = (
        None  # the config :func:`scorer_run` keyed it by (table, sample, held-out pairs)
    )
    device: torch.device = torch.device("cpu")

    def model(self) -> torch.nn.Module:
        """The trained network on :attr:`device`, in eval mode."""
        return load_scorer(self.artifact, self.model_config, self.device)


def phrase_scorer(cache: ArtifactCache, corpus, params: dict[str, Any]) -> PhraseScorer:
    """The RNN Encoder-Decoder of the ``cho2014`` chapter for its parameters ``params``.

    Builds (or finds in ``cache``) the phrase-based system of the chapter's data and settings
    with MERT seed :data:`SCORER_MERT_SEED` (:func:`rnnlib.experiments.baseline.baseline_inputs`,
    :func:`rnnlib.smt.system.run`), holds out ``min(rnn_dev_pairs, pairs // 10)`` of the
    phrase table's unique pairs (seed ``seed + 1``), samples ``rnn_sample`` of the others (seed
    ``seed``) and trains paper A's model (``model_preset`` at the corpus' shortlists) with A's
    set-up (``train_preset("paper-a")``, ``rnn_updates``, ``rnn_eval_every``, ``seed``) on the
    ``device`` parameter's device (``auto`` when ``params`` has none): :func:`scorer_run`.
    ``corpus``: the prepared corpus of the same parameters
    (:func:`rnnlib.book.corpus_params.corpus_config`).
    """
    from ..smt.system import run
    from .baseline import baseline_inputs

    data, smt_config = baseline_inputs(corpus, params)
    smt_config = dataclasses.replace(smt_config, seed=SCORER_MERT_SEED)
    smt = run(
        data,
        smt_config,
        cache,
        detokenize=lambda words: corpus.detokenize(list(words)),
        log=lambda m: None,
    )
    seed = params["seed"]
    table = PhraseTable.load(smt.phrase_table.file("phrase_table.npz"))
    all_pairs = table_pairs(table)
    held = table_pairs(
        table, sample=min(params["rnn_dev_pairs"], len(all_pairs) // 10 or 1), seed=seed + 1
    )
    train_list = table_pairs(table, sample=params["rnn_sample"], seed=seed, exclude=held)
    device = resolve_device(params.get("device", "auto"))
    model_config = preset(
        params["model_preset"], src_vocab=len(corpus.src_vocab), tgt_vocab=len(corpus.tgt_vocab)
    )
    train_config = train_preset(
        "paper-a",
        max_updates=params["rnn_updates"],
        eval_every=params["rnn_eval_every"],
        seed=seed,
        checkpoint_every=params["rnn_eval_every"],
        device=str(device),
    )
    run_config = {
        "phrase_table": smt.phrase_table.key,
        "sample": params["rnn_sample"],
        "dev_pairs": len(held),
        "sample_seed": seed,
    }
    t0 = time.perf_counter()
    art = scorer_run(
        cache,
        run_config,
        model_config,
        train_config,
        encode_pairs(train_list, corpus.src_vocab, corpus.tgt_vocab),
        encode_pairs(held, corpus.src_vocab, corpus.tgt_vocab),
        data=corpus.checksum,
    )
    return PhraseScorer(
        art,
        model_config,
        train_config,
        smt,
        table,
        all_pairs,
        held,
        train_list,
        time.perf_counter() - t0,
        run_config,
        device,
    )


def scorer_variant(
    cache: ArtifactCache,
    corpus,
    scorer: PhraseScorer,
    unit: str = "gru",
    updates: int | None = None,
) -> PhraseScorer:
    """``scorer``'s network trained again on the same pairs, with the same set-up, seed and
    evaluation points, but with the recurrent unit ``unit`` and for ``updates`` updates
    (``None``: as many as ``scorer``): the gating ablation of A §2.3.

    ``unit="tanh"``: every recurrent layer a plain tanh unit of the same size (``ModelConfig.unit``);
    it has no reset gate, so the decoder's reset options go (``reset="before"``,
    ``decoder_reset=None``, ``reset_context=False``). ``unit="gru"``: ``scorer``'s own model;
    with ``updates`` below ``scorer``'s it is the same run stopped earlier (same minibatches),
    with ``updates=None`` it is ``scorer`` itself (a cache lookup, the same key). The artifact
    is a ``cho2014/scorer`` keyed by the changed model or training config; ``corpus``: the
    corpus ``scorer`` was made from."""
    if scorer.run_config is None:
        raise ValueError("scorer_variant: scorer has no run_config; make it with phrase_scorer")
    if unit not in ("gru", "tanh"):
        raise ValueError(f"scorer_variant: unit={unit!r}; expected 'gru' or 'tanh'")
    if updates is not None and (not isinstance(updates, int) or updates < 1):
        raise ValueError(f"scorer_variant: updates={updates!r}; expected a positive int or None")
    model_config = scorer.model_config
    if unit == "tanh":
        model_config = dataclasses.replace(
            model_config, unit="tanh", reset="before", decoder_reset=None, reset_context=False
        )
    train_config = scorer.train_config
    if updates is not None:
        train_config = dataclasses.replace(train_config, max_updates=updates)
    t0 = time.perf_counter()
    art = scorer_run(
        cache,
        scorer.run_config,
        model_config,
        train_config,
        encode_pairs(scorer.train_pairs, corpus.src_vocab, corpus.tgt_vocab),
        encode_pairs(scorer.held, corpus.src_vocab, corpus.tgt_vocab),
        data=corpus.checksum,
    )
    return dataclasses.replace(
        scorer,
        artifact=art,
        model_config=model_config,
        train_config=train_config,
        seconds=time.perf_counter() - t0,
    )


def cho2014_params(root: Path, profile: str) -> dict[str, Any]:
    """The ``cho2014`` chapter's parameters under ``profile``: its defaults, the profile and the
    command-line overrides of the ``rnnlib run`` or ``rnnlib build`` this process runs under
    (:func:`rnnlib.book.params.run_overrides`), as that chapter resolves them; a chapter that
    reads its phrase scorer passes them to :func:`phrase_scorer` (and prepares the corpus from
    them) so that both chapters read one network."""
    from ..book.params import run_overrides
    from ..book.execute import resolve_all

    _, params = resolve_all(Path(root), profile, run_overrides(), only=["cho2014"])
    return dict(params["cho2014"])


def cho2014_corpus(cache: ArtifactCache, params: dict[str, Any]):
    """The corpus the ``cho2014`` chapter prepares for its ``params`` (its corpus block): the
    text and shortlists its phrase scorer was trained on."""
    from ..corpus.dataset import prepare_corpus
    from ..book.corpus_params import corpus_config

    return prepare_corpus(corpus_config(params), cache)


def load_scorer(
    run: Artifact, model_config: ModelConfig, device: torch.device | str = "cpu"
) -> torch.nn.Module:
    """The network of a ``cho2014/scorer`` artifact on ``device`` (its checkpoint mapped there), in eval mode."""
    model = build_model(model_config).to(device)
    model.load_state_dict(load_checkpoint(run.file("model.pt"), map_location=device))
    return model.eval()


def scored_pairs(
    cache: ArtifactCache,
    scorer: Artifact,
    model: torch.nn.Module,
    pairs: Sequence[Pair],
    src_vocab,
    tgt_vocab,
    data: str,
    batch_size: int = 512,
) -> Artifact:
    """``rnn.jsonl``: ``pairs`` (every pair the decoder can use) scored by ``model``, on its device."""

    def make(out: Path, work: Path) -> dict:
        t = time.perf_counter()
        rnn_feature(model, pairs, src_vocab, tgt_vocab, batch_size=batch_size).save(
            out / "rnn.jsonl"
        )
        return {"seconds": time.perf_counter() - t, "pairs": len(pairs)}

    return cache.build(
        "cho2014/rnn_feature", {"scorer": scorer.key, "pairs": len(pairs)}, make, data=data
    )


def load_scored(art: Artifact) -> ScoredTable:
    return ScoredTable.load(art.file("rnn.jsonl"))


def table_frame(
    table,
    model: torch.nn.Module,
    src_vocab,
    tgt_vocab,
    sources: set | None = None,
    batch_size: int = 512,
) -> pd.DataFrame:
    """One row per pair of ``table`` (:class:`~rnnlib.smt.phrases.PhraseTable`) whose source is in
    ``sources`` (all without): ``src``, ``tgt`` (word tuples), ``tm`` = log p(t|s), ``rnn`` =
    log p(t|s) by the network, ``count``, ``src_count``, ``src_len``."""
    from ..smt.rnn_scorer import score_pairs

    rows = [
        (r, s, t) for r, (s, t, _) in enumerate(table.pairs()) if sources is None or s in sources
    ]
    index = np.array([r for r, _, _ in rows], dtype=np.int64)
    pairs = [(s, t) for _, s, t in rows]
    rnn = (
        score_pairs(model, encode_pairs(pairs, src_vocab, tgt_vocab), batch_size)
        if pairs
        else np.zeros(0)
    )
    return pd.DataFrame(
        {
            "src": [s for s, _ in pairs],
            "tgt": [t for _, t in pairs],
            "tm": np.log(table.scores[index, 0]),
            "rnn": rnn,
            "count": table.count[index],
            "src_count": table.src_count[index],
            "src_len": [len(s) for s, _ in pairs],
        }
    )


__all__ = [
    "PhraseScorer",
    "SCORER_MERT_SEED",
    "SCORER_PARAMS",
    "cho2014_corpus",
    "cho2014_params",
    "load_scored",
    "load_scorer",
    "phrase_scorer",
    "scored_pairs",
    "scorer_run",
    "scorer_variant",
    "table_frame",
    "train_key",
]
