"""B Table 2, learning statistics: per model our run beside the paper's, the numbers of its
prose, the per-sentence dev and test NLL of every model (``rnnsearch/dev_nll``,
``rnnsearch/test_nll``), the live timing of an update of each architecture, and the claims
C-B-T2-1 to C-B-T2-4."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pandas as pd

from ... import stats, verdicts
from ...batch import make_batch
from ...bench.against import interleaved
from ...bench.workload import train_step_fn
from ...book import papers
from ...book.claims import ClaimCheck
from ...cache import Artifact
from ...smt.rnn_scorer import score_pairs
from ...train import TrainConfig, cooldown_factor
from ..spread import across
from ..training_runs import length_filter, load_model
from .controls import untrained_model
from .seeds import SEED_PAIR, SEED_SHORT, SeedRuns
from .setting import NAMES, SHOWN, Params, RNNsearchExperiment, glue_key
from .training import (
    SELF_COMPARISON,
    Runs,
    run_specs,
    star_is_search50,
    star_own_seconds,
    star_start,
    updates_text,
)

#: the names of the paper's Table 2
TABLE2_NAME = {
    "RNNencdec-30": "RNNenc-30",
    "RNNencdec-50": "RNNenc-50",
    "RNNsearch-30": "RNNsearch-30",
    "RNNsearch-50": "RNNsearch-50",
    "RNNsearch-50*": "RNNsearch-50*",
}


def last_rate(art: Artifact, ev: pd.DataFrame) -> float:
    """The learning rate a run's last update used: the schedule's (the evaluation log's last
    ``lr``) times the cool-down's share of it at that update (:func:`rnnlib.train.cooldown_factor`);
    NaN for a log without rates."""
    if "lr" not in ev or not len(ev):
        return np.nan
    share = cooldown_factor(TrainConfig.from_dict(art.config["train"]), art.extra["updates"])
    return float(ev["lr"].iloc[-1]) * share


def seconds_per_update(art: Artifact) -> float:
    """A run's training seconds over its updates."""
    return art.extra["seconds"] / max(1, art.extra["updates"])


def table_2(ex: RNNsearchExperiment, runs: Runs) -> pd.DataFrame:
    """B Table 2, learning statistics: per model (index ``(model, source)``) our run beside the
    paper's: updates, epochs, hours, seconds per update, device, the train NLL per sentence
    (mean over the last ``eval_every`` updates) and the dev NLL per sentence."""
    rows = []
    for name in NAMES:
        art, log = runs.runs[name], runs.logs[name]["train"]
        paper = papers.B_TABLE2[TABLE2_NAME[name]]
        train_nll = log["train_nll_sentence"].tail(max(1, ex.P.eval_every)).mean()
        rows.append(
            {
                "model": SHOWN[name],
                "source": "this book",
                "updates": art.extra["updates"],
                "epochs": art.extra["epochs"],
                "hours": art.extra["seconds"] / 3600,
                "seconds per update": seconds_per_update(art),
                "device": art.extra["device"],
                "last rate": last_rate(art, runs.logs[name]["eval"]),
                "train NLL": train_nll,
                "dev NLL": art.extra["dev_nll"],
            }
        )
        rows.append(
            {
                "model": SHOWN[name],
                "source": "Bahdanau et al. (Table 2)",
                "updates": paper["updates"],
                "epochs": paper["epochs"],
                "hours": paper["hours"],
                "seconds per update": paper["hours"] * 3600 / paper["updates"],
                "device": paper["gpu"],
                "last rate": np.nan,
                "train NLL": paper["train_nll"],
                "dev NLL": paper["dev_nll"],
            }
        )
    table = pd.DataFrame(rows).set_index(["model", "source"])
    table["updates"] = table["updates"].map(lambda u: f"{u:,.0f}")
    rounding = {"epochs": 2, "hours": 3, "seconds per update": 3, "train NLL": 1, "dev NLL": 1}
    return table.round(rounding)


def training_numbers(ex: RNNsearchExperiment, runs: Runs) -> dict[str, tuple[Any, int | None]]:
    """``glue name -> (value, digits)``: the training set sizes, seconds per update (ours and
    the paper's ratio, B Table 2), the minutes spent, the updates of RNNsearch-50 and -50⋆."""
    r, own = runs.runs, [runs.runs[n] for n in run_specs(ex)]
    b2 = papers.B_TABLE2
    spu = {n: seconds_per_update(r[n]) for n in ("RNNsearch-50", "RNNencdec-50")}
    paper_spu = {n: b2[n]["hours"] / b2[n]["updates"] for n in ("RNNsearch-50", "RNNenc-50")}
    star_hours = star_own_seconds(runs) / 3600
    total_hours = sum(a.extra["seconds"] for a in own) / 3600 + star_hours
    with_bleu = own + [r["RNNsearch-50*"]] + ([runs.adadelta] if runs.adadelta is not None else [])
    ada_minutes = runs.adadelta.extra["seconds"] / 60 if runs.adadelta is not None else 0
    return {
        "rns-len-short": (ex.P.len_short, None),
        "rns-len-long": (ex.P.len_long, None),
        "rns-pairs-short": (r["RNNsearch-30"].extra["train_pairs"], None),
        "rns-pairs-long": (r["RNNsearch-50"].extra["train_pairs"], None),
        "rns-spu-search50": (spu["RNNsearch-50"], 3),
        "rns-spu-encdec50": (spu["RNNencdec-50"], 3),
        "rns-spu-ratio": (spu["RNNsearch-50"] / spu["RNNencdec-50"], 2),
        "rns-paper-spu-ratio": (paper_spu["RNNsearch-50"] / paper_spu["RNNenc-50"], 2),
        "rns-total-minutes": (60 * total_hours, 1),
        "rns-devbleu-minutes": (sum(a.extra["bleu_seconds"] for a in with_bleu) / 60, 1),
        "rns-adadelta-minutes": (ada_minutes, 1),
        "rns-star-updates": (r["RNNsearch-50*"].extra["updates"], None),
        "rns-search50-updates": (r["RNNsearch-50"].extra["updates"], None),
        "rns-star-from": (star_start(runs)[0], None),
    }


def star_stopped(runs: Runs) -> str:
    """How RNNsearch-50⋆ ended, in words: early stopping (``star_patience``) or its update
    limit (``updates_star``)."""
    if runs.runs["RNNsearch-50*"].extra["stopped"] == "early_stopping":
        return "stopped early (`star_patience` evaluations without a lower dev NLL)"
    return "reached its update limit (`updates_star`) before early stopping ended it"


def star_same_word(runs: Runs) -> str:
    """Whether RNNsearch-50⋆ delivers RNNsearch-50's parameters (:func:`star_is_search50`), in
    words."""
    if star_is_search50(runs):
        return "**delivers RNNsearch-50's parameters**"
    return "delivers parameters of its own"


def star_numbers(runs: Runs) -> dict[str, tuple[int, None]]:
    """``glue name -> (value, None)``: the update of RNNsearch-50⋆'s lowest dev NLL, the updates
    it made after RNNsearch-50's (or after its branch) in all, and how many of those came before
    its lowest dev NLL (0 when that is still RNNsearch-50's update)."""
    star = runs.runs["RNNsearch-50*"].extra
    start, best = star_start(runs)[0], int(star["best"]["update"])
    return {
        "rns-star-best": (best, None),
        "rns-star-more": (int(star["updates"]) - start, None),
        "rns-star-best-own": (max(best - start, 0), None),
    }


def star_test_nll(ex: RNNsearchExperiment, runs: Runs) -> dict[str, np.ndarray] | None:
    """RNNsearch-50's and RNNsearch-50⋆'s per-sentence test NLL (:func:`test_nll`), C-B-T2-2's
    evidence; ``None`` when RNNsearch-50⋆ delivers RNNsearch-50's parameters."""
    if star_is_search50(runs):
        return None
    return {n: test_nll(ex, runs, n) for n in ("RNNsearch-50", "RNNsearch-50*")}


def dev_nll(ex: RNNsearchExperiment, runs: Runs) -> dict[str, np.ndarray]:
    """``name -> (len(dev),)``: per-sentence dev NLL (nats, ``<end>`` included) of each model's
    delivered parameters, an artifact (``rnnsearch/dev_nll``) per model, looked up in
    :data:`NAMES` order."""

    return {name: dev_nll_of(ex, runs.runs[name], runs.arch[name]) for name in NAMES}


def dev_nll_of(ex: RNNsearchExperiment, run: Artifact, arch: str) -> np.ndarray:
    """``(len(dev),)``: per-sentence dev NLL of the delivered parameters of ``run`` (a model of
    ``arch``), the artifact ``rnnsearch/dev_nll``."""

    def make(out: Path, work: Path) -> None:
        model = load_model(run, ex.model_config(arch)).to(ex.device)
        np.save(out / "nll.npy", -score_pairs(model, ex.dev, batch_size=ex.P.decode_batch))

    config = {"run": run.key, "sentences": len(ex.dev)}
    found = ex.cache.build("rnnsearch/dev_nll", config, make, data=ex.corpus.checksum)
    return np.load(found.file("nll.npy"))


def test_nll(ex: RNNsearchExperiment, runs: Runs, name: str) -> np.ndarray:
    """``(n_test,)``: per-sentence NLL of model ``name`` on the evaluated test sentences
    (``rnnsearch/test_nll``): held out from the dev set that chose RNNsearch-50⋆'s parameters."""
    return test_nll_of(ex, runs.runs[name], runs.arch[name])


def test_nll_of(ex: RNNsearchExperiment, run: Artifact, arch: str) -> np.ndarray:
    """:func:`test_nll` of the delivered parameters of ``run`` (a model of ``arch``)."""

    def make(out: Path, work: Path) -> None:
        pairs = ex.corpus.test.select(ex.test)
        model = load_model(run, ex.model_config(arch)).to(ex.device)
        nll = -score_pairs(model, pairs, batch_size=ex.P.decode_batch)
        np.save(out / "nll.npy", nll)

    config = {"run": run.key, "sentences": ex.n_test}
    found = ex.cache.build("rnnsearch/test_nll", config, make, data=ex.corpus.checksum)
    return np.load(found.file("nll.npy"))


#: seconds of interleaved updates C-B-T2-3 measures (live, at every run of the chapter), in each
#: of its two sessions (the claim's, then its control's): the default of ``timing_seconds``
TIMING_SECONDS = 30.0
#: minibatches the live timing of C-B-T2-3 cycles through (:func:`update_times`)
TIMING_BATCHES = 3
#: ABBA rounds each session of the live timing runs at least, whatever the seconds
TIMING_ROUNDS = 6
#: C-B-T2-3's margin, stated before any timing: the claim holds where an RNNsearch update takes
#: more than this many times an RNNencdec update, the whole interval of the ratio above it. Paper
#: B's hours and updates give 1.8-2.1 (the smoke profile's live timings 1.4); two identical
#: RNNencdec timed ABBA on a shared machine differed by at most 3% in the builds so far. The
#: interval of the difference alone (above 0) held for identical networks in about one loaded
#: session in twenty; a fifth more is a margin a machine's load does not reach by chance
TIMING_MARGIN = 1.2


@dataclass
class UpdateTimes:
    """Seconds of each update measured in two interleaved sessions (ABBA, one update at a time,
    the same minibatches in the same order: :func:`rnnlib.bench.against.interleaved`): RNNsearch
    (``search``) against RNNencdec (``encdec``), then C-B-T2-3's control, a second RNNencdec
    (``again``) in RNNsearch's place against a fresh RNNencdec (``encdec_control``). In each
    session the two arms' updates ``k`` trained on the same minibatch in the same round."""

    search: np.ndarray
    encdec: np.ndarray
    again: np.ndarray
    encdec_control: np.ndarray
    batches: int
    pairs: int


def update_times(ex: RNNsearchExperiment, seconds: float = TIMING_SECONDS) -> UpdateTimes:
    """C-B-T2-3's evidence, measured now (a timing, not a cached artifact): two sessions of
    ``seconds`` each (at least :data:`TIMING_ROUNDS` rounds), one update at a time alternating
    ABBA, on three minibatches of ``batch_size`` pairs drawn with ``seed`` from the "-50" models'
    training pairs, with gradient clipping and the chapter's precision; the optimiser is Adadelta
    (:func:`rnnlib.bench.workload.train_step_fn`), a small share of an update's time. The first
    session alternates RNNsearch and RNNencdec, the second (the control) RNNencdec and a second,
    identical RNNencdec in RNNsearch's place: the same measurement with the claim's difference
    taken out, so that a drift of the machine's speed or a bias of the order shows in it. Every
    network is at initialisation (the cost of an update does not depend on the parameters'
    values) and first trains once on every minibatch, unmeasured (the first update on a new
    shape pays for its kernels), so that its measured update ``k`` trains on minibatch ``k % 3``,
    as the other arm's update ``k``."""
    p, corpus = ex.P, ex.corpus
    train = corpus.train
    if p.max_train is not None:
        train = train.select(np.arange(min(p.max_train, len(train))))
    pairs = train.select(length_filter(train, p.len_long))
    rng = np.random.default_rng(p.seed)
    size = min(p.batch_size, len(pairs))
    batches = [
        make_batch(pairs, rng.choice(len(pairs), size, replace=False))
        for _ in range(TIMING_BATCHES)
    ]
    batches = [b.to(ex.device) for b in batches]
    clip = p.clip_norm if p.clip_norm is not None else float("inf")

    def arm(arch: str) -> tuple:
        model = untrained_model(ex, arch).train()
        step, state = train_step_fn(model, batches, clip=clip, bf16=ex.bf16)
        for _ in batches[1:]:  # every minibatch's shapes warmed up (interleaved warms the last)
            step()
        return step, state

    # RNNsearch in the second place of each round, as the second RNNencdec in the control
    times = interleaved(
        {"rnnencdec": arm("rnnencdec"), "rnnsearch": arm("rnnsearch")},
        seconds,
        min_rounds=TIMING_ROUNDS,
    )
    control = interleaved(
        {"rnnencdec": arm("rnnencdec"), "again": arm("rnnencdec")},
        seconds,
        min_rounds=TIMING_ROUNDS,
    )
    return UpdateTimes(
        np.array(times["rnnsearch"]),
        np.array(times["rnnencdec"]),
        np.array(control["again"]),
        np.array(control["rnnencdec"]),
        len(batches),
        size,
    )


def update_time_numbers(t: UpdateTimes) -> dict[str, tuple[float, int]]:
    """``glue name -> (value, digits)``: the interleaved seconds per update and their ratio, and
    the control session's seconds per update of each RNNencdec."""
    return {
        "rns-live-spu-search": (float(t.search.mean()), 3),
        "rns-live-spu-encdec": (float(t.encdec.mean()), 3),
        "rns-live-spu-ratio": (float(t.search.mean() / t.encdec.mean()), 2),
        "rns-live-updates": (len(t.search), None),
        "rns-live-spu-again": (float(t.again.mean()), 3),
        "rns-live-spu-encdec-control": (float(t.encdec_control.mean()), 3),
        "rns-live-updates-control": (len(t.again), None),
    }


#: the pairs trained on the same sentences, (RNNsearch, RNNencdec)
SAME_DATA = (("RNNsearch-30", "RNNencdec-30"), ("RNNsearch-50", "RNNencdec-50"))


def _clocks(ex: RNNsearchExperiment, runs: Runs) -> str:
    """What each pair's clocks gave: the paper's equal time is an update ratio here
    (deterministic keys), so RNNencdec may have had less time than RNNsearch (which favours
    RNNsearch) or more (the comparison is then conservative)."""
    minutes = {n: runs.runs[n].extra["seconds"] / 60 for n in run_specs(ex)}
    return "; ".join(
        f"{SHOWN[e]} trained {minutes[e]:.1f} minutes against {SHOWN[s]}'s {minutes[s]:.1f} "
        f"({minutes[e] / max(minutes[s], 1e-9):.2f}×"
        + (", less time: this favours RNNsearch" if minutes[e] < minutes[s] else "")
        + ")"
        for s, e in SAME_DATA
    )


def _lower_nll(
    ex: RNNsearchExperiment, nll: dict, init_nll: np.ndarray, note: str, rng, control_rng
) -> verdicts.Check:
    """C-B-T2-1's rule on ``nll`` (name -> per-sentence dev NLL): each RNNencdec − the RNNsearch
    of its pair above 0 (paired bootstrap over the dev sentences, ``rng``); control: the
    untrained RNNsearch (``init_nll``) in place of the trained one (``control_rng``)."""
    n_boot = ex.P.n_boot
    lower = [
        (f"{SHOWN[e]} − {SHOWN[s]} dev NLL", *stats.paired_difference(nll[e], nll[s], n_boot, rng))
        for s, e in SAME_DATA
    ]
    lower_init = [
        (
            f"{SHOWN[e]} − RNNsearch at initialisation, dev NLL",
            *stats.paired_difference(nll[e], init_nll, n_boot, control_rng),
        )
        for _, e in SAME_DATA
    ]
    return verdicts.controlled(
        verdicts.intervals_above(lower, note=note),
        "the untrained RNNsearch (its parameters at initialisation with the chapter's seed, "
        f"{ex.P.seed}) in place of the trained one",
        verdicts.intervals_above(lower_init),
    )


def claim_t2_1(
    ex: RNNsearchExperiment,
    runs: Runs,
    nll: dict[str, np.ndarray],
    init_nll: np.ndarray,
    rng: np.random.Generator,
    seed_nll: Sequence[tuple[int, dict[str, np.ndarray]]] = (),
) -> ClaimCheck:
    """C-B-T2-1, RNNsearch reaches a lower dev NLL than RNNencdec trained on the same sentences.
    B Table 2 (no sentence states it), Dev. NLL: RNNenc-30 53.0, RNNsearch-30 47.2, RNNenc-50
    43.6, RNNsearch-50 38.1. Paired bootstraps over the dev sentences from ``rng`` (the
    chapter's generator, :func:`claims`); control: the untrained RNNsearch (``init_nll``). With
    further seeds of the "-50" pair (``seed_nll``: ``(seed, name -> dev NLL)``,
    :func:`seed_dev_nll`), judged on each seed (:func:`rnnlib.experiments.spread.across`)."""
    p, n_boot = ex.P, ex.P.n_boot
    runs_read = (
        f"the chapter's runs (seed {p.seed}); the -50 pair's other seeds are judged beside"
        if seed_nll
        else "one training run per model, so the spread over training seeds is not measured"
    )
    note = (
        f"per-sentence dev NLL, paired bootstrap over the {len(ex.dev)} dev sentences "
        f"({n_boot} resamples); {runs_read}. {updates_text(ex)}: {_clocks(ex, runs)}"
    )
    check = _lower_nll(ex, nll, init_nll, note, rng, np.random.default_rng([p.seed, 1]))
    if seed_nll:

        def further(k: int, more: dict) -> str:
            if all(n in more for n in SEED_SHORT):
                return f"the -50 and -30 pairs of seed {k}"
            return f"the -50 pair of seed {k}, the -30 pair of seed {p.seed} (its one run)"

        others = [
            (k, _lower_nll(ex, {**nll, **more}, init_nll, further(k, more), *_seed_rngs(p, k)))
            for k, more in seed_nll
        ]
        check = across(check, others, "seed", p.seed)
    return ClaimCheck("C-B-T2-1", check, "rns-t2-claim1")


def _seed_rngs(p: Params, k: int) -> tuple[np.random.Generator, np.random.Generator]:
    """The generators of further seed ``k``'s C-B-T2-1: its rule's and its control's."""
    return np.random.default_rng([p.seed, k]), np.random.default_rng([p.seed, k, 1])


def _longer_lowers(
    star_nll: dict[str, np.ndarray] | None, n_boot: int, rng: np.random.Generator
) -> verdicts.Check:
    """C-B-T2-2's rule on ``star_nll`` (RNNsearch-50's and RNNsearch-50⋆'s per-sentence test
    NLL; ``None``: the same parameters): RNNsearch-50 − RNNsearch-50⋆ above 0; control:
    RNNsearch-50 against itself."""
    if star_nll is None:
        return verdicts.not_measurable(SELF_COMPARISON)
    a, b = star_nll["RNNsearch-50"], star_nll["RNNsearch-50*"]
    note = (
        f"per-sentence NLL of the {len(a)} evaluated test sentences, paired bootstrap: the dev "
        "set chose RNNsearch-50⋆'s parameters, so its dev NLL says little (lower by construction "
        "when it continues RNNsearch-50's end); one training run"
    )
    label = "RNNsearch-50 − RNNsearch-50⋆ test NLL"
    return verdicts.controlled(
        verdicts.intervals_above([(label, *stats.paired_difference(a, b, n_boot, rng))], note=note),
        "RNNsearch-50 against itself (two identical systems)",
        verdicts.intervals_above(
            [("RNNsearch-50 − RNNsearch-50", *stats.paired_difference(a, a, n_boot, rng))]
        ),
    )


def claim_t2_2(
    ex: RNNsearchExperiment,
    runs: Runs,
    star_nll: dict[str, np.ndarray] | None,
    rng: np.random.Generator,
    seed_star_nll: Sequence[tuple[int, dict[str, np.ndarray] | None]] = (),
) -> ClaimCheck:
    """C-B-T2-2, training longer lowers the NLL. B Table 2, Dev. NLL: RNNsearch-50 38.1,
    RNNsearch-50⋆ 35.2; its caption of Table 1: "RNNsearch-50⋆ was trained much longer until the
    performance on the development set stopped improving." Not judged when RNNsearch-50⋆ is
    RNNsearch-50 (:func:`star_is_search50`); else on the test sentences (``star_nll``,
    :func:`test_nll`), since the dev set chose RNNsearch-50⋆'s parameters. With further seeds
    (``seed_star_nll``, :func:`seed_test_nll`), judged on each seed's pair."""
    p, n_boot = ex.P, ex.P.n_boot
    check = _longer_lowers(None if star_is_search50(runs) else star_nll, n_boot, rng)
    if seed_star_nll:
        others = [
            (k, _longer_lowers(more, n_boot, np.random.default_rng([p.seed, k, 2])))
            for k, more in seed_star_nll
        ]
        check = across(check, others, "seed", p.seed)
    return ClaimCheck("C-B-T2-2", check, "rns-t2-claim2")


def claim_t2_3(
    ex: RNNsearchExperiment, runs: Runs, times: UpdateTimes, rng: np.random.Generator
) -> ClaimCheck:
    """C-B-T2-3, an RNNsearch update costs more time than an RNNencdec update. B Table 2
    (updates ×10⁵ in about the same hours): RNNenc-30 8.46 in 109 h, RNNsearch-30 4.71 in 113 h,
    RNNenc-50 6.00 in 108 h, RNNsearch-50 2.88 in 111 h. The interleaved timing ``times``
    (:func:`update_times`), paired by minibatch and round: the ratio of the seconds per update
    (:func:`rnnlib.stats.paired_ratio`) at least :data:`TIMING_MARGIN`; control: the same timing
    with a second RNNencdec in RNNsearch's place (an A/A comparison, in its own session)."""
    n_boot = ex.P.n_boot
    n = len(times.search) // 2 * 2
    slower = stats.paired_ratio(times.search[:n], times.encdec[:n], n_boot, rng)
    m = len(times.again) // 2 * 2
    itself = stats.paired_ratio(times.again[:m], times.encdec_control[:m], n_boot, rng)
    device = runs.runs["RNNsearch-50"].extra["device"]
    note = (
        f"a live timing on {device}, not the training runs: {n} updates of each model "
        f"interleaved ABBA, each pair on the same minibatch of {times.pairs} pairs "
        "(RNNsearch-50's training pairs), paired bootstrap over the updates; the machine's load "
        f"then hits both alike. Holds above {TIMING_MARGIN:g} times as long, a margin two "
        "identical networks' timings do not reach by chance. The -30 and -50 models have the "
        "same sizes; the interval covers the variation of the updates, not that of another "
        "machine"
    )
    (ratio, low, high), (ratio_aa, low_aa, high_aa) = slower, itself
    label = "RNNsearch / RNNencdec seconds per update"
    check = verdicts.controlled(
        verdicts.at_least(ratio, TIMING_MARGIN, label, low, high, note=note),
        f"RNNencdec against itself: the same timing in a session of its own, {m} updates of "
        "RNNencdec and of a second, identical RNNencdec in RNNsearch's place",
        verdicts.at_least(
            ratio_aa, TIMING_MARGIN, "RNNencdec / RNNencdec seconds per update", low_aa, high_aa
        ),
    )
    return ClaimCheck("C-B-T2-3", check, "rns-t2-claim3")


def claim_t2_4(runs: Runs) -> ClaimCheck:
    """C-B-T2-4, Table 2's columns are logged for every run (bookkeeping). B Table 2's caption:
    "Learning statistics and relevant information. Each update corresponds to updating the
    parameters once using a single minibatch. One epoch is one pass through the training set."
    """
    logged = ("updates", "epochs", "seconds", "device", "dev_nll")
    kept = [
        (SHOWN[n], all(k in runs.runs[n].extra for k in logged) and len(runs.logs[n]["train"]) > 0)
        for n in NAMES
    ]
    note = "Table 2 above, from each run's log: a record the paper keeps, not a finding"
    return ClaimCheck("C-B-T2-4", verdicts.bookkeeping(kept, note=note))


def claims(
    ex: RNNsearchExperiment,
    runs: Runs,
    nll: dict[str, np.ndarray],
    init_nll: np.ndarray,
    times: UpdateTimes,
    star_nll: dict[str, np.ndarray] | None = None,
    seed_nll: Sequence[tuple[int, dict[str, np.ndarray]]] = (),
    seed_star_nll: Sequence[tuple[int, dict[str, np.ndarray] | None]] = (),
) -> list[ClaimCheck]:
    """The claims of B Table 2 in the order the chapter records them, their bootstraps drawn in
    that order from one generator seeded with ``seed`` (the further seeds' and the controls' of
    C-B-T2-1 from generators of their own)."""
    rng = np.random.default_rng(ex.P.seed)
    return [
        claim_t2_1(ex, runs, nll, init_nll, rng, seed_nll),
        claim_t2_2(ex, runs, star_nll, rng, seed_star_nll),
        claim_t2_3(ex, runs, times, rng),
        claim_t2_4(runs),
    ]


def epochs_texts(runs: Runs) -> dict[str, str]:
    """``glue name -> text``: the range of epochs of the five runs and of the paper's."""
    ours = [runs.runs[n].extra["epochs"] for n in NAMES]
    paper = [papers.B_TABLE2[TABLE2_NAME[n]]["epochs"] for n in NAMES]
    return {
        "rns-epochs-range": f"{min(ours):.1f}–{max(ours):.1f}",
        "rns-paper-epochs-range": f"{min(paper):.1f}–{max(paper):.1f}",
    }


def _all_runs(runs: Runs) -> list[Artifact]:
    """Every training run of the chapter, once each."""
    arts = [*runs.runs.values(), *runs.recipes.values(), *runs.dropout_long.values()]
    arts += [a for a in (runs.adadelta, runs.encdec_check) if a is not None]
    return list({a.key: a for a in arts}.values())


def side_by_side_numbers(runs: Runs) -> dict[str, tuple[int, None]]:
    """``glue name -> (value, None)``: the chapter's training runs, how many of them were
    trained side by side (:mod:`rnnlib.experiments.run_pool`, ``train_workers``), and the most
    at a time."""
    at_once = [int(a.extra.get("runs_at_once", 1)) for a in _all_runs(runs)]
    return {
        "rns-runs-total": (len(at_once), None),
        "rns-runs-side": (sum(n > 1 for n in at_once), None),
        "rns-runs-at-once": (max(at_once), None),
    }


def side_by_side_text(runs: Runs) -> str:
    """How the runs not trained side by side ran, from their records, in words: alone, on how
    many torch threads where recorded."""
    alone = [a for a in _all_runs(runs) if int(a.extra.get("runs_at_once", 1)) == 1]
    if not alone:
        return "none: every run had another beside it"
    threads = sorted({a.extra.get("threads") for a in alone} - {None})
    return "alone" + (f" on {' or '.join(map(str, threads))} torch threads" if threads else "")


def time_ratio_numbers(runs: Runs) -> dict[str, tuple[float, int]]:
    """``glue name -> (value, 2)``: each RNNencdec run's training minutes over those of the
    RNNsearch run on the same pairs (1: equal time, what the update counts aim at)."""
    sec = {n: art.extra["seconds"] for n, art in runs.runs.items()}
    return {
        "rns-time-ratio-30": (sec["RNNencdec-30"] / sec["RNNsearch-30"], 2),
        "rns-time-ratio-50": (sec["RNNencdec-50"] / sec["RNNsearch-50"], 2),
    }


def dev_nll_numbers(runs: Runs) -> dict[str, tuple[float, int]]:
    """``glue name -> (value, digits)``: each model's dev NLL per sentence (B Table 2)."""
    return {f"rns-devnll-{glue_key(n)}": (runs.runs[n].extra["dev_nll"], 1) for n in NAMES}


def seed_dev_nll(ex: RNNsearchExperiment, sr: SeedRuns) -> list[tuple[int, dict[str, np.ndarray]]]:
    """``(seed, name -> (len(dev),) per-sentence dev NLL)`` of each further seed's "-50" pair,
    and its "-30" pair where it has its own (the artifact ``rnnsearch/dev_nll``, as
    :func:`dev_nll`)."""
    specs = run_specs(ex)
    return [
        (
            seed,
            {n: dev_nll_of(ex, arts[n], specs[n][0]) for n in SEED_PAIR + SEED_SHORT if n in arts},
        )
        for seed, arts in zip(sr.seeds[1:], sr.further)
    ]


def seed_test_nll(
    ex: RNNsearchExperiment, sr: SeedRuns
) -> list[tuple[int, dict[str, np.ndarray] | None]]:
    """``(seed, name -> (n_test,) per-sentence test NLL)`` of each further seed's RNNsearch-50
    and RNNsearch-50⋆ (:func:`test_nll`), ``None`` where that RNNsearch-50⋆ delivered its
    RNNsearch-50's parameters (C-B-T2-2 on every seed)."""
    return [
        (
            seed,
            None
            if same
            else {
                n: test_nll_of(ex, arts[n], "rnnsearch") for n in ("RNNsearch-50", "RNNsearch-50*")
            },
        )
        for seed, arts, same in zip(sr.seeds[1:], sr.further, sr.star_same[1:])
    ]
