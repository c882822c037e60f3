"""The representations chapter's claims: the leak of the defining word, the controls,
the floor, and NaN never counted as evidence. Each rule on evidence where the claim holds, where
it fails, and on its control (whose verdict must not be "holds")."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from rnnlib import stats
from rnnlib import verdicts
from rnnlib.experiments.representations import categories as cats
from rnnlib.experiments.representations import floor, gates, gating_ablation, purity, purity_claims
from rnnlib.experiments.representations.setting import Params

PARAMS = Params(neighbours=5, min_members=2, n_boot=200, seed=1)
CLASSES = ("time", "place", "person", "number")


def _word_coded(n=200, words_per_class=4, seed=0):
    """``n`` points of four classes; each point's class is defined by one of a few words of its
    class, and the representation encodes only that word (plus a little noise): a bag of words of
    the defining word."""
    rng = np.random.default_rng(seed)
    labels = [CLASSES[i % 4] for i in range(n)]
    word = [f"{lab}{rng.integers(words_per_class)}" for lab in labels]
    vocab = sorted(set(word))
    X = np.zeros((n, len(vocab)))
    X[np.arange(n), [vocab.index(w) for w in word]] = 1
    return labels, [frozenset([w]) for w in word], X + rng.normal(scale=0.01, size=X.shape)


def test_a_representation_of_the_defining_word_alone_scores_no_hit_once_the_word_is_excluded():
    labels, defining, X = _word_coded()
    leaky = purity.knn_same(X, labels, k=5)  # the neighbours share the very word: all hits
    assert leaky.mean() == 1.0
    fair = purity.knn_same(X, labels, k=5, defining=defining)
    chance = purity.chance_same(labels, defining)
    diff = stats.bootstrap_mean(fair - chance, 500, 0)
    assert diff[1] < 0.1 and verdicts.evaluate(
        verdicts.intervals_above([("x", *diff)])
    ).verdict in (
        verdicts.NOISE,
        verdicts.FAILS,
    )


def test_chance_counts_only_the_neighbours_that_do_not_share_the_defining_word():
    labels = ["time", "time", "time", "place", "place"]
    defining = [frozenset(["day"]), frozenset(["day"]), frozenset(["year"]), {"Ur"}, {"Ur"}]
    got = purity.chance_same(labels, defining)
    # point 0 may count 2 (year), 3, 4: one of three shares its class; point 3 may count 0, 1, 2
    np.testing.assert_allclose(got, [1 / 3, 1 / 3, 2 / 4, 0, 0])
    np.testing.assert_allclose(
        purity.chance_same(labels), [2 / 4, 2 / 4, 2 / 4, 1 / 4, 1 / 4]
    )  # without the rule: (n_c - 1) / (N - 1)


def test_a_point_with_no_neighbour_it_may_count_is_left_out_of_every_representation():
    labels = ["a"] * 6 + ["b"] * 6 + ["c"]
    defining = [frozenset(["w"])] * 12 + [frozenset(["w"])]  # c shares w with everyone
    defining = [frozenset([f"w{i}"]) for i in range(12)] + [
        frozenset(["w0", *[f"w{i}" for i in range(12)]])
    ]
    X = np.random.default_rng(0).normal(size=(13, 4))
    m = purity.purity_measure(labels, {"x": X}, k=3, min_members=1, defining=defining)
    assert m.alone == 1 and m.points == 12 and len(m.same["x"]) == 12 == len(m.same["chance"])


def test_defining_words_are_the_class_words_the_first_two_words_and_the_word_itself():
    names = {"Egypt": "place", "Moses": "person"}
    assert cats.class_words("for seven days in Egypt".split(), names) == {"days"}
    assert cats.class_words("Moses went to Egypt".split(), names) == frozenset()  # unlabelled
    assert cats.class_words("out of Egypt".split(), names) == {"Egypt"}
    assert cats.pattern_words("In the land of".split()) == {"in", "the"}
    assert cats.word_key("Day") == {"day"}


def test_the_context_count_baseline_leaves_out_the_cues_that_tell_places_from_people():
    sentences = [["went", "into", "Egypt", "today"], ["and", "Moses", "said", "so"]]
    leaky = purity.context_counts(["Egypt"], sentences)
    fair = purity.context_counts(["Egypt"], sentences, exclude=cats.CUE_WORDS)
    assert leaky.sum() == 3 and fair.sum() == 2  # "into" is a place cue


def _measures(trained_sep: float, seed=0, n=160):
    """Phrases of four classes with distinct defining words; the trained codes separate the
    classes by ``trained_sep``, the untrained network's two draws do not."""
    rng = np.random.default_rng(seed)
    labels = [CLASSES[i % 4] for i in range(n)]
    defining = [frozenset([f"{lab}{i}"]) for i, lab in enumerate(labels)]  # all distinct
    centres = {c: rng.normal(size=16) for c in CLASSES}
    trained = np.array([centres[c] * trained_sep for c in labels]) + rng.normal(size=(n, 16))
    reps = {
        "trained network": trained,
        "untrained network": rng.normal(size=(n, 16)),
        purity_claims.SECOND: rng.normal(size=(n, 16)),
        "bag of words": rng.normal(size=(n, 16)),
        "random vectors": rng.normal(size=(n, 16)),
    }
    m = purity.purity_measure(labels, reps, k=5, expected=CLASSES, defining=defining)
    m.leak[purity_claims.LEAKY] = 0.5
    return {col: m for col in purity_claims.PURITY_CLAIMS}


def test_a_clustering_claim_holds_when_trained_codes_cluster_and_not_when_nothing_was_learned():
    for c in purity_claims.purity_claims(_measures(3.0), PARAMS):
        v = verdicts.evaluate(c.check)
        assert v.verdict == verdicts.HOLDS, v
        assert v.control not in (None, verdicts.HOLDS), v  # the control: two untrained draws
    measures = _measures(3.0)
    m = measures["words: category"]
    m.same["trained network"] = m.same["untrained network"].copy()  # training changed nothing
    for c in purity_claims.purity_claims(measures, PARAMS):
        v = verdicts.evaluate(c.check)
        assert v.verdict != verdicts.HOLDS and v.control != verdicts.HOLDS, v


def test_each_clustering_claim_is_one_function_with_its_id_and_glue_name():
    measures = _measures(3.0)
    found = [
        purity_claims.claim_f4_1(measures, PARAMS),
        purity_claims.claim_f5_1(measures, PARAMS),
        purity_claims.claim_f5_2(measures, PARAMS),
    ]
    assert [(c.claim, c.glue) for c in found] == [
        ("C-A-F4-1", "rep-verdict-words"),
        ("C-A-F5-1", "rep-verdict-sem"),
        ("C-A-F5-2", "rep-verdict-pat"),
    ]
    # what purity_claims gives the chapter is each claim function's check
    together = purity_claims.purity_claims(measures, PARAMS)
    assert [c.check for c in together] == [c.check for c in found]


def test_the_classes_left_out_are_listed_within_80_characters_and_the_check_names_all():
    lone = ["a", "b", "c", "d", "e", "f", "g", "h"]  # one point each: all left out
    labels = ["time"] * 30 + ["place"] * 30 + lone
    rng = np.random.default_rng(0)
    names = ("trained network", "untrained network", purity_claims.SECOND, "bag of words")
    reps = {name: rng.normal(size=(len(labels), 8)) for name in (*names, "random vectors")}
    m = purity.purity_measure(labels, reps, k=5, min_members=2, expected=("person",))
    found = purity_claims.purity_claims({c: m for c in purity_claims.PURITY_CLAIMS}, PARAMS)[0]
    assert found.measured and found.left_out.startswith("*person* (0), *a* (1), *b* (1)")
    assert len(found.left_out) <= purity_claims.LEFT_WIDTH and found.left_out.endswith(" more")
    assert all(f"{c} (1)" in found.check.note for c in lone) and "person (0)" in found.check.note


def test_the_control_holding_makes_the_claim_not_measurable():
    """If the untrained network beat chance and its second draw, the rule could not tell
    training from a lucky initialisation: the engine says not measurable."""
    measures = _measures(3.0)
    m = measures["words: category"]
    m.same["untrained network"] = m.same["trained network"].copy()  # "untrained" clusters
    found = purity_claims.purity_claims(measures, PARAMS)[0]
    v = verdicts.evaluate(found.check)
    assert v.control == verdicts.HOLDS and v.verdict == verdicts.UNMEASURABLE
    assert "the rule also holds on the control" in v.reason


def test_below_the_floor_every_claim_is_not_measurable():
    below = floor.LearnedFloor(network_nll=30.0, unigram_nll=29.0)  # worse than the unigram model
    above = floor.LearnedFloor(network_nll=20.0, unigram_nll=29.0)
    for c in purity_claims.purity_claims(_measures(3.0), PARAMS, below):
        v = verdicts.evaluate(c.check)
        assert v.verdict == verdicts.UNMEASURABLE and "below the floor of 0" in v.reason
    for c in purity_claims.purity_claims(_measures(3.0), PARAMS, above):
        assert verdicts.evaluate(c.check).verdict == verdicts.HOLDS


def _ablation(nll_tanh, nll_gru, unigram=40.0):
    gap = np.asarray(nll_tanh) - np.asarray(nll_gru)
    return SimpleNamespace(
        interval=stats.bootstrap_mean(gap, 200, 1),
        nll_gru=np.asarray(nll_gru, dtype=float),
        gap=gap,
        updates=10,
        floor_value=unigram - float(np.mean(nll_gru)),
    )


def test_gru1_holds_when_tanh_is_worse_fails_when_better_and_its_control_never_holds():
    rng = np.random.default_rng(0)
    gru = 20 + rng.normal(size=100)
    worse = verdicts.evaluate(gating_ablation.claim_gru_1(_ablation(gru + 3, gru), 200, 1).check)
    assert worse.verdict == verdicts.HOLDS and worse.control == verdicts.NOISE
    better = verdicts.evaluate(gating_ablation.claim_gru_1(_ablation(gru - 3, gru), 200, 1).check)
    assert better.verdict == verdicts.FAILS and better.control == verdicts.NOISE
    low = verdicts.evaluate(
        gating_ablation.claim_gru_1(_ablation(gru + 3, gru, unigram=15.0), 200, 1).check
    )
    assert low.verdict == verdicts.UNMEASURABLE and "below the floor" in low.reason


def test_a_diverged_tanh_network_is_never_evidence_for_gru1():
    """A NaN dev NLL (a diverged run) is not "infinitely worse": the claim is not measurable."""
    gru = 20 + np.random.default_rng(0).normal(size=50)
    tanh = gru + 3
    tanh[7] = np.nan
    abl = _ablation(tanh, gru)
    assert np.isnan(abl.interval).all()  # nothing turned the NaN into a number first
    v = verdicts.evaluate(gating_ablation.claim_gru_1(abl, 200, 1).check)
    assert v.verdict == verdicts.UNMEASURABLE and "NaN" in v.reason


def _gates(memory, reset, update, control=None):
    from scipy.stats import spearmanr

    rho, p, interval = {}, {}, {}
    for gate, x in (("reset", reset), ("update", update)):
        rho[gate], p[gate] = spearmanr(x, memory)
        interval[gate] = stats.bootstrap_spearman(x, memory, 300, 0)[1:]
    act = {"reset_active": reset, "update_active": update}
    return gates.GateMemory([["a"]] * 3, 3, 2, act, memory, rho, p, interval, control)


@pytest.mark.slow  # bootstraps: about 4 s
def test_gru2_is_not_measurable_when_the_untrained_gates_already_show_the_relation():
    rng = np.random.default_rng(0)
    memory = rng.random(64)
    predicted = (1 - memory + rng.normal(scale=0.1, size=64), memory + 0.05)
    untrained_same = _gates(memory, *predicted)
    v = verdicts.evaluate(gates.claim_gru_2(_gates(memory, *predicted, untrained_same)).check)
    assert v.control == verdicts.HOLDS and v.verdict == verdicts.UNMEASURABLE
    flat = _gates(rng.random(64), rng.random(64), rng.random(64))
    v = verdicts.evaluate(gates.claim_gru_2(_gates(memory, *predicted, flat)).check)
    assert v.verdict == verdicts.HOLDS and v.control != verdicts.HOLDS
    below = floor.LearnedFloor(30.0, 29.0)
    v = verdicts.evaluate(gates.claim_gru_2(_gates(memory, *predicted, flat), below).check)
    assert v.verdict == verdicts.UNMEASURABLE and "below the floor" in v.reason
    with pytest.raises(ValueError, match="control"):
        gates.claim_gru_2(_gates(memory, *predicted))
