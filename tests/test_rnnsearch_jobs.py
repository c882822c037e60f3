"""The rnnsearch chapter's training runs as jobs built side by side (rnnlib.experiments.rnnsearch
with rnnlib.experiments.run_pool)."""

from __future__ import annotations

import dataclasses
from dataclasses import replace
from types import SimpleNamespace

import pytest
import torch
from test_rnnsearch_design import _experiment, _profile_experiment, _without_data

from rnnlib.config import ModelConfig
from rnnlib.experiments.rnnsearch import recipe, seeds, setting, table_2, training
from rnnlib.experiments.rnnsearch.setting import cooldown_updates
from rnnlib.experiments.run_pool import build_side_by_side
from rnnlib.train import TrainConfig


def _recording(monkeypatch, **params):
    """The cpu profile's experiment whose training runs are recorded, not trained: each call of
    ``train_run`` returns a stand-in artifact naming its arch, config and parent."""
    ex = _experiment(**params)
    _without_data(ex, monkeypatch)
    calls = []

    def train_run(cache, kind, config, model, train, *a, parent=None, **kw):
        art = SimpleNamespace(
            keep_state=kw.get("keep_state", False),
            key=f"run{len(calls)}",
            config=config,
            arch=model.arch,
            train=train,
            model=model,
            parent=parent,
            extra={"updates": train.max_updates, "trunk_update": 1},
        )
        calls.append(art)
        return art

    monkeypatch.setattr(training, "train_run", train_run)
    return ex, calls


def test_the_chapters_jobs_are_its_runs_each_once_the_star_after_its_trunk(monkeypatch):
    ex, calls = _recording(monkeypatch)
    jobs = training.training_jobs(ex)
    names = [j.name for j in jobs]
    assert names == [  # the longer first: a free worker takes the first job it may
        "RNNsearch-50",
        "RNNsearch-50*",
        "RNNencdec-50",
        "recipe 0.0/None",
        "RNNencdec-30",
        "RNNsearch-30",
        "encdec check",
        "Adadelta",
    ]
    assert {j.name: j.after for j in jobs if j.after} == {"RNNsearch-50*": ("RNNsearch-50",)}
    built = {j.name: j.build() for j in jobs}
    star = built["RNNsearch-50*"]
    assert star.parent.train == built["RNNsearch-50"].train  # continues the chapter's RNNsearch-50
    configs = [repr((a.config, a.train, a.model, a.parent is None)) for a in built.values()]
    assert len(set(configs)) == len(configs)  # no run trained twice under two names
    assert built["Adadelta"].train.optimizer == "adadelta"
    assert built["recipe 0.0/None"].train.lr_decay is None
    assert built["recipe 0.0/None"].model.dropout == 0.0
    assert built["encdec check"].arch == "rnnencdec" and built["encdec check"].train.lr == 0.003
    # the runs train_runs returns are the jobs' artifacts, read again in this process
    monkeypatch.setattr(training, "run_logs", lambda art: {})
    calls.clear()
    ex.P = replace(ex.P, train_workers=1)  # (the stand-in cache cannot be looked up)
    runs = training.train_runs(ex)
    assert [runs.runs[n].train for n in setting.NAMES] == [built[n].train for n in setting.NAMES]
    assert runs.adadelta.train == built["Adadelta"].train
    assert runs.encdec_check.train == built["encdec check"].train
    assert runs.recipes[(0.0, None)].train == built["recipe 0.0/None"].train
    assert runs.recipes[(0.3, 0.5)] is runs.runs["RNNsearch-30"]


def test_the_long_pair_has_a_budget_of_its_own_and_the_star_continues_past_it(monkeypatch):
    """updates_search_long gives RNNsearch-50 and its dropout candidates their updates (not the
    Adadelta run), RNNencdec-50 the paper's equal time beside them, RNNsearch-50⋆ at least as
    many; the -30 pair and its runs keep updates_search. None gives every RNNsearch
    updates_search, as before."""
    ex, _ = _recording(
        monkeypatch, updates_search=1600, updates_search_long=2400, dropout_runs_long="0.1"
    )
    built = {j.name: j.build() for j in training.training_jobs(ex)}
    updates = {n: a.train.max_updates for n, a in built.items()}
    assert updates["RNNsearch-50"] == updates["dropout-50 0.1"] == 2400
    assert updates["RNNencdec-50"] == round(2400 * training.paper_rate_ratio("long")) == 5139
    assert updates["RNNsearch-50*"] == max(ex.P.updates_star, 2400)
    assert updates["RNNsearch-30"] == updates["recipe 0.0/None"] == 1600
    assert (
        updates["RNNencdec-30"]
        == updates["encdec check"]
        == round(1600 * training.paper_rate_ratio("short"))
    )
    text = training.updates_text(ex)
    assert "RNNsearch-30 1,600" in text and "RNNsearch-50 2,400" in text
    assert "RNNsearch-30 made 0.67 times RNNsearch-50's updates, against 1.64 in the paper" in text
    # fewer than RNNsearch-50's: the star trains at least as long
    ex.P = replace(ex.P, updates_star=100)
    assert training.training_jobs(ex)[1].build().train.max_updates == 2400
    same, _ = _recording(monkeypatch, updates_search=1600, updates_search_long=None)
    assert "budgets of their own" not in training.updates_text(same)
    assert {n: u for n, (_, _, u) in training.run_specs(same).items()} == {
        "RNNencdec-30": round(1600 * training.paper_rate_ratio("short")),
        "RNNsearch-30": 1600,
        "RNNencdec-50": round(1600 * training.paper_rate_ratio("long")),
        "RNNsearch-50": 1600,
    }


def test_only_the_runs_the_parameters_ask_for_are_jobs(monkeypatch):
    ex, _ = _recording(
        monkeypatch, encdec_lr_check=False, recipe_runs="0.3/0.5", adadelta_updates=0
    )
    assert [j.name for j in training.training_jobs(ex)] == [
        "RNNsearch-50",
        "RNNsearch-50*",
        "RNNencdec-50",
        "RNNencdec-30",
        "RNNsearch-30",
    ]


def test_the_long_models_dropout_and_its_candidates(monkeypatch):
    """dropout_long sets the dropout of every run of the -50 models (RNNsearch-50⋆, the
    Adadelta run and further seeds too) and no other; dropout_runs_long adds RNNsearch-50 with
    each other candidate, the same run in every other respect."""
    ex, _ = _recording(
        monkeypatch, dropout_long=0.1, dropout_runs_long="0.3, 0.1, 0.3", dropout_encdec=None
    )
    jobs = training.training_jobs(ex)
    assert [j.name for j in jobs].count("dropout-50 0.3") == 1  # a repeated candidate trains once
    # 0.1 is the chapter's; each once, after the -50 pair: as long as RNNsearch-50
    assert [j.name for j in jobs][2:5] == ["RNNencdec-50", "dropout-50 0.3", "recipe 0.0/None"]
    built = {j.name: j.build() for j in jobs}
    for name in ("RNNsearch-50", "RNNsearch-50*", "RNNencdec-50", "Adadelta"):
        assert built[name].model.dropout == 0.1, name
    for name in ("RNNsearch-30", "RNNencdec-30", "encdec check", "recipe 0.0/None"):
        assert built[name].model.dropout == (0.0 if name.startswith("recipe") else 0.3), name
    other = built["dropout-50 0.3"]
    assert other.model.dropout == 0.3
    assert other.keep_state and built["RNNsearch-50"].keep_state  # either can have a RNNsearch-50⋆
    assert dataclasses.replace(other.model, dropout=0.1) == built["RNNsearch-50"].model
    assert (
        other.train == built["RNNsearch-50"].train and other.config == built["RNNsearch-50"].config
    )
    assert seeds.seed_run(ex, "RNNsearch-50", 2).model.dropout == 0.1
    assert seeds.seed_run(ex, "RNNsearch-30", 2).model.dropout == 0.3
    monkeypatch.setattr(training, "run_logs", lambda art: {})
    ex.P = replace(ex.P, train_workers=1)
    runs = training.train_runs(ex)
    assert runs.dropout_long[0.1].model == built["RNNsearch-50"].model
    assert runs.dropout_long[0.3].model == other.model


def test_without_dropout_long_the_runs_keep_their_configs(monkeypatch):
    ex, _ = _recording(monkeypatch)
    before = {j.name: j.build() for j in training.training_jobs(ex)}
    ex2, _ = _recording(monkeypatch, dropout_long=0.3)  # the cpu profile's dropout: the same runs
    after = {j.name: j.build() for j in training.training_jobs(ex2)}
    assert {n: (a.model, a.train) for n, a in before.items()} == {
        n: (a.model, a.train) for n, a in after.items()
    }
    assert "-50 models" not in recipe._dropout_text(ex)
    ex.P = replace(ex.P, dropout_runs_long="0.1")
    assert "-50 models: 0.3 on the maxout units (compared on dev" in recipe._dropout_text(ex)


def test_further_seeds_jobs_train_what_seed_runs_reads(monkeypatch):
    ex, calls = _recording(monkeypatch)
    jobs = seeds.seed_jobs(ex, [2, 3], short=False)
    assert [j.name for j in jobs] == [
        "RNNsearch-50 seed 2",
        "RNNsearch-50* seed 2",
        "RNNsearch-50 seed 3",
        "RNNsearch-50* seed 3",
        "RNNencdec-50 seed 2",
        "RNNencdec-50 seed 3",
    ]
    assert jobs[1].after == ("RNNsearch-50 seed 2",) and jobs[3].after == ("RNNsearch-50 seed 3",)
    built = {j.name: j.build() for j in jobs}
    assert built["RNNsearch-50* seed 3"].train.seed == 3
    assert built["RNNsearch-50* seed 3"].parent.train.seed == 3
    assert built["RNNencdec-50 seed 2"].train == seeds.seed_run(ex, "RNNencdec-50", 2).train
    short = [j.name for j in seeds.seed_jobs(ex, [2], short=True)]
    assert short[-2:] == ["RNNencdec-30 seed 2", "RNNsearch-30 seed 2"]
    assert seeds.seed_jobs(ex, [], short=True) == []
    assert build_side_by_side(None, seeds.seed_jobs(ex, [2], False), 1, torch.device("cpu")) == {
        "RNNsearch-50 seed 2": "not started",
        "RNNsearch-50* seed 2": "not started",
        "RNNencdec-50 seed 2": "not started",
    }


def _runs(at_once: list[int], threads: list[int]):
    arts = [
        SimpleNamespace(key=f"k{i}", extra={"runs_at_once": n, "threads": t})
        for i, (n, t) in enumerate(zip(at_once, threads))
    ]
    runs = dict(zip(setting.NAMES, arts))
    return SimpleNamespace(
        runs=runs,
        recipes={(0.3, 0.5): arts[1]},
        dropout_long={0.3: arts[3]},
        adadelta=None,
        encdec_check=None,
    )


def test_the_side_by_side_numbers_read_the_runs_records():
    runs = _runs([2, 2, 2, 2, 1], [1, 1, 1, 1, 1])
    numbers = table_2.side_by_side_numbers(runs)
    assert numbers == {
        "rns-runs-total": (5, None),
        "rns-runs-side": (4, None),
        "rns-runs-at-once": (2, None),
    }
    assert table_2.side_by_side_text(runs) == "alone on 1 torch threads"
    one = _runs([1, 1, 1, 1, 2], [1] * 5)
    assert table_2.side_by_side_numbers(one)["rns-runs-side"] == (1, None)
    alone = _runs([1] * 5, [2] * 5)
    assert table_2.side_by_side_text(alone) == "alone on 2 torch threads"
    old = _runs([1] * 5, [2] * 5)  # runs recorded before the setting existed
    for art in old.runs.values():
        art.extra = {}
    assert table_2.side_by_side_text(old) == "alone"
    every = _runs([2] * 5, [1] * 5)
    assert table_2.side_by_side_text(every) == "none: every run had another beside it"


class _Pairs(list):
    """Stand-in training pairs: a length, and a selection that is themselves."""

    def select(self, index):
        return self


def _old_way(ex, cls, **overrides):
    """A config as the chapter built it before its parameters were typed: every parameter named
    like a field of ``cls`` (``Chapter.config``, :func:`rnnlib.config.config_subset`), then
    ``overrides`` by name."""
    from rnnlib.config import config_subset, load_config

    return load_config(cls, {**config_subset(cls, dataclasses.asdict(ex.P)), **overrides})


@pytest.mark.parametrize("profile", [None, "smoke", "cpu", "spread", "paper"])
def test_the_typed_configs_are_those_the_parameters_gave_by_name(monkeypatch, profile):
    """Every run's TrainConfig and ModelConfig, built from the typed parameters field by field,
    equals the one matching the parameters' names gave (so the runs' cache keys stay): every
    call the chapter's jobs make (its runs, the further seeds', the schedule's evidence), for the
    chapter's defaults and each profile."""
    ex = _profile_experiment(profile, seed_runs=1, dropout_runs_long="0.1", recipe_runs="0/none")
    _without_data(ex, monkeypatch)
    ex.corpus.train = _Pairs(range(10))  # the smoke profile's max_train reads its length
    monkeypatch.setattr(training, "train_run", lambda *a, **kw: SimpleNamespace(extra={}, **kw))
    calls = {"train": [], "model": []}
    real_train, real_model = ex.train_config, ex.model_config

    def train_config(updates, arch="rnnsearch", **overrides):
        calls["train"].append((updates, arch, overrides))
        return real_train(updates, arch, **overrides)

    def model_config(arch, **overrides):
        calls["model"].append((arch, overrides))
        return real_model(arch, **overrides)

    ex.train_config, ex.model_config = train_config, model_config
    for job in training.training_jobs(ex) + seeds.seed_jobs(ex, [2], short=True):
        job.build()
    assert len(calls["train"]) >= 10 and len(calls["model"]) >= 10
    vocab = {"src_vocab": len(ex.corpus.src_vocab), "tgt_vocab": len(ex.corpus.tgt_vocab)}
    for arch, overrides in calls["model"]:
        old = _old_way(ex, ModelConfig, arch=arch, **vocab, **overrides)
        assert dataclasses.asdict(real_model(arch, **overrides)) == dataclasses.asdict(old)
    for updates, arch, overrides in calls["train"]:
        n = cooldown_updates(ex.P.cooldown, updates, ex.P.eval_every)
        cooldown = {} if n is None else {"lr_cooldown": n, "lr_cooldown_end": updates}
        fixed = {"max_updates": updates, "checkpoint_every": None, "device": "cpu", "bf16": False}
        batch = {"eval_batch_size": max(80, ex.P.batch_size)}
        more = {"lr": ex.lr_of(arch), "lr_decay": ex.lr_decay_of(arch), **cooldown, **overrides}
        old = _old_way(ex, TrainConfig, **fixed, **batch, **more)
        new = real_train(updates, arch, **overrides)
        assert dataclasses.asdict(new) == dataclasses.asdict(old)
        assert new.to_dict() == old.to_dict()
