"""The functions of the cho2014 chapter (the package rnnlib.experiments.cho2014): what each
table, figure and claim check computes, on synthetic rows, pairs and
a tiny untrained network, with controls for which a claim must not hold."""

from __future__ import annotations

from types import SimpleNamespace

import matplotlib
import numpy as np
import pandas as pd
import pytest
import torch

from rnnlib.experiments.cho2014 import cslm as cslm_mod
from rnnlib.experiments.cho2014 import figure_3
from rnnlib.experiments.cho2014 import figures_1_2
from rnnlib.experiments.cho2014 import stages as stages_mod
from rnnlib.experiments.cho2014 import table_1
from rnnlib.experiments.cho2014 import table_2
from rnnlib.experiments.cho2014 import table_3
from rnnlib.experiments.cho2014 import tuning
from rnnlib.experiments.cho2014.setting import Params
from rnnlib import verdicts
from rnnlib.corpus.vocab import Vocab
from rnnlib.models import build_model
from rnnlib.presets import preset

matplotlib.use("Agg")


def _verdict(check) -> str:
    return verdicts.evaluate(check).verdict


def _runs(dev, test) -> dict:
    """seed -> a stand-in for SMTResult with only the BLEU a row of Table 1 reads."""
    return {
        s + 1: SimpleNamespace(
            bleu={"dev": {"single": {"bleu": d}}, "test": {"single": {"bleu": t}}}
        )
        for s, (d, t) in enumerate(zip(dev, test))
    }


def _rows(gain: float, seeds: int = 3) -> dict:
    """The five rows of Table 1 with MERT noise of ~0.1 BLEU; +RNN and the CSLM rows ``gain``
    (and ``2 * gain``) above the Baseline."""
    noise = np.array([0.1, -0.1, 0.0, 0.05, -0.05])[:seeds]
    base = 20 + noise
    return {
        "Baseline": _runs(base, base + 1),
        "+RNN": _runs(base + gain, base + 1 + gain),
        "+CSLM": _runs(base + gain, base + 1 + gain),
        "+CSLM+RNN": _runs(base + 2 * gain, base + 1 + 2 * gain),
        "+CSLM+RNN+WP": _runs(base + 2 * gain, base + 1 + 2 * gain),
    }


# -- Table 1 --------------------------------------------------------------------------------------
def test_table_1_has_the_rows_columns_and_gains_of_the_paper_table():
    rows = _rows(0.5)
    table = table_1.table_1(rows)
    assert list(table.index) == ["Baseline", "+RNN", "+CSLM", "+CSLM+RNN", "+CSLM+RNN+WP"]
    assert table.loc["+RNN", "test − Baseline"] == pytest.approx(0.5)
    assert table.loc["+CSLM+RNN", "dev"] == pytest.approx(21.0)
    assert table.loc["Baseline", "dev sd"] == pytest.approx(0.1)
    assert (table["MERT runs"] == 3).all()
    assert np.isnan(table.loc["+CSLM", "paper test"])  # the paper has no +CSLM row
    assert table.loc["+RNN", "paper test − Baseline"] == pytest.approx(0.57)
    numbers = table_1.numbers(table, rows)
    assert numbers["cho-gain-test"] == (pytest.approx(0.5), 2)
    assert numbers["cho-seeds"] == 3
    assert numbers["cho-paper-gain-rnn-dev"] == (pytest.approx(0.56), 2)


def test_rnn_weights_have_one_column_per_seed():
    runs = {
        1: SimpleNamespace(weights={"rnn": 0.123456, "lm": 1.0}),
        2: SimpleNamespace(weights={"rnn": 0.2, "lm": 0.5}),
    }
    weights = tuning.rnn_weights(runs)
    assert list(weights.columns) == ["seed 1", "seed 2"] and weights.index.name == "feature"
    assert weights.loc["rnn", "seed 1"] == 0.1235


# -- Figure 3 -------------------------------------------------------------------------------------
def _pairs(n: int, coupled: bool, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    tm = rng.normal(-4, 2, n)
    count = np.exp(tm + 6).round() + 1
    rnn = tm.copy() if coupled else rng.normal(-30, 10, n)
    tgt = [("w",) * (1 + k % 3) for k in range(n)]
    return pd.DataFrame({"tgt": tgt, "rnn": rnn, "tm": tm, "count": count})


def test_figure_3_pairs_are_a_seeded_sample_in_the_frames_order():
    frame = _pairs(300, coupled=False)
    pick = figure_3.figure_3_pairs(frame, 100, seed=3)
    assert len(pick) == 100 and pick.index.is_monotonic_increasing and pick.index.is_unique
    assert pick.equals(figure_3.figure_3_pairs(frame, 100, seed=3))
    assert not pick.equals(figure_3.figure_3_pairs(frame, 100, seed=4))
    assert len(figure_3.figure_3_pairs(frame, 1000, seed=3)) == 300


def test_figure_3_numbers_and_figure():
    pick = _pairs(200, coupled=True)
    numbers = {
        k: v[0] if isinstance(v, tuple) else v for k, v in figure_3.numbers(pick, pick, 1).items()
    }
    assert numbers["cho-pearson"] == pytest.approx(1.0) and numbers[
        "cho-spearman"
    ] == pytest.approx(1.0)
    assert numbers["cho-rho-length"] == pytest.approx(1.0)
    assert numbers["cho-far-share"] == 0 and numbers["cho-scatter-n"] == 200
    assert numbers["cho-alike-share"] == 100
    fig = figure_3.figure_3(pick)
    assert len(fig.axes) == 3  # the scatter and its two marginal distributions
    assert "Pearson r = 1.00" in fig.axes[1].get_title()


# -- Tables 2 and 3 -------------------------------------------------------------------------------
def _frame(tm_prefers_long: bool = True) -> pd.DataFrame:
    """Four-word sources, three frequent (seen 30 times) and three rare (seen once), each with
    four targets of 1 to 4 words; the translation model prefers the long targets and the
    network the short ones (``tm_prefers_long``), or the other way round."""
    rows = []
    for k in range(6):
        src = tuple(f"s{k}_{i}" for i in range(4))
        seen = 30 if k < 3 else 1
        for j in range(4):
            tgt = (f"t{j}",) * (j + 1)
            tm, rnn = (j, -j) if tm_prefers_long else (-j, j)
            rows.append((src, tgt, float(tm), float(rnn), 1, seen, 4))
    rows.append((("short",), ("x",), 0.0, 0.0, 1, 30, 1))  # below min_source_words
    return pd.DataFrame(rows, columns=["src", "tgt", "tm", "rnn", "count", "src_count", "src_len"])


PARAMS = Params(min_source_words=4, frequent_count=20, rare_count=2, seed=1, phrases_per_group=2)


def test_long_phrases_groups_and_draws():
    phrases = table_2.long_phrases(_frame(), PARAMS)
    assert len(phrases.groups["frequent"]) == 3 and len(phrases.groups["rare"]) == 3
    assert all(len(s) >= 4 for g in phrases.groups.values() for s in g)
    assert {g: len(c) for g, c in phrases.chosen.items()} == {"frequent": 2, "rare": 2}
    assert all(set(phrases.chosen[g]) <= set(phrases.groups[g]) for g in phrases.groups)
    assert table_2.long_phrases(_frame(), PARAMS).chosen == phrases.chosen


def test_table_2_lists_each_models_top_three():
    phrases = table_2.long_phrases(_frame(), PARAMS)
    table = table_2.table_2(phrases)
    assert table.index.names == ["group", "source"] and len(table) == 4
    first = table.iloc[0]
    assert first["seen"] == 30
    assert first["translation model"].split(" · ")[0] == "[t3 t3 t3 t3]"  # the longest first
    assert first["RNN Encoder–Decoder"].split(" · ")[0] == "[t0]"
    numbers = {
        k: v[0] if isinstance(v, tuple) else v for k, v in table_2.numbers(phrases, PARAMS).items()
    }
    assert numbers["cho-t2-sources"] == 6 and numbers["cho-n-rare"] == 3


def _tiny_network():
    words = [f"w{i}" for i in range(8)]
    vocab = Vocab(words)
    torch.manual_seed(0)
    model = build_model(preset("smoke-cho2014", src_vocab=len(vocab), tgt_vocab=len(vocab))).eval()
    corpus = SimpleNamespace(src_vocab=vocab, tgt_vocab=vocab)
    pairs = [
        ((f"w{i}",) * 4, (f"w{j}",), float(-j), 0.0, 1, 30 if i < 2 else 1, 4)
        for i in range(4)
        for j in range(3)
    ]
    frame = pd.DataFrame(
        pairs, columns=["src", "tgt", "tm", "rnn", "count", "src_count", "src_len"]
    )
    rnn = SimpleNamespace(model=model, scorer=SimpleNamespace(device=torch.device("cpu")))
    return table_2.long_phrases(frame, PARAMS), rnn, corpus


def test_table_3_samples_are_reproducible_and_counted():
    phrases, rnn, corpus = _tiny_network()
    t3 = table_3.table_3_samples(phrases, rnn, corpus, n_samples=20, seed=5)
    assert t3.table.index.names == ["group", "source"] and len(t3.table) == 4
    assert len(t3.top_share) == 4 and all(0.05 <= s <= 1 for s in t3.top_share)
    assert 4 <= len(t3.in_table) <= 20  # at most five distinct samples shown per source
    for row in t3.table["samples (top 5 by score)"]:
        shown = row.split(" · ")
        assert (
            1 <= len(shown) <= 5 and sum(int(s.split("(×")[1].split(")")[0]) for s in shown) <= 20
        )
    again = table_3.table_3_samples(phrases, rnn, corpus, n_samples=20, seed=5)
    assert again.table.equals(t3.table) and again.top_share == t3.top_share
    assert len(t3.top_in_table) == 4
    checks = table_3.table_3_claims(t3, 20, seed=5, control=t3, n_boot=100)
    assert _verdict(checks["C-A-T3-1"]) in (verdicts.HOLDS, verdicts.NOISE, verdicts.FAILS)
    assert verdicts.evaluate(checks["C-A-T3-1"]).reason.startswith("share of the 20 draws")


# -- the rest -------------------------------------------------------------------------------------
def _art(seconds):
    return SimpleNamespace(meta={"wall_time_s": seconds})


def test_stages_table_lists_every_stage_and_run():
    run = SimpleNamespace(
        alignment=_art(1), phrase_table=_art(2), lm=_art(3), tuned=_art(4), evaluation=_art(5)
    )
    base = SimpleNamespace(first_run=run, runs={1: run, 2: run})
    rnn = SimpleNamespace(
        scorer=SimpleNamespace(artifact=_art(6)),
        feature=_art(7),
        runs={1: run, 2: run},
        runs_per_word={1: run, 2: run},
        runs_defaults={1: run},
    )
    cslm = SimpleNamespace(artifact=_art(8), runs={"+CSLM": {1: run, 2: run}}, kn=_art(9))
    timing = cslm_mod.SearchTiming([["a"]], 1.26, 0.04, 10)
    check = SimpleNamespace(
        artifact=_art(10), train_config=SimpleNamespace(optimizer="adadelta", lr=1, clip_norm=None)
    )
    table = stages_mod.stages_table(base, rnn, cslm, timing, eval_nbest=5, checks=[check])
    assert table.index.name == "stage" and list(table.columns) == ["seconds"]
    assert len(table) == 10 + 3 * 2 * 2 + 2 + 2 * 2
    more = [("long sources", _art(11)), ("not built", None)]
    longer = stages_mod.stages_table(base, rnn, cslm, timing, 5, [check], more)
    assert len(longer) == len(table) + 1 and longer.loc["long sources", "seconds"] == 11
    assert (
        table.loc[
            "training the RNN Encoder-Decoder again, pairs drawn by count: Adadelta at rate 1, "
            "no clipping"
        ].item()
        == 10
    )
    assert table.loc["+RNN per word: MERT, seed 1", "seconds"] == 4
    assert table.loc["+RNN from defaults: MERT, seed 1", "seconds"] == 4
    assert table.loc["CSLM inside the search: 1 dev sentence (this build)", "seconds"] == 1.3
    assert table.loc["+RNN: decoding dev and test (5-best), seed 2", "seconds"] == 5
    assert timing.ratio == pytest.approx(31.5)


def test_the_search_timing_and_mert_decoding_numbers(tmp_path):
    timing = cslm_mod.SearchTiming([["a", "b"], ["c"]], 1.26, 0.04, 10)
    got = cslm_mod.timing_numbers(timing, Params(eval_nbest=7, tune_nbest=100))
    assert got["cho-search-words"] == 3 and got["cho-search-ratio"] == (pytest.approx(31.5), 1)
    assert (got["cho-eval-nbest"], got["cho-tune-nbest"]) == (7, 100)
    (tmp_path / "weights.json").write_text('{"history": [{"decode_s": 30}, {"decode_s": 50}]}')
    tuned = SimpleNamespace(file=lambda name: tmp_path / name)
    base = SimpleNamespace(first_run=SimpleNamespace(tuned=tuned))
    got = cslm_mod.mert_decode_numbers(base, timing)
    assert got["cho-mert-decode"] == (40.0, 0)
    assert got["cho-mert-decode-cslm"][0] == pytest.approx(40 * 31.5 / 60)


def test_the_diagrams_are_figures_of_one_panel():
    for make in (figures_1_2.figure_1, figures_1_2.figure_2):
        fig = make()
        assert len(fig.axes) == 1 and not fig.axes[0].axison
        assert len(fig.axes[0].patches) >= 4  # the nodes
