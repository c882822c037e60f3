"""B Table 3: the longest test sentences the "-50" models could have trained on, translated by
RNNencdec-50, RNNsearch-50 and the phrase-based system, and the claim C-B-T3-1."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ... import stats, verdicts
from ...bleu import corpus_bleu, sentence_bleu
from ...book import papers
from ...book.claims import ClaimCheck
from .controls import IDENTICAL_WHAT, bleu_floor, dlh
from .seeds import SeedRuns, seed_translations
from .setting import RNNsearchExperiment
from .translations import Translations


def long_sentence_by_seed(
    ex: RNNsearchExperiment, tr: Translations, sr: SeedRuns
) -> list[tuple[int, list[ClaimCheck]]]:
    """``(seed, [check])``: C-B-T3-1 (:func:`long_sentence_claim`) on each further seed's
    "-50" pair, as on the chapter's."""
    return [
        (seed, [long_sentence_claim(ex, seed_translations(tr, sr, k))[2]])
        for k, seed in enumerate(sr.seeds[1:], start=1)
    ]


def longest_sentences(ex: RNNsearchExperiment) -> np.ndarray:
    """``(n_long,)``: B Table 3's sentences, the longest evaluated test sentences (longest first,
    stable) among those the "-50" models could have trained on and the "-30" models could not:
    source of at least ``len_short`` and both sides of at most ``len_long`` tokens (the paper:
    "30 words or more", its models trained on at most 50). When no sentence is in that range,
    the longest of all."""
    p = ex.p
    tgt_len = ex.corpus.test.tgt.lengths[: ex.n_test]
    beyond_short = (ex.src_len > p["len_short"]) | (tgt_len > p["len_short"])
    inside = beyond_short & (ex.src_len <= p["len_long"]) & (tgt_len <= p["len_long"])
    pool = np.flatnonzero(inside) if inside.any() else np.arange(ex.n_test)
    order = pool[np.argsort(-ex.src_len[pool], kind="stable")]
    return ex.test[order[: p["n_long"]]]


def paper_table_3() -> pd.DataFrame:
    """The paper's first example of B Table 3 (its source, reference and the two models'
    translations), as printed; index ``("the paper's example 1", row)``."""
    ex1 = papers.B_TABLE3_EXAMPLE
    rows = [
        {"sentence": "the paper's example 1", "": row, "text": ex1[row]}
        for row in ("source", "reference", "RNNenc-50", "RNNsearch-50")
    ]
    return pd.DataFrame(rows).set_index(["sentence", ""])


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
    more (:func:`rnnlib.stats.paired_bootstrap`); control: RNNencdec-50 against itself (two
    identical systems); floor: :data:`BLEU_FLOOR`. Returns ``(sentences, the difference in
    words, the check)``."""
    long_idx = np.flatnonzero(ex.src_len >= 30)
    if len(long_idx) < 2:
        why = verdicts.not_measurable("fewer than two test sentences of 30 tokens or more")
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
    ctrl = stats.paired_bootstrap(
        [encdec[i] for i in long_idx],
        [encdec[i] for i in long_idx],
        [refs[i] for i in long_idx],
        n_samples=ex.p["n_boot"],
    )
    label = "sentences of 30 tokens or more"
    check = verdicts.controlled(
        verdicts.intervals_above(
            [(f"RNNsearch-50 − RNNencdec-50, {label}", *dlh(res))],
            note=f"{len(long_idx)} test sentences, paired bootstrap; one training run per model; "
            "BLEU reads the meaning kept only through shared n-grams",
        ),
        IDENTICAL_WHAT + " RNNencdec-50 in place of RNNsearch-50",
        verdicts.intervals_above([(f"RNNencdec-50 − RNNencdec-50, {label}", *dlh(ctrl))]),
    )
    check = bleu_floor(
        check,
        [
            ("RNNencdec-50, all", corpus_bleu(encdec, refs).score),
            ("RNNsearch-50, all", corpus_bleu(search, refs).score),
            (f"RNNsearch-50, {label}", res["bleu_a"]),
        ],
        "the two models on all sentences (a model must translate before it can drift), and "
        "RNNsearch-50 on the long ones",
    )
    return len(long_idx), text, ClaimCheck("C-B-T3-1", check, "rns-t3-claim")
