"""The design of paper B's experiment at a small scale: equal training time from the paper's
Table 2, the recipe runs and their rule, the minimum length of the papers' code, the brevity
penalty in Table 1, Fig. 2's relative view, Table 3's and Fig. 3's choices. Small hand-made
inputs."""

from __future__ import annotations

from dataclasses import asdict, fields, replace
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
import sacrebleu
import torch

from rnnlib import search, stats
from rnnlib.bleu import corpus_bleu
from rnnlib.book import papers
from rnnlib import verdicts
from rnnlib.experiments.rnnsearch import (
    budget,
    figure_2,
    figure_3,
    recipe,
    seeds,
    setting,
    table_1,
    table_2,
    table_3,
    training,
)


# -- equal time ------------------------------------------------------------------------------------
def test_the_equal_time_ratio_is_the_papers_ratio_of_updates_per_hour():
    t2 = papers.B_TABLE2
    rate = {n: t2[n]["updates"] / t2[n]["hours"] for n in t2}
    assert training.paper_rate_ratio("short") == pytest.approx(
        rate["RNNenc-30"] / rate["RNNsearch-30"]
    )
    assert training.paper_rate_ratio("long") == pytest.approx(
        rate["RNNenc-50"] / rate["RNNsearch-50"]
    )
    # RNNencdec made about twice the updates in the same time
    assert 1.5 < training.paper_rate_ratio("short") < training.paper_rate_ratio("long") < 2.5


def test_encdec_updates_follow_the_ratio_unless_set():
    ratio = training.paper_rate_ratio("long")
    assert training.equal_time_updates(1000, None, "long") == round(1000 * ratio)
    assert training.equal_time_updates(1000, 777, "long") == 777
    ex = SimpleNamespace(
        P=setting.Params(
            **{"updates_search": 100, "updates_encdec": None, "len_short": 30, "len_long": 50}
        )
    )
    specs = training.run_specs(ex)
    assert specs["RNNsearch-30"][2] == specs["RNNsearch-50"][2] == 100
    assert specs["RNNencdec-30"][2] == round(100 * training.paper_rate_ratio("short"))
    assert specs["RNNencdec-50"][2] == round(100 * training.paper_rate_ratio("long"))
    assert "equal time" in training.updates_text(ex)
    ex.P = replace(ex.P, updates_encdec=100)
    assert training.run_specs(ex)["RNNencdec-50"][2] == 100
    assert "not equal time" in training.updates_text(ex)


# -- the recipe runs -------------------------------------------------------------------------------
def test_recipe_runs_parse_and_reject_bad_entries_by_name():
    assert training.parse_recipe_runs("0/none, 0.3/0.5") == [(0.0, None), (0.3, 0.5)]
    assert training.parse_recipe_runs("") == [] and training.parse_recipe_runs(None) == []
    for bad in ("0.3", "x/none", "0.3/2", "1.0/none", "0/0.5/1"):
        with pytest.raises(ValueError, match="recipe_runs"):
            training.parse_recipe_runs(bad)


def _candidate(best_nll: float, best_update: int):
    art = SimpleNamespace(extra={"best": {"update": best_update, "dev_nll_token": best_nll}})
    logs = {
        "eval": pd.DataFrame({"update": [100, 200], "dev_nll_token": [best_nll + 1, best_nll]}),
        "bleu": pd.DataFrame({"update": [100, 200], "dev_bleu": [1.0, 2.0]}),
    }
    return art, logs


def test_the_recipe_rule_picks_the_lowest_dev_nll_and_says_when_it_is_not_the_chapters(
    monkeypatch,
):
    cands = {(0.3, 0.5): _candidate(3.6, 200), (0.0, None): _candidate(3.5, 100)}
    table, winner = recipe.recipe_runs_table(cands, chosen=(0.3, 0.5))
    assert winner == (0.0, None)
    assert table.loc[recipe.recipe_label(0.0, None), "lowest dev NLL"] == "←"
    assert table.loc[recipe.recipe_label(0.3, 0.5), "the chapter's"] == "yes"
    assert table.loc[recipe.recipe_label(0.0, None), "dev BLEU (greedy, at best)"] == 1.0
    ex = SimpleNamespace(P=setting.Params(**{"dropout": 0.3, "lr_decay": 0.5}))
    runs = SimpleNamespace(recipes={k: v[0] for k, v in cands.items()})
    logs = {id(v[0]): v[1] for v in cands.values()}
    monkeypatch.setattr(recipe, "run_logs", lambda art: logs[id(art)])
    table = recipe.recipe_candidates(ex, runs)
    own = recipe.own_recipe(ex)
    assert recipe.candidate_word(table, own, "recipe") == (
        "is lower for another candidate than for the chapter's recipe"
    )
    numbers = recipe.candidate_numbers(table, own, "rns-recipe")
    assert numbers == {"rns-recipe-own": (3.6, 3), "rns-recipe-other": (3.5, 3)}


def test_dropouts_parse_and_reject_bad_entries_by_name():
    assert training.parse_dropouts("0.1, 0.3", "dropout_runs_long") == [0.1, 0.3]
    assert training.parse_dropouts("", "x") == [] and training.parse_dropouts(None, "x") == []
    for bad in ("0.1/0.5", "x", "1.0", "-0.1"):
        with pytest.raises(ValueError, match="dropout_runs_long"):
            training.parse_dropouts(bad, "dropout_runs_long")


def test_the_long_dropout_rule_reads_dev_and_says_when_it_is_not_the_chapters(monkeypatch):
    cands = {0.3: _candidate(2.9, 1800), 0.1: _candidate(2.7, 1800)}
    logs = {id(v[0]): v[1] for v in cands.values()}
    monkeypatch.setattr(recipe, "run_logs", lambda art: logs[id(art)])
    runs = SimpleNamespace(dropout_long={k: v[0] for k, v in cands.items()})
    p = {"dropout": 0.3, "lr_decay": 0.5, "dropout_long": None}
    what = "dropout of the -50 models"
    ex = SimpleNamespace(P=setting.Params(**p), dropout_of=lambda n: 0.3)
    table = recipe.dropout_long_candidates(ex, runs)
    assert list(table.index) == [0.3, 0.1]
    assert table.loc[0.1, "lowest dev NLL"] == "←" and table.loc[0.3, "the chapter's"] == "yes"
    assert recipe.candidate_word(table, 0.3, what) == (
        f"is lower for another candidate than for the chapter's {what}"
    )
    assert recipe.candidate_numbers(table, 0.3, "x") == {"x-own": (2.9, 3), "x-other": (2.7, 3)}
    p["dropout_long"] = 0.1
    ex = SimpleNamespace(P=setting.Params(**p), dropout_of=lambda n: 0.1)
    table = recipe.dropout_long_candidates(ex, runs)
    assert recipe.candidate_word(table, 0.1, what) == f"is lowest for the chapter's {what}"
    alone = recipe.dropout_long_candidates(ex, SimpleNamespace(dropout_long={0.1: cands[0.1][0]}))
    assert "nothing was compared on dev" in recipe.candidate_word(alone, 0.1, what)
    assert np.isnan(recipe.candidate_numbers(alone, 0.1, "x")["x-other"][0])
    # the sentence's clause: numbers where there is something to compare, else says so (no nan)
    assert recipe.candidate_result(table, 0.1) == (
        "it reaches 2.700 nats a token, the best other candidate 2.900"
    )
    assert recipe.candidate_result(alone, 0.1) == (
        "it was the only candidate trained: nothing to compare"
    )


# -- the cool-down ---------------------------------------------------------------------------------
def test_the_cooldown_is_a_share_of_the_budget_beginning_on_the_evaluation_grid():
    assert setting.cooldown_updates(None, 1800, 200) is None
    assert setting.cooldown_updates(0.25, 1800, 200) == 400  # from 1,400 (1,350 to the nearest 200)
    assert setting.cooldown_updates(0.25, 2400, 200) == 600  # from 1,800
    assert (
        setting.cooldown_updates(0.25, 12, 10) == 2
    )  # from 10: on the grid, off a budget that is not
    assert setting.cooldown_updates(0.01, 1800, 200) == 200  # at least one evaluation interval
    assert setting.cooldown_updates(0.9, 1800, 200) == 1600
    assert (
        setting.cooldown_updates(0.5, 100, 200) == 100
    )  # a budget shorter than an interval: all of it
    for bad in (0.0, 1.0, -0.2):
        with pytest.raises(ValueError, match="parameter 'cooldown'"):
            setting.cooldown_updates(bad, 1800, 200)


def _cooldown_run(nlls: list[float], lr: float, cooldown: tuple[int, int] | None, **extra):
    """A run's artifact and logs: scheduled evaluations every 200 updates with dev NLLs ``nlls``
    (per token), the dev BLEU 10 x the update's index; ``cooldown``: (lr_cooldown, end)."""
    updates = [200 * (k + 1) for k in range(len(nlls))]
    train = {"max_updates": updates[-1], "lr": lr, "eval_every": 200}
    if cooldown is not None:
        train.update(lr_cooldown=cooldown[0], lr_cooldown_end=cooldown[1])
    art = SimpleNamespace(
        extra={"updates": updates[-1], **extra.pop("extra", {})},
        config={"train": train, **extra},
    )
    logs = {
        "eval": pd.DataFrame(
            {
                "update": updates,
                "dev_nll_token": nlls,
                "scheduled": [True] * len(nlls),
                "lr": [lr] * len(nlls),
            }
        ),
        "bleu": pd.DataFrame({"update": updates, "dev_bleu": [10.0 * k for k in range(len(nlls))]}),
    }
    return art, logs


def test_the_cooldown_evidence_reads_the_branch_at_the_same_update_and_says_what_the_rule_keeps():
    # RNNsearch-50: 6 evaluations to 1,200, its cool-down over 801-1,200 (trunk at 800)
    cooled = _cooldown_run(
        [5, 4, 3.5, 3.2, 2.9, 2.7], 0.003, (400, 1200), extra={"trunk_update": 800}
    )
    # RNNsearch-50⋆ branched at 800: at the full rate to 1,200, its own cool-down from 1,200 on
    star = _cooldown_run([5, 4, 3.5, 3.2, 3.1, 3.0, 2.8, 2.6], 0.003, (400, 1600), branch="trunk")
    table, text = recipe.cooldown_table(cooled, star)
    assert table["update"].tolist() == [1200, 1200]
    assert table["dev NLL per token"].tolist() == [2.7, 3.0]
    assert table["dev BLEU (greedy)"].tolist() == [50.0, 50.0]
    assert text == "the cool-down lowers it: the rule keeps it"
    # a cool-down that does not help is said to be dropped
    worse = _cooldown_run(
        [5, 4, 3.5, 3.2, 3.3, 3.4], 0.003, (400, 1200), extra={"trunk_update": 800}
    )
    _, text = recipe.cooldown_table(worse, star)
    assert text.startswith("**the cool-down does not lower it**")
    # no control: a continuation from the end, or one whose own cool-down began too early
    end = _cooldown_run([5, 4, 3.5, 3.2, 3.1, 3.0, 2.8, 2.6], 0.003, (400, 1600))
    assert recipe.cooldown_table(cooled, end)[0] is None
    early = _cooldown_run([5, 4, 3.5, 3.2, 3.1, 3.0], 0.003, (600, 1200), branch="trunk")
    table, text = recipe.cooldown_table(cooled, early)
    assert table is None and "own cool-down began before" in text
    short = _cooldown_run([5, 4, 3.5, 3.2, 3.1], 0.003, (400, 1600), branch="trunk")
    table, text = recipe.cooldown_table(cooled, short)
    assert table is None and "RNNsearch-50⋆ has no scheduled dev evaluation" in text
    off = _cooldown_run([5, 4, 3.5, 3.2, 3.1, 3.0, 2.8, 2.6], 0.003, (400, 1600), branch="trunk")
    off[1]["eval"]["update"] += 50  # evaluations at 250, 450, ...: none at 1,200
    table, text = recipe.cooldown_table(cooled, off)
    assert table is None and "RNNsearch-50⋆ has no" in text
    own = _cooldown_run([5, 4, 3.5, 3.2, 2.9, 2.7], 0.003, (400, 1200), extra={"trunk_update": 800})
    own[1]["eval"].loc[5, "scheduled"] = False  # a last update off the grid: evaluated at the end
    table, text = recipe.cooldown_table(own, star)
    assert (
        table is None and text == "not compared: RNNsearch-50 has no scheduled dev evaluation there"
    )


def _encdec(nlls, lr, budget=None, **extra):
    """``(rate, run, logs)`` of an RNNencdec-30 run with dev NLLs ``nlls`` every 200 updates, its
    delivered parameters the lowest (``extra["best"]``), ``budget`` its max_updates (default:
    the updates it made)."""
    art, logs = _cooldown_run(nlls, lr, None)
    ev = logs["eval"]
    art.extra["best"] = ev.loc[ev["dev_nll_token"].idxmin()].to_dict()
    if budget is not None:
        art.config["train"]["max_updates"] = budget
    art.extra.update(extra)
    return lr, art, logs


def test_encdec_lr_evidence_reads_each_whole_runs_delivered_dev_nll():
    own = _encdec([5, 4.6, 4.4, 4.3, 4.2], 0.001)  # the chapter's run: lowest at its end
    other = _encdec([5.1, 4.3, 4.35, 4.4, 4.5], 0.003)  # at lr: ahead at 400, behind at the end
    table, text = recipe.encdec_lr_table(own, other)
    assert table["lr"].tolist() == [0.001, 0.003]
    assert table["lowest dev NLL per token"].tolist() == [4.2, 4.3]
    assert table["at update"].tolist() == [1000, 400]
    assert table["updates made"].tolist() == [1000, 1000]
    assert table["dev BLEU (greedy) there"].tolist() == [40.0, 10.0]
    assert table["the chapter's"].tolist() == ["yes", ""]
    assert text == "the rule keeps RNNencdec's own rate"
    assert table["stopped early"].tolist() == ["", ""]
    # the other rate delivering less: the rule drops the own rate, and the sentence is bold
    better = _encdec([5.1, 4.3, 4.1, 4.0, 4.05], 0.003)
    table, text = recipe.encdec_lr_table(own, better)
    assert table["lowest dev NLL per token"].tolist() == [4.2, 4.0]
    assert text.startswith("**") and "`lr_encdec` should be None" in text
    # a run the schedule stopped early is read at what it delivered, and the sentence says so,
    # and whether it stopped before its cool-down
    stopped = _encdec([5, 4.6, 4.5], 0.001, budget=1000, stopped="lr_min")
    table, text = recipe.encdec_lr_table(stopped, other)
    assert table["updates made"].tolist() == [600, 1000]
    assert table["budget"].tolist() == [1000, 1000]
    assert table["stopped early"].tolist() == ["lr_min", ""]
    assert text.startswith("**")  # 4.5 against 4.3
    stopped[1].config["train"].update(lr_cooldown=300, lr_cooldown_end=1000)
    table, _ = recipe.encdec_lr_table(stopped, other)
    assert table["stopped early"].tolist() == ["lr_min, before its cool-down", ""]
    # the delivered parameters are the run's record (extra["best"]), here an unscheduled last
    # evaluation below every scheduled one
    last = _encdec([5, 4.6, 4.4, 4.3, 4.2], 0.001)
    last[2]["eval"].loc[4, "scheduled"] = False
    last[1].extra["best"] = {"update": 1000, "dev_nll_token": 4.2, "scheduled": False}
    table, _ = recipe.encdec_lr_table(last, other)
    assert table["lowest dev NLL per token"].tolist() == [4.2, 4.3]
    # without a dev BLEU curve the sentence has no BLEU aside (no "nan")
    for run in (own, other):
        run[2]["bleu"] = run[2]["bleu"].iloc[0:0]
    table, text = recipe.encdec_lr_table(own, other)
    assert table["dev BLEU (greedy) there"].isna().all()
    assert "nan" not in text and "BLEU" not in text


#: the recipe of the cpu profile until 2026-11-29 (dropout 0.3, halving on a stalled dev NLL, the
#: cool-down, RNNencdec at its own 1e-3 with its check, the paper's recipe as the candidate): the
#: tests of the recipe's machinery run on it, whatever recipe the profile now trains with
EARLIER_CPU = dict(
    dropout=0.3,
    lr_decay=0.5,
    cooldown=0.25,
    lr_encdec=0.001,
    encdec_lr_check=True,
    recipe_runs="0/none",
    dropout_encdec=None,
    lr_decay_encdec=None,
    encdec_record="",
)


def _experiment(**params) -> setting.RNNsearchExperiment:
    """An RNNsearchExperiment whose ``train_config`` is the real one, from the cpu profile's
    parameters with the earlier recipe (:data:`EARLIER_CPU`; ``params`` on top), without a
    corpus."""
    return _profile_experiment("cpu", **{**EARLIER_CPU, **params})


def _profile_experiment(profile: str, **params) -> setting.RNNsearchExperiment:
    """:func:`_experiment` under ``profile`` (``None``: the chapter's defaults)."""
    from pathlib import Path

    from rnnlib.book.execute import resolve_all
    from rnnlib.book.params import typed

    if profile is None:
        values = {**asdict(setting.Params()), **params}
    else:
        _, resolved = resolve_all(Path(__file__).parents[1], profile, [], ["rnnsearch"])
        values = {**resolved["rnnsearch"], **params}
    ex = setting.RNNsearchExperiment.__new__(setting.RNNsearchExperiment)
    ex.P = typed(setting.Params, values, "rnnsearch")
    ex.device, ex.bf16 = torch.device("cpu"), False
    ex.root = Path(__file__).parents[1]  # the book, whose records a profile may name
    return ex


def _without_data(ex: setting.RNNsearchExperiment, monkeypatch) -> None:
    """Give ``ex`` a stand-in corpus of 9 words and no cache, dev set or pairs, for tests whose
    ``train_run`` is replaced."""
    ex.cache, ex.dev, ex.dev_index = None, None, []
    ex.corpus = SimpleNamespace(
        train=SimpleNamespace(select=lambda idx: None),
        checksum="c",
        src_vocab=[0] * 9,
        tgt_vocab=[0] * 9,
    )
    monkeypatch.setattr(training, "length_filter", lambda pairs, n: [])


def test_rnnencdec_trains_at_its_own_rate_and_the_check_at_rnnsearchs(monkeypatch):
    ex = _experiment(lr=0.003, lr_encdec=0.001, encdec_lr_check=True)
    assert ex.train_config(100, "rnnencdec").lr == 0.001
    assert ex.train_config(100).lr == ex.train_config(100, "rnnsearch").lr == 0.003
    assert ex.train_config(100, "rnnencdec", lr=1.0).lr == 1.0  # an override still wins
    # every run a training function starts gets its architecture's rate
    trained = []
    monkeypatch.setattr(
        training,
        "train_run",
        lambda cache, kind, config, model, train, *a, **kw: (trained.append((model.arch, train))),
    )
    _without_data(ex, monkeypatch)
    for name in ("RNNencdec-30", "RNNencdec-50", "RNNsearch-30", "RNNsearch-50"):
        training.train_model(ex, name)
    assert [(a, t.lr) for a, t in trained] == [
        ("rnnencdec", 0.001),
        ("rnnencdec", 0.001),
        ("rnnsearch", 0.003),
        ("rnnsearch", 0.003),
    ]
    # the check: RNNencdec-30 at RNNsearch's rate, as the chapter's RNNencdec-30 in every other
    # respect (its budget, 2,979 at 1,600 search updates, and its cool-down from 2,200)
    trained.clear()
    assert training._encdec_check_wanted(ex)
    training._encdec_check(ex)
    training.train_model(ex, "RNNencdec-30")
    (arch, check), (_, chapters) = trained
    assert arch == "rnnencdec" and check.lr == 0.003 and chapters.lr == 0.001
    assert check.max_updates == chapters.max_updates == 2979
    assert check.lr_cooldown == chapters.lr_cooldown == 779
    assert check.lr_cooldown_end == 2979
    assert replace(check, lr=chapters.lr) == chapters  # the rate is all that differs
    for off in ({"encdec_lr_check": False}, {"lr_encdec": None}, {"lr_encdec": 0.003}):
        ex.P = replace(ex.P, **{"encdec_lr_check": True, "lr_encdec": 0.001, **off})
        assert not training._encdec_check_wanted(ex) and training._encdec_check(ex) is None


def test_table_2s_last_rate_is_the_one_the_last_update_used():
    cooled, logs = _cooldown_run([5, 4, 3], 0.004, (200, 600))
    assert table_2.last_rate(cooled, logs["eval"]) == pytest.approx(0.004 / 201)
    plain, logs = _cooldown_run([5, 4, 3], 0.004, None)
    assert table_2.last_rate(plain, logs["eval"]) == pytest.approx(0.004)
    assert np.isnan(table_2.last_rate(plain, pd.DataFrame({"update": []})))


def test_star_branches_from_the_trunk_when_rnnsearch_50_kept_one(monkeypatch):
    calls = []
    monkeypatch.setattr(
        training, "train_model", lambda ex, name, train, **kw: calls.append(kw) or kw
    )
    ex = SimpleNamespace(
        P=setting.Params(**{"updates_star": 2400, "updates_search": 1800, "star_patience": 4}),
        train_config=lambda updates, **kw: ("config", updates, kw),
    )
    with_trunk = SimpleNamespace(extra={"updates": 1800, "trunk_update": 1400})
    assert training.train_star(ex, with_trunk)["branch"] == "trunk"
    assert training.train_star(ex, SimpleNamespace(extra={"updates": 1800}))["branch"] == "end"
    assert all(c["parent"] is not None for c in calls)
    # the same best update after the branch is another model's parameters
    search50 = SimpleNamespace(extra={"best": {"update": 1800}, "trunk_update": 1400})
    star = SimpleNamespace(extra={"best": {"update": 1800}, "branch": "trunk"})
    assert not training.same_best({"RNNsearch-50": search50, "RNNsearch-50*": star})
    search50.extra["best"]["update"] = star.extra["best"]["update"] = 1200  # before the branch
    assert training.same_best({"RNNsearch-50": search50, "RNNsearch-50*": star})
    star.extra.pop("branch")
    star.extra["best"]["update"] = 1200
    assert training.same_best({"RNNsearch-50": search50, "RNNsearch-50*": star})


# -- decoding as the papers' code ------------------------------------------------------------------
def test_min_len_by_name_is_groundhogs_half_source():
    mask = torch.tensor([[True] * 7 + [False] * 3, [True] * 10])
    by_name = search._min_lens("groundhog", mask)
    assert by_name.tolist() == search.groundhog_min_len(mask.sum(1)).tolist() == [3, 5]
    with pytest.raises(ValueError, match="min_len='half'"):
        search._min_lens("half", mask)


def test_table_1_brevity_penalty_and_length_ratio_are_sacrebleus():
    refs = ["the cat sat on the mat today", "a dog ran in the park all day"]
    hyps = ["the cat sat", "a dog ran in the park"]
    ours = corpus_bleu(hyps, refs)
    theirs = sacrebleu.corpus_bleu(hyps, [refs])
    assert ours.bp == pytest.approx(theirs.bp) and ours.bp < 1
    assert ours.ratio == pytest.approx(theirs.sys_len / theirs.ref_len) and ours.ratio < 1


# -- Fig. 2, relative ------------------------------------------------------------------------------
def _length_data(shares=(0.0, 0.4, 0.8), sizes=(30, 30, 30)):
    """Sentences in buckets of 10 tokens (one per share, of the given sizes); system a right
    everywhere, system b right on the short ones and wrong more and more often on longer ones."""
    rng = np.random.default_rng(0)
    words = [f"w{i}" for i in range(40)]
    refs, a, b, lengths = [], [], [], []
    for bucket, (wrong_share, size) in enumerate(zip(shares, sizes)):
        for _ in range(size):
            ref = " ".join(rng.choice(words, size=8))
            refs.append(ref)
            a.append(ref)
            b.append(ref if rng.random() >= wrong_share else " ".join(rng.choice(words, size=8)))
            lengths.append(10 * bucket + 5)
    return a, b, refs, np.array(lengths)


def test_relative_slopes_see_a_decline_of_one_system_and_not_of_the_other():
    a, b, refs, lengths = _length_data()
    res = stats.relative_length_slopes(a, b, refs, lengths, [0, 10, 20], 20, n_boot=200, seed=1)
    table = res["buckets"]
    assert list(table["sentences"]) == [30, 30, 30]
    assert table["relative_a"].tolist() == pytest.approx([1.0, 1.0, 1.0])
    assert table["relative_b"].iloc[0] == 1.0 and table["relative_b"].iloc[-1] < 0.5
    assert res["slope_a"] == pytest.approx(0.0, abs=1e-12) and res["slope_b"] < 0
    assert res["diff"] == pytest.approx(res["slope_a"] - res["slope_b"]) and res["low"] > 0


def test_relative_slopes_of_a_system_against_itself_are_zero_and_small_buckets_give_nan():
    a, b, refs, lengths = _length_data()
    same = stats.relative_length_slopes(b, b, refs, lengths, [0, 10, 20], 20, n_boot=50, seed=1)
    assert same["diff"] == 0 and same["low"] == 0 and same["high"] == 0
    few = stats.relative_length_slopes(a, b, refs, lengths, [0, 10, 20], 31, n_boot=50, seed=1)
    assert np.isnan(few["diff"]) and np.isnan(few["low"]) and len(few["buckets"]) == 0


def test_relative_slopes_are_anchored_on_a_bucket_with_enough_sentences_inside_the_range():
    a, b, refs, lengths = _length_data((0.0, 0.0, 0.4, 0.8), (10, 30, 30, 30))
    edges = [0, 10, 20, 30]  # 0-9 (10 sentences), 10-19, 20-29, >=30 (open)
    res = stats.relative_length_slopes(
        a, b, refs, lengths, edges, 5, n_boot=50, seed=1, anchor_min=20, open_bucket=False
    )
    assert res["anchor"] == "10-19"  # the 10-sentence bucket is kept but anchors nothing
    assert res["buckets"]["bucket"].tolist() == ["0-9", "10-19", "20-29"]  # no open bucket
    assert res["buckets"]["relative_b"].iloc[1] == 1.0
    with_open = stats.relative_length_slopes(a, b, refs, lengths, edges, 5, n_boot=0)
    assert with_open["buckets"]["bucket"].tolist()[-1] == ">=30" and with_open["anchor"] == "0-9"
    none = stats.relative_length_slopes(a, b, refs, lengths, edges, 5, n_boot=10, anchor_min=31)
    assert none["anchor"] is None and np.isnan(none["diff"]) and np.isnan(none["low"])


def test_relative_view_divides_each_curve_by_its_own_anchor_bucket(monkeypatch):
    monkeypatch.setattr(figure_2, "ANCHOR_MIN", 20)
    t = pd.DataFrame(
        {
            "bucket": ["0-9", "10-19", ">=20"],
            "mid": [4.5, 14.5, 25.0],
            "sentences": [5, 30, 30],
            "bleu": [50.0, 20.0, 10.0],
        }
    )
    rel = figure_2.relative_by_length({"RNNsearch-50": t})
    assert rel["bucket"].tolist() == ["10-19", ">=20"]  # the 5-sentence bucket is too small
    assert rel["relative"].tolist() == pytest.approx([1.0, 0.5])


# -- Table 3 and Fig. 3 chosen by code -------------------------------------------------------------
def test_table_3_takes_the_longest_sentences_inside_the_50_token_filter():
    src_len = np.array([60, 45, 31, 29, 50, 48])
    tgt_len = np.array([70, 44, 30, 30, 51, 47])
    ex = SimpleNamespace(
        P=setting.Params(**{"len_short": 30, "len_long": 50, "n_long": 2}),
        src_len=src_len,
        n_test=6,
        test=np.arange(6),
        corpus=SimpleNamespace(test=SimpleNamespace(tgt=SimpleNamespace(lengths=tgt_len))),
    )
    # 60 is beyond the filter, 50 has a 51-token target, 29 is a "-30" sentence
    assert table_3.longest_sentences(ex).tolist() == [5, 1]
    ex.P = replace(ex.P, n_long=5)
    assert table_3.longest_sentences(ex).tolist() == [5, 1, 2]
    assert list(table_3.paper_table_3().index.get_level_values(1)) == [
        "source",
        "reference",
        "RNNenc-50",
        "RNNsearch-50",
    ]


def test_reordered_sentences_follow_the_reordering_rule_of_c_b_f3_2():
    eye = np.eye(4)
    swapped = eye[[0, 2, 1, 3]]  # words 2 and 3 aligned to source 3 and 2: a local inversion
    ex = SimpleNamespace(test=np.arange(3))
    tr = SimpleNamespace(known=np.array([True, False, True]))
    sample = SimpleNamespace(trained=[eye, swapped])
    assert figure_3.reordered_sentences(ex, tr, sample).tolist() == [2]


def test_c_b_f2_2_reads_the_relative_slopes_against_shuffled_lengths(monkeypatch):
    monkeypatch.setattr(figure_2, "ANCHOR_MIN", 30)
    a, b, refs, lengths = _length_data((0.0, 0.4, 0.8, 0.0), (30, 30, 30, 5))
    systems = {"RNNsearch-50": a, "RNNencdec-50": b}
    tr = SimpleNamespace(refs={"all": refs}, of=lambda n, s="all": systems[n])
    ex = SimpleNamespace(
        P=setting.Params(**{"seed": 1, "bucket_width": 10, "bucket_last": 30, "n_boot": 200}),
        src_len=lengths,
        n_test=len(refs),
    )
    edges = [0, 10, 20, 30]
    by_length = {
        n: stats.bleu_by_length(h, refs, lengths, edges, n_boot=50) for n, h in systems.items()
    }
    gaps = figure_2.length_gaps(ex, tr, by_length)
    slopes = figure_2.length_slopes(ex, tr)
    assert slopes["diff"] > 0 and slopes["low"] > 0
    checks = figure_2.claims(ex, tr, by_length, gaps, slopes)
    check = next(c.check for c in checks if c.claim == "C-B-F2-2")
    verdict = verdicts.evaluate(check)
    assert verdict.verdict == verdicts.HOLDS and verdict.control != verdicts.HOLDS
    # the same systems swapped: RNNsearch now degrades more, the claim fails
    swapped = {"RNNsearch-50": b, "RNNencdec-50": a}
    tr2 = SimpleNamespace(refs={"all": refs}, of=lambda n, s="all": swapped[n])
    by2 = {n: stats.bleu_by_length(h, refs, lengths, edges, n_boot=50) for n, h in swapped.items()}
    checks2 = figure_2.claims(ex, tr2, by2, figure_2.length_gaps(ex, tr2, by2))
    check2 = next(c.check for c in checks2 if c.claim == "C-B-F2-2")
    assert verdicts.evaluate(check2).verdict == verdicts.FAILS


# -- the rebuild spread ----------------------------------------------------------------------------
def _seed_runs(n_seeds: int, short_own: list[bool] | None = None):
    """Seeds whose RNNsearch (both lengths) is perfect and whose RNNencdec gets one sentence
    right from seed 2 on; ``short_own``: which seeds have their own "-30" pair."""
    refs = ["the cat sat on the mat", "a dog ran in the park", "we went home late at night"]
    good = list(refs)
    bad = ["the dog", "a cat sat", "we at home"]
    hyps = {}
    for subset in setting.SUBSETS:
        hyps[("RNNsearch-50", subset)] = [good] * n_seeds
        hyps[("RNNencdec-50", subset)] = [bad] + [[refs[0], *bad[1:]]] * (n_seeds - 1)
        hyps[("RNNsearch-50*", subset)] = [good] + [[refs[0], *bad[1:]]] * (n_seeds - 1)
        hyps[("RNNsearch-30", subset)] = [good] * n_seeds
        hyps[("RNNencdec-30", subset)] = [bad] + [[*bad[:2], refs[2]]] * (n_seeds - 1)
    tr = SimpleNamespace(refs={"all": refs, "no_unk": refs})
    seed_list = list(range(1, n_seeds + 1))
    own = short_own if short_own is not None else [True] + [False] * (n_seeds - 1)
    return seeds.SeedRuns(seed_list, hyps, [], short_own=own), tr


def test_seed_spread_shows_each_seed_and_their_mean_and_sd():
    sr, tr = _seed_runs(3)
    table = seeds.seed_spread(sr, tr)
    assert list(table.index) == ["1", "2", "3", "mean", "sd"]
    per_seed = table.loc[["1", "2", "3"], "RNNencdec-50, All"].astype(float)
    assert table.loc["mean", "RNNencdec-50, All"] == pytest.approx(per_seed.mean(), abs=0.01)
    assert table.loc["sd", "RNNencdec-50, All"] == pytest.approx(per_seed.std(ddof=1), abs=0.01)
    assert table.loc["sd", "RNNsearch-50, All"] == 0
    # each seed's RNNsearch-50⋆ too: perfect with seed 1, as RNNencdec-50's others after
    star = table.loc[["1", "2", "3"], "RNNsearch-50⋆, No UNK"].astype(float).tolist()
    assert star[0] == 100 and star[1:] == table.loc[["2", "3"], "RNNencdec-50, No UNK"].tolist()
    one, tr1 = _seed_runs(1)
    assert (
        list(seeds.seed_spread(one, tr1).index) == ["1"] and seeds.seed_tests(None, one, tr1) == {}
    )


def test_seed_tests_widen_the_interval_by_the_seeds_spread():
    sr, tr = _seed_runs(3)
    ex = SimpleNamespace(P=setting.Params(**{"n_boot": 200}))
    tests = seeds.seed_tests(ex, sr, tr)
    res = tests[("RNNsearch-50", "RNNencdec-50", "all")]
    assert res["seeds"] == 3 and res["se_seeds"] > 0
    direct = stats.seeds_and_sentences(
        sr.hyps[("RNNsearch-50", "all")], sr.hyps[("RNNencdec-50", "all")], tr.refs["all"], 200
    )
    assert (res["low"], res["high"]) == pytest.approx((direct["low"], direct["high"]))


def test_spread_numbers_are_the_seeds_sd_beside_table_1s_numbers():
    sr, tr = _seed_runs(3)
    numbers = seeds.spread_numbers(sr, tr)
    scores = [corpus_bleu(h, tr.refs["all"]).score for h in sr.hyps[("RNNencdec-50", "all")]]
    assert numbers["rns-bleu-rnnencdec-50-spread"][0] == pytest.approx(np.std(scores, ddof=1))
    assert numbers["rns-bleu-rnnencdec-50-spread-n"] == (3, None)
    star = [corpus_bleu(h, tr.refs["all"]).score for h in sr.hyps[("RNNsearch-50*", "all")]]
    assert numbers["rns-bleu-rnnsearch-50star-spread"][0] == pytest.approx(np.std(star, ddof=1))
    assert numbers["rns-bleu-rnnsearch-50star-spread"][0] > 0  # RNNsearch-50⋆'s seeds differ
    assert seeds.spread_numbers(*_seed_runs(1)) == {}


def test_schedule_text_counts_the_cuts_of_each_run():
    evals = {
        n: pd.DataFrame({"update": [200, 400, 600], "lr": [3e-3, 3e-3, 3e-3]})
        for n in setting.NAMES
    }
    evals["RNNencdec-50"] = pd.DataFrame({"update": [200, 400, 600], "lr": [3e-3, 1.5e-3, 7.5e-4]})
    extra = {n: {"stopped": "max_updates", "updates": 600} for n in setting.NAMES}
    extra["RNNencdec-50"] = {"stopped": "lr_min", "updates": 600}
    runs = SimpleNamespace(
        logs={n: {"eval": e} for n, e in evals.items()},
        runs={n: SimpleNamespace(extra=x) for n, x in extra.items()},
    )
    table = budget.schedule_table(runs)
    assert table.loc["RNNencdec-50"].tolist() == [2, 400, 0.00075, 600]
    assert table.loc["RNNsearch-50", "rate cuts"] == 0
    assert pd.isna(table.loc["RNNsearch-50", "first reported at update"])
    assert table["ended below lr_min at update"].notna().sum() == 1
    text = budget.schedule_text(SimpleNamespace(P=setting.Params(lr_decay=0.5)), runs)
    assert text == "1 of the 5 models"
    text = budget.schedule_text(SimpleNamespace(P=setting.Params(lr_decay=None)), runs)
    assert text.startswith("no model: the rate stayed constant")


def test_the_30_pair_joins_the_spread_only_when_every_seed_has_its_own():
    # seeds 2 and 3 read the chapter's "-30" pair: no "-30" spread, C-B-T1-1's "-30" half unpooled
    sr, tr = _seed_runs(3)
    ex = SimpleNamespace(P=setting.Params(**{"n_boot": 200}))
    assert not sr.short_spread and sr.pairs == [seeds.SEED_PAIR]
    assert "RNNsearch-30, All" not in seeds.seed_spread(sr, tr).columns
    assert ("RNNsearch-30", "RNNencdec-30", "all") not in seeds.seed_tests(ex, sr, tr)
    assert "rns-bleu-rnnsearch-30-spread" not in seeds.spread_numbers(sr, tr)
    # every seed with its own pair: per-seed columns, its sd, and the pooled interval
    sr, tr = _seed_runs(3, [True, True, True])
    table = seeds.seed_spread(sr, tr)
    per_seed = table.loc[["1", "2", "3"], "RNNsearch-30 − RNNencdec-30, All"].astype(float)
    enc = [corpus_bleu(h, tr.refs["all"]).score for h in sr.hyps[("RNNencdec-30", "all")]]
    assert per_seed.tolist() == pytest.approx([100 - e for e in enc], abs=0.01)
    assert table.loc["sd", "RNNencdec-30, All"] == pytest.approx(np.std(enc, ddof=1), abs=0.01)
    assert table.loc["sd", "RNNsearch-30, All"] == 0
    tests = seeds.seed_tests(ex, sr, tr)
    res = tests[("RNNsearch-30", "RNNencdec-30", "no_unk")]
    direct = stats.seeds_and_sentences(
        sr.hyps[("RNNsearch-30", "no_unk")],
        sr.hyps[("RNNencdec-30", "no_unk")],
        tr.refs["no_unk"],
        200,
    )
    assert res["seeds"] == 3 and (res["low"], res["high"]) == pytest.approx(
        (direct["low"], direct["high"])
    )
    numbers = seeds.spread_numbers(sr, tr)
    assert numbers["rns-bleu-rnnencdec-30-spread"][0] == pytest.approx(np.std(enc, ddof=1))
    assert numbers["rns-bleu-rnnsearch-30-spread-n"] == (3, None)
    # the paired table says the "-30" comparison's noise covers the seeds
    paired, _ = table_1.paired_tests(
        SimpleNamespace(P=setting.Params(**{"n_boot": 50})),
        SimpleNamespace(
            refs=tr.refs,
            base=None,
            star_same=False,
            of=lambda n, s: sr.hyps[(n, s)][0],
        ),
        tests,
    )
    noise = paired.loc[("C-B-T1-1", "RNNsearch-30 − RNNencdec-30", "All"), "noise"]
    assert noise.startswith("3 training seeds")


def test_params_are_the_chapters_parameters_cell_with_its_defaults_and_types():
    from dataclasses import fields
    from pathlib import Path

    from rnnlib.book.params import chapter_specs, typed

    specs = chapter_specs(Path(__file__).parents[1] / "chapters" / "rnnsearch.md")
    declared = {f.name: f for f in fields(setting.Params)}
    assert list(declared) == list(specs)  # the cell's order too
    for name, spec in specs.items():
        assert declared[name].default == spec.default, name
        annotation = spec.type + (" | None" if spec.optional else "")
        assert declared[name].type == annotation, name
    defaults = {n: s.default for n, s in specs.items()}
    assert typed(setting.Params, defaults, "rnnsearch") == setting.Params()


def test_the_numbers_beside_the_chapters_sentences_are_glue_ready():
    """The numbers and words the chapter's prose glues in place of its old sentences, on
    stand-in inputs: every name always glued (NaN where not measured), every word short."""
    ex = _experiment(updates_search=1600, updates_search_long=2400)
    budgets = training.budget_numbers(ex)
    assert budgets["rns-budget-rnnsearch-50"] == (2400, None)
    assert budgets["rns-budget-ratio"] == (1600 / 2400, 2)
    assert training.updates_word(ex) == "the paper's ratio of updates at equal time"
    for name, value in recipe.encdec_lr_numbers(ex, None).items():
        assert name.startswith("rns-encdec-lr-") and value[0] is not None
    # no phrase-based row: NaN, the paper's as printed
    lead = table_1.lead_numbers(ex, SimpleNamespace(base=None), {})
    assert np.isnan(lead["rns-c6-all"][0]) and lead["rns-paper-c6-all"] == (33.30 - 28.45, 2)
    assert np.isnan(lead["rns-c6-change"][0]) and np.isnan(lead["rns-c6-margin"][0])
    constant = SimpleNamespace(P=setting.Params(lr_decay=None))
    table, word, read, numbers = budget.schedule_start_evidence(constant, None, None)
    assert table.empty and read == [] and word.startswith("not measured")
    assert budget.start_summary(numbers).startswith("not measured")  # no nan in the prose
    assert len(budget.start_summary(numbers)) <= 80
    assert set(numbers) == {
        "rns-start-seeds",
        "rns-start-diff-rnnsearch-50",
        "rns-start-sd-rnnsearch-50",
        "rns-start-diff-rnnencdec-50",
        "rns-start-sd-rnnencdec-50",
    }
    assert len(setting.timed_prefixes()) <= 80
    three = seeds.SeedRuns([1, 2, 3], {}, [], built=1)
    assert seeds.origin_text(three) == "3 seeds (1 built by this build, 2 read from the cache)"
    assert seeds.origin_text(seeds.SeedRuns([1], {}, [])) == "1 seed, built by this build"


def test_the_chapters_cells_are_short_and_rebind_no_parameter():
    """Each code cell of chapter rnnsearch (its parameters cell aside) is at most 15 lines and
    binds no name of a parameter (``P`` holds them)."""
    import ast
    import re
    from pathlib import Path

    text = (Path(__file__).parents[1] / "chapters" / "rnnsearch.md").read_text(encoding="utf-8")
    cells = re.findall(r"```\{code-cell\} python\n(.*?)```", text, re.S)
    names = {f.name for f in fields(setting.Params)}
    for cell in cells:
        lines = [line for line in cell.splitlines() if not line.startswith(":tags:")]
        if ":tags: [parameters" in cell:
            continue
        assert len(lines) <= 15, lines[0]
        bound = {
            n.id
            for n in ast.walk(ast.parse("\n".join(lines)))
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
        }
        assert not bound & names, bound & names


def test_the_cooldown_numbers_read_the_evidence_table():
    cooled = _cooldown_run(
        [5, 4, 3.5, 3.2, 2.9, 2.7], 0.003, (400, 1200), extra={"trunk_update": 800}
    )
    star = _cooldown_run([5, 4, 3.5, 3.2, 3.1, 3.0, 2.8, 2.6], 0.003, (400, 1600), branch="trunk")
    runs = SimpleNamespace(
        runs={"RNNsearch-50": cooled[0], "RNNsearch-50*": star[0]},
        logs={"RNNsearch-50": cooled[1], "RNNsearch-50*": star[1]},
    )
    table, word = recipe.cooldown_evidence(runs)
    assert word == "the cool-down lowers it: the rule keeps it"
    assert recipe.cooldown_numbers(runs, table) == {
        "rns-cooldown-trunk": (800, None),
        "rns-cooldown-end": (1200, None),
        "rns-cooldown-with": (2.7, 3),
        "rns-cooldown-without": (3.0, 3),
    }
    plain = _cooldown_run([5, 4, 3.5], 0.003, None)
    runs.runs["RNNsearch-50"], runs.logs["RNNsearch-50"] = plain
    table, word = recipe.cooldown_evidence(runs)
    assert table is None and word.startswith("not compared: the runs end without a cool-down")
    numbers = recipe.cooldown_numbers(runs, table)
    assert np.isnan(numbers["rns-cooldown-trunk"][0]) and np.isnan(numbers["rns-cooldown-with"][0])


def test_the_adadelta_numbers_and_word(monkeypatch):
    from rnnlib.experiments.rnnsearch import curves

    chosen = pd.DataFrame({"seconds": [60.0, 120.0, 180.0], "dev_nll_token": [4.0, 3.0, 2.0]})
    ada = pd.DataFrame({"seconds": [60.0, 90.0], "dev_nll_token": [4.5, 4.0]})
    runs = SimpleNamespace(logs={"RNNsearch-50*": {"eval": chosen}}, adadelta=None)
    assert curves.adadelta_word(runs).startswith("not measured")
    assert all(np.isnan(v) for v, _ in curves.adadelta_numbers(runs).values())
    assert curves.adadelta_result(runs).startswith("no Adadelta run was made")  # no nan
    runs.adadelta = SimpleNamespace()
    monkeypatch.setattr(curves, "run_logs", lambda art: {"eval": ada})
    assert curves.adadelta_numbers(runs) == {
        "rns-ada-minutes": (1.5, 1),
        "rns-ada-nll": (4.0, 3),
        "rns-ada-chosen-nll": (3.5, 3),
    }
    assert curves.adadelta_word(runs) == "lower"
    said = curves.adadelta_result(runs)
    assert said == "after 1.5 min Adadelta reaches 4.000 nats a token, the chosen optimiser 3.500"
    assert len(said) <= 80


def test_the_words_of_the_phrase_based_row_and_of_panel_a():
    ex = SimpleNamespace(P=setting.Params(baseline=False))
    assert table_1.baseline_note(ex, SimpleNamespace(base=["x"])) == "there"
    assert table_1.baseline_note(ex, SimpleNamespace(base=None)) == "missing: `baseline` is off"
    ex = SimpleNamespace(P=setting.Params(align_text="A sentence."))
    assert figure_3.panel_rule(ex, np.array([])) == "the sentence of `align_text`"


def test_the_schedule_starts_evidence_gives_per_model_numbers_and_words(monkeypatch):
    ex = _experiment(lr_decay=0.5, lr_decay_start=400, start_runs=False)

    def rows(ex, runs, sr, columns):
        values = {
            ("RNNsearch-50", 1): (200, None, 3.0, 2.9),
            ("RNNencdec-50", 1): (200, 600, 3.5, 3.6),
        }
        values |= {
            ("RNNsearch-50", 2): (200, None, 3.1, 3.0),
            ("RNNencdec-50", 2): (None, 600, 3.4, 3.6),
        }
        out = [{"model": m, "seed": s, **dict(zip(columns, v))} for (m, s), v in values.items()]
        return out, []

    monkeypatch.setattr(budget, "_start_rows", rows)
    table, word, read, numbers = budget.schedule_start_evidence(ex, None, None)
    assert word == "RNNsearch-50: the chapter's; RNNencdec-50: **from the first**"
    assert numbers["rns-start-seeds"] == (2, None)
    assert numbers["rns-start-diff-rnnsearch-50"][0] == pytest.approx(-0.1)
    assert numbers["rns-start-diff-rnnencdec-50"][0] == pytest.approx(0.15)
    assert numbers["rns-start-sd-rnnencdec-50"][0] == pytest.approx(0.0)
    assert len(table) == 4
    summary = budget.start_summary(numbers).split("\n")
    assert summary[0].startswith("| model | chapter's schedule − from the first evaluation (mean")
    assert summary[2:] == ["| RNNsearch-50 | -0.100 | 0.071 |", "| RNNencdec-50 | +0.150 | 0.000 |"]


def test_a_pair_of_dev_nlls_in_words_and_no_nan_without_the_pair():
    numbers = {"a": (3.4121, 3), "b": 3.398}
    said = recipe.pair_result(numbers, ("a", "b"), ("with it", "without"))
    assert said == "3.412 nats a token with it and 3.398 without" and len(said) <= 80
    missing = recipe.pair_result({"a": (np.nan, 3), "b": 3.0}, ("a", "b"), ("x", "y"))
    assert missing == "there is no such pair of runs to compare in this build"


def _paper_range_case(sizes):
    """Fig. 2's inputs over buckets 0-9 ... 50-59 and >=60 of ``sizes`` sentences: RNNsearch-50
    right on every sentence but those of >=60 (empty output there), RNNencdec-50 half wrong."""
    shares = (0.5,) * len(sizes)
    a, b, refs, lengths = _length_data(shares, sizes)
    a = ["" if n >= 60 else h for h, n in zip(a, lengths)]
    systems = {"RNNsearch-50": a, "RNNencdec-50": b}
    tr = SimpleNamespace(refs={"all": refs}, of=lambda n, s="all": systems[n])
    ex = SimpleNamespace(
        P=setting.Params(**{"seed": 1, "bucket_width": 10, "bucket_last": 60, "n_boot": 100}),
        src_len=lengths,
        n_test=len(refs),
    )
    edges = [0, 10, 20, 30, 40, 50, 60]
    by_length = {
        n: stats.bleu_by_length(h, refs, lengths, edges, n_boot=20) for n, h in systems.items()
    }
    return ex, tr, by_length, figure_2.length_gaps(ex, tr, by_length)


def test_c_b_f2_3_reads_the_papers_last_bucket_and_shows_the_open_one_apart():
    ex, tr, by_length, gaps = _paper_range_case((25, 25, 25, 25, 25, 25, 25))
    assert figure_2.longest_texts(by_length, gaps) == {
        "rns-f2-longest": "50-59",
        "rns-f2-longest-why": "",
    }
    # RNNsearch-50 translates nothing past 59 tokens, yet shows no drop inside the paper's axis
    check = figure_2.claim_f2_3(ex, tr, by_length, gaps).check
    assert verdicts.evaluate(check).verdict == verdicts.HOLDS
    assert "50-59" in check.note
    past = figure_2.beyond(ex, tr, by_length)
    assert past["rns-f2-beyond-n"] == (25, None)
    assert past["rns-f2-beyond"].startswith("+") and "[" in past["rns-f2-beyond"]
    assert past["rns-f2-beyond-low"][0] > 0  # the open bucket drops, beyond the noise


def test_c_b_f2_3_falls_back_to_the_longest_bucket_that_holds_enough_and_says_why():
    ex, tr, by_length, gaps = _paper_range_case((25, 25, 25, 25, 25, 8, 25))
    assert figure_2.longest_texts(by_length, gaps) == {
        "rns-f2-longest": "40-49",
        "rns-f2-longest-why": " (bucket 50-59 holds only 8 sentences)",
    }
    assert "40-49" in figure_2.claim_f2_3(ex, tr, by_length, gaps).check.note
