"""B Fig. 2's mechanism in nats: how much each "-50" model's prediction of the reference depends
on the sentence it translates (the *source gain*), per source-length bucket of Fig. 2, and the
book's reading of Fig. 2 on it, C-B-F2-5.

At this scale RNNencdec-50's BLEU sits near the floor in every bucket, so Fig. 2's own claims
read "not measurable". The source gain needs no translation: it scores the reference,
teacher-forced, once given its own source and once given each of :data:`MISMATCHED` other test
sentences of the same source-length bucket (``rnnsearch/source_gain``, one artifact per model).

Equations
---------
- Bugliarello et al. 2020 (ACL), cross-mutual information: XMI(X → Y) = H_q(Y) − H_q(Y | X),
  cross-entropies per target token, H_q(Y) from a target-side language model.
- The book's reading, the conditional form: per test sentence i with target y_i of |y_i| tokens
  (``<end>`` included) and mismatched sources x_j1 ... x_jK drawn from i's bucket,
  ``gain_i = (1/K) sum_k NLL(y_i | x_jk) / |y_i| − NLL(y_i | x_i) / |y_i|`` (nats per target
  token), NLL the model's own teacher-forced cross-entropy (B Eq. 2's p(y | x)).
- B §5.1: "In Fig. 2, we see that the performance of RNNencdec dramatically drops as the length
  of the sentences increases. On the other hand, both RNNsearch-30 and RNNsearch-50 are more
  robust to the length of the sentences." B §1 gives the reason the paper conjectures: the
  encoder–decoder must "compress all the necessary information of a source sentence into a
  fixed-length vector".

Deviations
----------
- Not in paper B: the measure, its claim C-B-F2-5 and its figure are the book's reading of
  Fig. 2, declared as such in the chapter.
- H(Y) is replaced by H(Y | X'), X' a mismatched source of the same bucket, not by a language
  model: both terms then come from the same network, so the quality of its decoder as a
  language model of the target cancels (a separate language model would add its own difference
  to the measure), and X' has about the source's length (the same bucket of
  ``bucket_width`` tokens), so a gain that grows with length is not the decoder reading the
  source's length alone.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
from scipy.stats import binom, binomtest

from ... import stats, verdicts
from ...bleu import length_edges
from ...book.claims import ClaimCheck
from ...book.style import HEIGHT, WIDTH, system_colors
from ...cache import Artifact, config_hash
from ...ragged import ParallelArrays, Ragged
from ...smt.rnn_scorer import score_pairs
from ..training_runs import load_model
from .figure_2 import MIN_BUCKET
from .seeds import SeedRuns, across_seeds
from .setting import RNNsearchExperiment
from .training import Runs

#: mismatched sources scored per test sentence (each model, each seed)
MISMATCHED = 5
#: the two models compared: the claim's (a) and the baseline (b)
PAIR = ("RNNsearch-50", "RNNencdec-50")
#: the floor of C-B-F2-5: each model's mean source gain (over the sentences the claim reads)
#: must be above this beyond its 95% interval; a model that ignores its source has no gain to grow
GAIN_FLOOR = 0.0
#: the parameters the figure and the table use beyond their artifacts' configs
EXTRA = ["max_test", "seed", "bucket_width", "bucket_last", "n_boot"]
#: the random streams (with the chapter's seed) of the draws, the buckets' resamples and the
#: resamples of each model's mean gain
DRAWS, RESAMPLES, MEANS = 52, 53, 54
#: C-B-F2-5's control: its rule run on this many seeded shuffles of the test sentences' lengths
SHUFFLES = 200
#: the share of those shuffles on which a calibrated rule gives a verdict ("holds" or "does not
#: hold"): a 95% interval of a statistic without a trend leaves 0 out 5% of the time, half on
#: each side
NOMINAL_VERDICTS = 0.05
#: the random stream (with the chapter's seed) of the shuffles
SHUFFLED = 55
#: what C-B-F2-5's control reads
SHUFFLED_WHAT = (
    f"the rule itself on {SHUFFLES} seeded shuffles of the test sentences' lengths, where length "
    "means nothing: the share of them on which it gives a verdict (holds or does not hold), "
    "against the share a calibrated 95% interval allows"
)


def _edges(ex: RNNsearchExperiment) -> list[int]:
    """Fig. 2's bucket edges (:func:`rnnlib.bleu.length_edges`)."""
    return length_edges(min(ex.P.bucket_width, ex.P.bucket_last), ex.P.bucket_last)


def mismatched_sources(ex: RNNsearchExperiment, k: int = MISMATCHED) -> np.ndarray:
    """``(n_test, k) int64``: for each evaluated test sentence, ``k`` other test sentences of its
    source-length bucket (Fig. 2's buckets), drawn with the chapter's seed (without replacement
    where the bucket holds ``k`` others, else with); ``-1`` in every column where the bucket holds
    no other sentence. The same draws serve every model."""
    bucket = np.searchsorted(_edges(ex), ex.src_len, side="right") - 1
    rng = np.random.default_rng([ex.P.seed, DRAWS])
    out = np.full((ex.n_test, k), -1, dtype=np.int64)
    for b in np.unique(bucket):
        members = np.flatnonzero(bucket == b)
        for i in members:
            others = members[members != i]
            if len(others):
                out[i] = rng.choice(others, size=k, replace=len(others) < k)
    return out


def sentence_nll(
    ex: RNNsearchExperiment, run: Artifact, arch: str, draws: np.ndarray
) -> tuple[Artifact, np.ndarray]:
    """``(artifact, nll (n_test, 1 + K))``: the NLL per target token (nats, ``<end>`` counted) of
    each evaluated test reference under the delivered parameters of ``run`` (a model of
    ``arch``), teacher-forced, given its own source (column 0) and the sources ``draws`` (columns
    1..K, :func:`mismatched_sources`; NaN where -1). The artifact ``rnnsearch/source_gain``."""
    n, k = draws.shape

    def make(out: Path, work: Path) -> None:
        test = ex.corpus.test
        sources = np.concatenate([np.arange(n)[:, None], draws], axis=1)
        rows, cols = np.nonzero(sources >= 0)
        pairs = ParallelArrays(
            Ragged.from_lists(test.src[int(s)] for s in sources[rows, cols]),
            Ragged.from_lists(test.tgt[int(i)] for i in rows),
        )
        model = load_model(run, ex.model_config(arch)).to(ex.device)
        logp = score_pairs(model, pairs, batch_size=ex.P.decode_batch)
        nll = np.full((n, 1 + k), np.nan)
        nll[rows, cols] = -logp / (test.tgt.lengths[rows] + 1)
        np.save(out / "nll.npy", nll)

    config = {
        "run": run.key,
        "sentences": n,
        "mismatched": k,
        "seed": ex.P.seed,
        "drawn": config_hash([[int(x) for x in row] for row in draws]),
    }
    art = ex.cache.build("rnnsearch/source_gain", config, make, data=ex.corpus.checksum)
    return art, np.load(art.file("nll.npy"))


@dataclass
class SourceGains:
    """Per seed of the "-50" pair (the chapter's first): ``nll[k][name]``, ``(n_test, 1 + K)``
    from :func:`sentence_nll` of :data:`PAIR`; the test sentences' source lengths, Fig. 2's bucket
    edges, and the artifacts read (``cited``)."""

    nll: list[dict[str, np.ndarray]]
    seeds: list[int]
    src_len: np.ndarray
    edges: list[int]
    cited: list[Artifact]
    #: (chapter seed, resamples, seed k) -> :func:`shuffled_verdicts` (computed once)
    shuffled: dict = field(default_factory=dict, repr=False, compare=False)

    def gain(self, name: str, k: int = 0) -> np.ndarray:
        """``(n_test,)``: the source gain of each sentence under model ``name`` of seed ``k``,
        nats per target token (NaN: its bucket holds no other sentence)."""
        x = self.nll[k][name]
        have = np.isfinite(x[:, 1:]).all(1)
        mismatched = np.where(have[:, None], x[:, 1:], 0.0).mean(1)
        return np.where(have, mismatched - x[:, 0], np.nan)


def source_gains(ex: RNNsearchExperiment, runs: Runs, sr: SeedRuns) -> SourceGains:
    """:class:`SourceGains` of RNNsearch-50 and RNNencdec-50, the chapter's and every further
    seed's of ``sr`` (cached artifacts, computed where missing: each a teacher-forced pass over
    the test set per source, 1 + :data:`MISMATCHED` passes)."""
    draws = mismatched_sources(ex)
    arch = {name: runs.arch[name] for name in PAIR}
    found = [dict(runs.runs)] + [{n: arts[n] for n in PAIR} for arts in sr.further]
    nll, cited = [], []
    for models in found:
        per = {}
        for name in PAIR:
            art, per[name] = sentence_nll(ex, models[name], arch[name], draws)
            cited.append(art)
        nll.append(per)
    return SourceGains(nll, list(sr.seeds), ex.src_len, _edges(ex), cited)


def by_length(
    ex: RNNsearchExperiment, g: SourceGains, k: int = 0, src_len: np.ndarray | None = None
) -> dict:
    """RNNsearch-50's and RNNencdec-50's source gain (seed ``k``) per bucket of Fig. 2 with
    paired bands, and the slope of their difference over the buckets of at least
    :data:`~.figure_2.MIN_BUCKET` sentences inside the paper's axis (the open last bucket is
    shown, not read, as in Fig. 2's claims) (:func:`rnnlib.stats.paired_means_by_length`);
    ``src_len``: the sentences' lengths (default their own; the control passes them
    shuffled)."""
    lengths = g.src_len if src_len is None else src_len
    a, b = (g.gain(n, k) for n in PAIR)
    rng = np.random.default_rng([ex.P.seed, RESAMPLES])
    return stats.paired_means_by_length(
        a, b, lengths, g.edges, MIN_BUCKET, ex.P.n_boot, rng, open_bucket=False
    )


def mean_gains(ex: RNNsearchExperiment, g: SourceGains, k: int = 0) -> dict[str, tuple]:
    """``name -> (mean, low, high)``: each model's mean source gain (seed ``k``) over the
    sentences of the buckets the claim reads (at least :data:`~.figure_2.MIN_BUCKET`
    sentences), with its 95% bootstrap interval (:func:`rnnlib.stats.bootstrap_mean`)."""
    table = by_length(ex, g, k)["buckets"]
    out = {}
    for name in PAIR:
        gain = g.gain(name, k)
        read = np.zeros(len(gain), dtype=bool)
        for r in table[table["solid"]].itertuples():
            read |= (g.src_len >= r.low_len) & (g.src_len < r.high_len)
        read &= np.isfinite(gain)
        rng = np.random.default_rng([ex.P.seed, MEANS])
        out[name] = (
            stats.bootstrap_mean(gain[read], ex.P.n_boot, rng) if read.any() else (np.nan,) * 3
        )
    return out


def gain_table(ex: RNNsearchExperiment, g: SourceGains) -> pd.DataFrame:
    """The source gain by bucket (the chapter's seed): per bucket of Fig. 2 its sentences (those
    with a gain: a bucket's lone sentence has no mismatched source), each model's mean gain with
    its 95% band and the paired difference RNNsearch-50 − RNNencdec-50 with its interval, nats
    per target token."""
    t = by_length(ex, g)["buckets"]

    def cell(v, lo, hi, sign=""):
        return np.nan if not np.isfinite(v) else f"{v:{sign}.3f} [{lo:.3f}, {hi:.3f}]"

    table = t.set_index("bucket")[["sentences"]].copy()
    for key, name in zip("ab", PAIR):
        table[name] = [cell(*x) for x in zip(t[key], t[f"{key}_low"], t[f"{key}_high"])]
    table[" − ".join(PAIR)] = [cell(*x, "+") for x in zip(t["diff"], t["low"], t["high"])]
    return table


def gain_figure(ex: RNNsearchExperiment, g: SourceGains):
    """The source gain against the source's length, beside Fig. 2: above, each model's mean gain
    per bucket (of at least two sentences) with its 95% band; below, the paired difference
    RNNsearch-50 − RNNencdec-50 with its band, the least-squares line over the buckets the claim
    reads dotted. Returns the figure."""
    res = by_length(ex, g)
    t = res["buckets"][res["buckets"]["sentences"] >= 2]
    colours = system_colors(PAIR)
    long = pd.concat([t.assign(system=n, gain=t[k]) for k, n in zip("ab", PAIR)])
    fig, (ax, axd) = plt.subplots(
        2, 1, figsize=(WIDTH, 1.6 * HEIGHT), sharex=True, gridspec_kw={"height_ratios": [3, 2]}
    )
    if len(t):  # no bucket with two sentences: empty axes (and no seaborn warning)
        sns.lineplot(
            data=long,
            x="mid",
            y="gain",
            hue="system",
            palette=colours,
            marker="o",
            estimator=None,
            errorbar=None,
            ax=ax,
        )
        ax.legend(title=None)
        sns.lineplot(data=t, x="mid", y="diff", color="0.2", marker="o", estimator=None, ax=axd)
    for k, name in zip("ab", PAIR):
        band = t[f"{k}_low"], t[f"{k}_high"]
        ax.fill_between(t["mid"], *band, color=colours[name], alpha=0.15, lw=0)
    ax.set(ylabel="source gain (nats / token)")
    axd.fill_between(t["mid"], t["low"], t["high"], color="0.2", alpha=0.15, lw=0)
    axd.axhline(0.0, color="0.5", lw=0.8, ls="--")
    solid = t[t["solid"]]
    if np.isfinite(res["slope"]):
        x = solid["mid"].to_numpy(dtype=float)
        y = solid["diff"].mean() + res["slope"] * (x - x.mean())
        axd.plot(x, y, color="0.2", ls=":", lw=1.2)
    axd.set(ylabel="difference (nats / token)", xlabel="sentence length (source tokens)")
    axd.set_xticks(t["mid"], t["bucket"], fontsize=8)
    fig.tight_layout()
    return fig


def numbers(ex: RNNsearchExperiment, g: SourceGains) -> dict[str, tuple[float, int | None]]:
    """``glue name -> (value, digits)`` (the chapter's seed): the mismatched sources per
    sentence, each model's mean gain with its interval (nats per target token), the slope of the
    difference per 10 tokens with its interval, and the control: on how many of
    :data:`SHUFFLES` shuffles of the lengths the rule gives a verdict, that share with its exact
    95% interval, the share a calibrated rule allows (%), and the control's reach
    (:func:`control_reach`)."""
    res, ctrl = by_length(ex, g), shuffled_verdicts(ex, g)
    out: dict[str, tuple[float, int | None]] = {"rns-gain-k": (MISMATCHED, None)}
    for name, (mean, low, high) in mean_gains(ex, g).items():
        key = "rns-gain-" + name.lower().replace("rnn", "").replace("-", "")
        out.update({key: (mean, 3), f"{key}-low": (low, 3), f"{key}-high": (high, 3)})
    out.update(
        {"rns-gain-slope": (10 * res["slope"], 3), "rns-gain-slope-low": (10 * res["low"], 3)}
    )
    out["rns-gain-slope-high"] = (10 * res["high"], 3)
    out.update(
        {
            "rns-gain-shuffles": (ctrl["shuffles"], None),
            "rns-gain-shuffled-verdicts": (ctrl["verdicts"], None),
            "rns-gain-shuffled-share": (100 * ctrl["share"], 1),
            "rns-gain-shuffled-low": (100 * ctrl["low"], 1),
            "rns-gain-shuffled-high": (100 * ctrl["high"], 1),
            "rns-gain-nominal": (100 * NOMINAL_VERDICTS, 1),
        }
    )
    reach = control_reach(ctrl["shuffles"] or SHUFFLES)  # none judged: the design's reach
    out["rns-gain-shuffled-min"] = (reach["min"], None)
    out["rns-gain-shuffled-chance"] = (100 * reach["chance"], 1)
    out["rns-gain-shuffled-power"] = (100 * reach["power"], 0)
    out["rns-gain-shuffled-twice"] = (100 * 2 * NOMINAL_VERDICTS, 0)
    return out


def _slope_rule(res: dict, note: str = "") -> verdicts.Check:
    """C-B-F2-5's rule: the slope of RNNsearch-50's gain − RNNencdec-50's over length above 0,
    in nats per target token per 10 tokens."""
    per10 = [10 * res[k] for k in ("slope", "low", "high")]
    label = "slope of the source gain RNNsearch-50 − RNNencdec-50 (nats per token, per 10 tokens)"
    return verdicts.intervals_above([(label, *per10)], note=note)


def shuffled_verdicts(ex: RNNsearchExperiment, g: SourceGains, k: int = 0) -> dict:
    """C-B-F2-5's rule on data where length means nothing: the test sentences' lengths shuffled
    :data:`SHUFFLES` times (seeded), the rule (:func:`_slope_rule` on :func:`by_length`, its
    bootstrap as in the claim) judged on each. Returns ``{"shuffles"`` (those with a slope and an
    interval: a shuffle that leaves fewer than two solid buckets, or a NaN, is left out and
    counted as ``"left_out"``), ``"verdicts"`` (on how many the rule holds or does not hold),
    ``"share"``, ``"low"``, ``"high"`` (the exact binomial 95% interval of the share)``}``;
    computed once per chapter seed, resamples and seed ``k``, and kept on ``g``. A rule whose
    interval is as wide as its noise gives a verdict on about :data:`NOMINAL_VERDICTS` of them."""
    key = (ex.P.seed, ex.P.n_boot, k)
    if key in g.shuffled:
        return g.shuffled[key]
    rng = np.random.default_rng([ex.P.seed, SHUFFLED, k])
    judged = verdict = 0
    for _ in range(SHUFFLES):
        res = by_length(ex, g, k, src_len=rng.permutation(g.src_len))
        if not all(np.isfinite(res[x]) for x in ("slope", "low", "high")):
            continue
        judged += 1
        verdict += verdicts.evaluate(_slope_rule(res)).verdict in (verdicts.HOLDS, verdicts.FAILS)
    low, high = (
        binomtest(verdict, judged).proportion_ci(0.95, method="exact") if judged else (np.nan,) * 2
    )
    share = verdict / judged if judged else np.nan
    out = {"shuffles": judged, "left_out": SHUFFLES - judged, "verdicts": verdict}
    out.update(share=share, low=float(low), high=float(high))
    g.shuffled[key] = out
    return out


def control_reach(shuffles: int) -> dict:
    """What the control can see with ``shuffles`` shuffles: the fewest verdicts that make it hold
    (``"min"``: the exact interval's lower end above :data:`NOMINAL_VERDICTS`), the chance it holds
    for a calibrated rule (``"chance"``) and for one that gives a verdict on twice the nominal
    share (``"power"``), binomial."""
    if shuffles < 1:
        raise ValueError(f"control_reach: need at least one shuffle, got {shuffles}")
    ks = np.arange(shuffles + 1)
    lows = [binomtest(int(x), shuffles).proportion_ci(0.95, method="exact").low for x in ks]
    at = np.flatnonzero(np.array(lows) > NOMINAL_VERDICTS)
    least = int(at[0]) if len(at) else shuffles + 1
    chance = float(binom.sf(least - 1, shuffles, NOMINAL_VERDICTS))
    power = float(binom.sf(least - 1, shuffles, 2 * NOMINAL_VERDICTS))
    return {"min": least, "chance": chance, "power": power}


def _shuffled_rule(sh: dict) -> verdicts.Check:
    """C-B-F2-5's control in the claim's own rule: the share of shuffles on which the rule gives a
    verdict minus :data:`NOMINAL_VERDICTS` above 0 (percentage points), its interval the share's
    exact one. It holds when the rule finds a trend, either way, in lengths that mean nothing more
    often than its 95% interval allows: then the rule cannot tell the claim (or its opposite)
    from their absence."""
    label = (
        f"share of {sh['shuffles']} shuffles on which the rule holds or does not hold − the "
        f"{100 * NOMINAL_VERDICTS:g}% a calibrated rule allows (percentage points)"
    )
    d, lo, hi = (100 * (sh[x] - NOMINAL_VERDICTS) for x in ("share", "low", "high"))
    return verdicts.intervals_above([(label, d, lo, hi)])


def gain_floor(check: verdicts.Check, means: dict[str, tuple], what: str) -> verdicts.Check:
    """``check`` measurable only where each model's mean source gain is above
    :data:`GAIN_FLOOR` beyond its interval: the lower end of each interval is floored."""
    values = [
        (f"{n}: lower end of its mean source gain's 95% interval", m[1]) for n, m in means.items()
    ]
    return verdicts.floored(check, values, GAIN_FLOOR, "nats per target token", what)


def claim_f2_5(ex: RNNsearchExperiment, g: SourceGains, k: int = 0) -> ClaimCheck:
    """C-B-F2-5, the book's reading of Fig. 2 in nats: RNNsearch-50's source gain minus
    RNNencdec-50's grows with the source's length. B §5.1: "In Fig. 2, we see that the
    performance of RNNencdec dramatically drops as the length of the sentences increases. On
    the other hand, both RNNsearch-30 and RNNsearch-50 are more robust to the length of the
    sentences." Rule: the least-squares slope of the per-bucket difference over the buckets'
    middle lengths (buckets of at least :data:`~.figure_2.MIN_BUCKET` sentences) above 0, by a
    paired bootstrap over sentences (each bucket's resampled, both models at once); control:
    the rule on :data:`SHUFFLES` shuffles of the lengths, holding when it gives a verdict on more
    of them than a calibrated rule would (:func:`shuffled_verdicts`, :func:`_shuffled_rule`);
    floor: each model's mean gain above 0 beyond its interval. Seed ``k``."""
    res = by_length(ex, g, k)
    solid = res["buckets"][res["buckets"]["solid"]]
    if len(solid) < 2:
        why = (
            f"fewer than two length buckets below the open last one hold at least {MIN_BUCKET} "
            "test sentences"
        )
        return ClaimCheck("C-B-F2-5", verdicts.not_measurable(why), "rns-f2-claim5")
    note = (
        f"{MISMATCHED} mismatched sources of the same bucket per sentence; the {len(solid)} "
        f"buckets below the open last one of at least {MIN_BUCKET} sentences; 95% interval "
        f"from {ex.P.n_boot} resamples of each bucket's sentences, both models at once; one "
        "training run per model"
    )
    control = _shuffled_rule(shuffled_verdicts(ex, g, k))
    check = verdicts.controlled(_slope_rule(res, note), SHUFFLED_WHAT, control)
    check = gain_floor(check, mean_gains(ex, g, k), "the sentences of the buckets it reads")
    return ClaimCheck("C-B-F2-5", check, "rns-f2-claim5")


def claims(ex: RNNsearchExperiment, g: SourceGains) -> list[ClaimCheck]:
    """C-B-F2-5 on the chapter's seed, judged on every seed of the "-50" pair
    (:func:`~.seeds.across_seeds`: a verdict a seed flips is inside the noise)."""
    others = [(seed, [claim_f2_5(ex, g, k)]) for k, seed in enumerate(g.seeds[1:], start=1)]
    return across_seeds([claim_f2_5(ex, g)], others, g.seeds[0])
