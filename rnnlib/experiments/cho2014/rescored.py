"""A row of A Table 1 whose n-best lists are rescored with sentence features (the CSLM, the word
penalty), and the time of decoding with a language model inside the search.

:class:`RescoredSystem` is started from the base row of the same MERT seed (Baseline for +CSLM,
+RNN for the others): MERT over all the weights (``cho2014/rescored_tuned``: ``weights.json``),
then dev and test reranked (``cho2014/rescored_eval``: the files of ``smt/eval``). The values of
each sentence feature for each set of n-best lists are an artifact (``cho2014/rescoring``:
``values.npy``), and so is every decoding of MERT's loop in mode ``"search"``
(``cho2014/nbest``, keyed by the search weights: rows that decode with the same weights share
it). Deviations: see :mod:`rnnlib.smt.rescore`."""

from __future__ import annotations

import dataclasses
import json
import time
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from ...cache import Artifact, ArtifactCache
from ...smt.decoder import Decoder, Translation
from ...smt.features import BASE_FEATURES, FIXED_WEIGHTS, UNKNOWN_WORD_PENALTY, FeatureTable
from ...smt.rescore import (
    NBestLists,
    Rescorer,
    SentenceFeature,
    load_nbest,
    rerank,
    save_nbest,
    tune_rescored,
)
from ...smt.system import (
    SMTConfig,
    SMTData,
    SMTResult,
    checksum,
    feature_checksum,
    sacrebleu_scores,
    system_decoder,
)

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
