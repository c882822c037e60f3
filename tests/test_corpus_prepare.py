"""The prepared Bible corpus: split by verse key, leak removal, near-duplicates, length filters,
vocabularies, multi-reference dev/test, caching. Uses the real database (downloaded once per
cache folder: ``$RNNLIB_CACHE`` if set, else the session's cache, see ``conftest.bible_cache``)."""

import numpy as np
import pytest
import sacrebleu

from rnnlib.corpus.dataset import CorpusConfig, prepare_corpus
from rnnlib.corpus.split import DEV_BOOKS, TEST_BOOKS, NearDuplicates, assign_splits, normalize
from rnnlib.specials import UNK


@pytest.fixture(scope="session")
def cache(bible_cache):
    return bible_cache


@pytest.fixture(scope="session")
def web_segond(cache):
    return prepare_corpus(CorpusConfig(), cache)


def test_default_corpus_has_the_book_split_and_a_second_call_reads_the_cache(web_segond, cache):
    c = web_segond
    assert (len(c.dev), len(c.test)) == (1303, 1471)
    assert 28_000 < len(c.train) < 28_328  # 28,328 train verses minus the leaks
    for split in ("dev", "test"):
        books = set(np.load(c.path / f"{split}.keys.npy")[:, 0])
        assert books == set(DEV_BOOKS if split == "dev" else TEST_BOOKS)
    assert c.label("test", 0) == "Ruth 1:1"
    before = len(cache.events)
    again = prepare_corpus(CorpusConfig(), cache)
    read = cache.events[before:]
    assert read and all(e["hit"] for e in read), read  # nothing recomputed (speed: benchmarks)
    assert again.checksum == c.checksum and len(again.train) == len(c.train)


def test_arrays_decode_to_the_tokenized_text(web_segond):
    c = web_segond
    for split, pa in (("train", c.train), ("test", c.test)):
        assert isinstance(pa.src.ids, np.memmap) and pa.src.ids.dtype == np.int32
        for i in (0, len(pa) // 2, len(pa) - 1):
            words = c.text(split, "tgt")[i].split()
            decoded = c.tgt_vocab.decode(pa.tgt[i])
            assert [w if w in c.tgt_vocab else "[UNK]" for w in words] == decoded


def test_every_version_lands_in_the_same_split(web_segond, cache):
    bbe_darby = prepare_corpus(CorpusConfig(en_version="3", fr_version="5", extra_refs=()), cache)
    # BBE's 38 placeholder verses ('...', '[]', ...) are dropped from every split they fall in;
    # every other verse is in the same split as with WEB -> Segond
    assert bbe_darby.filters["missing_side"].sum() == 38
    assert bbe_darby.cleaning_report.loc["placeholder_verse", "3 BBE"] == 38
    for split in ("dev", "test"):
        ours, theirs = set(bbe_darby.rows(split)), set(web_segond.rows(split))
        assert ours <= theirs and len(theirs - ours) == bbe_darby.filters.loc[split, "missing_side"]
    assert bbe_darby.filters.loc["test", "missing_side"] > 0  # Acts has placeholder verses
    assert "[]" not in bbe_darby.detok("test", "src")
    assert bbe_darby.references("test", multi=True) == [bbe_darby.detok("test")]
    keys = np.array([[7, 1, 1], [8, 1, 1], [1, 1, 1], [59, 5, 20]])
    assert list(assign_splits(keys)) == ["dev", "test", "train", "test"]


def test_train_pairs_equal_to_a_heldout_side_are_dropped(web_segond):
    c = web_segond
    assert c.filters.loc["train", "leak"] > 0
    held_src = {normalize(t) for s in ("dev", "test") for t in c.detok(s, "src")}
    held_tgt = {
        normalize(t) for s in ("dev", "test") for refs in c.references(s, multi=True) for t in refs
    }
    assert not held_src & {normalize(t) for t in c.detok("train", "src")}
    assert not held_tgt & {normalize(t) for t in c.detok("train", "tgt")}


def test_near_duplicates_are_measured_and_rare(web_segond):
    c = web_segond
    near = c.near_duplicates("test")
    assert near.shape == (len(c.test),) and 5 < near.sum() < 0.05 * len(c.test)
    assert c.stats.loc[("test", "src"), "near_duplicates"] == c.near_duplicates("test", "src").sum()


def test_near_duplicate_measure_on_a_toy_example():
    nd = NearDuplicates(["a b c d e f", "x y z w v u", "too short"])
    nd.add_train("q a b c d e z")  # 2 of the 3 4-grams of sentence 0
    nd.add_train("x y z w")  # 1 of 3 of sentence 1
    nd.add_train("too short")
    assert list(nd.mask()) == [True, False, False]


def test_length_filter_applies_to_both_sides_of_train_only(web_segond, cache):
    c30 = prepare_corpus(CorpusConfig(max_len=30), cache)
    assert c30.train.src.lengths.max() == 30 and c30.train.tgt.lengths.max() == 30
    assert c30.test.src.lengths.max() > 50 and len(c30.test) == len(web_segond.test)
    both_short = ((web_segond.train.src.lengths <= 30) & (web_segond.train.tgt.lengths <= 30)).sum()
    assert len(c30.train) == both_short
    assert c30.filters.loc["train", "too_long"] == len(web_segond.train) - both_short
    assert c30.checksum != web_segond.checksum


def test_shortlist_size_and_unk_rate(web_segond, cache):
    c = web_segond
    assert len(c.tgt_vocab) == 15000 + 4 and c.tgt_vocab.itos[:4] == [
        "[PAD]",
        "[UNK]",
        "[BOS]",
        "[EOS]",
    ]
    assert len(c.src_vocab) < 15004  # WEB has fewer than 15k training types: no UNK in train
    assert c.stats.loc[("train", "src"), "unk_rate"] == 0
    assert c.stats.loc[("train", "tgt"), "unk_rate"] == pytest.approx(
        (c.train.tgt.ids == UNK).mean(), abs=1e-5
    )
    small = prepare_corpus(CorpusConfig(src_vocab=2000, tgt_vocab=2000), cache)
    assert len(small.src_vocab) == 2004
    assert (
        small.stats.loc[("test", "tgt"), "unk_rate"]
        > c.stats.loc[("test", "tgt"), "unk_rate"] + 0.05
    )


def test_multi_reference_dev_and_test(web_segond):
    c = web_segond
    refs = c.references("test", multi=True)
    assert c.reference_labels == ["l Segond", "5 Darby", "o Ostervald"] and len(refs) == 3
    assert all(len(r) == len(c.test) for r in refs)
    one = sacrebleu.corpus_bleu(refs[1], [refs[0]]).score  # Darby scored against Segond
    many = sacrebleu.corpus_bleu(refs[1], [refs[0], refs[2]]).score
    assert 5 < one < many
    assert all(
        "\u2019" not in t and "œ" not in t for t in refs[1]
    )  # references cleaned like the target


def test_reverse_direction_and_bad_parameters(cache):
    with pytest.raises(ValueError, match="copyrighted"):
        CorpusConfig(en_version="2")
    with pytest.raises(ValueError, match="fr_version='4'"):
        CorpusConfig(fr_version="4")
    with pytest.raises(ValueError, match="max_len"):
        CorpusConfig(max_len=0)
    with pytest.raises(ValueError, match="unknown CorpusConfig field .vocab."):
        CorpusConfig.from_dict({"vocab": 10})
    fr_en = CorpusConfig(src_lang="fr", tgt_lang="en", extra_refs=("k",))
    assert fr_en.reference_versions() == ("k",)


def test_french_to_english(web_segond, cache):
    c = prepare_corpus(CorpusConfig(src_lang="fr", tgt_lang="en", extra_refs=("k",)), cache)
    assert c.tokenizer("src").lang == "fr" and c.reference_labels == ["4 WEB", "k KJV"]
    assert c.detok("test", "src") == web_segond.detok("test", "tgt")
    assert c.text("test", "tgt") == web_segond.text("test", "src")
    # train differs only by the leak filter (the held-out references are now English versions)
    dropped = c.filters.loc["train", "leak"]
    assert len(c.train) + dropped == len(web_segond.train) + web_segond.filters.loc["train", "leak"]
