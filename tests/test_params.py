"""Parameters are validated before any work starts, with messages naming what is wrong."""

from pathlib import Path

import pytest

from rnnlib.book.params import (
    ParameterError,
    load_profile,
    parse_override,
    parse_parameters_cell,
    resolve,
)

from minibook import make_minibook

CELL = """profile: str = "cpu"  # profile
steps: int = 300  # [1, 100000] training updates
lr: float = 1.0  # (0, 10] learning rate
arch: str = "rnnsearch"  # {rnnsearch, rnnencdec} model
max_len: int | None = None  # [1, ] length filter
bf16: bool = False  # autocast
"""


def test_cell_is_parsed_with_types_ranges_and_choices():
    specs = parse_parameters_cell(CELL)
    assert list(specs) == ["profile", "steps", "lr", "arch", "max_len", "bf16"]
    assert specs["steps"].accepts() == "an int in [1, 100000]"
    assert specs["lr"].accepts() == "a float in (0, 10]"
    assert specs["arch"].accepts() == "one of 'rnnsearch', 'rnnencdec'"
    assert specs["max_len"].accepts() == "an int in [1, inf) or None"
    assert specs["lr"].check(2, "x") == 2.0 and isinstance(specs["lr"].check(2, "x"), float)


@pytest.mark.parametrize(
    "name,value,fragment",
    [
        ("steps", 0, "out of range; it accepts an int in [1, 100000]"),
        ("steps", 2.5, "wrong type float; it accepts an int in [1, 100000]"),
        ("steps", True, "wrong type bool"),
        ("lr", 0.0, "out of range; it accepts a float in (0, 10]"),
        ("arch", "lstm", "not accepted; it accepts one of 'rnnsearch', 'rnnencdec'"),
        ("bf16", "yes", "wrong type str; it accepts a bool"),
        ("steps", None, "None is not accepted"),
    ],
)
def test_bad_values_are_refused_naming_the_parameter(name, value, fragment):
    spec = parse_parameters_cell(CELL)[name]
    with pytest.raises(ParameterError) as e:
        spec.check(value, "command-line override")
    assert f"parameter '{name}'" in str(e.value) and fragment in str(e.value)


def test_a_default_outside_its_own_range_is_a_chapter_error():
    with pytest.raises(ParameterError, match="parameter 'steps' = 0"):
        parse_parameters_cell("steps: int = 0  # [1, 10] updates\n")


def test_cell_lines_must_be_annotated_assignments():
    with pytest.raises(ParameterError, match="line 1"):
        parse_parameters_cell("steps = 3\n")


def test_overrides_parse_python_literals():
    assert parse_override("beam_size=5") == (None, "beam_size", 5)
    assert parse_override("copy_task.lr=0.5") == ("copy_task", "lr", 0.5)
    assert parse_override("arch=rnnencdec") == (None, "arch", "rnnencdec")
    assert parse_override("max_len=null") == (None, "max_len", None)
    assert parse_override("max_len=None") == (
        None,
        "max_len",
        None,
    )  # the spelling rnnlib params shows
    with pytest.raises(ParameterError, match="name=value"):
        parse_override("beam_size")
    # what YAML 1.1 read wrong: 1e-3 as a string, no/off as booleans
    assert parse_override("lr=1e-3") == (None, "lr", 0.001)
    assert isinstance(parse_override("lr=1e-3")[2], float)
    assert parse_override("tokenizer=no") == (None, "tokenizer", "no")
    assert parse_override("mode=off") == (None, "mode", "off")
    assert parse_override("bf16=true") == (None, "bf16", True)
    assert parse_override("bf16=False") == (None, "bf16", False)
    assert parse_override("dropout_runs_long=0.1,0.3") == (None, "dropout_runs_long", "0.1,0.3")
    assert parse_override("recipe_runs=0.1:0.5") == (None, "recipe_runs", "0.1:0.5")
    assert parse_override("name='a b'") == (None, "name", "a b")
    assert parse_override("corpus_dir=/data/wmt14") == (None, "corpus_dir", "/data/wmt14")
    assert parse_override("text=") == (None, "text", "")
    assert parse_override("min_len=none") == (None, "min_len", "none")  # a choice, not None


def test_train_set_reads_values_as_python_literals():
    from rnnlib.train import _set_dotted

    config: dict = {"train": {"lr": 0.5}}
    _set_dotted(config, "train.lr=1e-3")
    _set_dotted(config, "model.arch=no")
    assert config == {"train": {"lr": 0.001}, "model": {"arch": "no"}}


def test_profile_then_override_order_and_unknown_names(tmp_path):
    root = make_minibook(tmp_path / "book")
    chapters = {"demo": root / "chapters" / "demo.md"}
    profile = load_profile(root, "smoke")
    params = resolve(chapters, profile, "smoke", [])["demo"]
    assert params == {"profile": "smoke", "seed": 3, "n": 5, "fail": False, "slow": 0.0}
    assert resolve(chapters, profile, "smoke", ["n=7", "demo.seed=9"])["demo"]["n"] == 7
    with pytest.raises(ParameterError, match="override 'beam_size': unknown parameter"):
        resolve(chapters, profile, "smoke", ["beam_size=5"])
    with pytest.raises(ParameterError, match="unknown chapter 'nope'"):
        resolve(chapters, profile, "smoke", ["nope.n=5"])
    with pytest.raises(ParameterError, match=r"parameter 'n' = 500 \(command-line override"):
        resolve(chapters, profile, "smoke", ["n=500"])
    (root / "profiles" / "bad.yml").write_text("chapters:\n  demo: {n: 1, typo: 2}\n")
    with pytest.raises(ParameterError, match="unknown parameter 'typo'"):
        resolve(chapters, load_profile(root, "bad"), "bad", [])
    with pytest.raises(ParameterError, match="unknown profile 'gpu'; the profiles are bad, smoke"):
        load_profile(root, "gpu")


def test_a_profile_extends_another_and_its_values_win(tmp_path):
    root = make_minibook(tmp_path / "book")
    chapters = {"demo": root / "chapters" / "demo.md"}
    more = "extends: smoke\ndefaults:\nchapters:\n  demo: {n: 7}\n"  # an empty defaults section
    (root / "profiles" / "more.yml").write_text(more)
    profile = load_profile(root, "more")
    params = resolve(chapters, profile, "more", [])["demo"]
    # n from the extending profile, seed from the base's, the rest the chapter's defaults
    assert params == {"profile": "more", "seed": 3, "n": 7, "fail": False, "slow": 0.0}
    assert "extends" in profile["path"] and profile["extends"] == "smoke"
    (root / "profiles" / "a.yml").write_text("extends: b\n")
    (root / "profiles" / "b.yml").write_text("extends: a\n")
    with pytest.raises(ParameterError, match="extends 'a', which extends it back"):
        load_profile(root, "a")
    (root / "profiles" / "c.yml").write_text("extends: nope\n")
    with pytest.raises(ParameterError, match="unknown profile 'nope'"):
        load_profile(root, "c")


# -- shared blocks (# include:) ------------------------------------------------------------------


def test_include_expands_the_shared_block_in_place_with_changed_defaults():
    from rnnlib.book.corpus_params import specs as corpus_specs

    block = corpus_specs()
    specs = parse_parameters_cell(
        'profile: str = "cpu"  # p\n# include: corpus src_vocab=30000 max_len=50\n'
        "beam: int = 5  # [1, 10] beam\n"
    )
    assert list(specs) == ["profile", *block, "beam"]
    assert specs["src_vocab"].default == 30000 and specs["max_len"].default == 50
    assert (
        specs["tgt_vocab"] == block["tgt_vocab"]
        and specs["corpus"].accepts() == block["corpus"].accepts()
    )
    assert {n for n, s in specs.items() if s.block == "corpus"} == set(block)
    assert specs["beam"].block is None


@pytest.mark.parametrize(
    "cell,fragment",
    [
        (
            "# include: corpora\n",
            "'# include: corpora' names no shared block; the blocks are corpus",
        ),
        ("# include: corpus vocab=3\n", "takes name=value defaults of its own parameters"),
        (
            "# include: corpus src_vocab=10\n",
            "parameter 'src_vocab' = 10 (default in parameters cell, line 1): out of range",
        ),
        (
            '# include: corpus\ncorpus: str = "x"  # again\n',
            "parameter 'corpus' is declared twice (line 1 and line 2",
        ),
        (
            "n: int = 1  # n\nn: int = 2  # n\n",
            "parameter 'n' is declared twice (line 1 and line 2",
        ),
    ],
)
def test_bad_include_lines_and_double_declarations_are_named(cell, fragment):
    with pytest.raises(ParameterError) as e:
        parse_parameters_cell(cell)
    assert fragment in str(e.value)


def test_included_parameters_take_profiles_and_overrides_and_unknown_names_still_fail(tmp_path):
    root = make_minibook(tmp_path / "book")
    demo = root / "chapters" / "demo.md"
    demo.write_text(
        demo.read_text().replace("fail: bool = False", "# include: corpus\nfail: bool = False")
    )
    (root / "profiles" / "smoke.yml").write_text("defaults: {seed: 3, tokenizer: whitespace}\n")
    chapters = {"demo": demo}
    params = resolve(chapters, load_profile(root, "smoke"), "smoke", ["corpus_layout=tsv"])["demo"]
    assert (params["tokenizer"], params["corpus_layout"], params["corpus"]) == (
        "whitespace",
        "tsv",
        "bible",
    )
    with pytest.raises(ParameterError, match="override 'corpus_laoyut': unknown parameter"):
        resolve(chapters, load_profile(root, "smoke"), "smoke", ["corpus_laoyut=tsv"])
    with pytest.raises(ParameterError, match=r"parameter 'corpus' = 'wmt' \(command-line override"):
        resolve(chapters, load_profile(root, "smoke"), "smoke", ["corpus=wmt"])


def test_the_book_profiles_resolve_and_paper_keeps_the_papers_sizes():
    """Every shipped profile validates against every chapter; `paper` sets paper A's sizes too."""
    from rnnlib.book.params import is_notebook

    root = Path(__file__).resolve().parents[1]
    chapters = {p.stem: p for p in (root / "chapters").glob("*.md") if is_notebook(p)}
    resolved = {
        name: resolve(chapters, load_profile(root, name), name, [])
        for name in ("smoke", "cpu", "paper", "spread")
    }
    # spread is cpu with the rebuild spread's replicates and each seed's schedule-start runs
    for stem, params in resolved["spread"].items():
        differ = {k for k in params if params[k] != resolved["cpu"][stem][k]}
        assert differ <= {
            "profile",
            "alignment_replicates",
            "seed_runs",
            "start_runs",
            "seed_short",
        }, stem
    assert resolved["spread"]["rnnsearch"]["seed_runs"] == 3
    assert (
        resolved["spread"]["rnnsearch"]["start_runs"]
        and not resolved["cpu"]["rnnsearch"]["start_runs"]
    )
    assert resolved["spread"]["cho2014"]["alignment_replicates"] == 3
    paper = resolved["paper"]
    assert paper["cho2014"]["model_preset"] == "paper-cho2014"
    assert paper["cho2014"]["rnn_sample"] is None  # every unique pair (A Sec. 4.1.1)
    assert (
        paper["cho2014"]["cslm_emb"],
        paper["cho2014"]["cslm_hidden1"],
        paper["cho2014"]["cslm_hidden2"],
    ) == (512, 1536, 1024)
    assert (paper["representations"]["n_phrases"], paper["representations"]["n_phrases_small"]) == (
        5000,
        1000,
    )
    assert (paper["rnnsearch"]["hidden"], paper["rnnsearch"]["emb"]) == (1000, 620)


def test_rnnlib_params_takes_a_chapters_name_and_names_a_missing_one(capsys, monkeypatch):
    from rnnlib.cli import main

    monkeypatch.chdir(Path(__file__).resolve().parent.parent)  # the book's root
    assert main(["params", "copy_task"]) == 0
    assert "accepts" in capsys.readouterr().out
    assert main(["params", "no_such_chapter"]) == 2
    assert "no_such_chapter does not exist" in capsys.readouterr().err


def test_typed_parameters_are_one_frozen_object_whose_fields_match_the_cell():
    import dataclasses

    from rnnlib.book.params import ParameterError, typed

    @dataclasses.dataclass(frozen=True)
    class P:
        hidden: int
        lr: float

    got = typed(P, {"hidden": 4, "lr": 0.5}, "demo")
    assert (got.hidden, got.lr) == (4, 0.5)
    with pytest.raises(dataclasses.FrozenInstanceError):
        got.hidden = 5
    with pytest.raises(ParameterError, match="parameters without a field: seed; fields without a"):
        typed(P, {"hidden": 4, "lr": 0.5, "seed": 1}, "demo")
    with pytest.raises(ParameterError, match="fields without a parameter: lr"):
        typed(P, {"hidden": 4}, "demo")

    @dataclasses.dataclass
    class Loose:
        hidden: int

    with pytest.raises(TypeError, match="frozen"):
        typed(Loose, {"hidden": 4}, "demo")
