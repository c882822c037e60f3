"""The functions of the data chapter (rnnlib.experiments.data): what each table, number, text and
the figure show, on small corpora of the user's own files (prepared offline) and, for the
Bible-only items, on stand-ins with the corpus' fields they read."""

from __future__ import annotations

import random
from pathlib import Path
from types import SimpleNamespace

import matplotlib
import numpy as np
import pandas as pd
import pytest
import sacrebleu

from rnnlib.cache import ArtifactCache
from rnnlib.corpus import split as splits
from rnnlib.corpus.dataset import CorpusConfig, prepare_corpus
from rnnlib.experiments import data

matplotlib.use("Agg")

WORDS = "the a house cat dog small big sleeps runs sees red old man woman child river".split()


def write_corpus(folder: Path, n_train: int = 60, words: tuple[int, int] = (3, 12)) -> Path:
    """train/dev/test .en/.fr of ``n_train``/10/10 lines (the French side a word-for-word code);
    line 5 of train.fr is empty and the last three test lines end in a word only the test has."""
    rng = random.Random(0)
    folder.mkdir(parents=True, exist_ok=True)
    for split, n in (("train", n_train), ("dev", 10), ("test", 10)):
        en = [
            " ".join(rng.choice(WORDS) for _ in range(rng.randint(*words))) + f" {split}{i} ."
            for i in range(n)
        ]
        if split == "test":
            en[-3:] = [line + " Zanzibar" for line in en[-3:]]
        fr = [" ".join(w[::-1] for w in line.split()) for line in en]
        if split == "train":
            fr[4] = ""
        (folder / f"{split}.en").write_text("\n".join(en) + "\n", encoding="utf-8")
        (folder / f"{split}.fr").write_text("\n".join(fr) + "\n", encoding="utf-8")
    return folder


def files_params(folder: Path) -> dict:
    """The chapter's corpus parameters for ``folder``, pre-tokenized."""
    return {"corpus": "files", "corpus_dir": str(folder), "tokenizer": "whitespace"}


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """``(cfg, corpus, cache, params)`` of a small corpus of files."""
    root = tmp_path_factory.mktemp("data-chapter")
    params = files_params(write_corpus(root / "my corpus"))
    cfg = CorpusConfig(**params)
    cache = ArtifactCache(root / "cache")
    return cfg, prepare_corpus(cfg, cache), cache, params


# -- the user's files -----------------------------------------------------------------------------
def test_texts_and_tables_speak_of_the_files(files):
    cfg, corpus, _, _ = files
    assert data.cited_files(cfg) == ["corpus_dir"] and data.unit(cfg) == "pair"
    assert data.ran_on(cfg) == "your own files, English → French"
    assert '(`tokenizer="whitespace"`)' in data.tokenizing(cfg)
    assert data.cleaned(cfg) == "your files, which are not cleaned"
    assert data.cleaning_numbers(cfg, corpus) == {
        "corpus-rules": len(data.RULES),
        "corpus-rules-used": 0,
        "corpus-psalm-titles": 0,
        "corpus-markers": 0,
    }
    assert data.token_unit(cfg) == "tokens (the words between spaces)"
    settings = data.versions_table(cfg, "my corpus")
    assert settings.loc["corpus_dir", "value"] == "my corpus"  # the parameter as given
    assert settings.loc["languages", "value"] == "en -> fr"
    for table in (data.cleaning_table(cfg, corpus), data.human_bleu(cfg, corpus)[0]):
        assert "not applicable to user files" in table.iloc[0]["note"]
    assert data.human_bleu(cfg, corpus)[1] == "none (user files have one reference)"
    assert data.split_table(cfg, corpus).loc["train", "files"] == "train.en + train.fr"


def test_filters_numbers_and_the_dropped_pairs(files):
    cfg, corpus, _, _ = files
    filters = data.filters_table(cfg, corpus)
    assert list(filters.columns[:2]) == ["pairs read", "empty line skipped"]
    assert filters.loc["train", "pairs read"] == 60 and filters.loc["train", "pairs kept"] == 59
    numbers = data.split_numbers(corpus)
    assert [numbers[f"corpus-{s}-pairs"][0] for s in ("train", "dev", "test")] == [59, 10, 10]
    skipped = data.skipped_table(cfg, corpus)
    assert skipped.loc["empty line skipped", "first"] == "train.fr:5"
    assert skipped.loc["empty line skipped", "pairs"] == 1
    assert data.guard_words(1000) == "1,000 tokens or 10,000 characters"
    assert data.guard_words(None) == "off (`length_guard=None`)"
    near = data.near_duplicate_numbers(corpus)
    assert near["corpus-near-test"][0] == int(corpus.near_duplicates("test").sum())


def test_statistics_and_the_unknown_words(files):
    cfg, corpus, _, _ = files
    assert "near_duplicates" not in data.stats_table(corpus).columns
    numbers = data.stats_numbers(cfg, corpus)
    unknown = data.unknown_test_words(corpus)
    assert unknown.count("rabiznaZ") == 3  # the French side of the test-only word
    assert numbers["corpus-unk-capitalized"][0] == pytest.approx(
        100 * np.mean([w[:1].isupper() for w in unknown])
    )
    tokens = corpus.stats.loc["train", "tokens"].sum()
    assert numbers["corpus-size-ratio"][0] == round(data.PAPER_WORDS / tokens)
    assert data.unk_top_text(corpus).startswith("*rabiznaZ* (3), ")


def test_lengths_figure_and_its_caption(files):
    cfg, corpus, _, _ = files
    fig, clipped = data.lengths_figure(cfg, corpus)
    assert clipped == 0 and [ax.get_title() for ax in fig.axes] == ["en", "fr"]
    bars = sum(p.get_height() for p in fig.axes[0].patches)
    assert bars == len(corpus.train)  # every training pair in one bar
    longest = int(max(corpus.train.src.lengths.max(), corpus.train.tgt.lengths.max()))
    assert data.lengths_numbers(corpus, 0) == {"corpus-clipped": 0, "corpus-longest": longest}
    assert data.lengths_tail(0) == "no sentence is beyond the last bar"
    assert "longer sentences" in data.lengths_tail(3)


def test_length_filters_keep_every_short_pair(files):
    _, corpus, cache, params = files
    table, filtered = data.length_filters(cache, data.Params(**params))
    assert list(table.index) == ["none", 50, 30] and len(filtered) == 3
    assert (table["training pairs"] == len(corpus.train)).all()  # no pair longer than 30
    assert data.length_filter_numbers(table) == {
        "corpus-pairs-le30-pct": (100.0, 1),
        "corpus-pairs-le50-pct": (100.0, 1),
    }


def test_a_filter_no_pair_passes_gives_a_row_of_zeros(tmp_path):
    params = files_params(write_corpus(tmp_path / "long", n_train=20, words=(55, 65)))
    table, filtered = data.length_filters(ArtifactCache(tmp_path / "cache"), data.Params(**params))
    assert len(filtered) == 1 and list(table["training pairs"]) == [19, 0, 0]  # one empty line
    assert np.isnan(table.loc[30, "test target UNK rate"])
    numbers = data.length_filter_numbers(table)
    assert numbers["corpus-pairs-le50-pct"] == (0.0, 1)


def test_examples_are_drawn_with_seed_0_in_test_order(files):
    cfg, corpus, _, _ = files
    examples = data.examples_table(cfg, corpus, 4)
    assert examples.index.name == "file:line" and len(examples) == 4
    assert all(w.startswith("test.en:") for w in examples.index)
    rows = [int(w.split(":")[1]) for w in examples.index]
    assert rows == sorted(rows)
    assert examples.equals(data.examples_table(cfg, corpus, 4))
    assert len(data.examples_table(cfg, corpus, 50)) == 10  # at most the test set


# -- the Bible ------------------------------------------------------------------------------------
def test_bible_versions_cleaning_and_split():
    cfg = CorpusConfig()  # WEB -> Segond, with every other French version as extra reference
    assert data.cited_files(cfg) == [] and data.unit(cfg) == "verse"
    versions = data.versions_table(cfg, None)
    assert list(versions.index) == ["4", "l", *cfg.reference_versions()]
    assert versions.loc["l", "role here"] == "target (main reference)"
    assert data.ran_on(cfg) == "the Bible, World English Bible (2000) → Louis Segond (1910)"
    assert data.tokenizing(cfg).startswith("cut into tokens by the Moses tokenizer")
    report = pd.DataFrame(
        {"description": ["", "", ""], "4 WEB": [0, 2, 0], "l Segond": [0, 62, 5]},
        index=["whitespace", "psalm_title", "versification_marker"],
    )
    books = {str(b): [f"Book{b}"] for b in range(1, 67)}
    corpus = SimpleNamespace(cleaning_report=report, info={"books": books})
    assert data.cleaning_table(cfg, corpus) is report
    assert data.cleaning_numbers(cfg, corpus) == {
        "corpus-rules": 3,
        "corpus-rules-used": 2,
        "corpus-psalm-titles": 62,
        "corpus-markers": 5,
    }
    assert data.cleaned(cfg) == "the versions used here"
    split = data.split_table(cfg, corpus)
    assert split.loc["dev", "books"] == ", ".join(f"Book{b}" for b in splits.DEV_BOOKS)
    held = len(splits.DEV_BOOKS) + len(splits.TEST_BOOKS)
    assert split.loc["train", "books"] == f"the other {66 - held} books"


def test_human_bleu_scores_one_version_against_the_others():
    refs = [
        ["the cat sleeps .", "a big dog runs ."],
        ["the cat sleeps .", "a small dog runs ."],
        ["a cat sleeps .", "a small dog walks ."],
    ]
    labels = ["l Segond", "5 Darby", "o Ostervald"]
    corpus = SimpleNamespace(references=lambda split, multi: refs, reference_labels=labels)
    table, signature = data.human_bleu(CorpusConfig(), corpus)
    single = sacrebleu.BLEU().corpus_score(refs[1], [refs[0]]).score
    multi = sacrebleu.BLEU().corpus_score(refs[1], [refs[0], refs[2]]).score
    assert list(table["BLEU"]) == [round(single, 2), round(multi, 2)]
    assert list(table["references"]) == ["l Segond", "l Segond + o Ostervald"]
    assert set(table.index) == {"5 Darby"} and "nrefs:1" in signature
    assert signature.startswith("`") and signature.endswith("`") and len(signature) <= 80
    assert multi > single  # the second reference has words the first lacks
    alone = SimpleNamespace(references=lambda split, multi: refs[:1], reference_labels=labels[:1])
    table, signature = data.human_bleu(CorpusConfig(extra_refs=()), alone)
    assert "no extra reference" in table.iloc[0]["BLEU"]
    assert signature == "none (no extra reference)"


def test_the_glued_words_are_short_and_the_unknown_words_fit_in_80_characters(files):
    cfg, corpus, _, _ = files
    long_names = CorpusConfig(en_version="3", fr_version="o")
    words = [
        data.ran_on(cfg),
        data.ran_on(long_names),
        data.tokenizing(cfg),
        data.tokenizing(CorpusConfig()),
        data.cleaned(cfg),
        data.guard_words(1000000),
        data.guard_words(None),
        data.lengths_tail(0),
        data.lengths_tail(1),
        data.token_unit(cfg),
        data.unk_top_text(corpus),
    ]
    assert all(len(w) <= 80 for w in words), [w for w in words if len(w) > 80]
    many = SimpleNamespace(
        text=lambda split, side: ["Supercalifragilistic" + str(i) for i in range(9)],
        tgt_vocab={},
    )
    top = data.unk_top_text(many)
    assert len(top) <= 80 and top.startswith("*Supercalifragilistic0* (1), ")
