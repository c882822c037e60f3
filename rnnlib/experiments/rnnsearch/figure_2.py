"""B Fig. 2: BLEU against the source sentence's length, with bootstrap bands per bucket, the
relative view (each model against its own anchor bucket), the gap RNNsearch-50 − RNNencdec-50
per bucket, and the claims C-B-F2-1 to C-B-F2-4.

The claims read the buckets the paper plots: its axis ends at 60 and its models were trained on
sentences of at most 50 words, so the open last bucket (``>= bucket_last``) is shown, in the
figure, the table and the extension numbers of :func:`beyond`, but carries no claim."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns

from ... import stats, verdicts
from ...bleu import length_edges
from ...book.claims import ClaimCheck
from ...book.style import HEIGHT, WIDTH, system_colors
from .blocks import chapter_ids
from .controls import IDENTICAL_WHAT, bleu_floor
from .seeds import SeedRuns, seed_translations
from .setting import RNNsearchExperiment, shown
from .translations import Translations

#: Fig. 2's curves, in the paper's legend order
CURVES = ["RNNsearch-50", "RNNsearch-30", "RNNencdec-50", "RNNencdec-30"]
#: Fig. 2: buckets with fewer sentences are too noisy to carry a claim
MIN_BUCKET = 20
#: Fig. 2's relative view: each model is read against its BLEU in the shortest bucket holding at
#: least this many sentences (its anchor). A bucket of 20 or 30 sentences scores with a band
#: several BLEU wide, and every relative value divides by the anchor's score.
ANCHOR_MIN = 100
#: C-B-F2-3 ("no deterioration" on the longest sentences), a null claim: a drop from the BLEU on
#: all sentences to the longest bucket's of at most this share of the former does not count.
#: The paper's RNNencdec-50 loses more than half its BLEU from the shortest to the longest
#: sentences (Fig. 2); a tenth is a drop no reader of the figure would call a deterioration.
NO_DROP_MARGIN = 0.10


def bleu_by_length(ex: RNNsearchExperiment, tr: Translations) -> dict[str, pd.DataFrame]:
    """B Fig. 2: ``system -> one row per source-length bucket`` (:func:`rnnlib.stats.
    bleu_by_length`: corpus BLEU and its bootstrap band per bucket) of the four curves of the
    paper and the phrase-based system. Every evaluated sentence is in one bucket."""
    p = ex.P
    edges = length_edges(min(p.bucket_width, p.bucket_last), p.bucket_last)
    refs, src_len = tr.refs["all"], ex.src_len
    systems = CURVES + (["phrase-based"] if tr.base is not None else [])
    out = {
        n: stats.bleu_by_length(tr.of(n), refs, src_len, edges, n_boot=p.n_boot) for n in systems
    }
    if int(out["RNNsearch-50"]["sentences"].sum()) != ex.n_test:
        raise AssertionError("every evaluated test sentence is in one bucket")
    return out


def _system_lines(ax, data: pd.DataFrame, y: str, systems) -> None:
    """Fig. 2's lines on ``ax``: ``y`` against ``mid`` for each ``system`` of ``data`` (long
    form), in the book's colour of each of ``systems``; "-30" models dashed, the phrase-based
    system dotted, a marker at each bucket."""
    colours = system_colors(systems)
    sns.lineplot(
        data=data,
        x="mid",
        y=y,
        hue="system",
        style="system",
        palette={shown(n): c for n, c in colours.items()},
        dashes={
            shown(n): (4, 2) if n.endswith("-30") else (1, 2) if n == "phrase-based" else ""
            for n in systems
        },
        markers=True,
        estimator=None,
        errorbar=None,
        ax=ax,
    )


def bleu_by_length_figure(by_length: dict[str, pd.DataFrame]):
    """B Fig. 2 drawn with seaborn: BLEU per bucket of every system with its bootstrap band
    (95%), the phrase-based system dotted, and the bucket sizes below. Returns the figure."""
    colours = system_colors(by_length)
    data = pd.concat([t.assign(system=shown(n)) for n, t in by_length.items()], ignore_index=True)
    fig, (ax, axn) = plt.subplots(
        2, 1, figsize=(WIDTH, 1.5 * HEIGHT), sharex=True, gridspec_kw={"height_ratios": [3, 1]}
    )
    _system_lines(ax, data, "bleu", by_length)
    for name, t in by_length.items():
        if name != "phrase-based":
            ax.fill_between(
                t["mid"], t["band_low"], t["band_high"], color=colours[name], alpha=0.15, lw=0
            )
    ax.set(ylabel="BLEU score")
    ax.legend(title=None)
    buckets = by_length["RNNsearch-50"]
    mids = buckets["mid"].to_numpy()
    axn.bar(
        mids,
        buckets["sentences"],
        width=0.8 * (mids[1] - mids[0]) if len(mids) > 1 else 8,
        color="0.7",
    )
    for x, n in zip(mids, buckets["sentences"]):
        axn.text(x, n, f"{n}", ha="center", va="bottom", fontsize=8)
    axn.set(ylabel="sentences", xlabel="sentence length (source tokens)")
    axn.set_xticks(mids, buckets["bucket"], fontsize=8)
    fig.tight_layout()
    return fig


def length_gaps(
    ex: RNNsearchExperiment,
    tr: Translations,
    by_length: dict,
    a: str = "RNNsearch-50",
    b: str = "RNNencdec-50",
) -> pd.DataFrame:
    """``a`` − ``b`` (RNNsearch-50 − RNNencdec-50) within each bucket of Fig. 2 (by the
    sentences' source lengths), by the paired bootstrap (:func:`rnnlib.stats.paired_bootstrap`):
    index ``bucket``, columns ``diff``, ``low``, ``high`` (NaN below two sentences), ``closed``
    (false for the open last bucket) and ``n`` (sentences)."""
    refs, src_len = tr.refs["all"], ex.src_len
    hyps_a, hyps_b, blocks = tr.of(a), tr.of(b), chapter_ids(ex)
    gaps = []
    for row in by_length["RNNsearch-50"].itertuples():
        members = np.flatnonzero((src_len >= row.low_len) & (src_len < row.high_len))
        gap = {"bucket": row.bucket, "diff": np.nan, "low": np.nan, "high": np.nan}
        gap["closed"] = bool(np.isfinite(row.high_len))
        if len(members) >= 2:
            res = stats.paired_bootstrap(
                [hyps_a[i] for i in members],
                [hyps_b[i] for i in members],
                [refs[i] for i in members],
                n_samples=ex.P.n_boot,
                blocks=None if blocks is None else blocks[members],
            )
            gap.update(diff=res["diff"], low=res["low"], high=res["high"])
        gaps.append({**gap, "n": len(members)})
    return pd.DataFrame(gaps).set_index("bucket")


def length_buckets(by_length: dict, gaps: pd.DataFrame) -> pd.DataFrame:
    """Fig. 2 as a table: per bucket, its sentences, every system's BLEU and the paired gap
    RNNsearch-50 − RNNencdec-50 with its interval."""
    table = by_length["RNNsearch-50"].set_index("bucket")[["sentences"]].copy()
    for name, t in by_length.items():
        table[shown(name)] = t["bleu"].round(2).values
    table["RNNsearch-50 − RNNencdec-50"] = [
        f"{r['diff']:+.2f} [{r['low']:.2f}, {r['high']:.2f}]" if r["n"] >= 2 else np.nan
        for _, r in gaps.iterrows()
    ]
    return table


def length_slopes(
    ex: RNNsearchExperiment, tr: Translations, src_len: np.ndarray | None = None
) -> dict:
    """Fig. 2 read as the paper reads it: RNNsearch-50's and RNNencdec-50's BLEU in each bucket of
    at least :data:`MIN_BUCKET` sentences inside the paper's range (the open last bucket left
    out) relative to their own anchor (the shortest such bucket with at least
    :data:`ANCHOR_MIN` sentences), the slope of each over length and their difference with a
    joint paired bootstrap over the test sentences (:func:`rnnlib.stats.
    relative_length_slopes`; its keys, ``a`` RNNsearch-50). ``src_len``: the sentences' lengths
    (default: their source lengths; a control passes them shuffled)."""
    p = ex.P
    edges = length_edges(min(p.bucket_width, p.bucket_last), p.bucket_last)
    rng = np.random.default_rng([p.seed, 24])
    return stats.relative_length_slopes(
        tr.of("RNNsearch-50"),
        tr.of("RNNencdec-50"),
        tr.refs["all"],
        ex.src_len if src_len is None else src_len,
        edges,
        MIN_BUCKET,
        n_boot=p.n_boot,
        seed=rng,
        anchor_min=ANCHOR_MIN,
        open_bucket=False,
    )


def relative_by_length(by_length: dict) -> pd.DataFrame:
    """Every curve of Fig. 2 (buckets of at least :data:`MIN_BUCKET` sentences) relative to its
    own BLEU in its anchor, the shortest bucket of at least :data:`ANCHOR_MIN` sentences: long
    form (``system``, ``bucket``, ``mid``, ``relative``)."""
    rows = [pd.DataFrame(columns=["bucket", "mid", "system", "relative"])]
    for name, t in by_length.items():
        kept = t[t["sentences"] >= MIN_BUCKET]
        anchor = kept[kept["sentences"] >= ANCHOR_MIN]
        if not len(anchor):
            continue
        first = float(anchor["bleu"].iloc[0])
        rel = kept["bleu"] / first if first > 0 else np.nan
        rows.append(kept[["bucket", "mid"]].assign(system=shown(name), relative=rel))
    return pd.concat(rows, ignore_index=True)


def relative_length_figure(by_length: dict):
    """Fig. 2's relative view: each system's BLEU per bucket over its own anchor's (buckets of at
    least :data:`MIN_BUCKET` sentences, the anchor the shortest of at least :data:`ANCHOR_MIN`),
    a dashed line at 1. Returns the figure."""
    data = relative_by_length(by_length)
    fig, ax = plt.subplots(figsize=(WIDTH, HEIGHT))
    _system_lines(ax, data, "relative", by_length)
    ax.axhline(1.0, color="0.5", lw=0.8, ls="--")
    ticks = data.drop_duplicates("mid").sort_values("mid")
    ax.set_xticks(ticks["mid"], ticks["bucket"], fontsize=8)
    ax.set(
        xlabel="sentence length (source tokens)",
        ylabel="BLEU / BLEU of the anchor bucket",
    )
    ax.legend(title=None)
    fig.tight_layout()
    return fig


def numbers(slopes: dict) -> dict[str, tuple[float, int]]:
    """``glue name -> (value, digits)``: the relative slopes in % of the anchor bucket's BLEU per
    10 tokens, and their difference with its interval; the anchor (its label, its sentences) and
    RNNencdec-50's BLEU there; how many buckets the slopes read."""
    per10 = {k: 1000 * slopes[k] for k in ("slope_a", "slope_b", "diff", "low", "high")}
    table, anchor = slopes["buckets"], slopes["anchor"]
    at = table.set_index("bucket").loc[anchor] if anchor is not None else None
    return {
        "rns-slope-search50": (per10["slope_a"], 1),
        "rns-slope-encdec50": (per10["slope_b"], 1),
        "rns-slope-diff": (per10["diff"], 1),
        "rns-slope-diff-low": (per10["low"], 1),
        "rns-slope-diff-high": (per10["high"], 1),
        "rns-slope-first-encdec50": (np.nan if at is None else float(at["bleu_b"]), 2),
        "rns-slope-anchor-n": (0 if at is None else int(at["sentences"]), None),
        "rns-slope-buckets": (len(table), None),
        "rns-anchor-min": (ANCHOR_MIN, None),
    }


def anchor_label(slopes: dict) -> str:
    """The bucket :func:`length_slopes` reads each model against ("none" without one)."""
    return "none" if slopes["anchor"] is None else str(slopes["anchor"])


def _paper_last(by_length: dict) -> pd.Series:
    """The row of Fig. 2's table for the paper's last bucket: the longest below the open one."""
    t = by_length["RNNsearch-50"]
    return t[np.isfinite(t["high_len"].to_numpy(dtype=float))].iloc[-1]


def longest_texts(by_length: dict, gaps: pd.DataFrame) -> dict[str, str]:
    """``glue name -> Markdown``: the bucket C-B-F2-3 reads (``rns-f2-longest``) and, when it is
    not the paper's last (50-59 by default), why (``rns-f2-longest-why``: that bucket's size)."""
    solid, last = _solid(gaps), _paper_last(by_length)
    if not len(solid):
        return {"rns-f2-longest": "none", "rns-f2-longest-why": ""}
    why = (
        ""
        if solid.index[-1] == last["bucket"]
        else f" (bucket {last['bucket']} holds only {int(last['sentences'])} sentences)"
    )
    return {"rns-f2-longest": str(solid.index[-1]), "rns-f2-longest-why": why}


def beyond(ex: RNNsearchExperiment, tr: Translations, by_length: dict) -> dict:
    """The extension past the paper's axis, shown and not judged: RNNsearch-50's BLEU on all
    sentences − on the open last bucket (``>= bucket_last``, sentences longer than the paper
    plots), paired (:func:`rnnlib.stats.subset_difference`); ``glue name -> (value, digits)``
    (NaN below two sentences), and ``rns-f2-beyond``, the drop with its interval in words."""
    t = by_length["RNNsearch-50"]
    row = t[~np.isfinite(t["high_len"].to_numpy(dtype=float))].iloc[-1]
    mask = ex.src_len >= row["low_len"]
    out = {"rns-f2-beyond-n": (int(mask.sum()), None)}
    res = {"diff": np.nan, "low": np.nan, "high": np.nan}
    if mask.sum() >= 2:
        search = tr.of("RNNsearch-50")
        res = stats.subset_difference(
            search, tr.refs["all"], mask, n_samples=ex.P.n_boot, blocks=chapter_ids(ex)
        )
    # subset_difference gives bucket − all; the drop is all − bucket
    drop, low, high = -res["diff"], -res["high"], -res["low"]
    out.update(
        {
            "rns-f2-beyond-drop": (drop, 2),
            "rns-f2-beyond-low": (low, 2),
            "rns-f2-beyond-high": (high, 2),
            "rns-f2-beyond": f"{drop:+.2f} [{low:.2f}, {high:.2f}]"
            if np.isfinite(drop)
            else "not measured (fewer than two sentences)",
        }
    )
    return out


def _band(by_length: dict, name: str, bucket) -> tuple[float, float, float]:
    row = by_length[name].set_index("bucket").loc[bucket]
    return float(row["bleu"]), float(row["band_low"]), float(row["band_high"])


def _drop_rule(by_length: dict, short, long_, note: str = "") -> verdicts.Check:
    """C-B-F2-1's rule: RNNencdec-50's BLEU in bucket ``short`` − in ``long_`` above 0 (the
    two bands combined: conservative)."""
    s, l = _band(by_length, "RNNencdec-50", short), _band(by_length, "RNNencdec-50", long_)
    return verdicts.intervals_above(
        [(f"RNNencdec-50 in {short} − in {long_}", s[0] - l[0], s[1] - l[2], s[2] - l[1])],
        note=note,
    )


def _no_drop_rule(res: dict, margin: float, label: str, note: str = "") -> verdicts.Check:
    """C-B-F2-3's rule, a null claim: BLEU(all) − BLEU(bucket) (from
    :func:`rnnlib.stats.subset_difference`) is at most ``margin``."""
    return verdicts.within_margin(
        [(label, -res["diff"], -res["high"], -res["low"])], margin, side="above", note=note
    )


def cut_translations(hyps: list[str], members: np.ndarray) -> list[str]:
    """``hyps`` with the sentences ``members`` cut after half their words: C-B-F2-3's control,
    a system that deteriorates on those sentences."""
    out, members = list(hyps), set(int(i) for i in members)
    for i in members:
        words = out[i].split()
        out[i] = " ".join(words[: len(words) // 2])
    return out


def _slopes_rule(slopes: dict, note: str = "") -> verdicts.Check:
    """C-B-F2-2's rule: RNNsearch-50's relative slope − RNNencdec-50's above 0 (its interval
    from the joint paired bootstrap of :func:`length_slopes`), in points of the shortest bucket's
    BLEU per 10 tokens."""
    per10 = [1000 * slopes[k] for k in ("diff", "low", "high")]
    return verdicts.intervals_above(
        [("relative slope RNNsearch-50 − RNNencdec-50 (per 10 tokens)", *per10)], note=note
    )


def _solid(gaps: pd.DataFrame) -> pd.DataFrame:
    """The buckets of :func:`length_gaps` inside the paper's range (not the open last one) with
    at least :data:`MIN_BUCKET` sentences, the only ones that carry a claim ("solid" buckets)."""
    return gaps[(gaps["n"] >= MIN_BUCKET) & gaps["closed"]]


def _too_few(claim: str) -> ClaimCheck:
    """``claim`` not measurable: fewer than two solid buckets."""
    why = (
        f"fewer than two length buckets below the open last one hold at least {MIN_BUCKET} "
        "test sentences"
    )
    return ClaimCheck(claim, verdicts.not_measurable(why), f"rns-f2-claim{claim[-1]}")


def _shuffled_lengths(ex: RNNsearchExperiment) -> np.ndarray:
    """``(n_test,)``: the test sentences' source lengths shuffled (seeded), the control of C-B-F2-1
    and C-B-F2-2: the same buckets' sizes, the lengths no longer the sentences'."""
    return np.random.default_rng([ex.P.seed, 2]).permutation(ex.src_len)


#: what the controls of C-B-F2-1 and C-B-F2-2 read
SHUFFLED_WHAT = "the same buckets with the test sentences' lengths shuffled (seeded)"


def claim_f2_1(
    ex: RNNsearchExperiment, tr: Translations, by_length: dict, gaps: pd.DataFrame
) -> ClaimCheck:
    """C-B-F2-1, RNNencdec-50's BLEU drops as the sentences get longer. B §5.1: "In Fig. 2, we
    see that the performance of RNNencdec dramatically drops as the length of the sentences
    increases." Its BLEU in the shortest solid bucket − in the longest above 0 (bands combined:
    conservative); control: the same with the sentences' lengths shuffled; floor: RNNencdec-50
    in the shortest bucket (a model at zero cannot drop)."""
    solid = _solid(gaps)
    if len(solid) < 2:
        return _too_few("C-B-F2-1")
    p, short, long_ = ex.P, solid.index[0], solid.index[-1]
    edges = length_edges(min(p.bucket_width, p.bucket_last), p.bucket_last)
    by_shuffled = {
        n: stats.bleu_by_length(
            tr.of(n), tr.refs["all"], _shuffled_lengths(ex), edges, n_boot=p.n_boot
        )
        for n in ("RNNsearch-50", "RNNencdec-50")
    }
    note = (
        f"buckets {short} and {long_}, the shortest and longest with at least {MIN_BUCKET} "
        "sentences; 95% bootstrap within each bucket; one training run per model"
    )
    drop = verdicts.controlled(
        _drop_rule(by_length, short, long_, note + " (bands combined: conservative)"),
        SHUFFLED_WHAT,
        _drop_rule(by_shuffled, short, long_),
    )
    in_short = [(f"RNNencdec-50 in {short}", _band(by_length, "RNNencdec-50", short)[0])]
    drop = bleu_floor(drop, in_short, "the shortest bucket, where the drop would start")
    return ClaimCheck("C-B-F2-1", drop, "rns-f2-claim1")


def claim_f2_2(
    ex: RNNsearchExperiment,
    tr: Translations,
    by_length: dict,
    gaps: pd.DataFrame,
    slopes: dict | None = None,
) -> ClaimCheck:
    """C-B-F2-2, RNNsearch degrades much less than RNNencdec as the sentences get longer. B
    §5.1: "On the other hand, both RNNsearch-30 and RNNsearch-50 are more robust to the length of
    the sentences." The difference of the two models' slopes relative to their own anchor
    bucket (``slopes``, :func:`length_slopes`; computed when ``None``) above 0; control: the same
    with the sentences' lengths shuffled; floor: both models in the anchor bucket."""
    solid = _solid(gaps)
    if len(solid) < 2:
        return _too_few("C-B-F2-2")
    p = ex.P
    slopes = length_slopes(ex, tr) if slopes is None else slopes
    short = slopes["anchor"]
    if short is None:
        why = f"no length bucket below the open last one holds {ANCHOR_MIN} test sentences"
        return ClaimCheck("C-B-F2-2", verdicts.not_measurable(why), "rns-f2-claim2")
    widening = verdicts.controlled(
        _slopes_rule(
            slopes,
            f"least-squares slopes of each model's BLEU over its own in bucket {short} (the "
            f"shortest of at least {ANCHOR_MIN} sentences), over the {len(solid)} buckets of at "
            f"least {MIN_BUCKET} sentences below the open last one; 95% interval from "
            f"{p.n_boot} resamples drawing each bucket's sentences for both models at once; "
            "one training run per model",
        ),
        SHUFFLED_WHAT,
        _slopes_rule(length_slopes(ex, tr, src_len=_shuffled_lengths(ex))),
    )
    in_short = [
        (f"{n} in {short}", _band(by_length, n, short)[0]) for n in ("RNNencdec-50", "RNNsearch-50")
    ]
    widening = bleu_floor(widening, in_short, "the anchor bucket, both models")
    return ClaimCheck("C-B-F2-2", widening, "rns-f2-claim2")


def claim_f2_3(
    ex: RNNsearchExperiment, tr: Translations, by_length: dict, gaps: pd.DataFrame
) -> ClaimCheck:
    """C-B-F2-3, RNNsearch-50 shows no deterioration on the longest sentences. B §5.1:
    "RNNsearch-50, especially, shows no performance deterioration even with sentences of length
    50 or more." BLEU(all) − BLEU(longest solid bucket) by :func:`rnnlib.stats.subset_difference`
    (the bucket within the whole), a null claim: holds when the drop's upper end is at most
    :data:`NO_DROP_MARGIN` of its BLEU on all; control: its translations with the longest
    bucket's cut in half; floor: its BLEU on all. The longest solid bucket is the paper's last
    (50-59 by default: its axis ends at 60, its models saw no sentence over 50 words) unless that
    holds fewer than :data:`MIN_BUCKET` sentences; the open bucket beyond is :func:`beyond`'s."""
    solid = _solid(gaps)
    if len(solid) < 2:
        return _too_few("C-B-F2-3")
    p, refs, long_ = ex.P, tr.refs["all"], solid.index[-1]
    edge = by_length["RNNsearch-50"].set_index("bucket").loc[long_]
    mask = (ex.src_len >= edge["low_len"]) & (ex.src_len < edge["high_len"])
    search, blocks = tr.of("RNNsearch-50"), chapter_ids(ex)
    res = stats.subset_difference(search, refs, mask, n_samples=p.n_boot, blocks=blocks)
    margin = NO_DROP_MARGIN * res["bleu_all"]
    cut = cut_translations(search, np.flatnonzero(mask))
    cut_res = stats.subset_difference(cut, refs, mask, n_samples=p.n_boot, blocks=blocks)
    label = f"RNNsearch-50: BLEU on all − in {long_}"
    note = (
        f"bucket {long_} (the longest inside the paper's axis with at least {MIN_BUCKET} "
        f"sentences) within all {ex.n_test} sentences, paired (subset_difference, "
        f"{p.n_boot} resamples of {'the sentences' if blocks is None else 'whole chapters'}); "
        f"margin: {NO_DROP_MARGIN:.0%} of its BLEU on all; one "
        "training run"
    )
    robust = verdicts.controlled(
        _no_drop_rule(res, margin, label, note=note),
        f"RNNsearch-50's translations with those of bucket {long_} cut after half their words "
        "(a system that deteriorates there)",
        _no_drop_rule(cut_res, margin, label),
    )
    robust = bleu_floor(robust, [("RNNsearch-50, all", res["bleu_all"])], "all sentences")
    return ClaimCheck("C-B-F2-3", robust, "rns-f2-claim3")


def claim_f2_4(
    ex: RNNsearchExperiment, tr: Translations, by_length: dict, gaps: pd.DataFrame
) -> ClaimCheck:
    """C-B-F2-4, RNNsearch-50 is ahead of RNNencdec-50 at every length. B §1: "The improvement is
    more apparent with longer sentences, but can be observed with sentences of any length."
    RNNsearch-50 − RNNencdec-50 above 0 in every solid bucket (paired bootstrap within it);
    control: RNNencdec-50 against itself (two identical systems); floor: both models in every
    solid bucket."""
    solid = _solid(gaps)
    if len(solid) < 2:
        return _too_few("C-B-F2-4")
    ctrl_gaps = length_gaps(ex, tr, by_length, a="RNNencdec-50").loc[solid.index]

    def rule(rows: pd.DataFrame, a: str, note: str = "") -> verdicts.Check:
        return verdicts.intervals_above(
            [
                (f"{a} − RNNencdec-50 in {b}", r["diff"], r["low"], r["high"])
                for b, r in rows.iterrows()
            ],
            note=note,
        )

    ahead = verdicts.controlled(
        rule(
            solid,
            "RNNsearch-50",
            f"every bucket with at least {MIN_BUCKET} sentences; paired bootstrap within the "
            "bucket; one training run per model",
        ),
        IDENTICAL_WHAT + " RNNencdec-50 in place of RNNsearch-50",
        rule(ctrl_gaps, "RNNencdec-50"),
    )
    read = [
        (f"{n} in {b}", _band(by_length, n, b)[0])
        for b in solid.index
        for n in ("RNNencdec-50", "RNNsearch-50")
    ]
    ahead = bleu_floor(ahead, read, "every bucket the claim reads, both models")
    return ClaimCheck("C-B-F2-4", ahead, "rns-f2-claim4")


def claims(
    ex: RNNsearchExperiment,
    tr: Translations,
    by_length: dict,
    gaps: pd.DataFrame,
    slopes: dict | None = None,
) -> list[ClaimCheck]:
    """The claims of B Fig. 2 in the order the chapter records them, each on the solid buckets
    (at least :data:`MIN_BUCKET` sentences), with a control and floored at
    :data:`rnnlib.verdicts.BLEU_FLOOR` (with fewer than two solid buckets, none measurable, in
    the order of their IDs)."""
    if len(_solid(gaps)) < 2:
        return [_too_few(f"C-B-F2-{k}") for k in range(1, 5)]
    return [
        claim_f2_2(ex, tr, by_length, gaps, slopes),
        claim_f2_1(ex, tr, by_length, gaps),
        claim_f2_3(ex, tr, by_length, gaps),
        claim_f2_4(ex, tr, by_length, gaps),
    ]


def texts(by_length: dict, gaps: pd.DataFrame) -> dict[str, str]:
    """``glue name -> Markdown`` of Fig. 2's prose: the gap RNNsearch-50 − RNNencdec-50 in the
    shortest and longest solid buckets, each model's BLEU there with its band, and how many solid
    buckets have RNNsearch-50 ahead beyond the noise."""
    solid = _solid(gaps)
    if len(solid) < 2:
        keys = ("rns-gap-short", "rns-gap-long", "rns-f2-enc", "rns-f2-search")
        return {**dict.fromkeys(keys, "(too few sentences)"), "rns-f2-above": "none of the"}

    def interval(v):
        return f"{v[0]:.2f} [{v[1]:.2f}, {v[2]:.2f}]"

    short, long_ = solid.index[0], solid.index[-1]
    first, last = solid.iloc[0], solid.iloc[-1]
    enc = _band(by_length, "RNNencdec-50", short), _band(by_length, "RNNencdec-50", long_)
    search = _band(by_length, "RNNsearch-50", short), _band(by_length, "RNNsearch-50", long_)
    return {
        "rns-gap-short": f"{first['diff']:+.2f} [{first['low']:.2f}, {first['high']:.2f}] "
        f"in bucket {short}",
        "rns-gap-long": f"{last['diff']:+.2f} [{last['low']:.2f}, {last['high']:.2f}] "
        f"in bucket {long_}",
        "rns-f2-enc": f"from {interval(enc[0])} to {interval(enc[1])}",
        "rns-f2-search": f"from {interval(search[0])} to {interval(search[1])}",
        "rns-f2-above": f"{int((solid['low'] > 0).sum())} of the {len(solid)}",
    }


def by_seed(
    ex: RNNsearchExperiment, tr: Translations, sr: SeedRuns
) -> list[tuple[int, list[ClaimCheck]]]:
    """``(seed, checks)``: the claims of Fig. 2 (:func:`claims`, every one about the
    "-50" pair) measured on each further seed's translations as on the chapter's own."""
    out = []
    for k, seed in enumerate(sr.seeds[1:], start=1):
        t = seed_translations(tr, sr, k)
        by_length = bleu_by_length(ex, t)
        gaps = length_gaps(ex, t, by_length)
        out.append((seed, claims(ex, t, by_length, gaps, length_slopes(ex, t))))
    return out
