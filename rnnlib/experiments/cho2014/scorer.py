"""The phrase scorer: the RNN Encoder-Decoder (A §2, Eqs. 1-8) trained on the unique pairs of
the phrase table (A §3.1), and its score ``log p(f | e)`` of the pairs the decoder can use.

The network is the ``cho2014/scorer`` artifact (``model.pt``, ``train_log.csv``,
``eval_log.csv``); its scores of the usable pairs the ``cho2014/rnn_feature`` artifact
(``rnn.jsonl``, a :class:`~rnnlib.smt.rnn_scorer.ScoredTable`). The representations chapter
(A §4.4) reads the same network through :func:`phrase_scorer` and :func:`scorer_variant` (A
§2.3's tanh units, or fewer updates). The optimiser check trains the same network with the
paper's Adadelta, on the same pairs and seed."""

from __future__ import annotations

import dataclasses
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import pandas as pd
import torch

from ...cache import Artifact, ArtifactCache
from ...checkpoint import load_checkpoint
from ...config import ModelConfig
from ...device import resolve_device
from ...models import build_model
from ...presets import preset
from ...ragged import ParallelArrays
from ...smt.features import Pair
from ...smt.phrases import PhraseTable, source_phrases
from ...smt.rnn_scorer import (
    ScoredTable,
    decoder_pairs,
    encode_pairs,
    rnn_feature,
    table_pairs,
)
from ...smt.system import (
    SMTData,
    build_stages,
)
from ...train import TRAIN_PRESETS, TrainConfig, train, train_preset
from .setting import Params, as_params


def train_key(train_config: TrainConfig) -> dict[str, Any]:
    """``train_config`` as the scorer's cache key holds it: every field, the device as its type
    (``"cuda:1"`` keys as ``"cuda"``), and a CPU device as ``"auto"``: the scorer's keys were made
    before the chapter had a ``device`` parameter, with TrainConfig's default ``"auto"`` on the
    CPU, and a CPU run keeps that key (as :meth:`rnnlib.config.ModelConfig.to_dict` leaves out
    ``unit`` while it is ``"gru"``). ``"auto"`` itself is written as what it resolves to here."""
    d = train_config.to_dict()
    kind = resolve_device("auto").type if d["device"] == "auto" else torch.device(d["device"]).type
    d["device"] = "auto" if kind == "cpu" else kind
    return d


def scorer_run(
    cache: ArtifactCache,
    config: dict,
    model_config: ModelConfig,
    train_config: TrainConfig,
    train_pairs: Callable[[], ParallelArrays],
    dev_pairs: Callable[[], ParallelArrays],
    data: str,
) -> Artifact:
    """The trained scorer for ``config`` (which names the table and the sample) as an artifact,
    trained on ``train_config.device`` (keyed by :func:`train_key`). ``train_pairs`` and
    ``dev_pairs`` make the encoded pairs when the cache lacks the run (encoding the millions of
    unique pairs is not free)."""
    full = {**config, "model": model_config.to_dict(), "train": train_key(train_config)}

    def make(out: Path, work: Path) -> dict:
        train_pairs_, dev_pairs_ = train_pairs(), dev_pairs()
        torch.manual_seed(train_config.seed)
        model = build_model(model_config)
        result = train(model, train_pairs_, dev_pairs_, train_config, work, progress=False)
        torch.save(model.state_dict(), out / "model.pt")
        for name in ("train_log.csv", "eval_log.csv"):
            shutil.copy2(work / name, out / name)
        return {
            "updates": result.updates,
            "epochs": result.epochs,
            "seconds": result.seconds,
            "train_pairs": len(train_pairs_),
            "dev_pairs": len(dev_pairs_),
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
    "rnn_optimizer",
    "rnn_lr",
    "rnn_clip",
    "seed",
    "device",
)


@dataclass
class PhraseScorer:
    """The chapter's phrase scorer and what it was made from (:func:`phrase_scorer`).

    ``artifact``: the ``cho2014/scorer`` run (``None`` in the plan of :func:`scorer_plan`, before
    it is trained); ``phrase_table``: the ``smt/phrase_table`` artifact whose table ``table``
    holds every extracted pair; ``all_pairs``: its unique pairs; ``held``: those held out for
    the dev NLL; ``train_pairs``: the (sampled) pairs the network trained on; ``seconds``: the
    wall time of :func:`scorer_run` in this process (a cache hit is quick); ``device``: where the
    network trained and where :meth:`model` puts it (the chapter's ``device`` parameter,
    resolved).
    """

    artifact: Artifact | None
    model_config: ModelConfig
    train_config: TrainConfig
    phrase_table: Artifact
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


def scorer_optimiser(P: Params) -> dict[str, Any]:
    """The scorer's optimiser from the chapter's ``rnn_optimizer``, ``rnn_lr`` and ``rnn_clip``
    (missing: paper A's, Adadelta at rate 1 without clipping), as overrides of
    ``train_preset("paper-a")``: empty when they are the paper's, so the keys of runs made with
    the paper's optimiser stay as they were. A bad value is an error naming the parameter."""
    name = P.rnn_optimizer
    lr = P.rnn_lr
    clip = P.rnn_clip
    if name not in ("adadelta", "adam"):
        raise ValueError(f"parameter 'rnn_optimizer': {name!r}; expected 'adadelta' or 'adam'")
    if not (isinstance(lr, (int, float)) and lr > 0):
        raise ValueError(f"parameter 'rnn_lr': {lr!r}; expected a positive number")
    if clip is not None and not (isinstance(clip, (int, float)) and clip > 0):
        raise ValueError(f"parameter 'rnn_clip': {clip!r}; expected a positive number or None")
    paper = TRAIN_PRESETS["paper-a"]
    out: dict[str, Any] = {}
    if name != paper["optimizer"]:
        out["optimizer"] = name
    if float(lr) != paper["lr"]:
        out["lr"] = float(lr)
    if clip != paper["clip_norm"]:
        out["clip_norm"] = float(clip)
    return out


def scorer_plan(cache: ArtifactCache, corpus, P: Params, alignment_run: int = 1) -> PhraseScorer:
    """Everything :func:`phrase_scorer` sets up for the chapter's network, which it does not
    train (``artifact`` ``None``): the phrase table of the chapter's data and settings on eflomal
    alignment ``alignment_run`` (:func:`rnnlib.experiments.baseline.baseline_inputs`,
    :func:`rnnlib.smt.system.build_stages`), ``min(rnn_dev_pairs, pairs // 10)`` of its unique
    pairs held out (seed ``seed + 1``), ``rnn_sample`` of the others sampled (seed ``seed``),
    paper A's model (``model_preset`` at the corpus' shortlists) and A's set-up
    (``train_preset("paper-a")``, ``rnn_updates``, ``rnn_eval_every``, ``seed``; the optimiser of
    :func:`scorer_optimiser`) on the ``device`` parameter's device. ``corpus``: the prepared
    corpus of the same parameters (:func:`rnnlib.book.corpus_params.corpus_config`)."""
    from ..baseline import baseline_inputs

    data, smt_config = baseline_inputs(corpus, P.as_dict())
    _, ptab, _ = build_stages(data, smt_config, cache, alignment_run, log=lambda m: None)
    seed = P.seed
    table = PhraseTable.load(ptab.file("phrase_table.npz"))
    all_pairs = table_pairs(table)
    held = table_pairs(table, sample=min(P.rnn_dev_pairs, len(all_pairs) // 10 or 1), seed=seed + 1)
    train_list = table_pairs(table, sample=P.rnn_sample, seed=seed, exclude=held)
    device = resolve_device(P.device)
    model_config = preset(
        P.model_preset, src_vocab=len(corpus.src_vocab), tgt_vocab=len(corpus.tgt_vocab)
    )
    train_config = train_preset(
        "paper-a",
        max_updates=P.rnn_updates,
        eval_every=P.rnn_eval_every,
        seed=seed,
        checkpoint_every=P.rnn_eval_every,
        device=str(device),
        **scorer_optimiser(P),
    )
    run_config = {
        "phrase_table": ptab.key,
        "sample": P.rnn_sample,
        "dev_pairs": len(held),
        "sample_seed": seed,
    }
    return PhraseScorer(
        None,
        model_config,
        train_config,
        ptab,
        table,
        all_pairs,
        held,
        train_list,
        0.0,
        run_config,
        device,
    )


def phrase_scorer(
    cache: ArtifactCache,
    corpus,
    P: Params | Mapping[str, Any],
    alignment_run: int = 1,
    plan: PhraseScorer | None = None,
) -> PhraseScorer:
    """The RNN Encoder-Decoder of the ``cho2014`` chapter for its parameters ``P`` (or the
    mapping :func:`~.setting.cho2014_params` returns, for a chapter that reads the same
    network): the network of :func:`scorer_plan` (or of ``plan``, made by it for the same
    arguments) trained by :func:`scorer_run`, or read from ``cache``. ``alignment_run``: the
    eflomal alignment whose phrase table gives the pairs (1: the book's)."""
    plan = plan or scorer_plan(cache, corpus, as_params(P), alignment_run)
    t0 = time.perf_counter()
    art = scorer_run(
        cache,
        plan.run_config,
        plan.model_config,
        plan.train_config,
        lambda: encode_pairs(plan.train_pairs, corpus.src_vocab, corpus.tgt_vocab),
        lambda: encode_pairs(plan.held, corpus.src_vocab, corpus.tgt_vocab),
        data=corpus.checksum,
    )
    return dataclasses.replace(plan, artifact=art, seconds=time.perf_counter() - t0)


def scorer_variant(
    cache: ArtifactCache,
    corpus,
    scorer: PhraseScorer,
    unit: str = "gru",
    updates: int | None = None,
    paper_optimiser: bool = False,
) -> PhraseScorer:
    """``scorer``'s network trained again on the same pairs, with the same set-up, seed and
    evaluation points, but with the recurrent unit ``unit`` and for ``updates`` updates
    (``None``: as many as ``scorer``): the gating ablation of A §2.3. ``paper_optimiser``:
    trained with paper A's optimiser (``train_preset("paper-a")``'s Adadelta, no clipping)
    instead of the chapter's, the run that checks the chapter's choice on held-out pairs.

    ``unit="tanh"``: every recurrent layer a plain tanh unit of the same size
    (``ModelConfig.unit``); it has no reset gate, so the decoder's reset options go
    (``reset="before"``, ``decoder_reset=None``, ``reset_context=False``). ``unit="gru"``:
    ``scorer``'s own model; with ``updates`` below ``scorer``'s it is the same run stopped
    earlier (same minibatches), with ``updates=None`` it is ``scorer`` itself (a cache lookup,
    the same key). The artifact is a ``cho2014/scorer`` keyed by the changed model or training
    config; ``corpus``: the corpus ``scorer`` was made from."""
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
    if paper_optimiser:
        paper = TRAIN_PRESETS["paper-a"]
        train_config = dataclasses.replace(
            train_config, **{k: paper[k] for k in ("optimizer", "lr", "rho", "eps", "clip_norm")}
        )
    t0 = time.perf_counter()
    art = scorer_run(
        cache,
        scorer.run_config,
        model_config,
        train_config,
        lambda: encode_pairs(scorer.train_pairs, corpus.src_vocab, corpus.tgt_vocab),
        lambda: encode_pairs(scorer.held, corpus.src_vocab, corpus.tgt_vocab),
        data=corpus.checksum,
    )
    return dataclasses.replace(
        scorer,
        artifact=art,
        model_config=model_config,
        train_config=train_config,
        seconds=time.perf_counter() - t0,
    )


def load_scorer(
    run: Artifact, model_config: ModelConfig, device: torch.device | str = "cpu"
) -> torch.nn.Module:
    """The network of a ``cho2014/scorer`` artifact on ``device`` (its checkpoint mapped there),
    in eval mode."""
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
    """``rnn.jsonl``: ``pairs`` (every pair the decoder can use) scored by ``model``, on its
    device."""

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
    scored: ScoredTable | None = None,
) -> pd.DataFrame:
    """One row per pair of ``table`` (:class:`~rnnlib.smt.phrases.PhraseTable`) whose source is in
    ``sources`` (all without): ``src``, ``tgt`` (word tuples), ``tm`` = log p(t|s), ``rnn`` =
    log p(t|s) by the network, ``lex`` = log lex(t|s) (the lexical weight), ``count``,
    ``src_count``, ``src_len``. ``scored``: the network's scores already computed for these pairs
    (the decoder's feature, :func:`scored_pairs`), read instead of scoring them again."""
    from ...smt.rnn_scorer import score_pairs

    rows = [
        (r, s, t) for r, (s, t, _) in enumerate(table.pairs()) if sources is None or s in sources
    ]
    index = np.array([r for r, _, _ in rows], dtype=np.int64)
    pairs = [(s, t) for _, s, t in rows]
    if not pairs:
        rnn = np.zeros(0)
    elif scored is not None:
        rnn = np.array([scored.lookup(s, t)[0] for s, t in pairs], dtype=np.float64)
    else:
        rnn = score_pairs(model, encode_pairs(pairs, src_vocab, tgt_vocab), batch_size)
    return pd.DataFrame(
        {
            "src": [s for s, _ in pairs],
            "tgt": [t for _, t in pairs],
            "tm": np.log(table.scores[index, 0]),
            "rnn": rnn,
            "lex": np.log(np.maximum(table.scores[index, 2], 1e-300)),
            "count": table.count[index],
            "src_count": table.src_count[index],
            "src_len": [len(s) for s, _ in pairs],
        }
    )


def usable_pairs(scorer: PhraseScorer, data: SMTData, P: Params):
    """``(phrases, lookup, usable)``: every source phrase of the dev and test sentences of
    ``data`` (at most ``max_phrase_len`` words), the scorer's phrase table's entries for them
    and every pair the decoder can use there (:func:`rnnlib.smt.rnn_scorer.decoder_pairs`)."""
    sentences = list(data.dev_src) + list(data.test_src)
    phrases = source_phrases(sentences, P.max_phrase_len)
    lookup = scorer.table.lookup(sources=phrases)
    return phrases, lookup, decoder_pairs(lookup, sentences, P.max_phrase_len)


def checks_optimiser(P: Params) -> bool:
    """Whether the chapter checks its network's optimiser against paper A's
    (:func:`optimiser_check`): ``rnn_check_optimiser`` on, and the optimiser not the paper's."""
    return bool(P.rnn_check_optimiser and scorer_optimiser(P))


def optimiser_check(
    cache: ArtifactCache, corpus, scorer: PhraseScorer, P: Params
) -> PhraseScorer | None:
    """The check of the network's optimiser: ``scorer``'s network (or its plan,
    :func:`scorer_plan`) trained again on the same pairs with the same seed and paper A's
    optimiser for ``rnn_check_updates`` updates (:func:`scorer_variant`), when
    ``rnn_check_optimiser`` is on and the chapter's optimiser is not the paper's
    (:func:`scorer_optimiser`); else ``None``."""
    if not checks_optimiser(P):
        return None
    updates = P.rnn_check_updates
    return scorer_variant(cache, corpus, scorer, updates=updates, paper_optimiser=True)


def trained_threads(run: Artifact) -> int:
    """The torch threads a network's artifact ``run`` (``cho2014/scorer``, ``cho2014/cslm``) was
    trained on, as its record says: one where :func:`build_ahead` trained it beside the systems
    (``systems_at_once`` above 1), the chapter's ``threads`` where the chapter trained it alone."""
    return int(run.extra.get("threads", run.meta["machine"]["torch_threads"]))


#: a held-out perplexity that fell by more than this share over the last evaluation interval
#: was still falling when training stopped (the scorer's per target token, the CSLM's per word)
STILL_FALLING = 0.05


def still_falling(ppl: Sequence[float]) -> bool:
    """Whether the held-out perplexity ``ppl`` (at a network's evaluations, two at least) fell
    by more than :data:`STILL_FALLING` over the last interval: training stopped too early."""
    p0, p1 = ppl[-2:]
    return p1 < (1 - STILL_FALLING) * p0
