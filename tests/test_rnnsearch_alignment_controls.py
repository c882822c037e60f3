"""B Fig. 3's controls and the agreement with eflomal on hand-made weight matrices: the
position-only aligner's shape, rows and peaks, the article rows' spread against the other rows
(a case where it is above 0 and one where it is not), and precision, recall and AER of a hand
case."""

from __future__ import annotations

import numpy as np
import pytest

from rnnlib.experiments.rnnsearch import agreement as ag
from rnnlib.experiments.rnnsearch import alignment_controls as ac


def _rows(rng, rows: int, cols: int) -> np.ndarray:
    w = rng.dirichlet(np.full(cols, 0.3), size=rows)
    return w


@pytest.mark.parametrize("shape", [(1, 1), (3, 1), (1, 4), (2, 2), (5, 9), (12, 4), (9, 9)])
def test_the_position_only_aligner_keeps_shape_rows_and_sharpness(shape):
    w = _rows(np.random.default_rng(sum(shape)), *shape)
    d = ac.diagonal_aligner(w)
    assert d.shape == w.shape
    np.testing.assert_allclose(d.sum(1), 1.0)
    assert (d >= 0).all()
    rows, cols = shape
    for j in range(rows):
        p = ac.diagonal_position(j, rows, cols)
        c = int(np.floor(p + 0.5))
        assert d[j].argmax() == c  # the peak sits on the diagonal
        if cols > 1:
            assert d[j, c] == pytest.approx(w[j].max())  # as sharp as the trained row
    if rows > 1 and cols > 1:
        assert d[0].argmax() == 0 and d[-1].argmax() == cols - 1  # first word, end on <end>


def test_the_position_only_aligner_spreads_its_rest_by_a_fixed_rule():
    w = np.array([[0.8, 0.05, 0.05, 0.05, 0.05], [0.1, 0.1, 0.2, 0.3, 0.3], [0.25] * 4 + [0.0]])
    d = ac.diagonal_aligner(w)
    # row 0 (p = 0), a peak over 2/3: 0.8 on 0, the rest beside it, no floor
    np.testing.assert_allclose(d[0], [0.8, 0.2, 0, 0, 0])
    # row 1 (p = 2), peak 0.3: floor f and bump b with b + f = 0.3 and 1.5 b + 5 f = 1
    b = (0.3 - 0.2) / (1 - 0.3)
    f = (1 - 1.5 * b) / 5
    np.testing.assert_allclose(d[1], [f, f, b + f, b / 2 + f, f])
    assert b + f == pytest.approx(0.3)
    # row 2 (p = 4, the last column): its neighbour is the previous column
    assert d[2].argmax() == 4 and d[2, 3] > d[2, 2] == pytest.approx(d[2, 0])
    # a fractional position gives its neighbour toward it: 3 rows over 4 columns, p = 1.5
    d = ac.diagonal_aligner(np.array([[0.7, 0.1, 0.1, 0.1]] * 3))
    assert d[1, 2] == pytest.approx(0.7) and d[1, 1] == pytest.approx(0.3)  # p rounds up to 2
    # a peak at or under 2/3 is still the row's only largest weight
    d = ac.diagonal_aligner(np.full((4, 6), 1 / 6) + np.eye(4, 6) * 0.01)
    assert all(np.sum(row == row.max()) == 1 for row in d)


def test_article_rows_are_read_lowercased():
    words = ["L'", "homme", "est", "là", "avec", "d'", "autres", "Des", "une", "de"]
    assert ac.article_rows(words).tolist() == [1, 0, 0, 0, 0, 1, 0, 1, 1, 0]


def _spread_rows(n_sent: int, article_spreads: bool) -> tuple[list, list]:
    """Sentences of 6 words, words 1 and 4 articles; the article rows spread (largest weight 0.4)
    and the others do not, or the other way round."""
    mats, flags = [], []
    for _ in range(n_sent):
        f = np.array([0, 1, 0, 0, 1, 0], dtype=bool)
        w = np.full((7, 8), 0.0)
        for j in range(6):
            spread = f[j] == article_spreads
            w[j, j], w[j, j + 1] = (0.4, 0.35) if spread else (0.95, 0.01)
            w[j] += (1 - w[j].sum()) / 8
        w[6, 7] = 1.0
        mats.append(w)
        flags.append(f)
    return mats, flags


def test_article_rows_that_spread_more_than_the_others_give_a_difference_above_0():
    mats, flags = _spread_rows(30, article_spreads=True)
    r = ac.row_spread(mats, flags, 0.7)
    assert r.articles.tolist() == [2] * 30 and r.others_spread.tolist() == [0] * 30
    v, lo, hi = ac.spread_difference(r, 200, np.random.default_rng(0))
    assert v == pytest.approx(100) and lo > 0
    # the control: as many rows drawn at random per sentence, counts kept, the words forgotten
    shuffled = ac.shuffled_flags(flags, 1)
    assert [f.sum() for f in shuffled] == [f.sum() for f in flags]
    assert any((a != b).any() for a, b in zip(shuffled, flags))
    c = ac.spread_difference(ac.row_spread(mats, shuffled, 0.7), 200, np.random.default_rng(0))
    assert c[1] < 0 < c[2] or abs(c[0]) < 30  # far from the claim's 100 points


def test_article_rows_that_do_not_spread_give_a_difference_below_0():
    mats, flags = _spread_rows(30, article_spreads=False)
    v, lo, hi = ac.spread_difference(ac.row_spread(mats, flags, 0.7), 200, 0)
    assert v == pytest.approx(-100) and hi < 0
    empty = ac.row_spread([], [], 0.7)
    assert np.isnan(ac.spread_difference(empty, 10, 0)[0])
    with pytest.raises(ValueError):
        ac.row_spread(mats[:1], [np.ones(3, bool)], 0.7)


def test_attention_links_leave_out_the_end_row_and_words_on_end():
    w = np.array(
        [
            [0.7, 0.2, 0.1],  # word 0 -> source 0
            [0.1, 0.8, 0.1],  # word 1 -> source 1
            [0.1, 0.2, 0.7],  # word 2 -> <end>: no link
            [0.0, 0.0, 1.0],  # the end row: left out
        ]
    )
    assert ag.attention_links(w) == {(0, 0), (1, 1)}


def test_precision_recall_and_aer_of_a_hand_case():
    proposed = [{(0, 0), (1, 1), (2, 1)}, {(0, 0)}]
    sure = [{(0, 0), (1, 1), (2, 2), (3, 3)}, {(0, 0)}]
    counts = ag.link_counts(proposed, sure)
    assert counts.common.tolist() == [2, 1]
    p, r, aer = counts.scores()
    assert p == pytest.approx(75.0)  # 3 of 4 proposed links are eflomal's
    assert r == pytest.approx(60.0)  # 3 of eflomal's 5 are found
    assert aer == pytest.approx(100 * (1 - 6 / 9))  # 1 - 2 |A & S| / (|A| + |S|)
    assert counts.scores(np.array([1])) == (100.0, 100.0, 0.0)
    with pytest.raises(ValueError):
        ag.link_counts(proposed, sure[:1])


def test_the_agreement_table_scores_each_aligner_against_the_sure_links():
    eye = np.eye(5)  # 4 words on 4 source words and the end on <end>
    sure = [{(i, i) for i in range(4)}] * 3
    counts = ag.aligner_counts({"diagonal": [eye] * 3, "off": [np.roll(eye, -1, 1)] * 3}, sure)
    table = ag.agreement_table(counts)
    assert list(table.columns) == ["precision (%)", "recall (%)", "AER (%)"]
    assert table.loc["diagonal"].tolist() == [100.0, 100.0, 0.0]
    assert table.loc["off", "AER (%)"] == 100.0  # word 0 on <end>, the others one word off


def _reordered(n_sent: int) -> tuple[list, list]:
    """Sentences of 6 words whose alignment inverts words 1-2 and 3-4 (eflomal's links say so),
    the network's weights sharp on the inverted positions."""
    order = [0, 2, 1, 4, 3, 5]
    sure = [{(i, j) for j, i in enumerate(order)}] * n_sent
    w = np.full((7, 7), 0.01)
    for j, i in enumerate(order):
        w[j, i] = 0.94
    w[6, 6] = 0.94
    return [w / w.sum(1, keepdims=True)] * n_sent, sure


def test_the_network_beats_the_position_only_aligner_where_it_follows_the_links():
    mats, sure = _reordered(30)
    net = ag.aligner_counts({"x": mats}, sure)["x"]
    diag = ag.aligner_counts({"x": ac.diagonal_matrices(mats)}, sure)["x"]
    assert net.scores()[2] == 0 and diag.scores()[2] > 50
    gain, lo, hi = ac.aer_gain(net, diag, 200, 0)
    assert gain == pytest.approx(diag.scores()[2]) and lo > 0
    # the control: the same rows given to other words; it does not beat the diagonal
    shuffled = ag.aligner_counts({"x": ac.shuffled_rows(mats, 1)}, sure)["x"]
    assert ac.aer_gain(shuffled, diag, 200, 0)[2] < 20
    # nor does an aligner that follows position alone beat itself
    assert ac.aer_gain(diag, diag, 50, 0) == (0.0, 0.0, 0.0)


def test_shuffled_rows_keep_each_row_and_the_end_row():
    mats, _ = _reordered(3)
    out = ac.shuffled_rows(mats, 2)
    for w, s in zip(mats, out):
        np.testing.assert_array_equal(s[-1], w[-1])
        assert sorted(map(tuple, s[:-1])) == sorted(map(tuple, w[:-1]))
    assert any((s != w).any() for w, s in zip(mats, out))


def test_eflomal_links_the_no_unk_test_pairs_with_the_training_pairs(tmp_path):
    from pathlib import Path
    from types import SimpleNamespace

    from rnnlib.cache import ArtifactCache
    from rnnlib.experiments.rnnsearch import setting

    src = ["the man sees the house", "a man", "the house is big", "the big house"] * 10
    tgt = ["l' homme voit la maison", "un homme", "la maison est grande", "la grande maison"] * 10
    text = {("train", "src"): src, ("train", "tgt"): tgt}
    text |= {("test", "src"): ["the man", "the house", "a big man"]}
    text |= {("test", "tgt"): ["l' homme", "la maison", "un grand homme"]}
    corpus = SimpleNamespace(train=src, text=lambda split, side: text[(split, side)], checksum="c")
    root = Path(__file__).resolve().parents[1]
    P = setting.Params(max_train=30, profile="smoke")
    ex = SimpleNamespace(
        corpus=corpus, P=P, test=np.arange(3), cache=ArtifactCache(tmp_path), root=root
    )
    tr = SimpleNamespace(known=np.array([True, False, True]))  # the second pair has an unknown word
    art = ag.reference_links(ex, tr)
    links = ag.read_links(art)
    assert len(links) == 2 and art.config["train_pairs"] == 30
    assert art.kind == "smt/test_links" and art.extra["aligned_pairs"] == 32
    assert all(i < 3 and j < 3 for i, j in links[1]) and links[0]  # "a big man" / "un grand homme"
    assert ag.reference_links(ex, tr).from_cache
