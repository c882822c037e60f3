"""Paper A's neural-LM rows of Table 1 (+CSLM, +CSLM+RNN, +CSLM+RNN+WP) as artifacts of the cache.

* :func:`cslm_run` -- the CSLM (:mod:`rnnlib.smt.cslm`) trained on the n-grams of the target
  side of the training data (``cho2014/cslm``: ``model.pt``, ``eval_log.csv``);
* :class:`RescoredSystem` -- a row whose n-best lists are rescored with sentence features
  (:mod:`rnnlib.smt.rescore`), started from the base row of the same MERT seed (Baseline for
  +CSLM, +RNN for the others): MERT over all the weights (``cho2014/rescored_tuned``:
  ``weights.json``), then dev and test reranked (``cho2014/rescored_eval``: the files of
  ``smt/eval``). The values of each sentence feature for each set of n-best lists are an
  artifact (``cho2014/rescoring``: ``values.npy``), and so is every decoding of MERT's loop in
  mode ``"search"`` (``cho2014/nbest``, keyed by the search weights: rows that decode with the
  same weights share it);
* :func:`search_seconds` -- the time of decoding sentences with a language model inside the
  search against without it (the measurement behind the rescoring deviation).

What the chapter calls: :func:`cslm_rows` (the CSLM and its three rows of A Table 1),
:func:`search_timing` (the CSLM inside the search, timed in this build), :func:`cslm_numbers`
and :func:`rescore_how` (the prose of the section).

Deviations: see :mod:`rnnlib.smt.rescore` (n-best rescoring instead of the CSLM inside the
search) and :mod:`rnnlib.smt.cslm` (sizes, training).
"""

from __future__ import annotations

import dataclasses
import json
import time
from dataclasses import asdict
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence

import numpy as np
import pandas as pd
import torch

from ..checkpoint import load_checkpoint
from ..device import resolve_device
from ..book import papers
from ..smt.cslm import CSLM, CSLMConfig, CSLMFeature, ngrams, perplexity, train_cslm
from ..smt.decoder import Decoder, Translation
from ..smt.features import BASE_FEATURES, FIXED_WEIGHTS, UNKNOWN_WORD_PENALTY, FeatureTable
from ..smt.system import (
    SMTConfig,
    SMTData,
    SMTResult,
    checksum,
    feature_checksum,
    sacrebleu_scores,
    system_decoder,
)
from ..smt.rescore import (
    LMScore,
    NBestLists,
    Rescorer,
    ShortlistWords,
    SentenceFeature,
    load_nbest,
    rerank,
    save_nbest,
    tune_rescored,
)
from ..cache import Artifact, ArtifactCache, NotCached
from ..specials import SPECIALS, UNK
from .cho2014 import Number, training_length

if TYPE_CHECKING:
    from .cho2014 import BaselineRow, Replicate, RNNRow


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
    from ..smt.lm import NgramLM, train_arpa

    def make(out: Path, work: Path) -> dict:
        t = time.perf_counter()
        train_arpa(on_shortlist(train_sentences, vocab), work / "lm.arpa", order)
        ppl = NgramLM(work / "lm.arpa").perplexity(on_shortlist(dev_sentences, vocab))
        return {"dev_perplexity": ppl, "seconds": time.perf_counter() - t}

    key = {"order": order, "shortlist": len(vocab), "smoothing": "interpolated modified Kneser-Ney"}
    return cache.build("cho2014/kn_shortlist", key, make, data=data)


def cslm_against_kn(cslm_ppl: float, kn_ppl: float, history: pd.DataFrame | None = None) -> str:
    """Whether the CSLM beats the n-gram model on the same shortlist (Markdown, for the prose and
    the rows that use the CSLM); with ``history`` (the CSLM's ``eval_log.csv``: ``update``,
    ``dev_ppl``), whether its held-out perplexity was still falling when training stopped
    (:func:`rnnlib.experiments.cho2014.training_length`)."""
    if cslm_ppl < kn_ppl:
        text = (
            f"the CSLM is the better language model here: perplexity {cslm_ppl:.1f} against the "
            f"Kneser–Ney model's {kn_ppl:.1f} on the same shortlist"
        )
    else:
        text = (
            f"**the CSLM is the weaker language model here**: perplexity {cslm_ppl:.1f} against "
            f"the Kneser–Ney model's {kn_ppl:.1f} on the same shortlist, so its rows add a worse "
            "model of French beside a better one, unlike the paper's, whose CSLM was trained on "
            f"{papers.A_CSLM_NEWS_MWORDS}M more words of news"
        )
    if history is not None and len(history) >= 2:
        text += "; " + training_length(
            history["update"].tolist(), history["dev_ppl"].tolist(), "cslm_updates", "per word"
        )
    return text


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


MODES = ("lists", "search")


class RescoredSystem:
    """A row of Table 1 with sentence features: the phrase-based system of ``config`` (the
    decoder of :func:`rnnlib.smt.system.run` with the phrase features ``extra``) whose n-best
    lists are rescored with ``features``, pairs ``(SentenceFeature, key)`` where ``key`` (a
    dict) identifies the feature's values (e.g. the CSLM artifact's key).

    Every run starts from a *base* run (:class:`SMTResult` of the same search features and MERT
    seed: Baseline for +CSLM, +RNN for +CSLM+RNN): its tuned weights, and 0 for the sentence
    features (so the first ranking is the base system's). Two modes (see :mod:`rnnlib.smt.rescore`):

    * ``"lists"`` -- the base run's own dev and test n-best lists (its evaluation with
      ``SMTConfig.eval_nbest > 1``: the decoding that gave its output) are rescored; MERT tunes
      every weight on the dev lists of the MERT sentences, and the test lists are reranked with
      the tuned weights. No decoding at all.
    * ``"search"`` -- MERT's usual loop: each iteration decodes the MERT sentences with the
      search part of the weights (``config.tune_nbest``-best lists, each an artifact
      ``cho2014/nbest``), rescores, pools and tunes; dev and test are then decoded to
      ``nbest``-best lists with the tuned search weights, rescored and reranked.
    """

    def __init__(
        self,
        cache: ArtifactCache,
        data: SMTData,
        config: SMTConfig,
        features: Sequence[tuple[SentenceFeature, dict]],
        extra: Sequence[FeatureTable] = (),
        detokenize: Callable[[Sequence[str]], str] = " ".join,
    ):
        self.cache, self.data, self.config = cache, data, config
        self.extra, self.detokenize = list(extra), detokenize
        self.features = [(f, dict(key)) for f, key in features]
        self.rescorer = Rescorer([f for f, _ in self.features])
        self.search = {
            "decoder": dataclasses.asdict(config.decoder),
            "features": list(BASE_FEATURES),
            "fixed": {BASE_FEATURES[f]: v for f, v in FIXED_WEIGHTS.items()},
            "unknown_word_penalty": UNKNOWN_WORD_PENALTY,
            "extra": [t.names for t in self.extra],
            "extra_checksum": feature_checksum(self.extra) if self.extra else None,
        }
        self._decoder: tuple | None = None

    def decoder(self, base: SMTResult) -> Decoder:
        """The decoder of ``base``'s phrase table and LM with this system's search features."""
        key = (base.phrase_table.key, base.lm.key)
        if self._decoder is None or self._decoder[0] != key:
            self._decoder = (
                key,
                system_decoder(self.data, self.config, base.phrase_table, base.lm, self.extra),
            )
        return self._decoder[1]

    @property
    def names(self) -> list[str]:
        """The names of the search features (as the decoder's ``feature_names``), then of the
        sentence features."""
        return self.search_names + self.rescorer.names

    @property
    def search_names(self) -> list[str]:
        return list(BASE_FEATURES) + [n for t in self.extra for n in t.names]

    # -- cached stages --------------------------------------------------------------------------
    def nbest(
        self, base: SMTResult, sentences: Sequence[Sequence[str]], weights, n: int
    ) -> tuple[NBestLists, str]:
        """The decoder's ``n``-best lists of ``sentences`` under the search weights ``weights``
        (``cho2014/nbest``) and the artifact's key."""
        w = [float(x) for x in weights]

        def make(out: Path, work: Path) -> dict:
            t = time.perf_counter()
            dec = self.decoder(base)
            dec.set_weights(w)
            save_nbest(dec.translate_corpus(sentences, n), out / "nbest.json.gz")
            return {"seconds": time.perf_counter() - t, "sentences": len(sentences)}

        cfg = {
            "search": self.search,
            "phrase_table": base.phrase_table.key,
            "lm": base.lm.key,
            "weights": w,
            "n": n,
        }
        art = self.cache.build("cho2014/nbest", cfg, make, data=checksum(sentences))
        return load_nbest(art.file("nbest.json.gz")), art.key

    def rescore(self, lists: NBestLists, source: dict) -> NBestLists:
        """``lists`` with the sentence features appended to every candidate. The values of each
        feature are an artifact (``cho2014/rescoring``) keyed by the feature's key and ``source``
        (what the lists are: an artifact's key and split), so rows that share a feature and
        lists (+CSLM+RNN and +CSLM+RNN+WP) compute it once."""
        hyps = [tuple(c.words) for lst in lists for c in lst]
        cols = []
        for f, key in self.features:

            def make(out: Path, work: Path, f=f) -> dict:
                t = time.perf_counter()
                np.save(out / "values.npy", f.cached_values(hyps))
                f.memo.clear()  # the artifact keeps them
                return {"seconds": time.perf_counter() - t, "candidates": len(hyps)}

            art = self.cache.build(
                "cho2014/rescoring",
                {"names": f.names, "feature": key, "lists": source, "candidates": len(hyps)},
                make,
            )
            v = np.load(art.file("values.npy"))
            if v.shape != (len(hyps), len(f.names)):
                expected = (len(hyps), len(f.names))
                raise ValueError(f"{art.file('values.npy')}: shape {v.shape}, expected {expected}")
            cols.append(v)
        values = np.hstack(cols) if cols else np.zeros((len(hyps), 0))
        out, k = [], 0
        for lst in lists:
            out.append(
                [
                    Translation(c.words, np.concatenate([c.features, values[k + i]]), c.score)
                    for i, c in enumerate(lst)
                ]
            )
            k += len(lst)
        return out

    def _base_lists(self, base: SMTResult, split: str) -> NBestLists:
        path = base.evaluation.path / f"{split}.nbest.json.gz"
        if not path.exists():
            raise ValueError(
                f"mode 'lists' rescores the base run's n-best lists, but {base.evaluation.path} "
                f"has no {split}.nbest.json.gz: build the base run with SMTConfig.eval_nbest > 1"
            )
        return load_nbest(path)

    def tune(
        self, base: SMTResult, seed: int, mode: str = "lists", iterations: int = 2
    ) -> Artifact:
        """MERT (restarts seeded with ``seed``) over the search and sentence-feature weights on
        the first ``config.tune_sentences`` dev sentences, from ``base``'s tuned weights
        (``cho2014/rescored_tuned``: ``weights.json``). ``iterations``: at most this many dev
        decodings (mode ``"search"``) or rerankings of the fixed lists (mode ``"lists"``,
        where the second finds nothing new and ends the loop)."""
        if mode not in MODES:
            raise ValueError(f"RescoredSystem.tune: mode must be one of {MODES}, got {mode!r}")
        least = 2 if mode == "lists" else 1
        if iterations < least:
            raise ValueError(
                f"RescoredSystem.tune: mode {mode!r} needs iterations >= {least} "
                f"(MERT runs between two rankings), got {iterations}"
            )
        cfg, data = self.config, self.data
        n_tune = (
            len(data.dev_src)
            if cfg.tune_sentences is None
            else min(cfg.tune_sentences, len(data.dev_src))
        )
        src, refs = data.dev_src[:n_tune], [[r] for r in data.dev_tgt[:n_tune]]
        t_cfg = {
            "search": self.search,
            "rescoring": [[f.names, key] for f, key in self.features],
            "mode": mode,
            "base": base.tuned.key,
            "lists": base.evaluation.key if mode == "lists" else None,
            "nbest": cfg.tune_nbest if mode == "search" else None,
            "iterations": iterations,
            "restarts": cfg.mert_restarts,
            "random_directions": cfg.mert_random_directions,
            "sentences": n_tune,
            "seed": seed,
        }

        def make(out: Path, work: Path) -> dict:
            t = time.perf_counter()
            start = [base.weights[n] for n in self.search_names]
            dec = _Weights(self.search_names, start) if mode == "lists" else self.decoder(base)
            dec.set_weights(start)
            if mode == "lists":
                # the whole dev set is rescored once, for this and for the evaluation
                dev = {"eval": base.evaluation.key, "split": "dev"}
                fixed = self.rescore(self._base_lists(base, "dev"), dev)[:n_tune]

                def decode(w):
                    return fixed
            else:

                def decode(w):
                    lists, key = self.nbest(base, src, w, cfg.tune_nbest)
                    return self.rescore(lists, {"nbest": key})

            def rescore(lists):  # the lists arrive rescored
                return lists

            res = tune_rescored(
                dec,
                src,
                refs,
                self.rescorer,
                max_iterations=iterations,
                seed=seed,
                restarts=cfg.mert_restarts,
                random_directions=cfg.mert_random_directions,
                start=0.0,
                decode=decode,
                rescore=rescore,
            )
            (out / "weights.json").write_text(json.dumps(res.as_dict(), indent=2), encoding="utf-8")
            return {
                "seconds": time.perf_counter() - t,
                "iterations": len(res.history),
                "converged": res.converged,
            }

        return self.cache.build(
            "cho2014/rescored_tuned", t_cfg, make, data=checksum(data.dev_src, data.dev_tgt)
        )

    def evaluate(
        self, base: SMTResult, tuned: Artifact, mode: str = "lists", nbest: int = 100
    ) -> Artifact:
        """Dev and test with the tuned weights (``cho2014/rescored_eval``: the files of
        ``smt/eval``): mode ``"lists"`` reranks ``base``'s n-best lists, mode ``"search"``
        decodes ``nbest``-best lists with the tuned search weights; then the sentence features,
        the best candidate under all the weights, detokenized and scored with sacreBLEU."""
        data = self.data
        weights = json.loads(tuned.file("weights.json").read_text())["weights"]

        def make(out: Path, work: Path) -> dict:
            w = np.array([weights[n] for n in self.names])
            bleu, speed = {}, {}
            for split, src, refs in (
                ("dev", data.dev_src, data.dev_refs),
                ("test", data.test_src, data.test_refs),
            ):
                t0 = time.perf_counter()
                if mode == "lists":
                    lists, source = (
                        self._base_lists(base, split),
                        {"eval": base.evaluation.key, "split": split},
                    )
                else:
                    lists, key = self.nbest(base, src, w[: len(self.search_names)], nbest)
                    source = {"nbest": key}
                t1 = time.perf_counter()
                hyps = [lst[0].words for lst in rerank(self.rescore(lists, source), w)]
                speed[split] = {
                    "sentences": len(src),
                    "nbest": max(len(x) for x in lists) if lists else 0,
                    "lists_s": t1 - t0,
                    "rescore_s": time.perf_counter() - t1,
                }
                detok = [self.detokenize(h) for h in hyps]
                (out / f"{split}.txt").write_text(
                    "".join(x + "\n" for x in detok), encoding="utf-8"
                )
                (out / f"{split}.tok.txt").write_text(
                    "".join(" ".join(h) + "\n" for h in hyps), encoding="utf-8"
                )
                bleu[split] = sacrebleu_scores(detok, refs)
            (out / "bleu.json").write_text(json.dumps(bleu, indent=2), encoding="utf-8")
            (out / "speed.json").write_text(json.dumps(speed, indent=2), encoding="utf-8")
            return {
                "dev_bleu": bleu["dev"]["single"]["bleu"],
                "test_bleu": bleu["test"]["single"]["bleu"],
            }

        e_cfg = {
            "tuned": tuned.key,
            "mode": mode,
            "lists": base.evaluation.key if mode == "lists" else None,
            "nbest": nbest if mode == "search" else None,
        }
        return self.cache.build(
            "cho2014/rescored_eval",
            e_cfg,
            make,
            data=checksum(data.dev_src, data.test_src, *data.dev_refs, *data.test_refs),
        )

    def run(
        self, base: SMTResult, seed: int, mode: str = "lists", iterations: int = 2, nbest: int = 100
    ) -> SMTResult:
        """:meth:`tune` then :meth:`evaluate`: an :class:`SMTResult` whose ``tuned`` and
        ``evaluation`` are this row's artifacts (``bleu`` and ``weights`` read as for the
        others)."""
        tuned = self.tune(base, seed, mode, iterations)
        return dataclasses.replace(
            base, tuned=tuned, evaluation=self.evaluate(base, tuned, mode, nbest)
        )


class _Weights:
    """The part of a decoder :func:`rnnlib.smt.rescore.tune_rescored` reads when the n-best lists
    are given (mode ``"lists"``): the search features' names, weights and fixed weights."""

    def __init__(self, names: list[str], weights):
        self.feature_names = list(names)
        self.fixed = np.zeros(len(names), dtype=bool)
        self.fixed[list(FIXED_WEIGHTS)] = True
        self.set_weights(weights)

    def set_weights(self, weights) -> None:
        self.weights = np.asarray(weights, dtype=np.float64)


def search_seconds(
    decoder: Decoder, lms: Sequence, weights: Sequence[float], sentences, nbest: int = 1
) -> float:
    """Wall time of translating ``sentences`` one by one in this process with ``decoder``
    (``weights``: its features then one per language model of ``lms`` added to the search)."""
    dec = Decoder(
        decoder.table,
        decoder.lm,
        weights=weights,
        config=decoder.config,
        extra=decoder.extra,
        lms=lms,
    )
    t = time.perf_counter()
    for s in sentences:
        dec.translate(s, nbest)
    return time.perf_counter() - t


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


def cslm_model(
    cache: ArtifactCache, base: "BaselineRow", params: dict[str, Any]
) -> tuple[CSLMConfig, Artifact]:
    """Paper A's neural language model at the sizes of the chapter's ``cslm_*`` parameters,
    trained on the target side of ``base``'s training data (:func:`cslm_run`): its config and
    its artifact."""
    corpus, data, p = base.corpus, base.data, params
    vocab = corpus.tgt_vocab
    config = CSLMConfig(
        vocab=len(vocab), order=p["cslm_order"], emb=p["cslm_emb"],
        hidden=(p["cslm_hidden1"], p["cslm_hidden2"]),
    )  # fmt: skip
    art = cslm_run(
        cache, config, data.train_tgt, data.dev_tgt, vocab,
        updates=p["cslm_updates"], batch_size=p["cslm_batch"], lr=p["cslm_lr"],
        eval_every=p["cslm_eval_every"], dev_share=p["cslm_dev_share"], seed=p["seed"],
        data=checksum([corpus.checksum], data.train_tgt, data.dev_tgt), device=base.device,
    )  # fmt: skip
    return config, art


def cslm_rows(
    cache: ArtifactCache, base: "BaselineRow", rnn: "RNNRow", params: dict[str, Any]
) -> CSLMRows:
    """Paper A's neural language model (Schwenk 2007; :func:`cslm_run` at the sizes of the
    ``cslm_*`` parameters, on the target side of the training data) and the rows that add it:
    +CSLM (on the Baseline's runs), +CSLM+RNN and +CSLM+RNN+WP (on the +RNN row's runs, WP the
    count of target words outside the shortlist), each :meth:`RescoredSystem.run` per MERT
    seed in ``params["rescore_mode"]``."""
    corpus, data, p = base.corpus, base.data, params
    vocab = corpus.tgt_vocab
    config, art = cslm_model(cache, base, params)
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
                mode=p["rescore_mode"],
                iterations=p["rescore_iterations"],
                nbest=p["eval_nbest"],
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
    params: dict[str, Any],
    replicates: Sequence["Replicate"],
    cslm: CSLMRows,
) -> list["Replicate"]:
    """``replicates`` (:func:`rnnlib.experiments.cho2014.alignment_replicates`) with their CSLM
    rows (issue 28): the chapter's (``cslm``) on the first alignment, and on each further one
    its own, :func:`cslm_rows` on that alignment's Baseline and +RNN runs (the CSLM itself reads
    no alignment: one model, one artifact). Built for the alignments ``alignment_replicates``
    asks for; for those read from the cache (``cached_spread``) read where the cache holds them,
    else left without (``cslm`` ``None``), computing none."""
    n = params.get("alignment_replicates", 1)
    out = [dataclasses.replace(replicates[0], cslm=cslm.runs)]
    for rep in replicates[1:]:
        if rep.alignment <= n:
            rows = cslm_rows(cache, rep.base, rep.rnn, params).runs
        else:
            try:
                with cache.lookup_only():
                    rows = cslm_rows(cache, rep.base, rep.rnn, params).runs
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


def cslm_numbers(
    base: "BaselineRow", cslm: CSLMRows, timing: SearchTiming, params: dict[str, Any]
) -> list[Number]:
    """The CSLM's sizes, training and perplexities (with the Kneser-Ney LM's and the paper's),
    the search timing and what it implies for one dev decoding of MERT."""
    p, extra, lm = params, cslm.artifact.extra, base.first_run.lm
    tuned = base.first_run.tuned
    history = json.loads(tuned.file("weights.json").read_text())["history"]
    mert_decode = float(np.mean([r["decode_s"] for r in history]))  # one dev decoding of MERT
    slower = max(timing.without_cslm, 1e-9)
    return [
        Number("cho-cslm-order", p["cslm_order"]),
        Number("cho-cslm-emb", p["cslm_emb"]),
        Number("cho-cslm-h1", p["cslm_hidden1"]),
        Number("cho-cslm-h2", p["cslm_hidden2"]),
        Number("cho-cslm-vocab", len(base.corpus.tgt_vocab)),
        Number("cho-cslm-updates", p["cslm_updates"]),
        Number("cho-cslm-ngrams", extra["train_ngrams"] + extra["dev_ngrams"], None, cslm.cited),
        Number("cho-cslm-ppl", extra["best_dev_ppl"], 1, cslm.cited),
        Number("cho-cslm-dev-ppl", extra["dev_set_ppl"], 1, cslm.cited),
        Number("cho-paper-cslm-ppl", papers.A_CSLM_PERPLEXITY, 2),
        Number("cho-kn-dev-ppl", lm.extra["dev_perplexity"], 1, [lm]),
        Number("cho-kn-short-dev-ppl", cslm.kn.extra["dev_perplexity"], 1, [cslm.kn]),
        Number("cho-search-n", len(timing.sentences)),
        Number("cho-search-words", sum(len(x) for x in timing.sentences)),
        Number("cho-search-with", timing.with_cslm, 1),
        Number("cho-search-without", timing.without_cslm, 1),
        Number("cho-search-ratio", timing.ratio, 1),
        Number("cho-search-ngrams", timing.ngrams),
        Number("cho-mert-decode", mert_decode, 0, [tuned]),
        Number("cho-mert-decode-cslm", mert_decode * timing.with_cslm / slower / 60, 1),
        Number("cho-eval-nbest", p["eval_nbest"]),
    ]


def rescore_how(mode: str, eval_nbest: int, tune_nbest: int) -> str:
    """How the CSLM rows were made in rescoring ``mode`` (Markdown, for the chapter's prose)."""
    if mode == "lists":
        return (
            f"each row starts from its base row of the same MERT seed (the Baseline for +CSLM, "
            f"+RNN for the other two) and takes the {eval_nbest}-best lists of dev and test that "
            "the base row's tuned decoder produced (its output is their first candidates). Every "
            "complete candidate gets the CSLM's $\\log p(e)$ as one more feature (and, for +WP, "
            "the number of its words outside the networks' shortlist); MERT tunes all the "
            "weights on the dev lists of the MERT sentences, starting from the base row's "
            "weights and 0 for the new features, and the test lists are reranked with the tuned "
            "weights. No sentence is decoded again"
        )
    return (
        f"each row runs MERT's usual loop from its base row's tuned weights (same MERT seed): "
        f"every iteration decodes the MERT sentences to {tune_nbest}-best lists with the search "
        "weights, adds the CSLM's $\\log p(e)$ of every candidate (and, for +WP, the number of "
        "its words outside the networks' shortlist), pools them and tunes all the weights; dev "
        f"and test are then decoded to {eval_nbest}-best lists with the tuned search weights, "
        "rescored and reranked"
    )


__all__ = [
    "CSLMRows",
    "cslm_row_label",
    "MODES",
    "RescoredSystem",
    "SearchTiming",
    "cslm_model",
    "cslm_numbers",
    "cslm_rows",
    "cslm_run",
    "load_cslm",
    "rescore_how",
    "search_seconds",
    "search_timing",
]
