"""Paper A's experiment (chapter ``cho2014``): the RNN Encoder-Decoder as a phrase score.

The network and its artifacts (the representations chapter, A §4.4, reads the same network):

* :func:`phrase_scorer` -- the chapter's phrase scorer from its parameters: the phrase table of
  its SMT run, the held-out and training pairs, the model and training configs and
  :func:`scorer_run`; the representations chapter reads the same network through it, with the
  parameters :func:`cho2014_params` resolves and the corpus :func:`cho2014_corpus` prepares;
* :func:`scorer_variant` -- the same network on the same pairs with another recurrent unit
  (A §2.3's tanh units) or fewer updates;
* :func:`scorer_run` -- the RNN Encoder-Decoder trained on unique phrase pairs
  (``cho2014/scorer``: ``model.pt``, ``train_log.csv``, ``eval_log.csv``);
* :func:`scored_pairs` -- ``log p(f | e)`` of every pair the decoder can use on dev and test
  (``cho2014/rnn_feature``: ``rnn.jsonl``, a :class:`~rnnlib.smt.rnn_scorer.ScoredTable`);
* :func:`table_frame` -- the phrase pairs of the table with their TM and RNN scores (Fig. 3,
  Tables 2-3).

What the chapter shows, in its order (each function named for what it produces):

* :func:`baseline_row` and :func:`rnn_row` -- the Baseline and +RNN rows of A Table 1: the
  phrase-based system (:func:`rnnlib.smt.system.run`) on the same alignment, phrase table and
  LM, tuned with one MERT run per seed, without and with the network's score (A Eq. 9);
  :func:`dev_nll_curve` and :func:`scorer_numbers` describe the network;
* :func:`table_1`, :func:`table_1_numbers`, :func:`table_1_claims`, :func:`rnn_weights` and
  :func:`signature` -- A Table 1 with the CSLM rows of :mod:`rnnlib.experiments.cho2014_cslm`;
* :func:`figure_3_pairs`, :func:`figure_3`, :func:`figure_3_numbers`, :func:`figure_3_claims`
  -- A Fig. 3, the RNN score against the translation model's, with marginal distributions;
* :func:`long_phrases`, :func:`table_2`, :func:`table_2_numbers`, :func:`table_2_claims`,
  :func:`table_3_samples`, :func:`table_3_claims` -- A Tables 2 and 3;
* :func:`stages_table` and :func:`recipe_table` -- where the time goes, and the set-up beside
  the paper's.

Every interval comes from :mod:`rnnlib.stats` (Fig. 3's joint bootstrap from
:func:`rnnlib.stats.bootstrap_rounds`).

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
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple, Sequence

import numpy as np
import pandas as pd
import torch

from ..batch import source_batch
from ..book import claims, papers
from ..cache import Artifact, ArtifactCache
from ..checkpoint import load_checkpoint
from ..config import ModelConfig
from ..device import resolve_device
from ..models import build_model
from ..presets import preset
from ..ragged import ParallelArrays
from ..search import sample
from ..smt.features import Pair
from ..smt.phrases import PhraseTable, source_phrases
from ..smt.rnn_scorer import (
    ScoredTable,
    decoder_pairs,
    encode_pairs,
    rnn_feature,
    table_pairs,
)
from ..smt.system import SMTConfig, SMTData, SMTResult, checksum, run
from ..specials import UNK
from ..stats import (
    bootstrap_mean,
    bootstrap_rounds,
    mean_difference,
    percentile_interval,
    seeds_difference,
)
from ..train import TRAIN_PRESETS, TrainConfig, train, train_preset


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


# -- the rows of Table 1 without the CSLM -------------------------------------------------------
class Number(NamedTuple):
    """One number for the chapter's prose, in the order of
    :meth:`rnnlib.book.chapter.Chapter.number`'s arguments (``ch.number(*number)``): its glue
    name, value, digits of rounding (``None``: as it is) and the artifacts it was computed from
    (``None``: every artifact the chapter has looked up so far)."""

    name: str
    value: Any
    digits: int | None = None
    artifacts: list | None = None


@dataclass
class BaselineRow:
    """The Baseline row of A Table 1 and what every row shares (:func:`baseline_row`).

    ``corpus``: the prepared corpus; ``data``: its tokenised train, dev and test sentences (the
    first ``max_train`` / ``max_eval``); ``config``: the phrase-based system's settings with the
    first MERT seed; ``seeds``: the MERT seeds ``1..mert_seeds``; ``runs``: seed -> the tuned
    and evaluated system; ``device``: where the networks run (the ``device`` parameter)."""

    corpus: Any
    data: SMTData
    config: SMTConfig
    seeds: list[int]
    runs: dict[int, SMTResult]
    device: torch.device

    @property
    def first_run(self) -> SMTResult:
        """The run of the first MERT seed (its alignment, phrase table and LM are every row's)."""
        return self.runs[self.seeds[0]]

    def detokenize(self, words: Sequence[str]) -> str:
        return self.corpus.detokenize(list(words))


def mert_runs(
    cache: ArtifactCache, base: BaselineRow, extra: Sequence[ScoredTable] = ()
) -> dict[int, SMTResult]:
    """One row of A Table 1: ``seed -> SMTResult``, the phrase-based system of ``base.config``
    with the phrase features ``extra`` (A Eq. 9), tuned by MERT with each of ``base.seeds``."""
    return {
        s: run(
            base.data,
            dataclasses.replace(base.config, seed=s),
            cache,
            extra=extra,
            detokenize=base.detokenize,
            log=lambda m: None,
        )
        for s in base.seeds
    }


def baseline_row(cache: ArtifactCache, params: dict[str, Any]) -> BaselineRow:
    """The corpus of the chapter's ``params`` (:func:`cho2014_corpus`), its data and system
    settings as the baseline chapter reads them
    (:func:`rnnlib.experiments.baseline.baseline_inputs`) and the Baseline row of A Table 1: one
    MERT run per seed ``1..mert_seeds``."""
    from .baseline import baseline_inputs

    corpus = cho2014_corpus(cache, params)
    data, config = baseline_inputs(corpus, params)
    seeds = list(range(1, params["mert_seeds"] + 1))
    device = resolve_device(params.get("device", "auto"))
    base = BaselineRow(corpus, data, dataclasses.replace(config, seed=seeds[0]), seeds, {}, device)
    base.runs = mert_runs(cache, base)
    return base


@dataclass
class RNNRow:
    """The +RNN row of A Table 1 and the network behind it (:func:`rnn_row`).

    ``scorer``: the trained network and its pairs (:class:`PhraseScorer`); ``model``: the
    network in eval mode; ``phrases``: every source phrase of the dev and test sentences (at
    most ``max_phrase_len`` words); ``lookup``: the phrase table's entries for them;
    ``usable``: every pair the decoder can use, pass-through copies of unknown words included;
    ``feature``: the ``cho2014/rnn_feature`` artifact of their scores and ``scores`` the phrase
    feature it holds; ``runs``: seed -> the system with the feature; ``cited``: what the
    network's figures and tables cite (the corpus, the system's settings, the scorer)."""

    scorer: PhraseScorer
    model: torch.nn.Module
    phrases: set
    lookup: dict
    usable: list[Pair]
    feature: Artifact
    scores: ScoredTable
    runs: dict[int, SMTResult]
    cited: list


def rnn_row(cache: ArtifactCache, base: BaselineRow, params: dict[str, Any]) -> RNNRow:
    """The network trained on the phrase table's unique pairs (:func:`phrase_scorer`, A §3.1),
    ``log p(f | e)`` of every pair the decoder can use on dev and test (:func:`scored_pairs`),
    and the +RNN row: the system of ``base`` with that score as one more feature (A Eq. 9),
    one MERT run per seed."""
    scorer = phrase_scorer(cache, base.corpus, params)
    model = scorer.model()
    sentences = list(base.data.dev_src) + list(base.data.test_src)
    phrases = source_phrases(sentences, params["max_phrase_len"])
    lookup = scorer.table.lookup(sources=phrases)
    usable = decoder_pairs(lookup, sentences, params["max_phrase_len"])
    vocabs = (base.corpus.src_vocab, base.corpus.tgt_vocab)
    feature = scored_pairs(cache, scorer.artifact, model, usable, *vocabs, data=checksum(sentences))
    scores = load_scored(feature)
    runs = mert_runs(cache, base, extra=[scores])
    cited = [base.corpus, base.config, scorer.artifact]
    return RNNRow(scorer, model, phrases, lookup, usable, feature, scores, runs, cited)


def dev_nll_curve(scorer: Artifact):
    """The dev NLL per held-out unique phrase pair against the update, from the scorer's
    ``eval_log.csv`` (a matplotlib figure)."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    evals = pd.read_csv(scorer.file("eval_log.csv"))
    fig, ax = plt.subplots(figsize=(5, 3))
    sns.lineplot(evals, x="update", y="dev_nll_sentence", marker="o", color="black", ax=ax)
    ax.set_xlabel("update (64 unique phrase pairs each)")
    ax.set_ylabel("dev NLL per phrase pair")
    return fig


def scorer_numbers(rnn: RNNRow) -> list[Number]:
    """The network's pairs and training, for the chapter's prose."""
    scorer, extra = rnn.scorer, rnn.scorer.artifact.extra
    return [
        Number("cho-train-pairs", len(scorer.train_pairs)),
        Number("cho-unique-pairs", len(scorer.all_pairs)),
        Number("cho-dev-pairs", len(scorer.held)),
        Number("cho-usable-pairs", len(rnn.usable)),
        Number("cho-copies", sum(1 for s, t in rnn.usable if s not in rnn.lookup)),
        Number("cho-updates", int(extra["updates"])),
        Number("cho-epochs", extra["epochs"], 2),
        Number("cho-best-dev-nll", extra["dev_nll"], 2),
    ]


# -- Table 1 ------------------------------------------------------------------------------------
#: our rows of A Table 1 -> the paper's row (None: the paper has no such row)
PAPER_ROWS = {
    "Baseline": "Baseline",
    "+RNN": "RNN",
    "+CSLM": None,
    "+CSLM+RNN": "CSLM + RNN",
    "+CSLM+RNN+WP": "CSLM + RNN + WP",
}


def bleu_of(runs: dict[int, SMTResult], split: str) -> np.ndarray:
    """``(seeds,)``: the BLEU of each MERT run of a row on ``split`` (``"dev"`` or ``"test"``)."""
    return np.array([r.bleu[split]["single"]["bleu"] for r in runs.values()])


def _sd(x: np.ndarray) -> float:
    return x.std(ddof=1) if len(x) > 1 else np.nan


def table_1(rows: dict[str, dict[int, SMTResult]]) -> pd.DataFrame:
    """A Table 1: for each row of ``rows`` (name -> seed -> run; the names of
    :data:`PAPER_ROWS`), the mean and standard deviation over the MERT runs of dev and test
    BLEU, the test gain over the Baseline, and the paper's numbers; rounded to 2 digits."""
    base_test = bleu_of(rows["Baseline"], "test").mean()
    paper_base = papers.A_TABLE1["Baseline"]["test"]
    out = []
    for name, runs in rows.items():
        dev, test = bleu_of(runs, "dev"), bleu_of(runs, "test")
        paper = papers.A_TABLE1[PAPER_ROWS[name]] if PAPER_ROWS[name] else None
        p_dev, p_test = (paper["dev"], paper["test"]) if paper else (np.nan, np.nan)
        out.append(
            {
                "system": name,
                "dev": dev.mean(),
                "dev sd": _sd(dev),
                "test": test.mean(),
                "test sd": _sd(test),
                "test − Baseline": test.mean() - base_test,
                "MERT runs": len(runs),
                "paper dev": p_dev,
                "paper test": p_test,
                "paper test − Baseline": p_test - paper_base,
            }
        )
    return pd.DataFrame(out).set_index("system").round(2)


def table_1_numbers(table1: pd.DataFrame, rows: dict[str, dict[int, SMTResult]]) -> list[Number]:
    """The gains of Table 1 over the Baseline (ours and the paper's), the largest MERT standard
    deviation of the Baseline and +RNN rows, and the number of MERT runs."""
    base_dev, base_test = (bleu_of(rows["Baseline"], split).mean() for split in ("dev", "test"))
    with warnings.catch_warnings():  # one MERT run: no standard deviation, NaN
        warnings.simplefilter("ignore", RuntimeWarning)
        noise = np.nanmax([table1.loc["Baseline", "test sd"], table1.loc["+RNN", "test sd"]])
    out = [
        Number("cho-gain-dev", bleu_of(rows["+RNN"], "dev").mean() - base_dev, 2),
        Number("cho-gain-test", bleu_of(rows["+RNN"], "test").mean() - base_test, 2),
        Number("cho-mert-sd", noise, 2),
        Number("cho-seeds", len(rows["Baseline"])),
    ]
    for name, key in (
        ("+CSLM", "cslm"),
        ("+CSLM+RNN", "cslm-rnn"),
        ("+CSLM+RNN+WP", "cslm-rnn-wp"),
    ):
        out.append(Number(f"cho-gain-{key}-dev", table1.loc[name, "dev"] - base_dev, 2))
        out.append(Number(f"cho-gain-{key}-test", table1.loc[name, "test − Baseline"], 2))
    paper = papers.A_TABLE1
    for row, key in (
        ("RNN", "rnn"),
        ("CSLM + RNN", "cslm-rnn"),
        ("CSLM + RNN + WP", "cslm-rnn-wp"),
    ):
        for split in ("dev", "test"):
            gain = paper[row][split] - paper["Baseline"][split]
            out.append(Number(f"cho-paper-gain-{key}-{split}", gain, 2))
    return out


def seeds_interval(label: str, a: np.ndarray, b: np.ndarray) -> tuple[str, float, float, float]:
    """``(label, mean(a) - mean(b), low, high)``: the difference of two rows' means over the MERT
    seeds with ±2 standard errors (:func:`rnnlib.stats.seeds_difference`, the noise rule of
    :func:`rnnlib.book.claims.seeds_above`), for :func:`rnnlib.book.claims.intervals_above`."""
    d, se = seeds_difference(a, b)
    return (label, d, d - 2 * se, d + 2 * se)


def table_1_claims(rows: dict[str, dict[int, SMTResult]]) -> dict[str, claims.Check]:
    """The checks of C-A-T1-1 ... C-A-T1-4 on the rows of Table 1 (name -> seed -> run): the
    rows' differences against twice their standard error over the MERT seeds; not measurable
    with one MERT run per row."""
    if len(rows["Baseline"]) < 2:
        one_run = claims.not_measurable(
            "one MERT run per row, so the rows' differences have no noise estimate"
        )
        return {f"C-A-T1-{k}": one_run for k in (1, 2, 3, 4)}
    B = {
        name: {split: bleu_of(runs, split) for split in ("dev", "test")}
        for name, runs in rows.items()
    }
    splits = ("dev", "test")
    c1 = claims.intervals_above(
        [seeds_interval(f"+RNN − Baseline, {s}", B["+RNN"][s], B["Baseline"][s]) for s in splits],
        note=f"means over {len(rows['Baseline'])} MERT runs per row, ±2 standard errors",
    )
    c2 = claims.intervals_above(
        [seeds_interval(f"+CSLM+RNN − +RNN, {s}", B["+CSLM+RNN"][s], B["+RNN"][s]) for s in splits]
    )
    c3 = claims.seeds_above(
        B["+CSLM+RNN"]["test"],
        B["+CSLM+RNN+WP"]["test"],
        "+CSLM+RNN − +CSLM+RNN+WP, test BLEU",
        note="holds when the word penalty lowers test BLEU beyond the noise",
    )
    gains = {n: B[n]["test"].mean() - B["Baseline"]["test"].mean() for n in rows if n != "Baseline"}
    top = max(gains, key=gains.get)
    _, g, lo, hi = seeds_interval("", B[top]["test"], B["Baseline"]["test"])
    c4 = claims.intervals_above(
        [
            seeds_interval("+RNN − Baseline, test", B["+RNN"]["test"], B["Baseline"]["test"]),
            seeds_interval("+CSLM+RNN − +RNN, test", B["+CSLM+RNN"]["test"], B["+RNN"]["test"]),
            (
                f"2 − ({top} − Baseline), test (the largest gain under 2 BLEU)",
                2 - g,
                2 - hi,
                2 - lo,
            ),
        ]
    )
    return {"C-A-T1-1": c1, "C-A-T1-2": c2, "C-A-T1-3": c3, "C-A-T1-4": c4}


def rnn_weights(runs: dict[int, SMTResult]) -> pd.DataFrame:
    """The tuned log-linear weights of the +RNN row, one column per MERT seed (4 digits)."""
    weights = pd.DataFrame({f"seed {s}": pd.Series(r.weights) for s, r in runs.items()}).round(4)
    weights.index.name = "feature"
    return weights


def signature(base: BaselineRow) -> str:
    """The sacreBLEU signature of the scores of Table 1 (Markdown)."""
    return f"sacreBLEU signature: `{base.first_run.bleu['test']['single']['signature']}`"


# -- Figure 3 -----------------------------------------------------------------------------------
#: bootstrap resamples of the chapter's claims' intervals
N_BOOT = 1000


def scored_frame(rnn: RNNRow, corpus) -> pd.DataFrame:
    """:func:`table_frame` of the pairs of the phrase table whose source phrase the decoder meets
    on dev and test (``rnn.phrases``), scored by the network."""
    return table_frame(
        rnn.scorer.table, rnn.model, corpus.src_vocab, corpus.tgt_vocab, sources=rnn.phrases
    )


def figure_3_pairs(frame: pd.DataFrame, points: int, seed: int) -> pd.DataFrame:
    """The pairs of A Fig. 3: ``min(points, len(frame))`` rows of ``frame`` drawn without
    replacement (``numpy.random.default_rng(seed)``), in the frame's order."""
    rng = np.random.default_rng(seed)
    return frame.iloc[np.sort(rng.choice(len(frame), size=min(points, len(frame)), replace=False))]


def _correlations(pick: pd.DataFrame) -> dict[str, float]:
    """Pearson's r and Spearman's rho of the RNN and TM scores, and Spearman's rho of each
    score with the pair's count in training."""
    count_rank = pick["count"].rank()
    return {
        "pearson": float(np.corrcoef(pick["rnn"], pick["tm"])[0, 1]),
        "spearman": float(pick["rnn"].rank().corr(pick["tm"].rank())),
        "count_tm": float(pick["tm"].rank().corr(count_rank)),
        "count_rnn": float(pick["rnn"].rank().corr(count_rank)),
    }


def _far(pick: pd.DataFrame) -> np.ndarray:
    """``(len(pick),) bool``: the pairs whose standardised RNN and TM scores differ by more than
    one standard deviation."""

    def z(x):
        return (x - x.mean()) / x.std()

    return (np.abs(z(pick["rnn"]) - z(pick["tm"])) > 1).to_numpy()


def figure_3(pick: pd.DataFrame):
    """A Fig. 3: the network's ``log p(f | e)`` against the translation model's direct
    probability for the pairs ``pick`` (:func:`figure_3_pairs`), with the distribution of each
    in the margins (a seaborn ``JointGrid``); returns the matplotlib figure."""
    import seaborn as sns

    r = _correlations(pick)
    grid = sns.JointGrid(pick, x="rnn", y="tm", height=5.5, space=0.05)
    grid.plot_joint(sns.scatterplot, s=3, alpha=0.3, color="black", linewidth=0)
    grid.plot_marginals(sns.histplot, bins=60, color="gray", linewidth=0)
    grid.set_axis_labels(
        r"RNN score $\log p(f \mid e)$",
        r"TM score $\log p(f \mid e)$ (direct translation probability)",
    )
    title = f"Pearson r = {r['pearson']:.2f}, Spearman rho = {r['spearman']:.2f}"
    grid.ax_marg_x.set_title(title, fontsize=9)
    return grid.figure


def figure_3_numbers(pick: pd.DataFrame) -> list[Number]:
    """The correlations of Fig. 3, its number of pairs and the share scored far apart (%)."""
    r = _correlations(pick)
    return [
        Number("cho-pearson", r["pearson"], 2),
        Number("cho-spearman", r["spearman"], 2),
        Number("cho-scatter-n", len(pick)),
        Number("cho-count-corr-tm", r["count_tm"], 2),
        Number("cho-count-corr-rnn", r["count_rnn"], 2),
        Number("cho-far-share", 100 * _far(pick).mean(), 1),
    ]


def _figure_3_resamples(pick: pd.DataFrame, far: np.ndarray, n_boot: int, rng) -> np.ndarray:
    """``(n_boot, 3)``: per bootstrap round (:func:`rnnlib.stats.bootstrap_rounds`), Spearman's
    rho of the RNN and TM scores and rho(TM, count) - rho(RNN, count), over one resample of the
    pairs, and the share of ``far`` (``(len(pick),) bool``) over a second resample."""

    def statistic(pairs, again):
        ranks = pick.iloc[pairs][["rnn", "tm", "count"]].rank()
        return (
            ranks["rnn"].corr(ranks["tm"]),
            ranks["tm"].corr(ranks["count"]) - ranks["rnn"].corr(ranks["count"]),
            far[again].mean(),
        )

    return bootstrap_rounds(len(pick), statistic, n_boot, rng, draws=2)


def figure_3_claims(pick: pd.DataFrame, seed: int, n_boot: int = N_BOOT) -> dict[str, claims.Check]:
    """The checks of C-A-F3-1 (weakly correlated), C-A-F3-2 (as many scored radically
    differently) and C-A-F3-3 (the network follows the pair's count less), with 95% bootstrap
    intervals over the drawn pairs (``n_boot`` resamples, ``default_rng(seed + 7)``)."""
    r, far = _correlations(pick), _far(pick)
    stats = _figure_3_resamples(pick, far, n_boot, np.random.default_rng(seed + 7))
    lo, hi = percentile_interval(stats, axis=0, nan=True)
    corr_gap = float(pick["tm"].rank().corr(pick["count"].rank()) - r["count_rnn"])
    over = "95% bootstrap over the drawn pairs"
    return {
        "C-A-F3-1": claims.at_most(
            r["spearman"],
            0.5,
            "Spearman ρ of the RNN and TM scores",
            low=lo[0],
            high=hi[0],
            note=f"'weakly correlated' read as ρ at most 0.5; {over}",
        ),
        "C-A-F3-2": claims.at_least(
            far.mean(),
            0.3,
            "share of pairs whose standardised scores differ by more than one standard deviation",
            low=lo[2],
            high=hi[2],
            note="'as many scored radically differently' read as at least 30%",
        ),
        "C-A-F3-3": claims.intervals_above(
            [("ρ(TM, count) − ρ(RNN, count)", corr_gap, lo[1], hi[1])],
            note=f"Spearman correlations with the pair's count in training; {over}",
        ),
    }


# -- Tables 2 and 3 -----------------------------------------------------------------------------
@dataclass
class LongPhrases:
    """The source phrases of A Tables 2-3 (:func:`long_phrases`).

    ``long``: the rows of the scored frame whose source has at least ``min_source_words``
    words; ``groups``: ``"frequent"`` and ``"rare"`` -> every such source seen at least
    ``frequent_count`` / at most ``rare_count`` times in training; ``chosen``: the same keys ->
    the ``phrases_per_group`` sources drawn from each, in the frame's order."""

    long: pd.DataFrame
    groups: dict[str, list]
    chosen: dict[str, list]


def long_phrases(frame: pd.DataFrame, params: dict[str, Any]) -> LongPhrases:
    """The long source phrases of ``frame`` (:func:`scored_frame`), frequent and rare, and those
    drawn for A Tables 2-3 (``numpy.random.default_rng(seed)``, the frequent group first)."""
    long = frame[frame["src_len"] >= params["min_source_words"]]
    by_src = long.groupby("src")["src_count"].first()
    groups = {
        "frequent": by_src[by_src >= params["frequent_count"]].index.tolist(),
        "rare": by_src[by_src <= params["rare_count"]].index.tolist(),
    }
    rng = np.random.default_rng(params["seed"])
    n = params["phrases_per_group"]
    chosen = {
        g: [srcs[i] for i in np.sort(rng.choice(len(srcs), size=min(n, len(srcs)), replace=False))]
        if srcs
        else []
        for g, srcs in groups.items()
    }
    return LongPhrases(long, groups, chosen)


def _top3(cand: pd.DataFrame, score: str) -> list[tuple]:
    """The three targets of ``cand`` (one source's rows) with the highest ``score``."""
    return cand.sort_values(score, ascending=False, kind="stable")["tgt"].head(3).tolist()


def _overlap(tm3: list, rnn3: list, candidates: int) -> float:
    """The share of the top-3 targets the translation model and the network have in common."""
    return len(set(tm3) & set(rnn3)) / max(1, min(3, candidates))


def _bracket(words: Sequence[str]) -> str:
    return "[" + " ".join(words) + "]"


def _mean_or_nan(x: Sequence[float]) -> float:
    return float(np.mean(x)) if len(x) else float("nan")


def table_2(phrases: LongPhrases) -> pd.DataFrame:
    """A Table 2: for each drawn source (index: group, source), how often it was seen and the
    three best targets by the translation model's direct probability and by the network."""
    rows = []
    for g, srcs in phrases.chosen.items():
        for s in srcs:
            cand = phrases.long[phrases.long["src"] == s]
            rows.append(
                {
                    "group": g,
                    "source": " ".join(s),
                    "seen": int(cand["src_count"].iloc[0]),
                    "translation model": " · ".join(_bracket(t) for t in _top3(cand, "tm")),
                    "RNN Encoder–Decoder": " · ".join(_bracket(t) for t in _top3(cand, "rnn")),
                }
            )
    columns = ["group", "source", "seen", "translation model", "RNN Encoder–Decoder"]
    return pd.DataFrame(rows, columns=columns).set_index(["group", "source"])


def table_2_numbers(phrases: LongPhrases, params: dict[str, Any]) -> list[Number]:
    """Table 2's settings, the sizes of its groups, the mean top-3 overlap of the drawn frequent
    and rare sources and the mean length of their top-3 targets by each model."""
    overlap = {g: [] for g in phrases.chosen}
    len_tm, len_rnn = [], []
    for g, srcs in phrases.chosen.items():
        for s in srcs:
            cand = phrases.long[phrases.long["src"] == s]
            tm3, rnn3 = _top3(cand, "tm"), _top3(cand, "rnn")
            overlap[g].append(_overlap(tm3, rnn3, len(cand)))
            len_tm += [len(t) for t in tm3]
            len_rnn += [len(t) for t in rnn3]
    return [
        Number("cho-min-words", params["min_source_words"]),
        Number("cho-frequent-count", params["frequent_count"]),
        Number("cho-rare-count", params["rare_count"]),
        Number("cho-n-frequent", len(phrases.groups["frequent"])),
        Number("cho-n-rare", len(phrases.groups["rare"])),
        Number("cho-overlap-frequent", _mean_or_nan(overlap["frequent"]), 2),
        Number("cho-overlap-rare", _mean_or_nan(overlap["rare"]), 2),
        Number("cho-len-tm", _mean_or_nan(len_tm), 2),
        Number("cho-len-rnn", _mean_or_nan(len_rnn), 2),
        Number("cho-t2-sources", len(phrases.groups["frequent"]) + len(phrases.groups["rare"])),
    ]


def per_source(phrases: LongPhrases, tgt_vocab) -> pd.DataFrame:
    """One row per source of both groups (all of them, not only the drawn ones; a source in both
    groups once in each): ``group``, ``overlap`` of the two top-3 lists, ``len_gap`` (mean
    length of the translation model's top-3 targets minus the network's, in words) and
    ``known_gap`` (the network's top-3 share of targets whose every word is in the target
    shortlist ``tgt_vocab`` minus the translation model's)."""

    def in_shortlist(words):
        return bool((np.asarray(tgt_vocab.encode(list(words))) != UNK).all())

    rows = []
    for g in ("frequent", "rare"):
        sub = phrases.long[phrases.long["src"].isin(set(phrases.groups[g]))]
        for _, cand in sub.groupby("src", sort=False):
            tm3, rnn3 = _top3(cand, "tm"), _top3(cand, "rnn")
            rows.append(
                {
                    "group": g,
                    "overlap": _overlap(tm3, rnn3, len(cand)),
                    "len_gap": np.mean([len(t) for t in tm3]) - np.mean([len(t) for t in rnn3]),
                    "known_gap": np.mean([in_shortlist(t) for t in rnn3])
                    - np.mean([in_shortlist(t) for t in tm3]),
                }
            )
    return pd.DataFrame(rows, columns=["group", "overlap", "len_gap", "known_gap"])


def table_2_claims(
    phrases: LongPhrases, tgt_vocab, params: dict[str, Any], n_boot: int = N_BOOT
) -> dict[str, claims.Check]:
    """The checks of C-A-T2-1 (the network's choices closer to literal translations: fewer
    words outside the shortlist), C-A-T2-2 (shorter) and C-A-T2-3 (the two lists further apart
    for rare sources), with 95% bootstrap intervals over the sources of :func:`per_source`:
    :func:`rnnlib.stats.bootstrap_mean` for the first two and
    :func:`rnnlib.stats.mean_difference` (frequent against rare) for the third, all from one
    generator ``default_rng(seed + 8)`` in that order."""
    src = per_source(phrases, tgt_vocab)
    boot = np.random.default_rng(params["seed"] + 8)
    note = (
        f"{len(src)} source phrases of at least {params['min_source_words']} words, frequent "
        "and rare; 95% bootstrap over the sources"
    )
    out = {}
    if len(src) >= 2:
        known = bootstrap_mean(src["known_gap"], n_boot, boot)
        label = "share of the top-3 targets' words in the target shortlist, RNN − TM"
        out["C-A-T2-1"] = claims.intervals_above(
            [(label, *known)],
            note=note + "; 'literal, not garbage' read as fewer words outside the shortlist",
        )
        length = bootstrap_mean(src["len_gap"], n_boot, boot)
        label = "mean length of the top-3 targets, TM − RNN (words)"
        out["C-A-T2-2"] = claims.intervals_above([(label, *length)], note=note)
    else:
        for claim in ("C-A-T2-1", "C-A-T2-2"):
            out[claim] = claims.not_measurable("fewer than two long source phrases in the groups")
    freq, rare = (src.loc[src["group"] == g, "overlap"].to_numpy() for g in ("frequent", "rare"))
    if len(freq) >= 2 and len(rare) >= 2:
        gap = mean_difference(freq, rare, n_boot, boot)
        out["C-A-T2-3"] = claims.intervals_above(
            [("top-3 overlap of TM and RNN, frequent − rare sources", *gap)],
            note=f"{len(freq)} frequent and {len(rare)} rare sources; 95% bootstrap within "
            "each group",
        )
    else:
        out["C-A-T2-3"] = claims.not_measurable(
            "fewer than two frequent or two rare long source phrases"
        )
    return out


@dataclass
class Table3:
    """A Table 3 (:func:`table_3_samples`): ``table`` (index: group, source); ``in_table``: for
    each shown sample, whether the phrase table has it for its source; ``top_share``: for each
    source, the share of its samples that are its most frequent one."""

    table: pd.DataFrame
    in_table: list[bool]
    top_share: list[float]


def table_3_samples(phrases: LongPhrases, rnn: RNNRow, corpus, n_samples: int, seed: int) -> Table3:
    """A Table 3: ``n_samples`` ancestral samples from the network (:func:`rnnlib.search.sample`,
    one ``torch.Generator`` seeded with ``seed`` on the network's device, the sources in order)
    for each source of Table 2; the five best distinct samples by the network's score with how
    often each was drawn, a star on those the phrase table lacks for that source."""
    gen = torch.Generator(device=rnn.scorer.device).manual_seed(seed)
    rows, in_table, top_share = [], [], []
    for g, srcs in phrases.chosen.items():
        for s in srcs:
            src = source_batch([corpus.src_vocab.encode(s)])
            hyps = sample(rnn.model, src, n=n_samples, generator=gen)[0]
            counts, best = {}, {}
            for h in hyps:
                words = tuple(corpus.tgt_vocab.decode(h.tokens))
                counts[words] = counts.get(words, 0) + 1
                best[words] = h.score
            top = sorted(counts, key=lambda w: -best[w])[:5]
            known = set(phrases.long[phrases.long["src"] == s]["tgt"])
            in_table += [w in known for w in top]
            top_share.append(max(counts.values()) / len(hyps))
            shown = " · ".join(
                f"{_bracket(w)} (×{counts[w]})" + ("" if w in known else " *") for w in top
            )
            rows.append({"group": g, "source": " ".join(s), "samples (top 5 by score)": shown})
    columns = ["group", "source", "samples (top 5 by score)"]
    table = pd.DataFrame(rows, columns=columns).set_index(["group", "source"])
    return Table3(table, in_table, top_share)


def table_3_numbers(t3: Table3, n_samples: int) -> list[Number]:
    """The samples per source, the share (%) of the shown samples in the phrase table and the
    mean share (%) of the most frequent sample."""
    return [
        Number("cho-n-samples", n_samples),
        Number("cho-in-table", 100 * _mean_or_nan(t3.in_table), 1),
        Number("cho-top-share", 100 * _mean_or_nan(t3.top_share), 1),
    ]


def table_3_claims(
    t3: Table3, n_samples: int, seed: int, n_boot: int = N_BOOT
) -> dict[str, claims.Check]:
    """The checks of C-A-T3-1 (the samples' counts concentrated: the most frequent sample at
    least 10% of the draws, with a 95% :func:`rnnlib.stats.bootstrap_mean` interval over the
    sources, ``default_rng(seed + 9)``, from two sources on) and C-A-T3-2 (the samples overlap
    the phrase table, but not completely)."""
    share, in_table = t3.top_share, t3.in_table
    if not share:
        c1 = claims.not_measurable("no sources were drawn")
    else:
        mean, lo, hi = _mean_or_nan(share), None, None
        if len(share) >= 2:
            _, lo, hi = bootstrap_mean(share, n_boot, np.random.default_rng(seed + 9))
        c1 = claims.at_least(
            mean,
            0.1,
            f"share of the {n_samples} samples that are the most frequent one, mean over "
            f"{len(share)} sources",
            low=lo,
            high=hi,
            note="'counts are concentrated' (the paper's example: 24 of 50) read as at least "
            "10%; 95% bootstrap over the sources; whether that sample is a correct translation "
            "is read from the table",
        )
    if not in_table:
        c2 = claims.not_measurable("no samples were drawn")
    else:
        shown, inside = len(in_table), sum(in_table)
        c2 = claims.all_true(
            [
                (
                    f"some shown samples are in the phrase table ({inside} of {shown})",
                    any(in_table),
                ),
                (f"some are not ({shown - inside})", not all(in_table)),
            ]
        )
    return {"C-A-T3-1": c1, "C-A-T3-2": c2}


# -- where the time goes, and the set-up -------------------------------------------------------
def stages_table(base: BaselineRow, rnn: RNNRow, cslm, timing, eval_nbest: int) -> pd.DataFrame:
    """Seconds of each stage (index: stage; 1 digit), as the run that computed it measured
    them: the phrase-based system's, the network's training and scoring, the CSLM's training
    (``cslm``: :class:`rnnlib.experiments.cho2014_cslm.CSLMRows`), the search with and without
    the CSLM (``timing``: :class:`rnnlib.experiments.cho2014_cslm.SearchTiming`, measured in
    this build), and each row's MERT and evaluation per seed."""
    first, n = base.first_run, len(timing.sentences)
    rows = [
        ("word alignment (shared with the baseline chapter when cached)", first.alignment),
        ("phrase table (every extracted pair)", first.phrase_table),
        ("language model", first.lm),
        ("training the RNN Encoder-Decoder", rnn.scorer.artifact),
        ("scoring every usable pair", rnn.feature),
        ("training the CSLM", cslm.artifact),
    ]
    rows = [(stage, art.meta["wall_time_s"]) for stage, art in rows]
    rows += [
        (
            f"CSLM inside the search: {n} dev sentence{'s' * (n != 1)} (this build)",
            timing.with_cslm,
        ),
        ("the same without the CSLM (this build)", timing.without_cslm),
    ]
    for name, runs in (("Baseline", base.runs), ("+RNN", rnn.runs)):
        for s, r in runs.items():
            rows.append((f"{name}: MERT, seed {s}", r.tuned.meta["wall_time_s"]))
            rows.append(
                (
                    f"{name}: decoding dev and test ({eval_nbest}-best), seed {s}",
                    r.evaluation.meta["wall_time_s"],
                )
            )
    for name, runs in cslm.runs.items():
        for s, r in runs.items():
            rows.append((f"{name}: MERT on rescored lists, seed {s}", r.tuned.meta["wall_time_s"]))
            rows.append(
                (f"{name}: rescoring dev and test, seed {s}", r.evaluation.meta["wall_time_s"])
            )
    frame = pd.DataFrame([{"stage": stage, "seconds": sec} for stage, sec in rows])
    return frame.set_index("stage").round(1)


def _set_up(t: TrainConfig) -> str:
    clip = "no clipping" if t.clip_norm is None else f"L2 norm clipped at {t.clip_norm:g}"
    return f"{t.optimizer} (ε {t.eps:g}, ρ {t.rho:g}), {t.batch_size} {t.batching} pairs, {clip}"


def recipe_table(base: BaselineRow, rnn: RNNRow, params: dict[str, Any]) -> pd.DataFrame:
    """Paper A's set-up beside this run's (index: setting; columns ``Cho et al. 2014``,
    ``this run`` and the chapter ``parameters`` that set it): paper A's sizes and training as
    the library keeps them (the presets ``paper-cho2014`` and ``paper-a``)."""
    p = params
    mc, tc, art = rnn.scorer.model_config, rnn.scorer.train_config, rnn.scorer.artifact
    pm, pt = preset("paper-cho2014"), dataclasses.replace(tc, **TRAIN_PRESETS["paper-a"])
    data, seeds = base.data, p["mert_seeds"]
    tune = (
        len(data.dev_src)
        if p["tune_sentences"] is None
        else min(p["tune_sentences"], len(data.dev_src))
    )
    cslm_sizes = (
        f"{p['cslm_order']}-gram, {p['cslm_emb']}, {p['cslm_hidden1']} and {p['cslm_hidden2']}"
    )
    recipe = [
        ("corpus", "WMT'14 English→French (the network: the phrase table of 348M words)",
         f"{p['corpus']}: {len(data.train_src):,} training pairs", "corpus, max_train"),
        ("pairs the network trains on", "every unique pair of the phrase table",
         f"{len(rnn.scorer.train_pairs):,} of the {len(rnn.scorer.all_pairs):,} unique pairs, "
         "drawn with the seed", "rnn_sample, seed"),
        ("shortlists (source / target)", f"{pm.src_vocab:,} / {pm.tgt_vocab:,}",
         f"{mc.src_vocab:,} / {mc.tgt_vocab:,}", "src_vocab, tgt_vocab"),
        ("hidden units, embedding rank, maxout units", f"{pm.hidden}, {pm.emb}, {pm.maxout}",
         f"{mc.hidden}, {mc.emb}, {mc.maxout}", "model_preset"),
        ("optimiser, minibatch", _set_up(pt) + " (clipping: none stated)", _set_up(tc),
         "(paper A's set-up)"),
        ("training length", "about three days",
         f"{int(art.extra['updates']):,} updates ({art.extra['epochs']:.2f} passes)",
         "rnn_updates"),
        ("CSLM: order, projection, rectified layers", "7-gram, 512, 1536 and 1024", cslm_sizes,
         "cslm_order, cslm_emb, cslm_hidden1, cslm_hidden2"),
        ("CSLM: training",
         "target side and 712M words of news, until the dev perplexity stopped improving",
         f"target side of the training pairs, {p['cslm_updates']:,} Adam updates "
         f"(lr {p['cslm_lr']:g})", "cslm_updates, cslm_lr"),
        ("CSLM: use", "scores partial translations in the search",
         f"rescores {p['eval_nbest']}-best lists (mode {p['rescore_mode']})",
         "rescore_mode, eval_nbest"),
        ("phrase-based system", "Moses, default settings",
         f"the book's: {p['lm_order']}-gram LM, stack {p['stack_size']}, {p['ttable_limit']} "
         f"options a span, distortion {p['distortion_limit']}",
         "lm_order, stack_size, ttable_limit, distortion_limit"),
        ("MERT", "newstest2012+2013, one run a row",
         f"the first {tune:,} dev sentences, {seeds} seed{'s' * (seeds != 1)} a row, at most "
         f"{p['mert_iterations']} iterations", "tune_sentences, mert_seeds, mert_iterations"),
        ("dev and test sets", "newstest2012+2013; newstest2014 (3,003 sentences)",
         f"{len(data.dev_src):,} dev and {len(data.test_src):,} test sentences", "max_eval"),
    ]  # fmt: skip
    columns = ["setting", "Cho et al. 2014", "this run", "parameters"]
    return pd.DataFrame(recipe, columns=columns).set_index("setting")


__all__ = [
    "BaselineRow",
    "LongPhrases",
    "N_BOOT",
    "Number",
    "PAPER_ROWS",
    "PhraseScorer",
    "RNNRow",
    "SCORER_MERT_SEED",
    "SCORER_PARAMS",
    "Table3",
    "baseline_row",
    "bleu_of",
    "cho2014_corpus",
    "cho2014_params",
    "dev_nll_curve",
    "figure_3",
    "figure_3_claims",
    "figure_3_numbers",
    "figure_3_pairs",
    "load_scored",
    "load_scorer",
    "long_phrases",
    "mert_runs",
    "per_source",
    "phrase_scorer",
    "recipe_table",
    "rnn_row",
    "rnn_weights",
    "scored_frame",
    "scored_pairs",
    "scorer_numbers",
    "scorer_run",
    "scorer_variant",
    "seeds_interval",
    "signature",
    "stages_table",
    "table_1",
    "table_1_claims",
    "table_1_numbers",
    "table_2",
    "table_2_claims",
    "table_2_numbers",
    "table_3_claims",
    "table_3_numbers",
    "table_3_samples",
    "table_frame",
    "train_key",
]
