"""Small book helpers: the phrase-based baseline's inputs from chapter parameters, command-line
overrides in a chapter's kernel, the cho2014 chapter's parameters as the representations chapter
reads them, the Fig. 1 diagram."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import matplotlib
import pytest

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from rnnlib.experiments.baseline import baseline_inputs, baseline_params  # noqa: E402
from rnnlib.experiments.cho2014.scorer import SCORER_PARAMS  # noqa: E402
from rnnlib.experiments.cho2014.setting import cho2014_params  # noqa: E402
from rnnlib.experiments.rnnsearch.figure_1 import rnnsearch_diagram  # noqa: E402
from rnnlib.book.params import OVERRIDES_ENV, chapter_specs, overrides_in_environment, run_overrides  # noqa: E402
from rnnlib.book.execute import resolve_all  # noqa: E402
from minibook import make_minibook  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


class FakeCorpus:
    """Three splits of numbered sentences, one reference stream plus one extra for dev/test."""

    def text(self, split, side):
        n = {"train": 10, "dev": 6, "test": 5}[split]
        return [f"{side} {split} {i}" for i in range(n)]

    def references(self, split, multi=False):
        n = {"dev": 6, "test": 5}[split]
        streams = [[f"ref {split} {i}" for i in range(n)]]
        return streams + [[f"alt {split} {i}" for i in range(n)]] if multi else streams


def test_baseline_inputs_take_the_subsets_and_the_config_fields_from_the_parameters():
    params = {
        "max_train": 4,
        "max_eval": 3,
        "seed": 7,
        "table_limit": 9,
        "lm_order": 3,
        "tune_nbest": 12,
        "mert_iterations": 2,
        "stack_size": 11,
        "ttable_limit": 4,
        "distortion_limit": 2,
        "max_phrase_len": 5,
        "profile": "smoke",
        "alignment_check": True,
    }
    data, config = baseline_inputs(FakeCorpus(), params)
    assert len(data.train_src) == 4 and data.train_src[0] == ["src", "train", "0"]
    assert len(data.dev_src) == len(data.test_src) == 3
    assert [len(s) for s in data.test_refs] == [3, 3]  # every reference stream, cut to max_eval
    assert (config.seed, config.table_limit, config.lm_order, config.tune_nbest) == (7, 9, 3, 12)
    assert (
        config.decoder.stack_size,
        config.decoder.ttable_limit,
        config.decoder.max_phrase_len,
    ) == (11, 4, 5)


def test_baseline_params_follow_the_profile_and_take_the_callers_corpus_text():
    smoke = baseline_params(ROOT, "smoke")
    assert smoke["max_eval"] == 60 and smoke["profile"] == "smoke"
    mine = baseline_params(ROOT, "smoke", {"fr_version": "5", "src_vocab": 123, "lowercase": True})
    assert mine["fr_version"] == "5" and mine["lowercase"] is True
    assert (
        mine["src_vocab"] == smoke["src_vocab"]
    )  # shortlists do not change the phrase-based system


def test_representations_reads_the_phrase_scorer_with_the_cho2014_chapters_parameters(monkeypatch):
    monkeypatch.delenv(OVERRIDES_ENV, raising=False)
    _, resolved = resolve_all(ROOT, "smoke", [])
    mine = cho2014_params(ROOT, "smoke")
    assert (
        mine == resolved["cho2014"]
    )  # what the cho2014 chapter runs with: one scorer config, one cache key
    assert mine["model_preset"] == "smoke-cho2014" and mine["rnn_updates"] == 20
    # the representations chapter declares no network (nor corpus) of its own
    own = set(chapter_specs(ROOT / "chapters" / "representations.md"))
    assert not (set(SCORER_PARAMS) - {"seed"} | {"optimizer", "lr"}) & own


def test_the_representations_setting_is_the_chapters_parameters_cell(monkeypatch):
    """Params has exactly the cell's fields with its defaults, and each profile's resolved
    parameters give a typed object whose fields are those values."""
    import dataclasses

    from rnnlib.book.params import typed
    from rnnlib.experiments.representations.setting import Params

    monkeypatch.delenv(OVERRIDES_ENV, raising=False)
    specs = chapter_specs(ROOT / "chapters" / "representations.md")
    defaults = {name: spec.default for name, spec in specs.items()}
    assert dataclasses.asdict(Params()) == defaults and list(defaults) == [
        f.name for f in dataclasses.fields(Params)
    ]
    for profile in ("smoke", "cpu", "paper"):
        resolved = resolve_all(ROOT, profile, [], only=["representations"])[1]["representations"]
        assert dataclasses.asdict(typed(Params, resolved, "representations")) == resolved


def test_command_line_overrides_of_cho2014_reach_the_chapter_that_reads_its_scorer(monkeypatch):
    monkeypatch.delenv(OVERRIDES_ENV, raising=False)
    overrides = ["cho2014.rnn_updates=7", "representations.seed=9", "threads=1"]
    with overrides_in_environment(overrides):
        assert run_overrides() == overrides
        mine = cho2014_params(ROOT, "smoke")
    assert OVERRIDES_ENV not in os.environ and run_overrides() == []
    _, resolved = resolve_all(ROOT, "smoke", overrides)
    assert mine == resolved["cho2014"]
    assert mine["rnn_updates"] == 7 and mine["seed"] == 1 and mine["threads"] == 1
    assert cho2014_params(ROOT, "smoke")["rnn_updates"] == 20  # outside a run, the profile's value


def test_command_line_overrides_of_the_baseline_reach_the_chapters_that_show_it(monkeypatch):
    from rnnlib.experiments.baseline import baseline_params

    monkeypatch.delenv(OVERRIDES_ENV, raising=False)
    overrides = ["baseline.stack_size=7", "rnnsearch.seed=9"]
    with overrides_in_environment(overrides):
        mine = baseline_params(ROOT, "smoke")
    _, resolved = resolve_all(ROOT, "smoke", overrides)
    assert mine == resolved["baseline"] and mine["stack_size"] == 7
    assert baseline_params(ROOT, "smoke")["stack_size"] != 7  # outside a run, the profile's value


@pytest.mark.slow  # runs a chapter in a process of its own
def test_rnnlib_run_hands_its_overrides_to_the_chapters_kernel(tmp_path):
    book = make_minibook(tmp_path / "book")
    chapter = book / "chapters" / "demo.md"
    chapter.write_text(
        chapter.read_text()
        + "\n```{code-cell} python\nfrom rnnlib.book.params import run_overrides\n"
        "print('overrides:', run_overrides())\n```\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("RNNLIB_")}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "rnnlib.cli",
            "run",
            "chapters/demo.md",
            "--profile",
            "smoke",
            "-p",
            "demo.n=4",
            "--no-progress",
        ],
        cwd=book,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    nb = json.loads((book / "_build" / "src" / "chapters" / "demo.ipynb").read_text())
    printed = "".join("".join(o.get("text", "")) for c in nb["cells"] for o in c.get("outputs", []))
    assert "overrides: ['demo.n=4']" in printed


def test_rnnsearch_diagram_carries_the_papers_symbols():
    fig, ax = plt.subplots()
    rnnsearch_diagram(ax)
    labels = {t.get_text() for t in ax.texts}
    plt.close(fig)
    for symbol in (
        r"$x_{1}$",
        r"$x_{T}$",
        r"$\overrightarrow{h}_{1}$",
        r"$\overleftarrow{h}_{T}$",
        r"$\alpha_{t,1}$",
        r"$\alpha_{t,T}$",
        r"$s_{t-1}$",
        r"$s_t$",
        r"$y_{t-1}$",
        r"$y_t$",
        r"$+$",
    ):
        assert symbol in labels, symbol
