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
