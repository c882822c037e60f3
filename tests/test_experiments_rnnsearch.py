"""rnnlib.experiments.rnnsearch: the claims, statistics and figures of chapter ``rnnsearch``
(Bahdanau et al. 2015) on small hand-made inputs."""

from __future__ import annotations

from types import SimpleNamespace

import matplotlib
import numpy as np
import pandas as pd
import pytest

from rnnlib import stats
from rnnlib.experiments.rnnsearch import figure_2, figure_3, setting

matplotlib.use("Agg")


# -- Table 2's claims: one generator, in the chapter's order ---------------------------------------
def _runs(seconds: dict[str, np.ndarray], star_best: int = 6) -> SimpleNamespace:
    """Runs whose RNNsearch-50 has its best dev NLL at update 3, RNNsearch-50⋆ at ``star_best``."""
    extra = {"updates": 3, "epochs": 1.0, "seconds": 1.0, "device": "CPU", "dev_nll": 1.0}
    logs = {
        n: {"train": pd.DataFrame({"seconds": np.cumsum(seconds[n.rstrip("*")])})}
        for n in setting.NAMES
    }
    runs = {n: SimpleNamespace(extra=dict(extra, best={"update": 3})) for n in setting.NAMES}
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
    return SimpleNamespace(P=setting.Params(**params), dev=list(range(40)))


# -- Table 1's claims ------------------------------------------------------------------------------
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
    ex = SimpleNamespace(src_len=src_len, P=setting.Params(n_boot=20))
    gaps = figure_2.length_gaps(ex, tr, by_length)
    assert list(gaps["n"]) == [3, 4, 1]
    inside = stats.paired_bootstrap(search[3:7], encdec[3:7], refs[3:7], n_samples=20)
    assert gaps.loc["10-19", "diff"] == pytest.approx(inside["diff"]) and inside["diff"] > 0
    assert np.isnan(gaps.loc[">=20", "diff"])  # one sentence: no interval
    table = figure_2.length_buckets(by_length, gaps)
    assert list(table.columns) == [
        "sentences",
        "RNNsearch-50",
        "RNNencdec-50",
        "RNNsearch-50 − RNNencdec-50",
    ]
    assert table["sentences"].sum() == len(refs)
    assert pd.isna(table.loc[">=20", "RNNsearch-50 − RNNencdec-50"])


def test_bleu_by_length_figure_draws_a_line_and_a_band_per_network_and_the_bucket_sizes():
    names = figure_2.CURVES + ["phrase-based"]
    by_length = _by_length({n: [10.0 + i, 12.0, 9.0] for i, n in enumerate(names)}, [3, 4, 5])
    fig = figure_2.bleu_by_length_figure(by_length)
    ax, axn = fig.axes
    assert len(ax.get_lines()) >= len(names)
    assert len(ax.collections) >= len(figure_2.CURVES)  # one band per network
    assert [t.get_text() for t in axn.get_xticklabels()] == ["0-9", "10-19", ">=20"]
    assert sorted(p.get_height() for p in axn.patches) == [3, 4, 5]


# -- Fig. 3 ----------------------------------------------------------------------------------------
def test_alignment_figure_draws_one_greyscale_panel_per_item():
    items = [
        {"label": f"({k})", "source": ["a", "b"], "output": ["x"], "weights": np.eye(2, 3).tolist()}
        for k in "abc"
    ]
    fig = figure_3.alignment_figure(items)
    used = [ax for ax in fig.axes if ax.images]
    assert len(used) == 3 and all(ax.images[0].get_cmap().name == "gray" for ax in used)
    assert [ax.get_xlabel() for ax in used] == ["(a)", "(b)", "(c)"]
