"""The recipe's choices per model family (rnnlib.experiments.rnnsearch.choices, with the
parameters that set RNNencdec's recipe apart in setting.py and training.py): the spread rule,
the spread of draws of one recipe, the RNNencdec-50 study and its jobs, each family's choice in
the departures table, the study record, and the cache keys the new parameters leave alone."""

from __future__ import annotations

import dataclasses
import json
import math
from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from test_rnnsearch_design import _candidate, _encdec, _experiment, _profile_experiment
from test_rnnsearch_jobs import _Pairs, _recording

from rnnlib.experiments.rnnsearch import choices, recipe, seeds, setting, training


# -- the rule ------------------------------------------------------------------------------------
def test_the_rule_chooses_only_a_gain_above_a_measured_spread():
    chosen, words = choices.spread_rule(0.2, 0.16)
    assert chosen and words == "chosen: it gains 0.200, above the spread 0.160"
    chosen, words = choices.spread_rule(0.031, 0.16)  # the cpu profile's dropout 0.3
    assert not chosen and words == "not chosen: it gains 0.031, not above the spread 0.160"
    assert not choices.spread_rule(0.16, 0.16)[0]  # equal is not above
    assert not choices.spread_rule(-0.5, 0.1)[0]
    for none in (None, math.nan):  # no spread: nothing is chosen, however large the gain
        assert choices.spread_rule(5.0, none) == (False, "not chosen: no spread measured")
    assert choices.spread_rule(math.nan, 0.1) == (False, "not chosen: not compared on dev")


def test_the_spread_of_draws_is_their_largest_difference_and_needs_two():
    assert choices.spread_of([2.955, 2.795]) == pytest.approx(0.16)
    assert choices.spread_of([3.0, 3.2, 3.1]) == pytest.approx(0.2)
    assert choices.spread_of([3.0]) is None and choices.spread_of([]) is None
    assert choices.spread_of([3.0, math.nan]) is None
    draws = {"RNNsearch-30": [3.7], "RNNsearch-50": [2.8, 2.9], "RNNencdec-50": [3.5]}
    spread, whose = choices.family_spread(draws, ("RNNsearch-30", "RNNsearch-50"))
    assert spread == pytest.approx(0.1) and whose == "RNNsearch-50, 2 seeds"  # the family's other
    assert choices.family_spread(draws, ("RNNencdec-30", "RNNencdec-50")) == (
        None,
        "no two draws of one recipe",
    )
    # a spread measured in the study counts with the model's own draws, the larger kept
    spread, whose = choices.family_spread(draws, ("RNNencdec-50",), 0.05)
    assert spread == 0.05 and whose == "RNNencdec-50, 1 seed and the study"
    spread, _ = choices.family_spread(draws, ("RNNsearch-50",), 0.05)
    assert spread == pytest.approx(0.1)


def test_a_choice_in_words_is_short_and_has_no_nan():
    assert choices.choice_words(0.031, math.nan, "not chosen: no spread measured") == (
        "a margin of 0.031 nats a token, no spread measured: not chosen"
    )
    words = choices.choice_words(0.2, 0.16, choices.spread_rule(0.2, 0.16)[1])
    assert words == "a margin of 0.200 nats a token, spread 0.160: chosen"
    assert choices.choice_words(math.nan, math.nan, "the paper's: no departure") == (
        "the paper's: no departure"
    )
    assert all(len(w) <= 80 and "nan" not in w for w in (words,))


# -- RNNencdec's own parameters ------------------------------------------------------------------
def test_rnnencdec_dropout_and_schedule_are_its_own_only_where_set():
    ex = _experiment()
    assert ex.dropout_of("RNNencdec-50") == ex.dropout_of("RNNsearch-50") == 0.3
    assert ex.lr_decay_of("rnnencdec") == ex.lr_decay_of("rnnsearch") == 0.5
    ex = _experiment(dropout_encdec=0.0, lr_decay_encdec=1.0, dropout_long=0.1)
    assert ex.dropout_of("RNNencdec-50") == ex.dropout_of("RNNencdec-30") == 0.0
    assert ex.dropout_of("RNNsearch-50") == 0.1 and ex.dropout_of("RNNsearch-30") == 0.3
    assert ex.lr_decay_of("rnnencdec") is None and ex.lr_decay_of("rnnsearch") == 0.5
    assert ex.train_config(100, "rnnencdec").lr_decay is None
    assert ex.train_config(100, "rnnsearch").lr_decay == 0.5
    assert _experiment(lr_decay_encdec=0.7).lr_decay_of("rnnencdec") == 0.7
    for bad in (1.5, 0.0):
        with pytest.raises(ValueError, match="lr_decay_encdec"):
            ex.P = replace(ex.P, lr_decay_encdec=bad)
            ex.lr_decay_of("rnnencdec")
    ex = _experiment(dropout_encdec=0.0, lr_decay_encdec=1.0)
    assert "RNNencdec: none (its own, `dropout_encdec`)" in recipe._dropout_text(ex)
    assert recipe._encdec_decay(ex) == "; RNNencdec: a constant rate (its own, `lr_decay_encdec`)"
    assert recipe._encdec_decay(_experiment()) == ""


def _job_configs(ex, monkeypatch) -> dict[str, str]:
    """``job name -> repr of (config, model, train, parent's)`` of every job the chapter's
    parameters ask for, its further seed's included (stand-in runs, nothing trained)."""
    from test_rnnsearch_design import _without_data

    _without_data(ex, monkeypatch)
    ex.corpus.train = _Pairs(range(10))

    def train_run(cache, kind, config, model, train, *a, parent=None, **kw):
        parent_of = None if parent is None else parent.what
        what = repr((kind, config, model.to_dict(), train.to_dict(), parent_of, kw.get("branch")))
        return SimpleNamespace(what=what, extra={"trunk_update": 1}, key=what)

    monkeypatch.setattr(training, "train_run", train_run)
    jobs = training.training_jobs(ex) + seeds.seed_jobs(ex, [ex.P.seed + 1], short=True)
    return {job.name: job.build().what for job in jobs}


@pytest.mark.parametrize("profile", [None, "smoke", "cpu", "spread", "paper"])
def test_rnnencdecs_parameters_at_their_fallbacks_leave_every_run_as_it_was(monkeypatch, profile):
    """With ``dropout_encdec`` and ``lr_decay_encdec`` set to the values RNNencdec's runs had
    without them, and with the study off, every job and its config are the same as at the
    defaults (so the cache keys of the existing runs stay); set otherwise, they change the
    RNNencdec runs alone."""
    asked = dict(seed_runs=1, dropout_runs_long="0.1", recipe_runs="0/none", encdec_lr_check=True)
    ex = _profile_experiment(profile, **asked)
    before = _job_configs(ex, monkeypatch)
    decay = ex.lr_decay_of("rnnencdec")  # the profile's own for RNNencdec where it sets one
    same = dict(
        dropout_encdec=ex.dropout_of("RNNencdec-50"),
        lr_decay_encdec=1.0 if decay is None else decay,
        encdec_runs="",
    )
    if ex.dropout_of("RNNencdec-30") == same["dropout_encdec"]:  # one value for both lengths
        assert _job_configs(_profile_experiment(profile, **asked, **same), monkeypatch) == before
    other = _job_configs(_profile_experiment(profile, **asked, dropout_encdec=0.05), monkeypatch)
    assert list(other) == list(before)
    changed = {n for n in before if other[n] != before[n]}
    assert changed and all("RNNencdec" in n or n == "encdec check" for n in changed), changed


# -- the RNNencdec-50 study ----------------------------------------------------------------------
def test_encdec_runs_parse_and_reject_bad_entries_by_name():
    assert training.parse_encdec_runs("0/0.003/none, 0.1/0.001/0.5/2") == [
        (0.0, 0.003, None, None),
        (0.1, 0.001, 0.5, 2),
    ]
    assert training.parse_encdec_runs("") == [] and training.parse_encdec_runs(None) == []
    for bad in ("0.3/0.5", "x/0.003/none", "1/0.003/none", "0/0/none", "0/0.003/2", "0/1/none/x"):
        with pytest.raises(ValueError, match="encdec_runs"):
            training.parse_encdec_runs(bad)


def test_the_study_trains_each_recipe_of_rnnencdec_50_and_the_papers_once(monkeypatch):
    ex, calls = _recording(
        monkeypatch, encdec_runs="0.1/0.003/none, 0/0.003/none/2, 0.1/0.003/none"
    )
    chapters = training.chapters_encdec_recipe(ex)
    assert chapters == (0.3, 0.001, 0.5, 1)  # the earlier cpu recipe's RNNencdec-50
    assert training.paper_encdec_recipe(ex) == (0.0, 0.003, None, 1)
    names = [j.name for j in training.training_jobs(ex)]
    study = names[3:6]  # after RNNencdec-50: as long as it
    assert study == [
        "encdec-50 0.0/0.003/None seed 1",
        "encdec-50 0.1/0.003/None seed 1",
        "encdec-50 0.0/0.003/None seed 2",
    ]
    built = {j.name: j.build() for j in training.training_jobs(ex)}
    own = built["RNNencdec-50"]
    for name in study:
        run = built[name]
        assert run.arch == "rnnencdec" and run.config == own.config  # the same pairs
        assert run.train.max_updates == own.train.max_updates == 5139
        assert run.train.lr_cooldown == own.train.lr_cooldown and run.parent is None
    paper, second = built[study[0]], built[study[2]]
    assert paper.model.dropout == 0.0 and paper.train.lr == 0.003 and paper.train.lr_decay is None
    assert replace(second.train, seed=1) == paper.train and second.train.seed == 2
    assert built[study[1]].model.dropout == 0.1
    # the chapter's own recipe is its RNNencdec-50, not trained again
    ex.P = replace(ex.P, encdec_runs="0.3/0.001/0.5, 0/0.003/none")
    assert [j.name for j in training.training_jobs(ex)][3:5] == [study[0], "recipe 0.0/None"]
    monkeypatch.setattr(training, "run_logs", lambda art: {})
    ex.P = replace(ex.P, train_workers=1, encdec_runs="0.1/0.003/none")
    runs = training.train_runs(ex)
    assert list(runs.encdec_study) == [chapters, (0.0, 0.003, None, 1), (0.1, 0.003, None, 1)]
    assert runs.encdec_study[chapters] is runs.runs["RNNencdec-50"]
    ex.P = replace(ex.P, encdec_runs="")  # off: nothing new, the chapter's run alone
    assert training.study_recipes(ex) == []
    assert not [j.name for j in training.training_jobs(ex) if j.name.startswith("encdec-50 ")]


def test_the_study_profile_adds_four_rnnencdec_50_runs_to_the_cpu_profiles(monkeypatch):
    """``--profile encdec-study``: the cpu profile's runs, each with the same config, and the
    study's four RNNencdec-50 runs: the paper's recipe with seeds 1 and 2, and two candidates
    (the rate alone, the dropout alone); its third candidate, dropout 0.3 with 1e-3 and the
    halving, is the cpu profile's own since the study chose it, so its seed 1 is the chapter's
    RNNencdec-50."""
    cpu = _job_configs(_profile_experiment("cpu"), monkeypatch)
    study = _job_configs(_profile_experiment("encdec-study"), monkeypatch)
    assert {n: study[n] for n in cpu} == cpu
    assert training.chapters_encdec_recipe(_profile_experiment("cpu"))[:3] == (0.3, 0.001, 0.5)
    assert sorted(set(study) - set(cpu)) == [
        "encdec-50 0.0/0.001/None seed 1",
        "encdec-50 0.0/0.003/None seed 1",
        "encdec-50 0.0/0.003/None seed 2",
        "encdec-50 0.3/0.003/None seed 1",
    ]


def _run(nll: float, update: int = 200):
    art, logs = _candidate(nll, update)
    return art, logs


def test_the_study_table_reads_each_recipes_draws_and_the_rule_its_spread(monkeypatch):
    logs = {}

    def run(nll):
        art, lg = _run(nll)
        logs[id(art)] = lg
        return art

    monkeypatch.setattr(choices, "run_logs", lambda art: logs[id(art)])
    paper, own, light = (0.0, 0.003, None), (0.3, 0.001, 0.5), (0.1, 0.003, None)
    draws = {paper: {1: run(3.60), 2: run(3.50)}, own: {1: run(3.52)}, light: {1: run(3.30)}}
    table = choices.study_table(draws, paper, own)
    label = choices.study_label(paper)
    assert label == "no dropout, constant rate, lr 0.003"
    assert table.loc[label, "dev NLL per token"] == pytest.approx(3.55)
    assert table.loc[label, "per draw"] == "3.600, 3.500" and table.loc[label, "seeds"] == "1, 2"
    assert table.loc[label, "the paper's"] == "yes"
    assert table.loc[choices.study_label(own), "the chapter's"] == "yes"
    assert table.loc[label, "as parameters"] == (
        "dropout_encdec=0, lr_encdec=0.003, lr_decay_encdec=1"
    )
    assert choices.study_parameters(own).endswith("lr_encdec=0.001, lr_decay_encdec=0.5")
    assert choices.study_spread(table) == pytest.approx(0.1)
    choice = choices.study_choice(table, label, choices.study_spread(table))
    assert choice["best"] == choices.study_label(light) and choice["chosen"]
    assert choice["gain"] == pytest.approx(0.25)
    # a gain inside the spread, or no spread, chooses nothing
    draws[light] = {1: run(3.50)}
    table = choices.study_table(draws, paper, own)
    assert not choices.study_choice(table, label, choices.study_spread(table))["chosen"]
    single = {paper: {1: run(3.60)}, light: {1: run(3.0)}}
    table = choices.study_table(single, paper, own)
    assert choices.study_spread(table) is None
    assert choices.study_choice(table, label, None)["rule"] == "not chosen: no spread measured"
    alone = choices.study_table({own: {1: run(3.52)}}, paper, own)
    assert choices.study_choice(alone, label, 0.1)["best"] is None


def _stand_in_runs(monkeypatch, further: list[dict] | None = None):
    """The cpu profile's experiment with stand-in runs carrying the cpu build's dev NLLs: the
    recipe runs (RNNsearch-30: 3.742 with dropout 0.3 and the halving, 3.773 with the paper's
    recipe), RNNencdec-30 at its own rate and at RNNsearch's (4.046, 4.076), no study; the
    earlier cpu recipe (``EARLIER_CPU``)."""
    ex = _experiment()
    logs = {}
    arts = {}
    for name, nll in zip(setting.NAMES, [4.046, 3.742, 3.509, 2.64, 2.60]):
        art, lg = _run(nll)
        art.extra["updates"] = 200
        art.config = {"train": {"max_updates": 200, "lr": 0.003, "eval_every": 200}}
        arts[name], logs[id(art)] = art, lg
    paper30, lg = _run(3.773)
    logs[id(paper30)] = lg
    own30 = _encdec([4.5, 4.046], 0.001)
    at_lr = _encdec([4.5, 4.076], 0.003)
    arts["RNNencdec-30"] = own30[1]
    logs[id(own30[1])], logs[id(at_lr[1])] = own30[2], at_lr[2]
    monkeypatch.setattr(recipe, "run_logs", lambda art: logs[id(art)])
    monkeypatch.setattr(choices, "run_logs", lambda art: logs[id(art)])
    runs = training.Runs(
        arts,
        {n: logs[id(a)] for n, a in arts.items()},
        {},
        recipes={(0.3, 0.5): arts["RNNsearch-30"], (0.0, None): paper30},
        dropout_long={0.3: arts["RNNsearch-50"]},
        encdec_check=at_lr[1],
        encdec_study={training.chapters_encdec_recipe(ex): arts["RNNencdec-50"]},
    )
    more = further or []
    sr = seeds.SeedRuns([1] + [k + 2 for k in range(len(more))], {}, [], further=more)
    return ex, runs, sr


def test_each_familys_choice_says_whether_its_margin_beats_the_spread(monkeypatch):
    ex, runs, sr = _stand_in_runs(monkeypatch)
    chosen = choices.family_choices(ex, runs, sr)
    assert list(chosen.index) == list(choices.CHOICES)
    recipe_row, lr_row = chosen.loc["search-recipe"], chosen.loc["encdec-lr"]
    assert recipe_row["margin"] == pytest.approx(0.031) and math.isnan(recipe_row["spread"])
    assert recipe_row["rule"] == "not chosen: no spread measured"
    assert recipe_row["made on"] == "RNNsearch-30 (recipe_runs)"
    assert lr_row["margin"] == pytest.approx(0.030) and lr_row["rule"].startswith("not chosen")
    # the "-50" models take RNNsearch's dropout (no dropout_long): the row above's verdict
    long_row = chosen.loc["search-dropout-long"]
    assert long_row["rule"] == "not chosen (row above)"
    assert long_row["made on"] == "RNNsearch-30, as RNNsearch's recipe"
    assert chosen.loc["encdec-study", "rule"] == "not chosen: no study beside the paper's recipe"
    numbers = choices.choice_numbers(chosen)
    assert numbers["rns-choice-search-recipe"] == (
        "a margin of 0.031 nats a token, no spread measured: not chosen"
    )
    assert all(len(v) <= 80 for v in numbers.values() if isinstance(v, str))
    rows = choices.departure_rows(chosen)
    assert len(rows) == len(choices.CHOICES)
    setting_, paper_, text, params = rows[0]
    assert setting_ == "choice: RNNsearch's dropout and schedule" and paper_ == "no choice on dev"
    assert "dev NLL 0.031 nats a token below no dropout, constant rate;" in text
    assert text.endswith("; spread none: not chosen: no spread measured")
    assert "no margin measured against 0;" in rows[1][2]
    assert "recipe_runs" in params and "seed_runs" in params
    # a further seed of the four models: the spread of two draws (0.16 apart on RNNsearch-30)
    further = {n: _run(v)[0] for n, v in zip(setting.NAMES[:4], [4.10, 3.902, 3.60, 2.70])}
    ex, runs, sr = _stand_in_runs(monkeypatch, [further])
    chosen = choices.family_choices(ex, runs, sr)
    row = chosen.loc["search-recipe"]
    assert row["spread"] == pytest.approx(0.16) and row["spread of"] == "RNNsearch-30, 2 seeds"
    assert row["rule"] == "not chosen: it gains 0.031, not above the spread 0.160"
    assert chosen.loc["encdec-lr", "spread"] == pytest.approx(0.054)
    assert chosen.loc["encdec-study", "spread"] == pytest.approx(0.091)  # RNNencdec-50's seeds
    assert "RNNencdec-50" in chosen.loc["encdec-study", "spread of"]


def test_the_departures_table_appends_the_choices_rows():
    ex = _experiment()
    ex.corpus = SimpleNamespace(train=[0] * 3, dev=[0])
    ex.dev, ex.dev_index, ex.n_test = [0] * 5, np.arange(2), 4
    ex.P = replace(ex.P, max_train=None)
    row = ("choice: RNNsearch's dropout and schedule", "no choice on dev", "text", "recipe_runs")
    table = recipe.departures(ex, [row])
    assert table.index[-1] == row[0] and table.iloc[-1].tolist() == list(row[1:])
    assert len(recipe.departures(ex)) == len(table) - 1  # without choices: as before


# -- a study kept as a record --------------------------------------------------------------------
def _record(tmp_path, **changes):
    data = {
        "commit": "abc123",
        "machine": "2 CPUs",
        "model": "RNNencdec-50",
        "measure": choices.MEASURE,
        "paper": "0/0.003/none",
        "candidates": ["0/0.003/none", "0.1/0.003/none"],
        "dev_nll": {"0/0.003/none": [3.6, 3.5], "0.1/0.003/none": [3.3]},
        "spread": 0.1,
        **changes,
    }
    path = tmp_path / "study.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_a_study_record_is_read_checked_and_judged_by_the_rule(tmp_path):
    record = choices.read_study_record(_record(tmp_path))
    assert record.commit == "abc123" and record.candidates == ("0/0.003/none", "0.1/0.003/none")
    assert record.dev_nll["0/0.003/none"] == (3.6, 3.5) and record.spread == 0.1
    table = choices.record_table(record)
    assert table.loc["0/0.003/none", "dev NLL per token"] == pytest.approx(3.55)
    choice = choices.study_choice(table, record.paper, record.spread)
    assert choice["best"] == "0.1/0.003/none" and choice["chosen"]  # 0.25 above 0.1
    none = choices.read_study_record(_record(tmp_path, spread=None))
    assert not choices.study_choice(choices.record_table(none), none.paper, none.spread)["chosen"]
    for bad, match in (
        ({"measure": "dev BLEU"}, "measure"),
        ({"paper": "0/0.001/none"}, "paper's recipe"),
        ({"dev_nll": {"0/0.003/none": [3.6]}}, "no finite dev NLL"),
        ({"spread": 0.05}, "below a candidate's own draws"),  # 3.6 and 3.5 differ by 0.1
        ({"spread": -1}, "negative"),
    ):
        with pytest.raises(ValueError, match=match):
            choices.read_study_record(_record(tmp_path, **bad))
    # the study's own runs written as such a record read back as they were
    runs = {
        (0.0, 0.003, None): {1: _run(3.6)[0], 2: _run(3.5)[0]},
        (0.1, 0.003, None): {1: _run(3.3)[0]},
    }
    data = choices.study_record(runs, (0.0, 0.003, None), 0.1, "abc123", "2 CPUs")
    assert data["seeds"] == {"0/0.003/none": [1, 2], "0.1/0.003/none": [1]}
    path = tmp_path / "written.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    assert choices.read_study_record(path) == record
    path = _record(tmp_path)
    data = json.loads(path.read_text())
    del data["machine"]
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError, match="missing machine"):
        choices.read_study_record(path)


def test_the_chapter_reads_a_study_record_in_place_of_the_study(monkeypatch, tmp_path):
    """With ``encdec_record`` and no ``encdec_runs`` the study's table and the RNNencdec row of
    the choices are the record's, judged by the same rule on its spread (and the build's
    RNNencdec-50 seeds', the larger); ``encdec_runs`` set, the runs are read, not the record."""
    _record(tmp_path)  # study.json: 0.25 below the paper's recipe, spread 0.1
    ex, runs, sr = _stand_in_runs(monkeypatch)
    ex.root, ex.P = tmp_path, replace(ex.P, encdec_record="study.json")
    table, choice = choices.encdec_study(ex, runs, sr)
    assert list(table.index) == ["0/0.003/none", "0.1/0.003/none"]
    assert choice["chosen"] and choice["source"].endswith("record study.json (commit abc123)")
    row = choices.family_choices(ex, runs, sr).loc["encdec-study"]
    assert row["choice"] == "0.1/0.003/none" and row["margin"] == pytest.approx(0.25)
    assert row["spread"] == 0.1 and row["rule"].startswith("chosen")
    _record(tmp_path, spread=None)
    row = choices.family_choices(ex, runs, sr).loc["encdec-study"]
    assert row["rule"] == "not chosen: no spread measured"
    ex.P = replace(ex.P, encdec_runs="0.1/0.003/none")  # (its runs are not in runs: KeyError)
    table, choice = choices.encdec_study(ex, runs, sr)
    assert choice["source"] == "RNNencdec-50 (encdec_runs)" and len(table) == 1


def test_a_rate_the_study_chose_with_its_recipe_is_read_as_that_choice(monkeypatch, tmp_path):
    """A recipe chosen by the study with a rate of its own, which the profile applies, gives
    RNNencdec its rate without the rate check: the rate's row reads the study's verdict; a
    rate the study did not choose keeps the rate check's row."""
    best = {"0/0.003/none": [3.6, 3.5], "0.3/0.001/0.5": [3.2]}
    _record(tmp_path, candidates=list(best), dev_nll=best)
    ex, runs, sr = _stand_in_runs(monkeypatch)
    ex.root, ex.P = tmp_path, replace(ex.P, encdec_record="study.json", encdec_lr_check=False)
    ex.P = replace(ex.P, dropout_encdec=0.3, lr_encdec=0.001, lr_decay_encdec=0.5)
    chosen = choices.family_choices(ex, runs, sr)
    assert chosen.loc["encdec-study", "rule"].startswith("chosen: it gains 0.350")
    lr_row = chosen.loc["encdec-lr"]
    assert lr_row["choice"] == "0.001" and lr_row["rule"] == "chosen (row below)"
    assert lr_row["made on"] == "RNNencdec-50, as the study's recipe"
    ex.P = replace(ex.P, lr_encdec=0.002)  # a rate of its own that the study did not choose
    lr_row = choices.family_choices(ex, runs, sr).loc["encdec-lr"]
    assert lr_row["made on"] == "RNNencdec-30 (encdec_lr_check)"
    assert lr_row["rule"].startswith("not chosen")


def test_the_new_parameters_are_in_the_chapters_cell_and_params():
    names = [f.name for f in dataclasses.fields(setting.Params)]
    assert names.index("dropout_encdec") == names.index("encdec_lr_check") + 1
    assert setting.Params().encdec_runs == "" and setting.Params().lr_decay_encdec is None
    assert setting.Params().dropout_encdec is None and setting.Params().encdec_record == ""


def test_where_the_chapter_trains_the_papers_recipe_the_best_candidate_is_read_against_it(
    monkeypatch,
):
    """The cpu profile now trains the paper's recipe and keeps dropout 0.3 with the halving as a
    candidate: the RNNsearch row names that candidate, its margin over the paper's (3.773 -
    3.742) and the rule's verdict, which chooses it only above a measured spread."""
    ex, runs, sr = _stand_in_runs(monkeypatch)
    ex.P = replace(ex.P, dropout=0.0, lr_decay=None, cooldown=None, lr_encdec=None)
    row = choices.family_choices(ex, runs, sr).loc["search-recipe"]
    assert row["choice"] == "dropout 0.3, rate × 0.5 when dev stalls"
    assert row["against"] == "no dropout, constant rate"
    assert row["margin"] == pytest.approx(0.031)
    assert row["rule"] == "not chosen: no spread measured"
    drawn = {n: _run(v) for n, v in zip(setting.NAMES[:4], [4.10, 3.752, 3.60, 2.70])}
    ex, runs, sr = _stand_in_runs(monkeypatch, [{n: art for n, (art, _) in drawn.items()}])
    ex.P = replace(ex.P, dropout=0.0, lr_decay=None, cooldown=None, lr_encdec=None)
    known, own_logs = {id(art): lg for art, lg in drawn.values()}, choices.run_logs
    monkeypatch.setattr(choices, "run_logs", lambda art: known.get(id(art)) or own_logs(art))
    row = choices.family_choices(ex, runs, sr).loc["search-recipe"]
    assert row["spread"] == pytest.approx(0.010)  # RNNsearch-30's two draws: 3.742 and 3.752
    assert row["rule"] == "chosen: it gains 0.031, above the spread 0.010"
    # with RNNsearch's recipe switched to the candidate, the "-50" models inherit the choice;
    # a dropout of their own (dropout_long) is a choice of its own, here not compared on dev
    ex.P = replace(ex.P, dropout=0.3, lr_decay=0.5, recipe_runs="0/none")
    switched = choices.family_choices(ex, runs, sr)
    assert switched.loc["search-recipe", "rule"] == "chosen: it gains 0.031, above the spread 0.010"
    assert switched.loc["search-dropout-long", "rule"] == "chosen (row above)"
    ex.P = replace(ex.P, dropout_long=0.2)
    long_row = choices.family_choices(ex, runs, sr).loc["search-dropout-long"]
    assert long_row["rule"] == "not chosen: not compared on dev"
    ex.P = replace(ex.P, dropout=0.0, lr_decay=None, recipe_runs="", dropout_long=None)
    # without a candidate beside the paper's recipe there is nothing to read
    runs.recipes = {(0.0, None): runs.recipes[(0.0, None)]}
    row = choices.family_choices(ex, runs, sr).loc["search-recipe"]
    assert math.isnan(row["margin"]) and row["rule"] == "the paper's: no departure"


def test_a_seed_recorded_apart_is_a_draw_of_the_recipe_where_its_record_holds_the_measure(
    monkeypatch,
):
    """``rnnlib spread rnnsearch-30 --seed 2`` records each model's dev NLL per token: a record
    matching this code adds that draw to the spread the rule reads; a record without the measure
    (written before it was recorded) adds none."""
    from rnnlib.book.spread_records import Records
    from rnnlib.experiments.spread_book import RecordedSpread

    ex, runs, sr = _stand_in_runs(monkeypatch)
    ex.P = replace(ex.P, dropout=0.0, lr_decay=None, cooldown=None, lr_encdec=None)
    headline = {"RNNsearch-30, All": 2.5, "RNNsearch-30, dev NLL per token": 3.80}
    old = {"RNNencdec-30, All": 0.4}  # an older record: BLEU only
    records = {"rnnsearch-30": Records(matching=[{"headline": headline}, {"headline": old}])}
    spread = RecordedSpread(records, pd.DataFrame(), pd.DataFrame())
    draws = choices.seed_draws(runs, sr, spread)
    assert draws["RNNsearch-30"] == [pytest.approx(3.742), pytest.approx(3.80)]
    assert draws["RNNencdec-30"] == [pytest.approx(4.046)]
    row = choices.family_choices(ex, runs, sr, spread).loc["search-recipe"]
    assert row["spread"] == pytest.approx(0.058) and row["spread of"] == "RNNsearch-30, 2 seeds"
    assert row["rule"] == "not chosen: it gains 0.031, not above the spread 0.058"
    assert choices.draw_numbers(runs)["rns-devtok-rnnsearch-30"] == (pytest.approx(3.742), 3)


def test_the_cpu_profile_trains_the_recipe_its_study_record_chose():
    """The cpu profile's RNNencdec recipe is the one its ``encdec_record`` chose by the rule
    (a record or profile changed alone would leave the departures table contradicting it)."""
    ex = _profile_experiment("cpu")
    record = choices.read_study_record(ex.root / ex.P.encdec_record)
    choice = choices.study_choice(choices.record_table(record), record.paper, record.spread)
    own = training.chapters_encdec_recipe(ex)[:3]
    assert choice["chosen"] and choice["best"] == choices.study_entry(own)
    assert choice["gain"] > record.spread
