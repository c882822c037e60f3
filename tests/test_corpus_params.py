"""The corpus parameters shared by every chapter: errors that name the parameter, and the data
chapter run end to end on the user's own files (``-p corpus=files``)."""

import dataclasses
import os
import random
import re
import subprocess
import sys
from dataclasses import fields
from pathlib import Path

import nbformat
import pytest

from rnnlib.book.params import ParameterError, chapter_parameters_source, chapter_specs
from rnnlib.book.execute import book_chapters
from rnnlib.cache import ArtifactCache
from rnnlib.corpus.dataset import CorpusConfig, prepare_corpus
from rnnlib.book.corpus_params import corpus_config, specs

ROOT = Path(__file__).resolve().parents[1]
DATA_CHAPTER = ROOT / "chapters" / "data.md"

# -- corpus_config ---------------------------------------------------------------------------------


def test_default_is_the_bible_and_chapter_values_map_to_the_config():
    cfg = corpus_config({"profile": "smoke", "steps": 3, "en_version": "k", "src_vocab": 30000})
    assert (cfg.corpus, cfg.en_version, cfg.src_vocab, cfg.corpus_dir) == (
        "bible",
        "k",
        30000,
        None,
    )
    assert corpus_config({"max_len": 50}, max_len=30, drop_leaks=False).max_len == 30


def test_files_without_corpus_dir_names_the_parameter():
    with pytest.raises(
        ParameterError, match=r"parameter 'corpus_dir' is required when corpus='files'"
    ):
        corpus_config({"corpus": "files"})


def test_missing_folder_names_the_parameter_and_the_resolved_path(tmp_path):
    with pytest.raises(
        ParameterError, match=r"parameter 'corpus_dir' = 'wmt14': .*wmt14 does not exist"
    ):
        corpus_config({"corpus": "files", "corpus_dir": "wmt14"}, root=tmp_path)
    (tmp_path / "a-file").write_text("x\n")
    with pytest.raises(ParameterError, match=r"'corpus_dir' = 'a-file': .* is not a folder"):
        corpus_config({"corpus": "files", "corpus_dir": "a-file"}, root=tmp_path)


def test_relative_corpus_dir_is_relative_to_the_root(tmp_path):
    (tmp_path / "data" / "wmt14").mkdir(parents=True)
    cfg = corpus_config(
        {"corpus": "files", "corpus_dir": "data/wmt14", "corpus_layout": "tsv"}, root=tmp_path
    )
    assert Path(cfg.corpus_dir) == (tmp_path / "data" / "wmt14").resolve()
    assert cfg.corpus_layout == "tsv"


def test_corpus_dir_with_the_bible_is_an_error_not_a_silent_bible_run(tmp_path):
    with pytest.raises(
        ParameterError, match=r"'corpus_dir' = .* is set but parameter 'corpus' = 'bible'"
    ):
        corpus_config({"corpus_dir": str(tmp_path)})


@pytest.mark.parametrize(
    "params, name",
    [
        ({"corpus": "wmt"}, "corpus"),
        ({"tokenizer": "spacy"}, "tokenizer"),
        ({"src_vocab": 10}, "src_vocab"),
        ({"fr_version": "2"}, "fr_version"),
    ],
)
def test_bad_values_name_the_parameter(params, name):
    with pytest.raises(ParameterError, match=rf"parameter '{name}'"):
        corpus_config(params)


def test_unknown_override_is_an_error():
    with pytest.raises(ParameterError, match=r"unknown override 'vocab'"):
        corpus_config({}, vocab=100)


def test_every_corpus_chapter_includes_the_block_declared_once():
    block = specs()
    assert set(block) <= {f.name for f in fields(CorpusConfig)}  # parameter names are field names
    users = [
        p for p in book_chapters(ROOT).values() if "corpus_config(" in p.read_text(encoding="utf-8")
    ]
    assert DATA_CHAPTER in users and len(users) >= 2
    for path in users:
        source = chapter_parameters_source(path)
        assert "# include: corpus" in source, f"{path.name} does not include the corpus block"
        declared = chapter_specs(path)
        for (
            name,
            spec,
        ) in block.items():  # included, not pasted (a chapter may change a default only)
            assert declared[name].block == "corpus", f"{path.name} declares {name!r} itself"
            assert dataclasses.replace(declared[name], default=spec.default) == spec


@pytest.mark.slow  # starts the command line in a process of its own: about 3 s
def test_rnnlib_params_lists_the_included_parameters_with_the_chapter_defaults():
    proc = subprocess.run(
        [sys.executable, "-m", "rnnlib.cli", "params", "chapters/baseline.md"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    lines = {line.split()[0]: line for line in proc.stdout.splitlines() if line.strip()}
    assert set(specs()) <= set(lines)
    assert "default 30000" in lines["src_vocab"] and "[# include: corpus]" in lines["corpus_dir"]


# -- the chapter on the user's files ---------------------------------------------------------------

WORDS = "the a house cat dog small big sleeps runs sees red old man woman child river".split()


def write_files_corpus(folder: Path) -> None:
    """train/dev/test .en/.fr with 200/30/30 lines; the French side is a word-for-word code.

    One empty training line (skipped and counted) and a word only the test split uses (an UNK).
    """
    rng = random.Random(0)
    for split, n in (("train", 200), ("dev", 30), ("test", 30)):
        en = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 45))) for _ in range(n)]
        if split == "train":
            en[7] = ""
        if split == "test":
            en[0] += " Zanzibar"
        fr = [" ".join(w[::-1] + "e" for w in line.split()) for line in en]
        (folder / f"{split}.en").write_text("\n".join(en) + "\n", encoding="utf-8")
        (folder / f"{split}.fr").write_text("\n".join(fr) + "\n", encoding="utf-8")


def run_chapter(tmp_path: Path, *params: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RNNLIB_")}
    cmd = [
        sys.executable,
        "-m",
        "rnnlib.cli",
        "run",
        "chapters/data.md",
        "--profile",
        "smoke",
        "--no-progress",
        "--out",
        str(tmp_path / "out"),
        "--cache",
        str(tmp_path / "cache"),
    ]
    for p in params:
        cmd += ["-p", p]
    return subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)


def glue_names_used(markdown: str) -> set[str]:
    roles = re.findall(r"\{glue(?::\w+)?\}`([^`]+)`", markdown)
    directives = re.findall(r"^```\{glue(?::\w+)?\}\s+(\S+)", markdown, flags=re.M)
    return set(roles) | set(directives)


def glued(nb) -> dict[str, dict]:
    """Glue name -> its data (mime type without papermill's prefix -> value)."""
    out = {}
    for cell in nb.cells:
        for o in cell.get("outputs", []):
            name = o.get("metadata", {}).get("scrapbook", {}).get("name")
            if name:
                out[name] = {
                    k.split("application/papermill.record/")[-1]: v
                    for k, v in o.get("data", {}).items()
                }
    return out


@pytest.mark.slow  # runs a chapter in a process of its own: about 10 s
def test_data_chapter_runs_on_user_files(tmp_path):
    corpus_dir = tmp_path / "my corpus"
    corpus_dir.mkdir()
    write_files_corpus(corpus_dir)
    proc = run_chapter(tmp_path, "corpus=files", f"corpus_dir={corpus_dir}", "tokenizer=whitespace")
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    nb = nbformat.read(tmp_path / "out" / "src" / "chapters" / "data.ipynb", as_version=4)
    errors = [o for c in nb.cells for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors, f"{errors[0]['ename']}: {errors[0]['evalue']}"

    values = glued(nb)
    # every name the Markdown shows is glued, so the book (warnings as errors) still builds
    missing = glue_names_used(DATA_CHAPTER.read_text(encoding="utf-8")) - set(values)
    assert not missing, f"not glued with corpus=files: {sorted(missing)}"
    number = {k: v["text/plain"] for k, v in values.items()}
    assert (
        number["corpus-train-pairs"],
        number["corpus-dev-pairs"],
        number["corpus-test-pairs"],
    ) == ("199", "30", "30")
    assert (
        "rabiznaZe" in values["corpus-unk-top"]["text/markdown"]
    )  # French side of Zanzibar, test only
    # the Bible-only tables say so instead of showing Bible numbers
    for name in ("corpus-cleaning", "corpus-human-bleu"):
        assert "not applicable to user files" in values[name]["text/html"]
    assert "train.en + train.fr" in values["corpus-split-books"]["text/html"]
    assert "test.en:" in values["corpus-examples"]["text/html"]  # examples cite file:line
    assert "empty line skipped" in values["corpus-filters"]["text/html"]
    assert "Segond" not in values["corpus-examples"]["text/html"]


@pytest.mark.slow  # runs a chapter in a process of its own: about 3 s
def test_data_chapter_without_corpus_dir_fails_naming_the_parameter(tmp_path):
    proc = run_chapter(tmp_path, "corpus=files")
    assert proc.returncode == 2  # refused before the chapter starts
    assert "chapter data: parameter 'corpus_dir' is required when corpus='files'" in proc.stderr
    assert not list(tmp_path.rglob("data.ipynb"))


@pytest.mark.slow  # runs a chapter in a process of its own: about 10 s
def test_data_chapter_runs_on_german_english_files_with_their_own_tokenizer_rules(tmp_path):
    """Any language pair: files named by src_lang/tgt_lang, the prose naming the languages, and
    the Moses rules of each side's language (the French rules would keep "l'" whole)."""
    corpus_dir = tmp_path / "de-en"
    corpus_dir.mkdir()
    rng = random.Random(1)
    for split, n in (("train", 120), ("dev", 20), ("test", 20)):
        de = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 20))) for _ in range(n)]
        de[0] += " l'homme"
        en = [" ".join(w[::-1] for w in line.split()) for line in de]
        (corpus_dir / f"{split}.de").write_text("\n".join(de) + "\n", encoding="utf-8")
        (corpus_dir / f"{split}.en").write_text("\n".join(en) + "\n", encoding="utf-8")
    proc = run_chapter(
        tmp_path, "corpus=files", f"corpus_dir={corpus_dir}", "src_lang=de", "tgt_lang=en"
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    nb = nbformat.read(tmp_path / "out" / "src" / "chapters" / "data.ipynb", as_version=4)
    values = glued(nb)
    assert values["corpus-intro"]["text/markdown"] == "your own files, German → English"
    assert "train.de + train.en" in values["corpus-split-books"]["text/html"]
    cfg = CorpusConfig(corpus="files", corpus_dir=str(corpus_dir), src_lang="de", tgt_lang="en")
    corpus = prepare_corpus(cfg, ArtifactCache(tmp_path / "cache"))
    first = corpus.text("train", "src")[0].split()
    assert first[-3:] == ["l", "'", "homme"]  # German rules; French ones give "l'" "homme"
