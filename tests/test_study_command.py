"""``rnnlib study encdec-50`` (rnnlib.experiments.study_command): the study's runs are the
chapter's (its recipes, trained side by side), its record is the one the chapter reads through
``encdec_record``, with the spread of two draws of one recipe, and a profile without a study is
an error naming the parameter."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest
from test_rnnsearch_design import _candidate, _profile_experiment

from rnnlib.book.params import ParameterError
from rnnlib.experiments import run_pool, study_command
from rnnlib.experiments.rnnsearch import choices, training


def _stand_ins(monkeypatch, nll: dict) -> list:
    """Replace the study's training: ``(dropout, lr, lr_decay, seed) -> dev NLL`` stand-in runs
    (each with a key and seconds), the side-by-side builder recording the job names."""
    logs, arts, started = {}, {}, []

    def train_study_run(ex, key):
        if key not in arts:
            art, lg = _candidate(nll[key], 200)
            art.key, art.extra["seconds"] = f"k{len(arts)}", 60.0 * (len(arts) + 1)
            arts[key], logs[id(art)] = art, lg
        return arts[key]

    def side_by_side(cache, jobs, workers, device):
        started.extend(job.name for job in jobs)
        return {}

    monkeypatch.setattr(training, "train_study_run", train_study_run)
    monkeypatch.setattr(run_pool, "build_side_by_side", side_by_side)
    monkeypatch.setattr(choices, "run_logs", lambda art: logs[id(art)])
    return started


def test_the_study_record_holds_each_recipes_draws_and_their_spread(monkeypatch, tmp_path):
    ex = _profile_experiment("encdec-study")
    ex.cache = None  # stand-in runs: nothing is looked up
    nll = {
        (0.0, 0.003, None, 1): 3.63,
        (0.0, 0.003, None, 2): 3.51,
        (0.3, 0.001, 0.5, 1): 3.50,
        (0.0, 0.001, None, 1): 3.70,
        (0.3, 0.003, None, 1): 3.40,
    }
    started = _stand_ins(monkeypatch, nll)
    runs = study_command.study_runs(ex)
    assert list(runs) == list(nll)  # the paper's recipe first, then encdec_runs in order
    assert started == [training.study_job_name(k) for k in nll]  # all offered to the workers
    record = study_command.make_study_record(ex, runs, "abc1234", "2 CPUs")
    assert record["paper"] == "0/0.003/none"
    assert record["dev_nll"]["0/0.003/none"] == [3.63, 3.51]
    assert record["spread"] == pytest.approx(0.12)  # the two draws of the paper's recipe
    assert [r["key"] for r in record["runs"]] == ["k0", "k1", "k2", "k3", "k4"]
    assert record["runs"][1] == {
        "recipe": "0/0.003/none",
        "seed": 2,
        "key": "k1",
        "seconds": 120.0,
        "delivered update": 200,
    }
    path = study_command.write_study_record(tmp_path, "encdec-50", "encdec-study", record)
    assert path.parent == tmp_path and path.name.startswith("encdec-50-encdec-study-")
    read = choices.read_study_record(path)  # what the chapter reads through encdec_record
    assert read.spread == pytest.approx(0.12) and read.dev_nll["0.3/0.003/none"] == (3.40,)
    table = choices.record_table(read)
    choice = choices.study_choice(table, read.paper, read.spread)
    # 3.57 (the paper's mean) - 3.40 = 0.17, above the spread 0.12
    assert choice["best"] == "0.3/0.003/none" and choice["chosen"]
    with pytest.raises(FileExistsError, match="never overwritten"):
        monkeypatch.setattr(
            study_command,
            "datetime",
            SimpleNamespace(now=lambda tz: SimpleNamespace(strftime=lambda f: path.stem[-15:])),
        )
        study_command.write_study_record(tmp_path, "encdec-50", "encdec-study", record)
    assert json.loads(path.read_text())["runs"] == record["runs"]  # the first one intact


def test_a_profile_without_a_study_is_an_error_naming_the_parameter(monkeypatch):
    started = _stand_ins(monkeypatch, {})
    with pytest.raises(ParameterError, match="'encdec_runs' of chapter rnnsearch is empty"):
        study_command.study_runs(_profile_experiment("cpu"))
    assert started == []


def test_the_command_names_the_parameter_before_preparing_the_corpus(monkeypatch, capsys):
    from pathlib import Path

    from rnnlib.experiments.rnnsearch import setting

    def start(*a, **k):
        raise AssertionError("the corpus was prepared for a profile without a study")

    monkeypatch.setattr(setting.RNNsearchExperiment, "start", start)
    monkeypatch.chdir(Path(__file__).parents[1])
    args = SimpleNamespace(study="encdec-50", profile="cpu", cache=None, out=None, allow_dirty=True)
    assert study_command.main(args) == 2
    assert "'encdec_runs' of chapter rnnsearch is empty" in capsys.readouterr().err
