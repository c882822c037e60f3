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
    assert "`train.en` + `train.fr`" in data.intro_text(cfg, corpus)
    assert "ran on the Bible" not in data.intro_text(cfg, corpus)
    assert '(`tokenizer="whitespace"`)' in data.versions_text(cfg)
    assert data.token_unit(cfg) == "tokens (the words between spaces)"
    settings = data.versions_table(cfg, "my corpus")
    assert settings.loc["corpus_dir", "value"] == "my corpus"  # the parameter as given
    assert settings.loc["languages", "value"] == "en -> fr"
    for table in (data.cleaning_table(cfg, corpus), data.human_bleu(cfg, corpus)[0]):
        assert "not applicable to user files" in table.iloc[0]["note"]
    assert "user files have one reference" in data.human_bleu(cfg, corpus)[1]
    assert data.split_table(cfg, corpus).loc["train", "files"] == "train.en + train.fr"


def test_filters_numbers_and_the_dropped_pairs(files):
    cfg, corpus, _, _ = files
    filters = data.filters_table(cfg, corpus)
    assert list(filters.columns[:2]) == ["pairs read", "empty line skipped"]
    assert filters.loc["train", "pairs read"] == 60 and filters.loc["train", "pairs kept"] == 59
    numbers = data.split_numbers(corpus)
    assert [numbers[f"corpus-{s}-pairs"][0] for s in ("train", "dev", "test")] == [59, 10, 10]
    assert "empty line skipped: `train.fr:5`" in data.skipped_text(cfg, corpus)
    assert data.guard_text(1000).startswith("A pair with a side longer than 1,000 tokens or 10,000")
    assert "is off" in data.guard_text(None)
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
    assert data.lengths_tail(corpus, 0) == f"The longest sentence has {longest} tokens."
    assert "(3 in all" in data.lengths_tail(corpus, 3)


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
    assert "King James 2000" in data.versions_text(cfg)
    report = pd.DataFrame(
        {"description": ["", "", ""], "4 WEB": [0, 2, 0], "l Segond": [0, 62, 5]},
        index=["whitespace", "psalm_title", "versification_marker"],
    )
    books = {str(b): [f"Book{b}"] for b in range(1, 67)}
    corpus = SimpleNamespace(cleaning_report=report, info={"books": books})
    assert data.cleaning_table(cfg, corpus) is report
    summary = data.cleaning_summary(cfg, corpus)
    assert summary.startswith("Of the 3 rules, 2 change at least one verse")
    assert "Up to 62 psalm titles" in summary and "up to 5 further verses" in summary
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
    assert multi > single  # the second reference has words the first lacks
    alone = SimpleNamespace(references=lambda split, multi: refs[:1], reference_labels=labels[:1])
    table, signature = data.human_bleu(CorpusConfig(extra_refs=()), alone)
    assert "no extra reference" in table.iloc[0]["BLEU"] and "no extra reference" in signature
