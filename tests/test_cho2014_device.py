"""Paper A's chapters take their device as a parameter (``device``, ``auto`` by default): it reaches
the scorer's TrainConfig, the PhraseScorer and the CSLM, checkpoints load onto it, and on a CPU
machine ``auto`` and ``cpu`` keep the cache keys the scorer and the CSLM had before the parameter.
(No GPU here: the ``meta`` device stands in for one where a device only has to be carried.)"""

from __future__ import annotations

import re
import subprocess
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch

import rnnlib.experiments.baseline as baseline_module
from rnnlib.experiments.cho2014 import scorer as scorer_mod
from rnnlib.experiments.cho2014 import setting
from rnnlib.cache import ArtifactCache
from rnnlib.experiments.cho2014.cslm import cslm_run, load_cslm
from rnnlib.book.params import OVERRIDES_ENV, chapter_specs
from rnnlib.corpus.vocab import Vocab
from rnnlib.presets import preset
from rnnlib.smt.cslm import CSLM, CSLMConfig
from rnnlib.train import LATER_FIELDS, train_preset

ROOT = Path(__file__).resolve().parents[1]
CPU_ONLY = pytest.mark.skipif(
    torch.cuda.is_available(), reason="the CPU keys: 'auto' resolves to the CPU"
)


class KeyCache:
    """Records what a cache would key an artifact by, and builds nothing."""

    def __init__(self):
        self.built = []

    def build(self, kind, config, make, data=None):
        self.built.append((kind, config, data))
        return SimpleNamespace(kind=kind, key=ArtifactCache.key(kind, config, data), config=config)


@pytest.mark.slow  # starts the command line in a process of its own: about 3 s
def test_cho2014_declares_device_auto_and_representations_reads_it(monkeypatch):
    monkeypatch.delenv(OVERRIDES_ENV, raising=False)
    spec = chapter_specs(ROOT / "chapters" / "cho2014.md")["device"]
    assert spec.default == "auto" and set(spec.choices) == {"auto", "cpu", "cuda"}
    assert (
        setting.cho2014_params(ROOT, "smoke")["device"] == "auto"
    )  # what the representations chapter reads
    assert "device" not in chapter_specs(
        ROOT / "chapters" / "representations.md"
    )  # one device: cho2014's
    assert "device" in scorer_mod.SCORER_PARAMS
    out = subprocess.run(
        [sys.executable, "-m", "rnnlib.cli", "params", "chapters/cho2014.md"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    line = next(x for x in out.stdout.splitlines() if x.startswith("device "))
    assert "'auto'" in line and "'cpu'" in line and "'cuda'" in line


def test_the_chapters_hard_code_no_cpu():
    for name in ("cho2014", "representations"):
        code = (ROOT / "chapters" / f"{name}.md").read_text()
        lines = [
            x for x in code.splitlines() if not x.startswith("profile:")
        ]  # the profile is named "cpu"
        assert not [x for x in lines if re.search(r"""["']cpu["']""", x)], name
        assert "torch.Generator()" not in code, (
            name
        )  # a sampler's generator lives on the network's device
    package = sorted((ROOT / "rnnlib/experiments/cho2014").glob("*.py"))
    package += sorted((ROOT / "rnnlib/experiments/representations").glob("*.py"))
    for module in [str(m.relative_to(ROOT)) for m in package]:
        assert 'map_location="cpu"' not in (ROOT / module).read_text(), module


@CPU_ONLY
def test_the_scorers_key_on_the_cpu_is_the_one_it_had_before_the_device_parameter():
    before = train_preset(
        "paper-a", max_updates=20, eval_every=10, seed=1, checkpoint_every=10
    )  # device "auto"
    model_config = preset("smoke-cho2014", src_vocab=40, tgt_vocab=40)
    run_config = {"phrase_table": "toy", "sample": None, "dev_pairs": 3, "sample_seed": 1}
    # the key form until now: every TrainConfig field of the time (the fields added later key
    # only when set, and this run sets none)
    old_train = {k: v for k, v in asdict(before).items() if k not in LATER_FIELDS}
    old_key = ArtifactCache.key(
        "cho2014/scorer",
        {**run_config, "model": model_config.to_dict(), "train": old_train},
        "data",
    )
    for device in ("auto", "cpu"):
        cache = KeyCache()
        art = scorer_mod.scorer_run(
            cache, run_config, model_config, before.override(device=device), None, None, "data"
        )
        assert art.key == old_key, device
    # another device keys apart, by its type
    for device, kind in (("cuda", "cuda"), ("cuda:1", "cuda"), ("meta", "meta")):
        assert scorer_mod.train_key(before.override(device=device))["device"] == kind


@dataclass
class _SMTConfig:
    seed: int = 0


def _phrase_scorer(monkeypatch, params):
    """:func:`rnnlib.experiments.cho2014.phrase_scorer` with its SMT run, phrase table and
    training stubbed: the TrainConfig it trains with, and the PhraseScorer it returns."""
    vocab = Vocab([f"w{i}" for i in range(12)])
    corpus = SimpleNamespace(src_vocab=vocab, tgt_vocab=vocab, checksum="toy", detokenize=" ".join)
    pairs = [((f"w{i}",), (f"w{(i + 1) % 12}",)) for i in range(12)]
    seen = {}
    monkeypatch.setattr(
        baseline_module, "baseline_inputs", lambda corpus, params: (None, _SMTConfig())
    )
    monkeypatch.setattr(
        scorer_mod,
        "build_stages",
        lambda *a, **k: (None, SimpleNamespace(key="table", file=lambda name: name), None),
    )
    monkeypatch.setattr(scorer_mod, "PhraseTable", SimpleNamespace(load=lambda path: "table"))
    monkeypatch.setattr(
        scorer_mod,
        "table_pairs",
        lambda table, sample=None, seed=0, exclude=(): pairs[:2]
        if sample == 1
        else [p for p in pairs if p not in set(exclude)],
    )

    def scorer_run(cache, config, model_config, train_config, train_pairs, dev_pairs, data):
        seen["train_config"] = train_config
        return SimpleNamespace(key="scorer")

    monkeypatch.setattr(scorer_mod, "scorer_run", scorer_run)
    scorer = scorer_mod.phrase_scorer(
        None,
        corpus,
        {
            "seed": 1,
            "rnn_dev_pairs": 1,
            "rnn_sample": None,
            "rnn_updates": 4,
            "rnn_eval_every": 2,
            "model_preset": "smoke-cho2014",
            **params,
        },
    )
    return seen["train_config"], scorer


def test_the_device_parameter_reaches_the_scorers_training_and_its_network(monkeypatch):
    expected = "cuda" if torch.cuda.is_available() else "cpu"
    for params in ({}, {"device": "auto"}, {"device": expected}):
        train_config, scorer = _phrase_scorer(monkeypatch, params)
        assert train_config.device == expected and scorer.device.type == expected, params
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="CUDA is not available"):
            _phrase_scorer(monkeypatch, {"device": "cuda"})


def test_checkpoints_load_onto_the_chosen_device(tmp_path):
    torch.manual_seed(0)
    model_config = preset("smoke-cho2014", src_vocab=20, tgt_vocab=20)
    net = scorer_mod.build_model(model_config)
    torch.save(net.state_dict(), tmp_path / "model.pt")
    art = SimpleNamespace(file=lambda name: tmp_path / name)
    cpu = scorer_mod.load_scorer(art, model_config, torch.device("cpu"))
    assert all(
        torch.equal(a, b) for a, b in zip(cpu.state_dict().values(), net.state_dict().values())
    )
    assert {
        p.device.type for p in scorer_mod.load_scorer(art, model_config, "meta").parameters()
    } == {"meta"}
    cslm_config = CSLMConfig(vocab=20, order=3, emb=4, hidden=(8,))
    torch.save(CSLM(cslm_config).state_dict(), tmp_path / "model.pt")
    cslm_art = SimpleNamespace(
        file=lambda name: tmp_path / name, config={"model": asdict(cslm_config)}
    )
    assert {p.device.type for p in load_cslm(cslm_art, "meta").parameters()} == {"meta"}
    assert {p.device.type for p in load_cslm(cslm_art).parameters()} == {"cpu"}


@CPU_ONLY
def test_the_cslms_key_names_a_device_only_off_the_cpu():
    config = CSLMConfig(vocab=20, order=3, emb=4, hidden=(8,))
    kw = dict(updates=10, batch_size=4, lr=1e-2, eval_every=5, dev_share=0.1, seed=0, data="toy")
    old = {
        "model": asdict(config),
        "updates": 10,
        "batch_size": 4,
        "lr": 1e-2,
        "eval_every": 5,
        "dev_share": 0.1,
        "seed": 0,
        "optimizer": "adam",
    }  # the key form until now
    keys = {}
    for device in ("auto", "cpu", torch.device("cpu"), torch.device("meta")):
        cache = KeyCache()
        cslm_run(cache, config, [["a"]], [["a"]], None, device=device, **kw)
        keys[str(device)] = cache.built[0][1]
    assert keys["auto"] == keys["cpu"] == old
    assert keys["meta"] == {**old, "device": "meta"}


def test_the_optimiser_parameters_reach_the_scorer_and_the_check_trains_the_papers(monkeypatch):
    adam = {"rnn_optimizer": "adam", "rnn_lr": 0.003, "rnn_clip": 1.0}
    train_config, scorer = _phrase_scorer(monkeypatch, adam)
    assert (train_config.optimizer, train_config.lr, train_config.clip_norm) == ("adam", 0.003, 1.0)
    paper, _ = _phrase_scorer(monkeypatch, {})
    assert (paper.optimizer, paper.lr, paper.clip_norm) == ("adadelta", 1.0, None)
    seen = {}
    monkeypatch.setattr(
        scorer_mod,
        "scorer_run",
        lambda *a, **k: seen.setdefault("train", a[3]) and SimpleNamespace(),
    )
    monkeypatch.setattr(scorer_mod, "encode_pairs", lambda *a: None)
    corpus = SimpleNamespace(src_vocab=None, tgt_vocab=None, checksum="c")
    scorer.run_config = {"phrase_table": "t"}
    scorer_mod.scorer_variant(None, corpus, scorer, paper_optimiser=True)
    assert seen["train"] == paper  # the paper's optimiser, everything else the chapter's
