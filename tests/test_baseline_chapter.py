"""The baseline chapter's experiment module (rnnlib.experiments.baseline): the system from the
chapter's parameters, the BLEU table beside both papers, the No UNK subset, the stages, weights
and MERT tables and figure, and the eflomal two-run check."""

from __future__ import annotations

import json
import math

import matplotlib

matplotlib.use("Agg")
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import sacrebleu  # noqa: E402

from rnnlib.book import papers  # noqa: E402
from rnnlib.cache import Artifact, ArtifactCache  # noqa: E402
from rnnlib.experiments import baseline  # noqa: E402
from rnnlib.smt.decoder import DecoderConfig  # noqa: E402
from rnnlib.smt.system import SMTConfig, SMTData, SMTResult, build_alignment  # noqa: E402
from rnnlib.specials import UNK  # noqa: E402


def artifact(tmp_path, kind, seconds=0.0, extra=None, files=None) -> Artifact:
    path = tmp_path / kind
    path.mkdir(parents=True)
    for name, text in (files or {}).items():
        (path / name).write_text(text, encoding="utf-8")
    meta = {"wall_time_s": seconds, "extra": extra or {}}
    return Artifact(kind, kind, path, meta, True)


def bleu_entry(score, refs=1):
    return {"bleu": score, "signature": f"nrefs:{refs}|case:mixed", "references": refs}


@pytest.fixture
def result(tmp_path) -> SMTResult:
    """An :class:`SMTResult` whose artifacts hold what the pipeline writes (no system is run)."""
    bleu = {
        "dev": {"single": bleu_entry(12.3456)},
        "test": {"single": bleu_entry(10.111), "multi": bleu_entry(14.987, 2)},
    }
    history = [{"iteration": 0, "dev_bleu": 8.0}, {"iteration": 1, "dev_bleu": 9.5}]
    weights = {"weights": {"lm": 0.123456, "distortion": -0.0456789}, "history": history}
    evaluation_files = {
        "bleu.json": json.dumps(bleu),
        "speed.json": json.dumps({"test": {"seconds": 2.0, "sentences_per_s": 4.0}}),
        "test.txt": "une phrase\ndeux phrases\n",
        "dev.txt": "dev\n",
    }
    return SMTResult(
        alignment=artifact(tmp_path, "alignment", 12.34, {"links": 12345}),
        phrase_table=artifact(tmp_path, "phrase_table", 5.06, {"pairs": 2345678}),
        lm=artifact(tmp_path, "lm", 1.0, {"dev_perplexity": 87.654}),
        tuned=artifact(
            tmp_path, "tuned", 60.0, {"iterations": 2}, {"weights.json": json.dumps(weights)}
        ),
        evaluation=artifact(tmp_path, "evaluation", 3.33, files=evaluation_files),
    )


def test_bleu_table_sets_ours_beside_both_papers_rows(result):
    no_unk = {"single": bleu_entry(20.005)}
    table = baseline.bleu_table(result.bleu, no_unk, n_references=2)
    assert list(table.index) == [
        "phrase-based (this book)",
        "Baseline, Cho et al. 2014 (Table 1)",
        "Moses, Bahdanau et al. 2015 (Table 1)",
    ]
    assert list(table.columns) == ["dev", "test", "test, No UNK", "test, all references"]
    ours = table.loc["phrase-based (this book)"]
    assert list(ours) == [12.35, 10.11, 20.0, 14.99]  # rounded to 2 digits
    cho, moses = table.iloc[1], table.iloc[2]
    assert (cho["dev"], cho["test"]) == (papers.A_TABLE1["Baseline"]["dev"], 33.3)
    assert math.isnan(cho["test, No UNK"]) and math.isnan(moses["dev"])
    assert (moses["test"], moses["test, No UNK"]) == (33.3, papers.B_TABLE1["Moses"]["no_unk"])
    one = baseline.bleu_table(result.bleu, no_unk, n_references=1)
    assert list(one.columns) == ["dev", "test", "test, No UNK"]  # no column for several references


class UnkCorpus:
    """Test sentences as id arrays: sentence 1 has an UNK in the source, 3 in the reference."""

    class test:
        src = [np.array([5, 6]), np.array([5, UNK]), np.array([7]), np.array([8]), np.array([UNK])]
        tgt = [np.array([5]), np.array([6]), np.array([7]), np.array([UNK, 4]), np.array([9])]


def test_no_unk_bleu_scores_only_the_sentences_without_unknown_words():
    known = baseline.no_unk_sentences(UnkCorpus(), 4)  # the first 4 (the translated ones)
    assert known.shape == (4,) and known.tolist() == [True, False, True, False]
    refs = [["the cat sat", "a b c d", "on the mat today", "x y z w"]]
    hyps = ["the cat sat", "wrong words here", "on the mat today", "nothing like it"]
    scores = baseline.no_unk_bleu(hyps, refs, known)
    assert scores["single"]["bleu"] == pytest.approx(100.0)  # the two kept are exact
    whole = sacrebleu.corpus_bleu(hyps, refs).score
    assert whole < 100.0
    assert baseline.no_unk_bleu(hyps, refs, np.ones(4, bool))["single"]["bleu"] == whole


def test_translations_read_the_evaluation_one_sentence_a_line(result):
    assert baseline.translations(result) == ["une phrase", "deux phrases"]
    assert baseline.translations(result, "dev") == ["dev"]


def test_stages_table_names_the_settings_and_reads_each_stage_artifact(result):
    config = SMTConfig(lm_order=4, decoder=DecoderConfig(max_phrase_len=5))
    stages = baseline.stages_table(result, config)
    assert stages.index.name == "stage" and list(stages.columns) == ["seconds", "result"]
    assert list(stages.index) == [
        "word alignment (eflomal, both directions, grow-diag-final-and)",
        "phrase extraction (up to 5 words) and scoring",
        "4-gram language model (modified Kneser-Ney)",
        "MERT on dev",
        "decoding and scoring dev and test",
    ]
    assert list(stages["seconds"]) == [12.3, 5.1, 1.0, 60.0, 3.3]
    assert list(stages["result"]) == [
        "12,345 links",
        "2,345,678 phrase pairs",
        "dev perplexity 87.7",
        "2 iterations",
        "",
    ]


def test_weights_table_and_mert_curve_read_the_tuned_artifact(result, tmp_path):
    w = baseline.weights_table(result)
    assert w.index.name == "feature" and list(w.columns) == ["weight"]
    assert w["weight"].to_dict() == {"lm": 0.1235, "distortion": -0.0457}
    fig = baseline.mert_curve(result)
    (line,) = fig.axes[0].get_lines()
    assert list(line.get_xdata()) == [0, 1] and list(line.get_ydata()) == [8.0, 9.5]
    assert "MERT iteration" in fig.axes[0].get_xlabel()
    # a tuning that recorded no history draws empty axes rather than failing
    (result.tuned.path / "weights.json").write_text(json.dumps({"weights": {"lm": 1.0}}))
    assert baseline.mert_curve(result).axes[0].get_lines() == []


def test_alignment_check_reports_a_second_independent_eflomal_run(tmp_path):
    rng = np.random.default_rng(0)
    words = [f"w{i}" for i in range(8)]
    src = [list(rng.choice(words, rng.integers(2, 6))) for _ in range(40)]
    tgt = [[w.upper() for w in s] for s in src]
    refs = [[" ".join(t) for t in tgt[:3]]]
    data = SMTData(src, tgt, src[:3], tgt[:3], src[:3], dev_refs=refs, test_refs=refs)
    config = SMTConfig(eflomal_rel_iterations=0.2)
    cache = ArtifactCache(tmp_path / "cache")
    first = build_alignment(data, config, cache)
    result = SMTResult(first, None, None, None, None)
    agree = baseline.alignment_agreement(data, config, cache, result)
    second = [e for e in cache.events if e["kind"] == "smt/alignment"][-1]
    assert second["key"] != first.key  # run=2: its own artifact, not the system's alignment
    assert agree["pairs"] == 40 and 0.0 <= agree["f1"] <= 1.0
    numbers = baseline.agreement_numbers(agree)
    assert numbers["smt-align-pairs"] == (40, None)
    assert numbers["smt-align-f1"] == (pytest.approx(100 * agree["f1"]), 1)
    assert numbers["smt-align-identical"] == (
        pytest.approx(100 * agree["identical_pairs"] / 40),
        1,
    )
    assert baseline.alignment_check_status(agree) == baseline.MEASURED
    assert baseline.alignment_check_status(None) == baseline.ALIGNMENT_CHECK_OFF
    off = baseline.agreement_numbers(None)  # the names the Markdown reads exist, as NaN
    assert set(off) == set(numbers) and all(np.isnan(v) for v, _ in off.values())


def test_baseline_run_builds_the_system_of_baseline_inputs(monkeypatch):
    calls = []

    def fake_run(data, config, cache, detokenize, log, alignment_run):
        calls.append((data, config, cache, detokenize(["a", "b"]), alignment_run))
        return "the result"

    class Corpus:
        def text(self, split, side):
            return [f"{side} {split} {i}" for i in range(6)]

        def references(self, split, multi=False):
            return [[f"ref {split} {i}" for i in range(6)]]

        def detokenize(self, words):
            return "+".join(words)

    monkeypatch.setattr(baseline, "run", fake_run)
    params = {"max_train": 4, "max_eval": None, "lm_order": 3, "stack_size": 9}
    system = baseline.baseline_run(Corpus(), params, "the cache")
    data, config = baseline.baseline_inputs(Corpus(), params)
    assert (system.data, system.config, system.result) == (data, config, "the result")
    assert calls == [(data, config, "the cache", "a+b", 1)]  # the corpus' detokenizer, run 1
    baseline.baseline_run(Corpus(), params, "the cache", alignment_run=3)
    assert calls[-1][-1] == 3  # a further eflomal alignment: its own run of every stage
    assert len(data.train_src) == 4 and len(data.test_src) == 6  # max_eval None: all
    assert baseline.baseline_system(Corpus(), params, "the cache") == "the result"
    # the private helpers other modules used stay available
    assert baseline._first([1, 2, 3], 2) == [1, 2] and baseline._tokens(["a b"]) == [["a", "b"]]


def test_alignment_replicates_table_and_spread():
    """The rebuild spread: the system on several eflomal alignments, its BLEU per alignment and
    spread."""
    from types import SimpleNamespace as _NS

    def result(dev, test, pairs):
        bleu = {"dev": {"single": {"bleu": dev}}, "test": {"single": {"bleu": test}}}
        return _NS(bleu=bleu, phrase_table=_NS(extra={"pairs": pairs}))

    results = [result(30.0, 25.0, 100), result(31.0, 24.0, 110), result(29.0, 26.0, 90)]
    table = baseline.replicates_table(results)
    assert list(table.index) == ["1", "2", "3", "mean", "sd"]
    assert table.loc["sd", "test"] == pytest.approx(1.0)
    numbers = baseline.spread_numbers(results)
    assert numbers["smt-test-bleu-spread"] == (pytest.approx(1.0), 3)
    assert numbers["smt-dev-bleu-spread-n"] == (3, None)
    assert baseline.spread_numbers(results[:1]) == {}
    assert list(baseline.replicates_table(results[:1]).index) == ["1"]


def test_bleu_decoding_and_replicate_numbers_name_what_the_markdown_reads():
    from types import SimpleNamespace as _NS

    bleu = {
        "dev": {"single": {"bleu": 20.123}},
        "test": {"single": {"bleu": 18.5, "signature": "nrefs:1|case:mixed|tok:13a"}},
    }
    known = np.array([True, False, True])
    P = baseline.Params(src_vocab=100, tgt_vocab=200)
    numbers = baseline.bleu_numbers(P, bleu, {"single": {"bleu": 21.0}}, known)
    assert numbers == {
        "smt-src-vocab": 100,
        "smt-tgt-vocab": 200,
        "smt-test-bleu": (18.5, 2),
        "smt-dev-bleu": (20.123, 2),
        "smt-no-unk-bleu": (21.0, 2),
        "smt-no-unk-sentences": 2,
        "smt-test-sentences": 3,
    }
    assert baseline.signature(bleu) == "`nrefs:1|case:mixed|tok:13a`"
    result = _NS(
        lm=_NS(extra={"dev_perplexity": 123.45}),
        speed={"test": {"seconds": 12.34, "sentences_per_s": 4.567, "workers": 2}},
    )
    assert baseline.decoding_numbers(result) == {
        "smt-lm-perplexity": (123.45, 1),
        "smt-test-seconds": (12.34, 1),
        "smt-test-speed": (4.567, 2),
    }
    assert baseline.replicates_origin(baseline.Params(alignment_replicates=2), 2) == (
        "all built by this build"
    )
    mixed = baseline.replicates_origin(baseline.Params(alignment_replicates=1), 3)
    assert mixed == "1 built by this build, 2 read from the cache"
    for text in (mixed, baseline.implementation_text({}), baseline.ALIGNMENT_CHECK_OFF):
        assert len(text) <= 80
