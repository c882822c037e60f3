"""The design of paper A's experiment (rnnlib.experiments.cho2014, rnnlib.smt.system):
the scorer's optimiser by parameter, the held-out figures beside a unigram model and the phrase
table, the feature read per target word, MERT started from the Baseline's weights, the dev BLEU
split into the tuning set and held-out sentences."""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
import torch

from rnnlib.bleu import corpus_bleu
from rnnlib.book import compare as C
from rnnlib.experiments.cho2014 import controls, counts
from rnnlib.experiments.cho2014 import network
from rnnlib.experiments.cho2014 import rows as rows_mod
from rnnlib.experiments.cho2014 import schedule
from rnnlib.experiments.cho2014 import scorer as scorer_mod
from rnnlib.experiments.cho2014 import stages as stages_mod
from rnnlib.experiments.cho2014 import systems
from rnnlib.experiments.cho2014 import table_1
from rnnlib.experiments.cho2014 import table_2
from rnnlib.experiments.cho2014 import table_3
from rnnlib.experiments.cho2014 import tuning
from rnnlib.experiments.cho2014.setting import Params
from rnnlib.corpus.vocab import Vocab
from rnnlib.models import build_model
from rnnlib.presets import preset
from rnnlib.smt.rnn_scorer import ScoredTable
from rnnlib.smt.system import SMTConfig, start_weights
from rnnlib.train import TRAIN_PRESETS, train_preset


# -- the scorer's optimiser ----------------------------------------------------------------------
def test_scorer_optimiser_is_empty_for_the_papers_and_overrides_otherwise():
    assert scorer_mod.scorer_optimiser(Params()) == {}
    assert scorer_mod.scorer_optimiser(Params(rnn_optimizer="adadelta", rnn_lr=1.0)) == {}
    adam = scorer_mod.scorer_optimiser(Params(rnn_optimizer="adam", rnn_lr=0.003, rnn_clip=1))
    assert adam == {"optimizer": "adam", "lr": 0.003, "clip_norm": 1.0}
    config = train_preset("paper-a", max_updates=5, **adam)
    assert (config.optimizer, config.lr, config.clip_norm) == ("adam", 0.003, 1.0)
    assert TRAIN_PRESETS["paper-a"]["optimizer"] == "adadelta"  # the preset is left alone


@pytest.mark.parametrize(
    "params, name",
    [
        ({"rnn_optimizer": "sgd"}, "rnn_optimizer"),
        ({"rnn_lr": 0}, "rnn_lr"),
        ({"rnn_clip": -1.0}, "rnn_clip"),
    ],
)
def test_scorer_optimiser_names_a_bad_parameter(params, name):
    with pytest.raises(ValueError, match=name):
        scorer_mod.scorer_optimiser(Params(**params))


# -- the held-out figures --------------------------------------------------------------------------
def _scorer():
    words = [f"w{i}" for i in range(6)]
    vocab = Vocab(words)
    corpus = SimpleNamespace(src_vocab=vocab, tgt_vocab=vocab)
    train = [((f"w{i}",), (f"w{j}", f"w{(j + 1) % 6}")) for i in range(6) for j in range(6)]
    held = [(("w0", "w1"), ("w2",)), (("w3",), ("w4", "w5", "w0"))]
    table = SimpleNamespace(
        pairs=lambda: iter([(s, t, None) for s, t in held + train[:3]]),
        scores=np.array([[0.5, 0, 0, 0], [0.25, 0, 0, 0]] + [[1.0, 0, 0, 0]] * 3),
    )
    return SimpleNamespace(train_pairs=train, held=held, table=table), corpus


def test_held_out_unigram_nll_counts_every_target_word_and_end_add_one():
    from rnnlib.specials import EOS

    scorer, corpus = _scorer()
    nll, tokens = controls.held_out_unigram_nll(scorer, corpus)
    assert list(tokens) == [2, 4]  # words and <end>
    counts = np.ones(len(corpus.tgt_vocab))
    for _, t in scorer.train_pairs:
        for w in t:
            counts[corpus.tgt_vocab.stoi[w]] += 1
    counts[EOS] += len(scorer.train_pairs)
    p = counts / counts.sum()
    ids = [corpus.tgt_vocab.stoi[w] for w in ("w4", "w5", "w0")]
    assert nll[1] == pytest.approx(-(np.log(p[ids]).sum() + np.log(p[EOS])))
    # the same model as the base function's, on the targets encoded alike
    from rnnlib.ragged import Ragged
    from rnnlib.smt import rnn_scorer

    def targets(pairs):
        return Ragged.from_lists(corpus.tgt_vocab.encode(t) for _, t in pairs)

    logp = rnn_scorer.unigram_logp(targets(scorer.train_pairs), len(corpus.tgt_vocab))
    assert rnn_scorer.unigram_nll(logp, targets(scorer.held))[0] == pytest.approx(nll)


def test_table_nll_reads_the_tables_p_t_given_s_of_each_held_out_pair():
    scorer, _ = _scorer()
    assert controls.table_nll(scorer) == pytest.approx([np.log(2), np.log(4)])


def test_heldout_table_sets_the_network_against_the_unigram_model():
    scorer, corpus = _scorer()
    torch.manual_seed(0)
    cfg = preset("smoke-cho2014", src_vocab=len(corpus.src_vocab), tgt_vocab=len(corpus.tgt_vocab))
    model = build_model(cfg).eval()
    table = controls.heldout_table(scorer, model, model, corpus)
    uni = "target unigram model (shortlist, add-one)"
    assert table.loc[uni, "× unigram"] == pytest.approx(1.0)
    _, tokens = controls.held_out_unigram_nll(scorer, corpus)
    net = controls.network_nll(scorer, model, corpus)
    row = table.iloc[0]
    assert row["NLL per target token"] == pytest.approx(net.sum() / tokens.sum())
    assert row["× unigram"] == pytest.approx(
        row["NLL per target token"] / table.loc[uni, "NLL per target token"]
    )
    # an untrained network over 10 words is near uniform: worse than the unigram model
    assert row["× unigram"] > 1
    # the gain over the unigram model is the same comparison per token, in nats
    gain = controls.unigram_gain(scorer, model, corpus)
    assert gain == pytest.approx(
        table.loc[uni, "NLL per target token"] - row["NLL per target token"]
    )


# -- the feature read per target word ----------------------------------------------------------
def test_per_word_divides_each_score_by_the_target_words_and_end():
    scores = ScoredTable(["rnn"], {(("a",), ("x", "y")): (-6.0,), (("b",), ("z",)): (-4.0,)})
    per = rows_mod.per_word(scores)
    assert per.names == ["rnn_per_word"]
    assert per.lookup(("a",), ("x", "y")) == (-2.0,)
    assert per.lookup(("b",), ("z",)) == (-2.0,)
    with pytest.raises(KeyError):
        per.lookup(("c",), ("z",))


# -- MERT's start --------------------------------------------------------------------------------
def test_start_weights_sets_the_named_features_and_names_an_unknown_one():
    w = start_weights(["lm", "tm", "rnn"], np.array([0.5, 0.2, 0.1]), {"tm": 0.3, "rnn": 0.0})
    assert list(w) == [0.5, 0.3, 0.0]
    with pytest.raises(ValueError, match="'cslm'"):
        start_weights(["lm", "tm"], np.zeros(2), {"cslm": 1.0})


def test_baseline_start_takes_each_seeds_tuned_weights_and_the_new_feature_at_zero():
    base = SimpleNamespace(
        seeds=[1, 2],
        runs={1: SimpleNamespace(weights={"lm": 0.4}), 2: SimpleNamespace(weights={"lm": 0.6})},
    )
    extra = [ScoredTable(["rnn"], {})]
    assert systems.baseline_start(base, extra) == {
        1: {"lm": 0.4, "rnn": 0.0},
        2: {"lm": 0.6, "rnn": 0.0},
    }
    assert systems.row_start(base, extra, Params(mert_start="defaults")) is None
    assert systems.row_start(base, extra, Params()) == systems.baseline_start(base, extra)
    with pytest.raises(ValueError, match="mert_start"):
        systems.row_start(base, extra, Params(mert_start="zero"))


def test_mert_runs_build_every_seed_on_the_rows_alignment_and_start(monkeypatch):
    calls = []

    def fake_run(data, config, cache, extra=(), detokenize=None, log=None, alignment_run=1):
        calls.append((config.seed, config.start_weights, alignment_run, tuple(extra)))
        return f"run {config.seed}"

    monkeypatch.setattr(systems, "run", fake_run)
    base = rows_mod.BaselineRow(
        corpus=SimpleNamespace(detokenize=lambda w: " ".join(w)),
        data=None,
        config=SMTConfig(),
        seeds=[1, 2],
        runs={},
        device="cpu",
        alignment_run=3,
    )
    extra = [ScoredTable(["rnn"], {})]
    got = systems.mert_runs(None, base, extra, start={1: {"rnn": 0.0}, 2: {"rnn": 0.5}})
    assert got == {1: "run 1", 2: "run 2"}
    assert calls == [
        (1, {"rnn": 0.0}, 3, tuple(extra)),
        (2, {"rnn": 0.5}, 3, tuple(extra)),
    ]
    assert rows_mod.BaselineRow(None, None, SMTConfig(), [1], {}, "cpu").alignment_run == 1


def test_the_rnn_row_tuned_from_the_defaults_takes_its_own_seeds_and_no_start(monkeypatch):
    calls = []

    def fake_mert_runs(cache, base, extra=(), start=None, seeds=None):
        calls.append((start, list(seeds), tuple(extra)))
        return {s: f"run {s}" for s in seeds}

    monkeypatch.setattr(systems, "mert_runs", fake_mert_runs)
    scores = ScoredTable(["rnn"], {})
    got = systems.defaults_runs(None, "base", scores, Params(mert_default_seeds=2))
    assert got == {1: "run 1", 2: "run 2"} and calls == [(None, [1, 2], (scores,))]
    # none asked for, or the +RNN row already starts from the defaults: nothing is tuned
    assert systems.defaults_runs(None, "base", scores, Params(mert_default_seeds=0)) == {}
    started = Params(mert_default_seeds=2, mert_start="defaults")
    assert systems.defaults_runs(None, "base", scores, started) == {} and len(calls) == 1
    for bad in (-1, 1.5, True):
        with pytest.raises(ValueError, match="mert_default_seeds"):
            systems.defaults_runs(None, "base", scores, Params(mert_default_seeds=bad))


def test_the_systems_side_by_side_are_the_rows_systems_in_order_and_the_setting_is_checked(
    monkeypatch,
):
    """``systems_side_by_side`` hands the pool one job per row and seed, in the rows' order
    (each builds what :func:`mert_runs` then reads), builds nothing with one at a time, and
    names its parameter when it is not an integer >= 1."""
    built, stages = [], []
    monkeypatch.setattr(systems, "build_stages", lambda *a, **k: stages.append(a[3]))
    monkeypatch.setattr(
        systems, "build_side_by_side", lambda cache, jobs, n, device: built.append((jobs, n)) or {}
    )
    monkeypatch.setattr(systems, "mert_system", lambda *args: args)
    base = rows_mod.BaselineRow(None, None, SMTConfig(), [1, 2], {}, "cpu")
    rows = [("+RNN", ["rnn"], {1: {}, 2: {}}, [1, 2]), (rows_mod.DEFAULTS_ROW, ["rnn"], None, [1])]
    got = systems.systems_side_by_side("cache", base, rows, Params(systems_at_once=1))
    assert set(got.values()) == {"not started"} and not built and not stages
    systems.systems_side_by_side("cache", base, rows, Params(systems_at_once=2))
    ((jobs, n),) = built
    assert n == 2 and stages == [base.alignment_run]
    assert [j.name for j in jobs] == [
        "+RNN, MERT seed 1",
        "+RNN, MERT seed 2",
        f"{rows_mod.DEFAULTS_ROW}, MERT seed 1",
    ]
    assert jobs[1].build() == ("cache", base, ["rnn"], {1: {}, 2: {}}, 2)
    assert jobs[2].build() == ("cache", base, ["rnn"], None, 1)
    for bad in (0, -1, 1.5, True, "2"):
        with pytest.raises(ValueError, match="systems_at_once"):
            systems.systems_side_by_side("cache", base, rows, Params(systems_at_once=bad))
    assert systems.defaults_seeds(Params(mert_default_seeds=3)) == [1, 2, 3]
    assert systems.defaults_seeds(Params(mert_default_seeds=3, mert_start="defaults")) == []


def _ahead(monkeypatch, params, device="cpu"):
    """:func:`build_ahead` on stand-ins: the jobs and device it hands the pool, and what each
    job's build asked of :func:`mert_system`, the count-drawn network and the CSLM."""

    base = rows_mod.BaselineRow("corpus", "data", SMTConfig(), [1, 2], {}, torch.device(device))
    scores = ScoredTable(["rnn"], {(("a",), ("b", "c")): (-3.0,)})
    weights = {s: {"lm": 0.5 + s, "wp": -1.0} for s in base.seeds}
    calls, pool = [], []
    monkeypatch.setattr(schedule, "baseline_setup", lambda cache, params: base)
    monkeypatch.setattr(schedule, "build_stages", lambda *a, **k: calls.append(("stages",)))
    monkeypatch.setattr(schedule, "scorer_plan", lambda cache, corpus, params, al: "plan")
    monkeypatch.setattr(schedule, "usable_pairs", lambda plan, data, params: (None, None, ["pair"]))
    trained = SimpleNamespace(model=lambda: "net")
    monkeypatch.setattr(
        schedule,
        "phrase_scorer",
        lambda cache, corpus, params, al, plan: calls.append(plan) or trained,
    )
    monkeypatch.setattr(
        schedule, "scored_usable", lambda cache, sc, model, usable, b: (sc, model, usable, b)
    )
    monkeypatch.setattr(schedule, "load_scored", lambda art: calls.append(("load", art)) or scores)

    def mert_system(cache, b, extra, start, seed):
        calls.append(("mert", [t.names for t in extra], start, seed))
        if not extra:  # a Baseline system
            return SimpleNamespace(weights=weights[seed])
        return (extra, start, seed)

    monkeypatch.setattr(schedule, "mert_system", mert_system)
    monkeypatch.setattr(
        schedule, "counts_scorer", lambda cache, corpus, sc, params: calls.append(("drawn", sc))
    )
    monkeypatch.setattr(schedule, "cslm_model", lambda c, b, p: calls.append(("cslm", b)))
    monkeypatch.setattr(
        schedule,
        "scorer_variant",
        lambda cache, corpus, sc, **kw: calls.append(("variant", corpus, sc, kw)),
    )
    monkeypatch.setattr(
        schedule,
        "build_side_by_side",
        lambda cache, jobs, n, dev: pool.append((jobs, n, dev)) or {},
    )
    out = schedule.build_ahead(
        "cache", Params(**{"systems_at_once": 2, "mert_default_seeds": 1, **params})
    )
    return out, pool, calls, base, scores, weights


def test_build_ahead_schedules_the_chapters_work_longest_chain_first(monkeypatch):
    """The network and its scores first, then the Baseline's systems, the rows that add the
    score (each after the scores and, warm-started, after the Baseline of its seed), then the
    count-drawn network and the CSLM; each job builds what the chapter then reads: the same
    systems, from the same starts, as :func:`rnn_row` asks for."""
    adam = {"rnn_optimizer": "adam", "rnn_lr": 0.003, "rnn_clip": 1.0}
    _, pool, calls, base, scores, weights = _ahead(monkeypatch, adam)
    ((jobs, n, device),) = pool
    assert n == 2 and device == base.device and calls == [("stages",)]
    named = {j.name: j for j in jobs}
    assert [(j.name, j.after) for j in jobs] == [
        ("network", ()),
        ("scores", ("network",)),
        ("Baseline, MERT seed 1", ()),
        ("Baseline, MERT seed 2", ()),
        (f"{rows_mod.TUNED_ON_ROW}, MERT seed 1", ("Baseline, MERT seed 1",)),
        (f"{rows_mod.TUNED_ON_ROW}, MERT seed 2", ("Baseline, MERT seed 2",)),
        ("+RNN, MERT seed 1", ("scores", "Baseline, MERT seed 1")),
        ("+RNN, MERT seed 2", ("scores", "Baseline, MERT seed 2")),
        ("+RNN per word, MERT seed 1", ("scores", "Baseline, MERT seed 1")),
        ("+RNN per word, MERT seed 2", ("scores", "Baseline, MERT seed 2")),
        (f"{rows_mod.DEFAULTS_ROW}, MERT seed 1", ("scores",)),
        ("count-drawn network", ()),
        ("CSLM", ()),
    ]
    calls.clear()
    extra, start, seed = named["+RNN, MERT seed 2"].build()
    assert extra == [scores] and seed == 2
    # the start rnn_row computes from the whole Baseline row
    whole = rows_mod.BaselineRow(
        None, None, None, [1, 2], {s: SimpleNamespace(weights=w) for s, w in weights.items()}, "cpu"
    )
    assert (
        start == {2: systems.baseline_start(whole, [scores])[2]} == {2: {**weights[2], "rnn": 0.0}}
    )
    assert ("mert", [], None, 2) in calls  # the Baseline's system of seed 2, read
    extra, start, seed = named["+RNN per word, MERT seed 1"].build()
    assert extra[0].table == rows_mod.per_word(scores).table and start == {
        1: {**weights[1], "rnn_per_word": 0.0}
    }
    extra, start, seed = named[f"{rows_mod.DEFAULTS_ROW}, MERT seed 1"].build()
    assert extra == [scores] and start is None
    # the scores are read once per process, however many of its jobs read them
    loads = [c for c in calls if c[0] == "load"]
    assert len(loads) == 1 and loads[0][1][1:] == ("net", ["pair"], base)
    # the Baseline tuned on: no feature, from the Baseline's own tuned weights of its seed
    calls.clear()
    named[f"{rows_mod.TUNED_ON_ROW}, MERT seed 2"].build()
    assert calls == [("mert", [], None, 2), ("mert", [], {2: weights[2]}, 2)]  # reads no scores
    calls.clear()
    named["network"].build()
    named["count-drawn network"].build()
    named["CSLM"].build()
    assert calls == ["plan", ("drawn", "plan"), ("cslm", base)]


def test_build_ahead_builds_nothing_one_at_a_time_and_follows_the_start_and_rows(monkeypatch):
    assert _ahead(monkeypatch, {"systems_at_once": 1})[:2] == ({}, [])
    with pytest.raises(ValueError, match="systems_at_once"):
        _ahead(monkeypatch, {"systems_at_once": 0})
    # from the defaults, no system waits for the Baseline's; no count-drawn network, no
    # per-word row
    off = {"mert_start": "defaults", "per_word_row": False, "mert_default_seeds": 0}
    _, pool, calls, *_ = _ahead(monkeypatch, {**off, "rnn_check_optimiser": False})
    ((jobs, _, _),) = pool
    assert [(j.name, j.after) for j in jobs][4:] == [
        ("+RNN, MERT seed 1", ("scores",)),
        ("+RNN, MERT seed 2", ("scores",)),
        ("CSLM", ()),
    ]
    assert jobs[4].build()[1] is None
    # on a GPU the pool is handed the device (and builds nothing: it forks)
    _, pool, *_ = _ahead(monkeypatch, {}, device="meta")
    assert pool[0][2].type == "meta"


def test_build_ahead_trains_the_tanh_network_after_the_scorer_only_when_asked(monkeypatch):
    """``tanh_ahead`` adds the representations chapter's tanh network (the scorer's variant with
    tanh units at its updates, the artifact that chapter reads with ``ablation_updates`` None),
    last and after the network; without it no such job."""
    _, pool, calls, *_ = _ahead(monkeypatch, {"tanh_ahead": True})
    ((jobs, _, _),) = pool
    assert (jobs[-1].name, jobs[-1].after) == ("tanh network", ("network",))
    calls.clear()
    jobs[-1].build()
    assert len(calls) == 2 and calls[0] == "plan"  # the trained scorer, then its variant
    kind, corpus, scorer, kw = calls[1]
    assert (kind, corpus, kw) == ("variant", "corpus", {"unit": "tanh"})
    assert scorer.model() == "net"
    _, pool, *_ = _ahead(monkeypatch, {"tanh_ahead": False})
    assert "tanh network" not in [j.name for j in pool[0][0]]


def test_the_count_drawn_network_reads_only_the_plan_and_draws_pairs_by_their_counts():
    """The count-drawn network (C-A-F3-3) trains on the network's own pairs drawn by count: the
    plan (untrained) and the trained network key it alike, so the one built ahead is the one
    the chapter reads; its kind is its own, and the switch turns it off."""
    built = []
    cache = SimpleNamespace(build=lambda kind, config, make, data: built.append((kind, config)))
    tc = train_preset("paper-a", max_updates=8, optimizer="adam", lr=0.003, clip_norm=1.0)
    pairs = [(("a",), ("x",)), (("b",), ("y",)), (("c",), ("z",))]
    table = SimpleNamespace(
        pairs=lambda: iter([(s, t, None) for s, t in pairs]), count=np.array([1, 0, 99])
    )
    mc = SimpleNamespace(to_dict=lambda: {"hidden": 4})
    plan = scorer_mod.PhraseScorer(
        None, mc, tc, "ptab", table, pairs, [], pairs, 0.0, {"phrase_table": "k"}
    )
    trained = dataclasses.replace(plan, artifact="art", seconds=3.0)
    corpus = SimpleNamespace(src_vocab=None, tgt_vocab=None, checksum="c")
    got = [
        counts.counts_scorer(cache, corpus, sc, Params(rnn_check_updates=4, seed=1))
        for sc in (plan, trained)
    ]
    assert len(built) == 2 and built[0] == built[1] and built[0][0] == counts.KIND
    config = built[0][1]
    assert config["train"]["max_updates"] == 4 and config["drawn"] == counts.DRAWN
    assert config["phrase_table"] == "k" and config["draw_seed"] == 3
    assert got[0].train_config.max_updates == 4 and got[0].train_pairs is pairs
    drawn = counts.drawn_pairs(plan, 3)  # what its make trains on
    assert len(drawn) == 3 and pairs[1] not in drawn  # a count of 0 is never drawn
    assert drawn == counts.drawn_pairs(trained, 3)
    assert counts.counts_scorer(cache, corpus, plan, Params(rnn_check_optimiser=False)) is None


def test_count_weighted_draws_in_proportion_to_the_counts():
    drawn = counts.count_weighted(["a", "b", "c"], [1, 3, 0], 4000, seed=0)
    share = drawn.count("b") / len(drawn)
    assert 0.72 < share < 0.78 and "c" not in drawn
    assert counts.count_weighted(["a", "b"], [1, 1], 5, seed=2) == counts.count_weighted(
        ["a", "b"], [1, 1], 5, seed=2
    )
    for bad in ([0, 0], [1, -1], [1]):
        with pytest.raises(ValueError, match="count"):
            counts.count_weighted(["a", "b"], bad, 3, seed=0)


def _tuned_run(at_once):
    """A stand-in for a MERT-tuned system recording how many systems it was tuned beside
    (``None``: built before that was recorded)."""
    extra = {} if at_once is None else {"systems_at_once": at_once}
    return SimpleNamespace(tuned=SimpleNamespace(extra=extra))


def test_the_stages_say_when_systems_were_tuned_side_by_side():
    alone = {"Baseline": {1: _tuned_run(1), 2: _tuned_run(1)}}
    assert stages_mod.side_by_side_words(alone) == "Each MERT-tuned system was tuned alone"
    assert stages_mod.side_by_side_numbers(alone)["cho-systems-shared"] == 0
    rows = {"Baseline": {1: _tuned_run(1)}, "+RNN": {1: _tuned_run(2), 2: _tuned_run(None)}}
    got = stages_mod.side_by_side_numbers(rows)
    assert got == {
        "cho-systems-n": 3,
        "cho-systems-shared": 1,
        "cho-systems-at-once": 2,
        "cho-systems-unknown": 1,
        "cho-timed": stages_mod.TIMED,  # what rnnlib compare lists apart, as timings
    }
    assert C.measures_time("cho-search-with", tuple(stages_mod.TIMED.split(", ")))
    assert not C.measures_time("cho-search-words", tuple(stages_mod.TIMED.split(", ")))
    assert "Not every" in stages_mod.side_by_side_words(rows)
    old = {"+RNN": {1: _tuned_run(None)}}
    assert "Not every" in stages_mod.side_by_side_words(old)
    assert stages_mod.side_by_side_numbers(old)["cho-systems-unknown"] == 1


def test_no_claim_reads_the_rows_that_extend_the_papers_table():
    assert (
        rows_mod.DEFAULTS_ROW in rows_mod.EXTENSION_ROWS
        and "+RNN per word" in rows_mod.EXTENSION_ROWS
    )
    assert not set(rows_mod.EXTENSION_ROWS) & set(table_1.PAPER_ROWS.values())
    assert rows_mod.TUNED_ON_ROW not in rows_mod.EXTENSION_ROWS  # C-A-T1-1 reads it


def test_table_1_rows_keep_the_chapters_order_and_leave_out_rows_not_built():
    base = SimpleNamespace(runs={1: "b"})
    rnn = SimpleNamespace(runs={1: "r"}, runs_per_word={}, runs_defaults={1: "d"})
    rows = table_1.table_1_rows(base, rnn, {"+CSLM": {1: "c"}})
    assert list(rows) == ["Baseline", "+RNN", rows_mod.DEFAULTS_ROW, "+CSLM"]
    rnn.runs_per_word = {1: "w"}
    assert list(table_1.table_1_rows(base, rnn, {}))[2:] == ["+RNN per word", rows_mod.DEFAULTS_ROW]
    rnn.runs_tuned_on = {1: "t"}  # the Baseline tuned on, beside the Baseline
    assert list(table_1.table_1_rows(base, rnn, {}))[:3] == [
        "Baseline",
        rows_mod.TUNED_ON_ROW,
        "+RNN",
    ]


def test_defaults_numbers_set_the_cold_start_against_the_baseline_and_the_warm_start(
    tmp_path, monkeypatch
):
    import json

    refs = [f"the cat sat on mat number {i} today" for i in range(8)]
    worse = refs[:2] + ["the cat sat on a mat today"] * 6
    outputs = {
        "Baseline": {"dev": [worse, worse], "test": [worse, worse]},
        "+RNN": {"dev": [refs, refs], "test": [refs, refs]},
        rows_mod.DEFAULTS_ROW: {"dev": [refs, worse], "test": [refs, worse]},
    }
    monkeypatch.setattr(tuning, "row_outputs", lambda rows: {k: outputs[k] for k in rows})

    def run(best, name):
        path = tmp_path / name
        path.mkdir()
        (path / "weights.json").write_text(json.dumps({"best_dev_bleu": best}))
        return SimpleNamespace(tuned=SimpleNamespace(file=lambda f, p=path: p / f))

    rows = {
        "Baseline": {1: run(20.0, "b1"), 2: run(21.0, "b2")},
        "+RNN": {1: run(22.0, "r1"), 2: run(23.0, "r2")},
        rows_mod.DEFAULTS_ROW: {1: run(24.0, "d1"), 2: run(25.0, "d2")},
    }
    base = SimpleNamespace(data=SimpleNamespace(dev_refs=[refs], test_refs=[refs]))
    got = tuning.defaults_numbers(rows, base, n_tune=2)
    # by hand: held out (dev after the 2 tuning lines) the defaults row's runs score 100 and
    # BLEU(worse), the Baseline's BLEU(worse) twice; on test +RNN 100 twice, the defaults row
    # 100 and BLEU(worse)
    x_held, x_test = corpus_bleu(worse[2:], refs[2:]).score, corpus_bleu(worse, refs).score
    assert got["cho-defaults-cold-heldout"][0] == pytest.approx((100 - x_held) / 2)
    assert got["cho-defaults-warm-test"][0] == pytest.approx((100 - x_test) / 2)
    low, high = got["cho-defaults-cold-heldout-low"][0], got["cho-defaults-cold-heldout-high"][0]
    assert low <= got["cho-defaults-cold-heldout"][0] <= high
    assert got["cho-defaults-runs"] == 2 and tuning.defaults_words(rows) == "was built"
    assert [got[f"cho-defaults-tuning-{k}"][0] for k in ("baseline", "rnn", "defaults")] == [
        20.5,
        22.5,
        24.5,
    ]
    off = {"Baseline": {}, "+RNN": {}}
    assert "not built" in tuning.defaults_words(off)
    assert np.isnan(tuning.defaults_numbers(off, base, n_tune=2)["cho-defaults-warm-test"][0])


# -- dev: the tuning set and the held-out sentences ------------------------------------------------
def test_dev_parts_split_each_seeds_output_at_the_tuning_set(tmp_path, monkeypatch):
    refs = [f"the cat sat on mat number {i} today" for i in range(6)]
    good = list(refs)
    bad = refs[:3] + ["nothing alike here at all"] * 3
    outputs = {"A": {"dev": [good, bad], "test": [[], []]}}
    monkeypatch.setattr(table_1, "row_outputs", lambda rows: outputs)
    parts = table_1.dev_parts({"A": {}}, refs, 3)
    tune, held = parts["A"]
    assert tune == pytest.approx([100.0, 100.0])
    assert held[0] == pytest.approx(100.0) and held[1] < 5
    table = table_1.table_1(
        {
            "Baseline": {
                1: SimpleNamespace(
                    bleu={"dev": {"single": {"bleu": 10}}, "test": {"single": {"bleu": 9}}}
                )
            }
        },
        {"Baseline": (np.array([12.0]), np.array([7.0]))},
    )
    assert table.loc["Baseline", "tuning"] == 12 and table.loc["Baseline", "dev held out"] == 7
    assert table.loc["Baseline", "paper dev − Baseline"] == 0


def _bleu_runs(dev: float, test: float, seeds: int = 2) -> dict:
    one = {"dev": {"single": {"bleu": dev}}, "test": {"single": {"bleu": test}}}
    return {
        s: SimpleNamespace(bleu=one, evaluation=SimpleNamespace(key=f"k{dev}{s}"))
        for s in range(seeds)
    }


def test_table_1_with_dev_parts_never_mixes_tuning_and_held_out_sentences():
    rows = {
        name: _bleu_runs(20 + k, 19 + k)
        for k, name in enumerate(["Baseline", "+RNN", "+CSLM", "+CSLM+RNN", "+CSLM+RNN+WP"])
    }
    parts = {
        name: (np.array([30.0 + k] * 2), np.array([10.0 - k] * 2)) for k, name in enumerate(rows)
    }
    intervals = {name: {"dev held out": (-1.0, 0.5), "test": (0.25, 1.75)} for name in rows}
    table = table_1.table_1(rows, parts, intervals, "n-gram + CSLM (weaker: 120.0 against 60.0)")
    assert "dev" not in table and "dev − Baseline" not in table  # the mixed column is gone
    assert (
        table.loc["+RNN", "tuning − Baseline"] == 1
        and table.loc["+RNN", "dev held out − Baseline"] == -1
    )
    assert table.loc["+RNN", "test − Baseline, 95%"] == "[0.25, 1.75]"
    assert table.loc["+RNN", "dev held out − Baseline, 95%"] == "[-1.00, 0.50]"
    assert table.loc["Baseline", "test − Baseline, 95%"] == "[0.25, 1.75]"
    assert table.loc["+RNN", "language model"] == "n-gram"
    assert table.loc["+CSLM+RNN", "language model"].startswith("n-gram + CSLM (weaker")
    numbers = {
        k: v[0] if isinstance(v, tuple) else v for k, v in table_1.numbers(table, rows).items()
    }
    assert "cho-gain-dev" not in numbers and "cho-gain-cslm-dev" not in numbers
    assert numbers["cho-gain-tuning-cslm"] == 2 and numbers["cho-gain-heldout-cslm-rnn-wp"] == -4
    assert numbers["cho-gain-test"] == 1 and numbers["cho-gain-cslm-rnn-test"] == 3
    without = table_1.table_1(rows)  # no parts: one dev column, every dev sentence
    assert without.loc["+RNN", "dev − Baseline"] == 1 and "tuning" not in without
    assert "cho-gain-dev-cslm" in table_1.numbers(without, rows)


def test_gain_intervals_resample_test_and_the_held_out_dev_sentences_only(tmp_path, monkeypatch):
    from rnnlib.cache import ArtifactCache

    rng = np.random.default_rng(0)
    refs = [" ".join(f"w{x}" for x in rng.integers(0, 50, 8)) for _ in range(60)]
    wrong = [" ".join(r.split()[:-2] + ["zz", "yy"]) for r in refs]
    good = list(refs)
    # the first 20 dev sentences are the tuning set: +RNN is better after them, +CSLM on them
    outputs = {
        "Baseline": {"dev": [wrong, wrong], "test": [wrong, wrong]},
        "+RNN": {"dev": [wrong[:20] + good[20:]] * 2, "test": [good, good[:58] + wrong[58:]]},
        "+CSLM": {"dev": [good[:20] + wrong[20:]] * 2, "test": [wrong, wrong]},
    }
    monkeypatch.setattr(table_1, "row_outputs", lambda rows: {k: outputs[k] for k in rows})
    monkeypatch.setattr(table_1, "N_BOOT", 200)
    rows = {name: _bleu_runs(20 + k, 19 + k) for k, name in enumerate(outputs)}
    base = SimpleNamespace(data=SimpleNamespace(dev_refs=[refs], test_refs=[refs]))
    cache = ArtifactCache(tmp_path)
    got, art = table_1.gain_intervals(cache, rows, base, n_tune=20)
    assert art.kind == "cho2014/table1_intervals"
    assert set(got) == {"+RNN", "+CSLM"}
    assert got["+RNN"]["test"][0] > 0 and got["+RNN"]["dev held out"][0] > 0
    low, high = got["+CSLM"]["dev held out"]  # better on the tuning set only: no gain held out
    assert low == high == 0
    assert (
        table_1.gain_intervals(cache, rows, base, n_tune=20)[0] == got
    )  # read back from the cache
    assert "dev held out" not in table_1.gain_intervals(cache, rows, base, n_tune=60)[0]["+RNN"]


def test_the_scorers_length_reads_the_per_token_nll_of_the_last_two_evaluations(tmp_path):
    log = pd.DataFrame({"update": [500, 1000], "dev_nll_token": [3.119, 3.008]})
    log.to_csv(tmp_path / "eval_log.csv", index=False)
    art = SimpleNamespace(file=lambda name: tmp_path / name)
    words = network.length_words(art)  # exp(3.119) = 22.6, exp(3.008) = 20.2: 11% lower
    assert "still falling" in words and "`rnn_updates`" in words and len(words) <= 80
    got = network.length_numbers(art)
    assert got["cho-length-update0"] == 500 and got["cho-length-update1"] == 1000
    assert (
        round(got["cho-length-ppl0"][0], 1) == 22.6 and round(got["cho-length-ppl1"][0], 1) == 20.2
    )
    log.iloc[:1].to_csv(tmp_path / "eval_log.csv", index=False)
    assert "unknown" in network.length_words(art)
    assert np.isnan(network.length_numbers(art)["cho-length-ppl1"][0])


def test_cslm_row_label_says_whether_the_cslm_is_the_weaker_language_model():
    from rnnlib.experiments.cho2014.cslm import cslm_row_label

    def rows(ppl, kn):
        return SimpleNamespace(
            artifact=SimpleNamespace(extra={"dev_set_ppl": ppl}),
            kn=None if kn is None else SimpleNamespace(extra={"dev_perplexity": kn}),
        )

    assert (
        cslm_row_label(rows(120.6, 59.5))
        == "n-gram + CSLM (weaker: dev perplexity 120.6 against 59.5)"
    )
    assert "better" in cslm_row_label(rows(50.0, 59.5))
    assert cslm_row_label(rows(50.0, None)) == "n-gram + CSLM (dev perplexity 50.0)"


# -- the CSLM against the n-gram model on the same shortlist ---------------------------------------
def test_on_shortlist_writes_words_outside_the_vocabulary_as_unk():
    from rnnlib.experiments.cho2014.cslm import on_shortlist

    vocab = Vocab(["le", "chat"])
    assert on_shortlist([["le", "chien", "chat"]], vocab) == [["le", "[UNK]", "chat"]]


def test_the_cslm_against_kn_and_its_training_length_in_words(tmp_path):
    from rnnlib.experiments.cho2014 import cslm as cslm_mod

    assert "weaker" in cslm_mod.against_kn_words(120.0, 80.0)
    assert "better" in cslm_mod.against_kn_words(60.0, 80.0)
    art = SimpleNamespace(file=lambda name: tmp_path / name)
    pd.DataFrame({"update": [500, 1000], "dev_ppl": [200.0, 150.0]}).to_csv(
        tmp_path / "eval_log.csv", index=False
    )
    words = cslm_mod.length_words(art)
    assert "still falling" in words and "`cslm_updates`" in words and len(words) <= 80
    assert cslm_mod.length_numbers(art)["cho-cslm-length-update1"] == 1000
    pd.DataFrame({"update": [500, 1000], "dev_ppl": [151.0, 150.0]}).to_csv(
        tmp_path / "eval_log.csv", index=False
    )
    assert cslm_mod.length_words(art) == "had levelled off"


# -- the tuning table, the claims' dev part, the paper's Tables 2 and 3 ----------------------------
def test_tuning_table_shows_each_runs_first_and_best_tuning_bleu(tmp_path):
    import json

    def run(first, best, name):
        path = tmp_path / name
        path.mkdir()
        saved = {"best_dev_bleu": best, "history": [{"dev_bleu": first}, {"dev_bleu": best}]}
        (path / "weights.json").write_text(json.dumps(saved))
        return SimpleNamespace(tuned=SimpleNamespace(file=lambda f, p=path: p / f))

    rows = {"Baseline": {1: run(20.0, 21.5, "b1")}, "+RNN": {1: run(21.5, 21.5, "r1")}}
    table = tuning.tuning_table(rows)
    assert table.loc[("Baseline", 1), "gain over the first"] == pytest.approx(1.5)
    assert table.loc[("+RNN", 1), "gain over the first"] == 0  # a search that found nothing
    assert table.loc[("+RNN", 1), "decodings"] == 2


def test_the_claims_dev_half_reads_the_held_out_sentences_when_there_are_any():
    assert table_1.dev_claim_start(300, 500) == 300
    assert table_1.dev_claim_start(500, 500) == 0 and table_1.dev_claim_start(None, 500) == 0
    assert table_1.dev_claim_numbers(300, 500) == {"cho-dev-claim-n": 200}
    assert "held-out" in table_1.dev_claim_words(300, 500)
    assert "tuning set" in table_1.dev_claim_words(500, 500)
    assert table_1.dev_claim_numbers(500, 500) == {"cho-dev-claim-n": 500}


def test_the_papers_tables_2_and_3_have_ten_sources_in_two_groups():
    t2, t3 = table_2.paper_table_2(), table_3.paper_table_3()
    assert len(t2) == len(t3) == 10
    assert list(t2.index.get_level_values(0).unique()) == ["frequent", "rare"]
    assert (t2.index == t3.index).all()
    first = t3.loc[("frequent", "for the first time"), "samples (× times drawn)"]
    assert first.startswith("[pour la première fois] (×24)")
    assert table_3.paper_top_count() == 24 and table_3.paper_samples() == 50
    # the largest printed count of each source with counts, over 50, averaged
    assert table_3.paper_top_share() == pytest.approx(
        100 * (11 + 24 + 6 + 9 + 13 + 3 + 11 + 5 + 7) / 9 / 50
    )


def test_shortlist_kn_scores_the_dev_text_as_the_cslm_reads_it(tmp_path):
    from rnnlib.cache import ArtifactCache
    from rnnlib.experiments.cho2014.cslm import on_shortlist, shortlist_kn
    from rnnlib.smt.lm import NgramLM, train_arpa

    train = [["le", "chat", "dort"], ["le", "chien", "dort"], ["un", "chat", "mange"]] * 5
    dev = [["le", "chat", "mange"], ["un", "oiseau", "dort"]]
    vocab = Vocab(["le", "chat", "dort", "un"])
    art = shortlist_kn(ArtifactCache(tmp_path / "cache"), train, dev, vocab, 3, data="d")
    train_arpa(on_shortlist(train, vocab), tmp_path / "lm.arpa", 3)
    expected = NgramLM(tmp_path / "lm.arpa").perplexity(on_shortlist(dev, vocab))
    assert art.extra["dev_perplexity"] == pytest.approx(expected)
    assert not any(p.name == "lm.arpa" for p in art.path.iterdir())  # the model is not kept


def test_per_word_numbers_give_each_difference_with_its_interval_or_nan_when_off(monkeypatch):
    refs = [f"the cat sat on mat number {i} today" for i in range(8)]
    worse = refs[:2] + ["the cat sat on a mat today"] * 6
    outputs = {
        "Baseline": {"dev": [worse, worse], "test": [worse, worse]},
        "+RNN": {"dev": [refs, worse], "test": [refs, worse]},
        "+RNN per word": {"dev": [refs, refs], "test": [refs, refs]},
    }
    monkeypatch.setattr(tuning, "row_outputs", lambda rows: {k: outputs[k] for k in rows})
    base = SimpleNamespace(data=SimpleNamespace(test_refs=[refs]))
    rows = {k: {1: None, 2: None} for k in outputs}
    got = tuning.per_word_numbers(rows, base)
    x = corpus_bleu(worse, refs).score  # by hand: per word 100 twice, +RNN 100 and x
    assert got["cho-per-word-base"][0] == pytest.approx(100 - x)
    assert got["cho-per-word-rnn"][0] == pytest.approx((100 - x) / 2)
    assert got["cho-per-word-base-low"][0] <= got["cho-per-word-base"][0]
    assert tuning.per_word_words(rows) == "was built"
    off = {k: rows[k] for k in ("Baseline", "+RNN")}
    assert np.isnan(tuning.per_word_numbers(off, base)["cho-per-word-rnn-high"][0])
    assert "`per_word_row` is off" in tuning.per_word_words(off)


def test_each_mert_seed_of_the_chapter_has_its_own_start_and_streams(monkeypatch):
    """A row tuned from the defaults starts each seed from its own draw around them, a warm row
    from the weights it is given; every seed draws from its own streams; a BaselineRow built
    without them (as before) tunes with the integer seed from the defaults."""
    from rnnlib.smt.seeds import OwnStreams, drawn_weights

    got = []
    monkeypatch.setattr(systems, "run", lambda data, config, cache, **kw: got.append(config))
    scores = ScoredTable(["rnn"], {(("a",), ("b",)): (-1.0,)})
    base = rows_mod.BaselineRow(None, None, SMTConfig(), [1, 2], {}, "cpu")
    systems.mert_system("cache", base, (), None, 2)
    assert got[-1].seed == 2 and got[-1].start_weights is None  # the earlier systems' keys
    base.start_sd, base.own_streams = rows_mod.MERT_START_SD, True
    for s in (1, 2):
        systems.mert_system("cache", base, [scores], None, s)
    one, two = got[-2:]
    assert one.seed == OwnStreams(1) and two.seed == OwnStreams(2)
    assert two.start_weights == drawn_weights(["rnn"], 2, rows_mod.MERT_START_SD)
    assert one.start_weights != two.start_weights
    systems.mert_system("cache", base, [scores], {2: {"rnn": 0.0}}, 2)  # warm: its own start
    assert got[-1].start_weights == {"rnn": 0.0} and got[-1].seed == OwnStreams(2)
