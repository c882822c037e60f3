"""The typed parameters of the copy_task, data and baseline chapters: each ``Params`` is its
chapter's parameters cell, and the configs built from it by named fields are the ones the
chapters built before by matching parameter names to config fields (``config_subset``), for the
chapters' defaults and for the smoke profile, so every cache key stays where it was. Nothing is
built: the configs are compared, not the artifacts."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from rnnlib.batch import BATCH_FORMAT
from rnnlib.book.corpus_params import corpus_config
from rnnlib.book.execute import resolve_all
from rnnlib.book.params import ParameterError, chapter_specs, typed
from rnnlib.cache import ArtifactCache
from rnnlib.config import ModelConfig, config_subset, load_config
from rnnlib.corpus.dataset import NoUsablePairs
from rnnlib.device import resolve_device
from rnnlib.experiments import baseline, copy_task, data
from rnnlib.presets import preset
from rnnlib.smt.decoder import DecoderConfig
from rnnlib.smt.system import SMTConfig
from rnnlib.train import TrainConfig

ROOT = Path(__file__).resolve().parents[1]
MODULES = {"copy_task": copy_task, "data": data, "baseline": baseline}


def resolved(chapter: str, profile: str) -> dict:
    """The chapter's parameters as a run under ``profile`` resolves them (no overrides)."""
    return resolve_all(ROOT, profile, [], only=[chapter])[1][chapter]


@pytest.mark.parametrize("chapter", sorted(MODULES))
def test_each_params_is_its_chapters_parameters_cell(chapter):
    specs = chapter_specs(ROOT / "chapters" / f"{chapter}.md")
    cls = MODULES[chapter].Params
    fields = dataclasses.fields(cls)
    assert [f.name for f in fields] == list(specs)  # the same names, in the cell's order
    for f in fields:
        spec = specs[f.name]
        assert f.type == spec.type + (" | None" if spec.optional else ""), f.name
        assert f.default == spec.default and type(f.default) is type(spec.default), f.name
    assert cls.__dataclass_params__.frozen
    with pytest.raises(ParameterError):  # typed() refuses a parameter the class lacks
        typed(cls, {**{n: s.default for n, s in specs.items()}, "extra": 1}, chapter)


# -- copy_task: the model's key -------------------------------------------------------------------
def copy_task_key_before(p: dict) -> dict:
    """The model key as ``CopyTask.from_params`` built it from the parameter dict, by name."""
    device = resolve_device(p["device"])
    vocab = copy_task.FIRST + p["symbols"]
    model = preset(
        "smoke-rnnsearch",
        **config_subset(ModelConfig, p),
        src_vocab=vocab,
        tgt_vocab=vocab,
        maxout=max(1, p["hidden"] // 2),
        align=p["hidden"],
    )
    overrides = {
        "lr": p["lr"] or (0.01 if p["optimizer"] == "adam" else 1.0),
        "checkpoint_every": max(50, p["max_updates"] // 4),
        "device": device.type,
    }
    train = load_config(TrainConfig, {**config_subset(TrainConfig, p), **overrides})
    names = ("task", "symbols", "min_len", "max_len", "n_train", "n_test", "seed")
    return {
        "data": {k: p[k] for k in names},
        "model": model.to_dict(),
        "train": train.to_dict(),
        "batch_format": BATCH_FORMAT,
    }


@pytest.mark.parametrize("profile", ["cpu", "smoke", "paper"])
def test_copy_task_model_key_is_the_one_built_by_name(profile):
    p = resolved("copy_task", profile)
    task = copy_task.CopyTask.from_params(copy_task.Params(**{**p, "n_train": 3, "n_test": 2}))
    before = copy_task_key_before({**p, "n_train": 3, "n_test": 2})
    assert copy_task.model_key(task) == before
    # the key is a canonical JSON: the same dict with the same types gives the same hash
    assert ArtifactCache.key("copy_task/model", copy_task.model_key(task), None) == (
        ArtifactCache.key("copy_task/model", before, None)
    )


def test_copy_task_defaults_and_the_other_optimiser():
    p = dataclasses.asdict(copy_task.Params(optimizer="adadelta", lr=None, n_train=3, n_test=2))
    task = copy_task.CopyTask.from_params(copy_task.Params(**p))
    assert copy_task.model_key(task) == copy_task_key_before(p)


# -- baseline: the system's settings --------------------------------------------------------------
class FakeCorpus:
    def text(self, split, side):
        return [f"{side} {split} {i}" for i in range(8)]

    def references(self, split, multi=False):
        return [[f"ref {split} {i}" for i in range(8)], [f"alt {split} {i}" for i in range(8)]]


def smt_config_before(p: dict) -> SMTConfig:
    """:class:`SMTConfig` as ``baseline_inputs`` built it from the parameter dict, by name."""
    decoder = load_config(DecoderConfig, config_subset(DecoderConfig, p))
    return load_config(SMTConfig, {**config_subset(SMTConfig, p), "decoder": decoder})


@pytest.mark.parametrize("profile", ["cpu", "smoke", "spread"])
def test_baseline_settings_are_the_ones_built_by_name(profile):
    p = resolved("baseline", profile)
    P = baseline.Params(**p)
    config = baseline.smt_config(P)
    assert config == smt_config_before(p)
    assert dataclasses.asdict(config) == dataclasses.asdict(smt_config_before(p))
    data_new, config_new = baseline.baseline_inputs(FakeCorpus(), P)
    data_old, config_old = baseline.baseline_inputs(FakeCorpus(), p)  # the dict, read by name
    assert (data_new, config_new) == (data_old, config_old)
    assert baseline.typed_params(ROOT, profile) == P
    # another chapter's typed parameters are read by name as its dict is
    other = dataclasses.make_dataclass("Other", [(k, object) for k in p], frozen=True)(**p)
    assert baseline.baseline_inputs(FakeCorpus(), other) == (data_old, config_old)


def test_baseline_params_take_a_typed_callers_corpus_text():
    given = {"fr_version": "5", "src_vocab": 123, "lowercase": True}
    typed_caller = data.Params(**given)
    assert baseline.baseline_params(ROOT, "smoke", typed_caller) == {
        **baseline.baseline_params(ROOT, "smoke", dataclasses.asdict(typed_caller))
    }


# -- data: the corpora of the length filters ------------------------------------------------------
@pytest.mark.parametrize("profile", ["cpu", "smoke"])
def test_data_corpus_configs_are_the_ones_built_by_name(profile, monkeypatch):
    p = resolved("data", profile)
    P = data.Params(**p)
    assert data.corpus_settings(P) == corpus_config(p)
    asked = []

    def prepare(cfg, cache):
        asked.append(cfg)
        raise NoUsablePairs("train", {"read": 0}, {}, cfg)

    monkeypatch.setattr(data, "prepare_corpus", prepare)
    data.length_filters(None, P)
    assert asked == [corpus_config(p, max_len=limit) for limit in (None, 50, 30)]
    assert [c.key_config() for c in asked] == [
        corpus_config(p, max_len=limit).key_config() for limit in (None, 50, 30)
    ]
