"""What a chapter notebook calls: its parameters (shared blocks included), configs built from
them by name, and "how to cite" blocks that list what each figure's artifacts depend on."""

import dataclasses

import matplotlib
import pytest

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from rnnlib.book import chapter as chapter_module  # noqa: E402
from rnnlib.book.chapter import Chapter  # noqa: E402
from rnnlib.book.params import ParameterError  # noqa: E402
from rnnlib.config import UnknownNameError  # noqa: E402
from rnnlib.smt.system import SMTConfig  # noqa: E402
from rnnlib.train import TrainConfig  # noqa: E402

from minibook import make_minibook  # noqa: E402

CELL = """profile: str = "cpu"  # profile
seed: int = 1  # [0, 1000] seed
# include: corpus src_vocab=30000
optimizer: str = "adam"  # {adam, adadelta} optimizer
lr: float = 0.5  # (0, 10] learning rate
max_updates: int = 7  # [1, 1000] updates
beam_size: int = 5  # [1, 20] beam width
stack_size: int = 12  # [1, 100] SMT stack
max_phrase_len: int = 4  # [1, 10] longest phrase
"""
OWN = {
    "profile": "smoke",
    "seed": 3,
    "optimizer": "adam",
    "lr": 0.5,
    "max_updates": 7,
    "beam_size": 5,
    "stack_size": 12,
    "max_phrase_len": 4,
}


@pytest.fixture
def book(tmp_path, monkeypatch):
    root = make_minibook(tmp_path / "book")
    demo = root / "chapters" / "demo.md"
    text = demo.read_text()
    start, end = (
        text.index(":tags: [parameters]\n") + len(":tags: [parameters]\n"),
        text.index("```\n\n```{code-cell} python\n:tags: [remove-input]\nfrom rnnlib"),
    )
    demo.write_text(text[:start] + CELL + text[end:])
    monkeypatch.setenv("RNNLIB_BOOK_ROOT", str(root))
    monkeypatch.setenv("RNNLIB_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("RNNLIB_FIGURES", str(tmp_path / "figures"))
    return root


def test_a_notebook_run_by_hand_gets_the_defaults_of_its_included_block(book):
    namespace = dict(OWN)
    ch = Chapter.start("demo", namespace, show=False)
    assert (
        ch.params["corpus"] == "bible" and ch.params["src_vocab"] == 30000
    )  # the chapter's own default
    assert namespace["tgt_vocab"] == 15000  # the notebook's code can use the name
    injected = Chapter.start(
        "demo", {**OWN, "corpus_layout": "tsv"}, show=False
    )  # as papermill would
    assert injected.params["corpus_layout"] == "tsv"
    with pytest.raises(ParameterError, match="parameter 'lr' is not defined in the notebook"):
        Chapter.start("demo", {k: v for k, v in OWN.items() if k != "lr"}, show=False)


def test_configs_are_built_from_the_parameters_of_the_same_names(book):
    ch = Chapter.start("demo", dict(OWN), show=False)
    train = ch.config(TrainConfig, checkpoint_every=3)
    assert (train.optimizer, train.lr, train.max_updates, train.seed, train.checkpoint_every) == (
        "adam",
        0.5,
        7,
        3,
        3,
    )
    smt = ch.config(SMTConfig)  # the decoder's fields come from the same flat parameters
    assert (smt.seed, smt.decoder.stack_size, smt.decoder.max_phrase_len) == (3, 12, 4)
    with pytest.raises(
        UnknownNameError, match="chapter demo: TrainConfig: unknown TrainConfig field 'steps'"
    ):
        ch.config(TrainConfig, steps=3)


def test_cite_block_lists_the_parameters_of_the_artifacts_config(book, monkeypatch):
    shown = []
    monkeypatch.setattr(chapter_module, "_display_markdown", shown.append)
    monkeypatch.setattr(chapter_module, "_glue", lambda name, value: None)
    ch = Chapter.start("demo", dict(OWN), show=False)
    train = ch.config(TrainConfig)
    art = ch.artifact(
        "demo/model",
        {"data": {"seed": ch.params["seed"]}, "train": dataclasses.asdict(train)},
        lambda out, work: None,
    )
    # keys at any depth of the artifact's config, in the chapter's order; extra for what the
    # figure uses
    assert ch.cited_params([art]) == ["seed", "optimizer", "lr", "max_updates"]
    assert ch.cited_params([art], extra=["beam_size"]) == [
        "seed",
        "optimizer",
        "lr",
        "max_updates",
        "beam_size",
    ]
    assert ch.cited_params([ch.config(SMTConfig)]) == ["seed", "stack_size", "max_phrase_len"]
    assert ch.cited_params([], extra=[]) == []
    assert ch.cited_params() == [k for k in ch.params if k != "profile"]  # nothing said: everything

    class Prepared:  # like a prepared corpus: it carries the artifact it was read from
        artifact = ch.artifact(
            "demo/corpus",
            {"corpus": "bible", "tokenizer": "moses", "nested": [{"src_vocab": 1}]},
            lambda out, work: None,
        )

    assert ch.cited_params([Prepared()]) == ["corpus", "tokenizer", "src_vocab"]
    with pytest.raises(ParameterError, match=r"extra=\['beam'\] names no parameter of the chapter"):
        ch.cited_params([art], extra=["beam"])

    fig, _ = plt.subplots()
    ch.figure("demo-curve", fig, artifacts=[art], extra=["beam_size"])
    cite = shown[-1]
    assert "parameters seed=3, optimizer='adam', lr=0.5, max_updates=7, beam_size=5." in cite
    assert "stack_size" not in cite and "corpus" not in cite


def test_the_parameters_table_is_collapsed_with_the_changed_parameters_first():
    text = chapter_module.parameters_dropdown(
        {"profile": "smoke", "seed": 1, "hidden": 8, "lr": 0.5},
        {"profile": "cpu", "seed": 1, "hidden": 1000, "lr": 0.5},
    )
    assert text.startswith(
        ":::{admonition} Parameters: 4, of which 2 differ from the chapter's defaults "
        "(profile, hidden)\n:class: dropdown\n"
    )
    rows = [line for line in text.split("\n") if line.startswith("| `")]
    assert rows == [
        "| `profile` | `'smoke'` | `'cpu'` |",
        "| `hidden` | `8` | `1000` |",
        "| `seed` | `1` | same |",
        "| `lr` | `0.5` | same |",
    ]
    assert text.endswith(":::\n")
