"""A Fig. 3: the RNN Encoder-Decoder's score of phrase pairs against the translation model's
``log p(t | s)``, with the distribution of each, its numbers and the claims C-A-F3-1 ...
C-A-F3-3 (the last against the same network trained on pairs drawn by their counts)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ... import verdicts
from ...book.claims import ClaimCheck
from ...stats import (
    bootstrap_rounds,
    percentile_interval,
)
from .controls import Controls
from .rows import RNNRow
from .scorer import table_frame
from .setting import N_BOOT

# -- Figure 3's claims ----------------------------------------------------------------------------
#: Fig. 3's "scored alike" and "radically differently": the two scores' percentile ranks among
#: the pairs of the same target length differ by at most ALIKE, or by at least FAR (half the
#: range: one model puts the pair in the upper half, the other in the lower)
ALIKE, FAR = 0.1, 0.5


def scored_frame(rnn: RNNRow, corpus) -> pd.DataFrame:
    """:func:`table_frame` of the pairs of the phrase table whose source phrase the decoder meets
    on dev and test (``rnn.phrases``), with the network's scores the decoder read (``rnn.scores``,
    every such pair scored once, in the ``cho2014/rnn_feature`` artifact)."""
    return table_frame(
        rnn.scorer.table,
        rnn.model,
        corpus.src_vocab,
        corpus.tgt_vocab,
        sources=rnn.phrases,
        scored=rnn.scores,
    )


def figure_3_pairs(frame: pd.DataFrame, points: int, seed: int) -> pd.DataFrame:
    """The pairs of A Fig. 3: ``min(points, len(frame))`` rows of ``frame`` drawn without
    replacement (``numpy.random.default_rng(seed)``), in the frame's order."""
    rng = np.random.default_rng(seed)
    return frame.iloc[np.sort(rng.choice(len(frame), size=min(points, len(frame)), replace=False))]


def _correlations(pick: pd.DataFrame) -> dict[str, float]:
    """Pearson's r and Spearman's rho of the RNN and TM scores, and Spearman's rho of each
    score with the pair's count in training."""
    count_rank = pick["count"].rank()
    return {
        "pearson": float(np.corrcoef(pick["rnn"], pick["tm"])[0, 1]),
        "spearman": float(pick["rnn"].rank().corr(pick["tm"].rank())),
        "count_tm": float(pick["tm"].rank().corr(count_rank)),
        "count_rnn": float(pick["rnn"].rank().corr(count_rank)),
    }


def figure_3(pick: pd.DataFrame):
    """A Fig. 3: the network's ``log p(f | e)`` against the translation model's direct
    probability for the pairs ``pick`` (:func:`figure_3_pairs`), with the distribution of each
    in the margins (a seaborn ``JointGrid``); returns the matplotlib figure."""
    import seaborn as sns

    r = _correlations(pick)
    grid = sns.JointGrid(pick, x="rnn", y="tm", height=5.5, space=0.05)
    grid.plot_joint(sns.scatterplot, s=3, alpha=0.3, color="black", linewidth=0)
    grid.plot_marginals(sns.histplot, bins=60, color="gray", linewidth=0)
    grid.set_axis_labels(
        r"RNN score $\log p(f \mid e)$",
        r"TM score $\log p(f \mid e)$ (direct translation probability)",
    )
    title = f"Pearson r = {r['pearson']:.2f}, Spearman rho = {r['spearman']:.2f}"
    grid.ax_marg_x.set_title(title, fontsize=9)
    return grid.figure


def numbers(pick: pd.DataFrame, untrained: pd.DataFrame, seed: int) -> dict[str, Any]:
    """The correlations of Fig. 3 and its number of pairs; the correlation within target length
    of the trained and the untrained network (:func:`figure_3_claims`'s, the same shuffle) and
    the shares (%) scored alike, alike by chance and far apart."""
    r = _correlations(pick)
    v, _, _ = _agreement(pick, np.random.default_rng(seed + 7), 0)
    u, _, _ = _agreement(untrained, np.random.default_rng(seed + 7), 0)
    alike, far = _shares(pick)
    return {
        "cho-pearson": (r["pearson"], 2),
        "cho-spearman": (r["spearman"], 2),
        "cho-scatter-n": len(pick),
        "cho-count-corr-tm": (r["count_tm"], 2),
        "cho-count-corr-rnn": (r["count_rnn"], 2),
        "cho-rho-length": (v[0], 2),
        "cho-rho-length-untrained": (u[0], 2),
        "cho-alike-share": (100 * alike, 1),
        "cho-alike-chance": (100 * (alike - v[1]), 1),
        "cho-far-share": (100 * far, 1),
        "cho-alike": ALIKE,
        "cho-far": FAR,
    }


def _percentiles(pick: pd.DataFrame, col: str) -> np.ndarray:
    """Each pair's percentile rank of ``col`` among the pairs of ``pick`` with a target of the
    same length: a log-probability falls with every word, the untrained network's too."""
    lens = pick["tgt"].map(len).to_numpy()
    return pick[col].groupby(lens).rank(pct=True).to_numpy()


def _agreement(pick: pd.DataFrame, rng, n_boot: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(values, low, high)``, each ``(3,)``: the correlation of the RNN and TM scores'
    percentile ranks within target length (:func:`_percentiles`), the share of pairs scored
    alike minus that share with the RNN's percentiles shuffled among the pairs of the same target
    length (chance; one permutation from ``rng``), and the share scored far apart minus half the
    share scored alike; with 95% intervals over ``n_boot`` resamples of the pairs (the same
    stream)."""
    pr, pt = _percentiles(pick, "rnn"), _percentiles(pick, "tm")
    lens = pick["tgt"].map(len).to_numpy()
    shuffled = pr.copy()
    for n_words in np.unique(lens):
        i = np.flatnonzero(lens == n_words)
        shuffled[i] = pr[rng.permutation(i)]
    d, dc = np.abs(pr - pt), np.abs(shuffled - pt)

    def statistic(i):
        if np.ptp(pr[i]) > 0 and np.ptp(pt[i]) > 0:
            rho = np.corrcoef(pr[i], pt[i])[0, 1]
        else:
            rho = np.nan
        alike = (d[i] <= ALIKE).mean()
        return rho, alike - (dc[i] <= ALIKE).mean(), (d[i] >= FAR).mean() - alike / 2

    whole = np.array(statistic(np.arange(len(pick))), dtype=float)
    if n_boot < 1 or len(pick) < 3:
        return whole, np.full(3, np.nan), np.full(3, np.nan)
    lo, hi = percentile_interval(
        bootstrap_rounds(len(pick), statistic, n_boot, rng), axis=0, nan=True
    )
    return whole, lo, hi


def _shares(pick: pd.DataFrame) -> tuple[float, float]:
    """The shares of pairs scored alike and far apart (:data:`ALIKE`, :data:`FAR`)."""
    d = np.abs(_percentiles(pick, "rnn") - _percentiles(pick, "tm"))
    return float((d <= ALIKE).mean()), float((d >= FAR).mean())


@dataclass
class Agreement:
    """What Fig. 3's claims read (:func:`_agreement`): ``(values, low, high)`` of the trained
    network's scores on the drawn pairs, then of the untrained network's on the same pairs, in
    this order from one generator; ``pairs``: how many were drawn."""

    trained: tuple[np.ndarray, np.ndarray, np.ndarray]
    untrained: tuple[np.ndarray, np.ndarray, np.ndarray]
    pairs: int


def agreement(pick: pd.DataFrame, seed: int, untrained: pd.DataFrame, n_boot: int) -> Agreement:
    """:func:`_agreement` of ``pick`` then of ``untrained`` (the same pairs scored by the
    untrained network), with 95% intervals over ``n_boot`` resamples of the pairs from
    ``default_rng(seed + 7)``."""
    rng = np.random.default_rng(seed + 7)
    trained = _agreement(pick, rng, n_boot)
    return Agreement(trained, _agreement(untrained, rng, n_boot), len(pick))


UNTRAINED = "the untrained network (initialisation, the run's seed) on the same pairs"


def _over(agr: Agreement) -> str:
    return f"95% bootstrap over the {agr.pairs} drawn pairs; one trained network (one seed)"


def _weakly(measured, note: str = "") -> verdicts.Check:
    v, lo, hi = measured
    rho = "ρ of the RNN and TM scores within target length"
    return verdicts.intervals_above(
        [(rho, v[0], lo[0], hi[0]), (f"0.5 − {rho}", 0.5 - v[0], 0.5 - hi[0], 0.5 - lo[0])],
        note=note and f"'weakly correlated' read as 0 < ρ ≤ 0.5; {note}",
    )


def claim_f3_1(agr: Agreement, ctl: Controls | None = None) -> ClaimCheck:
    """C-A-F3-1, the two scores weakly and positively correlated among pairs of the same target
    length (0 < ρ ≤ 0.5); control: the untrained network; floored by ``ctl``. Paper A (§4.3):
    "Interestingly, many phrase pairs were scored similarly by both the translation model and
    the RNN Encoder–Decoder, but there were as many other phrase pairs that were scored
    radically different (see Fig. 3)." """
    check = verdicts.controlled(_weakly(agr.trained, _over(agr)), UNTRAINED, _weakly(agr.untrained))
    return ClaimCheck("C-A-F3-1", check if ctl is None else ctl.floor(check))


def _alike_and_far(measured, note: str = "") -> verdicts.Check:
    v, lo, hi = measured
    alike = f"share scored alike (percentiles within {ALIKE:g}) − chance"
    far = f"share scored far apart (at least {FAR:g}) − half the share alike"
    return verdicts.intervals_above(
        [(alike, v[1], lo[1], hi[1]), (far, v[2], lo[2], hi[2])],
        note=note
        and f"'many alike' read as more than chance (the RNN's scores shuffled "
        f"within target length), 'as many radically differently' as at least half as "
        f"many; {note}",
    )


def claim_f3_2(agr: Agreement, ctl: Controls | None = None) -> ClaimCheck:
    """C-A-F3-2, more pairs scored alike than chance and at least half as many far apart;
    control: the untrained network; floored by ``ctl``. Paper A (§4.3): "many phrase pairs
    were scored similarly by both the translation model and the RNN Encoder–Decoder, but there
    were as many other phrase pairs that were scored radically different (see Fig. 3)." """
    check = verdicts.controlled(
        _alike_and_far(agr.trained, _over(agr)), UNTRAINED, _alike_and_far(agr.untrained)
    )
    return ClaimCheck("C-A-F3-2", check if ctl is None else ctl.floor(check))


@dataclass
class CountFollowing:
    """What C-A-F3-3 reads (:func:`follows_counts`): ``(values, low, high)``, each ``(3,)``: the
    correlation with the pair's count, within target length, of the unique-pair network's
    score, of the count-drawn network's, and the second minus the first; ``control``: the same
    with the counts shuffled among the pairs of the same target length; ``pairs``: how many."""

    measured: tuple[np.ndarray, np.ndarray, np.ndarray]
    control: tuple[np.ndarray, np.ndarray, np.ndarray]
    pairs: int


def _count_rhos(pu, pc, counts, rng, n_boot):
    """:class:`CountFollowing`'s ``(values, low, high)`` for the percentile ranks ``pu``, ``pc``
    (the two networks' scores) and ``counts`` (``(N,)`` each), bootstrap over the pairs."""

    def statistic(i):
        rho = [np.corrcoef(x[i], counts[i])[0, 1] if np.ptp(x[i]) > 0 else np.nan for x in (pu, pc)]
        return rho[0], rho[1], rho[1] - rho[0]

    whole = np.array(statistic(np.arange(len(pu))), dtype=float)
    if n_boot < 1 or len(pu) < 3 or np.ptp(counts) == 0:
        return whole, np.full(3, np.nan), np.full(3, np.nan)
    lo, hi = percentile_interval(
        bootstrap_rounds(len(pu), statistic, n_boot, rng), axis=0, nan=True
    )
    return whole, lo, hi


def follows_counts(
    pick: pd.DataFrame, counted: pd.DataFrame, seed: int, n_boot: int = N_BOOT
) -> CountFollowing:
    """How much each network's score follows the pair's count on the pairs ``pick`` (scored by
    the unique-pair network) and ``counted`` (the same pairs scored by the count-drawn network,
    :mod:`.counts`): percentile ranks within target length (:func:`_percentiles`), their
    correlation with the count's, 95% intervals over ``n_boot`` resamples of the pairs
    (``default_rng(seed + 11)``); the control shuffles the counts within target length (one
    permutation from the same stream)."""
    rng = np.random.default_rng(seed + 11)
    pu, pc, pn = (_percentiles(f, c) for f, c in ((pick, "rnn"), (counted, "rnn"), (pick, "count")))
    lens = pick["tgt"].map(len).to_numpy()
    shuffled = pn.copy()
    for n_words in np.unique(lens):
        i = np.flatnonzero(lens == n_words)
        shuffled[i] = pn[rng.permutation(i)]
    measured = _count_rhos(pu, pc, pn, rng, n_boot)
    return CountFollowing(measured, _count_rhos(pu, pc, shuffled, rng, n_boot), len(pick))


SHUFFLED_COUNTS = "the pair counts shuffled among the pairs of the same target length"
FOLLOWS = "ρ with the count within target length, count-drawn − unique-pair network"


def count_numbers(fc: CountFollowing | None) -> dict[str, Any]:
    """The two networks' correlation with the count and its difference (NaN: no count-drawn
    network), with the difference's interval."""
    v, lo, hi = fc.measured if fc else (np.full(3, np.nan),) * 3
    out = {f"cho-count-rho-{k}": (v[i], 2) for i, k in enumerate(("unique", "drawn", "diff"))}
    return out | {"cho-count-rho-diff-lo": (lo[2], 2), "cho-count-rho-diff-hi": (hi[2], 2)}


def claim_f3_3(fc: CountFollowing | None, ctl: Controls | None = None) -> ClaimCheck:
    """C-A-F3-3, the unique-pair network follows the pair's count less than the same network
    trained on pairs drawn by their counts (A §3.1's counterfactual): that network's correlation
    with the count minus the unique-pair network's above 0; control: the counts shuffled within
    target length; floored on the count-drawn network following the counts (its correlation's
    interval above 0) and by ``ctl``. Paper A (§4.3): "This could arise from the proposed
    approach of training the RNN Encoder–Decoder on a set of unique phrase pairs, discouraging
    the RNN Encoder–Decoder from learning simply the frequencies of the phrase pairs from the
    corpus, as explained earlier." """
    if fc is None:
        why = "the count-drawn network was not trained (rnn_check_optimiser off)"
        return ClaimCheck("C-A-F3-3", verdicts.not_measurable(why))
    (v, lo, hi), (cv, clo, chi) = fc.measured, fc.control
    note = f"95% bootstrap over the {fc.pairs} drawn pairs; one network of each kind (one seed)"
    check = verdicts.controlled(
        verdicts.intervals_above([(FOLLOWS, v[2], lo[2], hi[2])], note=note),
        SHUFFLED_COUNTS,
        verdicts.intervals_above([(FOLLOWS, cv[2], clo[2], chi[2])]),
    )
    check = check if ctl is None else ctl.floor(check)
    floor = [("count-drawn network's ρ with the count, low end of its 95% interval", lo[1])]
    what = "the count-drawn network follows the counts"
    return ClaimCheck(
        "C-A-F3-3", verdicts.floored(check, floor, 0.0, "ρ", what, add=ctl is not None)
    )


def figure_3_claims(
    pick: pd.DataFrame,
    seed: int,
    untrained: pd.DataFrame,
    ctl: Controls | None = None,
    n_boot: int = N_BOOT,
) -> dict[str, verdicts.Check]:
    """The checks of C-A-F3-1 and C-A-F3-2 (:func:`claim_f3_1` ...) on the drawn pairs ``pick``
    and the same pairs scored by the untrained network (``untrained``, the control), measured
    by :func:`agreement`; floored by ``ctl`` (:data:`SCORER_FLOOR`)."""
    agr = agreement(pick, seed, untrained, n_boot)
    found = (claim_f3_1(agr, ctl), claim_f3_2(agr, ctl))
    return {c.claim: c.check for c in found}
