"""The cho2014 chapter's typed parameters (rnnlib.experiments.cho2014.setting.Params): the same
fields as its parameters cell, and the same configs, hence cache keys, as the mapping of those
parameters gives (the representations chapter passes the mapping)."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from types import SimpleNamespace

import rnnlib.experiments.baseline as baseline_module
from rnnlib.book.params import chapter_specs, typed
from rnnlib.corpus.vocab import Vocab
from rnnlib.experiments.cho2014 import cslm, scorer, setting, systems

ROOT = Path(__file__).resolve().parents[1]


def test_params_are_the_parameters_cell_with_its_defaults():
    specs = chapter_specs(ROOT / "chapters" / "cho2014.md")
    defaults = {name: spec.default for name, spec in specs.items()}
    assert typed(setting.Params, defaults, "cho2014") == setting.Params()
    assert setting.Params().as_dict() == defaults
    assert setting.as_params(defaults) == setting.Params()


def test_the_package_reads_no_parameter_through_a_dict():
    for path in (ROOT / "rnnlib" / "experiments" / "cho2014").glob("*.py"):
        assert not re.search(r"""\b(p|params)\[["']""", path.read_text()), path.name


def _plan(monkeypatch, params):
    """scorer.scorer_plan with its SMT run and phrase table stubbed: the configs that key the
    network, and the parameters it handed the baseline's inputs."""
    vocab = Vocab([f"w{i}" for i in range(12)])
    corpus = SimpleNamespace(src_vocab=vocab, tgt_vocab=vocab, checksum="toy")
    pairs = [((f"w{i}",), (f"w{(i + 1) % 12}",)) for i in range(40)]
    seen = []
    monkeypatch.setattr(
        baseline_module, "baseline_inputs", lambda c, p: seen.append(dict(p)) or (None, None)
    )
    table = SimpleNamespace(key="table", file=lambda name: name)
    monkeypatch.setattr(scorer, "build_stages", lambda *a, **k: (None, table, None))
    monkeypatch.setattr(scorer, "PhraseTable", SimpleNamespace(load=lambda path: "table"))
    monkeypatch.setattr(
        scorer,
        "table_pairs",
        lambda table, sample=None, seed=0, exclude=(): [p for p in pairs if p not in exclude][
            : sample or None
        ],
    )
    plan = scorer.scorer_plan(None, corpus, params, 1)
    key = (dataclasses.asdict(plan.model_config), scorer.train_key(plan.train_config))
    return key, plan.run_config, seen


def test_the_typed_parameters_key_the_network_and_the_cslm_as_their_mapping_does(monkeypatch):
    P = setting.Params(rnn_optimizer="adam", rnn_lr=0.003, rnn_clip=1.0, rnn_sample=5)
    assert _plan(monkeypatch, P) == _plan(monkeypatch, setting.as_params(P.as_dict()))
    key, run_config, seen = _plan(monkeypatch, P)
    assert seen == [P.as_dict()] and run_config["sample"] == 5
    assert key[1]["optimizer"] == "adam" and key[1]["max_updates"] == P.rnn_updates
    got = []
    monkeypatch.setattr(cslm, "cslm_run", lambda cache, config, *a, **k: got.append(k) or "art")
    vocab = Vocab(["a", "b"])
    base = SimpleNamespace(
        corpus=SimpleNamespace(tgt_vocab=vocab, checksum="c"),
        data=SimpleNamespace(train_tgt=[["a"]], dev_tgt=[["b"]]),
        device="cpu",
    )
    config, _ = cslm.cslm_model(None, base, P)
    assert (config.order, config.emb, config.hidden) == (7, 128, (512, 256))
    assert got[0]["updates"] == P.cslm_updates and got[0]["seed"] == P.seed
    rows = systems.rnn_row_seeds(SimpleNamespace(seeds=[1, 2, 3]), P)
    assert rows == {
        "Baseline, tuned on": [1, 2, 3],
        "+RNN": [1, 2, 3],
        "+RNN per word": [1, 2, 3],
        "+RNN from defaults": [1, 2, 3],
    }
