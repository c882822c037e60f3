"""The source gain (chapter ``rnnsearch``, the book's reading of B Fig. 2 in nats): the draws of
mismatched sources, the per-token NLL artifact on a tiny model, the statistic by length, and
C-B-F2-5 where it holds, where it does not, where its shuffled-lengths control holds (a rule
blind to the lengths' absence), and below its floor."""

from __future__ import annotations

import warnings
from types import SimpleNamespace

import numpy as np
import pytest
import torch

from rnnlib import stats, verdicts
from rnnlib.cache import ArtifactCache
from rnnlib.config import ModelConfig
from rnnlib.experiments.rnnsearch import setting, source_gain
from rnnlib.models import build_model
from rnnlib.ragged import ParallelArrays, Ragged
from rnnlib.smt.rnn_scorer import score_pairs

EDGES = [0, 10, 20, 30, 40, 50, 60]


def _lengths(n: int = 600, seed: int = 0) -> np.ndarray:
    """``(n,)`` source lengths over the buckets 10-19 to 50-59, about as many in each."""
    return np.random.default_rng(seed).integers(10, 60, n)


def _ex(src_len: np.ndarray, **p) -> SimpleNamespace:
    params = setting.Params(**{"n_boot": 200, "seed": 3, **p})
    return SimpleNamespace(P=params, src_len=src_len, n_test=len(src_len))


def _gains(ex, search: np.ndarray, encdec: np.ndarray) -> source_gain.SourceGains:
    """:class:`SourceGains` whose per-sentence gains are ``search`` and ``encdec`` (own NLL 3
    nats per token, every mismatched source ``3 + gain``)."""
    k = source_gain.MISMATCHED

    def nll(gain):
        return np.concatenate([np.full((len(gain), 1), 3.0), 3.0 + np.tile(gain[:, None], k)], 1)

    per = {"RNNsearch-50": nll(search), "RNNencdec-50": nll(encdec)}
    return source_gain.SourceGains([per], [ex.P.seed], ex.src_len, EDGES, [])


def _noise(n: int, seed: int = 1, sd: float = 0.05) -> np.ndarray:
    return np.random.default_rng(seed).normal(0.0, sd, n)


def _judge(ex, g):
    (c,) = source_gain.claims(ex, g)
    assert c.claim == "C-B-F2-5" and c.glue == "rns-f2-claim5"
    return verdicts.evaluate(c.check)


def test_the_claim_holds_when_the_difference_grows_with_length_and_its_control_does_not():
    lengths = _lengths()
    ex = _ex(lengths)
    encdec = 0.3 + _noise(len(lengths), 1)
    search = encdec + 0.01 * lengths + _noise(len(lengths), 2)  # +0.1 nats a token per 10 tokens
    v = _judge(ex, _gains(ex, search, encdec))
    assert v.verdict == verdicts.HOLDS, v
    assert v.control != verdicts.HOLDS, v  # the shuffled lengths carry no growth
    numbers = source_gain.numbers(ex, _gains(ex, search, encdec))
    assert numbers["rns-gain-slope"][0] == pytest.approx(0.1, abs=0.01)
    assert numbers["rns-gain-slope-low"][0] > 0
    shuffles, judged = numbers["rns-gain-shuffles"][0], numbers["rns-gain-shuffled-verdicts"][0]
    assert shuffles == source_gain.SHUFFLES and 0 <= judged <= shuffles
    share = numbers["rns-gain-shuffled-share"][0]
    assert share == pytest.approx(100 * judged / shuffles)
    assert numbers["rns-gain-shuffled-low"][0] <= share <= numbers["rns-gain-shuffled-high"][0]
    assert numbers["rns-gain-shuffled-low"][0] < numbers["rns-gain-nominal"][0] == 5.0
    assert numbers["rns-gain-encdec50"][0] == pytest.approx(0.3, abs=0.01)


def test_the_claim_does_not_hold_when_the_difference_shrinks_and_is_noise_when_flat():
    lengths = _lengths()
    ex = _ex(lengths)
    encdec = 0.3 + _noise(len(lengths), 1)
    shrinking = encdec + 1.0 - 0.01 * lengths + _noise(len(lengths), 2)
    assert _judge(ex, _gains(ex, shrinking, encdec)).verdict == verdicts.FAILS
    flat = encdec + 0.5 + _noise(len(lengths), 2)  # ahead everywhere, by as much at every length
    v = _judge(ex, _gains(ex, flat, encdec))
    assert v.verdict == verdicts.NOISE and v.control != verdicts.HOLDS, v


def test_a_rule_with_too_narrow_an_interval_gives_verdicts_on_shuffled_lengths_and_is_blind():
    """The control can hold: with 10 resamples the percentile interval is narrower than the
    slope's noise, so the rule finds a trend (either way) on more shuffles of the lengths than the
    5% a calibrated 95% interval allows, and the claim is not measurable, naming the control; with
    400 resamples the same flat difference does not trip it."""
    lengths = _lengths()
    encdec = 0.3 + _noise(len(lengths), 1)
    flat = encdec + 0.5 + _noise(len(lengths), 2)
    narrow = _ex(lengths, n_boot=10)
    g = _gains(narrow, flat, encdec)
    sh = source_gain.shuffled_verdicts(narrow, g)
    assert sh["low"] > source_gain.NOMINAL_VERDICTS and sh["left_out"] == 0, sh
    v = _judge(narrow, g)
    assert v.control == verdicts.HOLDS
    assert v.verdict == verdicts.UNMEASURABLE and source_gain.SHUFFLED_WHAT in v.reason
    calibrated = _ex(lengths, n_boot=400)
    sh = source_gain.shuffled_verdicts(calibrated, g)  # kept apart from the narrow rule's count
    assert sh["low"] <= source_gain.NOMINAL_VERDICTS, sh
    assert _judge(calibrated, g).control != verdicts.HOLDS


def test_the_shuffles_are_judged_once_per_seed_and_repeat_under_the_seed():
    lengths = _lengths(300)
    ex = _ex(lengths)
    encdec = 0.3 + _noise(len(lengths), 1)
    g = _gains(ex, encdec + 0.005 * lengths, encdec)
    first = source_gain.shuffled_verdicts(ex, g)
    assert source_gain.shuffled_verdicts(ex, g) is first  # kept on g
    again = source_gain.shuffled_verdicts(ex, _gains(ex, encdec + 0.005 * lengths, encdec))
    assert again == first


def test_the_control_reach_is_the_binomial_tail_beyond_its_threshold():
    reach = source_gain.control_reach(200)
    # 17 of 200 is the fewest whose exact interval clears 5%: 16 is not
    assert reach["min"] == 17
    # the chance it holds, checked by drawing the counts of 200,000 sets of 200 shuffles of a
    # calibrated rule (5%) and of a rule giving verdicts on 10% of them
    rng = np.random.default_rng(0)
    for p, key in ((0.05, "chance"), (0.10, "power")):
        drawn = (rng.binomial(200, p, 200_000) >= reach["min"]).mean()
        assert reach[key] == pytest.approx(drawn, abs=0.004)
    assert 0.01 < reach["chance"] < 0.05 < 0.5 < reach["power"]


def test_a_model_that_ignores_its_source_is_below_the_floor():
    lengths = _lengths()
    ex = _ex(lengths)
    ignores = _noise(len(lengths), 1, 0.01)  # mismatched sources cost it nothing
    search = 0.2 + 0.01 * lengths + _noise(len(lengths), 2)
    v = _judge(ex, _gains(ex, search, ignores))
    assert v.verdict == verdicts.UNMEASURABLE
    assert "below the floor of 0 nats per target token" in v.reason and "RNNencdec-50" in v.reason


def test_fewer_than_two_solid_buckets_are_not_measurable():
    lengths = np.full(30, 25)  # one bucket
    ex = _ex(lengths)
    g = _gains(ex, 0.5 + _noise(30, 1), 0.3 + _noise(30, 2))
    (c,) = source_gain.claims(ex, g)
    assert c.check.rule == "not_measurable"
    # no shuffle has a slope either: every one is left out, and the numbers still glue
    sh = source_gain.shuffled_verdicts(ex, g)
    assert sh["shuffles"] == 0 and sh["left_out"] == source_gain.SHUFFLES
    numbers = source_gain.numbers(ex, g)
    assert numbers["rns-gain-shuffled-min"][0] == source_gain.control_reach(200)["min"]
    assert np.isnan(numbers["rns-gain-shuffled-share"][0])


def test_the_paired_means_by_length_and_the_slope_of_their_difference():
    lengths = np.repeat([5, 15, 25, 35], 40)
    a = 0.02 * lengths + _noise(len(lengths), 1, 0.01)
    b = np.zeros(len(lengths))
    a[0] = np.nan  # a sentence without a value is left out of both
    res = stats.paired_means_by_length(a, b, lengths, [0, 10, 20, 30], 20, 200, seed=0)
    t = res["buckets"]
    assert list(t["bucket"]) == ["0-9", "10-19", "20-29", ">=30"]
    assert list(t["sentences"]) == [39, 40, 40, 40] and t["solid"].all()
    assert res["slope"] == pytest.approx(0.02, abs=0.002)  # the open bucket sits at 35
    assert res["low"] < res["slope"] < res["high"] and res["low"] > 0
    assert (t["a_low"] < t["a"]).all() and (t["diff"] == t["a"]).all()
    few = stats.paired_means_by_length(a, b, lengths, [0, 10, 20, 30], 41, 50, seed=0)
    assert np.isnan(few["slope"]) and np.isnan(few["low"])


def test_mismatched_sources_come_from_the_sentence_s_bucket_never_itself():
    lengths = np.array([3, 12, 14, 15, 18, 25, 26, 44])  # 0-9 and 40-49 hold one sentence
    ex = _ex(lengths)
    draws = source_gain.mismatched_sources(ex, k=5)
    assert draws.shape == (8, 5)
    assert (draws[0] == -1).all() and (draws[7] == -1).all()
    bucket = np.searchsorted(EDGES, lengths, side="right") - 1
    for i in range(1, 7):
        assert (draws[i] != i).all() and (bucket[draws[i]] == bucket[i]).all()
    assert set(draws[5]) == {6}  # one other sentence: drawn with replacement
    assert (source_gain.mismatched_sources(ex, k=5) == draws).all()  # seeded
    assert not (source_gain.mismatched_sources(_ex(lengths, seed=4), k=5) == draws).all()


def test_the_artifact_scores_each_reference_per_token_given_each_source(tmp_path, monkeypatch):
    torch.manual_seed(0)
    cfg = ModelConfig(src_vocab=20, tgt_vocab=20, emb=4, hidden=6, maxout=4, align=6)
    model = build_model(cfg).eval()
    rng = np.random.default_rng(0)
    src = [rng.integers(4, 20, n) for n in (12, 13, 15, 22)]
    tgt = [rng.integers(4, 20, n) for n in (11, 14, 9, 20)]
    test = ParallelArrays(Ragged.from_lists(src), Ragged.from_lists(tgt))
    corpus = SimpleNamespace(test=test, checksum="c")
    ex = _ex(test.src.lengths, decode_batch=2)
    ex.corpus, ex.cache, ex.device = corpus, ArtifactCache(tmp_path), torch.device("cpu")
    ex.model_config = lambda arch: cfg
    monkeypatch.setattr(source_gain, "load_model", lambda run, config: model)
    draws = source_gain.mismatched_sources(ex, k=5)
    art, nll = source_gain.sentence_nll(ex, SimpleNamespace(key="run0"), "rnnsearch", draws)
    assert art.kind == "rnnsearch/source_gain" and nll.shape == (4, 6)
    tokens = test.tgt.lengths + 1
    own = -score_pairs(model, test) / tokens
    assert np.allclose(nll[:, 0], own) and np.isnan(nll[3, 1:]).all()  # 20-29 holds one
    for i in range(3):
        for c in range(5):
            pair = ParallelArrays(test.src.select([draws[i, c]]), test.tgt.select([i]))
            assert nll[i, 1 + c] == pytest.approx(-score_pairs(model, pair)[0] / tokens[i])
    assert art.meta["config"]["mismatched"] == 5 and art.meta["config"]["run"] == "run0"


def test_the_table_and_figure_show_each_bucket_and_draw_nothing_without_two_sentences():
    lengths = _lengths()
    ex = _ex(lengths)
    encdec = 0.3 + _noise(len(lengths), 1)
    table = source_gain.gain_table(ex, _gains(ex, encdec + 0.01 * lengths, encdec))
    assert list(table.columns) == ["sentences", *source_gain.PAIR, "RNNsearch-50 − RNNencdec-50"]
    solid = table[table["sentences"] > 0]
    diffs = [float(x.split()[0]) for x in solid["RNNsearch-50 − RNNencdec-50"]]
    assert diffs == sorted(diffs) and diffs[0] > 0  # grows bucket by bucket
    assert table.loc["0-9"].isna().sum() == 3  # no sentence: no value
    lone = _ex(np.array([5, 15, 25]))  # each bucket's lone sentence has no mismatched source
    nan = np.full(3, np.nan)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fig = source_gain.gain_figure(lone, _gains(lone, nan, nan))
    assert len(fig.axes) == 2
