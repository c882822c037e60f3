"""Paper A's neural-LM rows of Table 1 (+CSLM, +CSLM+RNN, +CSLM+RNN+WP): the CSLM
(:mod:`rnnlib.smt.cslm`, Schwenk 2007) trained on the n-grams of the target side of the training
data (``cho2014/cslm``: ``model.pt``, ``eval_log.csv``), its rows by n-best rescoring, and the
measurement behind the rescoring (the CSLM inside the search, timed).

Deviations: see :mod:`rnnlib.smt.rescore` (n-best rescoring instead of the CSLM inside the
search) and :mod:`rnnlib.smt.cslm` (sizes, training)."""

from __future__ import annotations

import dataclasses
import json
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pandas as pd
import torch

from ...book import papers
from ...cache import Artifact, ArtifactCache, NotCached
from ...checkpoint import load_checkpoint
from ...device import resolve_device
from ...smt.cslm import CSLM, CSLMConfig, CSLMFeature, ngrams, perplexity, train_cslm
from ...smt.rescore import (
    LMScore,
    ShortlistWords,
)
from ...smt.system import (
    SMTResult,
    checksum,
    system_decoder,
)
from ...specials import SPECIALS, UNK
from .rescored import RescoredSystem, search_seconds
from .rows import BaselineRow, Replicate, RNNRow
from .scorer import still_falling
from .setting import Params


def cslm_run(
    cache: ArtifactCache,
    config: CSLMConfig,
    train_sentences: Sequence[Sequence[str]],
    dev_sentences: Sequence[Sequence[str]],
    vocab,
    *,
    updates: int,
    batch_size: int,
    lr: float,
    eval_every: int,
    dev_share: float,
    seed: int,
    data: str,
    device: torch.device | str = "cpu",
) -> Artifact:
    """The trained CSLM as an artifact.

    Its n-grams are those of ``train_sentences`` (the target side of the training data, words
    outside ``vocab`` as ``[UNK]``); a seeded random share ``dev_share`` of them measures the dev
    perplexity every ``eval_every`` updates and the best parameters are kept
    (:func:`rnnlib.smt.cslm.train_cslm`: ``updates`` minibatches of ``batch_size`` drawn at
    random, Adam at ``lr``). ``data``: a checksum of the sentences and of ``vocab``. The sidecar
    also records the perplexity on ``dev_sentences`` (the dev set's references).

    ``device``: where it trains (``"auto"``: CUDA when there is one, else the CPU). The key names
    the device's type only when it is not the CPU, so the keys made on the CPU before there was a
    choice stay what they were (as :meth:`rnnlib.config.ModelConfig.to_dict` leaves out ``unit``
    while it is ``"gru"``); the same initialisation and draws on any device.
    """
    if not 0 < dev_share < 1:
        raise ValueError(f"cslm_run: dev_share must be in (0, 1), got {dev_share}")
    device = resolve_device(device) if isinstance(device, str) else torch.device(device)
    full = {
        "model": asdict(config),
        "updates": updates,
        "batch_size": batch_size,
        "lr": lr,
        "eval_every": eval_every,
        "dev_share": dev_share,
        "seed": seed,
        "optimizer": "adam",
    }
    if device.type != "cpu":
        full["device"] = device.type

    def make(out: Path, work: Path) -> dict:
        grams = ngrams(train_sentences, vocab, config.order)
        rng = np.random.default_rng(seed)
        perm = rng.permutation(len(grams))
        n_dev = max(1, int(round(dev_share * len(grams))))
        dev, train = grams[np.sort(perm[:n_dev])], grams[np.sort(perm[n_dev:])]
        torch.manual_seed(seed)
        model = CSLM(config).to(device)  # initialised on the host: the same start on any device
        res = train_cslm(
            model,
            train,
            dev,
            updates=updates,
            batch_size=batch_size,
            lr=lr,
            eval_every=eval_every,
            seed=seed,
        )
        torch.save(model.state_dict(), out / "model.pt")
        pd.DataFrame(res["history"]).to_csv(out / "eval_log.csv", index=False)
        return {
            "seconds": res["seconds"],
            "train_ngrams": len(train),
            "dev_ngrams": len(dev),
            "best_dev_ppl": res["best_dev_ppl"],
            "dev_set_ppl": perplexity(model, ngrams(dev_sentences, vocab, config.order)),
            "threads": torch.get_num_threads(),
            "device": device.type,
        }

    return cache.build("cho2014/cslm", full, make, data=data)


def on_shortlist(sentences: Sequence[Sequence[str]], vocab) -> list[list[str]]:
    """``sentences`` with every word outside ``vocab`` (the CSLM's shortlist) written ``[UNK]``,
    as the CSLM reads them."""
    return [[w if w in vocab else SPECIALS[UNK] for w in s] for s in sentences]


def shortlist_kn(
    cache: ArtifactCache,
    train_sentences: Sequence[Sequence[str]],
    dev_sentences: Sequence[Sequence[str]],
    vocab,
    order: int,
    data: str,
) -> Artifact:
    """The CSLM's n-gram rival on equal terms: an interpolated modified Kneser-Ney model of
    ``order`` (:func:`rnnlib.smt.lm.train_arpa`, the phrase-based system's LM) estimated on the
    same target sentences with the same shortlist (:func:`on_shortlist`), and its perplexity on
    the dev references read the same way; both count every word and one end of sentence, as
    the CSLM's :func:`rnnlib.smt.cslm.perplexity` does. The ARPA file is not kept."""
    from ...smt.lm import NgramLM, train_arpa

    def make(out: Path, work: Path) -> dict:
        t = time.perf_counter()
        train_arpa(on_shortlist(train_sentences, vocab), work / "lm.arpa", order)
        ppl = NgramLM(work / "lm.arpa").perplexity(on_shortlist(dev_sentences, vocab))
        return {"dev_perplexity": ppl, "seconds": time.perf_counter() - t}

    key = {"order": order, "shortlist": len(vocab), "smoothing": "interpolated modified Kneser-Ney"}
    return cache.build("cho2014/kn_shortlist", key, make, data=data)


def against_kn_words(cslm_ppl: float, kn_ppl: float) -> str:
    """Whether the CSLM (dev perplexity ``cslm_ppl``) beats the Kneser-Ney model on the same
    shortlist (``kn_ppl``), in words for the prose and the rows that use the CSLM."""
    if cslm_ppl < kn_ppl:
        return "the CSLM is the better language model here"
    return "**the CSLM is the weaker language model here**"


def length_numbers(cslm: Artifact) -> dict[str, Any]:
    """The CSLM's held-out perplexity at its last two evaluations and their updates
    (``eval_log.csv``; NaN with fewer than two evaluations): what :func:`length_words`
    judges."""
    history = pd.read_csv(cslm.file("eval_log.csv"))
    updates, ppl = history["update"].astype(int).tolist(), history["dev_ppl"].tolist()
    if len(ppl) < 2:
        updates, ppl = [np.nan, np.nan], [np.nan, np.nan]
    return {
        "cho-cslm-length-ppl0": (ppl[-2], 1),
        "cho-cslm-length-update0": updates[-2],
        "cho-cslm-length-ppl1": (ppl[-1], 1),
        "cho-cslm-length-update1": updates[-1],
    }


def length_words(cslm: Artifact) -> str:
    """Whether the CSLM's held-out perplexity had levelled off when training stopped
    (:func:`~.scorer.still_falling`), in words for the prose."""
    ppl = pd.read_csv(cslm.file("eval_log.csv"))["dev_ppl"].tolist()
    if len(ppl) < 2:
        return "was measured fewer than twice, so whether it had levelled off is unknown"
    if still_falling(ppl):
        return "was still falling: `cslm_updates` cut it short for the time budget"
    return "had levelled off"


def cslm_row_label(cslm: CSLMRows) -> str:
    """What the rows that add the CSLM use as language models, for Table 1's "language model"
    column: the n-gram model and the CSLM, and whether the CSLM is the weaker of the two on its
    shortlist (dev perplexity of the references against the same-shortlist Kneser–Ney model's;
    without that model, its perplexity alone)."""
    ppl = cslm.artifact.extra["dev_set_ppl"]
    if cslm.kn is None:
        return f"n-gram + CSLM (dev perplexity {ppl:.1f})"
    kn = cslm.kn.extra["dev_perplexity"]
    which = "weaker" if ppl >= kn else "better"
    return f"n-gram + CSLM ({which}: dev perplexity {ppl:.1f} against {kn:.1f})"


def load_cslm(art: Artifact, device: torch.device | str = "cpu") -> CSLM:
    """The network of a ``cho2014/cslm`` artifact on ``device`` (its checkpoint mapped there),
    in eval mode."""
    model = CSLM(CSLMConfig(**art.config["model"])).to(device)
    model.load_state_dict(load_checkpoint(art.file("model.pt"), map_location=device))
    return model.eval()


# -- what the chapter calls ---------------------------------------------------------------------
@dataclass
class CSLMRows:
    """The CSLM and its rows of A Table 1 (:func:`cslm_rows`): ``config``, ``artifact`` (the
    ``cho2014/cslm`` run) and ``model`` (on the chapter's device, eval mode); ``systems``: row
    name -> its :class:`RescoredSystem`; ``runs``: row name -> MERT seed -> run, in the order
    ``+CSLM``, ``+CSLM+RNN``, ``+CSLM+RNN+WP``; ``cited``: what the CSLM's numbers cite (the
    corpus, the system's settings, the CSLM)."""

    config: CSLMConfig
    artifact: Artifact
    model: CSLM
    systems: dict[str, RescoredSystem]
    runs: dict[str, dict[int, SMTResult]]
    cited: list
    #: :func:`shortlist_kn`: the n-gram model on the CSLM's shortlist (``None`` when not built)
    kn: Artifact | None = None


def cslm_model(cache: ArtifactCache, base: "BaselineRow", P: Params) -> tuple[CSLMConfig, Artifact]:
    """Paper A's neural language model at the sizes of the chapter's ``cslm_*`` parameters,
    trained on the target side of ``base``'s training data (:func:`cslm_run`): its config and
    its artifact."""
    corpus, data = base.corpus, base.data
    vocab = corpus.tgt_vocab
    config = CSLMConfig(
        vocab=len(vocab), order=P.cslm_order, emb=P.cslm_emb,
        hidden=(P.cslm_hidden1, P.cslm_hidden2),
    )  # fmt: skip
    art = cslm_run(
        cache, config, data.train_tgt, data.dev_tgt, vocab,
        updates=P.cslm_updates, batch_size=P.cslm_batch, lr=P.cslm_lr,
        eval_every=P.cslm_eval_every, dev_share=P.cslm_dev_share, seed=P.seed,
        data=checksum([corpus.checksum], data.train_tgt, data.dev_tgt), device=base.device,
    )  # fmt: skip
    return config, art


def cslm_rows(cache: ArtifactCache, base: "BaselineRow", rnn: "RNNRow", P: Params) -> CSLMRows:
    """Paper A's neural language model (Schwenk 2007; :func:`cslm_run` at the sizes of the
    ``cslm_*`` parameters, on the target side of the training data) and the rows that add it:
    +CSLM (on the Baseline's runs), +CSLM+RNN and +CSLM+RNN+WP (on the +RNN row's runs, WP the
    count of target words outside the shortlist), each :meth:`RescoredSystem.run` per MERT
    seed in ``P.rescore_mode``."""
    corpus, data = base.corpus, base.data
    vocab = corpus.tgt_vocab
    config, art = cslm_model(cache, base, P)
    model = load_cslm(art, base.device)
    # the sentence features of the rescoring, each with what identifies its values
    lm = (LMScore(CSLMFeature(model, vocab), name="cslm"), {"cslm": art.key})
    wp = (ShortlistWords(vocab, name="wp"), {"shortlist": corpus.checksum, "words": len(vocab)})
    rows = {
        "+CSLM": ([lm], [], base.runs),
        "+CSLM+RNN": ([lm], [rnn.scores], rnn.runs),
        "+CSLM+RNN+WP": ([lm, wp], [rnn.scores], rnn.runs),
    }
    systems, runs = {}, {}
    for name, (features, extra, base_runs) in rows.items():
        system = systems[name] = RescoredSystem(
            cache, data, base.config, features, extra=extra, detokenize=base.detokenize
        )
        runs[name] = {
            s: system.run(
                base_runs[s],
                seed=s,
                mode=P.rescore_mode,
                iterations=P.rescore_iterations,
                nbest=P.eval_nbest,
            )  # fmt: skip
            for s in base.seeds
        }
    kn = shortlist_kn(
        cache, data.train_tgt, data.dev_tgt, vocab, base.config.lm_order,
        data=checksum([corpus.checksum], data.train_tgt, data.dev_tgt),
    )  # fmt: skip
    return CSLMRows(config, art, model, systems, runs, [corpus, base.config, art], kn)


def cslm_replicates(
    cache: ArtifactCache,
    P: Params,
    replicates: Sequence["Replicate"],
    cslm: CSLMRows,
) -> list["Replicate"]:
    """``replicates`` (:func:`.rebuilds.alignment_replicates`) with their CSLM rows (the
    rebuild spread): the chapter's (``cslm``) on the first alignment, and on each further one
    its own, :func:`cslm_rows` on that alignment's Baseline and +RNN runs (the CSLM itself reads
    no alignment: one model, one artifact). Built for the alignments ``alignment_replicates``
    asks for; for those read from the cache (``cached_spread``) read where the cache holds them,
    else left without (``cslm`` ``None``), computing none."""
    n = P.alignment_replicates
    out = [dataclasses.replace(replicates[0], cslm=cslm.runs)]
    for rep in replicates[1:]:
        if rep.alignment <= n:
            rows = cslm_rows(cache, rep.base, rep.rnn, P).runs
        else:
            try:
                with cache.lookup_only():
                    rows = cslm_rows(cache, rep.base, rep.rnn, P).runs
            except NotCached:
                rows = None
        out.append(dataclasses.replace(rep, cslm=rows))
    return out


@dataclass
class SearchTiming:
    """The CSLM inside the search against without it (:func:`search_timing`): the dev
    ``sentences`` decoded, the seconds of each decoding, and the n-grams the CSLM scored."""

    sentences: list
    with_cslm: float
    without_cslm: float
    ngrams: int

    @property
    def ratio(self) -> float:
        return self.with_cslm / max(self.without_cslm, 1e-9)


def search_timing(base: "BaselineRow", cslm: CSLMRows, n_sentences: int) -> SearchTiming:
    """The measurement behind the rescoring deviation: the first ``n_sentences`` dev sentences
    decoded one by one in this process with the CSLM inside the search and without it, with
    the +CSLM row's tuned weights of the first MERT seed (:func:`search_seconds`; wall time, so
    it varies from build to build)."""
    system = cslm.systems["+CSLM"]
    tuned = cslm.runs["+CSLM"][base.seeds[0]].weights
    weights = [tuned[n] for n in system.names]
    sentences = base.data.dev_src[:n_sentences]
    first = base.first_run
    decoder = system_decoder(base.data, base.config, first.phrase_table, first.lm)
    in_search = CSLMFeature(cslm.model, base.corpus.tgt_vocab)
    with_cslm = search_seconds(decoder, [in_search], weights, sentences)
    without = search_seconds(decoder, [], weights[: len(system.search_names)], sentences)
    return SearchTiming(sentences, with_cslm, without, in_search.queries)


def numbers(base: "BaselineRow", P: Params) -> dict[str, Any]:
    """The CSLM's sizes and the paper's perplexity, for the prose."""
    return {
        "cho-cslm-order": P.cslm_order,
        "cho-cslm-emb": P.cslm_emb,
        "cho-cslm-h1": P.cslm_hidden1,
        "cho-cslm-h2": P.cslm_hidden2,
        "cho-cslm-vocab": len(base.corpus.tgt_vocab),
        "cho-cslm-updates": P.cslm_updates,
        "cho-paper-cslm-ppl": (papers.A_CSLM_PERPLEXITY, 2),
    }


def trained_numbers(cslm: CSLMRows) -> dict[str, Any]:
    """The CSLM's n-grams and perplexities (held-out n-grams, the dev set's references)."""
    extra = cslm.artifact.extra
    return {
        "cho-cslm-ngrams": extra["train_ngrams"] + extra["dev_ngrams"],
        "cho-cslm-ppl": (extra["best_dev_ppl"], 1),
        "cho-cslm-dev-ppl": (extra["dev_set_ppl"], 1),
    }


def timing_numbers(timing: SearchTiming, P: Params) -> dict[str, Any]:
    """The dev sentences decoded with and without the CSLM inside the search, and the n-best
    lists the CSLM rows rescore instead."""
    return {
        "cho-search-n": len(timing.sentences),
        "cho-search-words": sum(len(x) for x in timing.sentences),
        "cho-search-with": (timing.with_cslm, 1),
        "cho-search-without": (timing.without_cslm, 1),
        "cho-search-ratio": (timing.ratio, 1),
        "cho-search-ngrams": timing.ngrams,
        "cho-eval-nbest": P.eval_nbest,
        "cho-tune-nbest": P.tune_nbest,
    }


def mert_decode_numbers(base: "BaselineRow", timing: SearchTiming) -> dict[str, Any]:
    """One dev decoding of the Baseline's MERT (seconds, the mean over its first seed's
    decodings), and the minutes it would take with the CSLM inside the search."""
    history = json.loads(base.first_run.tuned.file("weights.json").read_text())["history"]
    mert_decode = float(np.mean([r["decode_s"] for r in history]))
    slower = max(timing.without_cslm, 1e-9)
    return {
        "cho-mert-decode": (mert_decode, 0),
        "cho-mert-decode-cslm": (mert_decode * timing.with_cslm / slower / 60, 1),
    }
