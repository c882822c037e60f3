"""The evidence for the update budgets and the learning-rate schedule, on dev: how the schedule
cut each run's rate, whether RNNsearch-30 and RNNsearch-50 had stopped improving before their
budgets ended, whether RNNencdec reaches the BLEU floor on dev within its budget, and each
seed's "-50" pair trained again with the schedule from the first evaluation (the evidence for
``lr_decay_start``)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...cache import Artifact, NotCached
from ...train import TrainConfig
from ...verdicts import BLEU_FLOOR
from ..run_pool import Job, build_side_by_side
from ..training_runs import run_logs
from .seeds import SEED_PAIR, SeedRuns
from .setting import NAMES, RNNsearchExperiment, shown
from .training import Runs, run_specs, train_model


def schedule_text(ex: RNNsearchExperiment, runs: Runs) -> str:
    """How the learning-rate schedule acted on each run (from its evaluation log): how many
    times the rate was cut, at which update it was first cut, and the rate it ended with."""
    if ex.P.lr_decay is None:
        but = " but for the cool-down at its end (`cooldown`)" if ex.P.cooldown else ""
        return f"the rate stayed constant in every run{but} (`lr_decay` is None)"
    parts = []
    for name in NAMES:
        ev = runs.logs[name]["eval"]
        if "lr" not in ev or not len(ev):
            continue
        rates = ev["lr"].to_numpy()
        cuts = int((rates[1:] < rates[:-1]).sum())
        if cuts == 0:
            parts.append(f"{shown(name)} never (rate {rates[-1]:.3g})")
            continue
        first = int(ev["update"].to_numpy()[1:][rates[1:] < rates[:-1]][0])
        text = f"{shown(name)} {cuts} time(s), first by update {first:,}, to {rates[-1]:.3g}"
        if runs.runs[name].extra.get("stopped") == "lr_min":
            # the cut that ended the run comes after its last evaluation
            done = runs.runs[name].extra["updates"]
            text += f", then once more, below `lr_min`, which ended it at update {done:,}"
        parts.append(text)
    return "; ".join(parts)


def floor_evidence_text(runs: Runs) -> str:
    """Whether the RNNencdec models reach the BLEU floor on dev during training (Markdown): the
    highest greedy dev BLEU of each run's evaluations (the curves' dev subset), beside
    RNNsearch-50's; the dev evidence for claims that read RNNencdec being not measurable at this
    scale."""
    parts = []
    for name in ("RNNencdec-30", "RNNencdec-50", "RNNsearch-50"):
        bleu = runs.logs[name]["bleu"]
        if not len(bleu):
            continue
        top = bleu.loc[bleu["dev_bleu"].idxmax()]
        parts.append(
            f"{shown(name)} {top['dev_bleu']:.2f} (at update {int(top['update']):,} of "
            f"{runs.runs[name].extra['updates']:,})"
        )
    if not parts:
        return "no run measured its dev BLEU during training (`dev_bleu_sentences` is 0)"
    encdec = [runs.logs[n]["bleu"]["dev_bleu"].max() for n in ("RNNencdec-30", "RNNencdec-50")]
    below = [n for n, b in zip(("RNNencdec-30", "RNNencdec-50"), encdec) if b < BLEU_FLOOR]
    text = "the highest greedy dev BLEU of any evaluation during training was " + "; ".join(parts)
    if below:
        its, it = ("its", "it") if len(below) == 1 else ("their", "them")
        text += (
            f": {' and '.join(below)} never reached the floor of {BLEU_FLOOR:g} BLEU on dev in "
            f"the updates {its} equal-time budget gives, so at this scale the claims that read "
            f"{it} are not measurable, and more updates (a GPU, the `paper` profile) would be "
            "needed"
        )
    return text


def budget_evidence_text(runs: Runs) -> str:
    """The dev evidence for RNNsearch's update budgets (``updates_search`` for the -30 pair,
    ``updates_search_long`` for the -50 pair; Markdown): where each RNNsearch run's dev NLL per
    token was lowest in its budget and what it was at its last evaluation, and whether
    RNNsearch-50⋆, continuing RNNsearch-50, found a lower one *after* RNNsearch-50's last update
    (then RNNsearch-50 was still learning when its budget ended; a lower one before it, where
    RNNsearch-50⋆ is RNNsearch-50 without the cool-down, is the cool-down's evidence instead)."""
    parts = []
    for name in ("RNNsearch-30", "RNNsearch-50"):
        ev = runs.logs[name]["eval"]
        best, last = ev.loc[ev["dev_nll_token"].idxmin()], ev.iloc[-1]
        budget = int(runs.runs[name].config["train"]["max_updates"])
        text = (
            f"{shown(name)} had its lowest dev NLL at update {int(best['update']):,} of its "
            f"{budget:,} ({best['dev_nll_token']:.3f} nats a token"
        )
        if int(last["update"]) != int(best["update"]):
            text += (
                f"; {last['dev_nll_token']:.3f} at its last evaluation: it had stopped "
                "improving before its budget ended"
            )
        parts.append(text + ")")
    end50 = int(runs.runs["RNNsearch-50"].extra["updates"])
    own50 = runs.logs["RNNsearch-50"]["eval"]["dev_nll_token"].min()
    star = runs.logs["RNNsearch-50*"]["eval"]
    beyond = star[star["update"] > end50]
    if not len(beyond):
        tail = f"RNNsearch-50⋆ made no evaluation beyond RNNsearch-50's update {end50:,}"
    elif beyond["dev_nll_token"].min() < own50:
        top = beyond.loc[beyond["dev_nll_token"].idxmin()]
        tail = (
            f"RNNsearch-50⋆, RNNsearch-50 continued, went lower after RNNsearch-50's update "
            f"{end50:,}, to {top['dev_nll_token']:.3f} at update {int(top['update']):,}: "
            "RNNsearch-50 was still learning when its budget ended"
        )
    else:
        tail = (
            f"RNNsearch-50⋆, RNNsearch-50 continued, went no lower after RNNsearch-50's update "
            f"{end50:,} ({beyond['dev_nll_token'].min():.3f} at best): RNNsearch-50's budget was "
            "long enough"
        )
    return "; ".join(parts) + "; " + tail


def _first_cut(art: Artifact) -> int | None:
    """The update of the evaluation after which a run's rate was first cut (``None``: never;
    :func:`schedule_text` names the next evaluation, the first that reports the lower rate)."""
    ev = run_logs(art)["eval"]
    if "lr" not in ev or len(ev) < 2:
        return None
    rates, updates = ev["lr"].to_numpy(), ev["update"].to_numpy()
    cut = np.flatnonzero(rates[1:] < rates[:-1])
    return int(updates[cut[0]]) if len(cut) else None


def schedule_start_evidence(
    ex: RNNsearchExperiment, runs: Runs, sr: SeedRuns
) -> tuple[pd.DataFrame, str, list[Artifact]]:
    """The evidence for ``lr_decay_start``: each model of the "-50" pair, for every seed the
    chapter reads, trained again with the schedule acting from the first evaluation
    (``lr_decay_start`` None), beside the chapter's run of that seed. Those runs are built when
    ``start_runs`` is set (the ``spread`` profile) and otherwise read from the cache where such a
    build left them, none computed. Returns the table (index ``(model, seed)``: the update after
    which each schedule first cut the rate, and the best dev NLL per token of each), the rule's
    verdict in words (per model, the lower mean dev NLL over the seeds, dev only, with the
    per-seed differences' spread and a flag when it does not pick the chapter's setting) and
    the runs the table reads (the chapter's included)."""
    p = ex.P
    start = p.lr_decay_start
    late_label = f"from update {start:,}" if start else "as set"
    columns = [
        "rate first cut after update, from the first evaluation",
        f"rate first cut after update, {late_label}",
        "dev NLL per token, from the first evaluation",
        f"dev NLL per token, {late_label}",
    ]
    empty = pd.DataFrame(columns=["model", "seed", *columns]).set_index(["model", "seed"])
    if p.lr_decay is None:
        return (
            empty,
            "the rate is constant (`lr_decay` is None): there is no schedule to hold back",
            [],
        )
    if not start:
        return empty, "the schedule acts from the first evaluation (`lr_decay_start` is None)", []
    specs, rows, read = run_specs(ex), [], []

    def from_first(name: str, seed: int) -> TrainConfig:
        arch, _, updates = specs[name]
        return ex.train_config(updates, arch, seed=seed, lr_decay_start=None)

    if p.start_runs:
        jobs = [
            Job(f"{name} seed {seed}", lambda n=name, s=seed: train_model(ex, n, from_first(n, s)))
            for name in SEED_PAIR
            for seed in sr.seeds
        ]
        build_side_by_side(ex.cache, jobs, p.train_workers, ex.device)
    for k, seed in enumerate(sr.seeds):
        for name in SEED_PAIR:
            mine = runs.runs[name] if k == 0 else sr.further[k - 1][name]
            config = from_first(name, seed)
            try:
                if p.start_runs:
                    other = train_model(ex, name, config)
                else:
                    with ex.cache.lookup_only():
                        other = train_model(ex, name, config)
            except NotCached:
                continue
            read += [other, mine]
            values = (
                _first_cut(other),
                _first_cut(mine),
                other.extra["best"]["dev_nll_token"],
                mine.extra["best"]["dev_nll_token"],
            )
            rows.append({"model": shown(name), "seed": seed, **dict(zip(columns, values))})
    if not rows:
        return (
            empty,
            (
                "no run with the schedule acting from the first evaluation was made or found in "
                "the cache (`start_runs`; a `spread` build makes them)"
            ),
            [],
        )
    table = pd.DataFrame(rows).set_index(["model", "seed"])
    for col in columns[:2]:
        table[col] = table[col].astype("Int64")  # an update, or none
    early, late = columns[2], columns[3]
    parts = []
    for model, group in table.groupby(level="model", sort=False):
        diff = group[late] - group[early]
        text = (
            f"{model}, {late_label} − from the first evaluation: {diff.mean():+.3f} nats a token "
            f"(mean of {len(group)} seed(s)"
        )
        if len(group) > 1:
            spread_late = group[late].std(ddof=1)
            text += (
                f"; per seed from {diff.min():+.3f} to {diff.max():+.3f}, while the seeds' own "
                f"dev NLLs {late_label} have an sd of {spread_late:.3f}"
            )
        if diff.mean() <= 0:
            text += f"), so the rule picks the schedule {late_label}, the chapter's"
        else:
            text += (
                "), so **the rule picks the schedule from the first evaluation, not the "
                "chapter's `lr_decay_start`**"
            )
        parts.append(text)
    return table.round(3), "; ".join(parts), read
