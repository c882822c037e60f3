"""What the representations chapter calls: rnnlib.experiments.representations (labelled points,
maps, purity table and claims, gates) and rnnlib.experiments.gating_ablation (A §2.3)."""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
import torch

from rnnlib import stats
from rnnlib import verdicts
from rnnlib.cache import ArtifactCache
from rnnlib.experiments.representations import (
    floor,
    gates,
    gating_ablation,
    labelled_points,
    network,
    phrase_maps,
    purity,
    purity_claims,
    sized_bags,
    tsne,
    word_maps,
)
from rnnlib.experiments.representations.setting import Params

PARAMS = Params(
    neighbours=10,
    min_members=2,
    n_boot=200,
    seed=1,
    perplexity=30.0,
    tsne_iterations=250,
    tsne_seed=0,
    word_regions="number,place,time",
    phrase_regions="time,place,pattern",
    zoom_size=10,
    max_labels=5,
    min_phrase_len=2,
    memory_lag=1,
    gate_phrases=40,
    ablation_sources=2,
    ablation_samples=5,
)


def _points(n: int = 80, dim: int = 8, seed: int = 0) -> labelled_points.LabelledPoints:
    """Words and phrases of four well separated categories (``None`` for every fifth point)."""
    rng = np.random.default_rng(seed)
    cats = [("number", "time", "person", "place")[i % 4] if i % 5 else None for i in range(n)]
    centres = {c: rng.normal(size=dim) * 4 for c in ("number", "time", "person", "place")}
    vectors = np.array([centres[c] if c else np.zeros(dim) for c in cats])
    vectors = (vectors + rng.normal(size=(n, dim))).astype(np.float32)
    noise = rng.normal(size=(n, dim)).astype(np.float32)
    words = [f"w{i}" for i in range(n)]
    phrases = [[f"w{i}", f"v{i % 7}"] for i in range(n)]
    pat = [("PREP DET", "WORD WORD")[i % 2] for i in range(n)]
    second = noise.copy()  # the second initialisation: here the same draw (the control's 0)
    return labelled_points.LabelledPoints(
        [words], {}, words, cats, vectors, noise, [tuple(p) for p in phrases], phrases, cats, pat,
        vectors, noise, second, second,
    )  # fmt: skip


def test_word_categories_table_counts_every_category_in_the_papers_order():
    points = _points()
    table = labelled_points.word_categories_table(points)
    assert table.index.name == "category" and list(table.columns) == ["words"]
    assert list(table.index) == list(labelled_points.WORD_CATEGORIES)
    assert table.loc["number", "words"] == 16 and table.loc["pronoun", "words"] == 0
    numbers = labelled_points.numbers(points)
    assert numbers["rep-n-words"] == 80 and numbers["rep-sem-labelled"] == 64
    assert numbers["rep-n-patterns"] == 2 and numbers["rep-n-names"] == 0
    texts = labelled_points.texts(points)
    assert texts["rep-names"].startswith("no word of the training text is a name")
    cues = labelled_points.place_cues()["words"]
    assert "*in*" in cues.iloc[0] and "*land*" in cues.iloc[1]
    points.names = {f"Name{i}": ("person", "place")[i % 2] for i in range(12)}
    texts = labelled_points.texts(points)
    assert texts["rep-names"] == "12 words of the training text are names"
    examples = texts["rep-name-examples"]
    assert examples.startswith("for example *Name0* (person), *Name1* (place)")
    assert len(examples) <= labelled_points.EXAMPLES_WIDTH < len(examples) + 20


def test_corpus_description_names_the_users_files_and_lowercasing():
    cfg = SimpleNamespace(
        corpus="files", corpus_dir="/data/mine", src_lang="de", tgt_lang="en", lowercase=True
    )
    assert network.corpus_description(cfg) == "your own files in `/data/mine`, German → English"
    assert network.corpus_case(cfg) == "lowercased (so no word is written as a name)"
    cased = SimpleNamespace(**{**vars(cfg), "lowercase": False})
    assert network.corpus_case(cased) == "cased as written"


def _measures(points: labelled_points.LabelledPoints, rng) -> dict[str, purity.Purity]:
    return purity_claims.purity_measures(points, PARAMS, rng)


def test_purity_claims_judge_against_chance_and_the_untrained_network_with_a_control():
    points = _points()
    measures = _measures(points, np.random.default_rng(3))
    assert list(measures) == list(purity_claims.PURITY_CLAIMS)
    table = purity_claims.purity_table(measures)
    assert table.index.name == "representation"
    assert list(table.index) == [*purity_claims.ROWS, "chance", purity_claims.LEAKY]
    word = measures["words: category"]
    assert table.loc["trained network", "words: category"] > 0.9
    found = purity_claims.purity_claims(measures, PARAMS)
    assert [c.claim for c in found] == ["C-A-F4-1", "C-A-F5-1", "C-A-F5-2"]
    first = found[0]
    same, n_boot, seed = word.same, PARAMS.n_boot, PARAMS.seed
    T, U = "trained network", "untrained network"
    expected = [
        ["words: category, trained network − chance",
         *stats.bootstrap_mean(same[T] - same["chance"], n_boot, seed)],
        ["words: category, trained network − untrained network",
         *stats.bootstrap_mean(same[T] - same[U], n_boot, seed)],
    ]  # fmt: skip
    assert first.check.evidence["tests"] == expected
    control = first.check.control.check.evidence["tests"]
    assert control[1][0] == "words: category, untrained network − second initialisation"
    verdict = verdicts.evaluate(first.check)
    assert verdict.verdict == verdicts.HOLDS and verdict.control != verdicts.HOLDS
    bow = verdicts.evaluate(first.bow_check)
    assert [t[0] for t in first.bow_check.evidence["tests"]] == [
        "words: category, trained network − bag of words",
        "words: category, trained network − chance",
    ]
    assert bow.verdict == verdicts.HOLDS and first.measured  # ahead of a bag of words too
    assert first.left_out == "*pronoun* (0), *preposition* (0), *determiner* (0)"
    assert floor.control_words(verdict).startswith(f"**{verdict.control}** (")
    numbers = purity_claims.numbers(measures, PARAMS)
    assert numbers["rep-word-trained"] == (word.purity()[T], 3)
    gap = word.purity()[T] - word.purity()["bag of words"]  # a headline of the rebuild spread
    assert numbers["rep-word-bow-gap"] == (pytest.approx(gap), 3)
    assert numbers["rep-n-boot"] == 200 and numbers["rep-word-alone"] == 0


def test_a_column_with_nothing_to_measure_gives_a_not_measurable_claim_naming_what_was_left_out():
    points = _points()
    points.sem = ["time"] * 79 + ["place"]  # one class left: every neighbour shares it
    measures = _measures(points, np.random.default_rng(3))
    sem = purity_claims.purity_claims(measures, PARAMS)[1]
    assert sem.check.rule == "not_measurable" and sem.bow_check.rule == "not_measurable"
    verdict = verdicts.evaluate(sem.check)
    assert verdict.verdict == verdicts.UNMEASURABLE
    assert "left out for fewer than 2 points: place (1)" in verdict.reason
    assert not sem.measured and sem.left_out == "*place* (1), *person* (0), *number* (0)"
    assert floor.control_words(verdict).startswith("nothing")  # no control: nothing judged
    assert purity_claims.purity_table(measures)["phrases: semantic class"].isna().all()


def test_random_vectors_are_drawn_for_every_column_in_order_measured_or_not():
    points = _points()
    rng = np.random.default_rng(5)
    measures = _measures(points, rng)
    again = np.random.default_rng(5)
    shapes = [points.emb.shape, points.codes.shape, points.codes.shape]
    draws = [again.normal(size=shape) for shape in shapes]
    assert rng.normal() == again.normal()  # the same number of draws
    expected = purity.knn_same(draws[0], measures["words: category"].labels, 10)
    np.testing.assert_array_equal(measures["words: category"].same["random vectors"], expected)


@pytest.mark.slow  # draws maps: about 3 s
def test_word_and_phrase_maps_draw_or_say_why_not(tmp_path):
    cache = ArtifactCache(root=tmp_path / "cache")
    corpus = SimpleNamespace(kind="corpus")
    scorer = SimpleNamespace(artifact=SimpleNamespace(key="toy-scorer"))
    few = _points(n=4)
    maps = word_maps.word_maps(cache, corpus, scorer, few, PARAMS)
    assert maps.artifacts == [corpus, scorer.artifact] and np.isnan(maps.seconds)
    assert "Not drawn: 4 source words" in maps.fig4.axes[0].texts[0].get_text()
    assert maps.missing is None and maps.regions().startswith("all, as the map is not drawn")
    points = _points(n=60)
    maps = word_maps.word_maps(cache, corpus, scorer, points, PARAMS)
    assert len(maps.artifacts) == 3 and maps.artifacts[2].kind == "representations/tsne"
    assert maps.artifacts[2].config["n_words"] == 60 and maps.seconds >= 0
    assert len([a for a in maps.fig4.axes if a.get_visible()]) == 2  # Fig. 4: one region
    assert len([a for a in maps.fig6.axes if a.get_visible()]) == 4  # Fig. 6: three
    legend = [t.get_text() for t in maps.fig4.axes[0].get_legend().get_texts()]
    assert legend == ["number", "time", "person", "place", "unlabelled"]  # the category as hue
    assert maps.missing == [] and maps.regions() == "none"
    fig5 = phrase_maps.phrase_map(cache, corpus, scorer, points, PARAMS, figure=5)
    small = phrase_maps.phrase_subset(points, 30, np.random.default_rng(0))
    fig7 = phrase_maps.phrase_map(cache, corpus, scorer, points, PARAMS, figure=7, subset=small)
    assert fig7.artifacts[2].config["n_phrases_small"] == 30
    assert fig5.artifacts[2].key != fig7.artifacts[2].key
    titles = [a.get_title() for a in fig5.figure.axes if a.get_visible()]
    assert any("pattern PREP DET" in t or "pattern WORD WORD" in t for t in titles)
    assert phrase_maps.regions(fig5, fig7) == "none"
    fig5.missing, fig7.missing = ["person"], None
    assert phrase_maps.regions(fig5, fig7) == (
        "Fig. 5: *person*; Fig. 7: all, as it is not drawn (too few phrases)"
    )


class _KeyOnly(Exception):
    """Raised by :class:`_RecordingCache` once the key is known: nothing is built."""


class _RecordingCache:
    def __init__(self):
        self.keys = []

    def build(self, kind, config, make, data=None):
        self.keys.append((kind, config, data))
        raise _KeyOnly


def test_the_typed_parameters_key_every_t_sne_map_as_the_dict_did():
    """The cache keys the maps ask for from the typed parameters, against the config the
    chapter's parameter dict built before (written out): the same kind, fields, values and
    data checksum, so every cached map is found again. Nothing is computed."""
    P = dataclasses.replace(PARAMS, perplexity=12.0, tsne_iterations=300, tsne_seed=3)
    scorer = SimpleNamespace(artifact=SimpleNamespace(key="toy-scorer"))
    points, small = _points(n=60), np.arange(0, 60, 2)
    cache = _RecordingCache()
    for draw in (
        lambda: word_maps.word_maps(cache, None, scorer, points, P),
        lambda: phrase_maps.phrase_map(cache, None, scorer, points, P, 5),
        lambda: phrase_maps.phrase_map(cache, None, scorer, points, P, 7, subset=small),
    ):
        with pytest.raises(_KeyOnly):
            draw()

    def before(what, size, X, perplexity):  # the config as the dict-based code built it
        fixed = {"perplexity": perplexity, "iterations": 300, "seed": 3, "method": "barnes_hut"}
        config = {"what": what, "model": "toy-scorer", **size, **fixed}
        return ("representations/tsne", {**config, "init": "pca", "points": len(X)},
                tsne.array_checksum(np.asarray(X, dtype=np.float32)))  # fmt: skip

    assert cache.keys == [
        before("source word embeddings e(x)", {"n_words": 60}, points.emb, 12.0),
        before("phrase codes c", {"n_phrases": 60}, points.codes, 12.0),
        before("phrase codes c", {"n_phrases_small": 30}, points.codes[small], 29 / 3),
    ]
    assert [list(config) for _, config, _ in cache.keys][0] == [
        "what", "model", "n_words", "perplexity", "iterations", "seed", "method", "init", "points"
    ]  # fmt: skip


def test_enlarged_regions_name_the_categories_with_no_point():
    rng = np.random.default_rng(0)
    xy = rng.normal(size=(50, 2))
    cats = ["time"] * 25 + [None] * 25
    boxes, missing = tsne.enlarged_regions(xy, cats, "time, place", size=10)
    assert [name for name, _ in boxes] == ["time"]
    assert missing == ["place"]
    pats = ["A B"] * 30 + ["C D"] * 20
    boxes, missing = tsne.enlarged_regions(xy, cats, "pattern", pats, size=10)
    assert [name for name, _ in boxes] == ["pattern A B"] and missing == []


def _gates(memory, reset, update, control=None) -> gates.GateMemory:
    rho, p, interval = {}, {}, {}
    from scipy.stats import spearmanr

    for gate, x in (("reset", reset), ("update", update)):
        rho[gate], p[gate] = spearmanr(x, memory)
        interval[gate] = stats.bootstrap_spearman(x, memory, 300, 0)[1:]
    activity = {"reset_active": reset, "update_active": update}
    return gates.GateMemory([["a"]] * 3, 3, 2, activity, memory, rho, p, interval, control)


def _no_relation(seed=5, n=64) -> gates.GateMemory:
    """Gates of an untrained network: activity unrelated to memory."""
    rng = np.random.default_rng(seed)
    return _gates(rng.random(n), rng.random(n), rng.random(n))


@pytest.mark.filterwarnings("ignore::scipy.stats.ConstantInputWarning")  # the flat memory
@pytest.mark.slow  # bootstraps: about 3 s
def test_claim_gru_2_holds_for_the_predicted_signs_and_is_not_measurable_without_spread():
    rng = np.random.default_rng(0)
    memory = rng.random(64)
    memory_gates = _gates(
        memory, 1 - memory + rng.normal(scale=0.1, size=64), memory + 0.05, _no_relation()
    )
    found = gates.claim_gru_2(memory_gates)
    assert (found.claim, found.glue) == ("C-A-GRU-2", "rep-verdict-gates")
    verdict = verdicts.evaluate(found.check)
    assert verdict.verdict == verdicts.HOLDS and verdict.control != verdicts.HOLDS
    wrong = gates.claim_gru_2(_gates(memory, memory, 1 - memory, _no_relation()))
    assert verdicts.evaluate(wrong.check).verdict == verdicts.FAILS
    flat = gates.claim_gru_2(_gates(np.ones(64), memory, memory))
    assert flat.check.rule == "not_measurable"
    numbers = gates.numbers(memory_gates)
    assert (
        numbers["rep-rho-reset"] == (memory_gates.rho["reset"], 2) and numbers["rep-gate-min"] == 3
    )
    fig = gates.gates_figure(memory_gates)
    assert len(fig.axes) == 2 and "Spearman" in fig.axes[0].get_title()


# -- the gating ablation ---------------------------------------------------------------------
def test_held_out_sources_draw_long_phrases_or_any_when_none_is_long():
    held = [(("a", "b", "c"), ("x",)), (("a", "b", "c"), ("y",)), (("d",), ("z",))]
    held += [((f"s{i}", "t", "u"), ("v",)) for i in range(6)]
    sources, targets = gating_ablation.held_out_sources(held, 3, 3, seed=1)
    assert len(sources) == 3 and all(len(s) >= 3 for s in sources)
    assert sources == sorted(sources) and targets[("a", "b", "c")] == ("x",)
    assert gating_ablation.held_out_sources(held, 3, 3, seed=1)[0] == sources
    short = [(("d",), ("z",)), (("e",), ("w",))]
    assert gating_ablation.held_out_sources(short, 3, 5, seed=1)[0] == [("d",), ("e",)]


@pytest.fixture
def one_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def test_the_ablation_sets_tanh_against_the_gru_at_the_same_updates(tmp_path, one_thread):
    from test_representations import _tiny_scorer

    cache, corpus, base = _tiny_scorer(tmp_path)
    base.device = torch.device("cpu")
    untrained = network.untrained_network(base)
    abl = gating_ablation.gating_ablation(cache, corpus, base, untrained, 3, 200, 1)
    assert abl.updates == 3 and abl.tanh.model_config.unit == "tanh"
    assert abl.gru.artifact.key != base.artifact.key  # the scorer stopped at 3 updates
    assert abl.artifacts == [corpus, base.artifact, abl.tanh.artifact, abl.gru.artifact]
    np.testing.assert_allclose(abl.gap, abl.nll_tanh - abl.nll_gru)
    assert abl.interval == stats.bootstrap_mean(abl.gap, 200, 1)
    numbers = gating_ablation.numbers(abl)
    assert numbers["rep-abl-updates"] == 3
    assert numbers["rep-abl-share-worse"] == (100 * float(np.mean(abl.gap > 0)), 1)
    assert numbers["rep-abl-gru-threads"] == numbers["rep-abl-tanh-threads"] == 1  # (one_thread)
    found = gating_ablation.claim_gru_1(abl, 200, 1)
    assert (found.claim, found.glue) == ("C-A-GRU-1", "rep-verdict-ablation")
    assert found.check.control.check.evidence["tests"][0][1:] == [0.0, 0.0, 0.0]
    assert found.check.floor.values == [["GRU", abl.floor_value]]
    assert len(abl.nll_unigram) == len(abl.nll_gru)
    assert found.check.evidence["tests"][0][1:] == list(abl.interval)
    fig = gating_ablation.ablation_curves(abl)
    curves = [list(line.get_xdata()) for line in fig.axes[0].get_lines()]
    assert [0, 3, 6] in curves and [0, 3] in curves  # the scorer's whole run, tanh's 3 updates
    params = dataclasses.replace(PARAMS, min_phrase_len=2)
    table = gating_ablation.samples_table(abl, corpus, params)
    assert list(table.columns) == [
        "held-out target",
        "GRU: most frequent sample",
        "tanh: most frequent sample",
    ]
    assert table.index.name == "source" and len(table) == 2
    assert table.equals(gating_ablation.samples_table(abl, corpus, params))  # seeded
    assert isinstance(table, pd.DataFrame)


# -- the bag of words at the network's size ----------------------------------------------------
def _seen_scorer(n: int = 50, batch: int = 4, updates: int = 3):
    pairs = [((f"s{i}", f"t{i % 5}"), (f"x{i}",)) for i in range(n)]
    tc = SimpleNamespace(batching="random", batch_size=batch, seed=7)
    art = SimpleNamespace(extra={"updates": updates})
    return SimpleNamespace(train_config=tc, artifact=art, train_pairs=pairs)


def test_seen_pairs_are_those_the_random_minibatches_held():
    from rnnlib.minibatch_order import RandomBatcher

    sc = _seen_scorer()
    seen = sized_bags.seen_pairs(sc)
    order = RandomBatcher(50, 4, 7).epoch_order(0)[:12]  # three minibatches of four
    assert seen == [sc.train_pairs[i] for i in sorted(order)]
    assert len(sized_bags.seen_pairs(sc, updates=100)) == 50  # past an epoch: every pair
    sc.train_config.batching = "pools"
    with pytest.raises(ValueError, match="random"):
        sized_bags.seen_pairs(sc)


def test_svd_rows_keep_the_networks_size_and_the_leading_directions():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3)) @ rng.normal(size=(3, 12))  # rank 3 in 12 dimensions
    rows = sized_bags.svd_rows(X, 5)
    assert rows.shape == (40, 5) and np.allclose(rows[:, 3:], 0, atol=1e-8)
    # distances are kept: three directions hold all of X
    assert np.allclose(np.linalg.norm(rows, axis=1), np.linalg.norm(X, axis=1))
    tiny = sized_bags.svd_rows(X[:, :1], 4)  # a single column: nothing to keep
    assert tiny.shape == (40, 4) and not tiny.any()


def test_sized_bags_count_only_the_seen_phrases_at_each_vectors_size():
    points = _points()
    pairs = [(tuple(p), ("x",)) for p in points.phrases]
    tc = SimpleNamespace(batching="random", batch_size=8, seed=1)
    sc = SimpleNamespace(train_config=tc, artifact=SimpleNamespace(extra={"updates": 20}),
                         train_pairs=pairs)  # fmt: skip
    bags = sized_bags.sized_bags(points, sc)
    assert list(bags) == list(purity_claims.PURITY_CLAIMS)
    assert bags["words: category"].shape == points.emb.shape
    assert bags["phrases: pattern"].shape == points.codes.shape
    measures = purity_claims.purity_measures(points, PARAMS, np.random.default_rng(3), bags)
    table = purity_claims.purity_table(measures)
    rows = list(table.index)
    assert rows.index(purity_claims.SIZED) == rows.index("bag of words") + 1
    got = purity_claims.sized_numbers(measures, PARAMS)
    m = measures["words: category"]
    diff = m.same["trained network"] - m.same[purity_claims.SIZED]
    assert got["rep-word-sized-diff"][0] == pytest.approx(diff.mean())
    lo, hi = got["rep-word-sized-lo"][0], got["rep-word-sized-hi"][0]
    assert lo <= diff.mean() <= hi
    # the separated categories' vectors beat counts of random context words
    assert lo > 0
    # without the row: NaN, no verdict
    plain = purity_claims.sized_numbers(_measures(points, np.random.default_rng(3)), PARAMS)
    assert np.isnan(plain["rep-sem-sized-diff"][0])
