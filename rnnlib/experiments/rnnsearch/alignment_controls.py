"""B Fig. 3's controls that could hold: the position-only aligner (the diagonal, each row as
sharp as a trained row), the rows that generate articles and elided determiners, and the
spread of those rows against the other rows (C-B-F3-3 as B §5.2.1 words it: "letting the model
look at both [the] and [man]").

A weight matrix here is ``(words + 1, source + 1)``: one row per generated word and a last row
for the step that ends the translation, one column per source word and a last column for the
source's ``<end>`` (the weights alpha_ij of B Eq. 6)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ... import stats, verdicts

#: word links ``(source position, target position)`` of one sentence pair
Links = set[tuple[int, int]]
#: the aligners scored against eflomal, as printed: RNNsearch-50, its position-only aligner and
#: the untrained network
ALIGNERS = ("RNNsearch-50", "position-only aligner", "untrained RNNsearch")

#: French articles and elided determiners whose rows C-B-F3-3 reads (lowercased; the corpus
#: tokenizer keeps the apostrophe on the elided word: "l' homme")
ARTICLES = ("l'", "le", "la", "les", "un", "une", "du", "des", "d'")


def diagonal_position(row: int, rows: int, cols: int) -> float:
    """Where row ``row`` of a ``(rows, cols)`` matrix sits on the diagonal: ``row`` scaled from
    ``[0, rows - 1]`` to ``[0, cols - 1]`` (the first row on the first source word, the end row
    on the source's ``<end>``; a matrix of one row is the end row alone)."""
    return float(cols - 1) if rows < 2 else row * (cols - 1) / (rows - 1)


def diagonal_aligner(w: np.ndarray) -> np.ndarray:
    """The position-only aligner of a weight matrix ``w (words + 1, source + 1)``: the same shape,
    every row a distribution. Row j is an even floor plus a bump: the trained row's largest
    weight (its sharpness) on the column c nearest its diagonal position p
    (:func:`diagonal_position`), half the bump's height above the floor on the neighbouring
    column toward p (the next one when p is c, the previous one at the last column), the floor
    on every other column; the floor is 0 when the largest weight is over 2/3, the neighbour then
    taking all the rest. So c is the row's only largest weight (unless the trained row is
    uniform) and nothing of ``w`` but each row's largest weight is read."""
    w = np.asarray(w, dtype=float)
    rows, cols = w.shape
    out = np.zeros_like(w)
    for j in range(rows):
        p = diagonal_position(j, rows, cols)
        c = int(np.floor(p + 0.5))
        if cols == 1:
            out[j, 0] = 1.0
            continue
        n = c + 1 if p >= c else c - 1
        n = n if 0 <= n < cols else c - 1
        peak = float(w[j].max())
        if peak > 2 / 3:
            out[j, c], out[j, n] = peak, 1.0 - peak
            continue
        bump = max(0.0, (peak - 1 / cols) / (1 - 1.5 / cols))
        out[j] = (1 - 1.5 * bump) / cols
        out[j, c] += bump
        out[j, n] += bump / 2
    return out


def diagonal_matrices(matrices: list[np.ndarray]) -> list[np.ndarray]:
    """:func:`diagonal_aligner` of each matrix."""
    return [diagonal_aligner(w) for w in matrices]


def article_rows(words: list[str]) -> np.ndarray:
    """``(len(words),) bool``: the generated words that are articles or elided determiners
    (:data:`ARTICLES`, compared lowercased)."""
    return np.array([w.lower() in ARTICLES for w in words], dtype=bool)


@dataclass
class RowSpread:
    """Per sentence: the article rows (``articles``) and the other word rows (``others``), and
    how many of each spread their weight (largest weight under the threshold), ``*_spread``.
    The end row is left out."""

    articles: np.ndarray
    articles_spread: np.ndarray
    others: np.ndarray
    others_spread: np.ndarray


def row_spread(matrices: list[np.ndarray], flags: list[np.ndarray], threshold: float) -> RowSpread:
    """:class:`RowSpread` of ``matrices`` (each ``(words + 1, source + 1)``), the word rows
    marked by ``flags`` (each ``(words,) bool``) against the other word rows; a row spreads
    when its largest weight is under ``threshold``."""
    if len(matrices) != len(flags):
        raise ValueError(f"row_spread: {len(matrices)} matrices for {len(flags)} lists of flags")
    cols = [[], [], [], []]
    for w, f in zip(matrices, flags):
        top = np.asarray(w, dtype=float)[:-1].max(1) if len(w) > 1 else np.zeros(0)
        f = np.asarray(f, dtype=bool)
        if len(f) != len(top):
            raise ValueError(f"row_spread: {len(f)} flags for a matrix of {len(top)} word rows")
        spread = top < threshold
        for k, x in enumerate((f.sum(), (f & spread).sum(), (~f).sum(), (~f & spread).sum())):
            cols[k].append(int(x))
    return RowSpread(*(np.array(c, dtype=int) for c in cols))


def _difference(r: RowSpread, i: np.ndarray) -> float:
    a, o = r.articles[i].sum(), r.others[i].sum()
    if a == 0 or o == 0:
        return np.nan
    return 100 * (r.articles_spread[i].sum() / a - r.others_spread[i].sum() / o)


def spread_difference(r: RowSpread, n_boot: int, seed) -> tuple[float, float, float]:
    """``(difference, low, high)``: the % of article rows that spread minus the % of the other
    word rows that spread (each pooled over the sentences), with its 95% bootstrap interval over
    the sentences (NaN where a resample has no row of one kind)."""
    every = np.arange(len(r.articles))
    if not len(every):
        return np.nan, np.nan, np.nan
    rounds = stats.bootstrap_rounds(len(every), lambda i: [_difference(r, i)], n_boot, seed)
    if np.isnan(rounds).all():
        return np.nan, np.nan, np.nan
    low, high = stats.percentile_interval(rounds[:, 0], nan=True)
    return _difference(r, every), float(low), float(high)


def articles_spread_check(
    r: RowSpread | None, threshold: float, n_boot: int, seed: int
) -> verdicts.Check:
    """C-B-F3-3's rule on one set of rows: the % of article rows (:data:`ARTICLES`) whose
    largest weight is under ``threshold``, minus the % of the other word rows, above 0 (a 95%
    bootstrap interval over the sentences, :func:`spread_difference`)."""
    if r is None:
        return verdicts.not_measurable("the generated words are not known")
    if r.articles.sum() == 0 or r.others.sum() == 0:
        return verdicts.not_measurable("no generated word is an article, or every one is")
    v, lo, hi = spread_difference(r, n_boot, np.random.default_rng([seed, 8]))
    what = (
        f"% of the {int(r.articles.sum())} article rows whose largest weight is under "
        f"{threshold:g} minus % of the {int(r.others.sum())} other word rows"
    )
    return verdicts.intervals_above([(what, v, lo, hi)])


def shuffled_flags(flags: list[np.ndarray], seed: int) -> list[np.ndarray]:
    """C-B-F3-3's control: in each sentence, as many word rows as it has article rows, drawn at
    random among its word rows (``seed``): the same counts per sentence, the words forgotten."""
    rng = np.random.default_rng([seed, 9])
    return [rng.permutation(np.asarray(f, dtype=bool)) for f in flags]


def attention_links(w: np.ndarray) -> Links:
    """The links ``(source position, target position)`` of a weight matrix ``w (words + 1,
    source + 1)``: each word row (the end row left out) linked to the column of its largest
    weight, none when that column is the source's ``<end>``."""
    w = np.asarray(w)
    top = w[:-1].argmax(1)
    return {(int(i), j) for j, i in enumerate(top) if i < w.shape[1] - 1}


@dataclass
class LinkCounts:
    """Per sentence: the links an aligner proposes (``proposed``), eflomal's (``sure``) and the
    links in both (``common``)."""

    proposed: np.ndarray
    sure: np.ndarray
    common: np.ndarray

    def scores(self, i: np.ndarray | None = None) -> tuple[float, float, float]:
        """``(precision, recall, AER)`` in %, pooled over the sentences ``i`` (default: all)."""
        i = np.arange(len(self.sure)) if i is None else i
        a, s, c = self.proposed[i].sum(), self.sure[i].sum(), self.common[i].sum()
        p = 100 * c / a if a else np.nan
        r = 100 * c / s if s else np.nan
        aer = 100 * (1 - 2 * c / (a + s)) if a + s else np.nan
        return float(p), float(r), float(aer)


def link_counts(proposed: list[Links], sure: list[Links]) -> LinkCounts:
    """:class:`LinkCounts` of the proposed links of each sentence against eflomal's."""
    if len(proposed) != len(sure):
        raise ValueError(f"link_counts: {len(proposed)} sentences proposed, {len(sure)} sure")
    return LinkCounts(
        np.array([len(a) for a in proposed], dtype=int),
        np.array([len(s) for s in sure], dtype=int),
        np.array([len(a & s) for a, s in zip(proposed, sure)], dtype=int),
    )


def aer_gain(x: LinkCounts, base: LinkCounts, n_boot: int, seed) -> tuple[float, float, float]:
    """``(gain, low, high)``: the AER of ``base`` minus the AER of ``x`` (points; above 0: ``x``
    agrees with the sure links better), pooled over the sentences, with its 95% paired bootstrap
    interval (one resample of the sentences for both)."""
    if len(x.sure) != len(base.sure):
        raise ValueError(f"aer_gain: {len(x.sure)} sentences against {len(base.sure)}")
    if not len(x.sure):
        return np.nan, np.nan, np.nan

    def gain(i):
        return [base.scores(i)[2] - x.scores(i)[2]]

    rounds = stats.bootstrap_rounds(len(x.sure), gain, n_boot, seed)
    low, high = stats.percentile_interval(rounds[:, 0], nan=True)
    return gain(np.arange(len(x.sure)))[0], float(low), float(high)


def shuffled_rows(matrices: list[np.ndarray], seed: int) -> list[np.ndarray]:
    """Each matrix with its word rows in a random order (``seed``), the end row last: every row
    as the network wrote it, given to another word of the sentence."""
    rng = np.random.default_rng([seed, 10])
    out = []
    for w in matrices:
        w = np.asarray(w)
        out.append(np.vstack([w[:-1][rng.permutation(len(w) - 1)], w[-1:]]))
    return out


def beats_position_check(x: LinkCounts, base: LinkCounts, n_boot: int, seed: int) -> verdicts.Check:
    """C-B-F3-5's rule on one aligner's links ``x``: its AER against the sure links is below the
    position-only aligner's (``base``), the difference's 95% paired bootstrap interval over the
    sentences above 0 (:func:`aer_gain`)."""
    if x.sure.sum() == 0:
        return verdicts.not_measurable("eflomal links no word of the pairs read")
    v, lo, hi = aer_gain(x, base, n_boot, np.random.default_rng([seed, 11]))
    what = f"AER of the position-only aligner minus this aligner's ({len(x.sure)} pairs)"
    return verdicts.intervals_above([(what, v, lo, hi)])
