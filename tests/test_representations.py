"""The representations chapter's modules: categories, purity, cached t-SNE maps, codes and
gates, the gating ablation (A §2.3, §4.4)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from rnnlib import stats
from rnnlib.experiments.representations import categories as cats
from rnnlib.experiments.representations import gating_ablation, probes, purity, tsne
from rnnlib.cache import ArtifactCache
from rnnlib.corpus.vocab import Vocab
from rnnlib.presets import build_model, preset
from rnnlib.specials import EOS

SENTENCES = [
    s.split()
    for s in [
        "In the beginning God made the earth .",
        "Then Abraham went to Egypt with Sarah .",
        "Abraham said to Sarah , go to Egypt .",
        "Moses came from Egypt after seven days .",
        "Moses and Abraham lived in Canaan for forty years .",
        "They went into Canaan and Abraham stayed in Canaan .",
        "Sarah laughed and Moses spoke .",
        "Then Moses left .",
    ]
]


def test_proper_names_tell_people_from_places_by_the_words_before_them():
    names = cats.proper_names(SENTENCES, min_count=2)
    assert names["Egypt"] == "place" and names["Canaan"] == "place"
    assert (
        names["Abraham"] == "person" and names["Moses"] == "person" and names["Sarah"] == "person"
    )
    assert "In" not in names and "Then" not in names  # sentence-initial capitals are no names
    assert (
        cats.word_category("seven", names) == "number"
        and cats.word_category("days", names) == "time"
    )
    assert cats.phrase_class("after seven days .".split(), names) == "time"
    assert cats.phrase_class("went to Egypt with".split(), names) == "place"
    assert cats.phrase_pattern("in the land of".split(), names) == "PREP DET"


def test_purity_of_a_random_embedding_is_at_chance_and_rises_when_the_classes_are_separated():
    rng = np.random.default_rng(0)
    labels = [["number", "time", "place", "person"][i % 4] for i in range(800)] + [None] * 50
    chance = purity.chance_purity(labels)
    assert chance == pytest.approx(0.25, abs=0.01)
    random = rng.normal(size=(len(labels), 32))
    assert purity.knn_purity(random, labels, k=10) == pytest.approx(chance, abs=0.04)
    centres = {c: rng.normal(size=32) * 3 for c in ("number", "time", "place", "person")}
    separated = np.array([centres[lab] if lab else np.zeros(32) for lab in labels]) + rng.normal(
        size=(len(labels), 32)
    )
    assert purity.knn_purity(separated, labels, k=10) > 0.9
    # half separated: in between
    half = np.where(rng.random((len(labels), 1)) < 0.5, separated, random)
    assert chance + 0.1 < purity.knn_purity(half, labels, k=10) < 0.9


def test_bag_of_words_purity_sees_shared_words():
    phrases = [["in", "the", "land", f"w{i}"] for i in range(30)] + [
        ["seven", "days", "and", f"v{i}"] for i in range(30)
    ]
    labels = ["place"] * 30 + ["time"] * 30
    assert purity.knn_purity(purity.bag_of_words(phrases), labels, k=5) == 1.0


@pytest.mark.slow  # 12 s of CPU (a t-SNE map): over the fast layer's 5 s
def test_tsne_is_computed_once_and_a_new_region_only_redraws(tmp_path):
    cache = ArtifactCache(root=tmp_path / "cache")
    rng = np.random.default_rng(0)
    X = np.concatenate([rng.normal(size=(40, 8)), rng.normal(size=(40, 8)) + 6])
    art = tsne.tsne_artifact(
        cache, "test/tsne", X, perplexity=10, iterations=250, seed=0, config={"what": "toy"}
    )
    assert not art.from_cache
    coords = tsne.tsne_coords(art)
    assert coords.shape == (80, 2)
    members = np.arange(80) >= 40
    boxes = []
    for size in (10, 20):  # a plotting parameter changes: the same artifact, another box
        again = tsne.tsne_artifact(
            cache, "test/tsne", X, perplexity=10, iterations=250, seed=0, config={"what": "toy"}
        )
        assert again.from_cache and again.key == art.key
        np.testing.assert_array_equal(tsne.tsne_coords(again), coords)
        boxes.append(tsne.dense_region(tsne.tsne_coords(again), members, size=size))
        fig = tsne.map_figure(
            coords,
            [str(i) for i in range(80)],
            ["b" if m else "a" for m in members],
            ["a", "b"],
            [("b", boxes[-1])],
        )
        assert len([ax for ax in fig.axes if ax.get_visible()]) == 2
    assert boxes[0] != boxes[1]
    x0, x1, y0, y1 = boxes[0]
    inside = (
        (coords[:, 0] >= x0) & (coords[:, 0] <= x1) & (coords[:, 1] >= y0) & (coords[:, 1] <= y1)
    )
    assert members[inside].mean() > 0.9  # the densest group of the category
    other = tsne.tsne_artifact(
        cache, "test/tsne", X, perplexity=12, iterations=250, seed=0, config={"what": "toy"}
    )
    assert not other.from_cache  # a t-SNE parameter recomputes


def _smoke_model():
    torch.manual_seed(0)
    vocab = Vocab([f"w{i}" for i in range(36)])
    model = build_model(preset("smoke-cho2014", src_vocab=len(vocab), tgt_vocab=len(vocab))).eval()
    return model, vocab


def test_encoder_gates_reproduce_the_encoders_states_and_codes():
    model, vocab = _smoke_model()
    phrases = [["w1", "w2", "w3", "w4"], ["w5", "w6"], ["w7", "w8", "w9", "w10", "w11"]]
    ((_, src, mask),) = list(probes.phrase_batches(vocab, phrases))
    r, z, h = probes.encoder_gates(model.encoder, src, mask)
    states, c = model.encoder(src, mask)
    torch.testing.assert_close(h, states)
    assert r.shape == z.shape == h.shape == (3, 6, 16)
    assert bool(((r > 0) & (r < 1))[mask].all()) and bool((r[~mask] == 0).all())
    np.testing.assert_allclose(
        probes.phrase_codes(model, vocab, phrases), c.detach().numpy(), atol=1e-6
    )


def test_a_unit_that_always_resets_has_no_memory_and_a_unit_that_keeps_its_state_has_some():
    model, vocab = _smoke_model()
    cell = model.encoder.rnn.cell
    with torch.no_grad():
        cell.W_r.bias[0], cell.W_z.bias[0] = -40.0, -40.0  # unit 0: r = 0, z = 0 ...
        cell.U.weight[0] = 0.0  # ... and no recurrent input: h_0<t> = tanh([W x_t]_0)
        cell.W_z.bias[1] = 2.0  # unit 1: keeps most of its state
    rng = np.random.default_rng(0)
    phrases = [[f"w{i}" for i in rng.integers(0, 36, size=5)] for _ in range(200)]
    act = probes.gate_activity(model, vocab, phrases)
    assert act["reset_active"][0] == 1.0 and act["update_active"][0] == 0.0
    assert act["update_active"][1] > 0.9
    memory = probes.perturbation_memory(model, vocab, phrases, lag=3)
    assert memory.shape == (16,)
    assert memory[0] < 1e-6 < 0.3 < memory[1]


def _four_classes(n=400, dim=32, seed=0):
    rng = np.random.default_rng(seed)
    labels = [["number", "time", "place", "person"][i % 4] for i in range(n)] + [None] * 20
    centres = {c: rng.normal(size=dim) * 3 for c in ("number", "time", "place", "person")}
    separated = np.array([centres[lab] if lab else np.zeros(dim) for lab in labels]) + rng.normal(
        size=(len(labels), dim)
    )
    return labels, separated, rng.normal(size=(len(labels), dim))


def test_purity_interval_is_above_0_for_separated_classes_and_holds_0_for_random_vectors():
    from rnnlib import verdicts

    labels, separated, random = _four_classes()
    chance = purity.chance_same(labels)
    assert len(chance) == 400 and chance.mean() == pytest.approx(purity.chance_purity(labels))
    found = {}
    for name, X in (("separated", separated), ("random", random)):
        per_point = purity.knn_same(X, labels, k=10)
        assert per_point.mean() == pytest.approx(purity.knn_purity(X, labels, k=10))
        diff, low, high = stats.bootstrap_mean(per_point - chance, n_boot=1000, seed=0)
        assert low <= diff <= high
        found[name] = (diff, low, high)
    assert found["separated"][1] > 0.5  # the whole interval well above chance
    assert found["random"][1] < 0 < found["random"][2]
    assert (
        verdicts.evaluate(verdicts.intervals_above([("sep", *found["separated"])])).verdict
        == verdicts.HOLDS
    )
    assert (
        verdicts.evaluate(verdicts.intervals_above([("rnd", *found["random"])])).verdict
        == verdicts.NOISE
    )


def test_spearman_interval_over_units_separates_a_relation_from_none():
    rng = np.random.default_rng(1)
    x = rng.random(256)
    rho, low, high = stats.bootstrap_spearman(
        x, x + rng.normal(scale=0.2, size=256), n_boot=300, seed=0
    )
    assert 0 < low <= rho <= high
    rho, low, high = stats.bootstrap_spearman(x, rng.random(256), n_boot=300, seed=0)
    assert low < 0 < high
    with pytest.raises(ValueError, match="same length"):
        stats.bootstrap_spearman(x, x[:10])


def _tiny_scorer(tmp_path):
    """A PhraseScorer as rnnlib.experiments.cho2014.scorer.phrase_scorer makes it, on toy pairs
    (no SMT run)."""
    from types import SimpleNamespace
    from rnnlib.experiments.cho2014.scorer import PhraseScorer, scorer_run
    from rnnlib.smt.rnn_scorer import encode_pairs
    from rnnlib.train import train_preset

    vocab = Vocab([f"w{i}" for i in range(36)])
    corpus = SimpleNamespace(src_vocab=vocab, tgt_vocab=vocab, checksum="toy")
    rng = np.random.default_rng(0)
    phrase = lambda: tuple(f"w{i}" for i in rng.integers(0, 36, size=rng.integers(1, 5)))  # noqa: E731
    train_pairs, held = (
        [(phrase(), phrase()) for _ in range(300)],
        [(phrase(), phrase()) for _ in range(30)],
    )
    model_config = preset("smoke-cho2014", src_vocab=len(vocab), tgt_vocab=len(vocab))
    train_config = train_preset("paper-a", max_updates=6, eval_every=3, seed=1, checkpoint_every=3)
    run_config = {"phrase_table": "toy", "sample": None, "dev_pairs": len(held), "sample_seed": 1}
    cache = ArtifactCache(root=tmp_path / "cache")
    art = scorer_run(
        cache,
        run_config,
        model_config,
        train_config,
        lambda: encode_pairs(train_pairs, vocab, vocab),
        lambda: encode_pairs(held, vocab, vocab),
        data=corpus.checksum,
    )
    return (
        cache,
        corpus,
        PhraseScorer(
            art,
            model_config,
            train_config,
            None,
            None,
            train_pairs + held,
            held,
            train_pairs,
            0.0,
            run_config,
        ),
    )


@pytest.fixture
def one_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # tiny models: two threads only add waiting on a busy machine
    yield
    torch.set_num_threads(threads)


def test_the_tanh_ablation_is_the_scorers_network_with_tanh_units_keyed_apart(tmp_path, one_thread):
    import pandas as pd
    from rnnlib.experiments.cho2014.scorer import scorer_variant
    from rnnlib.gru import TanhCell

    cache, corpus, base = _tiny_scorer(tmp_path)
    same = scorer_variant(
        cache, corpus, base
    )  # the GRU at the scorer's own updates: the scorer itself
    assert same.artifact.key == base.artifact.key and same.artifact.from_cache
    tanh = scorer_variant(cache, corpus, base, unit="tanh")
    assert not tanh.artifact.from_cache and tanh.artifact.key != base.artifact.key
    cfg = tanh.model_config
    assert (cfg.unit, cfg.decoder_reset, cfg.reset_context) == ("tanh", None, False)
    assert (cfg.hidden, cfg.emb, cfg.src_vocab, cfg.maxout) == (
        base.model_config.hidden,
        base.model_config.emb,
        base.model_config.src_vocab,
        base.model_config.maxout,
    )
    assert tanh.train_config == base.train_config
    assert isinstance(tanh.model().encoder.rnn.cell, TanhCell)
    logs = {
        name: pd.read_csv(run.artifact.file("eval_log.csv"))
        for name, run in (("gru", base), ("tanh", tanh))
    }
    assert (
        list(logs["tanh"]["update"]) == list(logs["gru"]["update"]) == [3, 6]
    )  # evaluated at the same points
    # the GRU stopped earlier is the scorer's run up to there: same minibatches, same dev NLL at
    # update 3
    early = scorer_variant(cache, corpus, base, updates=3)
    assert early.artifact.key not in (base.artifact.key, tanh.artifact.key)
    early_log = pd.read_csv(early.artifact.file("eval_log.csv"))
    assert list(early_log["update"]) == [3]
    assert early_log["dev_nll_sentence"][0] == pytest.approx(
        logs["gru"]["dev_nll_sentence"][0], rel=1e-5
    )
    with pytest.raises(ValueError, match="unit="):
        scorer_variant(cache, corpus, base, unit="lstm")


def test_most_frequent_sample_counts_the_draws():
    """On the model's own draws: the sample drawn most often, as counted here, and its count."""
    from collections import Counter

    from rnnlib import search
    from rnnlib.batch import source_batch

    model, vocab = _smoke_model()
    with torch.no_grad():  # mostly "w5" then EOS: some samples are drawn several times
        model.decoder.output.W_o.bias[vocab.stoi["w5"]] += 3.0
        model.decoder.output.W_o.bias[EOS] += 3.0
    src = ["w1", "w2", "w3"]
    words, count = gating_ablation.most_frequent_sample(
        model, vocab, vocab, src, n=30, generator=torch.Generator().manual_seed(0)
    )
    draws = search.sample(
        model,
        source_batch([vocab.encode(src)]),
        n=30,
        generator=torch.Generator().manual_seed(0),
    )[0]
    counted = Counter(tuple(vocab.decode(h.tokens)) for h in draws)
    assert count == max(counted.values()) > 1 and counted[words] == count
    assert len(counted) > 1  # more than one sample: the mode was chosen among several
    again = gating_ablation.most_frequent_sample(
        model, vocab, vocab, src, n=30, generator=torch.Generator().manual_seed(0)
    )
    assert again == (words, count)


@pytest.mark.parametrize(
    "draws,expected",
    [
        # (words, score) in the order drawn; the rarest sample comes first
        ([("c", -9.0), ("a", -5.0), ("b", -1.0), ("a", -5.0), ("b", -1.0), ("a", -5.0)], ("a", 3)),
        # a tie in count goes to the sample the model scores higher, wherever it was drawn
        ([("a", -5.0), ("b", -1.0), ("a", -5.0), ("b", -1.0), ("c", -0.5)], ("b", 2)),
        # a tie in count and score goes to the first drawn
        ([("c", -2.0), ("a", -2.0), ("a", -2.0), ("c", -2.0)], ("c", 2)),
    ],
)
def test_most_frequent_sample_takes_the_mode_then_the_score_then_the_first(
    monkeypatch, draws, expected
):
    from rnnlib import search

    vocab = Vocab(["a", "b", "c"])
    hyps = [search.Hypothesis(list(vocab.encode([w])), score) for w, score in draws]
    monkeypatch.setattr(search, "sample", lambda model, batch, n, generator=None: [hyps])
    words, count = gating_ablation.most_frequent_sample(None, vocab, vocab, ["a"], n=len(hyps))
    assert (words, count) == ((expected[0],), expected[1])


# -- a corpus the category rules hardly read: measures degrade, they do not raise ----------------


def test_lowercased_or_foreign_text_has_no_names_and_almost_no_categories():
    lowered = [[w.lower() for w in s] for s in SENTENCES]
    assert cats.proper_names(lowered, min_count=2) == {}
    french = "le chat dort dans la maison depuis sept jours".split()
    assert [cats.word_category(w, {}) for w in french] == [None] * len(french)
    assert {cats.phrase_pattern(french[i : i + 4], {}) for i in range(5)} == {"WORD WORD"}


def test_a_category_with_too_few_members_is_left_out_and_named():
    labels, separated, random = _four_classes(n=200)
    labels = labels + ["pronoun"]  # one lone member: no neighbour of its own category possible
    X = np.concatenate([separated, np.zeros((1, separated.shape[1]))])
    m = purity.purity_measure(
        labels, {"trained network": X}, k=10, min_members=2, expected=cats.WORD_CATEGORIES
    )
    assert m.measured and m.reason is None
    assert m.left_out == {"pronoun": 1, "preposition": 0, "determiner": 0}
    assert m.members["number"] == 50 and m.points == 200
    assert list(m.same) == ["trained network", "chance"]
    kept = labels[:-1] + [None]  # the same as measuring without the lone member's label
    np.testing.assert_array_equal(m.same["trained network"], purity.knn_same(X, kept, k=10))
    np.testing.assert_array_equal(m.same["chance"], purity.chance_same(kept))


def test_with_every_category_large_enough_the_measure_is_knn_same_as_before():
    labels, separated, random = _four_classes(n=120)
    m = purity.purity_measure(
        labels, {"trained network": separated, "random vectors": random}, k=10
    )
    assert m.left_out == {} and m.measured
    np.testing.assert_array_equal(
        m.same["trained network"], purity.knn_same(separated, labels, k=10)
    )
    np.testing.assert_array_equal(m.same["random vectors"], purity.knn_same(random, labels, k=10))
    np.testing.assert_array_equal(m.same["chance"], purity.chance_same(labels))
    assert m.purity()["trained network"] == pytest.approx(
        purity.knn_purity(separated, labels, k=10)
    )


@pytest.mark.parametrize(
    "labels, reason",
    [
        ([None] * 30, "no point has a category"),
        (["number"] + [None] * 29, "no point has a category"),  # its one member is left out
        (["time"] * 20 + ["place"] + [None] * 9, "only one category is left (time, 20 points)"),
        (["time"] * 4 + ["place"] * 3 + [None] * 23, "only 7 labelled points"),
    ],
)
def test_nearly_empty_categories_give_a_not_measurable_verdict_instead_of_raising(labels, reason):
    from rnnlib import verdicts

    X = np.random.default_rng(0).normal(size=(len(labels), 8))
    m = purity.purity_measure(
        labels,
        {"trained network": X, "bag of words": purity.bag_of_words([["w"]] * len(labels))},
        k=10,
        min_members=2,
        expected=("time", "place"),
    )
    assert not m.measured and reason in m.reason
    assert all(len(v) == 0 for v in m.same.values()) and list(m.same) == [
        "trained network",
        "bag of words",
        "chance",
    ]
    assert all(np.isnan(v) for v in m.purity().values())
    verdict = verdicts.evaluate(verdicts.not_measurable(f"words: category: {m.reason}"))
    assert verdict.verdict == verdicts.UNMEASURABLE and reason in verdict.reason
    if "labelled points" in reason:
        with pytest.raises(
            ValueError, match="need more than k"
        ):  # what the chapter called before raised
            purity.knn_same(X, labels, k=10)


def test_patterns_keep_lone_members_when_min_members_is_1():
    labels = ["WORD WORD"] * 15 + ["NUM WORD"] * 5 + ["DET NUM"]
    X = np.random.default_rng(0).normal(size=(len(labels), 8))
    m = purity.purity_measure(labels, {"trained network": X}, k=10, min_members=1)
    assert m.measured and m.left_out == {} and m.points == 21
    np.testing.assert_array_equal(m.same["trained network"], purity.knn_same(X, labels, k=10))
    lone = purity.purity_measure(
        ["A", "B", "C"] + [None] * 18, {"trained network": X}, k=1, min_members=1
    )
    assert not lone.measured and "no category has two points" in lone.reason


def test_few_points_lower_the_perplexity_or_stand_a_note_in_for_the_map():
    assert tsne.map_perplexity(30, 5000) == 30.0 and tsne.map_perplexity(10, 300) == 10.0
    assert tsne.map_perplexity(30, 16) == 5.0
    fig = tsne.note_figure("Not drawn: 3 source words; a t-SNE map needs at least 5.")
    assert "Not drawn" in fig.axes[0].texts[0].get_text()
    model, vocab = _smoke_model()
    assert probes.phrase_codes(model, vocab, []).shape == (0, 0)
