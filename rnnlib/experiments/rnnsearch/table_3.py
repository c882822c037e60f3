"""B Table 3: the longest test sentences the "-50" models could have trained on, translated by
RNNencdec-50, RNNsearch-50 and the phrase-based system, and the claim C-B-T3-1."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ... import stats, verdicts
from ...bleu import corpus_bleu, sentence_bleu
from ...book import papers
from ...book.claims import ClaimCheck
from .blocks import blocks_in_words, chapter_ids
from .controls import IDENTICAL_WHAT, bleu_floor, dlh
from .seeds import SeedRuns, seed_translations
from .setting import RNNsearchExperiment
from .translations import Translations


def longest_sentences(ex: RNNsearchExperiment) -> np.ndarray:
    """``(n_long,)``: B Table 3's sentences, the longest evaluated test sentences (longest first,
    stable) among those the "-50" models could have trained on and the "-30" models could not:
    source of at least ``len_short`` and both sides of at most ``len_long`` tokens (the paper:
    "30 words or more", its models trained on at most 50). When no sentence is in that range,
    the longest of all."""
    p = ex.P
    tgt_len = ex.corpus.test.tgt.lengths[: ex.n_test]
    beyond_short = (ex.src_len > p.len_short) | (tgt_len > p.len_short)
    inside = beyond_short & (ex.src_len <= p.len_long) & (tgt_len <= p.len_long)
    pool = np.flatnonzero(inside) if inside.any() else np.arange(ex.n_test)
    order = pool[np.argsort(-ex.src_len[pool], kind="stable")]
    return ex.test[order[: p.n_long]]


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


#: C-B-T3-1 reads the evaluated test sentences of at least this many source tokens (the paper's
#: "30 words or more")
LONG_TOKENS = 30


def long_test_sentences(ex: RNNsearchExperiment) -> np.ndarray:
    """Positions of the evaluated test sentences of at least :data:`LONG_TOKENS` source tokens."""
    return np.flatnonzero(ex.src_len >= LONG_TOKENS)


def long_gap(ex: RNNsearchExperiment, tr: Translations, a: str, b: str = "RNNencdec-50") -> dict:
    """``a`` − ``b`` on :func:`long_test_sentences` (:func:`rnnlib.stats.paired_bootstrap`)."""
    idx, refs = long_test_sentences(ex), tr.refs["all"]
    ha, hb = tr.of(a), tr.of(b)
    return stats.paired_bootstrap(
        [ha[i] for i in idx],
        [hb[i] for i in idx],
        [refs[i] for i in idx],
        n_samples=ex.P.n_boot,
        blocks=chapter_ids(ex, idx),
    )


def gap_text(ex: RNNsearchExperiment, tr: Translations) -> str:
    """RNNsearch-50 − RNNencdec-50 on the long sentences in words: the difference, its interval
    and both models' BLEU there."""
    if len(long_test_sentences(ex)) < 2:
        return "not measured (fewer than two such sentences)"
    res = long_gap(ex, tr, "RNNsearch-50")
    return (
        f"{res['diff']:+.2f} BLEU [{res['low']:.2f}, {res['high']:.2f}] "
        f"({res['bleu_a']:.2f} against {res['bleu_b']:.2f})"
    )


def claim_t3_1(ex: RNNsearchExperiment, tr: Translations) -> ClaimCheck:
    """C-B-T3-1, RNNencdec-50 drifts from the meaning of long sentences, RNNsearch-50 keeps it.
    B §5.2.2: "the RNNencdec began deviating from the actual meaning of the source sentence after
    generating approximately 30 words", while "the RNNsearch-50 generated the following correct
    translation, preserving the whole meaning of the input sentence without omitting any
    details". RNNsearch-50 − RNNencdec-50 above 0 on every evaluated test sentence of
    :data:`LONG_TOKENS` tokens or more (paired bootstrap); control: RNNencdec-50 against itself
    (two identical systems); floor: the two models on all sentences, RNNsearch-50 on the long."""
    n = len(long_test_sentences(ex))
    if n < 2:
        why = verdicts.not_measurable("fewer than two test sentences of 30 tokens or more")
        return ClaimCheck("C-B-T3-1", why, "rns-t3-claim")
    res, ctrl = long_gap(ex, tr, "RNNsearch-50"), long_gap(ex, tr, "RNNencdec-50")
    label = "sentences of 30 tokens or more"
    check = verdicts.controlled(
        verdicts.intervals_above(
            [(f"RNNsearch-50 − RNNencdec-50, {label}", *dlh(res))],
            note=f"{n} test sentences, paired bootstrap ({_unit(ex, res)}); one training run per "
            "model; BLEU reads the meaning kept only through shared n-grams",
        ),
        IDENTICAL_WHAT + " RNNencdec-50 in place of RNNsearch-50",
        verdicts.intervals_above([(f"RNNencdec-50 − RNNencdec-50, {label}", *dlh(ctrl))]),
    )
    encdec, search, refs = tr.of("RNNencdec-50"), tr.of("RNNsearch-50"), tr.refs["all"]
    read = [
        ("RNNencdec-50, all", corpus_bleu(encdec, refs).score),
        ("RNNsearch-50, all", corpus_bleu(search, refs).score),
        (f"RNNsearch-50, {label}", res["bleu_a"]),
    ]
    what = (
        "the two models on all sentences (a model must translate before it can drift), and "
        "RNNsearch-50 on the long ones"
    )
    return ClaimCheck("C-B-T3-1", bleu_floor(check, read, what), "rns-t3-claim")


def by_seed(
    ex: RNNsearchExperiment, tr: Translations, sr: SeedRuns
) -> list[tuple[int, list[ClaimCheck]]]:
    """``(seed, [check])``: C-B-T3-1 (:func:`claim_t3_1`) on each further seed's
    "-50" pair, as on the chapter's."""
    return [
        (seed, [claim_t3_1(ex, seed_translations(tr, sr, k))])
        for k, seed in enumerate(sr.seeds[1:], start=1)
    ]


def _unit(ex: RNNsearchExperiment, res: dict) -> str:
    """What a bootstrap of :func:`rnnlib.stats.paired_bootstrap` resampled, in words."""
    if res.get("blocks") is None:
        return "sentences resampled"
    return blocks_in_words(ex, res["blocks"])
