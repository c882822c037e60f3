"""``rnnlib translate`` and ``rnnlib export`` (rnnlib.model_folder, rnnlib.translate_text,
rnnlib.experiments.trained_models and the two command modules) on a tiny English-French corpus
whose five models of B Table 1 are trained in seconds through the chapter's own code path
(:func:`rnnlib.experiments.rnnsearch.training.train_runs`), with a results record that cites
them as the chapter's Table 1 does."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from dataclasses import asdict, replace
from pathlib import Path

import pandas as pd
import pytest
import torch

from rnnlib.book.results import Recorder, artifact_refs
from rnnlib.cache import ArtifactCache
from rnnlib.cli import main as cli_main
from rnnlib.experiments.rnnsearch import training, translations
from rnnlib.experiments.rnnsearch.setting import NAMES, Params, RNNsearchExperiment
from rnnlib.experiments.trained_models import ModelNotFound, normalize, resolve
from rnnlib.experiments.training_runs import read_lines
from rnnlib.model_folder import ModelFolderError, read_folder, write_folder
from rnnlib.translate_text import Translator, parse_min_len

ROOT = Path(__file__).resolve().parents[1]

NOUNS = [
    ("man", "homme"),
    ("dog", "chien"),
    ("child", "enfant"),
    ("king", "roi"),
    ("bird", "oiseau"),
]
VERBS = [("sees", "voit"), ("loves", "aime"), ("follows", "suit"), ("calls", "appelle")]
PLACES = [("in the house", "dans la maison"), ("near the river", "près de la rivière")]
TYPED = "The bird calls the king near the river."  # in no split (checked)


def _french(noun: str) -> str:
    """``le chien``, ``l'homme``: the French article elides before a vowel (a Moses rule)."""
    return f"l'{noun}" if noun[0] in "aeiouh" else f"le {noun}"


def _pairs() -> list[tuple[str, str]]:
    out = []
    for i, (s, s_fr) in enumerate(NOUNS):
        for j, (v, v_fr) in enumerate(VERBS):
            for k, (o, o_fr) in enumerate(NOUNS):
                if s == o:
                    continue
                place, place_fr = PLACES[(i + j + k) % 2] if (i + k) % 3 == 0 else ("", "")
                en = f"The {s} {v} the {o} {place}".strip() + "."
                fr = f"{_french(s_fr)} {v_fr} {_french(o_fr)} {place_fr}".strip() + "."
                out.append((en, fr[0].upper() + fr[1:]))
    return out


@pytest.fixture(scope="module")
def book(tmp_path_factory):
    """The five models trained on the tiny corpus (cache ``cache``), a results record citing them
    under ``out/results`` as the chapter does, the experiment ``ex`` and its ``runs``."""
    base = tmp_path_factory.mktemp("translate")
    data = base / "data"
    data.mkdir()
    pairs = _pairs()
    assert TYPED not in {en for en, _ in pairs}
    splits = {"test": pairs[:10], "dev": pairs[10:20], "train": pairs[20:]}
    for split, rows in splits.items():
        (data / f"{split}.en").write_text("".join(en + "\n" for en, _ in rows), encoding="utf-8")
        (data / f"{split}.fr").write_text("".join(fr + "\n" for _, fr in rows), encoding="utf-8")
    P = Params(
        corpus="files",
        corpus_dir=str(data),
        src_vocab=100,
        tgt_vocab=100,
        len_short=7,
        len_long=12,
        hidden=8,
        emb=4,
        maxout=4,
        align=8,
        batch_size=8,
        updates_search=12,
        updates_encdec=12,
        updates_star=18,
        eval_every=6,
        dev_bleu_sentences=3,
        adadelta_updates=0,
        threads=1,
        device="cpu",
        beam_size=3,
        decode_batch=4,
        baseline=False,
    )
    cache = ArtifactCache(base / "cache")
    ex = RNNsearchExperiment.start(P, cache, base)
    runs = training.train_runs(ex)
    out = base / "out"
    record = Recorder(out / "results" / "rnnsearch.json", "rnnsearch", "cpu", "0" * 8, "test")
    record.add("params", "params", asdict(P), "rnnsearch-params-cpu-00000000")
    table = pd.DataFrame({"BLEU": [0.0] * len(NAMES)}, index=NAMES)
    cited = artifact_refs([ex.corpus, *runs.runs.values()])
    record.add("rns-table1", "table", table, "rnnsearch-rns-table1-cpu-00000000", artifacts=cited)
    torch.set_num_threads(1)
    return {"base": base, "cache": cache.root, "out": out, "ex": ex, "runs": runs}


def _cli(argv: list[str], capsys, stdin: str | None = None, monkeypatch=None) -> tuple:
    if stdin is not None:
        monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
    code = cli_main(argv)
    got = capsys.readouterr()
    return code, got.out, got.err


def _where(book) -> list[str]:
    return ["--cache", str(book["cache"]), "--out", str(book["out"])]


def test_each_book_name_means_the_run_the_results_cite(book):
    runs = book["runs"].runs
    spellings = {
        "RNNencdec-30": "rnnenc-30",
        "RNNsearch-30": "RNNSEARCH-30",
        "RNNencdec-50": "rnnencdec-50",
        "RNNsearch-50": "rnnsearch-50",
        "RNNsearch-50*": "RNNsearch-50⋆",
    }
    for name, typed in spellings.items():
        tm = resolve(typed, book["cache"], book["out"])
        assert tm.about["key"] == runs[name].key, name
        assert tm.about["name"] == name.replace("*", "⋆")
    assert resolve("rnnsearch-50star", book["cache"], book["out"]).about["key"] == (
        runs["RNNsearch-50*"].key
    )
    # the chapter's search and the corpus's tokenizer come with the model
    tm = resolve("rnnsearch-50", book["cache"], book["out"])
    assert (tm.search.beam_size, tm.search.min_len, tm.search.batch_size) == (3, "groundhog", 4)
    assert (tm.tokenizer.src_lang, tm.tokenizer.tgt_lang, tm.tokenizer.kind) == (
        "en",
        "fr",
        "moses",
    )
    assert tm.src_vocab.itos == book["ex"].corpus.src_vocab.itos
    assert normalize("RNNenc-50") == normalize("rnnencdec-50")


def test_cache_ls_names_the_builds_models_as_the_book_does(book, capsys):
    code, out, _ = _cli(["cache", "ls", "--kind", "rnnsearch/run", *_where(book)], capsys)
    assert code == 0
    for name, run in book["runs"].runs.items():
        line = next(line for line in out.splitlines() if run.key in line)
        assert line.split(" rnnsearch/run ")[0].strip() == f"{name} (the build's)", line
    # without the build's results, a run is still named from its own config, unmarked (and
    # without the chapter's len_short = 7, its length filter is written as it is)
    code, out, _ = _cli(
        ["cache", "ls", "--cache", str(book["cache"]), "--out", str(book["base"] / "none")], capsys
    )
    run = book["runs"].runs["RNNencdec-30"]
    line = next(line for line in out.splitlines() if run.key in line)
    assert line.split(" rnnsearch/run ")[0].strip() == "RNNencdec-7"
    corpus = next(line for line in out.splitlines() if "corpus/prepared" in line)
    assert corpus.split()[0] == "-"  # not a model


def test_an_ambiguous_name_lists_the_candidates_and_fails(book, capsys, monkeypatch):
    with pytest.raises(ModelNotFound) as err:
        resolve("rnnsearch", book["cache"], book["out"])
    assert len(err.value.candidates) == 3
    assert "ambiguous" in err.value.message
    code, out, err_text = _cli(
        ["translate", "--model", "rnnsearch", *_where(book)], capsys, "a\n", monkeypatch
    )
    lines = err_text.splitlines()
    assert code == 1 and out == ""
    assert lines[0].startswith("rnnlib translate: model 'rnnsearch' is ambiguous")
    assert [line.split()[0] for line in lines[1:]] == [
        "RNNsearch-30",
        "RNNsearch-50",
        "RNNsearch-50*",
    ]
    # a name that means nothing lists the book's models
    code, _, err_text = _cli(["export", "rnnsearch-70", "--to", "x", *_where(book)], capsys)
    assert code == 1 and "no such model" in err_text and len(err_text.splitlines()) == 6


def test_without_results_a_run_is_named_by_its_key(book, tmp_path):
    key = book["runs"].runs["RNNsearch-50"].key
    tm = resolve(key[:8], book["cache"], tmp_path)  # no results there
    assert tm.about["key"] == key
    with pytest.raises(ModelNotFound) as err:
        resolve("rnnsearch-50", book["cache"], tmp_path)
    assert "no build results" in err.value.message and err.value.candidates


def test_a_damaged_cache_entry_is_named_and_left_where_it_is(book, tmp_path):
    import shutil

    cache = tmp_path / "cache"
    shutil.copytree(book["cache"], cache)
    run = book["runs"].runs["RNNsearch-50"]
    weights = cache / run.kind / run.key / "model.pt"
    weights.write_bytes(weights.read_bytes()[:100])
    with pytest.raises(ModelNotFound, match="model.pt: size changed"):
        resolve("rnnsearch-50", cache, book["out"])
    assert weights.stat().st_size == 100  # read only: nothing quarantined
    assert resolve("rnnencdec-30", cache, book["out"]).about["key"] == (
        book["runs"].runs["RNNencdec-30"].key
    )


def test_the_exported_folder_translates_as_the_cache_does(book, tmp_path):
    tm = resolve("rnnsearch-50", book["cache"], book["out"])
    folder = write_folder(tm, tmp_path / "model")
    assert sorted(p.name for p in folder.iterdir()) == [
        "config.json",
        "meta.json",
        "model.safetensors",
        "src.vocab",
        "tgt.vocab",
        "tokenizer.json",
    ]
    back = read_folder(folder)
    assert back.config == tm.config and back.tokenizer == tm.tokenizer
    assert back.search == tm.search and back.sidecar == tm.sidecar
    assert all(torch.equal(back.state[k], v) for k, v in tm.state.items())
    lines = book["ex"].corpus.detok("test", "src") + [TYPED]
    a = Translator(tm).translate(lines, attention=True)
    b = Translator(back).translate(lines, attention=True)
    assert [t.text for t in a] == [t.text for t in b]
    assert all((x.attention == y.attention).all() for x, y in zip(a, b))


def test_raw_text_translates_as_the_chapter_decodes_its_test_set(book):
    """The test sources as raw text give the chapter's own translations line for line
    (tokenizer, vocabulary, search and detokenizer are the chapter's)."""
    ex, runs = book["ex"], book["runs"]
    for name in ("RNNsearch-50", "RNNencdec-30"):
        art = translations.decode(ex, runs.runs[name], runs.model(ex, name), "all")
        chapter = read_lines(art.file("text.txt"))
        tm = resolve(name, book["cache"], book["out"])
        ours = Translator(tm).translate(ex.corpus.detok("test", "src")[: ex.n_test])
        assert [t.text for t in ours] == chapter, name


def test_the_detokenizer_is_the_chapters(book):
    tm = resolve("rnnsearch-50", book["cache"], book["out"])
    words = ["L'", "homme", "voit", "le", "chien", "près", "de", "la", "rivière", "."]
    text = Translator(tm).detokenize(words)
    assert (
        text == book["ex"].corpus.detokenize(words) == "L'homme voit le chien près de la rivière."
    )


def test_a_typed_sentence_comes_out_in_the_target_vocabulary(book):
    tm = resolve("rnnsearch-50*", book["cache"], book["out"])
    (t,) = Translator(tm).translate([TYPED])
    assert t.source == ["The", "bird", "calls", "the", "king", "near", "the", "river", "."]
    assert t.output and t.text.strip()
    assert set(t.output) <= set(tm.tgt_vocab.itos[4:]) | {"[UNK]"}
    # a word outside the shortlist is read as [UNK] and reported
    (u,) = Translator(tm).translate(["The zebra sees the dog."])
    assert u.unknown == ["zebra"] and u.source[1] == "[UNK]"


@pytest.mark.slow  # runs the command line in processes of its own
def test_the_cli_exports_and_translates_identically_from_folder_and_cache(
    book, tmp_path, capsys, monkeypatch
):
    folder = tmp_path / "rnnsearch-50"
    code, out, _ = _cli(["export", "rnnsearch-50", "--to", str(folder), *_where(book)], capsys)
    assert code == 0 and str(folder) in out
    text = "\n".join(book["ex"].corpus.detok("test", "src")[:4] + ["", TYPED]) + "\n"
    src = tmp_path / "in.en"
    src.write_text(text, encoding="utf-8")
    code, from_cache, err = _cli(
        ["translate", "--model", "rnnsearch-50", "--input", str(src), *_where(book)], capsys
    )
    assert code == 0 and "6 lines with RNNsearch-50" in err
    code, from_folder, _ = _cli(
        ["translate", "--model", str(folder), "--quiet"], capsys, text, monkeypatch
    )
    assert code == 0 and from_folder == from_cache
    assert from_cache.split("\n")[4] == "" and len(from_cache.splitlines()) == 6
    # another process, elsewhere, with no cache: the folder is all it needs
    env = {k: v for k, v in os.environ.items() if not k.startswith("RNNLIB_")}
    env.update(RNNLIB_CACHE=str(tmp_path / "no-cache"), PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1")
    proc = subprocess.run(
        [sys.executable, "-m", "rnnlib.cli", "translate", "--model", str(folder), "--quiet"],
        input=text,
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == from_cache and not (tmp_path / "no-cache").exists()
    # a beam and minimum length of one's own
    code, out, _ = _cli(
        [
            "translate",
            "--model",
            str(folder),
            "--beam",
            "1",
            "--min-len",
            "none",
            "--input",
            str(src),
        ],
        capsys,
    )
    assert code == 0 and len(out.splitlines()) == 6


def test_alignments_are_drawn_for_rnnsearch_and_refused_for_rnnencdec(
    book, tmp_path, capsys, monkeypatch
):
    argv = ["translate", "--model", "rnnsearch-50", *_where(book), "--alignments", str(tmp_path)]
    code, out, err = _cli(argv, capsys, f"{TYPED}\n\nThe dog sees the man.\n", monkeypatch)
    assert code == 0, err
    assert sorted(p.name for p in tmp_path.glob("*.png")) == ["line-0001.png", "line-0003.png"]
    argv[2] = "rnnencdec-50"
    code, out, err = _cli(argv, capsys, f"{TYPED}\n", monkeypatch)
    assert code == 1 and "--alignments" in err and "has no alignment model" in err


def test_errors_name_the_file_or_option(book, tmp_path, capsys, monkeypatch):
    tm = resolve("rnnsearch-50", book["cache"], book["out"])
    folder = write_folder(tm, tmp_path / "m")
    cases = {
        # a folder that is not a model folder
        (str(tmp_path),): f"{tmp_path / 'config.json'}: missing",
        # a model folder that does not exist
        (str(tmp_path / "nowhere"),): f"{tmp_path / 'nowhere'}: does not exist",
        # empty input
        (str(folder), "--input", os.devnull): "no sentence to translate",
        # a missing input file
        (str(folder), "--input", str(tmp_path / "none.en")): "none.en: no such file",
        (str(folder), "--min-len", "short"): "min_len='short'",
        (str(folder), "--beam", "0"): "--beam 0",
    }
    for argv, message in cases.items():
        code, out, err = _cli(["translate", "--model", *argv], capsys, "\n \n", monkeypatch)
        assert code == 1 and out == "" and message in err, (argv, err)
        assert len(err.splitlines()) == 1
    # a file changed after the export is named
    with open(folder / "tgt.vocab", "a", encoding="utf-8") as f:
        f.write("extra\t1\n")
    with pytest.raises(ModelFolderError, match="tgt.vocab: its sha256 differs"):
        read_folder(folder)
    (folder / "model.safetensors").unlink()
    with pytest.raises(ModelFolderError, match="model.safetensors: missing"):
        read_folder(folder)


def test_export_replaces_only_a_model_folder_and_only_when_asked(book, tmp_path):
    tm = resolve("rnnencdec-30", book["cache"], book["out"])
    write_folder(tm, tmp_path / "m")
    with pytest.raises(ModelFolderError, match="--force replaces it"):
        write_folder(tm, tmp_path / "m")
    write_folder(replace(tm, about={**tm.about, "note": 1}), tmp_path / "m", force=True)
    assert json.loads((tmp_path / "m" / "config.json").read_text())["about"]["note"] == 1
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "notes.txt").write_text("mine")
    with pytest.raises(ModelFolderError, match="holds other files"):
        write_folder(tm, tmp_path / "other", force=True)
    assert (tmp_path / "other" / "notes.txt").read_text() == "mine"
    assert not list(tmp_path.glob(".*.part"))


def test_min_len_reads_as_typed():
    assert parse_min_len("groundhog") == "groundhog"
    assert parse_min_len("None") is None
    assert parse_min_len("4") == 4 and parse_min_len("model") == "model"
    for bad in ("-1", "half"):
        with pytest.raises(ValueError, match="min_len"):
            parse_min_len(bad)


@pytest.mark.slow
def test_translate_reproduces_the_smoke_books_rnnsearch_50_test_bleu(
    smoke_book, session_cache, tmp_path
):
    """After the smoke build, the test set's source file through ``rnnlib translate`` (from the
    cache and from an exported folder, each in a new process) gives the chapter's RNNsearch-50
    translations line for line, and its test BLEU to 0.01."""
    from rnnlib.bleu import corpus_bleu
    from rnnlib.book.results import load

    out, proc = smoke_book
    assert proc.returncode == 0, proc.stderr[-2000:]
    found = load(out / "results")
    glued = found.value("rns-bleu-rnnsearch-50", "rnnsearch")
    tm = resolve("rnnsearch-50", session_cache, out)
    corpus = Path(session_cache) / tm.about["corpus"]
    sources = read_lines(corpus / "test.src.txt")
    refs = read_lines(corpus / "test.tgt.txt")
    max_test = found.entry("params", "rnnsearch")["value"].get("max_test")
    n_test = len(sources) if max_test is None else min(max_test, len(sources))
    chapter = None  # the chapter's own translations of All by RNNsearch-50 (rns-table1 cites them)
    for ref in found.entry("rns-table1", "rnnsearch")["artifacts"]:
        folder = Path(session_cache) / ref["kind"] / ref["key"]
        if ref["kind"] == "rnnsearch/translations":
            config = json.loads((folder / "meta.json").read_text())["config"]
            if config["run"] == tm.about["key"] and not config["search"]["forbid_unk"]:
                chapter = read_lines(folder / "text.txt")
    assert chapter is not None and len(chapter) == n_test
    src = tmp_path / "test.src.txt"
    src.write_text("".join(s + "\n" for s in sources[:n_test]), encoding="utf-8")
    folder = tmp_path / "folder"
    where = ["--cache", str(session_cache), "--out", str(out)]
    assert cli_main(["export", "rnnsearch-50", "--to", str(folder), *where]) == 0
    for model in (["--model", "rnnsearch-50", *where], ["--model", str(folder)]):
        proc = subprocess.run(
            [sys.executable, "-m", "rnnlib.cli", "translate", *model, "--input", str(src)],
            capture_output=True,
            text=True,
            cwd=ROOT,
            timeout=600,
        )
        assert proc.returncode == 0, proc.stderr
        hyps = proc.stdout.split("\n")[:-1]
        assert hyps == chapter
        assert abs(corpus_bleu(hyps, refs[:n_test]).score - glued) <= 0.01
