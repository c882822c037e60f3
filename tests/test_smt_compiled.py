"""The phrase decoder's fast path (rnnlib.smt.compiled): rnnlib.smt.stack_search compiled by Cython
gives exactly the plain module's n-best lists, is built once per source version, and a failed
build falls back to the plain module with a warning that names the reason."""

import collections
import random
import sysconfig
import warnings

import numpy as np
import pytest

from rnnlib.smt import compiled, stack_search
from rnnlib.smt.decoder import Decoder, DecoderConfig, KenLMFeature
from rnnlib.smt.features import EXTRA, FeatureTable
from rnnlib.smt.lm import NgramLM, train_arpa
from test_smt_search import BigramLM


class BatchedBigram(BigramLM):
    """A second LM that asks to be prefetched (the CSLM's path through the search): random bigram
    and end-of-sentence log-probabilities over ``vocab`` (a word outside it, such as a copied
    unknown word, scores -6 after any word); it counts the prefetched requests."""

    batched = True

    def __init__(self, vocab, seed):
        rng = random.Random(seed)
        bi = {(a, b): -rng.uniform(0.1, 3.0) for a in vocab + ["<s>"] for b in vocab}
        uni = collections.defaultdict(lambda: -4.0, {w: -1.5 for w in vocab})
        eos = {w: -rng.uniform(0.0, 2.0) for w in vocab}
        super().__init__(uni, bi, eos=eos, drop=2.0)
        self.name = "lm2"
        self.requests = 0

    def prefetch(self, requests):
        self.requests += len(requests)


@pytest.fixture(scope="module")
def system(tmp_path_factory):
    """A random phrase table over 8 source words (1- to 3-word phrases, up to 4 targets each), a
    trigram KenLM model of random target text, and sentences of 1 to 14 words plus one of 70 (more
    source words than a 64-bit coverage holds)."""
    rng = random.Random(7)
    src_vocab = [f"s{i}" for i in range(8)]
    tgt_vocab = [f"t{i}" for i in range(12)]

    def options(n):
        return [
            (
                tuple(rng.choices(tgt_vocab, k=rng.randint(1, n + 1))),
                np.array([rng.uniform(0.01, 1.0) for _ in range(4)]),
            )
            for _ in range(rng.randint(1, 4))
        ]

    table = {(w,): options(1) for w in src_vocab}
    for _ in range(20):
        n = rng.choice((2, 3))
        table.setdefault(tuple(rng.choices(src_vocab, k=n)), []).extend(options(n))
    folder = tmp_path_factory.mktemp("compiled")
    text = [rng.choices(tgt_vocab, k=rng.randint(2, 9)) for _ in range(200)]
    train_arpa(text, folder / "lm.arpa", 3)
    sentences = [rng.choices(src_vocab + ["oov"], k=rng.randint(1, 14)) for _ in range(25)]
    sentences.append(rng.choices(src_vocab, k=70))
    return table, NgramLM(folder / "lm.arpa").model, sentences, tgt_vocab


def _lists(out):
    return [[(t.words, t.features.tolist(), t.score) for t in lst] for lst in out]


def test_the_decoder_searches_with_the_compiled_module_here():
    """On a machine with the README's prerequisites (a C compiler) the default is the build."""
    module = compiled.search_module()
    assert module is not stack_search
    assert module.__file__.endswith(sysconfig.get_config_var("EXT_SUFFIX"))
    assert module.__name__ == compiled.module_name()


@pytest.mark.parametrize("nbest", [1, 20])
@pytest.mark.parametrize("lms", ["kenlm", "kenlm+batched", "kenlm+extra"])
def test_compiled_and_plain_search_give_identical_nbest_lists(system, nbest, lms):
    table, lm, sentences, tgt_vocab = system
    extra, more = [], []
    if "batched" in lms:
        more = [BatchedBigram(tgt_vocab, seed=3)]
    if "extra" in lms:
        pairs = {
            (s, t): [float(len(t)) - len(s), 0.1 * len(s)] for s, o in table.items() for t, _ in o
        }
        extra = [FeatureTable(["f1", "f2"], pairs, default=[0.0, -1.0])]
    cfg = DecoderConfig(stack_size=10, ttable_limit=3, distortion_limit=4, workers=1)
    dec = Decoder(table, lm, config=cfg, extra=extra, lms=more)
    w = dec.weights.copy()
    w[EXTRA:] = 0.3
    dec.set_weights(w)
    got = {}
    for name, module in (("compiled", compiled.search_module()), ("python", stack_search)):
        dec.use_search(module)
        got[name] = _lists(dec.translate_corpus(sentences, nbest))
        assert dec.search is module and compiled.search_kind(module) == name
        assert all(type(o) is module.Option for o in dec._span_options(("s0",)))
    assert got["compiled"] == got["python"]
    assert len(got["python"]) == len(sentences) and got["python"][-1][0][0]  # (the 70 words)
    if nbest > 1:
        assert max(len(x) for x in got["python"]) > 1
    if more:
        assert more[0].requests > 0  # the batched LM's path was taken


@pytest.mark.parametrize("kind", ["compiled", "python"])
def test_a_decoded_corpus_leaves_no_search_behind_for_the_collector(system, kind):
    """translate_corpus keeps the garbage collector off: each sentence's search must be freed by
    reference counting alone, so it must make no reference cycle."""
    import gc

    table, lm, sentences, tgt_vocab = system
    module = compiled.search_module() if kind == "compiled" else stack_search
    dec = Decoder(
        table, lm, config=DecoderConfig(workers=1), lms=[BatchedBigram(tgt_vocab, seed=3)]
    )
    dec.use_search(module)
    gc.collect()
    gc.set_debug(gc.DEBUG_SAVEALL)  # what a collection finds unreachable stays in gc.garbage
    try:
        dec.translate_corpus(sentences[:8], 5)
        gc.collect()
        left = [x for x in gc.garbage if type(x) in (module.Search, module.Hyp, module.Option)]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
    assert left == []


def test_use_search_switches_the_language_models_too(system):
    table, lm, _, _ = system
    dec = Decoder(table, lm, config=DecoderConfig(workers=1))
    dec.use_search(stack_search)
    kenlm_feature = dec.lms[0]
    assert isinstance(kenlm_feature, KenLMFeature)
    assert kenlm_feature.extend.func is stack_search.lm_extend
    dec._warm([("s0",)])
    assert all(isinstance(o, stack_search.Option) for o in dec._span_options(("s0",)))
    dec.use_search(compiled.search_module())
    assert kenlm_feature.extend.func is compiled.search_module().lm_extend


def test_the_module_name_follows_the_sources(tmp_path, monkeypatch):
    py, pxd = tmp_path / "stack_search.py", tmp_path / "stack_search.pxd"
    py.write_text("x = 1\n")
    pxd.write_text("cdef long x\n")
    monkeypatch.setattr(compiled, "_sources", lambda module: (py, pxd))
    first = compiled.module_name()
    assert first == compiled.module_name()
    pxd.write_text("cdef int x\n")
    assert compiled.module_name() != first


@pytest.mark.slow  # compiles the decoder: about 15 s
def test_a_build_is_made_once_in_its_folder(tmp_path, monkeypatch):
    monkeypatch.setenv(compiled.BUILD_DIR_ENV, str(tmp_path))
    module = compiled.load_compiled()
    built = list(tmp_path.glob("_stack_search_*" + sysconfig.get_config_var("EXT_SUFFIX")))
    assert [p.name for p in built] == [module.__file__.rsplit("/", 1)[-1]]
    stamp = built[0].stat().st_mtime_ns
    calls = []
    monkeypatch.setattr(compiled, "_build", lambda *a: calls.append(a))
    compiled.load_compiled()
    assert calls == [] and built[0].stat().st_mtime_ns == stamp
    assert not list(tmp_path.glob("tmp*"))  # the build's temporary folder is gone


@pytest.mark.slow  # starts a build
def test_a_build_without_a_compiler_fails_cleanly_and_the_decoder_falls_back(tmp_path, monkeypatch):
    monkeypatch.setenv(compiled.BUILD_DIR_ENV, str(tmp_path))
    monkeypatch.setenv("CC", "false")  # (a compiler that always fails; CC enters the name)
    monkeypatch.delenv(compiled.ENV, raising=False)
    with pytest.warns(RuntimeWarning, match="could not be built.*failed"):
        assert compiled._choose() is stack_search
    assert not list(tmp_path.glob("*" + sysconfig.get_config_var("EXT_SUFFIX")))
    assert not [p for p in tmp_path.iterdir() if p.is_dir()]  # no build folder left behind


def test_a_failed_build_warns_with_its_reason_and_falls_back(monkeypatch):
    def fail(module):
        raise RuntimeError(f"building _{module.__name__}_x failed: cc: not found")

    monkeypatch.setattr(compiled, "load_compiled", fail)
    monkeypatch.delenv(compiled.ENV, raising=False)
    with pytest.warns(RuntimeWarning, match="cc: not found"):
        assert compiled._choose() is stack_search
    monkeypatch.setattr(compiled, "_CHOSEN", {})  # (as in a new process)
    with pytest.warns(RuntimeWarning, match="envelope could not be built.*cc: not found"):
        assert compiled.envelope_module() is None  # MERT then sweeps with numpy


@pytest.mark.slow  # compiles a module: about 10 s
def test_the_envelopes_are_built_as_a_module_of_their_own(tmp_path, monkeypatch):
    from rnnlib.smt import envelope

    monkeypatch.setenv(compiled.BUILD_DIR_ENV, str(tmp_path))
    module = compiled.load_compiled(envelope)
    assert module.__name__ == compiled.module_name(envelope) != compiled.module_name()
    assert module.__name__.startswith("_envelope_") and hasattr(module, "sweep")
    assert [p.name for p in tmp_path.glob("_*" + sysconfig.get_config_var("EXT_SUFFIX"))] == [
        module.__file__.rsplit("/", 1)[-1]
    ]


def test_the_book_names_the_search_that_decoded():
    from rnnlib.experiments.baseline import implementation_text

    assert compiled.search_kind(stack_search) == "python"
    assert compiled.search_kind(compiled.search_module()) == "compiled"
    with pytest.raises(ValueError, match="neither"):
        compiled.search_kind(random)
    assert implementation_text({"search": "compiled"}).startswith("the compiled search")
    assert implementation_text({"search": "python"}).startswith("the plain Python search")
    assert "cached before" in implementation_text({"workers": 2})


def test_the_environment_chooses_the_plain_search_or_names_a_bad_value(monkeypatch):
    monkeypatch.setenv(compiled.ENV, "python")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert compiled._choose() is stack_search
    monkeypatch.setenv(compiled.ENV, "fast")
    with pytest.raises(ValueError, match="RNNLIB_SMT_SEARCH"):
        compiled._choose()


def test_the_benchmark_times_both_searches_and_leaves_the_decoder_as_it_was(system):
    from rnnlib.bench.smt import against_python

    table, lm, sentences, _ = system
    dec = Decoder(table, lm, config=DecoderConfig(workers=2))
    out = against_python(dec, sentences[:5], rounds=2, nbest=3)
    assert out["identical_output"] and len(out["compiled_s"]) == len(out["python_s"]) == 2
    assert out["speedup_total"] == pytest.approx(sum(out["python_s"]) / sum(out["compiled_s"]))
    assert dec.config.workers == 2 and dec.search is compiled.search_module()


def test_shared_cores_cap_a_decodings_processes_and_leave_its_output_alone(system):
    """``share_cores`` caps the processes of every later corpus decoding (asked anew at each);
    the n-best lists do not depend on the number of processes."""
    from rnnlib.smt import decoder as decoder_module

    table, lm, sentences, _ = system
    dec = Decoder(table, lm, config=DecoderConfig(workers=2))
    two = dec.translate_corpus(sentences, 3)
    assert dec.last_processes == 2
    share = [1]
    decoder_module.share_cores(lambda: share[0])
    try:
        one = dec.translate_corpus(sentences, 3)
        assert dec.last_processes == 1
        share[0] = 4  # a larger share never exceeds what the configuration asks for
        dec.translate_corpus(sentences[:4], 3)
        assert dec.last_processes == 2 and decoder_module.processes(2) == 2
        share[0] = 0  # nor falls under one process
        assert decoder_module.processes(2) == 1
    finally:
        decoder_module.share_cores(None)
    assert decoder_module.processes(2) == 2
    assert [[(c.words, c.features.tolist()) for c in lst] for lst in one] == [
        [(c.words, c.features.tolist()) for c in lst] for lst in two
    ]


def test_systems_decoded_side_by_side_in_workers_share_the_cores_and_decode_the_same(
    system, tmp_path
):
    """Two jobs of :func:`rnnlib.experiments.run_pool.build_side_by_side` decoding at the same
    time each decode on one process (their share of 2 cores); one left alone forks a pool of two
    from its worker; every n-best list is the one decoded here."""
    import json
    import time

    import torch

    from rnnlib.cache import ArtifactCache
    from rnnlib.experiments.run_pool import Job, build_side_by_side

    table, lm, sentences, _ = system
    here = Decoder(table, lm, config=DecoderConfig(workers=2)).translate_corpus(sentences, 3)
    cache = ArtifactCache(tmp_path / "cache")

    def job(name, other=None):
        def make(out, work):
            (tmp_path / f"{name}.started").touch()
            deadline = time.monotonic() + 60
            while other and not (tmp_path / f"{other}.started").exists():
                assert time.monotonic() < deadline, f"{other} never started beside {name}"
                time.sleep(0.01)
            dec = Decoder(table, lm, config=DecoderConfig(workers=2))
            lists, beside = dec.translate_corpus(sentences, 3), dec.last_processes
            words = [[list(c.words) for c in lst] for lst in lists]
            (out / "out.json").write_text(json.dumps(words))
            return {"beside": beside}

        return lambda: cache.build("t/decoded", {"name": name}, make)

    jobs = [Job("a", job("a", "b")), Job("b", job("b", "a"))]
    jobs.append(Job("alone", job("alone"), after=("a", "b")))
    assert build_side_by_side(cache, jobs, 2, torch.device("cpu"), cores=2) == {
        "a": "built",
        "b": "built",
        "alone": "built",
    }
    with cache.lookup_only():
        arts = [j.build() for j in jobs]
    # the job left alone forks a pool of two from its worker
    assert [a.extra["beside"] for a in arts] == [1, 1, 2]
    expected = [[list(c.words) for c in lst] for lst in here]
    assert all(json.loads(a.file("out.json").read_text()) == expected for a in arts)


@pytest.mark.parametrize("kind", ["compiled", "python"])
def test_path_features_sum_as_numpy_adds_vectors_step_by_step(kind):
    """The n-best lists' feature vectors (stack_search.path_features) are, bit for bit, the sums
    a numpy vector accumulates along the path (``f[index] += feats`` step by step)."""
    module = compiled.search_module() if kind == "compiled" else stack_search
    rng = np.random.default_rng(2)
    index, dist_at, lm_index, size = (0, 1, 2, 3, 4, 5, 8, 9), 6, (7, 10), 11
    path = []
    for _ in range(40):
        feats = tuple(rng.normal(scale=10.0 ** rng.integers(-3, 4), size=len(index)).tolist())
        opt = module.Option(("w",), feats, 0.0, (), 0.0)
        lm = tuple(rng.normal(size=len(lm_index)).tolist())
        dist = int(rng.integers(0, 7))
        path.append(module.Hyp(0.0, 0.0, 0, 0, None, None, opt, lm, dist, 0))
    want = np.zeros(size)
    for h in path:
        want[list(index)] += h.opt.feats
        want[dist_at] -= h.dist
        want[list(lm_index)] += h.lm
    got = module.path_features(path, size, index, dist_at, lm_index)
    assert np.array_equal(np.array(got), want)
