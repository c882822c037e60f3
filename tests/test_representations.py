"""rnnlib.book.representations: categories, purity, cached t-SNE, codes and gates (A §2.3, §4.4)."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from rnnlib.book import representations as R
from rnnlib.book.cache import ArtifactCache
from rnnlib.corpus.vocab import Vocab
from rnnlib.presets import build_model, preset

SENTENCES = [s.split() for s in [
    "In the beginning God made the earth .",
    "Then Abraham went to Egypt with Sarah .",
    "Abraham said to Sarah , go to Egypt .",
    "Moses came from Egypt after seven days .",
    "Moses and Abraham lived in Canaan for forty years .",
    "They went into Canaan and Abraham stayed in Canaan .",
    "Sarah laughed and Moses spoke .",
    "Then Moses left .",
]]


def test_proper_names_tell_people_from_places_by_the_words_before_them():
    names = R.proper_names(SENTENCES, min_count=2)
    assert names["Egypt"] == "place" and names["Canaan"] == "place"
    assert names["Abraham"] == "person" and names["Moses"] == "person" and names["Sarah"] == "person"
    assert "In" not in names and "Then" not in names  # sentence-initial capitals are no names
    assert R.word_category("seven", names) == "number" and R.word_category("days", names) == "time"
    assert R.phrase_class("after seven days .".split(), names) == "time"
    assert R.phrase_class("went to Egypt with".split(), names) == "place"
    assert R.phrase_pattern("in the land of".split(), names) == "PREP DET"


def test_purity_of_a_random_embedding_is_at_chance_and_rises_when_the_classes_are_separated():
    rng = np.random.default_rng(0)
    labels = [["number", "time", "place", "person"][i % 4] for i in range(800)] + [None] * 50
    chance = R.chance_purity(labels)
    assert chance == pytest.approx(0.25, abs=0.01)
    random = rng.normal(size=(len(labels), 32))
    assert R.knn_purity(random, labels, k=10) == pytest.approx(chance, abs=0.04)
    centres = {c: rng.normal(size=32) * 3 for c in ("number", "time", "place", "person")}
    separated = np.array([centres[lab] if lab else np.zeros(32) for lab in labels]) + rng.normal(size=(len(labels), 32))
    assert R.knn_purity(separated, labels, k=10) > 0.9
    # half separated: in between
    half = np.where(rng.random((len(labels), 1)) < 0.5, separated, random)
    assert chance + 0.1 < R.knn_purity(half, labels, k=10) < 0.9


def test_bag_of_words_purity_sees_shared_words():
    phrases = [["in", "the", "land", f"w{i}"] for i in range(30)] + [["seven", "days", "and", f"v{i}"] for i in range(30)]
    labels = ["place"] * 30 + ["time"] * 30
    assert R.knn_purity(R.bag_of_words(phrases), labels, k=5) == 1.0


def test_tsne_is_computed_once_and_a_new_region_only_redraws(tmp_path):
    cache = ArtifactCache(root=tmp_path / "cache")
    rng = np.random.default_rng(0)
    X = np.concatenate([rng.normal(size=(40, 8)), rng.normal(size=(40, 8)) + 6])
    art = R.tsne_artifact(cache, "test/tsne", X, perplexity=10, iterations=250, seed=0, config={"what": "toy"})
    assert not art.from_cache
    coords = R.tsne_coords(art)
    assert coords.shape == (80, 2)
    members = np.arange(80) >= 40
    boxes = []
    for size in (10, 20):  # a plotting parameter changes: the same artifact, another box
        again = R.tsne_artifact(cache, "test/tsne", X, perplexity=10, iterations=250, seed=0, config={"what": "toy"})
        assert again.from_cache and again.key == art.key
        np.testing.assert_array_equal(R.tsne_coords(again), coords)
        boxes.append(R.dense_region(R.tsne_coords(again), members, size=size))
        fig = R.map_figure(coords, [str(i) for i in range(80)], ["b" if m else "a" for m in members], ["a", "b"],
                           [("b", boxes[-1])])
        assert len([ax for ax in fig.axes if ax.get_visible()]) == 2
    assert boxes[0] != boxes[1]
    x0, x1, y0, y1 = boxes[0]
    inside = (coords[:, 0] >= x0) & (coords[:, 0] <= x1) & (coords[:, 1] >= y0) & (coords[:, 1] <= y1)
    assert members[inside].mean() > 0.9  # the densest group of the category
    other = R.tsne_artifact(cache, "test/tsne", X, perplexity=12, iterations=250, seed=0, config={"what": "toy"})
    assert not other.from_cache  # a t-SNE parameter recomputes


def _smoke_model():
    torch.manual_seed(0)
    vocab = Vocab([f"w{i}" for i in range(36)])
    model = build_model(preset("smoke-cho2014", src_vocab=len(vocab), tgt_vocab=len(vocab))).eval()
    return model, vocab


def test_encoder_gates_reproduce_the_encoders_states_and_codes():
    model, vocab = _smoke_model()
    phrases = [["w1", "w2", "w3", "w4"], ["w5", "w6"], ["w7", "w8", "w9", "w10", "w11"]]
    (_, src, mask), = list(R.phrase_batches(vocab, phrases))
    r, z, h = R.encoder_gates(model.encoder, src, mask)
    states, c = model.encoder(src, mask)
    torch.testing.assert_close(h, states)
    assert r.shape == z.shape == h.shape == (3, 6, 16)
    assert bool(((r > 0) & (r < 1))[mask].all()) and bool((r[~mask] == 0).all())
    np.testing.assert_allclose(R.phrase_codes(model, vocab, phrases), c.detach().numpy(), atol=1e-6)


def test_a_unit_that_always_resets_has_no_memory_and_a_unit_that_keeps_its_state_has_some():
    model, vocab = _smoke_model()
    cell = model.encoder.rnn.cell
    with torch.no_grad():
        cell.W_r.bias[0], cell.W_z.bias[0] = -40.0, -40.0  # unit 0: r = 0, z = 0 ...
        cell.U.weight[0] = 0.0                             # ... and no recurrent input: h_0<t> = tanh([W x_t]_0)
        cell.W_z.bias[1] = 2.0                             # unit 1: keeps most of its state
    rng = np.random.default_rng(0)
    phrases = [[f"w{i}" for i in rng.integers(0, 36, size=5)] for _ in range(200)]
    act = R.gate_activity(model, vocab, phrases)
    assert act["reset_active"][0] == 1.0 and act["update_active"][0] == 0.0
    assert act["update_active"][1] > 0.9
    memory = R.perturbation_memory(model, vocab, phrases, lag=3)
    assert memory.shape == (16,)
    assert memory[0] < 1e-6 < 0.3 < memory[1]


def _four_classes(n=400, dim=32, seed=0):
    rng = np.random.default_rng(seed)
    labels = [["number", "time", "place", "person"][i % 4] for i in range(n)] + [None] * 20
    centres = {c: rng.normal(size=dim) * 3 for c in ("number", "time", "place", "person")}
    separated = np.array([centres[lab] if lab else np.zeros(dim) for lab in labels]) + rng.normal(size=(len(labels), dim))
    return labels, separated, rng.normal(size=(len(labels), dim))


def test_purity_interval_lies_above_0_when_the_classes_are_separated_and_includes_0_for_random_vectors():
    from rnnlib.book import claims
    labels, separated, random = _four_classes()
    chance = R.chance_same(labels)
    assert len(chance) == 400 and chance.mean() == pytest.approx(R.chance_purity(labels))
    verdicts = {}
    for name, X in (("separated", separated), ("random", random)):
        per_point = R.knn_same(X, labels, k=10)
        assert per_point.mean() == pytest.approx(R.knn_purity(X, labels, k=10))
        diff, low, high = R.bootstrap_mean(per_point - chance, n_boot=1000, seed=0)
        assert low <= diff <= high
        verdicts[name] = (diff, low, high)
    assert verdicts["separated"][1] > 0.5  # the whole interval well above chance
    assert verdicts["random"][1] < 0 < verdicts["random"][2]
    assert claims.evaluate(claims.intervals_above([("sep", *verdicts["separated"])])).verdict == claims.HOLDS
    assert claims.evaluate(claims.intervals_above([("rnd", *verdicts["random"])])).verdict == claims.NOISE


def test_spearman_interval_over_units_separates_a_relation_from_none():
    rng = np.random.default_rng(1)
    x = rng.random(256)
    rho, low, high = R.bootstrap_spearman(x, x + rng.normal(scale=0.2, size=256), n_boot=300, seed=0)
    assert 0 < low <= rho <= high
    rho, low, high = R.bootstrap_spearman(x, rng.random(256), n_boot=300, seed=0)
    assert low < 0 < high
    with pytest.raises(ValueError, match="same length"):
        R.bootstrap_spearman(x, x[:10])
