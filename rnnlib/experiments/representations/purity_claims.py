"""The clustering claims of paper A's Figs. 4--7 measured (C-A-F4-1, C-A-F5-1, C-A-F5-2): the
nearest-neighbour class purity of every representation against its baselines (:mod:`.purity`),
the purity table, and each claim judged against chance and the untrained network, with its
control and its second verdict against the bag of words.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ... import stats, verdicts
from ...book import claims
from .categories import CUE_WORDS, WORD_CATEGORIES, class_words, pattern_words, word_key
from .floor import LearnedFloor
from .labelled_points import PHRASE_CLASSES, LabelledPoints
from .purity import (
    CONTEXT_WINDOW,
    CONTEXT_WORDS,
    Purity,
    bag_of_words,
    context_counts,
    knn_purity,
    purity_measure,
)
from .setting import Params

PURITY_EXTRA = [
    "neighbours",
    "n_words",
    "n_phrases",
    "min_phrase_len",
    "name_min_count",
    "min_members",
]


#: each column of the purity table: its claim, the key of its glue names, the key of its numbers
PURITY_CLAIMS = {
    "words: category": ("C-A-F4-1", "words", "word"),
    "phrases: semantic class": ("C-A-F5-1", "sem", "sem"),
    "phrases: pattern": ("C-A-F5-2", "pat", "pat"),
}
#: the classes a column counts as present (with 0 points when absent)
EXPECTED = {
    "words: category": WORD_CATEGORIES,
    "phrases: semantic class": PHRASE_CLASSES,
    "phrases: pattern": (),
}
#: the rows of the purity table, in order (``chance`` is added by the measure, the leak check
#: after it)
SECOND = "untrained network, second initialisation"
LEAKY = "bag of words, leak kept"
ROWS = ("trained network", "untrained network", SECOND, "bag of words", "random vectors")
#: the row of the bag of words at the network's size (:mod:`.sized_bags`), after the bag of
#: words when the chapter gives it
SIZED = "bag of words, network's size"
#: the rows of the purity table behind each number's key
SHOWN_ROWS = {
    "trained": "trained network",
    "untrained": "untrained network",
    "second": SECOND,
    "bow": "bag of words",
    "sized": SIZED,
    "leaky": LEAKY,
    "chance": "chance",
}
#: what a neighbour may not share with a point for it to count, per column
DEFINING = {
    "words: category": "the same word (lowercased)",
    "phrases: semantic class": "a word that sets the class (its time word, name or number)",
    "phrases: pattern": "one of the first two words (whose tags make the pattern)",
}


def min_members(column: str, P: Params) -> int:
    """The fewest labelled points a class of ``column`` needs to be measured: ``min_members``,
    but 1 for the patterns (every phrase has one, so all are kept)."""
    return 1 if column == "phrases: pattern" else P.min_members


def defining_words(points: LabelledPoints) -> dict[str, list[frozenset[str]]]:
    """Per column, each point's defining words (:func:`~.categories.word_key`,
    :func:`~.categories.class_words`, :func:`~.categories.pattern_words`): a neighbour
    sharing one of them does not count (:func:`~.purity.knn_same`)."""
    return {
        "words: category": [word_key(w) for w in points.words],
        "phrases: semantic class": [class_words(p, points.names) for p in points.phrases],
        "phrases: pattern": [pattern_words(p) for p in points.phrases],
    }


def purity_measures(
    points: LabelledPoints, P: Params, rng: np.random.Generator, sized: dict | None = None
) -> dict[str, Purity]:
    """The ``neighbours``-NN class purity of the three columns (word categories, phrases'
    semantic classes, phrases' patterns) in each representation: the trained and untrained
    network (and its second initialisation when ``points`` has it), the bag of words (for words:
    counts of the words around them, the place cues :data:`~.categories.CUE_WORDS` left out)
    and Gaussian random vectors of the trained vectors' shape (drawn with ``rng`` for every
    column, measured or not). A neighbour sharing a point's defining word
    (:func:`defining_words`) does not count, in every representation alike. The leak check
    (``Purity.leak``): the bag of words as it was before that rule, neighbours sharing the word
    counted and, for words, the cues among the contexts. ``sized``: per column, the bag of words
    at the network's size (:func:`.sized_bags.sized_bags`), a row of its own (:data:`SIZED`)
    after the bag of words; without it, that row is NaN."""
    bow = bag_of_words(points.phrases)
    contexts = context_counts(points.words, points.train_sentences, exclude=CUE_WORDS)
    leaky_words = context_counts(points.words, points.train_sentences)
    defining = defining_words(points)
    columns = {
        "words: category": (
            points.word_cat, points.emb, points.emb0, points.emb1, contexts, leaky_words
        ),
        "phrases: semantic class": (points.sem, points.codes, points.codes0, points.codes1, bow,
                                    bow),
        "phrases: pattern": (points.pat, points.codes, points.codes0, points.codes1, bow, bow),
    }  # fmt: skip
    measures = {}
    for col, (labels, trained, init, second, baseline, leaky) in columns.items():
        representations = {"trained network": trained, "untrained network": init}
        if second is not None:
            representations[SECOND] = second
        representations["bag of words"] = baseline
        if sized is not None:
            representations[SIZED] = sized[col]
        representations["random vectors"] = rng.normal(size=trained.shape)
        m = purity_measure(
            labels, representations, P.neighbours, min_members(col, P),
            EXPECTED[col], defining[col],
        )  # fmt: skip
        if m.measured:
            m.leak[LEAKY] = knn_purity(leaky, m.labels, P.neighbours)
        measures[col] = m
    return measures


def _rows(m: Purity) -> dict[str, float]:
    """A column of the purity table: each representation, chance and the leak check."""
    return {**m.purity(), LEAKY: m.leak.get(LEAKY, float("nan"))}


def purity_table(measures: dict[str, Purity]) -> pd.DataFrame:
    """The purity table: one column per measure, one row per representation, chance and the leak
    check (NaN for a column not measured), rounded to 3 digits."""
    table = pd.DataFrame({col: _rows(m) for col, m in measures.items()}).round(3)
    table.index.name = "representation"
    return table


def numbers(measures: dict[str, Purity], P: Params) -> dict:
    """The purity of the trained and untrained network (both initialisations), the bag of words
    with and without its leak and chance for each column
    (``rep-<word|sem|pat>-<trained|untrained|second|bow|leaky|chance>``), the trained purity
    minus the bag of words' (``rep-<key>-bow-gap``, a headline number of the rebuild spread:
    :func:`.rebuilds.row_of`), the points left out
    for having no neighbour they may count (``rep-<key>-alone``), the bootstrap resamples and
    the neighbours."""
    out = {
        f"rep-{num}-{rkey}": (_rows(measures[col]).get(row, float("nan")), 3)
        for col, (_, _, num) in PURITY_CLAIMS.items()
        for rkey, row in SHOWN_ROWS.items()
    }
    out |= {f"rep-{num}-alone": measures[col].alone for col, (_, _, num) in PURITY_CLAIMS.items()}
    out |= {
        f"rep-{num}-bow-gap": (bow_gap(measures[col].purity()), 3)
        for col, (_, _, num) in PURITY_CLAIMS.items()
    }
    return out | {"rep-n-boot": P.n_boot, "rep-neighbours": P.neighbours}


def bow_gap(values: dict[str, float]) -> float:
    """The trained network's purity minus the bag of words' (``values``: a column's purity per
    representation, :meth:`~.purity.Purity.purity`; NaN where either is missing)."""
    return values.get("trained network", np.nan) - values.get("bag of words", np.nan)


def sized_numbers(measures: dict[str, Purity], P: Params) -> dict:
    """Per column, the trained network's purity minus that of the bag of words at its size
    (:data:`SIZED`) per labelled point, with its 95% bootstrap interval
    (``rep-<key>-sized-<diff|lo|hi>``; NaN where the column or the row was not measured):
    context for the claim, not a verdict."""
    out = {}
    for col, (_, _, num) in PURITY_CLAIMS.items():
        m = measures[col]
        found = m.measured and SIZED in m.same
        _, d, lo, hi = _diff(m, "trained network", SIZED, P, col) if found else ("", *[np.nan] * 3)
        out |= {f"rep-{num}-sized-{k}": (v, 3) for k, v in (("diff", d), ("lo", lo), ("hi", hi))}
    return out


def baseline_numbers() -> dict:
    """The bag of words' settings for words (:mod:`.purity`): its context words and window."""
    return {"rep-context-words": CONTEXT_WORDS, "rep-context-window": CONTEXT_WINDOW}


@dataclass
class PurityClaim:
    """One clustering claim (:func:`purity_claims`): its ID, the key of its glue names
    (``rep-<verdict|control|bow|result|left>-<key>``), the check to record (the trained
    representation against chance and the untrained network), the second verdict's check
    (against the bag of words, glued, not recorded), whether it was measured and the classes
    left out for too few points."""

    claim: str
    key: str
    check: verdicts.Check
    bow_check: verdicts.Check
    measured: bool
    left_out: str


def _noise(m: Purity, k: int, col: str, left_note: str) -> str:
    alone = f"; {m.alone} points with no neighbour they may count left out" if m.alone else ""
    return (
        f"{k}-NN class purity over {m.points} labelled points; a neighbour sharing "
        f"{DEFINING[col]} does not count{alone}; 95% bootstrap interval over the points (their "
        "neighbour lists as computed): covers the sampling of the points, not the training seed "
        "(one run) nor the initialisation (one draw; the control's second draw shows its size)"
        + (f"; {left_note}" if left_note else "")
    )


def _diff(m: Purity, a: str, b: str, P: Params, col: str):
    """``(label, mean, low, high)`` of ``a - b`` per point (bootstrap, ``n_boot``, ``seed``:
    every difference of a column over the same resamples)."""
    diff = stats.bootstrap_mean(m.same[a] - m.same[b], P.n_boot, P.seed)
    short = {SECOND: "second initialisation"}
    return (f"{col}, {short.get(a, a)} − {short.get(b, b)}", *diff)


#: the longest list of left-out classes the prose shows (characters; the verdict names all)
LEFT_WIDTH = 80


def _left_out(col: str, m: Purity, P: Params) -> tuple[str, str]:
    """What ``col`` left out for too few points: the classes with their counts for the prose (as
    many as fit in :data:`LEFT_WIDTH` characters, then how many more) and for the check's note
    (every one); both ``""`` when nothing was."""
    fewest = min_members(col, P)
    items = [f"*{c}* ({n})" for c, n in m.left_out.items()]
    if not items:
        return "", ""
    note = f"left out for fewer than {fewest} points: {', '.join(items).replace('*', '')}"
    shown = len(items)
    while shown > 1 and len(_listed(items, shown)) > LEFT_WIDTH:
        shown -= 1
    return _listed(items, shown), note


def _listed(items: list[str], shown: int) -> str:
    """The first ``shown`` of ``items``, and how many more there are."""
    more = len(items) - shown
    return ", ".join(items[:shown]) + (f" and {more} more" if more else "")


def _unmeasured(col: str, m: Purity, P: Params) -> verdicts.Check | None:
    """The not-measurable check of a column with nothing to measure (``None``: measured)."""
    if m.measured:
        return None
    left_note = _left_out(col, m, P)[1]
    return verdicts.not_measurable(f"{col}: {m.reason}" + (f" ({left_note})" if left_note else ""))


def clustering_check(
    col: str, measures: dict[str, Purity], P: Params, floor: LearnedFloor | None
) -> verdicts.Check:
    """The rule every clustering claim is judged by, on column ``col``: trained − chance and
    trained − untrained per labelled point, both bootstrap intervals above 0; control: the same
    with the untrained network in the trained one's place, against a second draw of its
    initialisation; floor: ``floor``."""
    m = measures[col]
    unmeasured = _unmeasured(col, m, P)
    if unmeasured is not None:
        return unmeasured
    if SECOND not in m.same:
        raise ValueError(
            "purity_claims: the control needs the second initialisation (emb1, codes1)"
        )
    note = _noise(m, P.neighbours, col, _left_out(col, m, P)[1])
    T, U = "trained network", "untrained network"
    check = verdicts.intervals_above(
        [_diff(m, T, "chance", P, col), _diff(m, T, U, P, col)], note=note
    )
    control = verdicts.intervals_above([_diff(m, U, "chance", P, col), _diff(m, U, SECOND, P, col)])
    what = "the untrained network in the trained one's place, against chance and a second draw "
    check = verdicts.controlled(check, what + "of its initialisation (seed + 1)", control)
    return check if floor is None else floor.apply(check)


def bag_of_words_check(
    col: str, measures: dict[str, Purity], P: Params, floor: LearnedFloor | None
) -> verdicts.Check:
    """The second verdict on column ``col``, not the claim's: trained − bag of words and trained
    − chance above 0 (under the leak rule the bag of words can fall below chance, and beating it
    alone would then say nothing); control: the untrained network in the trained one's place;
    floor: ``floor``."""
    m = measures[col]
    unmeasured = _unmeasured(col, m, P)
    if unmeasured is not None:
        return unmeasured
    note = _noise(m, P.neighbours, col, _left_out(col, m, P)[1])
    T, U = "trained network", "untrained network"
    bow = verdicts.intervals_above(
        [_diff(m, T, "bag of words", P, col), _diff(m, T, "chance", P, col)], note=note
    )
    bow_control = verdicts.intervals_above(
        [_diff(m, U, "bag of words", P, col), _diff(m, U, "chance", P, col)]
    )
    bow = verdicts.controlled(bow, "the untrained network in the trained one's place", bow_control)
    return bow if floor is None else floor.apply(bow)


def _claim_check(
    col: str, measures: dict[str, Purity], P: Params, floor: LearnedFloor | None
) -> claims.ClaimCheck:
    claim, key, _ = PURITY_CLAIMS[col]
    check = clustering_check(col, measures, P, floor)
    return claims.ClaimCheck(claim, check, glue=f"rep-verdict-{key}")


def claim_f4_1(
    measures: dict[str, Purity], P: Params, floor: LearnedFloor | None = None
) -> claims.ClaimCheck:
    """C-A-F4-1. Paper A, §4.4: "We can clearly see that semantically similar words are
    clustered with each other (see the zoomed-in plots in Fig. 4)." Judged on the word
    categories' purity of the trained embeddings ``e(x)`` (:func:`clustering_check`); glued as
    ``rep-verdict-words``."""
    return _claim_check("words: category", measures, P, floor)


def claim_f5_1(
    measures: dict[str, Purity], P: Params, floor: LearnedFloor | None = None
) -> claims.ClaimCheck:
    """C-A-F5-1. Paper A, §4.4: "in the bottom-left plot, most of the phrases are about the
    duration of time [...] The bottom-right plot shows the cluster of phrases that are
    semantically similar (countries or regions)." Judged on the semantic classes' purity of the
    trained codes ``c`` (:func:`clustering_check`); glued as ``rep-verdict-sem``."""
    return _claim_check("phrases: semantic class", measures, P, floor)


def claim_f5_2(
    measures: dict[str, Purity], P: Params, floor: LearnedFloor | None = None
) -> claims.ClaimCheck:
    """C-A-F5-2. Paper A, §4.4: "those phrases that are syntactically similar are clustered
    together. [...] the top-right plot shows the phrases that are syntactically similar." Judged
    on the patterns' purity of the trained codes ``c`` (:func:`clustering_check`); glued as
    ``rep-verdict-pat``."""
    return _claim_check("phrases: pattern", measures, P, floor)


#: the claim function of each column of the purity table
CLAIM_OF = {
    "words: category": claim_f4_1,
    "phrases: semantic class": claim_f5_1,
    "phrases: pattern": claim_f5_2,
}


def purity_claims(
    measures: dict[str, Purity], P: Params, floor: LearnedFloor | None = None
) -> list[PurityClaim]:
    """C-A-F4-1, C-A-F5-1, C-A-F5-2 (:func:`claim_f4_1`, :func:`claim_f5_1`, :func:`claim_f5_2`)
    with each column's second verdict (:func:`bag_of_words_check`), whether it was measured
    and what it left out. A column not measured gives not-measurable checks with the
    reason."""
    out = []
    for col, (claim, key, _) in PURITY_CLAIMS.items():
        found = CLAIM_OF[col](measures, P, floor)
        bow = bag_of_words_check(col, measures, P, floor)
        left = _left_out(col, measures[col], P)[0]
        out.append(PurityClaim(claim, key, found.check, bow, measures[col].measured, left))
    return out
