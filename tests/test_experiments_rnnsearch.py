"""rnnlib.experiments.rnnsearch: the claims, statistics and figures of chapter ``rnnsearch``
(Bahdanau et al. 2015) on small hand-made inputs."""

from __future__ import annotations

from types import SimpleNamespace

import matplotlib
import numpy as np
import pandas as pd
import pytest

from rnnlib import stats
from rnnlib.book import claims
from rnnlib.experiments import rnnsearch as R

matplotlib.use("Agg")


# -- Table 2's claims: one generator, in the chapter's order ---------------------------------------
def _runs(seconds: dict[str, np.ndarray], star_best: int = 6) -> SimpleNamespace:
    """Runs whose RNNsearch-50 has its best dev NLL at update 3, RNNsearch-50⋆ at ``star_best``."""
    extra = {"updates": 3, "epochs": 1.0, "seconds": 1.0, "device": "CPU", "dev_nll": 1.0}
    logs = {
        n: {"train": pd.DataFrame({"seconds": np.cumsum(seconds[n.rstrip("*")])})} for n in R.NAMES
    }
    runs = {n: SimpleNamespace(extra=dict(extra, best={"update": 3})) for n in R.NAMES}
    runs["RNNsearch-50*"].extra.update(updates=8, best={"update": star_best})
    return SimpleNamespace(runs=runs, logs=logs)


def _ex(n_boot=50, seed=3, **p) -> SimpleNamespace:
    params = {
        "n_boot": n_boot,
        "seed": seed,
        "len_short": 30,
        "len_long": 50,
        "updates_encdec": 10,
        "updates_search": 10,
        **p,
    }
    return SimpleNamespace(p=params, dev=list(range(40)))


def test_table_2_claims_draw_every_bootstrap_from_one_generator_in_order():
    rng = np.random.default_rng(0)
    nll = {n: rng.normal(50, 5, size=40) for n in R.NAMES}
    nll["RNNencdec-30"] += 3  # RNNencdec is worse: its NLL is higher
    seconds = {n: rng.uniform(0.1, 0.2, size=12) for n in ("RNNencdec-30", "RNNencdec-50")}
    seconds |= {n: rng.uniform(0.3, 0.4, size=12) for n in ("RNNsearch-30", "RNNsearch-50")}
    ex, runs = _ex(), _runs(seconds)
    checks = R.table_2_claims(ex, runs, nll)
    assert [c.claim for c in checks] == ["C-B-T2-1", "C-B-T2-2", "C-B-T2-3", "C-B-T2-4"]
    assert [c.glue for c in checks] == ["rns-t2-claim1", "rns-t2-claim2", "rns-t2-claim3", None]

    shared = np.random.default_rng(ex.p["seed"])  # the same draws, by hand, in the same order
    # the seconds of each update, as read back from the cumulative clock of the log
    seconds = {
        n: np.diff(runs.logs[n]["train"]["seconds"].to_numpy(), prepend=0.0) for n in seconds
    }
    expected = [
        stats.paired_difference(nll["RNNencdec-30"], nll["RNNsearch-30"], 50, shared),
        stats.paired_difference(nll["RNNencdec-50"], nll["RNNsearch-50"], 50, shared),
        stats.paired_difference(nll["RNNsearch-50"], nll["RNNsearch-50*"], 50, shared),
        stats.mean_difference(seconds["RNNsearch-30"], seconds["RNNencdec-30"], 50, shared),
        stats.mean_difference(seconds["RNNsearch-50"], seconds["RNNencdec-50"], 50, shared),
    ]
    got = [tuple(t[1:]) for c in checks[:3] for t in c.check.evidence["tests"]]
    assert got == expected  # bit for bit: the same resamples
    assert got[0][0] == pytest.approx((nll["RNNencdec-30"] - nll["RNNsearch-30"]).mean())
    assert claims.evaluate(checks[0].check).verdict in ("holds", "inside the noise")
    assert claims.evaluate(checks[2].check).verdict == "holds"  # 0.2 s more per update
    assert claims.evaluate(checks[3].check).verdict == "holds"


def test_table_2_claim_4_fails_when_a_run_logged_nothing():
    seconds = {n: np.full(4, 0.1) for n in ("RNNencdec-30", "RNNencdec-50")}
    seconds |= {n: np.full(4, 0.2) for n in ("RNNsearch-30", "RNNsearch-50")}
    runs = _runs(seconds)
    runs.logs["RNNsearch-50*"]["train"] = runs.logs["RNNsearch-50*"]["train"].iloc[:0]
    nll = {n: np.arange(40.0) for n in R.NAMES}
    check = R.table_2_claims(_ex(), runs, nll)[3].check
    assert claims.evaluate(check).verdict != "holds"


# -- Table 1's claims ------------------------------------------------------------------------------
def _tests(diff: float) -> dict:
    tr = SimpleNamespace(base=None)
    out = {}
    for _, a, b in R.comparisons(tr):
        for s in R.SUBSETS:
            out[(a, b, s)] = {"diff": diff, "low": diff - 1, "high": diff + 1}
    return out


def test_table_1_claims_in_the_chapters_order_and_phrase_based_not_measurable_without_it():
    systems = list(R.NAMES)
    scores = {
        (n, s): SimpleNamespace(score=10.0 + (s == "no_unk")) for n in systems for s in R.SUBSETS
    }
    tr = SimpleNamespace(base=None, systems=systems, star_same=False)
    checks = R.table_1_claims(_ex(), tr, _tests(2.0), scores)
    assert [c.claim for c in checks] == [
        "C-B-T1-1",
        "C-B-T1-2",
        "C-B-T1-3",
        "C-B-T1-5",
        "C-B-T1-4",
        "C-B-T1-6",
    ]
    assert [c.glue for c in checks] == ["rns-c1", "rns-c2", "rns-c3", "rns-c5", "rns-c4", "rns-c6"]
    first = checks[0].check.evidence["tests"]
    assert [t[0] for t in first] == [
        "RNNsearch-30 − RNNencdec-30, All",
        "RNNsearch-30 − RNNencdec-30, No UNK",
        "RNNsearch-50 − RNNencdec-50, All",
        "RNNsearch-50 − RNNencdec-50, No UNK",
    ]
    assert all(claims.evaluate(c.check).verdict == "holds" for c in checks[:5])
    assert checks[5].check.rule == "not_measurable"
    inside = R.table_1_claims(_ex(), tr, _tests(0.5), scores)  # intervals include 0
    assert claims.evaluate(inside[0].check).verdict != "holds"


def test_a_model_compared_with_itself_is_no_evidence():
    """RNNsearch-50⋆ delivering RNNsearch-50's parameters: C-B-T1-5 and C-B-T2-2 are not judged,
    Table 1 marks the row."""
    seconds = {n: np.full(4, 0.1) for n in ("RNNencdec-30", "RNNencdec-50")}
    seconds |= {n: np.full(4, 0.2) for n in ("RNNsearch-30", "RNNsearch-50")}
    same, other = _runs(seconds, star_best=3), _runs(seconds, star_best=6)
    assert R.star_is_search50(same) and not R.star_is_search50(other)
    nll = {n: np.random.default_rng(1).normal(50, 5, size=40) for n in R.NAMES}
    t2 = {c.claim: c.check for c in R.table_2_claims(_ex(), same, nll)}
    assert t2["C-B-T2-2"].rule == "not_measurable" and "itself" in t2["C-B-T2-2"].evidence["reason"]
    assert R.table_2_claims(_ex(), other, nll)[1].check.rule == "intervals_above"

    systems = list(R.NAMES)
    scores = {(n, s): SimpleNamespace(score=10.0) for n in systems for s in R.SUBSETS}
    tr = SimpleNamespace(base=None, systems=systems, star_same=True)
    t1 = {c.claim: c.check for c in R.table_1_claims(_ex(), tr, _tests(2.0), scores)}
    assert t1["C-B-T1-5"].rule == "not_measurable"
    assert t1["C-B-T1-1"].rule == "intervals_above"  # the other claims are judged as before
    table = R.table_1(tr, scores)
    assert table.loc["RNNsearch-50⋆", "note"].startswith("= RNNsearch-50")
    assert (table.drop(index="RNNsearch-50⋆")["note"] == "").all()


# -- Fig. 2 ----------------------------------------------------------------------------------------
def _by_length(bleu: dict[str, list[float]], sentences: list[int]) -> dict[str, pd.DataFrame]:
    edges = [0, 10, 20]
    rows = lambda values: pd.DataFrame(  # noqa: E731
        {
            "bucket": ["0-9", "10-19", ">=20"],
            "low_len": edges,
            "high_len": [10, 20, np.inf],
            "mid": [4.5, 14.5, 25.0],
            "sentences": sentences,
            "bleu": values,
            "band_low": [v - 1 for v in values],
            "band_high": [v + 1 for v in values],
        }
    )
    return {n: rows(v) for n, v in bleu.items()}


def test_figure_2_claims_compare_the_shortest_and_longest_solid_buckets():
    by_length = _by_length(
        {"RNNsearch-50": [20, 20, 23], "RNNencdec-50": [18, 12, 6]}, [30, 25, 22]
    )
    gaps = pd.DataFrame(
        {"diff": [2.0, 8.0, 15.0], "low": [1.0, 6.0, 12.0], "high": [3.0, 10.0, 18.0]},
        index=pd.Index(["0-9", "10-19", ">=20"], name="bucket"),
    ).assign(n=[30, 25, 22])
    scores = {("RNNsearch-50", "all"): SimpleNamespace(score=20.0)}
    texts, checks = R.figure_2_claims(by_length, gaps, scores)
    assert [c.claim for c in checks] == ["C-B-F2-2", "C-B-F2-1", "C-B-F2-3", "C-B-F2-4"]
    assert texts["rns-gap-short"] == "+2.00 [1.00, 3.00] in bucket 0-9"
    assert texts["rns-f2-enc"] == "from 18.00 [17.00, 19.00] to 6.00 [5.00, 7.00]"
    assert texts["rns-f2-above"] == "3 of the 3"
    assert all(claims.evaluate(c.check).verdict == "holds" for c in checks)
    # the widening's interval combines the two buckets' intervals: 12 - 3 to 18 - 1
    assert checks[0].check.evidence["tests"][0][1:] == [13.0, 9.0, 17.0]


def test_figure_2_claims_are_not_measurable_below_two_solid_buckets():
    by_length = _by_length({"RNNsearch-50": [1, 2, 3], "RNNencdec-50": [1, 2, 3]}, [5, 25, 3])
    gaps = pd.DataFrame(
        {"diff": [0.0] * 3, "low": [0.0] * 3, "high": [0.0] * 3, "n": [5, 25, 3]},
        index=pd.Index(["0-9", "10-19", ">=20"], name="bucket"),
    )
    texts, checks = R.figure_2_claims(by_length, gaps, {})
    assert [c.claim for c in checks] == ["C-B-F2-1", "C-B-F2-2", "C-B-F2-3", "C-B-F2-4"]
    assert all(c.check.rule == "not_measurable" for c in checks)
    assert texts["rns-f2-above"] == "none of the"


def test_length_buckets_and_gaps_use_the_paired_bootstrap_within_each_bucket():
    refs = [f"the cat sat on mat number {i} today" for i in range(8)]
    search = list(refs)
    encdec = [r.replace("cat", "dog").replace("mat", "rug") for r in refs]
    src_len = np.array([3, 4, 5, 12, 13, 14, 15, 25])
    tr = SimpleNamespace(
        refs={"all": refs},
        of=lambda n, s="all": {"RNNsearch-50": search, "RNNencdec-50": encdec}[n],
    )
    by_length = {
        n: stats.bleu_by_length(tr.of(n), refs, src_len, [0, 10, 20], n_boot=0)
        for n in ("RNNsearch-50", "RNNencdec-50")
    }
    ex = SimpleNamespace(src_len=src_len, p={"n_boot": 20})
    gaps = R.length_gaps(ex, tr, by_length)
    assert list(gaps["n"]) == [3, 4, 1]
    inside = stats.paired_bootstrap(search[3:7], encdec[3:7], refs[3:7], n_samples=20)
    assert gaps.loc["10-19", "diff"] == pytest.approx(inside["diff"]) and inside["diff"] > 0
    assert np.isnan(gaps.loc[">=20", "diff"])  # one sentence: no interval
    table = R.length_buckets(by_length, gaps)
    assert list(table.columns) == [
        "sentences",
        "RNNsearch-50",
        "RNNencdec-50",
        "RNNsearch-50 − RNNencdec-50",
    ]
    assert table["sentences"].sum() == len(refs)
    assert pd.isna(table.loc[">=20", "RNNsearch-50 − RNNencdec-50"])


def test_bleu_by_length_figure_draws_a_line_and_a_band_per_network_and_the_bucket_sizes():
    names = R.CURVES + ["phrase-based"]
    by_length = _by_length({n: [10.0 + i, 12.0, 9.0] for i, n in enumerate(names)}, [3, 4, 5])
    fig = R.bleu_by_length_figure(by_length)
    ax, axn = fig.axes
    assert len(ax.get_lines()) >= len(names)
    assert len(ax.collections) >= len(R.CURVES)  # one band per network
    assert [t.get_text() for t in axn.get_xticklabels()] == ["0-9", "10-19", ">=20"]
    assert sorted(p.get_height() for p in axn.patches) == [3, 4, 5]


# -- Fig. 3 ----------------------------------------------------------------------------------------
def test_alignment_stats_count_monotone_rows_reorderings_spread_and_the_end():
    diagonal = np.eye(4)  # 3 words and the end, 3 source words and the end: monotone
    swapped = np.array(  # an adjective-noun inversion, a spread row, the end on the end
        [[0.9, 0.05, 0.05], [0.1, 0.1, 0.8], [0.2, 0.5, 0.3], [0.0, 0.1, 0.9]]
    )
    items = [{"weights": diagonal.tolist()}, {"weights": swapped.tolist()}]
    a = R.alignment_stats(items)
    assert a.monotone == [1.0, 0.5] and a.end_to_end == 2 and a.panels == 2
    assert a.inversions == 1 and a.spread == 1 and a.rows == 6
    assert a.row_error < 1e-12
    checks = R.alignment_claims(a)
    assert [c.claim for c in checks] == ["C-B-F3-1", "C-B-F3-4", "C-B-F3-2", "C-B-F3-3"]
    assert claims.evaluate(checks[0].check).verdict == "holds"  # 75% >= 70%
    assert all(claims.evaluate(c.check).verdict == "holds" for c in checks[1:])


def test_alignment_claims_are_not_measurable_without_generated_words():
    a = R.alignment_stats([{"weights": [[0.0, 1.0]]}])  # only the end row
    checks = R.alignment_claims(a)
    assert checks[0].check.rule == "not_measurable"
    assert checks[2].check.rule == checks[3].check.rule == "not_measurable"


def test_alignment_figure_draws_one_greyscale_panel_per_item():
    items = [
        {"label": f"({k})", "source": ["a", "b"], "output": ["x"], "weights": np.eye(2, 3).tolist()}
        for k in "abc"
    ]
    fig = R.alignment_figure(items)
    used = [ax for ax in fig.axes if ax.images]
    assert len(used) == 3 and all(ax.images[0].get_cmap().name == "gray" for ax in used)
    assert [ax.get_xlabel() for ax in used] == ["(a)", "(b)", "(c)"]
