"""Phrase extraction and scoring (rnnlib.smt.phrases) and symmetrisation (rnnlib.smt.align)."""

import numpy as np
import pytest

from rnnlib.smt.align import grow_diag_final_and, parse_links
from rnnlib.smt.phrases import PhraseTable, build_phrase_table, extract_spans

SRC = "the house is small".split()
TGT = "das haus ist ja klein".split()  # "ja" is unaligned
LINKS = [(0, 0), (1, 1), (2, 2), (3, 4)]


def pairs(src, tgt, links, max_len):
    return {
        (" ".join(src[a : b + 1]), " ".join(tgt[c : d + 1]))
        for a, b, c, d in extract_spans(links, len(src), len(tgt), max_len)
    }


def test_extraction_gives_exactly_the_consistent_pairs():
    # worked out by hand: every source span, its minimal target span, then widening over "ja"
    expected = {
        ("the", "das"),
        ("the house", "das haus"),
        ("the house is", "das haus ist"),
        ("the house is", "das haus ist ja"),
        ("the house is small", "das haus ist ja klein"),
        ("house", "haus"),
        ("house is", "haus ist"),
        ("house is", "haus ist ja"),
        ("house is small", "haus ist ja klein"),
        ("is", "ist"),
        ("is", "ist ja"),
        ("is small", "ist ja klein"),
        ("small", "klein"),
        ("small", "ja klein"),
    }
    assert pairs(SRC, TGT, LINKS, 7) == expected
    assert len(extract_spans(LINKS, 4, 5, 7)) == 14  # no duplicates


def test_extraction_respects_the_length_limit():
    expected = {
        ("the", "das"),
        ("the house", "das haus"),
        ("house", "haus"),
        ("house is", "haus ist"),
        ("is", "ist"),
        ("is", "ist ja"),
        ("small", "klein"),
        ("small", "ja klein"),
    }
    assert pairs(SRC, TGT, LINKS, 2) == expected


def test_extraction_rejects_inconsistent_spans():
    # a-y, b-x, c-z: "b c" would need "x y z", but y is linked to a, outside the span
    got = pairs("a b c".split(), "x y z".split(), [(0, 1), (1, 0), (2, 2)], 7)
    assert got == {("a", "y"), ("a b", "x y"), ("a b c", "x y z"), ("b", "x"), ("c", "z")}


def test_scores_and_pruning(tmp_path):
    pt = build_phrase_table([SRC, ["is"]], [TGT, ["ist"]], [LINKS, [(0, 0)]], max_len=7, k=None)
    rows = {(" ".join(s), " ".join(t)): sc for s, t, sc in pt.pairs()}
    # c(is, ist) = 2, c(is, ist ja) = 1, c(is) = 3, c(ist) = 2
    assert rows[("is", "ist")][0] == pytest.approx(2 / 3)
    assert rows[("is", "ist ja")][0] == pytest.approx(1 / 3)
    assert rows[("is", "ist")][1] == pytest.approx(1.0)
    # w(ist|is) = 1, w(ja|NULL) = 1 -> lex(ist ja | is) = 1; w(is|ist) = 1 -> lex(is | ist ja) = 1
    assert rows[("is", "ist ja")][2] == pytest.approx(1.0)
    assert rows[("is", "ist ja")][3] == pytest.approx(1.0)
    pruned = build_phrase_table([SRC, ["is"]], [TGT, ["ist"]], [LINKS, [(0, 0)]], max_len=7, k=1)
    kept = {(" ".join(s), " ".join(t)) for s, t, _ in pruned.pairs()}
    assert ("is", "ist") in kept and ("is", "ist ja") not in kept
    assert len({s for s, _ in kept}) == len(kept)  # one target per source phrase
    pruned.save(tmp_path / "pt.npz")
    again = PhraseTable.load(tmp_path / "pt.npz")
    assert list(again.pairs())[0][:2] == list(pruned.pairs())[0][:2]
    np.testing.assert_allclose(again.scores, pruned.scores)
    assert again.lookup(limit=1)[("is",)][0][0] == ("ist",)


# A corpus whose word translation probabilities differ, with unaligned words on both sides, a
# target word linked to two source words and one ("u") both aligned and unaligned. Link counts
# (NULL: unaligned):
#   (a,x) 2, (a,y) 1, (b,x) 1, (b,y) 2, (c,y) 1, (f,u) 1,
#   (NULL,w) 1, (NULL,v) 1, (NULL,u) 1, (e,NULL) 1, (d,NULL) 1
# so w(t|s) = c(s,t) / c(s): w(x|a) = 2/3, w(y|a) = 1/3, w(x|b) = 1/3, w(y|b) = 2/3, w(y|c) = 1,
#    w(u|f) = 1, w(w|NULL) = w(v|NULL) = w(u|NULL) = 1/3;
# and w(s|t) = c(s,t) / c(t): w(a|x) = 2/3, w(b|x) = 1/3, w(b|y) = 1/2, w(a|y) = w(c|y) = 1/4,
#    w(f|u) = 1/2 (c(u) counts its unaligned occurrence), w(e|NULL) = w(d|NULL) = 1/2.
LEX_CORPUS = [
    ("a b", "x y w", [(0, 0), (1, 0), (1, 1)]),  # x <- a and b; w unaligned
    ("a c e", "x y", [(0, 0), (1, 1)]),  # e unaligned
    ("a d", "y", [(0, 0)]),  # d unaligned
    ("b", "y v", [(0, 0)]),  # v unaligned
    ("f", "u u", [(0, 0)]),  # the second u unaligned
]


def test_lexical_weights_by_hand_with_null_and_several_links():
    """lex(t|s, a) = prod_j 1/|{i: (i,j) in a}| sum_{(i,j) in a} w(t_j|s_i), an unaligned t_j
    scoring w(t_j|NULL) (Koehn et al. 2003, Sec. 3.3; Moses' computeLexicalTranslation in
    phrase-extract/score-main.cpp, with w from phrase-extract/extract-lex-main.cpp); lex(s|t)
    symmetrically. Values worked out by hand from the counts above."""
    src = [s.split() for s, _, _ in LEX_CORPUS]
    tgt = [t.split() for _, t, _ in LEX_CORPUS]
    pt = build_phrase_table(src, tgt, [a for _, _, a in LEX_CORPUS], max_len=7, k=None)
    rows = {(" ".join(s), " ".join(t)): sc for s, t, sc in pt.pairs()}
    expected = {  # (lex(t|s), lex(s|t))
        # x: (w(x|a) + w(x|b)) / 2 = 1/2, y: w(y|b) = 2/3, w: w(w|NULL) = 1/3;
        # a: w(a|x) = 2/3, b: (w(b|x) + w(b|y)) / 2 = 5/12
        ("a b", "x y w"): (1 / 2 * 2 / 3 * 1 / 3, 2 / 3 * 5 / 12),
        ("a b", "x y"): (1 / 2 * 2 / 3, 2 / 3 * 5 / 12),
        # x: w(x|a) = 2/3, y: w(y|c) = 1; a: w(a|x) = 2/3, c: w(c|y) = 1/4, e: w(e|NULL) = 1/2
        ("a c e", "x y"): (2 / 3 * 1, 2 / 3 * 1 / 4 * 1 / 2),
        ("a c", "x y"): (2 / 3 * 1, 2 / 3 * 1 / 4),
        ("c e", "y"): (1.0, 1 / 4 * 1 / 2),
        ("c", "y"): (1.0, 1 / 4),
        ("a", "x"): (2 / 3, 2 / 3),
        # y: w(y|a) = 1/3; a: w(a|y) = 1/4, d: w(d|NULL) = 1/2
        ("a d", "y"): (1 / 3, 1 / 4 * 1 / 2),
        ("a", "y"): (1 / 3, 1 / 4),
        # y: w(y|b) = 2/3, v: w(v|NULL) = 1/3; b: w(b|y) = 1/2
        ("b", "y v"): (2 / 3 * 1 / 3, 1 / 2),
        ("b", "y"): (2 / 3, 1 / 2),
        # u: w(u|f) = 1, the second u: w(u|NULL) = 1/3; f: w(f|u) = 1/2
        ("f", "u u"): (1 * 1 / 3, 1 / 2),
        ("f", "u"): (1.0, 1 / 2),
    }
    assert set(rows) == set(expected)  # (the consistent pairs, as a check of the corpus)
    got = {pair: (sc[2], sc[3]) for pair, sc in rows.items()}
    for pair, (lex_t, lex_s) in expected.items():
        assert got[pair] == (pytest.approx(lex_t), pytest.approx(lex_s)), pair
    # (phrase probabilities: "b" is extracted twice, "y" is the target of five pairs)
    assert rows[("b", "y v")][0] == pytest.approx(1 / 2)
    assert rows[("a", "y")][1] == pytest.approx(1 / 5)


def test_lexical_weight_of_a_pair_seen_with_two_alignments_is_the_higher_one():
    """Koehn et al. (2003, after Eq. 7): a pair extracted with different internal alignments keeps
    the highest lexical weight. "a b" / "x y" is seen aligned 0-0 1-1 once and 0-0 0-1 1-1
    twice (first and last): w(x|a) = 3/5, w(y|a) = 2/5, w(y|b) = 1; w(a|x) = 1, w(a|y) = 2/5,
    w(b|y) = 3/5. Diagonal: lex(t|s) = 3/5 * 1, lex(s|t) = 1 * 3/5; with the extra link:
    lex(t|s) = 3/5 * (2/5 + 1) / 2 = 21/50 and lex(s|t) = (1 + 2/5) / 2 * 3/5 = 21/50."""
    extra = [(0, 0), (0, 1), (1, 1)]
    links = [extra, [(0, 0), (1, 1)], extra]
    pt = build_phrase_table([["a", "b"]] * 3, [["x", "y"]] * 3, links, max_len=7, k=None)
    rows = {(" ".join(s), " ".join(t)): sc for s, t, sc in pt.pairs()}
    assert rows[("a b", "x y")].tolist() == pytest.approx([1.0, 1.0, 3 / 5, 3 / 5])


def test_grow_diag_final_and():
    # the neighbour (1,2) of an intersection point is added; (2,2) then neighbours (1,2)
    assert grow_diag_final_and([(0, 0), (1, 1), (1, 2)], [(0, 0), (1, 1), (2, 2)], 3, 3) == [
        (0, 0),
        (1, 1),
        (1, 2),
        (2, 2),
    ]
    # final-and: a lone union link joins only if both its words are unaligned
    assert grow_diag_final_and([(0, 0), (2, 2)], [(0, 0)], 3, 3) == [(0, 0), (2, 2)]
    assert grow_diag_final_and([(0, 0), (0, 2)], [(0, 0)], 3, 3) == [(0, 0)]


def test_parse_links_names_the_bad_line():
    with pytest.raises(ValueError, match="f.txt:3"):
        parse_links("0-0 5-1", 2, 2, where="f.txt:3")
