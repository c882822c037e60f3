"""The code in the cache's bookkeeping (rnnlib.code_deps, rnnlib.cache): every rnnlib module that
runs while an artifact is computed is in its kind's hashed set; an edited model module makes a
trained model stale (recomputed, or kept and named with --keep-stale), an edited plotting module
does not; artifacts made before the code was recorded are adopted, not recomputed; a checkpoint
resumes only under the code that wrote it."""

from __future__ import annotations

import ast
import json
import sys
import threading
from pathlib import Path

import numpy as np
import pytest
import torch

from rnnlib import code_deps
from rnnlib.book.execute import ChapterResult, stale_lines
from rnnlib.cache import ArtifactCache, StaleArtifactWarning, content_checksum
from rnnlib.experiments import copy_task
from rnnlib.experiments.rnnsearch import controls, figure_3, table_2, translations
from rnnlib.experiments.rnnsearch import setting as rns_setting
from rnnlib.experiments.rnnsearch.training import Runs, train_model
from rnnlib.ragged import ParallelArrays, Ragged
from rnnlib.train import CheckpointMismatch, TrainConfig, train

PACKAGE = code_deps.PACKAGE
ROOT = PACKAGE.parent


@pytest.fixture(autouse=True)
def one_thread(monkeypatch):
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # tiny matrices; the machine is shared
    monkeypatch.delenv(code_deps.KEEP_STALE_ENV, raising=False)
    yield
    torch.set_num_threads(threads)


# -- tracing the modules that run -----------------------------------------------------------------
def traced(cache: ArtifactCache) -> dict[str, set[str]]:
    """Trace every artifact ``cache`` computes from now on: ``{kind: the rnnlib/... files whose
    Python code ran inside its make}`` (every function call and module body, in the make's
    thread and in threads it starts; an artifact built inside another's make counts for its own
    kind only)."""
    ran: dict[str, set[str]] = {}
    stack: list[set[str]] = []
    build = cache.build

    def tracer(frame, event, arg):
        if stack:
            stack[-1].add(frame.f_code.co_filename)
        return None  # no line events: calls only

    def traced_build(kind, config, make, data=None):
        def traced_make(out, work):
            stack.append(set())
            old = sys.gettrace()
            threading.settrace(tracer)
            sys.settrace(tracer)
            try:
                return make(out, work)
            finally:
                sys.settrace(old)
                threading.settrace(None)
                ran.setdefault(kind, set()).update(_package_files(stack.pop()))
                if stack:
                    sys.settrace(tracer)

        return build(kind, config, traced_make, data=data)

    cache.build = traced_build
    return ran


def _package_files(names: set[str]) -> set[str]:
    out = set()
    for name in names:
        path = Path(name).resolve()
        if path.is_relative_to(PACKAGE):
            out.add("rnnlib/" + path.relative_to(PACKAGE).as_posix())
    return out


def assert_covered(kind: str, files: set[str]) -> None:
    """Every file that ran (the cache's bookkeeping aside) is in ``kind``'s hashed set."""
    hashed = set(code_deps.expand(code_deps.sources_of(kind)))
    bookkeeping = {f"rnnlib/{b}" for b in code_deps.BOOKKEEPING}
    missing = sorted(files - hashed - bookkeeping)
    assert not missing, (
        f"{kind}: these rnnlib modules ran while it was computed but are not in its hashed set "
        f"(add them to rnnlib/code_deps.py SOURCES): {missing}"
    )


def tiny_copy_task():
    p = copy_task.Params(
        n_train=64, n_test=6, max_updates=4, hidden=8, emb=4, max_len=4, device="cpu"
    )
    return copy_task.CopyTask.from_params(p)


@pytest.mark.slow  # 7 s of CPU: over the fast layer's 5 s
def test_the_copy_tasks_model_and_decoding_run_only_hashed_modules(tmp_path):
    ex = tiny_copy_task()
    cache = ArtifactCache(tmp_path)
    ran = traced(cache)
    model = copy_task.trained_model(cache, ex)
    decoded = copy_task.decoded_test(cache, ex, model)
    assert model.extra["updates"] == 4 and not decoded.from_cache
    assert {"rnnlib/train.py", "rnnlib/gru.py"} <= ran["copy_task/model"]  # the trace sees them
    assert "rnnlib/search.py" in ran["copy_task/decoded"]
    for kind, files in ran.items():
        assert_covered(kind, files)


TRAIN = [
    ("the house is small .", "la maison est petite ."),
    ("the cat sleeps .", "le chat dort ."),
    ("a small cat .", "un petit chat ."),
    ("the small house sleeps .", "la petite maison dort ."),
] * 6
DEV = [("the house .", "la maison ."), ("a cat .", "un chat ."), ("the cat .", "le chat .")]
TEST = [("the small house .", "la petite maison ."), ("the cat .", "le chat .")]


def corpus_files(folder: Path) -> Path:
    folder.mkdir()
    for split, pairs in {"train": TRAIN, "dev": DEV, "test": TEST}.items():
        for k, lang in enumerate(("en", "fr")):
            text = "".join(p[k] + "\n" for p in pairs)
            (folder / f"{split}.{lang}").write_text(text, encoding="utf-8")
    return folder


def test_the_rnnsearch_chapters_artifacts_run_only_hashed_modules(tmp_path):
    """The rnnsearch chapter's own functions on a toy corpus: the ``corpus/prepared`` artifact,
    an ``rnnsearch/run`` (:func:`train_model`: a few updates with its dev-BLEU curve), then its
    dev and test NLL, the untrained network's dev NLL, its translations (All and No UNK) and the
    alignments of Fig. 3."""
    P = rns_setting.Params(
        corpus="files",
        corpus_dir=str(corpus_files(tmp_path / "corpus")),
        tokenizer="whitespace",
        hidden=8,
        emb=4,
        maxout=4,
        align=8,
        batch_size=4,
        updates_search=4,
        eval_every=2,
        dev_bleu_sentences=2,
        device="cpu",
        threads=1,
        decode_batch=2,
        beam_size=2,
        align_sentence=0,
    )
    cache = ArtifactCache(tmp_path / "cache")
    ran = traced(cache)
    ex = rns_setting.RNNsearchExperiment.start(P, cache, tmp_path)
    run = train_model(ex, "RNNsearch-30")
    runs = Runs({"RNNsearch-50": run}, {}, {"RNNsearch-50": "rnnsearch"})
    table_2.dev_nll_of(ex, run, "rnnsearch")
    table_2.test_nll_of(ex, run, "rnnsearch")
    controls.untrained_dev_nll(ex)
    for subset in ("all", "no_unk"):
        translations.decode(ex, run, runs.model(ex, "RNNsearch-50"), subset)
    figure_3.alignment_panels(ex, runs, np.arange(ex.n_test))
    assert run.extra["updates"] == 4
    assert set(ran) == {
        "corpus/prepared",
        "rnnsearch/run",
        "rnnsearch/dev_nll",
        "rnnsearch/test_nll",
        "rnnsearch/dev_nll_init",
        "rnnsearch/translations",
        "rnnsearch/alignments",
    }
    assert "rnnlib/corpus/tokenize.py" in ran["corpus/prepared"]
    assert {"rnnlib/train.py", "rnnlib/translate.py"} <= ran["rnnsearch/run"]  # dev BLEU ran
    assert "rnnlib/smt/rnn_scorer.py" in ran["rnnsearch/dev_nll"]
    for kind, files in ran.items():
        assert_covered(kind, files)
    assert set(run.meta["code"]) == set(code_deps.expand(code_deps.sources_of("rnnsearch/run")))


def test_the_phrase_based_chain_runs_only_hashed_modules(tmp_path, monkeypatch):
    """Alignment, phrase table, LM, MERT tuning and evaluation of a toy phrase-based system
    (the plain Python search, so that its code is traced too)."""
    from rnnlib.smt import compiled
    from rnnlib.smt.compiled import ENV
    from rnnlib.smt.decoder import DecoderConfig
    from rnnlib.smt.system import SMTConfig, SMTData, build_search_check, run

    monkeypatch.setenv(ENV, "python")
    # the choice is made once per process: a fresh one here, the process's own restored after
    monkeypatch.setattr(compiled, "_CHOSEN", {})
    rng = np.random.default_rng(0)
    train_, dev, test = toy_pairs(150, rng), toy_pairs(12, rng), toy_pairs(8, rng)
    data = SMTData(
        train_src=train_[0],
        train_tgt=train_[1],
        dev_src=dev[0],
        dev_tgt=dev[1],
        test_src=test[0],
        dev_refs=[[" ".join(t) for t in dev[1]]],
        test_refs=[[" ".join(t) for t in test[1]]],
    )
    cfg = SMTConfig(
        lm_order=3,
        tune_nbest=10,
        mert_iterations=2,
        mert_restarts=1,
        decoder=DecoderConfig(stack_size=10, workers=1),
        eflomal_rel_iterations=0.5,
    )
    cache = ArtifactCache(tmp_path)
    ran = traced(cache)
    result = run(data, cfg, cache, detokenize=" ".join, log=lambda msg: None)
    build_search_check(data, cfg, cache, result, sentences=2, reference={"stack_size": 12})
    kinds = {"smt/alignment", "smt/phrase_table", "smt/lm", "smt/tuned", "smt/eval"}
    assert kinds | {"smt/search_check"} <= set(ran)
    assert "rnnlib/smt/stack_search.py" in ran["smt/tuned"]
    for kind, files in ran.items():
        assert_covered(kind, files)


def test_paper_as_scorer_its_feature_and_the_cslm_run_only_hashed_modules(tmp_path):
    """Paper A's chapter functions on toy phrase pairs: the RNN scorer (``cho2014/scorer``: a
    few updates), the pairs it scores (``cho2014/rnn_feature``), the CSLM and its n-gram rival
    on the same shortlist (``cho2014/cslm``, ``cho2014/kn_shortlist``)."""
    from collections import Counter

    from rnnlib.corpus.vocab import Vocab
    from rnnlib.experiments.cho2014 import cslm, scorer
    from rnnlib.presets import preset
    from rnnlib.smt.cslm import CSLMConfig

    src, tgt = toy_pairs(40, np.random.default_rng(0))
    sv = Vocab.build(Counter(w for s in src for w in s), 50)
    tv = Vocab.build(Counter(w for s in tgt for w in s), 50)

    def encoded():
        return ParallelArrays(
            Ragged.from_lists([sv.encode(s) for s in src]),
            Ragged.from_lists([tv.encode(s) for s in tgt]),
        )

    mc = preset("smoke-rnnencdec", src_vocab=len(sv), tgt_vocab=len(tv))
    tc = TrainConfig(
        optimizer="adam", lr=0.01, batch_size=8, max_updates=3, eval_every=3, device="cpu"
    )
    cache = ArtifactCache(tmp_path)
    ran = traced(cache)
    run = scorer.scorer_run(cache, {"table": "toy"}, mc, tc, encoded, encoded, data="toy")
    pairs = [(tuple(a), tuple(b)) for a, b in zip(src[:10], tgt[:10])]
    model = scorer.load_scorer(run, mc)
    scorer.scored_pairs(cache, run, model, pairs, sv, tv, data="toy")
    config = CSLMConfig(vocab=len(tv), order=3, emb=4, hidden=(8,))
    cslm.cslm_run(
        cache, config, tgt, tgt[:5], tv, updates=3, batch_size=8, lr=0.01, eval_every=3,
        dev_share=0.2, seed=1, data="toy",
    )  # fmt: skip
    cslm.shortlist_kn(cache, tgt, tgt[:5], tv, 3, data="toy")
    kinds = {"cho2014/scorer", "cho2014/rnn_feature", "cho2014/cslm", "cho2014/kn_shortlist"}
    assert set(ran) == kinds and "rnnlib/train.py" in ran["cho2014/scorer"]
    for kind, files in ran.items():
        assert_covered(kind, files)


def toy_pairs(n: int, rng) -> tuple[list[list[str]], list[list[str]]]:
    """A word-for-word toy pair of languages where "ADJ NOUN" becomes "NOUN ADJ"."""
    src, tgt = [], []
    for _ in range(n):
        noun, adj, verb = f"n{rng.integers(12)}", f"a{rng.integers(6)}", f"v{rng.integers(6)}"
        if rng.random() < 0.5:
            src.append(["the", adj, noun, verb])
            tgt.append(["le", noun.upper(), adj.upper(), verb.upper()])
        else:
            src.append(["the", noun, verb])
            tgt.append(["le", noun.upper(), verb.upper()])
    return src, tgt


# -- the map itself -------------------------------------------------------------------------------
BUILDERS = {"build", "artifact", "train_run", "decode_run", "tsne_artifact"}


def kinds_in_package() -> dict[str, set[str]]:
    """Every kind string the package passes to the cache's ``build`` or a helper that calls it,
    with the files that do."""
    kinds: dict[str, set[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        where = "rnnlib/" + path.relative_to(PACKAGE).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call):
                continue
            name = getattr(node.func, "attr", getattr(node.func, "id", None))
            if name not in BUILDERS:
                continue
            for arg in node.args[:3]:
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    if "/" in arg.value and " " not in arg.value:
                        kinds.setdefault(arg.value, set()).add(where)
    return kinds


def test_every_kind_the_package_builds_is_mapped_to_files_that_exist():
    kinds = kinds_in_package()
    assert {"rnnsearch/run", "smt/tuned", "corpus/prepared", "cho2014/nbest"} <= set(kinds)
    assert len(kinds) >= 29
    unmapped = sorted(k for k in kinds if code_deps.sources_of(k) is None)
    assert not unmapped, f"kinds without an entry in rnnlib/code_deps.py SOURCES: {unmapped}"
    for entry in code_deps.SOURCES:
        files = code_deps.expand(code_deps.SOURCES[entry])  # raises on a file that is gone
        assert not [f for f in files if f.startswith("rnnlib/book/")], entry  # no plotting
    # the module that builds a kind (and defines its make) is in its set
    outside = sorted(
        (kind, where)
        for kind, wheres in kinds.items()
        for where in wheres
        if where not in code_deps.expand(code_deps.sources_of(kind))
    )
    assert not outside, f"kinds built by a module outside their hashed set: {outside}"


def test_a_kind_takes_its_own_entry_else_its_longest_prefix():
    assert code_deps.sources_of("smt/tuned") == code_deps.SOURCES["smt/"]
    assert code_deps.sources_of("rnnsearch/run") == code_deps.SOURCES["rnnsearch/run"]
    assert code_deps.sources_of("demo/x") is None
    # a file edited or gone from the set is a change; one added to the set since is not
    assert code_deps.changed({"a": "1", "b": "2", "d": "5"}, {"a": "1", "b": "3", "c": "4"}) == [
        "b",
        "d",
    ]


def test_a_files_hash_is_its_code_not_its_docstrings_comments_or_line_breaks():
    code = code_deps.code_text
    base = 'def f(x):\n    """Doc."""\n    return g(x, 1)  # note\n'
    same = (
        '# header\ndef f(x):\n    """Other words,\n    two lines."""\n\n'
        "    return g(\n        x, 1\n    )\n"
    )
    assert code(base) == code(same)
    assert code(base) != code(base.replace("1)", "2)"))  # an edited number
    assert code(base) != code(base.replace("    return", "    y = 0\n    return"))
    assert code('x = "not a docstring"\n') != code('x = "other"\n')
    assert code("def broken(:\n") == "def broken(:\n"  # what does not parse: as it is


# -- stale, kept, adopted -------------------------------------------------------------------------
def edited(monkeypatch, path: str) -> None:
    """Pretend ``path`` (``rnnlib/...``) was edited since: its hash is another."""
    real = code_deps.file_hash

    def fake(p: str) -> str:
        return "0123456789abcdef" if p == path else real(p)

    monkeypatch.setattr(code_deps, "file_hash", fake)


def counting_make(calls: list):
    def make(out, work):
        calls.append(1)
        (out / "model.pt").write_text(f"weights {len(calls)}")
        return {"n": len(calls)}

    return make


def test_editing_a_model_module_makes_a_trained_model_stale_and_it_is_recomputed(
    tmp_path, monkeypatch
):
    cache, calls = ArtifactCache(tmp_path), []
    first = cache.build("rnnsearch/run", {"n": 1}, counting_make(calls))
    assert first.meta["code"]["rnnlib/attention.py"] == code_deps.file_hash("rnnlib/attention.py")
    edited(monkeypatch, "rnnlib/attention.py")
    cache.events.clear()
    with pytest.warns(StaleArtifactWarning, match="rnnlib/attention.py.*recomputed"):
        again = cache.build("rnnsearch/run", {"n": 1}, counting_make(calls))
    assert len(calls) == 2 and not again.from_cache and again.key == first.key  # same key
    assert again.meta["code"]["rnnlib/attention.py"] == "0123456789abcdef"
    (event,) = cache.events
    assert event["stale"] == {"changed": ["rnnlib/attention.py"], "kept": False}
    (moved,) = (tmp_path / ".quarantine").iterdir()
    note = json.loads((moved / "quarantine.json").read_text())
    assert note["stale_code"] == ["rnnlib/attention.py"]
    # the summary names it and the file that changed
    lines = stale_lines([ChapterResult("rnnsearch", 1.0, artifacts=[event])])
    assert f"rnnsearch/run/{first.key} (rnnsearch): recomputed" in lines[1]
    assert "rnnlib/attention.py" in lines[1]
    # now the code of now is recorded: no more recomputing
    assert cache.build("rnnsearch/run", {"n": 1}, counting_make(calls)).from_cache


def test_what_was_built_from_a_stale_artifact_is_recomputed_too(tmp_path, monkeypatch):
    cache, calls = ArtifactCache(tmp_path), []
    run = cache.build("rnnsearch/run", {"n": 1}, counting_make(calls))
    used = cache.build("rnnsearch/translations", {"model": run.key}, counting_make(calls))
    edited(monkeypatch, "rnnlib/train.py")  # not a file of translations
    with pytest.warns(StaleArtifactWarning):
        cache.build("rnnsearch/run", {"n": 1}, counting_make(calls))
    assert cache.get("rnnsearch/translations", {"model": run.key}) is None
    again = cache.build("rnnsearch/translations", {"model": run.key}, counting_make(calls))
    assert not again.from_cache and again.key == used.key and len(calls) == 4
    assert cache.events[-1]["stale"] == {"built_from": f"rnnsearch/run/{run.key}"}


def test_what_took_a_stale_artifacts_content_checksum_as_data_stays(tmp_path, monkeypatch):
    """Its key changes by itself if the recomputed content differs, and is right if not."""
    cache, calls = ArtifactCache(tmp_path), []
    corpus = cache.build("corpus/prepared", {"n": 1}, counting_make(calls))
    model = cache.build(
        "rnnsearch/run", {"n": 1}, counting_make(calls), data=content_checksum(corpus.meta)
    )
    edited(monkeypatch, "rnnlib/corpus/clean.py")
    with pytest.warns(StaleArtifactWarning):
        cache.build("corpus/prepared", {"n": 1}, counting_make(calls))
    assert cache.get("rnnsearch/run", {"n": 1}, data=model.meta["data_checksum"]) is not None


def test_editing_a_plotting_module_changes_no_artifact(tmp_path, monkeypatch):
    cache, calls = ArtifactCache(tmp_path), []
    cache.build("rnnsearch/run", {"n": 1}, counting_make(calls))
    cache.build("copy_task/model", {"n": 1}, counting_make(calls))
    for plotting in ("rnnlib/book/plotting.py", "rnnlib/book/style.py"):
        edited(monkeypatch, plotting)
        assert cache.build("rnnsearch/run", {"n": 1}, counting_make(calls)).from_cache
        assert cache.build("copy_task/model", {"n": 1}, counting_make(calls)).from_cache
    assert len(calls) == 2 and not any("stale" in e for e in cache.events)


def test_keep_stale_keeps_the_artifact_names_it_and_records_the_code_of_now(tmp_path, monkeypatch):
    cache, calls = ArtifactCache(tmp_path), []
    first = cache.build("smt/tuned", {"n": 1}, counting_make(calls))
    old = first.meta["code"]["rnnlib/smt/decoder.py"]
    edited(monkeypatch, "rnnlib/smt/decoder.py")
    monkeypatch.setenv(code_deps.KEEP_STALE_ENV, "1")
    with pytest.warns(StaleArtifactWarning, match="kept"):
        kept = cache.build("smt/tuned", {"n": 1}, counting_make(calls))
    assert kept.from_cache and len(calls) == 1
    assert cache.events[-1]["stale"] == {"changed": ["rnnlib/smt/decoder.py"], "kept": True}
    meta = json.loads((kept.path / "meta.json").read_text())
    assert meta["code"]["rnnlib/smt/decoder.py"] == "0123456789abcdef"
    assert meta["code_kept"]["changed"] == {"rnnlib/smt/decoder.py": old}
    lines = stale_lines([ChapterResult("cho2014", 1.0, artifacts=cache.events)])
    assert "kept (--keep-stale)" in lines[1]
    monkeypatch.delenv(code_deps.KEEP_STALE_ENV)
    assert cache.build("smt/tuned", {"n": 1}, counting_make(calls)).from_cache  # now current


def test_a_stale_artifact_looked_up_only_is_not_used_and_stays(tmp_path, monkeypatch):
    from rnnlib.cache import NotCached

    cache, calls = ArtifactCache(tmp_path), []
    art = cache.build("rnnsearch/run", {"n": 1}, counting_make(calls))
    edited(monkeypatch, "rnnlib/gru.py")
    with cache.lookup_only(), pytest.raises(NotCached):
        cache.build("rnnsearch/run", {"n": 1}, counting_make(calls))
    assert art.path.is_dir() and len(calls) == 1
    assert cache.events[-1]["missing"] and cache.events[-1]["stale"]["kept"] is False


@pytest.mark.parametrize("made", ["before records", "hashed another way"])
def test_an_artifact_made_before_the_code_was_recorded_is_adopted_not_recomputed(tmp_path, made):
    cache, calls = ArtifactCache(tmp_path), []
    art = cache.build("rnnsearch/run", {"n": 1}, counting_make(calls))
    sidecar = art.path / "meta.json"
    meta = json.loads(sidecar.read_text())
    if made == "before records":
        del meta["code"], meta["code_scheme"]  # as older code wrote it
    else:
        meta["code_scheme"] = "bytes-sha256"
        meta["code"] = {f: "0" * 16 for f in meta["code"]}
    sidecar.write_text(json.dumps(meta))
    again = cache.build("rnnsearch/run", {"n": 1}, counting_make(calls))
    assert again.from_cache and len(calls) == 1
    assert code_deps.recorded(json.loads(sidecar.read_text())) == code_deps.code_hashes(
        "rnnsearch/run"
    )
    assert cache.events[-1]["adopted"] is True
    lines = stale_lines([ChapterResult("rnnsearch", 1.0, artifacts=cache.events)])
    assert lines == [lines[-1]] and lines[-1].startswith("1 artifact made before")


def test_a_file_added_to_a_kinds_set_is_adopted_one_taken_out_is_no_longer_a_dependency(
    tmp_path, monkeypatch
):
    cache, calls = ArtifactCache(tmp_path), []
    cache.build("copy_task/decoded", {"n": 1}, counting_make(calls))
    extra = (*code_deps.SOURCES["copy_task/decoded"], "stats.py")
    monkeypatch.setitem(code_deps.SOURCES, "copy_task/decoded", extra)
    again = cache.build("copy_task/decoded", {"n": 1}, counting_make(calls))
    assert again.from_cache and cache.events[-1]["adopted"] is True
    assert "rnnlib/stats.py" in json.loads((again.path / "meta.json").read_text())["code"]
    # narrowed: the two files taken out of the set no longer count, even once edited
    monkeypatch.setitem(code_deps.SOURCES, "copy_task/decoded", extra[:-2])
    edited(monkeypatch, "rnnlib/stats.py")
    narrowed = cache.build("copy_task/decoded", {"n": 1}, counting_make(calls))
    assert narrowed.from_cache and len(calls) == 1
    # a recorded file that is gone from the package (moved or deleted) makes it stale
    meta_path = narrowed.path / "meta.json"
    meta = json.loads(meta_path.read_text())
    meta["code"]["rnnlib/experiments/moved_away.py"] = "0123456789abcdef"
    meta_path.write_text(json.dumps(meta))
    with pytest.warns(StaleArtifactWarning, match="moved_away.py"):
        cache.build("copy_task/decoded", {"n": 1}, counting_make(calls))
    assert len(calls) == 2


def test_narrowing_the_phrase_based_kinds_keeps_their_networks_when_the_tuning_code_changes(
    tmp_path, monkeypatch
):
    """Paper A's networks and its alignment, phrase table and LM do not hash the decoder or
    MERT: an edit of ``smt/tune.py`` recomputes the tuned systems only."""
    cache, calls = ArtifactCache(tmp_path), []
    kinds = ["smt/alignment", "smt/phrase_table", "smt/lm", "cho2014/scorer", "cho2014/cslm"]
    for kind in [*kinds, "smt/tuned"]:
        cache.build(kind, {"n": 1}, counting_make(calls))
    edited(monkeypatch, "rnnlib/smt/tune.py")
    for kind in kinds:
        assert cache.build(kind, {"n": 1}, counting_make(calls)).from_cache, kind
    with pytest.warns(StaleArtifactWarning, match="tune.py"):
        cache.build("smt/tuned", {"n": 1}, counting_make(calls))
    assert len(calls) == len(kinds) + 2


def test_cache_ls_says_which_entries_are_stale(tmp_path, monkeypatch, capsys):
    from rnnlib.cli import main as cli_main

    cache, calls = ArtifactCache(tmp_path), []
    cache.build("rnnsearch/run", {"n": 1}, counting_make(calls))
    cache.build("smt/lm", {"n": 1}, counting_make(calls))
    edited(monkeypatch, "rnnlib/gru.py")
    assert cli_main(["cache", "ls", "--cache", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "stale: gru.py" in out and "current" in out and "1 entries computed by other" in out
    assert len(calls) == 2  # listing changes nothing


def test_a_kind_without_an_entry_records_no_code(tmp_path):
    art = ArtifactCache(tmp_path).build("demo/x", {"n": 1}, counting_make([]))
    assert "code" not in art.meta


# -- work folders and checkpoints -----------------------------------------------------------------
def test_unfinished_state_written_by_other_code_is_set_aside_and_the_work_starts_over(
    tmp_path, monkeypatch, capsys
):
    cache = ArtifactCache(tmp_path)
    seen = []

    def interrupted(out, work):
        (work / "checkpoint.pt").write_text("state of update 10")
        raise KeyboardInterrupt

    def resume(out, work):
        seen.append((work / "checkpoint.pt").exists())
        (out / "model.pt").write_text("w")

    with pytest.raises(KeyboardInterrupt):
        cache.build("rnnsearch/run", {"n": 1}, interrupted)
    work = cache.work_dir("rnnsearch/run", {"n": 1})
    note = json.loads((work / "code.json").read_text())
    assert code_deps.recorded(note) == code_deps.code_hashes("rnnsearch/run")
    edited(monkeypatch, "rnnlib/decoders.py")
    cache.build("rnnsearch/run", {"n": 1}, resume)
    assert seen == [False]  # started over
    assert "written by other code (changed: rnnlib/decoders.py): starting over" in (
        capsys.readouterr().err
    )
    (aside,) = (tmp_path / ".quarantine").iterdir()
    assert aside.name.startswith("work~rnnsearch~run.") and (aside / "checkpoint.pt").exists()


def test_unfinished_state_resumes_under_its_own_code_or_with_keep_stale(tmp_path, monkeypatch):
    cache = ArtifactCache(tmp_path)
    seen = []

    def interrupted(out, work):
        (work / "checkpoint.pt").write_text("state")
        raise KeyboardInterrupt

    def resume(out, work):
        seen.append((work / "checkpoint.pt").exists())
        (out / "model.pt").write_text("w")

    for n, edit in ((1, False), (2, True)):
        with pytest.raises(KeyboardInterrupt):
            cache.build("rnnsearch/run", {"n": n}, interrupted)
        if edit:
            edited(monkeypatch, "rnnlib/decoders.py")
            monkeypatch.setenv(code_deps.KEEP_STALE_ENV, "1")
        cache.build("rnnsearch/run", {"n": n}, resume)
    assert seen == [True, True]


def test_a_failed_make_leaves_no_work_folder_holding_only_the_code(tmp_path):
    cache = ArtifactCache(tmp_path)

    def boom(out, work):
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        cache.build("rnnsearch/run", {"n": 1}, boom)
    assert list(tmp_path.rglob("*")) == []


def _pairs(n=24, seed=0, vocab=12):
    rng = np.random.default_rng(seed)
    srcs = [rng.integers(4, vocab, size=rng.integers(2, 6)) for _ in range(n)]
    return ParallelArrays(Ragged.from_lists(srcs), Ragged.from_lists([s[::-1] for s in srcs]))


def test_the_code_a_checkpoint_records_is_in_every_kind_that_trains_with_rnnlib_train():
    """So that a work folder the cache lets resume never holds a checkpoint train refuses."""
    recorded = set(code_deps.expand(code_deps.CHECKPOINT_SOURCES))
    for kind in ("copy_task/model", "rnnsearch/run", "cho2014/scorer"):
        assert recorded <= set(code_deps.expand(code_deps.sources_of(kind))), kind


def test_a_checkpoint_from_other_code_is_not_resumed(tmp_path, monkeypatch):
    from rnnlib.presets import build_model, preset

    cfg = TrainConfig(
        optimizer="adam", lr=0.01, batch_size=4, max_updates=3, checkpoint_every=1, device="cpu"
    )
    mc = preset("smoke-rnnsearch", src_vocab=12, tgt_vocab=12)
    train(build_model(mc), _pairs(), None, cfg, tmp_path, progress=False)
    ckpt = torch.load(tmp_path / "checkpoint.pt", weights_only=True)
    assert code_deps.recorded(ckpt) == code_deps.checkpoint_code()
    longer = cfg.override(max_updates=5)
    edited(monkeypatch, "rnnlib/attention.py")
    with pytest.raises(CheckpointMismatch, match="other code .*rnnlib/attention.py"):
        train(build_model(mc), _pairs(), None, longer, tmp_path, progress=False)
    monkeypatch.setenv(code_deps.KEEP_STALE_ENV, "1")
    result = train(build_model(mc), _pairs(), None, longer, tmp_path, progress=False)
    assert result.resumed_from == 3 and result.updates == 5


def test_a_chapters_parameters_are_not_code_but_the_functions_beside_them_are():
    base = (
        "from dataclasses import dataclass\n\n\n@dataclass(frozen=True)\nclass Params:\n"
        '    """The chapter\'s parameters."""\n\n    seed: int = 1\n    hidden: int = 64\n\n\n'
        "def model_config(P):\n    return {'hidden': P.hidden}\n"
    )
    more = base.replace(
        "    hidden: int = 64\n", "    hidden: int = 64\n    src_lang: str = 'en'\n"
    )
    assert code_deps.code_text(more) == code_deps.code_text(base)  # a parameter more: no change
    edited = base.replace("{'hidden': P.hidden}", "{'hidden': 2 * P.hidden}")
    assert code_deps.code_text(edited) != code_deps.code_text(base)
    # a class of that name that does more than declare fields is code
    method = base.replace(
        "    hidden: int = 64\n", "    hidden: int = 64\n\n    def x(self):\n        return 1\n"
    )
    assert code_deps.code_text(method.replace("return 1", "return 2")) != code_deps.code_text(
        method
    )
