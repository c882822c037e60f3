"""The modified Kneser-Ney LM (rnnlib.smt.lm), read back through KenLM."""

import pytest

from rnnlib.smt.lm import NgramLM, estimate, train_arpa

CORPUS = [s.split() for s in ["a b c", "a b a", "b c a b", "c a", "a a b c", "b b", "c b a c"]]


@pytest.mark.parametrize("order", [2, 3, 4])
def test_each_context_sums_to_one(tmp_path, order):
    train_arpa(CORPUS, tmp_path / "lm.arpa", order)
    lm = NgramLM(tmp_path / "lm.arpa")
    outcomes = ["a", "b", "c", "</s>", "<unk>"]
    for ctx in ([], ["<s>"], ["a"], ["<s>", "a"], ["a", "b"], ["c", "c"], ["b", "c", "a"], ["z"]):
        assert sum(lm.conditional(ctx, w) for w in outcomes) == pytest.approx(1.0, abs=1e-5), ctx


def test_probabilities_checked_by_hand(tmp_path):
    # corpus "a b", "b" (order 2). Discounts fall back to (0.5, 1, 1.5) (no n3).
    # continuation counts: a 1, b 2, </s> 1 -> gamma0 = (0.5 + 1 + 0.5) / 4, 4 types with <unk>
    # p(a) = 0.5/4 + 0.5/4 = 0.25, p(b) = 1/4 + 0.125 = 0.375, p(</s>) = 0.25, p(<unk>) = 0.125
    # p(b|a) = (1 - 0.5)/1 + 0.5 p(b) = 0.6875; p(a|<s>) = 0.5/2 + 0.5 p(a) = 0.375
    # p(</s>|b) = (2 - 1)/2 + 0.5 p(</s>) = 0.625
    model = train_arpa([["a", "b"], ["b"]], tmp_path / "lm.arpa", 2)
    assert model.discounts[0] == (0.5, 1.0, 1.5)
    lm = NgramLM(tmp_path / "lm.arpa")
    assert lm.conditional([], "a") == pytest.approx(0.25, abs=1e-5)
    assert lm.conditional([], "b") == pytest.approx(0.375, abs=1e-5)
    assert lm.conditional([], "zzz") == pytest.approx(0.125, abs=1e-5)
    assert lm.conditional(["a"], "b") == pytest.approx(0.6875, abs=1e-5)
    assert lm.conditional(["<s>"], "a") == pytest.approx(0.375, abs=1e-5)
    assert lm.conditional(["b"], "</s>") == pytest.approx(0.625, abs=1e-5)


def test_perplexity_prefers_in_domain_text(tmp_path):
    train_arpa(CORPUS * 3, tmp_path / "lm.arpa", 3)
    lm = NgramLM(tmp_path / "lm.arpa")
    assert lm.perplexity([["a", "b", "c"]]) < lm.perplexity([["c", "c", "c"]])


def test_order_must_be_at_least_two():
    with pytest.raises(ValueError, match="order"):
        estimate(CORPUS, 1)


def test_loading_an_arpa_file_prints_nothing(tmp_path, capfd):
    train_arpa(CORPUS, tmp_path / "lm.arpa", 3)
    capfd.readouterr()
    lm = NgramLM(tmp_path / "lm.arpa")  # KenLM writes from C++ to file descriptor 2
    out, err = capfd.readouterr()
    assert (
        lm.order == 3 and out == "" and err == ""
    )  # no "build a binary file" advice, no progress bar
