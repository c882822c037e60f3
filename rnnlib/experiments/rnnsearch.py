"""Paper B's experiment (chapter ``rnnsearch``): RNNsearch against RNNencdec, Bahdanau et al. 2015.

Everything the chapter computes, one function per item it shows:

* :meth:`RNNsearchExperiment.start` -- the chapter's parameters, corpus, device and test subset;
* :func:`train_runs` -- the five models (``rnnsearch/run``): RNNencdec-30/50, RNNsearch-30/50
  and RNNsearch-50⋆, RNNsearch-50 continued with early stopping, and the Adadelta run;
* :func:`table_2`, :func:`training_numbers`, :func:`dev_nll`, :func:`table_2_claims` -- B Table 2
  (learning statistics) and the claims on dev NLL and time per update;
* :func:`curves_figure`, :func:`optimiser_figure` -- training/dev curves, the chosen optimiser
  against the paper's Adadelta;
* :func:`translations`, :func:`table_1`, :func:`table_1_numbers`, :func:`paired_tests`,
  :func:`table_1_claims` -- B Table 1 (BLEU, All and No UNK) with paired bootstrap differences;
* :func:`bleu_by_length`, :func:`bleu_by_length_figure`, :func:`length_buckets`,
  :func:`figure_2_claims` -- B Fig. 2 (BLEU against source length, with bands);
* :func:`alignment_panels`, :func:`alignment_figure`, :func:`alignment_numbers`,
  :func:`alignment_claims` -- B Fig. 3 (alignments of RNNsearch-50, in greyscale);
* :func:`table_3`, :func:`long_sentence_claim` -- B Table 3 (the longest test sentences);
* :func:`recipe` -- the paper's recipe beside this run's parameters.

Artifacts keep the kinds and configs the chapter has always used (``rnnsearch/run``,
``rnnsearch/dev_nll``, ``rnnsearch/translations``, ``rnnsearch/alignments``). Every interval
comes from :mod:`rnnlib.stats`; the claims' checks come back as :class:`ClaimCheck` so that the
chapter records them (:func:`rnnlib.book.claims.record`) in its own cells and order.

Equations and items
-------------------
- B Table 1: BLEU on the test set, All and No UNK; Table 2: learning statistics; Table 3: long
  sentences; Fig. 1: the model (:mod:`rnnlib.experiments.diagrams`); Fig. 2: BLEU by sentence
  length; Fig. 3: the weights alpha_ij of Eq. 6.

Deviations
----------
- Every departure from the paper's recipe is a chapter parameter, listed by :func:`recipe`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Callable

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
import torch

from .. import stats
from ..batch import BATCH_FORMAT
from ..bleu import CorpusBleu, corpus_bleu, length_edges, no_unk_mask, sentence_bleu
from ..book import claims, papers
from ..book.claims import ClaimCheck
from ..book.corpus_params import corpus_config
from ..book.plotting import attention_plot
from ..book.style import HEIGHT, WIDTH, system_colors
from ..cache import Artifact, ArtifactCache, config_hash
from ..config import ModelConfig
from ..corpus.dataset import Corpus, prepare_corpus
from ..device import resolve_device
from ..fast.precision import cpu_bf16_instructions, resolve_bf16
from ..smt.rnn_scorer import score_pairs
from ..ragged import ParallelArrays
from ..specials import UNK
from ..train import TrainConfig
from ..translate import translate
from .baseline import baseline_params, baseline_system
from .training_runs import decode_run, length_filter, load_model, read_lines, run_logs, train_run

#: the five models, in the order of the paper's Table 1
NAMES = ["RNNencdec-30", "RNNsearch-30", "RNNencdec-50", "RNNsearch-50", "RNNsearch-50*"]
#: the names as printed (the paper's star)
SHOWN = {n: n.replace("*", "⋆") for n in NAMES}
#: the names of the paper's Table 2
TABLE2_NAME = {
    "RNNencdec-30": "RNNenc-30",
    "RNNencdec-50": "RNNenc-50",
    "RNNsearch-30": "RNNsearch-30",
    "RNNsearch-50": "RNNsearch-50",
    "RNNsearch-50*": "RNNsearch-50*",
}
#: Fig. 2's curves, in the paper's legend order
CURVES = ["RNNsearch-50", "RNNsearch-30", "RNNencdec-50", "RNNencdec-30"]
#: Fig. 2: buckets with fewer sentences are too noisy to carry a claim
MIN_BUCKET = 20
#: the subsets of Table 1's columns
SUBSETS = {"all": "All", "no_unk": "No UNK"}


def shown(name: str) -> str:
    """A system's name as printed (RNNsearch-50⋆; ``phrase-based`` as it is)."""
    return SHOWN.get(name, name)


def glue_key(name: str) -> str:
    """A system's name in a glue name: ``RNNsearch-50*`` -> ``rnnsearch-50star``."""
    return name.lower().replace("*", "star")


# -- the experiment's setting ----------------------------------------------------------------------
@dataclass
class RNNsearchExperiment:
    """The chapter's setting: its parameters ``p`` (a dict), the prepared corpus, the artifact
    cache, the configs from the parameters (``config``: :meth:`rnnlib.book.chapter.Chapter.config`),
    the device and precision, and the evaluated sentences (the first ``n_test`` of test, the
    first ``max_dev`` of dev)."""

    p: dict[str, Any]
    corpus: Corpus
    cache: ArtifactCache
    config: Callable[..., Any]
    root: Path
    device: torch.device
    bf16: bool
    n_test: int
    dev: ParallelArrays  # the dev pairs of the dev NLL
    dev_index: np.ndarray  # (n,) the dev sentences of the dev BLEU curve

    @classmethod
    def start(cls, ch) -> "RNNsearchExperiment":
        """Set torch's threads, resolve the device and bf16, prepare the corpus (cached) and
        choose the evaluated test and dev sentences, from the chapter ``ch``'s parameters."""
        p = ch.params
        if p["len_short"] > p["len_long"]:
            raise ValueError(
                f"parameter 'len_short' = {p['len_short']} is larger than "
                f"'len_long' = {p['len_long']}"
            )
        if p["threads"] is not None:
            torch.set_num_threads(p["threads"])
        device = resolve_device(p["device"])
        # bf16=None: only where the hardware has it (emulated bf16 is slower than fp32)
        bf16 = resolve_bf16(p["bf16"], device)
        corpus = prepare_corpus(corpus_config(p), ch.cache)
        n_test = len(corpus.test) if p["max_test"] is None else min(p["max_test"], len(corpus.test))
        dev = corpus.dev
        if p["max_dev"] is not None:
            dev = dev.select(np.arange(min(p["max_dev"], len(dev))))
        dev_index = np.arange(min(p["dev_bleu_sentences"], len(dev)))
        return cls(p, corpus, ch.cache, ch.config, ch.root, device, bf16, n_test, dev, dev_index)

    # the evaluated test sentences: the first n_test
    @property
    def test(self) -> np.ndarray:
        """``(n_test,)``: indices of the evaluated test sentences."""
        return np.arange(self.n_test)

    @property
    def src_len(self) -> np.ndarray:
        """``(n_test,)``: source length (tokens) of each evaluated test sentence."""
        return self.corpus.test.src.lengths[: self.n_test]

    @cached_property
    def test_refs(self) -> list[str]:
        """The references of the evaluated test sentences (detokenized)."""
        refs = self.corpus.references("test")[0]
        return [refs[i] for i in self.test]

    @cached_property
    def known(self) -> np.ndarray:
        """``(n_test,)`` bool: B Table 1's "No UNK" subset (no unknown word in source or
        reference)."""
        test = self.corpus.test
        return no_unk_mask([test.src[i] for i in self.test], [test.tgt[i] for i in self.test])

    @property
    def dev_bleu_config(self) -> dict | None:
        """How the dev BLEU curve is measured (part of a run's key); ``None``: no curve."""
        return {"sentences": len(self.dev_index), "beam_size": 1} if len(self.dev_index) else None

    def model_config(self, arch: str) -> ModelConfig:
        """The model config of ``arch`` (``rnnsearch`` or ``rnnencdec``) from the parameters."""
        vocab = {"src_vocab": len(self.corpus.src_vocab), "tgt_vocab": len(self.corpus.tgt_vocab)}
        return self.config(ModelConfig, arch=arch, **vocab)

    def train_config(self, updates: int, **overrides) -> TrainConfig:
        """The training config of a run of ``updates`` updates (the resolved device: "auto"
        would key CPU and GPU runs alike)."""
        batch = max(80, self.p["batch_size"])
        return self.config(
            TrainConfig,
            max_updates=updates,
            checkpoint_every=None,
            eval_batch_size=batch,
            device=self.device.type,
            bf16=self.bf16,
            **overrides,
        )

    def to_words(self, ids) -> list[str]:
        """Target-side token ids -> words."""
        return self.corpus.tgt_vocab.decode(ids)

    def dev_bleu(self, model: torch.nn.Module) -> float:
        """Dev BLEU of ``model`` (greedy search on the fixed dev subset ``dev_index``)."""
        sources = [self.dev.src[i] for i in self.dev_index]
        refs = self.corpus.references("dev")[0]
        hyps = translate(model, sources, beam_size=1, batch_size=self.p["decode_batch"])
        out = [self.corpus.detokenize(self.to_words(h.tokens)) for h in hyps]
        return corpus_bleu(out, [refs[i] for i in self.dev_index]).score


# -- training --------------------------------------------------------------------------------------
@dataclass
class Runs:
    """The trained models: ``runs`` (name -> training artifact, :data:`NAMES`), their ``logs``
    (:func:`rnnlib.experiments.training_runs.run_logs`), the Adadelta run (or ``None``)."""

    runs: dict[str, Artifact]
    logs: dict[str, dict[str, pd.DataFrame]]
    arch: dict[str, str]
    adadelta: Artifact | None = None

    def model(self, ex: RNNsearchExperiment, name: str) -> torch.nn.Module:
        """The delivered parameters of model ``name``, on the experiment's device."""
        return load_model(self.runs[name], ex.model_config(self.arch[name])).to(ex.device)


def star_is_search50(runs: Runs) -> bool:
    """Whether RNNsearch-50⋆ delivers the parameters of RNNsearch-50: the continued run's lowest
    dev NLL is still the one at RNNsearch-50's best update, and both deliver the parameters of
    their lowest dev NLL. Then a comparison of the two compares a model with itself: no evidence
    for or against a claim (issue 23: no self-comparison)."""
    best = {n: runs.runs[n].extra["best"]["update"] for n in ("RNNsearch-50", "RNNsearch-50*")}
    return best["RNNsearch-50"] == best["RNNsearch-50*"]


#: the verdict of a claim that would compare RNNsearch-50⋆ with itself
SELF_COMPARISON = (
    "RNNsearch-50⋆ delivered the same parameters as RNNsearch-50 (its continuation found no "
    "lower dev NLL), so the claim would compare a model with itself"
)


def run_specs(ex: RNNsearchExperiment) -> dict[str, tuple[str, int, int]]:
    """``name -> (arch, max_len, updates)`` of the four models trained from scratch."""
    p = ex.p
    return {
        "RNNencdec-30": ("rnnencdec", p["len_short"], p["updates_encdec"]),
        "RNNsearch-30": ("rnnsearch", p["len_short"], p["updates_search"]),
        "RNNencdec-50": ("rnnencdec", p["len_long"], p["updates_encdec"]),
        "RNNsearch-50": ("rnnsearch", p["len_long"], p["updates_search"]),
    }


def _run(ex: RNNsearchExperiment, name: str, train: TrainConfig | None = None, **kw) -> Artifact:
    """One training run (``rnnsearch/run``) of model ``name`` on its length-filtered pairs."""
    arch, max_len, updates = run_specs(ex)[name]
    p, corpus = ex.p, ex.corpus
    train_all = corpus.train
    if p["max_train"] is not None:
        train_all = train_all.select(np.arange(min(p["max_train"], len(train_all))))
    pairs = train_all.select(length_filter(train_all, max_len))
    config = {
        "corpus_max_len": max_len,
        "max_train": p["max_train"],
        "max_dev": p["max_dev"],
        "batch_format": BATCH_FORMAT,
        "dev_bleu": ex.dev_bleu_config,
    }
    dev_bleu = ex.dev_bleu if ex.dev_bleu_config else None
    train = train or ex.train_config(updates)
    model = ex.model_config(arch)
    return train_run(
        ex.cache,
        "rnnsearch/run",
        config,
        model,
        train,
        pairs,
        ex.dev,
        dev_bleu,
        data=corpus.checksum,
        **kw,
    )


def train_runs(ex: RNNsearchExperiment) -> Runs:
    """The five models of B Table 1 (trained now where the cache lacks them): the four "-30"
    and "-50" models, then RNNsearch-50⋆, RNNsearch-50 continued to ``updates_star`` updates
    with early stopping on dev, then (unless the chosen optimiser is Adadelta) RNNsearch-50
    trained ``adadelta_updates`` updates with the paper's Adadelta."""
    p = ex.p
    specs = run_specs(ex)
    runs = {name: _run(ex, name, keep_state=(name == "RNNsearch-50")) for name in specs}
    star = ex.train_config(max(p["updates_star"], p["updates_search"]), patience=p["star_patience"])
    runs["RNNsearch-50*"] = _run(ex, "RNNsearch-50", star, parent=runs["RNNsearch-50"])
    adadelta = None
    if p["adadelta_updates"] and p["optimizer"] != "adadelta":
        ada = ex.train_config(p["adadelta_updates"], optimizer="adadelta", lr=1.0)
        adadelta = _run(ex, "RNNsearch-50", ada)
    logs = {name: run_logs(art) for name, art in runs.items()}
    arch = {name: specs[name.rstrip("*")][0] for name in NAMES}
    return Runs(runs, logs, arch, adadelta)


# -- Table 2 ---------------------------------------------------------------------------------------
def seconds_per_update(art: Artifact) -> float:
    """A run's training seconds over its updates."""
    return art.extra["seconds"] / max(1, art.extra["updates"])


def table_2(ex: RNNsearchExperiment, runs: Runs) -> pd.DataFrame:
    """B Table 2, learning statistics: per model (index ``(model, source)``) our run beside the
    paper's: updates, epochs, hours, seconds per update, device, the train NLL per sentence
    (mean over the last ``eval_every`` updates) and the dev NLL per sentence."""
    rows = []
    for name in NAMES:
        art, log = runs.runs[name], runs.logs[name]["train"]
        paper = papers.B_TABLE2[TABLE2_NAME[name]]
        train_nll = log["train_nll_sentence"].tail(max(1, ex.p["eval_every"])).mean()
        rows.append(
            {
                "model": SHOWN[name],
                "source": "this book",
                "updates": art.extra["updates"],
                "epochs": art.extra["epochs"],
                "hours": art.extra["seconds"] / 3600,
                "seconds per update": seconds_per_update(art),
                "device": art.extra["device"],
                "train NLL": train_nll,
                "dev NLL": art.extra["dev_nll"],
            }
        )
        rows.append(
            {
                "model": SHOWN[name],
                "source": "Bahdanau et al. (Table 2)",
                "updates": paper["updates"],
                "epochs": paper["epochs"],
                "hours": paper["hours"],
                "seconds per update": paper["hours"] * 3600 / paper["updates"],
                "device": paper["gpu"],
                "train NLL": paper["train_nll"],
                "dev NLL": paper["dev_nll"],
            }
        )
    table = pd.DataFrame(rows).set_index(["model", "source"])
    table["updates"] = table["updates"].map(lambda u: f"{u:,.0f}")
    rounding = {"epochs": 2, "hours": 3, "seconds per update": 3, "train NLL": 1, "dev NLL": 1}
    return table.round(rounding)


def training_numbers(ex: RNNsearchExperiment, runs: Runs) -> dict[str, tuple[Any, int | None]]:
    """``glue name -> (value, digits)``: the training set sizes, seconds per update (ours and
    the paper's ratio, B Table 2), the minutes spent, the updates of RNNsearch-50 and -50⋆."""
    r, own = runs.runs, [runs.runs[n] for n in run_specs(ex)]
    b2 = papers.B_TABLE2
    spu = {n: seconds_per_update(r[n]) for n in ("RNNsearch-50", "RNNencdec-50")}
    paper_spu = {n: b2[n]["hours"] / b2[n]["updates"] for n in ("RNNsearch-50", "RNNenc-50")}
    star_hours = (r["RNNsearch-50*"].extra["seconds"] - r["RNNsearch-50"].extra["seconds"]) / 3600
    total_hours = sum(a.extra["seconds"] for a in own) / 3600 + star_hours
    with_bleu = own + [r["RNNsearch-50*"]] + ([runs.adadelta] if runs.adadelta is not None else [])
    ada_minutes = runs.adadelta.extra["seconds"] / 60 if runs.adadelta is not None else 0
    return {
        "rns-len-short": (ex.p["len_short"], None),
        "rns-len-long": (ex.p["len_long"], None),
        "rns-pairs-short": (r["RNNsearch-30"].extra["train_pairs"], None),
        "rns-pairs-long": (r["RNNsearch-50"].extra["train_pairs"], None),
        "rns-spu-search50": (spu["RNNsearch-50"], 3),
        "rns-spu-encdec50": (spu["RNNencdec-50"], 3),
        "rns-spu-ratio": (spu["RNNsearch-50"] / spu["RNNencdec-50"], 2),
        "rns-paper-spu-ratio": (paper_spu["RNNsearch-50"] / paper_spu["RNNenc-50"], 2),
        "rns-total-minutes": (60 * total_hours, 1),
        "rns-devbleu-minutes": (sum(a.extra["bleu_seconds"] for a in with_bleu) / 60, 1),
        "rns-adadelta-minutes": (ada_minutes, 1),
        "rns-star-updates": (r["RNNsearch-50*"].extra["updates"], None),
        "rns-search50-updates": (r["RNNsearch-50"].extra["updates"], None),
    }


def star_stopped(ex: RNNsearchExperiment, runs: Runs) -> str:
    """How RNNsearch-50⋆ ended (early stopping or its update limit), and whether it delivers
    the same parameters as RNNsearch-50."""
    star = runs.runs["RNNsearch-50*"].extra
    best = star["best"]["update"]
    if star["stopped"] == "early_stopping":
        text = (
            f"stopped early: its dev NLL had not improved for {ex.p['star_patience']} "
            "evaluations in a row"
        )
    else:
        text = "reached its update limit (`updates_star`) before early stopping ended it"
    if star_is_search50(runs):
        more = star["updates"] - runs.runs["RNNsearch-50"].extra["updates"]
        return text + (
            f". Its lowest dev NLL is still the one at update {best}, so **RNNsearch-50⋆ "
            "delivers the same parameters as RNNsearch-50**: in its "
            f"{more:,} further updates at a constant learning rate the dev NLL did not go "
            "lower, and the claims that compare the two are not judged"
        )
    return text + f"; its lowest dev NLL was at update {best}"


def dev_nll(ex: RNNsearchExperiment, runs: Runs) -> dict[str, np.ndarray]:
    """``name -> (len(dev),)``: per-sentence dev NLL (nats, ``<end>`` included) of each model's
    delivered parameters, an artifact (``rnnsearch/dev_nll``) per model, looked up in
    :data:`NAMES` order."""

    def sentence_nll(name: str) -> np.ndarray:
        def make(out: Path, work: Path) -> None:
            model = runs.model(ex, name)
            nll = -score_pairs(model, ex.dev, batch_size=ex.p["decode_batch"])
            np.save(out / "nll.npy", nll)

        config = {"run": runs.runs[name].key, "sentences": len(ex.dev)}
        found = ex.cache.build("rnnsearch/dev_nll", config, make, data=ex.corpus.checksum)
        return np.load(found.file("nll.npy"))

    return {name: sentence_nll(name) for name in NAMES}


def table_2_claims(ex: RNNsearchExperiment, runs: Runs, nll: dict[str, np.ndarray]) -> list:
    """The claims of B Table 2, as :class:`ClaimCheck`: C-B-T2-1 (RNNsearch's dev NLL below
    RNNencdec's) and C-B-T2-2 (below again after longer training), paired bootstraps over the
    dev sentences (:func:`rnnlib.stats.paired_difference`); C-B-T2-3 (an RNNsearch update
    costs more), a bootstrap over each run's updates (:func:`rnnlib.stats.mean_difference`);
    C-B-T2-4 (every run logged Table 2's columns). The bootstraps share one generator seeded
    with ``seed``, drawn in that order; C-B-T2-2 is not judged, and draws nothing, when
    RNNsearch-50⋆ is RNNsearch-50 (:func:`star_is_search50`)."""
    p, n_boot = ex.p, ex.p["n_boot"]
    rng = np.random.default_rng(p["seed"])
    one_seed = (
        f"per-sentence dev NLL, paired bootstrap over the {len(ex.dev)} dev sentences "
        f"({n_boot} resamples); one training run per model, so the spread over training seeds "
        "is not measured"
    )
    pairs = (("RNNsearch-30", "RNNencdec-30"), ("RNNsearch-50", "RNNencdec-50"))
    lower = [
        (f"{SHOWN[e]} − {SHOWN[s]} dev NLL", *stats.paired_difference(nll[e], nll[s], n_boot, rng))
        for s, e in pairs
    ]
    same = star_is_search50(runs)
    if not same:
        longer = stats.paired_difference(nll["RNNsearch-50"], nll["RNNsearch-50*"], n_boot, rng)
    # wall seconds of every update: the log's training clock is cumulative
    spu = {
        n: np.diff(runs.logs[n]["train"]["seconds"].to_numpy(), prepend=0.0) for n in run_specs(ex)
    }
    slower = [
        (
            f"{SHOWN[s]} − {SHOWN[e]} seconds per update",
            *stats.mean_difference(spu[s], spu[e], n_boot, rng),
        )
        for s, e in pairs
    ]
    device = runs.runs["RNNsearch-50"].extra["device"]
    logged = ("updates", "epochs", "seconds", "device", "dev_nll")
    return [
        ClaimCheck("C-B-T2-1", claims.intervals_above(lower, note=one_seed), "rns-t2-claim1"),
        ClaimCheck(
            "C-B-T2-2",
            claims.not_measurable(SELF_COMPARISON)
            if same
            else claims.intervals_above(
                [("RNNsearch-50 − RNNsearch-50⋆ dev NLL", *longer)],
                note="the same run, continued; " + one_seed,
            ),
            "rns-t2-claim2",
        ),
        ClaimCheck(
            "C-B-T2-3",
            claims.intervals_above(
                slower,
                note=f"95% bootstrap over the updates of each run, on {device}; runs made at "
                "different times share the machine's load unevenly, which this interval does "
                "not cover",
            ),
            "rns-t2-claim3",
        ),
        ClaimCheck(
            "C-B-T2-4",
            claims.all_true(
                [
                    (
                        SHOWN[n],
                        all(k in runs.runs[n].extra for k in logged)
                        and len(runs.logs[n]["train"]) > 0,
                    )
                    for n in NAMES
                ],
                note="Table 2 above, from each run's log",
            ),
        ),
    ]


def dev_nll_numbers(runs: Runs) -> dict[str, tuple[float, int]]:
    """``glue name -> (value, digits)``: each model's dev NLL per sentence (B Table 2)."""
    return {f"rns-devnll-{glue_key(n)}": (runs.runs[n].extra["dev_nll"], 1) for n in NAMES}


# -- curves ----------------------------------------------------------------------------------------
def _curves(runs: Runs) -> dict[str, pd.DataFrame]:
    """The five models' logs in long form: ``train`` (the training NLL per token, a running
    mean of one window for every model), ``eval`` (dev NLL per token), ``bleu`` (dev BLEU)."""
    window = max(1, min(max(len(log["train"]) for log in runs.logs.values()) // 20, 200))
    parts: dict[str, list[pd.DataFrame]] = {"train": [], "eval": [], "bleu": []}
    for name in NAMES:
        log = runs.logs[name]
        smooth = log["train"]["train_nll_token"].rolling(window, min_periods=1).mean()
        train = pd.DataFrame({"update": log["train"]["update"], "train_nll_token": smooth})
        for kind, frame in (("train", train), ("eval", log["eval"]), ("bleu", log["bleu"])):
            parts[kind].append(frame.assign(model=SHOWN[name]))
    return {kind: pd.concat(frames, ignore_index=True) for kind, frames in parts.items()}


def curves_figure(ex: RNNsearchExperiment, runs: Runs):
    """Training curves of the five models (seaborn): the training NLL per target token (a
    running mean over the updates), the dev NLL per token at every evaluation, and the dev BLEU
    of the parameters with the lowest dev NLL so far. Returns the figure."""
    data = _curves(runs)
    colours = {SHOWN[n]: c for n, c in system_colors(NAMES).items()}
    dashes = {SHOWN[n]: (4, 2) if n.endswith("-30") else "" for n in NAMES}
    fig, axes = plt.subplots(1, 3, figsize=(2 * WIDTH, HEIGHT))
    panels = (
        ("train", "train_nll_token", "train NLL per token (running mean)", False),
        ("eval", "dev_nll_token", "dev NLL per token", True),
        ("bleu", "dev_bleu", f"dev BLEU ({len(ex.dev_index)} sentences, greedy)", True),
    )
    for ax, (kind, column, label, points) in zip(axes, panels):
        if len(data[kind]):
            sns.lineplot(
                data=data[kind],
                x="update",
                y=column,
                hue="model",
                style="model",
                palette=colours,
                dashes=dashes,
                marker="o" if points else None,
                markersize=4,
                estimator=None,
                errorbar=None,
                legend="auto" if ax is axes[0] else False,
                ax=ax,
            )
        ax.set(xlabel="update", ylabel=label)
    axes[0].legend(title=None, fontsize=8)
    fig.tight_layout()
    return fig


def optimiser_figure(ex: RNNsearchExperiment, runs: Runs) -> tuple[Any, str, list[Artifact]]:
    """Dev NLL per token against minutes of training: RNNsearch-50 and its continuation with
    the chapter's optimiser, and the same model with the paper's Adadelta (seaborn). Returns
    ``(figure, the comparison in words, the runs drawn)``."""
    p = ex.p
    chosen = runs.logs["RNNsearch-50*"]["eval"]
    label = f"{p['optimizer']} (lr {p['lr']:g}), the runs of this chapter"
    curves = [chosen.assign(optimiser=label)]
    compared = [runs.runs["RNNsearch-50*"]]
    text = "no Adadelta run was made here (`adadelta_updates` is 0, or the chosen optimiser is "
    text += "Adadelta)."
    if runs.adadelta is not None:
        ada = run_logs(runs.adadelta)["eval"]
        curves.append(ada.assign(optimiser="Adadelta (the paper's)"))
        compared.append(runs.adadelta)
        minutes, reached = ada["seconds"].iloc[-1] / 60, ada["dev_nll_token"].iloc[-1]
        same_time = np.interp(minutes, chosen["seconds"] / 60, chosen["dev_nll_token"])
        better = "lower" if same_time < reached else "not lower"
        text = (
            f"after {minutes:.1f} minutes of training the paper's Adadelta reaches a dev NLL of "
            f"{reached:.3f} nats per token; the chosen optimiser, after as many minutes, "
            f"{same_time:.3f} ({better})."
        )
    data = pd.concat(curves, ignore_index=True).assign(minutes=lambda d: d["seconds"] / 60)
    fig, ax = plt.subplots(figsize=(0.9 * WIDTH, HEIGHT))
    sns.lineplot(
        data=data,
        x="minutes",
        y="dev_nll_token",
        hue="optimiser",
        marker="o",
        markersize=4,
        estimator=None,
        errorbar=None,
        ax=ax,
    )
    ax.set(xlabel="minutes of training", ylabel="dev NLL per token")
    ax.legend(title=None)
    return fig, text, compared


# -- Table 1 ---------------------------------------------------------------------------------------
@dataclass
class Translations:
    """The test translations of every system: ``decoded`` ((name, subset) -> artifact of
    :func:`rnnlib.experiments.training_runs.decode_run`), their ``hyps`` (detokenized lines),
    the phrase-based system's ``base`` lines (or ``None``) and its evaluation artifact, the
    references ``refs`` per subset, the No UNK mask ``known (n_test,)`` and the ``trained``
    runs the translations come from."""

    trained: list[Artifact]
    decoded: dict[tuple[str, str], Artifact]
    hyps: dict[tuple[str, str], list[str]]
    refs: dict[str, list[str]]
    known: np.ndarray
    base: list[str] | None = None
    base_evaluation: Artifact | None = None
    systems: list[str] = field(default_factory=list)
    star_same: bool = False  # RNNsearch-50⋆ is RNNsearch-50 (:func:`star_is_search50`)

    def of(self, name: str, subset: str = "all") -> list[str]:
        """The translations of system ``name`` on ``subset`` (``all`` or ``no_unk``)."""
        if name == "phrase-based":  # it copies unknown words; nothing to forbid
            return self.base if subset == "all" else [h for h, k in zip(self.base, self.known) if k]
        return self.hyps[(name, subset)]

    @property
    def cited(self) -> list[Artifact]:
        """What Table 1, the paired tests, Fig. 2 and Table 3 are computed from: the runs, their
        translations and the phrase-based system's evaluation."""
        base = [self.base_evaluation] if self.base is not None else []
        return self.trained + list(self.decoded.values()) + base


def translations(ex: RNNsearchExperiment, runs: Runs) -> Translations:
    """The beam-search translations of the evaluated test sentences by the five models
    (``rnnsearch/translations``), on All and on the No UNK subset with ``[UNK]`` forbidden,
    and the phrase-based system of chapter ``baseline`` (when ``baseline`` is on and it
    translated at least ``n_test`` sentences)."""
    p, corpus, known = ex.p, ex.corpus, ex.known
    decoded = {}
    for name in NAMES:
        for subset in SUBSETS:
            art = runs.runs[name]
            index = ex.test if subset == "all" else ex.test[known]
            which = {
                "run": art.key,
                "sentences": len(index),
                "test_index": config_hash([int(i) for i in index]),
            }
            decoded[(name, subset)] = decode_run(
                ex.cache,
                "rnnsearch/translations",
                which,
                runs.model(ex, name),
                [corpus.test.src[i] for i in index],
                ex.to_words,
                corpus.detokenize,
                data=corpus.checksum,
                beam_size=p["beam_size"],
                batch_size=p["decode_batch"],
                forbid_unk=subset == "no_unk",
            )
    hyps = {key: read_lines(art.file("text.txt")) for key, art in decoded.items()}
    refs = ex.test_refs
    out = Translations(
        list(runs.runs.values()),
        decoded,
        hyps,
        {"all": refs, "no_unk": [r for r, k in zip(refs, known) if k]},
        known,
        systems=list(NAMES),
        star_same=star_is_search50(runs),
    )
    if p["baseline"]:
        result = baseline_system(corpus, baseline_params(ex.root, p["profile"], p), ex.cache)
        out.base_evaluation = result.evaluation
        base_text = read_lines(result.evaluation.file("test.txt"))
        if len(base_text) >= ex.n_test:
            out.base = base_text[: ex.n_test]
            out.systems.append("phrase-based")
    return out


def bleu_scores(tr: Translations) -> dict[tuple[str, str], CorpusBleu]:
    """``(system, subset) -> corpus BLEU`` (sacreBLEU) of every system on All and No UNK."""
    return {(n, s): corpus_bleu(tr.of(n, s), tr.refs[s]) for n in tr.systems for s in SUBSETS}


def _paper_row(name: str) -> dict[str, float]:
    return papers.B_TABLE1["Moses" if name == "phrase-based" else name]


def table_1(tr: Translations, scores: dict) -> pd.DataFrame:
    """B Table 1: test BLEU of every system on All and No UNK, beside the paper's."""
    rows = []
    for name in tr.systems:
        paper = _paper_row(name)
        model = "phrase-based (the paper: Moses)" if name == "phrase-based" else SHOWN[name]
        same = name == "RNNsearch-50*" and tr.star_same
        rows.append(
            {
                "model": model,
                "All": scores[(name, "all")].score,
                "No UNK": scores[(name, "no_unk")].score,
                "paper: All": paper["all"],
                "paper: No UNK": paper["no_unk"],
                "note": "= RNNsearch-50 (the same parameters)" if same else "",
            }
        )
    return pd.DataFrame(rows).set_index("model").round(2)


def table_1_numbers(ex: RNNsearchExperiment, tr: Translations, scores: dict) -> dict:
    """``glue name -> (value, digits)`` of Table 1's prose: the sentences, the unknown words of
    the No UNK subset and those generated (both must be 0 there), the minutes spent decoding,
    and each system's BLEU."""
    test = ex.corpus.test
    unk_in_subset = sum(
        int((test.src[i] == UNK).sum() + (test.tgt[i] == UNK).sum()) for i in ex.test[tr.known]
    )
    generated = {s: sum(tr.decoded[(n, s)].extra["unk_generated"] for n in NAMES) for s in SUBSETS}
    if unk_in_subset != 0 or generated["no_unk"] != 0:
        raise AssertionError("the No UNK column must hold no unknown word")
    numbers = {
        "rns-test-sentences": (ex.n_test, None),
        "rns-no-unk-sentences": (int(tr.known.sum()), None),
        "rns-no-unk-subset-unk": (unk_in_subset, None),
        "rns-no-unk-generated-unk": (generated["no_unk"], None),
        "rns-all-generated-unk": (generated["all"], None),
        "rns-beam": (ex.p["beam_size"], None),
        "rns-decode-minutes": (sum(a.extra["seconds"] for a in tr.decoded.values()) / 60, 1),
    }
    for name in tr.systems:
        numbers[f"rns-bleu-{glue_key(name)}"] = (scores[(name, "all")].score, 2)
        numbers[f"rns-bleu-nounk-{glue_key(name)}"] = (scores[(name, "no_unk")].score, 2)
    return numbers


def baseline_note(ex: RNNsearchExperiment, tr: Translations) -> str:
    """Why the phrase-based row is missing ("" when it is there)."""
    if tr.base is not None:
        return ""
    why = (
        "`baseline` is off."
        if not ex.p["baseline"]
        else (
            "the baseline chapter's profile translates fewer test sentences than this chapter "
            "evaluates."
        )
    )
    return "The phrase-based row is missing: " + why


def comparisons(tr: Translations) -> list[tuple[str, str, str]]:
    """``(claim, a, b)``: the differences a - b the paper's Table 1 claims rest on."""
    out = [
        ("C-B-T1-1", "RNNsearch-30", "RNNencdec-30"),
        ("C-B-T1-1", "RNNsearch-50", "RNNencdec-50"),
        ("C-B-T1-2", "RNNsearch-30", "RNNencdec-50"),
        ("C-B-T1-3", "RNNsearch-50", "RNNsearch-30"),
        ("C-B-T1-3", "RNNencdec-50", "RNNencdec-30"),
        ("C-B-T1-5", "RNNsearch-50*", "RNNsearch-50"),
    ]
    return out + ([("C-B-T1-6", "phrase-based", "RNNsearch-50*")] if tr.base is not None else [])


def paired_tests(ex: RNNsearchExperiment, tr: Translations) -> tuple[pd.DataFrame, dict]:
    """The paired bootstrap of every comparison of :func:`comparisons` on All and No UNK
    (:func:`rnnlib.stats.paired_bootstrap`, ``n_boot`` resamples). Returns the table
    (index ``(claim, comparison, column)``: difference, 95% interval, sacreBLEU's p, the
    paper's difference) and ``(a, b, subset) -> result``."""
    tests, rows = {}, []
    for claim, a, b in comparisons(tr):
        for subset, label in SUBSETS.items():
            if tr.star_same and {a, b} == {"RNNsearch-50*", "RNNsearch-50"}:
                rows.append(  # identical outputs: no difference to test, no p-value to show
                    {
                        "claim": claim,
                        "comparison": f"{shown(a)} − {shown(b)}",
                        "column": label,
                        "difference": np.nan,
                        "95% interval": "= RNNsearch-50",
                        "p (sacreBLEU)": np.nan,
                        "paper": _paper_row(a)[subset] - _paper_row(b)[subset],
                    }
                )
                continue
            res = stats.paired_bootstrap(
                tr.of(a, subset), tr.of(b, subset), tr.refs[subset], n_samples=ex.p["n_boot"]
            )
            tests[(a, b, subset)] = res
            rows.append(
                {
                    "claim": claim,
                    "comparison": f"{shown(a)} − {shown(b)}",
                    "column": label,
                    "difference": res["diff"],
                    "95% interval": f"[{res['low']:.2f}, {res['high']:.2f}]",
                    "p (sacreBLEU)": res["p_value"],
                    "paper": _paper_row(a)[subset] - _paper_row(b)[subset],
                }
            )
    table = pd.DataFrame(rows).set_index(["claim", "comparison", "column"])
    return table.round({"difference": 2, "p (sacreBLEU)": 4, "paper": 2}), tests


def _intervals(ex: RNNsearchExperiment, tests: dict, which: list[tuple[str, str, str]]):
    """Every difference a - b of ``which`` above 0 (paired bootstrap intervals)."""
    return claims.intervals_above(
        [
            (
                f"{shown(a)} − {shown(b)}, {SUBSETS[s]}",
                tests[(a, b, s)]["diff"],
                tests[(a, b, s)]["low"],
                tests[(a, b, s)]["high"],
            )
            for a, b, s in which
        ],
        note=f"test BLEU, paired bootstrap ({ex.p['n_boot']} resamples, 95%)",
    )


def table_1_claims(ex: RNNsearchExperiment, tr: Translations, tests: dict, scores: dict) -> list:
    """The claims of B Table 1, as :class:`ClaimCheck`: RNNsearch beats RNNencdec (C-B-T1-1),
    RNNsearch-30 even RNNencdec-50 (T1-2), "-50" beats "-30" (T1-3), longer training helps
    (T1-5), No UNK scores higher than All (T1-4), and the phrase-based system's lead shrinks
    on No UNK (T1-6)."""
    both = list(SUBSETS)
    same_data = [("RNNsearch-30", "RNNencdec-30"), ("RNNsearch-50", "RNNencdec-50")]
    longer = [("RNNsearch-50", "RNNsearch-30"), ("RNNencdec-50", "RNNencdec-30")]
    differences = {  # claim -> the differences a - b it rests on, in both columns
        "C-B-T1-1": same_data,
        "C-B-T1-2": [("RNNsearch-30", "RNNencdec-50")],
        "C-B-T1-3": longer,
        "C-B-T1-5": [("RNNsearch-50*", "RNNsearch-50")],
    }
    glue = {"C-B-T1-1": "rns-c1", "C-B-T1-2": "rns-c2", "C-B-T1-3": "rns-c3", "C-B-T1-5": "rns-c5"}
    out = [
        ClaimCheck(
            claim,
            claims.not_measurable(SELF_COMPARISON)
            if claim == "C-B-T1-5" and tr.star_same
            else _intervals(ex, tests, [(a, b, s) for a, b in pairs for s in both]),
            glue[claim],
        )
        for claim, pairs in differences.items()
    ]
    no_unk_higher = []
    for n in tr.systems:
        known, every = scores[(n, "no_unk")].score, scores[(n, "all")].score
        no_unk_higher.append((f"{shown(n)} ({known:.2f} > {every:.2f})", known > every))
    note = "No UNK and All are different sentence sets, so no paired interval applies"
    out.append(ClaimCheck("C-B-T1-4", claims.all_true(no_unk_higher, note=note), "rns-c4"))
    return out + [_phrase_based_claim(tr, tests)]


def _phrase_based_claim(tr: Translations, tests: dict) -> ClaimCheck:
    """C-B-T1-6: the phrase-based system ahead of RNNsearch-50⋆ on All, and by more on All
    than on No UNK (the two columns' intervals combined: conservative)."""
    if tr.base is None:
        return ClaimCheck(
            "C-B-T1-6",
            claims.not_measurable(
                "no phrase-based row: `baseline` is off or translates fewer test sentences"
            ),
            "rns-c6",
        )
    on_all = tests[("phrase-based", "RNNsearch-50*", "all")]
    known = tests[("phrase-based", "RNNsearch-50*", "no_unk")]
    check = claims.intervals_above(
        [
            ("phrase-based − RNNsearch-50⋆, All", on_all["diff"], on_all["low"], on_all["high"]),
            (
                "(phrase-based − RNNsearch-50⋆ on All) − (on No UNK)",
                on_all["diff"] - known["diff"],
                on_all["low"] - known["high"],
                on_all["high"] - known["low"],
            ),
        ],
        note="the second interval is conservative: the two columns' intervals combined",
    )
    moses, star = papers.B_TABLE1["Moses"], papers.B_TABLE1["RNNsearch-50*"]
    before = (
        f"the phrase-based system is {on_all['diff']:+.2f} BLEU from RNNsearch-50⋆ on All and "
        f"{known['diff']:+.2f} on No UNK (the paper: {moses['all'] - star['all']:+.2f} and "
        f"{moses['no_unk'] - star['no_unk']:+.2f}): the claim "
    )
    return ClaimCheck("C-B-T1-6", check, "rns-c6", before)


def gap_numbers(tests: dict) -> dict[str, tuple[float, int]]:
    """``glue name -> (value, 2)``: RNNsearch-50 − RNNencdec-50 on All with its interval, and
    the paper's difference."""
    d = tests[("RNNsearch-50", "RNNencdec-50", "all")]
    paper = papers.B_TABLE1["RNNsearch-50"]["all"] - papers.B_TABLE1["RNNencdec-50"]["all"]
    return {
        "rns-gap50": (d["diff"], 2),
        "rns-gap50-low": (d["low"], 2),
        "rns-gap50-high": (d["high"], 2),
        "rns-paper-gap50": (paper, 2),
    }


# -- Fig. 2 ----------------------------------------------------------------------------------------
def bleu_by_length(ex: RNNsearchExperiment, tr: Translations) -> dict[str, pd.DataFrame]:
    """B Fig. 2: ``system -> one row per source-length bucket`` (:func:`rnnlib.stats.
    bleu_by_length`: corpus BLEU and its bootstrap band per bucket) of the four curves of the
    paper and the phrase-based system. Every evaluated sentence is in one bucket."""
    p = ex.p
    edges = length_edges(min(p["bucket_width"], p["bucket_last"]), p["bucket_last"])
    refs, src_len = tr.refs["all"], ex.src_len
    systems = CURVES + (["phrase-based"] if tr.base is not None else [])
    out = {
        n: stats.bleu_by_length(tr.of(n), refs, src_len, edges, n_boot=p["n_boot"]) for n in systems
    }
    if int(out["RNNsearch-50"]["sentences"].sum()) != ex.n_test:
        raise AssertionError("every evaluated test sentence is in one bucket")
    return out


def bleu_by_length_figure(by_length: dict[str, pd.DataFrame]):
    """B Fig. 2 drawn with seaborn: BLEU per bucket of every system with its bootstrap band
    (95%), the phrase-based system dotted, and the bucket sizes below. Returns the figure."""
    colours = system_colors(by_length)
    data = pd.concat([t.assign(system=shown(n)) for n, t in by_length.items()], ignore_index=True)
    fig, (ax, axn) = plt.subplots(
        2, 1, figsize=(WIDTH, 1.5 * HEIGHT), sharex=True, gridspec_kw={"height_ratios": [3, 1]}
    )
    sns.lineplot(
        data=data,
        x="mid",
        y="bleu",
        hue="system",
        style="system",
        palette={shown(n): c for n, c in colours.items()},
        dashes={
            shown(n): (4, 2) if n.endswith("-30") else (1, 2) if n == "phrase-based" else ""
            for n in by_length
        },
        markers=True,
        estimator=None,
        errorbar=None,
        ax=ax,
    )
    for name, t in by_length.items():
        if name != "phrase-based":
            ax.fill_between(
                t["mid"], t["band_low"], t["band_high"], color=colours[name], alpha=0.15, lw=0
            )
    ax.set(ylabel="BLEU score")
    ax.legend(title=None)
    buckets = by_length["RNNsearch-50"]
    mids = buckets["mid"].to_numpy()
    axn.bar(
        mids,
        buckets["sentences"],
        width=0.8 * (mids[1] - mids[0]) if len(mids) > 1 else 8,
        color="0.7",
    )
    for x, n in zip(mids, buckets["sentences"]):
        axn.text(x, n, f"{n}", ha="center", va="bottom", fontsize=8)
    axn.set(ylabel="sentences", xlabel="sentence length (source tokens)")
    axn.set_xticks(mids, buckets["bucket"], fontsize=8)
    fig.tight_layout()
    return fig


def length_gaps(ex: RNNsearchExperiment, tr: Translations, by_length: dict) -> pd.DataFrame:
    """RNNsearch-50 − RNNencdec-50 within each bucket of Fig. 2, by the paired bootstrap
    (:func:`rnnlib.stats.paired_bootstrap`): index ``bucket``, columns ``diff``, ``low``,
    ``high`` (NaN below two sentences) and ``n`` (sentences)."""
    refs, src_len = tr.refs["all"], ex.src_len
    search, encdec = tr.of("RNNsearch-50"), tr.of("RNNencdec-50")
    gaps = []
    for row in by_length["RNNsearch-50"].itertuples():
        members = np.flatnonzero((src_len >= row.low_len) & (src_len < row.high_len))
        gap = {"bucket": row.bucket, "diff": np.nan, "low": np.nan, "high": np.nan}
        if len(members) >= 2:
            res = stats.paired_bootstrap(
                [search[i] for i in members],
                [encdec[i] for i in members],
                [refs[i] for i in members],
                n_samples=ex.p["n_boot"],
            )
            gap.update(diff=res["diff"], low=res["low"], high=res["high"])
        gaps.append({**gap, "n": len(members)})
    return pd.DataFrame(gaps).set_index("bucket")


def length_buckets(by_length: dict, gaps: pd.DataFrame) -> pd.DataFrame:
    """Fig. 2 as a table: per bucket, its sentences, every system's BLEU and the paired gap
    RNNsearch-50 − RNNencdec-50 with its interval."""
    table = by_length["RNNsearch-50"].set_index("bucket")[["sentences"]].copy()
    for name, t in by_length.items():
        table[shown(name)] = t["bleu"].round(2).values
    table["RNNsearch-50 − RNNencdec-50"] = [
        f"{r['diff']:+.2f} [{r['low']:.2f}, {r['high']:.2f}]" if r["n"] >= 2 else np.nan
        for _, r in gaps.iterrows()
    ]
    return table


def figure_2_claims(by_length: dict, gaps: pd.DataFrame, scores: dict) -> tuple[dict, list]:
    """The claims of B Fig. 2 on the shortest and longest buckets of at least
    :data:`MIN_BUCKET` sentences: RNNencdec-50 drops with length (C-B-F2-1), the gap widens
    (F2-2), RNNsearch-50 does not deteriorate (F2-3), RNNsearch-50 is ahead in every bucket
    (F2-4). Returns ``(texts, checks)``: ``glue name -> Markdown`` and :class:`ClaimCheck`
    in the order they are recorded."""
    solid = gaps[gaps["n"] >= MIN_BUCKET]
    if len(solid) < 2:
        texts = dict.fromkeys(
            ("rns-gap-short", "rns-gap-long", "rns-f2-enc", "rns-f2-search"), "(too few sentences)"
        )
        texts["rns-f2-above"] = "none of the"
        why = claims.not_measurable(
            f"fewer than two length buckets hold at least {MIN_BUCKET} test sentences"
        )
        return texts, [ClaimCheck(f"C-B-F2-{k}", why, f"rns-f2-claim{k}") for k in range(1, 5)]

    def band(name, bucket):
        row = by_length[name].set_index("bucket").loc[bucket]
        return row["bleu"], row["band_low"], row["band_high"]

    def interval(v):
        return f"{v[0]:.2f} [{v[1]:.2f}, {v[2]:.2f}]"

    short, long_ = solid.index[0], solid.index[-1]
    first, last = solid.iloc[0], solid.iloc[-1]
    enc = band("RNNencdec-50", short), band("RNNencdec-50", long_)
    search = band("RNNsearch-50", short), band("RNNsearch-50", long_)
    texts = {
        "rns-gap-short": f"{first['diff']:+.2f} [{first['low']:.2f}, {first['high']:.2f}] "
        f"in bucket {short}",
        "rns-gap-long": f"{last['diff']:+.2f} [{last['low']:.2f}, {last['high']:.2f}] "
        f"in bucket {long_}",
        "rns-f2-enc": f"from {interval(enc[0])} to {interval(enc[1])}",
        "rns-f2-search": f"from {interval(search[0])} to {interval(search[1])}",
        "rns-f2-above": f"{int((solid['low'] > 0).sum())} of the {len(solid)}",
    }
    note = (
        f"buckets {short} and {long_}, the shortest and longest with at least {MIN_BUCKET} "
        "sentences; 95% bootstrap"
    )
    widening = claims.intervals_above(
        [
            (
                f"gap in {long_} − gap in {short}",
                last["diff"] - first["diff"],
                last["low"] - first["high"],
                last["high"] - first["low"],
            )
        ],
        note=note + " (the interval of the widening combines the two buckets' intervals: "
        "conservative)",
    )
    drop = claims.intervals_above(
        [
            (
                f"RNNencdec-50 in {short} − in {long_}",
                enc[0][0] - enc[1][0],
                enc[0][1] - enc[1][2],
                enc[0][2] - enc[1][1],
            )
        ],
        note=note + " (bands combined: conservative)",
    )
    overall = scores[("RNNsearch-50", "all")].score
    robust = claims.at_least(
        search[1][0],
        overall,
        f"RNNsearch-50's BLEU in bucket {long_} (against its BLEU on all sentences)",
        low=search[1][1],
        high=search[1][2],
        note=note,
    )
    ahead = claims.intervals_above(
        [
            (f"RNNsearch-50 − RNNencdec-50 in {b}", r["diff"], r["low"], r["high"])
            for b, r in solid.iterrows()
        ],
        note=f"every bucket with at least {MIN_BUCKET} sentences; paired bootstrap within the "
        "bucket",
    )
    return texts, [
        ClaimCheck("C-B-F2-2", widening, "rns-f2-claim2"),
        ClaimCheck("C-B-F2-1", drop, "rns-f2-claim1"),
        ClaimCheck("C-B-F2-3", robust, "rns-f2-claim3"),
        ClaimCheck("C-B-F2-4", ahead, "rns-f2-claim4"),
    ]


# -- Fig. 3 ----------------------------------------------------------------------------------------
def eligible_sentences(ex: RNNsearchExperiment) -> np.ndarray:
    """Indices of the evaluated test sentences of B Fig. 3 (b-d): 10-20 words, no unknown word."""
    src_len = ex.src_len
    return np.flatnonzero(ex.known & (src_len >= 10) & (src_len <= 20))


def _panel_sources(ex: RNNsearchExperiment) -> list[tuple[str, list[str], np.ndarray]]:
    """``(label, source words, source ids)`` of each panel: (a) the chosen sentence
    (``align_text``, or test sentence ``align_sentence``, or the first eligible one), (b-d)
    three eligible sentences drawn with ``seed``."""
    p, corpus, eligible = ex.p, ex.corpus, eligible_sentences(ex)
    words_of = corpus.text("test", "src")
    if p["align_text"]:
        words = corpus.tokenizer("src").tokenize(p["align_text"])
        if not words:
            raise ValueError(f"parameter 'align_text' = {p['align_text']!r} has no words")
        ids = corpus.src_vocab.encode(words)
        shown_words = [w if i != UNK else "[UNK]" for w, i in zip(words, ids)]
        panels, exclude = [("(a) your sentence", shown_words, ids)], None
    else:
        pick = p["align_sentence"]
        if pick is not None and pick >= len(corpus.test):
            raise ValueError(
                f"parameter 'align_sentence' = {pick}: the test set has {len(corpus.test)} "
                f"sentences (0 to {len(corpus.test) - 1})"
            )
        if pick is None:
            pick = int(eligible[0]) if len(eligible) else 0
        label = f"(a) {corpus.label('test', pick)}"
        panels, exclude = [(label, words_of[pick].split(), corpus.test.src[pick])], pick
    pool = np.array([i for i in eligible if i != exclude])
    drawn = []
    if len(pool):
        rng = np.random.default_rng(p["seed"])
        drawn = rng.choice(pool, size=min(3, len(pool)), replace=False)
    for label, i in zip("bcd", drawn):
        i = int(i)
        panels.append(
            (f"({label}) {corpus.label('test', i)}", words_of[i].split(), corpus.test.src[i])
        )
    return panels


def alignment_panels(ex: RNNsearchExperiment, runs: Runs) -> tuple[Artifact, list[dict]]:
    """B Fig. 3: the alignments RNNsearch-50 finds for each panel's sentence (beam search,
    ``[UNK]`` forbidden), an artifact (``rnnsearch/alignments``). Returns it and its items:
    ``{"label", "source", "output", "weights"}``, ``weights (len(output) + 1,
    len(source) + 1)`` (the weights alpha_ij of Eq. 6; last row and column: the end)."""
    panels = _panel_sources(ex)
    beam = ex.p["beam_size"]

    def make(out: Path, work: Path) -> None:
        model = runs.model(ex, "RNNsearch-50")
        sources = [np.asarray(p[2]) for p in panels]
        hyps = translate(model, sources, beam_size=beam, forbid_unk=True, attention=True)
        items = [
            {
                "label": p[0],
                "source": p[1],
                "output": ex.to_words(h.tokens),
                "weights": np.asarray(h.attention).tolist(),
            }
            for p, h in zip(panels, hyps)
        ]
        (out / "alignments.json").write_text(
            json.dumps(items, ensure_ascii=False), encoding="utf-8"
        )

    config = {
        "run": runs.runs["RNNsearch-50"].key,
        "beam_size": beam,
        "panels": [[p[0], p[1], [int(x) for x in p[2]]] for p in panels],
    }
    art = ex.cache.build("rnnsearch/alignments", config, make, data=ex.corpus.checksum)
    return art, json.loads(art.file("alignments.json").read_text(encoding="utf-8"))


def alignment_figure(items: list[dict]):
    """The panels of B Fig. 3 in greyscale (:func:`rnnlib.book.plotting.attention_plot`), two
    a row; each panel's pixels are square, a row as tall as its longest translation."""
    cols = 2 if len(items) > 1 else 1
    rows = (len(items) + cols - 1) // cols
    cell = 6.0 / max(len(item["source"]) + 1 for item in items)
    heights = [
        cell * max(len(item["output"]) + 1 for item in items[r * cols : (r + 1) * cols]) + 2.2
        for r in range(rows)
    ]
    fig, axes = plt.subplots(
        rows,
        cols,
        figsize=(6.5 * cols, sum(heights)),
        squeeze=False,
        gridspec_kw={"height_ratios": heights},
    )
    for ax, item in zip(axes.flat, items):
        attention_plot(ax, np.array(item["weights"]), item["source"], item["output"])
        ax.set_xlabel(item["label"], fontsize=9)
    for ax in list(axes.flat)[len(items) :]:
        ax.axis("off")
    fig.tight_layout()
    return fig


@dataclass
class AlignmentStats:
    """What the panels show, measured: the share of rows whose largest weight is at or after the
    previous row's (per panel with two words), the largest deviation of a row sum from 1, the
    panels whose end attends most to the source's end, the local backward steps (1-3
    positions), the rows whose largest weight is under 0.7, and the words' rows seen."""

    monotone: list[float]
    row_error: float
    end_to_end: int
    inversions: int
    spread: int
    rows: int
    panels: int


def alignment_stats(items: list[dict]) -> AlignmentStats:
    """:class:`AlignmentStats` of the panels (``weights (words + 1, source + 1)``; the last row
    is the end of the translation, left out of the words' rows)."""
    monotone, row_error, end, inversions, spread, rows = [], [], 0, 0, 0, 0
    for item in items:
        w = np.array(item["weights"])
        row_error.append(float(np.abs(w.sum(1) - 1).max()))
        words = w[:-1, :]
        steps = np.diff(words.argmax(1))
        if len(words) > 1:
            monotone.append(float(np.mean(steps >= 0)))
        end += int(w[-1].argmax() == w.shape[1] - 1)
        inversions += int(((steps < 0) & (steps >= -3)).sum())
        spread += int((words.max(1) < 0.7).sum())
        rows += len(words)
    return AlignmentStats(monotone, max(row_error), end, inversions, spread, rows, len(items))


def alignment_numbers(ex: RNNsearchExperiment, a: AlignmentStats) -> dict:
    """``glue name -> (value, digits)`` of Fig. 3's prose."""
    monotone = 100 * np.mean(a.monotone) if a.monotone else float("nan")
    return {
        "rns-align-panels": (a.panels, None),
        "rns-align-eligible": (len(eligible_sentences(ex)), None),
        "rns-align-monotone": (monotone, 1),
        "rns-align-rowsum": (a.row_error, 6),
        "rns-align-end": (a.end_to_end, None),
    }


def alignment_claims(a: AlignmentStats) -> list[ClaimCheck]:
    """The claims of B Fig. 3: alignments largely monotonic (C-B-F3-1, at least 70% of rows),
    rows are distributions and the end attends to the end (F3-4), local reorderings (F3-2) and
    weights spread over several words (F3-3)."""
    if not a.monotone:
        monotone = claims.not_measurable("no panel has two generated words")
    else:
        monotone = claims.at_least(
            100 * np.mean(a.monotone),
            70,
            f"% of rows whose largest weight is at or after the previous row's ({a.panels} panels)",
            note="'largely monotonic' read as at least 70%",
        )
    rows_are_distributions = claims.all_true(
        [
            ("every row sums to 1 (within 1e-4)", a.row_error < 1e-4),
            (
                f"the end of the translation attends most to the source's end in {a.end_to_end} of "
                f"{a.panels} panels",
                a.end_to_end * 2 > a.panels,
            ),
        ],
        note="the second part is the inventory's observation, not the paper's",
    )
    no_rows = claims.not_measurable("the panels hold no generated word")
    reorder = (
        no_rows
        if a.rows == 0
        else claims.at_least(
            a.inversions,
            1,
            "local reorderings: rows whose largest weight steps back by 1-3 source "
            f"positions ({a.rows} rows, {a.panels} panels)",
            note="the paper's example is an adjective-noun inversion; the book counts any local "
            "backward step",
        )
    )
    spread = (
        no_rows
        if a.rows == 0
        else claims.at_least(
            a.spread,
            1,
            "rows whose largest weight is under 0.7, i.e. spread over several source "
            f"words ({a.rows} rows)",
            note="whether the spread is 'where needed' is read from the panels, not measured",
        )
    )
    return [
        ClaimCheck("C-B-F3-1", monotone, "rns-f3-claim1"),
        ClaimCheck("C-B-F3-4", rows_are_distributions),
        ClaimCheck("C-B-F3-2", reorder),
        ClaimCheck("C-B-F3-3", spread),
    ]


# -- Table 3 ---------------------------------------------------------------------------------------
def longest_sentences(ex: RNNsearchExperiment) -> np.ndarray:
    """``(n_long,)``: the longest evaluated test sentences, longest first (stable)."""
    return ex.test[np.argsort(-ex.src_len, kind="stable")[: ex.p["n_long"]]]


def table_3(ex: RNNsearchExperiment, tr: Translations) -> pd.DataFrame:
    """B Table 3: the ``n_long`` longest test sentences, their references and translations by
    RNNencdec-50, RNNsearch-50 and the phrase-based system (the paper: Google Translate), with
    sacreBLEU's sentence BLEU of each; index ``(sentence, "")``."""
    systems = ["RNNencdec-50", "RNNsearch-50"] + (["phrase-based"] if tr.base is not None else [])
    sources, refs, src_len = ex.corpus.detok("test", "src"), tr.refs["all"], ex.src_len
    rows = []
    for i in longest_sentences(ex):
        label = f"{ex.corpus.label('test', int(i))} ({src_len[i]} tokens)"
        rows.append({"sentence": label, "": "source", "text": sources[i], "sentence BLEU": np.nan})
        rows.append({"sentence": label, "": "reference", "text": refs[i], "sentence BLEU": np.nan})
        for name in systems:
            text = tr.of(name)[i]
            rows.append(
                {
                    "sentence": label,
                    "": name,
                    "text": text,
                    "sentence BLEU": sentence_bleu(text, refs[i]),
                }
            )
    return pd.DataFrame(rows).set_index(["sentence", ""]).round(2)


def long_sentence_claim(ex: RNNsearchExperiment, tr: Translations) -> tuple[int, str, ClaimCheck]:
    """C-B-T3-1: RNNsearch-50 − RNNencdec-50 on every evaluated test sentence of 30 tokens or
    more (:func:`rnnlib.stats.paired_bootstrap`). Returns ``(sentences, the difference in
    words, the check)``."""
    long_idx = np.flatnonzero(ex.src_len >= 30)
    if len(long_idx) < 2:
        why = claims.not_measurable("fewer than two test sentences of 30 tokens or more")
        return (
            len(long_idx),
            "not measured (fewer than two such sentences)",
            ClaimCheck("C-B-T3-1", why, "rns-t3-claim"),
        )
    search, encdec, refs = tr.of("RNNsearch-50"), tr.of("RNNencdec-50"), tr.refs["all"]
    res = stats.paired_bootstrap(
        [search[i] for i in long_idx],
        [encdec[i] for i in long_idx],
        [refs[i] for i in long_idx],
        n_samples=ex.p["n_boot"],
    )
    text = (
        f"{res['diff']:+.2f} BLEU [{res['low']:.2f}, {res['high']:.2f}] "
        f"({res['bleu_a']:.2f} against {res['bleu_b']:.2f})"
    )
    check = claims.intervals_above(
        [
            (
                "RNNsearch-50 − RNNencdec-50, sentences of 30 tokens or more",
                res["diff"],
                res["low"],
                res["high"],
            )
        ],
        note=f"{len(long_idx)} test sentences, paired bootstrap",
    )
    return len(long_idx), text, ClaimCheck("C-B-T3-1", check, "rns-t3-claim")


# -- the recipe ------------------------------------------------------------------------------------
def _precision(ex: RNNsearchExperiment) -> str:
    """The precision row of the recipe: bf16 or float32, and why when ``bf16`` was ``None``."""
    text = "bfloat16 autocast" if ex.bf16 else "float32"
    if ex.p["bf16"] is not None:
        return text
    if ex.device.type == "cpu" and ex.bf16:
        return text + f" (bf16=None: the CPU has {', '.join(cpu_bf16_instructions())})"
    return text + f" (bf16=None: chosen for this {ex.device.type})"


def recipe(ex: RNNsearchExperiment) -> pd.DataFrame:
    """The paper's recipe (B §4 and Appendix B) beside this run's, a row per setting with the
    chapter parameters that set it."""
    p = ex.p
    n_train = f"{len(ex.corpus.train):,} training pairs"
    if p["max_train"] is not None:
        n_train += f", the first {p['max_train']:,}"
    optimiser = p["optimizer"] + (f", lr {p['lr']:g}" if p["optimizer"] != "adadelta" else "")
    clip = "none" if p["clip_norm"] is None else f"L2 norm {p['clip_norm']:g}"
    rows = [
        (
            "corpus",
            "WMT'14 English→French, 348M words",
            f"{p['corpus']}: {n_train}",
            "corpus, max_train",
        ),
        (
            "shortlists (source / target)",
            "30,000 / 30,000",
            f"{p['src_vocab']:,} / {p['tgt_vocab']:,}",
            "src_vocab, tgt_vocab",
        ),
        (
            "length filters",
            "30 / 50 words",
            f"{p['len_short']} / {p['len_long']} tokens, both sides",
            "len_short, len_long",
        ),
        (
            "hidden units n, alignment n'",
            "1000, 1000",
            f"{p['hidden']}, {p['align']}",
            "hidden, align",
        ),
        ("embedding m, maxout l", "620, 500", f"{p['emb']}, {p['maxout']}", "emb, maxout"),
        ("dropout", "none", f"{p['dropout']:g}" if p["dropout"] else "none", "dropout"),
        ("optimiser", "Adadelta (ρ 0.95, ε 1e-6)", optimiser, "optimizer, lr"),
        ("gradient clipping", "L2 norm 1", clip, "clip_norm"),
        ("minibatch", "80 pairs", f"{p['batch_size']} pairs", "batch_size"),
        (
            "training length",
            "about 5 days each (2.9–8.5 × 10⁵ updates)",
            f"{p['updates_encdec']:,} (RNNencdec), {p['updates_search']:,} (RNNsearch) updates",
            "updates_encdec, updates_search",
        ),
        (
            "RNNsearch-50⋆",
            "trained until dev stopped improving (6.7 × 10⁵ updates)",
            f"RNNsearch-50 continued, at most {p['updates_star']:,} updates, patience "
            f"{p['star_patience']}",
            "updates_star, star_patience",
        ),
        ("precision", "float32 (GPU)", _precision(ex), "bf16"),
        ("beam width", "not stated", f"{p['beam_size']}", "beam_size"),
        (
            "dev set",
            "news-test-2012 + 2013",
            f"{len(ex.dev):,} sentences (dev BLEU curve: the first {len(ex.dev_index):,})",
            "max_dev, dev_bleu_sentences",
        ),
        ("test set", "news-test-2014 (3,003 sentences)", f"{ex.n_test:,} sentences", "max_test"),
    ]
    columns = ["setting", "Bahdanau et al. 2015", "this run", "parameters"]
    return pd.DataFrame(rows, columns=columns).set_index("setting")


__all__ = [
    "CURVES",
    "MIN_BUCKET",
    "NAMES",
    "SHOWN",
    "AlignmentStats",
    "ClaimCheck",
    "RNNsearchExperiment",
    "Runs",
    "Translations",
    "alignment_claims",
    "alignment_figure",
    "alignment_numbers",
    "alignment_panels",
    "alignment_stats",
    "baseline_note",
    "bleu_by_length",
    "bleu_by_length_figure",
    "bleu_scores",
    "comparisons",
    "curves_figure",
    "dev_nll",
    "dev_nll_numbers",
    "figure_2_claims",
    "gap_numbers",
    "length_buckets",
    "length_gaps",
    "long_sentence_claim",
    "longest_sentences",
    "optimiser_figure",
    "paired_tests",
    "recipe",
    "star_is_search50",
    "star_stopped",
    "table_1",
    "table_1_claims",
    "table_1_numbers",
    "table_2",
    "table_2_claims",
    "train_runs",
    "training_numbers",
    "translations",
]
