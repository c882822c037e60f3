"""Are the gates needed? The phrase scorer set against the same network with plain tanh units
(Cho et al. 2014, §2.3, of tanh units: "We were not able to get meaningful result").

* :func:`gating_ablation` -- the tanh network and the GRU (the scorer, or its run stopped at the
  same number of updates) trained by :func:`rnnlib.experiments.cho2014.scorer.scorer_variant` on the
  same pairs, with the dev NLL of each held-out pair, the NLL at update 0 and the tanh - GRU
  difference with its bootstrap interval (:func:`rnnlib.stats.bootstrap_mean`);
* :func:`numbers` and :func:`claim_gru_1` -- the numbers the chapter's prose shows
  and the claim's evidence (C-A-GRU-1, :mod:`rnnlib.book.claims`), with its control (the GRU
  against itself) and its floor (:data:`LEARNED_FLOOR`: the GRU beats the unigram model of the
  targets, :func:`rnnlib.experiments.cho2014.controls.held_out_unigram_nll`);
* :func:`ablation_curves` -- dev NLL against updates for both networks (seaborn);
* :func:`samples_table` -- held-out source phrases with the most frequent of ``n`` samples
  from each network (:func:`most_frequent_sample`, as A's Table 3 reads samples).

Deviations
----------
- A §2.3 says only that plain tanh units gave no meaningful results, not how long they were
  trained: both networks train for ``ablation_updates`` updates (the scorer's by default) and
  only the measurable half of the claim is tested, a higher dev NLL per held-out pair.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pandas as pd
import torch

from ... import stats
from ...book import claims
from ... import verdicts
from ...presets import build_model
from ...smt.rnn_scorer import encode_pairs, score_pairs
from ..cho2014.controls import held_out_unigram_nll
from .floor import FLOOR_UNIT, LEARNED_FLOOR
from .setting import Params, PhraseScorer, scorer_variant, trained_threads


@dataclass
class Ablation:
    """The gating ablation (:func:`gating_ablation`).

    ``scorer``: the phrase scorer (GRU) over its whole run; ``tanh``: the network with tanh
    units; ``gru``: the scorer at the ablation's updates (``scorer`` itself when they are the
    same); ``tanh_model``, ``gru_model``: their trained networks; ``nll_tanh``, ``nll_gru``:
    ``(held-out pairs,) float64`` dev NLL of each pair (nats); ``start_nll``: the mean dev NLL of
    each network before training (``"gru"``, ``"tanh"``); ``gap``: ``nll_tanh - nll_gru`` per
    pair (a diverged network's NaN stays NaN: it is no evidence, and the claim is then not
    measurable); ``interval``: its mean with the 95% bootstrap interval over the pairs, ``(mean,
    low, high)``; ``artifacts``: what the ablation was computed from (the corpus, the scorer, the
    tanh and GRU runs); ``nll_unigram``: each pair's NLL under the unigram model of the training
    targets (:func:`rnnlib.experiments.cho2014.controls.held_out_unigram_nll`), the floor of
    what the GRU learned."""

    scorer: PhraseScorer
    tanh: PhraseScorer
    gru: PhraseScorer
    tanh_model: torch.nn.Module
    gru_model: torch.nn.Module
    nll_tanh: np.ndarray
    nll_gru: np.ndarray
    start_nll: dict[str, float]
    gap: np.ndarray
    interval: tuple[float, float, float]
    artifacts: list
    nll_unigram: np.ndarray | None = None

    @property
    def floor_value(self) -> float:
        """How far the GRU's mean dev NLL lies below the unigram model's (nats per pair): the
        value :data:`LEARNED_FLOOR` applies to (NaN without the unigram model's NLL)."""
        if self.nll_unigram is None:
            return float("nan")
        return float(self.nll_unigram.mean() - self.nll_gru.mean())

    @property
    def updates(self) -> int:
        """The updates each network trained for."""
        return int(self.tanh.artifact.extra["updates"])


def ablation_runs(
    cache, corpus, scorer: PhraseScorer, updates: int | None
) -> tuple[PhraseScorer, PhraseScorer]:
    """The two networks of the ablation, trained or read from ``cache``, in this order: the tanh
    network and the GRU at ``updates`` updates (``None``: the scorer's; then the GRU is the
    scorer itself), both by :func:`rnnlib.experiments.cho2014.scorer.scorer_variant` on
    ``scorer``'s pairs."""
    tanh = scorer_variant(cache, corpus, scorer, unit="tanh", updates=updates)
    gru = scorer_variant(cache, corpus, scorer, unit="gru", updates=updates)
    return tanh, gru


def gating_ablation(
    cache,
    corpus,
    scorer: PhraseScorer,
    untrained: torch.nn.Module,
    updates: int | None,
    n_boot: int,
    seed: int,
) -> Ablation:
    """A §2.3's ablation: ``scorer``'s network with tanh units and the GRU, both trained for
    ``updates`` updates (``None``: the scorer's), scored on the scorer's held-out pairs.

    ``untrained``: the scorer's network before training (update 0 of the GRU's curve); the tanh
    network's update 0 is built here from the scorer's training seed (the global torch seed is
    set to it). ``n_boot``, ``seed``: the bootstrap of the tanh - GRU difference."""
    tanh, gru = ablation_runs(cache, corpus, scorer, updates)
    tanh_model, gru_model = tanh.model(), gru.model()
    held = encode_pairs(scorer.held, corpus.src_vocab, corpus.tgt_vocab)
    nll_gru, nll_tanh = -score_pairs(gru_model, held), -score_pairs(tanh_model, held)
    torch.manual_seed(tanh.train_config.seed)  # update 0: both networks as their training started
    tanh_start = build_model(tanh.model_config).to(scorer.device)
    start_nll = {
        "gru": -score_pairs(untrained, held).mean(),
        "tanh": -score_pairs(tanh_start, held).mean(),
    }
    gap = nll_tanh - nll_gru  # a NaN (a diverged network) stays NaN: never evidence
    interval = stats.bootstrap_mean(gap, n_boot, seed)
    artifacts = [corpus, scorer.artifact, tanh.artifact, gru.artifact]
    unigram = held_out_unigram_nll(scorer, corpus)[0]
    return Ablation(
        scorer, tanh, gru, tanh_model, gru_model, nll_tanh, nll_gru, start_nll, gap, interval,
        artifacts, unigram,
    )  # fmt: skip


def numbers(abl: Ablation) -> dict:
    """The updates, both mean dev NLLs, the difference with its interval, the share (%) of pairs
    on which the tanh network is worse, the seconds per update of each network and the seconds
    the ablation's training took when it ran (the GRU's only when it is a run of its own)."""
    gap_mean, gap_low, gap_high = abl.interval
    extra = {name: run.artifact.extra for name, run in (("gru", abl.scorer), ("tanh", abl.tanh))}
    seconds = abl.tanh.artifact.extra["seconds"]
    if abl.gru.artifact.key != abl.scorer.artifact.key:
        seconds += abl.gru.artifact.extra["seconds"]
    return {
        "rep-abl-updates": abl.updates,
        "rep-abl-gru-nll": (abl.nll_gru.mean(), 2),
        "rep-abl-tanh-nll": (abl.nll_tanh.mean(), 2),
        "rep-abl-gap": (gap_mean, 2),
        "rep-abl-gap-low": (gap_low, 2),
        "rep-abl-gap-high": (gap_high, 2),
        "rep-abl-share-worse": (100 * float(np.mean(abl.gap > 0)), 1),
        "rep-abl-diverged": int(np.isnan(abl.gap).sum()),
        "rep-abl-unigram-nll": (float(np.mean(abl.nll_unigram)), 2),
        "rep-abl-gru-spu": (extra["gru"]["seconds"] / extra["gru"]["updates"], 3),
        "rep-abl-tanh-spu": (extra["tanh"]["seconds"] / extra["tanh"]["updates"], 3),
        "rep-abl-gru-threads": trained_threads(abl.scorer.artifact),
        "rep-abl-tanh-threads": trained_threads(abl.tanh.artifact),
        "rep-abl-seconds": (seconds, 0),
    }


def claim_gru_1(abl: Ablation, n_boot: int, seed: int) -> claims.ClaimCheck:
    """C-A-GRU-1. Paper A, §2.3: "In our preliminary experiments, we found that it is crucial to
    use this new unit with gating units. We were not able to get meaningful result with an
    oft-used tanh unit without any gating."

    Judged as: the tanh network's dev NLL per held-out pair is above the GRU's (the interval
    of the difference lies above 0; a NaN, a diverged network, is not measurable, never
    support). Control: the same rule on the GRU against itself (two identical systems: the
    difference is 0 on every pair, so the rule must not hold). Floor: the GRU's dev NLL at least
    :data:`LEARNED_FLOOR` nats per pair below the unigram model's. Its verdict is glued as
    ``rep-verdict-ablation``."""
    note = (
        f"the same network with tanh units, {abl.updates} updates each; {len(abl.gap)} held-out "
        "phrase pairs; 95% bootstrap interval over the pairs: covers the sampling of the pairs, "
        "not the training seed (one run of each network)"
    )
    check = verdicts.intervals_above([("tanh − GRU, dev NLL per pair", *abl.interval)], note=note)
    same = stats.bootstrap_mean(abl.nll_gru - abl.nll_gru, n_boot, seed)
    control = verdicts.intervals_above([("GRU − GRU, dev NLL per pair", *same)])
    check = verdicts.controlled(check, "the GRU against itself (two identical systems)", control)
    check = verdicts.floored(check, [("GRU", abl.floor_value)], LEARNED_FLOOR, FLOOR_UNIT)
    return claims.ClaimCheck("C-A-GRU-1", check, glue="rep-verdict-ablation")


def ablation_curves(abl: Ablation):
    """Dev NLL per held-out pair against updates (``eval_log.csv`` of each run, update 0 from
    :attr:`Ablation.start_nll`): the scorer over its whole run, the tanh network over the
    ablation's updates (dotted line)."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    from ...book import style

    names = {"gru": "GRU (the phrase scorer)", "tanh": "tanh units"}
    frames = []
    for key, run in (("gru", abl.scorer), ("tanh", abl.tanh)):
        log = pd.read_csv(run.artifact.file("eval_log.csv"))
        frames.append(
            pd.DataFrame(
                {
                    "update": [0, *log["update"]],
                    "dev_nll": [abl.start_nll[key], *log["dev_nll_sentence"]],
                    "network": names[key],
                }
            )
        )
    fig, ax = plt.subplots(figsize=(style.WIDTH, 4))
    sns.lineplot(
        pd.concat(frames), x="update", y="dev_nll", hue="network", style="network",
        markers=["o", "s"], dashes=["", (4, 2)], markersize=4, ax=ax,
        palette={names["gru"]: "black", names["tanh"]: "tab:red"},
    )  # fmt: skip
    ax.axvline(abl.updates, color="0.6", lw=0.8, ls=":")
    ax.set_xlabel("updates (minibatches of 64 phrase pairs)")
    ax.set_ylabel("dev NLL per phrase pair (nats)")
    ax.legend(fontsize=8, title=None)
    fig.tight_layout()
    return fig


def most_frequent_sample(
    model: torch.nn.Module,
    src_vocab,
    tgt_vocab,
    source: Sequence[str],
    n: int = 50,
    generator: torch.Generator | None = None,
) -> tuple[tuple[str, ...], int]:
    """The most frequent of ``n`` ancestral samples of the decoder for ``source`` (a word list),
    as A's Table 3 reads them (:func:`rnnlib.search.sample`), with how often it was drawn; ties
    go to the sample the model scores higher, then to the first drawn. ``generator``: on the
    model's device (:func:`rnnlib.search.sample` draws there)."""
    from ...batch import source_batch
    from ...search import sample

    batch = source_batch([src_vocab.encode(list(source))])
    hyps = sample(model, batch, n=n, generator=generator)[0]
    counts: dict[tuple[str, ...], int] = {}
    score: dict[tuple[str, ...], float] = {}
    for h in hyps:
        words = tuple(tgt_vocab.decode(h.tokens))
        counts[words] = counts.get(words, 0) + 1
        score.setdefault(words, h.score)
    best = max(counts, key=lambda w: (counts[w], score[w]))
    return best, counts[best]


def held_out_sources(held, min_len: int, count: int, seed: int) -> tuple[list, dict]:
    """``count`` source phrases of the held-out pairs ``held`` (of at least ``min_len`` words when
    there are any, else of any length), drawn with ``numpy.random.default_rng([seed, 2])`` and
    kept in sorted order, and ``{source: its first held-out target}``."""
    targets: dict = {}
    for src, tgt in held:
        targets.setdefault(src, tgt)
    long_held = sorted(s for s in targets if len(s) >= min_len) or sorted(targets)
    rng = np.random.default_rng([seed, 2])
    pick = np.sort(rng.choice(len(long_held), size=min(count, len(long_held)), replace=False))
    return [long_held[i] for i in pick], targets


def samples_table(abl: Ablation, corpus, P: Params) -> pd.DataFrame:
    """The table of the ablation's samples: for ``ablation_sources`` held-out source phrases
    (:func:`held_out_sources`, ``min_phrase_len``, ``seed``), one held-out target and the most
    frequent of ``ablation_samples`` samples of each network with its count (a generator seeded
    with ``seed`` on the network's device, per source and network). Index: the source."""
    sources, targets = held_out_sources(
        abl.scorer.held, P.min_phrase_len, P.ablation_sources, P.seed
    )
    rows = []
    for src in sources:
        row = {"source": " ".join(src), "held-out target": " ".join(targets[src])}
        for name, net in (("GRU", abl.gru_model), ("tanh", abl.tanh_model)):
            generator = torch.Generator(device=abl.scorer.device).manual_seed(P.seed)
            words, count = most_frequent_sample(
                net, corpus.src_vocab, corpus.tgt_vocab, src, n=P.ablation_samples,
                generator=generator,
            )  # fmt: skip
            row[f"{name}: most frequent sample"] = f"{' '.join(words) or '(empty)'} (×{count})"
        rows.append(row)
    return pd.DataFrame(rows).set_index("source")
